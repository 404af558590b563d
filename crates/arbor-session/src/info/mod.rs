//! List-row facts of a session in one streaming pass (SPEC §4).
//!
//! This is the hot path of every listing: lines are probed with borrowed
//! `RawValue` fields, so large tool results and images are skipped without
//! being decoded, and no tree is built. The scanner can be resumed on
//! appended bytes, which is how the index and the watcher stay incremental.

pub mod extras;

use std::path::{Path, PathBuf};

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::entry::{format_iso_ms, is_internal_marker, parse_iso_ms};
use crate::extras::{
    apply_label, raw_id_hash, LabelInfo, LineSource, Offsets, Usage, UsageFigures,
};
use crate::jsonscan::{for_each_element, Skim};
use crate::line_skim::{
    LineSpans, MESSAGE_KEYS, ROW_MESSAGE_KEYS, ROW_TOP_KEYS, TOP_KEYS, USAGE_KEYS,
};
use crate::reader::{lines, parse_json_lenient, parse_object, too_deep, Diagnostics, ReadError};

pub const NO_MESSAGES: &str = "(no messages)";

/// How many characters of the last reply's first line a row keeps (the
/// list shows a third of the screen's width of it).
pub const LAST_REPLY_CHARS: usize = 200;

/// One row of the session list, plus the preview figures.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct SessionInfo {
    pub path: arbor_util::shared_path::SharedPath,
    pub id: String,
    pub cwd: String,
    /// Trimmed name of the last `session_info` (empty after a clear).
    pub name: Option<String>,
    pub has_name: bool,
    pub created: String,
    pub modified_ms: i64,
    pub message_count: usize,
    pub first_message: Option<String>,
    pub parent_session_path: Option<String>,
    /// Latest session summary and the message id it covers.
    pub summary_candidate: Option<(String, String)>,
    /// Id of the last user/assistant message in file order.
    pub last_message_id: Option<String>,
    /// The first non-blank line of the last assistant message with text, in
    /// file order (trimmed, at most [`LAST_REPLY_CHARS`] characters): where
    /// the session left off.
    #[serde(default)]
    pub last_reply: Option<String>,
    pub internal: bool,
    /// The git branch the session was on, where its agent records it
    /// (Claude Code's `gitBranch`, the newest; Codex's
    /// `session_meta.git.branch`): the header's `gitBranch`.
    #[serde(default)]
    pub git_branch: Option<String>,
    /// User/assistant text, the searchable body of the session.
    pub all_text: String,
    /// The models the assistant used, sorted, each once. (A `Vec`: a
    /// one-model `BTreeSet` allocates a whole node, ~300 bytes a session
    /// in the picker's rows.)
    pub models: Vec<String>,
    pub total_tokens: u64,
    pub total_cost: f64,
    pub diagnostics: Diagnostics,
    /// Header timestamp missing: `modified` falls back to the file mtime.
    pub header_ms: Option<i64>,
    pub newest_message_ms: Option<i64>,
    pub file_mtime_ms: i64,
    /// The agent of the store root the file was found under (set by
    /// whoever was handed the file, never read from its contents).
    #[serde(default)]
    pub agent: crate::agent::Agent,
    /// The labels set in the file, in the order last set.
    #[serde(default)]
    pub labels: Vec<LabelInfo>,
    /// Assistant messages' usage by model and hour, all branches.
    #[serde(default)]
    pub usage: Usage,
}

impl SessionInfo {
    /// The summary, when it is fresh (covers the last user/assistant message).
    pub fn summary(&self) -> Option<&str> {
        let (text, through) = self.summary_candidate.as_ref()?;
        fresh_summary(
            Some((text.as_str(), through.as_str())),
            self.last_message_id.as_deref(),
        )
    }

    /// A stale summary exists (the row shows the placeholder).
    pub fn has_stale_summary(&self) -> bool {
        self.summary_candidate.is_some() && self.summary().is_none()
    }

    /// The name when set and not cleared.
    pub fn display_name(&self) -> Option<&str> {
        display_name(self.name.as_deref())
    }

    pub fn first_message_text(&self) -> &str {
        self.first_message.as_deref().unwrap_or(NO_MESSAGES)
    }

    /// Name, else first message: the row title.
    pub fn title(&self) -> &str {
        self.display_name()
            .unwrap_or_else(|| self.first_message_text())
    }

    pub fn modified(&self) -> String {
        format_iso_ms(self.modified_ms)
    }

    fn recompute_modified(&mut self) {
        self.modified_ms = self
            .newest_message_ms
            .or(self.header_ms)
            .unwrap_or(self.file_mtime_ms);
    }

    /// The file and id Enter resumes: the session's own, except for a
    /// Claude Code sub-agent run (an internal session of its session, see
    /// `session::foreign`), which Claude Code cannot resume alone: its
    /// session's.
    pub fn resume_target(&self) -> (PathBuf, String) {
        resume_target(
            &self.path,
            &self.id,
            self.internal,
            self.agent,
            self.parent_session_path.as_deref(),
        )
    }

    /// The row of `arbor list --json` (one JSON Lines line), borrowed from
    /// this one.
    pub fn json_row(&self) -> JsonRow<'_> {
        self.json_row_at(self.path.to_string_lossy())
    }

    /// [`SessionInfo::json_row`] with the path as text given.
    fn json_row_at<'a>(&'a self, path: std::borrow::Cow<'a, str>) -> JsonRow<'a> {
        JsonRow {
            path,
            id: &self.id,
            cwd: &self.cwd,
            name: self.display_name(),
            has_name: self.has_name,
            created: &self.created,
            modified: self.modified(),
            message_count: self.message_count,
            first_message: self.first_message_text(),
            parent_session_path: self.parent_session_path.as_deref(),
            summary: self.summary(),
            last_reply: self.last_reply.as_deref(),
            internal: self.internal,
            agent: self.agent.name(),
            git_branch: self.git_branch.as_deref(),
            diagnostics: JsonDiagnostics::of(&self.diagnostics),
        }
    }

    /// Appends the `arbor list --json` line, with its `\n`.
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        self.json_row_fast().write_line(out);
    }

    /// [`SessionInfo::json_row`] with the path checked as UTF-8 by
    /// `simdutf8` (`to_string_lossy` walks it in chunks).
    fn json_row_fast(&self) -> JsonRow<'_> {
        self.json_row_at(path_text(&self.path))
    }
}

