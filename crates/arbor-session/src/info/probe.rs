//! The fields of a line a row needs, captured without decoding the rest:
//! the fast skim, the `serde_json` probe it falls back to, and the shallow
//! re-serialization of an unusual line.

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::jsonscan::Skim;
use crate::line_skim::{
    LineSpans, MESSAGE_KEYS, ROW_MESSAGE_KEYS, ROW_TOP_KEYS, TOP_KEYS, USAGE_KEYS,
};

/// Top-level fields the list needs; everything else is skipped unparsed.
#[derive(Deserialize)]
pub(super) struct LineProbe<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) ty: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) timestamp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) message: Option<LenientMessage<'a>>,
    #[serde(borrow, default)]
    pub(super) name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) summary: Option<&'a RawValue>,
    #[serde(rename = "summarizedThroughId", borrow, default)]
    pub(super) summarized_through_id: Option<&'a RawValue>,
    #[serde(rename = "targetId", borrow, default)]
    pub(super) target_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) label: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct MessageProbe<'a> {
    #[serde(borrow, default)]
    pub(super) role: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) timestamp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) model: Option<&'a RawValue>,
}

/// A `message` field of any JSON type: only an object yields a probe.
pub(super) struct LenientMessage<'a>(Option<MessageProbe<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for LenientMessage<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientMessage<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                MessageProbe::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|m| LenientMessage(Some(m)))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(LenientMessage(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(LenientMessage(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(LenientMessage(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(LenientMessage(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(LenientMessage(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(LenientMessage(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(LenientMessage(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
pub(super) struct BlockProbe<'a> {
    #[serde(rename = "type", borrow, default)]
    pub(super) ty: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub(super) text: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
pub(super) struct UsageProbe {
    #[serde(rename = "totalTokens", default)]
    pub(super) total_tokens: Option<f64>,
    #[serde(default)]
    pub(super) cost: Option<CostProbe>,
    #[serde(default)]
    pub(super) input: Option<f64>,
    #[serde(default)]
    pub(super) output: Option<f64>,
    #[serde(rename = "cacheRead", default)]
    pub(super) cache_read: Option<f64>,
    #[serde(rename = "cacheWrite", default)]
    pub(super) cache_write: Option<f64>,
}

#[derive(Deserialize, Default)]
pub(super) struct CostProbe {
    #[serde(default)]
    pub(super) total: Option<f64>,
}

/// The raw JSON text of the fields a row needs (`None` when absent).
#[derive(Default)]
pub(super) struct LineFields<'a> {
    pub(super) ty: Option<&'a str>,
    pub(super) id: Option<&'a str>,
    pub(super) timestamp: Option<&'a str>,
    pub(super) name: Option<&'a str>,
    pub(super) summary: Option<&'a str>,
    pub(super) summarized_through_id: Option<&'a str>,
    pub(super) target_id: Option<&'a str>,
    pub(super) label: Option<&'a str>,
    /// Present only when `message` is an object.
    pub(super) message: Option<MessageFields<'a>>,
}

#[derive(Default)]
pub(super) struct MessageFields<'a> {
    pub(super) role: Option<&'a str>,
    /// Raw JSON: only decoded for user/assistant messages.
    pub(super) content: Option<&'a str>,
    pub(super) timestamp: Option<&'a str>,
    pub(super) usage: Option<&'a str>,
    /// `usage`'s own members, when the fast path already crossed them.
    pub(super) usage_parts: Option<UsageParts<'a>>,
    pub(super) model: Option<&'a str>,
}

/// The raw members of a `usage` object the row needs.
#[derive(Default, Clone, Copy)]
pub(super) struct UsageParts<'a> {
    pub(super) total_tokens: Option<&'a str>,
    pub(super) cost: Option<&'a str>,
    /// `cost.total`, when `cost` is an object.
    pub(super) cost_total: Option<&'a str>,
    pub(super) input: Option<&'a str>,
    pub(super) output: Option<&'a str>,
    pub(super) cache_read: Option<&'a str>,
    pub(super) cache_write: Option<&'a str>,
}

impl<'a> LineProbe<'a> {
    pub(super) fn fields(self) -> LineFields<'a> {
        let g = |r: Option<&'a RawValue>| r.map(RawValue::get);
        LineFields {
            ty: g(self.ty),
            id: g(self.id),
            timestamp: g(self.timestamp),
            name: g(self.name),
            summary: g(self.summary),
            summarized_through_id: g(self.summarized_through_id),
            target_id: g(self.target_id),
            label: g(self.label),
            message: self.message.and_then(|m| m.0).map(|m| MessageFields {
                role: g(m.role),
                content: g(m.content),
                timestamp: g(m.timestamp),
                usage: g(m.usage),
                usage_parts: None,
                model: g(m.model),
            }),
        }
    }
}