/// Writing JSON values as `serde_json` writes them (compact).
mod json {
    /// `s` as a JSON string: `"` and `\` escaped, controls as `\b \t \n
    /// \f \r` or `\u00XX` (lowercase hex), everything else as is.
    pub fn str(out: &mut Vec<u8>, s: &str) {
        let b = s.as_bytes();
        out.reserve(b.len() + 2);
        out.push(b'"');
        let mut start = 0;
        let mut i = 0;
        // 16 bytes at a time where SSE2 is had (x86-64 always has it):
        // 8 bytes at a time cost a tenth of a 100,000-row listing.
        #[cfg(target_arch = "x86_64")]
        while i + 16 <= b.len() {
            let mut m = crate::jsonscan::classify16(b, i);
            while m != 0 {
                let k = i + m.trailing_zeros() as usize;
                out.extend_from_slice(&b[start..k]);
                escape(out, b[k]);
                start = k + 1;
                m &= m - 1;
            }
            i += 16;
        }
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        // Whether a byte of `w` is below 0x20, a quote or a backslash.
        let special = |w: u64| {
            let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
            (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
                | zero(w ^ (ONES * b'"' as u64))
                | zero(w ^ (ONES * b'\\' as u64))
        };
        while i < b.len() {
            if i + 8 <= b.len() {
                let w = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
                if special(w) == 0 {
                    i += 8;
                    continue;
                }
            }
            let c = b[i];
            if c < 0x20 || c == b'"' || c == b'\\' {
                out.extend_from_slice(&b[start..i]);
                escape(out, c);
                start = i + 1;
            }
            i += 1;
        }
        out.extend_from_slice(&b[start..]);
        out.push(b'"');
    }

    /// One byte that needs escaping: a quote, a backslash or a control.
    fn escape(out: &mut Vec<u8>, c: u8) {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0a => b"\\n",
            0x0c => b"\\f",
            0x0d => b"\\r",
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c >> 4) as usize]);
                out.push(HEX[(c & 15) as usize]);
                return;
            }
        };
        out.extend_from_slice(esc);
    }

    pub fn opt_str(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            Some(s) => str(out, s),
            None => out.extend_from_slice(b"null"),
        }
    }

    pub fn bool(out: &mut Vec<u8>, b: bool) {
        out.extend_from_slice(if b { b"true" } else { b"false" });
    }

    pub fn uint(out: &mut Vec<u8>, n: u64) {
        let mut buf = [0u8; 20];
        let mut at = buf.len();
        let mut n = n;
        loop {
            at -= 1;
            buf[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&buf[at..]);
    }
}

/// The row of `arbor list --json`, in its field order.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonRow<'a> {
    pub path: std::borrow::Cow<'a, str>,
    pub id: &'a str,
    pub cwd: &'a str,
    pub name: Option<&'a str>,
    pub has_name: bool,
    pub created: &'a str,
    pub modified: String,
    pub message_count: usize,
    pub first_message: &'a str,
    pub parent_session_path: Option<&'a str>,
    pub summary: Option<&'a str>,
    pub last_reply: Option<&'a str>,
    pub internal: bool,
    pub agent: &'a str,
    /// The git branch the agent recorded (`null` when none: Atomic and pi
    /// do not record one).
    pub git_branch: Option<&'a str>,
    /// Only when lines were skipped or read lossily.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<JsonDiagnostics>,
}

impl JsonRow<'_> {
    /// Appends this as an `arbor list --json` line, with its `\n`.
    ///
    /// Written by hand, byte for byte what `serde_json` writes for
    /// [`JsonRow`] (a test checks it): at 100,000 sessions
    /// serde_json's per-byte string escaping was a quarter of a warm
    /// `arbor list --all --json`'s CPU; this one crosses text 8 bytes at a
    /// time.
    pub fn write_line(&self, out: &mut Vec<u8>) {
        let r = self;
        out.extend_from_slice(b"{\"path\":");
        json::str(out, &r.path);
        out.extend_from_slice(b",\"id\":");
        json::str(out, r.id);
        out.extend_from_slice(b",\"cwd\":");
        json::str(out, r.cwd);
        out.extend_from_slice(b",\"name\":");
        json::opt_str(out, r.name);
        out.extend_from_slice(b",\"hasName\":");
        json::bool(out, r.has_name);
        out.extend_from_slice(b",\"created\":");
        json::str(out, r.created);
        out.extend_from_slice(b",\"modified\":");
        json::str(out, &r.modified);
        out.extend_from_slice(b",\"messageCount\":");
        json::uint(out, r.message_count as u64);
        out.extend_from_slice(b",\"firstMessage\":");
        json::str(out, r.first_message);
        out.extend_from_slice(b",\"parentSessionPath\":");
        json::opt_str(out, r.parent_session_path);
        out.extend_from_slice(b",\"summary\":");
        json::opt_str(out, r.summary);
        out.extend_from_slice(b",\"lastReply\":");
        json::opt_str(out, r.last_reply);
        out.extend_from_slice(b",\"internal\":");
        json::bool(out, r.internal);
        out.extend_from_slice(b",\"agent\":");
        json::str(out, r.agent);
        out.extend_from_slice(b",\"gitBranch\":");
        json::opt_str(out, r.git_branch);
        if let Some(d) = &r.diagnostics {
            out.extend_from_slice(b",\"diagnostics\":{\"skippedLines\":");
            json::uint(out, d.skipped_lines as u64);
            out.extend_from_slice(b",\"lossyLines\":");
            json::uint(out, d.lossy_lines as u64);
            out.extend_from_slice(b",\"partialTail\":");
            json::bool(out, d.partial_tail);
            out.push(b'}');
        }
        out.extend_from_slice(b"}\n");
    }
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonDiagnostics {
    pub skipped_lines: usize,
    pub lossy_lines: usize,
    pub partial_tail: bool,
}

impl JsonDiagnostics {
    /// What a row says of its reading: only when lines were skipped or
    /// read lossily.
    pub fn of(d: &Diagnostics) -> Option<JsonDiagnostics> {
        let skipped = d.skipped();
        (skipped > 0 || d.lossy_lines > 0).then_some(JsonDiagnostics {
            skipped_lines: skipped,
            lossy_lines: d.lossy_lines,
            partial_tail: d.partial_tail,
        })
    }
}

/// A summary's text when it covers the last user or assistant message
/// (`candidate`: its text and the id it runs through).
pub fn fresh_summary<'a>(
    candidate: Option<(&'a str, &'a str)>,
    last_message_id: Option<&str>,
) -> Option<&'a str> {
    let (text, through) = candidate?;
    (last_message_id == Some(through)).then_some(text)
}

/// See [`SessionInfo::resume_target`]: the session at `path` with `id`,
/// or for a Claude Code sub-agent run its `parent` session.
pub fn resume_target(
    path: &Path,
    id: &str,
    internal: bool,
    agent: crate::agent::Agent,
    parent: Option<&str>,
) -> (PathBuf, String) {
    if let (true, crate::agent::Agent::Claude, Some(parent)) = (internal, agent, parent) {
        let p = PathBuf::from(parent);
        if let Some(id) = p.file_stem().and_then(|s| s.to_str()) {
            return (p.clone(), id.to_string());
        }
    }
    (path.to_path_buf(), id.to_string())
}

/// A path as the JSON row's text (lossy where it is not UTF-8), checked
/// by `simdutf8` (`to_string_lossy` walks it in chunks).
pub fn path_text(path: &Path) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(path.as_os_str().as_encoded_bytes()) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => path.to_string_lossy(),
    }
}

/// A name when set and not cleared.
pub fn display_name(name: Option<&str>) -> Option<&str> {
    name.filter(|n| !n.is_empty())
}

/// Top-level fields the list needs; everything else is skipped unparsed.
#[derive(Deserialize)]
struct LineProbe<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<LenientMessage<'a>>,
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    summary: Option<&'a RawValue>,
    #[serde(rename = "summarizedThroughId", borrow, default)]
    summarized_through_id: Option<&'a RawValue>,
    #[serde(rename = "targetId", borrow, default)]
    target_id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    label: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct MessageProbe<'a> {
    #[serde(borrow, default)]
    role: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
}

/// A `message` field of any JSON type: only an object yields a probe.
struct LenientMessage<'a>(Option<MessageProbe<'a>>);

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
struct BlockProbe<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Option<&'a RawValue>,
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct UsageProbe {
    #[serde(rename = "totalTokens", default)]
    total_tokens: Option<f64>,
    #[serde(default)]
    cost: Option<CostProbe>,
    #[serde(default)]
    input: Option<f64>,
    #[serde(default)]
    output: Option<f64>,
    #[serde(rename = "cacheRead", default)]
    cache_read: Option<f64>,
    #[serde(rename = "cacheWrite", default)]
    cache_write: Option<f64>,
}

#[derive(Deserialize, Default)]
struct CostProbe {
    #[serde(default)]
    total: Option<f64>,
}

/// The raw JSON text of the fields a row needs (`None` when absent).
#[derive(Default)]
struct LineFields<'a> {
    ty: Option<&'a str>,
    id: Option<&'a str>,
    timestamp: Option<&'a str>,
    name: Option<&'a str>,
    summary: Option<&'a str>,
    summarized_through_id: Option<&'a str>,
    target_id: Option<&'a str>,
    label: Option<&'a str>,
    /// Present only when `message` is an object.
    message: Option<MessageFields<'a>>,
}

#[derive(Default)]
struct MessageFields<'a> {
    role: Option<&'a str>,
    /// Raw JSON: only decoded for user/assistant messages.
    content: Option<&'a str>,
    timestamp: Option<&'a str>,
    usage: Option<&'a str>,
    /// `usage`'s own members, when the fast path already crossed them.
    usage_parts: Option<UsageParts<'a>>,
    model: Option<&'a str>,
}

/// The raw members of a `usage` object the row needs.
#[derive(Default, Clone, Copy)]
struct UsageParts<'a> {
    total_tokens: Option<&'a str>,
    cost: Option<&'a str>,
    /// `cost.total`, when `cost` is an object.
    cost_total: Option<&'a str>,
    input: Option<&'a str>,
    output: Option<&'a str>,
    cache_read: Option<&'a str>,
    cache_write: Option<&'a str>,
}

impl<'a> LineProbe<'a> {
    fn fields(self) -> LineFields<'a> {
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
fn probe_fast(line: &[u8]) -> Option<LineFields<'_>> {
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
fn fields_of<'a>(s: &LineSpans<'a>) -> LineFields<'a> {
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
fn shallow_fields(v: &Value) -> Option<String> {
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

/// Decodes a JSON string literal, tolerating lone surrogate escapes.
fn decode_str(g: &str) -> Option<String> {
    match serde_json::from_str::<String>(g) {
        Ok(s) => Some(s),
        Err(_) => match parse_json_lenient(g) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
    }
}

fn raw_str(r: Option<&str>) -> Option<String> {
    let r = r?;
    if !r.starts_with('"') {
        return None;
    }
    if !r.contains('\\') {
        // Already validated JSON without escapes: the text between the quotes.
        return Some(r[1..r.len() - 1].to_string());
    }
    decode_str(r)
}

fn raw_is(r: Option<&str>, lit: &str) -> bool {
    match r {
        Some(g) => {
            if !g.starts_with('"') {
                return false;
            }
            // Fast path for the unescaped literal. An escaped spelling
            // (`"m\u0065ssage"`) is the same JSON string and must match too,
            // or the row's counts would differ from the full reader's.
            if g.contains('\\') {
                decode_str(g).is_some_and(|s| s == lit)
            } else {
                g.len() == lit.len() + 2 && &g[1..g.len() - 1] == lit
            }
        }
        None => false,
    }
}

fn raw_id(r: Option<&str>) -> Option<String> {
    let g = r?;
    if g.starts_with('"') {
        decode_str(g)
    } else if g == "null" {
        None
    } else {
        Some(g.to_string())
    }
}

/// The raw JSON string literals of a `content` value's text: the string
/// itself, or each text block's `text` in order (non-strings included: the
/// caller decodes and skips them).
fn text_literals(g: &str) -> Vec<&str> {
    if g.starts_with('"') {
        return vec![g];
    }
    if !g.starts_with('[') {
        return Vec::new();
    }
    let mut out = Vec::new();
    let fast = for_each_element(g, |b| {
        if !b.starts_with('{') {
            return;
        }
        let mut f: [Option<&str>; 2] = [None; 2];
        // A block with a duplicated `type`/`text` fails in serde too: skipped.
        if Skim::new(b)
            .object(1, &[b"type", b"text"], &mut f)
            .is_none()
        {
            return;
        }
        if f[0] != Some("\"text\"") {
            return;
        }
        if let Some(t) = f[1] {
            out.push(t);
        }
    });
    if fast.is_some() {
        return out;
    }
    // Content the skimmer refused (surrogate escapes, deep nesting): serde decides.
    out.clear();
    let Ok(blocks) = serde_json::from_str::<Vec<&RawValue>>(g) else {
        return out;
    };
    for b in blocks {
        let Ok(bp) = serde_json::from_str::<BlockProbe>(b.get()) else {
            continue;
        };
        if !raw_is(bp.ty.map(RawValue::get), "text") {
            continue;
        }
        if let Some(t) = bp.text {
            out.push(t.get());
        }
    }
    out
}

/// Text of a `content` value: a string, or its text blocks joined by a space.
fn raw_content_text(r: Option<&str>) -> String {
    let Some(g) = r else {
        return String::new();
    };
    let mut out = String::new();
    let mut first = true;
    for lit in text_literals(g) {
        if let Some(t) = raw_str(Some(lit)) {
            if !first {
                out.push(' ');
            }
            out.push_str(&t);
            first = false;
        }
    }
    out
}

/// The first non-blank line of [`raw_content_text`]'s text, trimmed and cut
/// to [`LAST_REPLY_CHARS`] characters. Only the text up to that line is
/// decoded: a reply is mostly lines after its first.
fn raw_first_line(r: Option<&str>) -> Option<String> {
    let g = r?;
    let mut cur = String::new();
    let mut any = false;
    for lit in text_literals(g) {
        if !lit.starts_with('"') {
            continue;
        }
        // Blocks are joined by a space, as in `raw_content_text`.
        if any {
            cur.push(' ');
        }
        any = true;
        let inner = &lit[1..lit.len() - 1];
        // Cut at each `\n` escape (a backslash starts an escape: the byte
        // after it is the escape's letter, never another escape's start).
        let (mut start, mut i) = (0, 0);
        let bytes = inner.as_bytes();
        loop {
            let cut = memchr::memchr(b'\\', &bytes[i..]).map(|p| i + p);
            let newline = cut.is_some_and(|p| bytes.get(p + 1) == Some(&b'n'));
            if cut.is_some() && !newline {
                i = cut.unwrap_or_default() + 2;
                continue;
            }
            let end = cut.unwrap_or(bytes.len());
            let piece = &inner[start..end];
            let decoded = if piece.contains('\\') {
                decode_str(&format!("\"{piece}\"")).unwrap_or_default()
            } else {
                piece.to_string()
            };
            // `\u000a` is a newline too.
            let mut parts = decoded.split('\n');
            if let Some(p) = parts.next() {
                cur.push_str(p);
            }
            for p in parts {
                if let Some(line) = kept_line(&cur) {
                    return Some(line);
                }
                cur.clear();
                cur.push_str(p);
            }
            if !newline {
                break;
            }
            if let Some(line) = kept_line(&cur) {
                return Some(line);
            }
            cur.clear();
            start = end + 2;
            i = start;
        }
    }
    kept_line(&cur)
}

/// A line as a row keeps it: trimmed, cut; `None` when blank.
fn kept_line(line: &str) -> Option<String> {
    let t = line.trim();
    (!t.is_empty()).then(|| t.chars().take(LAST_REPLY_CHARS).collect())
}

/// The figures of a `usage` object (each `None` when absent or null).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Figures {
    total_tokens: Option<f64>,
    cost: Option<f64>,
    input: Option<f64>,
    output: Option<f64>,
    cache_read: Option<f64>,
    cache_write: Option<f64>,
}