/// The fast path: one validating pass that captures the row's fields and
/// crosses everything else (tool results, images) without decoding it.
/// `None` means "unusual line": the general `serde_json` path decides.
pub(super) fn probe_fast(line: &[u8]) -> Option<LineFields<'_>> {
    // Invalid UTF-8 goes to the general path, which counts the lossy line.
    let line = simdutf8::basic::from_utf8(line).ok()?;
    let mut top: [Option<&str>; ROW_TOP_KEYS] = [None; ROW_TOP_KEYS];
    let mut msg: [Option<&str>; ROW_MESSAGE_KEYS] = [None; ROW_MESSAGE_KEYS];
    let mut msg_is_object = false;
    // `usage` is captured member by member on the way (an assistant line's
    // usage is a third of its tokens: crossing it again later cost ~10 %).
    let mut usage_members: [Option<&str>; 6] = [None; 6];
    let mut cost_total: [Option<&str>; 1] = [None];
    let mut usage_is_object = false;
    let mut sk = Skim::new(line);
    sk.object_with(0, &TOP_KEYS[..ROW_TOP_KEYS], &mut top, &mut |key, sk| {
        if key != b"message" || sk.peek_nonws() != Some(b'{') {
            return None;
        }
        msg_is_object = true;
        Some(sk.object_with(
            1,
            &MESSAGE_KEYS[..ROW_MESSAGE_KEYS],
            &mut msg,
            &mut |key, sk| {
                if key != b"usage" || sk.peek_nonws() != Some(b'{') {
                    return None;
                }
                usage_is_object = true;
                Some(
                    sk.object_with(2, &USAGE_KEYS, &mut usage_members, &mut |key, sk| {
                        if key != b"cost" || sk.peek_nonws() != Some(b'{') {
                            return None;
                        }
                        Some(sk.object(3, &[b"total"], &mut cost_total))
                    }),
                )
            },
        ))
    })?;
    if !sk.at_end() {
        return None;
    }
    let [ty, id, timestamp, name, summary, summarized_through_id, _, target_id, label] = top;
    let [role, content, timestamp_in_message, usage, model] = msg;
    Some(LineFields {
        ty,
        id,
        timestamp,
        name,
        summary,
        summarized_through_id,
        target_id,
        label,
        message: msg_is_object.then_some(MessageFields {
            role,
            content,
            timestamp: timestamp_in_message,
            usage,
            usage_parts: usage_is_object.then_some(UsageParts {
                total_tokens: usage_members[0],
                cost: usage_members[1],
                cost_total: cost_total[0],
                input: usage_members[2],
                output: usage_members[3],
                cache_read: usage_members[4],
                cache_write: usage_members[5],
            }),
            model,
        }),
    })
}

/// The row's fields of a line skimmed for both the row and the words:
/// what [`probe_fast`] captures of it.
pub(super) fn fields_of<'a>(s: &LineSpans<'a>) -> LineFields<'a> {
    use crate::line_skim::{msg, top, usage};
    LineFields {
        ty: s.top[top::TYPE],
        id: s.top[top::ID],
        timestamp: s.top[top::TIMESTAMP],
        name: s.top[top::NAME],
        summary: s.top[top::SUMMARY],
        summarized_through_id: s.top[top::SUMMARIZED_THROUGH_ID],
        target_id: s.top[top::TARGET_ID],
        label: s.top[top::LABEL],
        message: s.msg_is_object.then_some(MessageFields {
            role: s.msg[msg::ROLE],
            content: s.msg[msg::CONTENT],
            timestamp: s.msg[msg::TIMESTAMP],
            usage: s.msg[msg::USAGE],
            usage_parts: s.usage_is_object.then_some(UsageParts {
                total_tokens: s.usage[usage::TOTAL_TOKENS],
                cost: s.usage[usage::COST],
                cost_total: s.cost_total,
                input: s.usage[usage::INPUT],
                output: s.usage[usage::OUTPUT],
                cache_read: s.usage[usage::CACHE_READ],
                cache_write: s.usage[usage::CACHE_WRITE],
            }),
            model: s.msg[msg::MODEL],
        }),
    }
}

/// The fields of a line the row needs, re-serialized shallow and strict.
pub(super) fn shallow_fields(v: &Value) -> Option<String> {
    let obj = v.as_object()?;
    let mut m = Map::new();
    for k in [
        "type",
        "id",
        "timestamp",
        "name",
        "summary",
        "summarizedThroughId",
        "targetId",
        "label",
    ] {
        if let Some(x) = obj.get(k) {
            m.insert(k.into(), x.clone());
        }
    }
    if let Some(Value::Object(msg)) = obj.get("message") {
        let mut mm = Map::new();
        for k in ["role", "content", "timestamp", "usage", "model"] {
            if let Some(x) = msg.get(k) {
                mm.insert(k.into(), x.clone());
            }
        }
        m.insert("message".into(), Value::Object(mm));
    }
    serde_json::to_string(&m).ok()
}