impl Figures {
    fn of(p: UsageProbe) -> Figures {
        Figures {
            total_tokens: p.total_tokens,
            cost: p.cost.and_then(|c| c.total),
            input: p.input,
            output: p.output,
            cache_read: p.cache_read,
            cache_write: p.cache_write,
        }
    }

    /// Token counts and cost as summed: negative or absent values count 0.
    fn summed(&self) -> UsageFigures {
        let n = |v: Option<f64>| v.unwrap_or(0.0).max(0.0) as u64;
        UsageFigures {
            input: n(self.input),
            output: n(self.output),
            cache_read: n(self.cache_read),
            cache_write: n(self.cache_write),
            cost: self.cost.unwrap_or(0.0).max(0.0),
        }
    }
}

/// The figures of `usage`, exactly as deserializing [`UsageProbe`] gives
/// them (`None` when that fails: the usage is then ignored). The common
/// shape (numbers in objects) was captured by the skimmer into `parts`;
/// anything else goes through `serde_json`.
fn usage_figures(u: &str, parts: Option<UsageParts>) -> Option<Figures> {
    let serde = || serde_json::from_str::<UsageProbe>(u).ok().map(Figures::of);
    let number = |v: Option<&str>| -> Result<Option<f64>, ()> {
        match v {
            None | Some("null") => Ok(None),
            // Token counts: a plain integer (the skimmer checked the JSON
            // grammar) is what serde makes of it, `u64 as f64`, without
            // its per-call setup (six numbers a message).
            Some(s) if s.len() <= 15 && s.bytes().all(|b| b.is_ascii_digit()) => Ok(Some(
                s.bytes().fold(0u64, |v, b| v * 10 + u64::from(b - b'0')) as f64,
            )),
            Some(s) if s.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => {
                serde_json::from_str::<f64>(s).map(Some).map_err(|_| ())
            }
            Some(_) => Err(()),
        }
    };
    // Lines the fast path refused are unusual: serde reads their usage.
    let Some(parts) = parts else {
        return serde();
    };
    let (Ok(total_tokens), Ok(input), Ok(output), Ok(cache_read), Ok(cache_write)) = (
        number(parts.total_tokens),
        number(parts.input),
        number(parts.output),
        number(parts.cache_read),
        number(parts.cache_write),
    ) else {
        return serde();
    };
    let cost = match parts.cost {
        None | Some("null") => None,
        Some(c) if c.starts_with('{') => match number(parts.cost_total) {
            Ok(v) => v,
            Err(()) => return serde(),
        },
        Some(_) => return serde(),
    };
    Some(Figures {
        total_tokens,
        cost,
        input,
        output,
        cache_read,
        cache_write,
    })
}

/// Streaming extraction of a `SessionInfo`, resumable on appended lines.
#[derive(Clone)]
pub struct InfoScanner {
    info: SessionInfo,
    header_seen: bool,
    failed: Option<&'static str>,
    fast: bool,
    /// Gather `all_text` (else only the first user message is decoded).
    keep_text: bool,
    /// Gather it normalized (see [`crate::normalize::normalize`]) rather than raw.
    normalize_text: bool,
    /// Where each entry's line starts, for finding labelled entries again
    /// (see [`crate::extras::Offsets`]).
    offsets: Offsets,
    /// `offsets` cover every entry of the file so far.
    offsets_complete: bool,
    /// The offset of the line being fed, when the caller gave it.
    at: Option<u64>,
}

impl InfoScanner {
    pub fn new(path: &Path, file_mtime_ms: i64) -> InfoScanner {
        InfoScanner {
            info: SessionInfo {
                path: path.into(),
                file_mtime_ms,
                ..SessionInfo::default()
            },
            header_seen: false,
            failed: None,
            fast: true,
            keep_text: true,
            normalize_text: false,
            offsets: Offsets::default(),
            offsets_complete: true,
            at: None,
        }
    }

    /// Gathers `all_text` already normalized: lowercased, whitespace runs
    /// collapsed (a trailing space may remain). The index wants only that.
    pub fn with_normalized_text(mut self) -> InfoScanner {
        self.normalize_text = true;
        self
    }

    /// Does not gather `all_text` (a listing without search): message text
    /// is then only decoded until the first user message is found.
    pub fn without_text(mut self) -> InfoScanner {
        self.keep_text = false;
        self
    }

    /// Turns the fast path off: every line goes through `serde_json`.
    /// For tests that check both paths agree.
    #[doc(hidden)]
    pub fn without_fast_path(mut self) -> InfoScanner {
        self.fast = false;
        self
    }

    /// Continues from a finished row (the file grew).
    pub fn resume(info: SessionInfo) -> InfoScanner {
        InfoScanner {
            info,
            header_seen: true,
            failed: None,
            fast: true,
            keep_text: true,
            normalize_text: false,
            // The lines before were read by another scan.
            offsets: Offsets::default(),
            offsets_complete: false,
            at: None,
        }
    }

    /// True once the file is known not to be a session.
    pub fn failed(&self) -> Option<&'static str> {
        self.failed
    }

    /// The row so far (before `finish`), once a header was read.
    pub fn info(&self) -> Option<&SessionInfo> {
        (self.header_seen && self.failed.is_none()).then_some(&self.info)
    }

    /// Takes the searchable text gathered since the last call (the index
    /// keeps it apart from the row).
    pub fn take_text(&mut self) -> String {
        std::mem::take(&mut self.info.all_text)
    }

    /// The file's mtime changed (it is the fallback `modified` time).
    pub fn set_file_mtime(&mut self, ms: i64) {
        self.info.file_mtime_ms = ms;
    }

    /// Feeds one line (without its `\n`). `complete` is false for a last
    /// line with no newline.
    pub fn feed(&mut self, line: &[u8], complete: bool) {
        self.at = None;
        self.feed_line(line, complete);
    }

    /// [`InfoScanner::feed`] with the byte offset where the line starts in
    /// the file, so that labels can find their entries' lines again.
    pub fn feed_at(&mut self, line: &[u8], complete: bool, offset: u64) {
        self.at = Some(offset);
        self.feed_line(line, complete);
    }

    /// [`InfoScanner::feed_at`] for a complete line already skimmed by
    /// [`skim_line`](crate::line_skim::skim_line): the same row as feeding
    /// the line itself. Returns false, having done nothing, when the line
    /// must be fed itself (the header is not read yet, or the fast path is
    /// off).
    pub fn feed_skimmed_at(&mut self, spans: &LineSpans, offset: u64) -> bool {
        if self.failed.is_some() {
            return true;
        }
        if !self.header_seen || !self.fast {
            return false;
        }
        self.at = Some(offset);
        self.entry(fields_of(spans));
        true
    }

    /// Looks up the row text of labels set by the lines fed so far, reading
    /// their entries' lines again from `src` (the file being scanned).
    pub fn resolve_labels(&mut self, src: &mut dyn LineSource) -> std::io::Result<()> {
        crate::extras::resolve_label_texts(
            &mut self.info.labels,
            &self.offsets,
            self.offsets_complete,
            src,
        )
    }

    fn feed_line(&mut self, line: &[u8], complete: bool) {
        if self.failed.is_some() {
            return;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            self.info.diagnostics.blank_lines += 1;
            return;
        }
        if !self.header_seen {
            let mut lossy = false;
            match parse_object(line, &mut lossy) {
                Some(obj) => self.header(obj),
                None => {
                    if complete {
                        self.info.diagnostics.skipped_lines += 1;
                    } else {
                        self.info.diagnostics.partial_tail = true;
                    }
                }
            }
            return;
        }
        if self.fast {
            if let Some(f) = probe_fast(line) {
                self.entry(f);
                return;
            }
        }
        let text: std::borrow::Cow<str> = match std::str::from_utf8(line) {
            Ok(s) => s.into(),
            Err(_) => {
                self.info.diagnostics.lossy_lines += 1;
                String::from_utf8_lossy(line)
            }
        };
        let text = text.trim_start_matches('\u{feff}');
        // Only JSON objects are entries. Without this check a JSON array
        // would probe as a line: serde's derive fills a struct from a
        // sequence positionally, so `["message", …]` counted as a message
        // that the full reader (rightly) skips.
        if !text
            .trim_start_matches([' ', '\t', '\r', '\n'])
            .starts_with('{')
        {
            if complete {
                self.info.diagnostics.skipped_lines += 1;
            } else {
                self.info.diagnostics.partial_tail = true;
            }
            return;
        }
        let shallow;
        let parsed = match serde_json::from_str::<LineProbe>(text) {
            Ok(p) => Ok(p),
            // Rare: what only a JavaScript reader accepts (lone surrogates,
            // huge numbers, deep nesting). Parse it leniently, keep the fields
            // the row needs, and probe that.
            Err(e) => match parse_json_lenient(text).and_then(|v| shallow_fields(&v)) {
                Some(s) => {
                    shallow = s;
                    serde_json::from_str::<LineProbe>(&shallow)
                }
                None => Err(e),
            },
        };
        match parsed {
            // `LineProbe` skips what it does not need without a depth
            // limit; the tree reader refuses such a line, and so does this.
            Ok(p) if !too_deep(text.as_bytes()) => self.entry(p.fields()),
            _ => {
                if complete {
                    self.info.diagnostics.skipped_lines += 1;
                } else {
                    self.info.diagnostics.partial_tail = true;
                }
            }
        }
    }

    fn header(&mut self, obj: Map<String, Value>) {
        let is_header = obj.get("type").and_then(Value::as_str) == Some("session")
            && obj.get("id").is_some_and(Value::is_string);
        if !is_header {
            self.failed = Some("the first entry is not a session header with a string id");
            return;
        }
        self.header_seen = true;
        let i = &mut self.info;
        i.id = obj
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        i.cwd = obj
            .get("cwd")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        i.parent_session_path = obj
            .get("parentSession")
            .and_then(Value::as_str)
            .map(str::to_string);
        i.internal = is_internal_marker(&obj);
        match obj.get("timestamp") {
            Some(Value::String(s)) => {
                i.header_ms = parse_iso_ms(s);
                // Normalized to UTC like the agents' `toISOString()`.
                i.created = i.header_ms.map(format_iso_ms).unwrap_or_else(|| s.clone());
            }
            Some(Value::Number(n)) => {
                if let Some(ms) = n.as_f64().filter(|f| f.is_finite()) {
                    i.created = format_iso_ms(ms as i64);
                    i.header_ms = Some(ms as i64);
                }
            }
            _ => {}
        }
    }

    fn message_text(&mut self, content: Option<&str>, wants_first: bool) {
        let i = &mut self.info;
        let text = raw_content_text(content);
        if wants_first && !text.trim().is_empty() {
            i.first_message = Some(text.clone());
        }
        if self.keep_text && !text.is_empty() {
            if self.normalize_text {
                // normalize(a + " " + b) == normalize(a) + " " + normalize(b),
                // up to the single spaces normalize already collapses.
                if !i.all_text.is_empty() && !i.all_text.ends_with(' ') {
                    i.all_text.push(' ');
                }
                crate::normalize::normalize(&text, &mut i.all_text);
            } else {
                if !i.all_text.is_empty() {
                    i.all_text.push(' ');
                }
                i.all_text.push_str(&text);
            }
        }
    }

    fn entry(&mut self, p: LineFields) {
        match (self.at, p.id.and_then(raw_id_hash)) {
            (Some(off), Some(h)) => {
                if !self.offsets.push(h, off) {
                    self.offsets_complete = false;
                }
            }
            (None, _) => self.offsets_complete = false,
            (Some(_), None) => {}
        }
        let i = &mut self.info;
        if raw_is(p.ty, "message") {
            i.message_count += 1;
            let Some(m) = p.message else {
                return;
            };
            let is_user = raw_is(m.role, "user");
            let is_assistant = raw_is(m.role, "assistant");
            if !(is_user || is_assistant) {
                return;
            }
            let wants_first = is_user && i.first_message.is_none();
            if !self.keep_text && !wants_first {
                // The row needs no text from this message: do not decode it.
            } else {
                self.message_text(m.content, wants_first);
            }
            let i = &mut self.info;
            let ms = m
                .timestamp
                .and_then(|t| t.parse::<f64>().ok())
                .filter(|f| f.is_finite())
                .map(|f| f as i64)
                .or_else(|| raw_str(p.timestamp).as_deref().and_then(parse_iso_ms));
            if let Some(ms) = ms {
                i.newest_message_ms = Some(i.newest_message_ms.map_or(ms, |c| c.max(ms)));
            }
            i.last_message_id = raw_id(p.id);
            if is_assistant {
                if let Some(line) = raw_first_line(m.content) {
                    i.last_reply = Some(line);
                }
                let model = raw_str(m.model);
                if let Some(model) = &model {
                    if let Err(at) = i.models.binary_search(model) {
                        i.models.insert(at, model.clone());
                    }
                }
                let figures = m
                    .usage
                    .and_then(|u| usage_figures(u, m.usage_parts))
                    .unwrap_or_default();
                i.total_tokens += figures.total_tokens.unwrap_or(0.0).max(0.0) as u64;
                i.total_cost += figures.cost.unwrap_or(0.0).max(0.0);
                // A message without a time of its own counts at the newest
                // time seen before it.
                let at = ms
                    .or(i.newest_message_ms)
                    .or(i.header_ms)
                    .unwrap_or_default();
                i.usage
                    .add(model.as_deref().unwrap_or(""), at, figures.summed());
            }
        } else if raw_is(p.ty, "session_info") {
            if let Some(n) = raw_str(p.name) {
                i.name = Some(n.trim().to_string());
                i.has_name = true;
            }
        } else if raw_is(p.ty, "session_summary") {
            if let (Some(s), Some(t)) = (raw_str(p.summary), raw_id(p.summarized_through_id)) {
                i.summary_candidate = Some((s, t));
            }
        } else if raw_is(p.ty, "branch_summary") {
            i.summary_candidate = None;
        } else if raw_is(p.ty, "label") {
            // As the tree applies labels (SPEC §3): a string target, a
            // string label (empty or absent clears).
            if let Some(target) = raw_str(p.target_id) {
                apply_label(
                    &mut i.labels,
                    target,
                    raw_str(p.label),
                    raw_str(p.timestamp),
                );
            }
        }
    }

    /// The row, or why the file is not a session.
    pub fn finish(mut self) -> Result<SessionInfo, &'static str> {
        if let Some(reason) = self.failed {
            return Err(reason);
        }
        if !self.header_seen {
            return Err("no session header");
        }
        self.info.recompute_modified();
        Ok(std::mem::take(&mut self.info))
    }
}

/// Reads a file's list row in one pass.
pub fn scan_info(path: &Path) -> Result<SessionInfo, ReadError> {
    scan_info_with(path, true)
}

/// [`scan_info`], gathering the searchable `all_text` only when `text`.
pub fn scan_info_with(path: &Path, text: bool) -> Result<SessionInfo, ReadError> {
    scan_info_seeing(path, text, None).map(|seen| seen.info)
}

/// Who [`scan_info_seeing`] hands each line to, with its skim.
pub type LineSeer<'a> = dyn FnMut(&[u8], Option<&LineSpans>) + 'a;

/// What [`scan_info_seeing`] read: the row, and whether its lines were
/// the ones handed out (`false`: the file was another agent's, read
/// through its translation, whose lines were not).
pub struct SeenRow {
    pub info: SessionInfo,
    pub lines_seen: bool,
}

/// [`scan_info_with`], each complete line after the header also handed to
/// `each`, when given, with its skim ([`skim_line`](crate::line_skim::skim_line);
/// `None` when the skim refused it): one crossing of a line for the row
/// and for whoever reads its parts, as an index build does. Without
/// `each`, the row's own probe reads each line (it captures less).
pub fn scan_info_seeing(
    path: &Path,
    text: bool,
    mut each: Option<&mut LineSeer>,
) -> Result<SeenRow, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let (mut f, meta) = crate::open::open_session_file(path)?;
    let mut s = InfoScanner::new(path, mtime_ms(&meta));
    if !text {
        s = s.without_text();
    }
    with_read_buffer(|buf| {
        read_lines(&mut f, buf, |line, complete, end| {
            let at = end - line.len() as u64 - u64::from(complete);
            let each = match each.as_mut() {
                Some(each) if complete && s.header_seen => each,
                _ => {
                    s.feed_at(line, complete, at);
                    return s.failed.is_none();
                }
            };
            match crate::line_skim::skim_line(line) {
                Some(spans) => {
                    if !s.feed_skimmed_at(&spans, at) {
                        s.feed_at(line, true, at);
                    }
                    each(line, Some(&spans));
                }
                None => {
                    s.feed_at(line, true, at);
                    each(line, None);
                }
            }
            s.failed.is_none()
        })
    })
    .map_err(io)?;
    if s.failed.is_some() {
        // Not an Atomic session: maybe another agent's.
        if let Some(info) = scan_foreign(path, text)? {
            return Ok(SeenRow {
                info,
                lines_seen: false,
            });
        }
    }
    // Without the labelled entries' text the row is still right: their
    // labels then show without it.
    let _ = s.resolve_labels(&mut f);
    let info = s.finish().map_err(|reason| ReadError::NotASession {
        path: path.to_path_buf(),
        reason,
    })?;
    Ok(SeenRow {
        info,
        lines_seen: true,
    })
}

/// The row of another agent's session (Claude Code, Codex), translated
/// (`session::foreign`) as it is read, in bounded memory; `None` when the
/// file is in no format arbor knows. The row's `agent` is left to the
/// caller, who knows the store root.
pub fn scan_foreign(path: &Path, text: bool) -> Result<Option<SessionInfo>, ReadError> {
    let Some(agent) = crate::foreign::detect_path(path) else {
        return Ok(None);
    };
    let (mut f, meta) = crate::open::open_session_file(path)?;
    let Some(mut t) = crate::foreign::Translator::new(agent, path) else {
        return Ok(None);
    };
    let mut s = InfoScanner::new(path, mtime_ms(&meta));
    if !text {
        s = s.without_text();
    }
    with_read_buffer(|buf| {
        read_lines(&mut f, buf, |line, complete, _| {
            t.feed_lines(line, complete, &mut |l, c| s.feed(l, c));
            true
        })
    })
    .map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(finish_foreign(t, s))
}

/// [`scan_foreign`] on bytes already read.
pub fn scan_foreign_bytes(
    path: &Path,
    buf: &[u8],
    file_mtime_ms: i64,
    text: bool,
) -> Option<SessionInfo> {
    let agent = crate::foreign::detect_bytes(buf)?;
    let mut t = crate::foreign::Translator::new(agent, path)?;
    let mut s = InfoScanner::new(path, file_mtime_ms);
    if !text {
        s = s.without_text();
    }
    for (line, complete) in lines(buf) {
        t.feed_lines(line, complete, &mut |l, c| s.feed(l, c));
    }
    finish_foreign(t, s)
}

/// The row of a translation fed to `s` (another agent's file has no
/// labels to resolve); its git branch is the translation's.
pub fn finish_foreign(t: crate::foreign::Translator, mut s: InfoScanner) -> Option<SessionInfo> {
    let branch = t.git_branch().map(str::to_string);
    t.finish_lines(&mut |l, c| s.feed(l, c));
    let mut row = s.finish().ok()?;
    row.git_branch = branch;
    Some(row)
}

/// A whole file and its mtime.
pub fn read_whole(path: &Path) -> Result<(Vec<u8>, i64), ReadError> {
    use std::io::Read;
    let (mut f, meta) = crate::open::open_session_file(path)?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut buf).map_err(|source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((buf, mtime_ms(&meta)))
}

thread_local! {
    static READ_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's reusable read buffer.
pub fn with_read_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    READ_BUF.with(|b| match b.try_borrow_mut() {
        Ok(mut buf) => {
            let r = f(&mut buf);
            if buf.len() > 4 * CHUNK {
                // A huge line grew it: do not keep that alive.
                *buf = Vec::new();
            }
            r
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// Read size of [`read_lines`]: small enough that the bytes just read are
/// still in the CPU cache when they are parsed.
const CHUNK: usize = 256 << 10;

/// Streams the lines of `r` (from its current position) in cache-sized
/// chunks. `f(line, complete, end)` gets each line without its `\n`,
/// whether it had one, and the number of bytes consumed up to and including
/// it; it returns false to stop. Returns the number of bytes read.
pub fn read_lines(
    r: &mut impl std::io::Read,
    buf: &mut Vec<u8>,
    mut f: impl FnMut(&[u8], bool, u64) -> bool,
) -> std::io::Result<u64> {
    if buf.len() < CHUNK {
        buf.resize(CHUNK, 0);
    }
    // Stream offset of buf[0]; buf[start..filled] is read but not consumed,
    // and holds no newline before `scanned`.
    let mut base: u64 = 0;
    let (mut start, mut filled, mut scanned) = (0usize, 0usize, 0usize);
    loop {
        if filled == buf.len() {
            if start > 0 {
                buf.copy_within(start..filled, 0);
                base += start as u64;
                filled -= start;
                scanned -= start;
                start = 0;
            } else {
                // One line longer than the buffer: grow it.
                buf.resize(buf.len() * 2, 0);
            }
        }
        let n = loop {
            match r.read(&mut buf[filled..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        if n == 0 {
            if start < filled {
                f(&buf[start..filled], false, base + filled as u64);
            }
            return Ok(base + filled as u64);
        }
        filled += n;
        while let Some(p) = memchr::memchr(b'\n', &buf[scanned..filled]) {
            let nl = scanned + p;
            let keep_going = f(&buf[start..nl], true, base + nl as u64 + 1);
            start = nl + 1;
            scanned = start;
            if !keep_going {
                return Ok(base + filled as u64);
            }
        }
        scanned = filled;
        if start == filled {
            base += start as u64;
            start = 0;
            filled = 0;
            scanned = 0;
        }
    }
}

pub fn scan_info_bytes(
    path: &Path,
    buf: &[u8],
    file_mtime_ms: i64,
) -> Result<SessionInfo, ReadError> {
    let row = scan_bytes_with(InfoScanner::new(path, file_mtime_ms), path, buf);
    if row.is_err() {
        // Another agent's session, as `scan_info_with` reads it.
        if let Some(info) = scan_foreign_bytes(path, buf, file_mtime_ms, true) {
            return Ok(info);
        }
    }
    row
}

/// [`scan_info_bytes`] through `serde_json` only (the reference for the fast path).
#[doc(hidden)]
pub fn scan_info_bytes_reference(
    path: &Path,
    buf: &[u8],
    file_mtime_ms: i64,
) -> Result<SessionInfo, ReadError> {
    scan_bytes_with(
        InfoScanner::new(path, file_mtime_ms).without_fast_path(),
        path,
        buf,
    )
}

fn scan_bytes_with(mut s: InfoScanner, path: &Path, buf: &[u8]) -> Result<SessionInfo, ReadError> {
    let base = buf.as_ptr() as usize;
    for (line, nl) in lines(buf) {
        s.feed_at(line, nl, (line.as_ptr() as usize - base) as u64);
        if s.failed.is_some() {
            break;
        }
    }
    let _ = s.resolve_labels(&mut &buf[..]);
    s.finish().map_err(|reason| ReadError::NotASession {
        path: path.to_path_buf(),
        reason,
    })
}

/// [`scan_info_bytes`] as an index build feeds the scanner: each complete
/// line skimmed once for the row and the words
/// ([`skim_line`](crate::line_skim::skim_line), then
/// [`InfoScanner::feed_skimmed_at`]). For tests that check it gives the
/// same rows.
#[doc(hidden)]
pub fn scan_info_bytes_skimmed(
    path: &Path,
    buf: &[u8],
    file_mtime_ms: i64,
) -> Result<SessionInfo, ReadError> {
    let mut s = InfoScanner::new(path, file_mtime_ms);
    let base = buf.as_ptr() as usize;
    for (line, nl) in lines(buf) {
        let at = (line.as_ptr() as usize - base) as u64;
        let fed =
            nl && crate::line_skim::skim_line(line).is_some_and(|sp| s.feed_skimmed_at(&sp, at));
        if !fed {
            s.feed_at(line, nl, at);
        }
        if s.failed.is_some() {
            break;
        }
    }
    let _ = s.resolve_labels(&mut &buf[..]);
    s.finish().map_err(|reason| ReadError::NotASession {
        path: path.to_path_buf(),
        reason,
    })
}

pub fn mtime_ms(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The hand-written `list --json` line is serde_json's, byte for byte.
        #[test]
        fn json_line_is_serde_jsons(
            text in "(\\PC|[\\x00-\\x1f\"\\\\\\x7f]|\\u{85}|é|数){0,80}",
            name in proptest::option::of("(\\PC|[\\x00-\\x1f\"\\\\]){0,12}"),
            count in 0usize..100_000_000,
            skipped in 0usize..3,
            flags in 0u8..8,
        ) {
            let info = SessionInfo {
                path: PathBuf::from(format!("/s/{text}.jsonl")).into(),
                id: text.chars().rev().collect(),
                cwd: text.clone(),
                name: name.clone(),
                has_name: flags & 1 != 0,
                created: "2026-01-01T00:00:00.000Z".into(),
                modified_ms: count as i64 * 1000,
                message_count: count,
                first_message: (flags & 2 != 0).then(|| text.clone()),
                parent_session_path: name.clone(),
                git_branch: name.as_ref().map(|n| format!("{n}/{text}")),
                last_reply: (flags & 4 != 0).then(|| format!("{text}\\{text}")),
                summary_candidate: Some((text.clone(), "m".into())),
                last_message_id: Some("m".into()),
                internal: flags & 2 != 0,
                diagnostics: crate::reader::Diagnostics {
                    lossy_lines: skipped,
                    skipped_lines: skipped / 2,
                    partial_tail: flags & 4 != 0,
                    ..Default::default()
                },
                ..Default::default()
            };
            let mut want = serde_json::to_vec(&info.json_row()).unwrap();
            want.push(b'\n');
            let mut got = Vec::new();
            info.write_json_line(&mut got);
            proptest::prop_assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        }
    }

    /// What `raw_first_line` means, from the whole decoded text.
    fn first_line_reference(content: &str) -> Option<String> {
        let text = raw_content_text(Some(content));
        text.split('\n').find_map(kept_line)
    }

    #[test]
    fn first_line_decodes_only_what_it_needs_and_agrees_with_the_text() {
        let long = "é".repeat(LAST_REPLY_CHARS + 10);
        let cases = [
            r#""Done.\nThe rest""#.to_string(),
            r#""\n\n  \t\n  Second \"quoted\"  \nthird""#.to_string(),
            r#""a backslash and n: \\n stays on the line\nnext""#.to_string(),
            r#""\\\nafter an escaped backslash""#.to_string(),
            r#""unicode newline\u000Anext""#.to_string(),
            r#""crlf line\r\nnext""#.to_string(),
            r#""\ud83d\ude00 pair\nx""#.to_string(),
            r#""lone \ud800 surrogate\nx""#.to_string(),
            r#""   ""#.to_string(),
            r#""""#.to_string(),
            format!(r#""{long}\nx""#),
            r#"[{"type":"thinking","thinking":"hmm\nno"},{"type":"text","text":"\n"},{"type":"text","text":"joined"},{"type":"text","text":"by a space\nnot this"}]"#.to_string(),
            r#"[{"type":"toolCall","name":"bash","arguments":{"command":"ls"}}]"#.to_string(),
            r#"[{"type":"text","text":7},{"type":"text","text":"after a number"}]"#.to_string(),
            r#"[{"type":"text","text":"a\ud800"},{"type":"text","text":"b\nc"}]"#.to_string(),
            r#"[]"#.to_string(),
            r#"{"text":"not content"}"#.to_string(),
        ];
        for c in &cases {
            assert_eq!(raw_first_line(Some(c)), first_line_reference(c), "{c}");
        }
        assert_eq!(
            raw_first_line(Some(&cases[1])).as_deref(),
            Some("Second \"quoted\"")
        );
        assert_eq!(
            raw_first_line(Some(&cases[11])).as_deref(),
            Some("joined by a space")
        );
        assert_eq!(
            raw_first_line(Some(&cases[10])).map(|l| l.chars().count()),
            Some(LAST_REPLY_CHARS)
        );
    }

    #[test]
    fn last_reply_is_the_last_assistant_text_in_file_order() {
        let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}"#;
        let lines = [
            header,
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"fix it"}}"#,
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"First try.\nDetails"}]}}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"\nFixed the parser.\nDetails"}]}}"#,
            // A reply with only a tool call leaves the last words in place.
            r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"bash","arguments":{}}]}}"#,
            r#"{"type":"message","id":"u2","parentId":"a3","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":"thanks\nbye"}}"#,
        ];
        let file = lines.join("\n");
        for text in [true, false] {
            let mut s = InfoScanner::new(Path::new("/x.jsonl"), 0);
            if !text {
                s = s.without_text();
            }
            for l in file.lines() {
                s.feed(l.as_bytes(), true);
            }
            let info = s.finish().unwrap();
            assert_eq!(info.last_reply.as_deref(), Some("Fixed the parser."));
        }
    }

    #[test]
    fn usage_figures_are_serdes() {
        let cases = [
            r#"{"input":1,"totalTokens":64197,"cost":{"input":0.1,"total":0.009104624999999998}}"#,
            r#"{"totalTokens":null,"cost":null}"#,
            r#"{"totalTokens":"12","cost":{"total":1}}"#,
            r#"{"totalTokens":12,"cost":5}"#,
            r#"{"totalTokens":12,"cost":{"total":"x"}}"#,
            r#"{"totalTokens":12,"totalTokens":13}"#,
            r#"{"cost":{"total":1,"total":2}}"#,
            r#"{"totalTokens":1e400}"#,
            r#"{"totalTokens":-5,"cost":{"total":-1.5e-3}}"#,
            r#"{"totalTokens":12,"cost":{"nested":{"total":9}}}"#,
            r#"{}"#,
            r#"[]"#,
            r#"[1,{"total":2}]"#,
            r#"null"#,
            r#"7"#,
            r#"{"totalTokens":true}"#,
            r#"{"totalTokens":[1]}"#,
            r#"{"totalTokens":3}"#,
            r#"{"total\u0054okens":5,"cost":{"total":2}}"#,
            r#"{"totalTokens":4,"cost":{"tot\u0061l":2}}"#,
            r#" { "totalTokens" : 6 , "cost" : { "total" : 0.5 } } "#,
            r#"{"totalTokens":7,"cost":{"total":1},"cost":{"total":2}}"#,
            r#""12""#,
            r#"{"input":3,"output":4.5,"cacheRead":-2,"cacheWrite":null,"totalTokens":9}"#,
            r#"{"input":"3","output":4}"#,
            r#"{"input":1,"input":2}"#,
            r#"{"cacheRead":1e400,"cacheWrite":7,"cost":{"total":0.5}}"#,
        ];
        let mut captured = 0;
        for u in cases {
            let want = serde_json::from_str::<UsageProbe>(u).ok().map(Figures::of);
            // The same usage inside a file: the fast path (which captures
            // usage member by member, or refuses the line) gives the serde
            // path's totals.
            let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}"#;
            let message = format!(
                r#"{{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"assistant","content":[],"usage":{u}}}}}"#
            );
            let file = format!("{header}\n{message}\n");
            let path = std::path::Path::new("/x/s.jsonl");
            let fast = scan_info_bytes(path, file.as_bytes(), 0).unwrap();
            let reference = scan_info_bytes_reference(path, file.as_bytes(), 0).unwrap();
            assert_eq!(fast.message_count, 1, "{u}");
            // The members captured in the one pass give serde's figures.
            if let Some(m) = probe_fast(message.as_bytes()).and_then(|f| f.message) {
                if m.usage_parts.is_some() {
                    assert_eq!(usage_figures(m.usage.unwrap(), m.usage_parts), want, "{u}");
                    captured += 1;
                }
            }
            assert_eq!(
                (fast.total_tokens, fast.total_cost.to_bits()),
                (reference.total_tokens, reference.total_cost.to_bits()),
                "{u}"
            );
            assert_eq!(fast.usage, reference.usage, "{u}");
            let b = &fast.usage.buckets;
            assert_eq!(b.len(), 1, "one assistant message, one bucket: {u}");
            assert_eq!(b[0].messages, 1);
        }
        // Every object without duplicated or escaped keys (16 of the
        // cases) was captured in the one pass, not refused.
        assert_eq!(captured, 16);
    }

    #[test]
    fn json_lines_in_field_order() {
        let mut rows = vec![SessionInfo::default()];
        let mut r = SessionInfo {
            path: PathBuf::from("/a/\"b\"\n.jsonl").into(),
            id: "x\u{1}".into(),
            cwd: "C:\\Users".into(),
            name: Some("n ✓".into()),
            has_name: true,
            created: "2026".into(),
            modified_ms: 1_767_225_600_123,
            message_count: 12,
            first_message: Some("hi\t\"there\"".into()),
            parent_session_path: Some("/p".into()),
            summary_candidate: Some(("sum".into(), "m1".into())),
            last_message_id: Some("m1".into()),
            last_reply: Some("Fixed \"it\".".into()),
            internal: true,
            ..Default::default()
        };
        rows.push(r.clone());
        r.diagnostics.skipped_lines = 2;
        r.diagnostics.partial_tail = true;
        rows.push(r.clone());
        r.diagnostics = Diagnostics {
            lossy_lines: 1,
            ..Default::default()
        };
        r.modified_ms = -62_200_000_000_000;
        rows.push(r);
        let mut out = Vec::new();
        for r in rows {
            r.write_json_line(&mut out);
        }
        // serde_json's escapes; the diagnostics only when there are some.
        let want = [
            r#"{"path":"","id":"","cwd":"","name":null,"hasName":false,"created":"","modified":"1970-01-01T00:00:00.000Z","messageCount":0,"firstMessage":"(no messages)","parentSessionPath":null,"summary":null,"lastReply":null,"internal":false,"agent":"atomic","gitBranch":null}"#,
            r#"{"path":"/a/\"b\"\n.jsonl","id":"x\u0001","cwd":"C:\\Users","name":"n ✓","hasName":true,"created":"2026","modified":"2026-01-01T00:00:00.123Z","messageCount":12,"firstMessage":"hi\t\"there\"","parentSessionPath":"/p","summary":"sum","lastReply":"Fixed \"it\".","internal":true,"agent":"atomic","gitBranch":null}"#,
            r#"{"path":"/a/\"b\"\n.jsonl","id":"x\u0001","cwd":"C:\\Users","name":"n ✓","hasName":true,"created":"2026","modified":"2026-01-01T00:00:00.123Z","messageCount":12,"firstMessage":"hi\t\"there\"","parentSessionPath":"/p","summary":"sum","lastReply":"Fixed \"it\".","internal":true,"agent":"atomic","gitBranch":null,"diagnostics":{"skippedLines":3,"lossyLines":0,"partialTail":true}}"#,
            r#"{"path":"/a/\"b\"\n.jsonl","id":"x\u0001","cwd":"C:\\Users","name":"n ✓","hasName":true,"created":"2026","modified":"-0002-12-17T14:13:20.000Z","messageCount":12,"firstMessage":"hi\t\"there\"","parentSessionPath":"/p","summary":"sum","lastReply":"Fixed \"it\".","internal":true,"agent":"atomic","gitBranch":null,"diagnostics":{"skippedLines":0,"lossyLines":1,"partialTail":false}}"#,
        ];
        assert_eq!(String::from_utf8(out).unwrap(), want.join("\n") + "\n");
    }
}
