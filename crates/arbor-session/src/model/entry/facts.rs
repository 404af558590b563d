//! What every entry answers without parsing its line: its type, role,
//! the kind of its text and stop reason, and the label it sets.

use serde_json::{Map, Value};

/// What every entry answers without parsing its line: exactly what the
/// accessors of the same names read from the parsed object.
///
/// Packed, because a session of a million entries holds a million of
/// these: the type and role as a number into the known spellings, the
/// timestamp inline when it is no longer than ISO 8601's 24 bytes, and
/// whatever is rare (another type or role, a longer timestamp, the label
/// fields) in one box. 40 bytes, where the plain fields took 80 and a
/// timestamp allocation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Facts {
    stamp: [u8; STAMP],
    /// Bytes of `stamp` used; [`NO_STAMP`]: none; [`RARE`]: in `rare`.
    stamp_len: u8,
    /// Position in [`KNOWN_TYPES`], or [`RARE`].
    ty: u8,
    /// [`NO_ROLE`], a position in [`KNOWN_ROLES`], or [`RARE`].
    role: u8,
    /// Of an assistant message: its text and how it stopped.
    pub text: TextKind,
    pub stop: StopKind,
    rare: Option<Box<RareFacts>>,
}

/// Room for `YYYY-MM-DDTHH:MM:SS.mmmZ`.
const STAMP: usize = 24;
const NO_STAMP: u8 = u8::MAX - 1;
const NO_ROLE: u8 = u8::MAX - 1;
const RARE: u8 = u8::MAX;

/// The facts few entries have.
#[derive(Debug, Clone, PartialEq, Default)]
struct RareFacts {
    ty: Box<str>,
    role: Box<str>,
    timestamp: Box<str>,
    /// `label`, `targetId` and `name`, when any is a string.
    strs: LabelFacts,
}

impl Default for Facts {
    fn default() -> Facts {
        Facts::new(
            "",
            None,
            None,
            LabelFacts::default(),
            TextKind::Blank,
            StopKind::Missing,
        )
    }
}

/// Whether a message's content has text that is not blank: a string
/// content, or the `text` of its blocks of type `text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TextKind {
    /// No text, or only whitespace.
    #[default]
    Blank,
    /// A character that is not whitespace by any definition.
    Text,
    /// Only whitespace, and U+0085 or U+FEFF among it (whitespace to Rust
    /// but not to JavaScript, or the reverse): ask the object.
    Unsure,
}

impl TextKind {
    /// The kind of one piece of text.
    pub fn of(s: &str) -> TextKind {
        let mut unsure = false;
        for c in s.chars() {
            match c {
                '\u{85}' | '\u{feff}' => unsure = true,
                c if c.is_whitespace() => {}
                _ => return TextKind::Text,
            }
        }
        if unsure {
            TextKind::Unsure
        } else {
            TextKind::Blank
        }
    }

    /// The kind of several pieces together.
    pub fn and(self, other: TextKind) -> TextKind {
        match (self, other) {
            (TextKind::Text, _) | (_, TextKind::Text) => TextKind::Text,
            (TextKind::Unsure, _) | (_, TextKind::Unsure) => TextKind::Unsure,
            _ => TextKind::Blank,
        }
    }

    /// The kind of a `content` value.
    pub fn of_content(content: Option<&Value>) -> TextKind {
        match content {
            Some(Value::String(s)) => TextKind::of(s),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .fold(TextKind::Blank, |k, t| k.and(TextKind::of(t))),
            _ => TextKind::Blank,
        }
    }
}

/// What a message's `stopReason` is, as far as any filter asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopKind {
    #[default]
    Missing,
    Null,
    False,
    True,
    Zero,
    NonZero,
    /// An array or object.
    Compound,
    Stop,
    ToolUse,
    Error,
    Aborted,
    Length,
    EmptyString,
    OtherString,
}

impl StopKind {
    pub fn of(v: Option<&Value>) -> StopKind {
        match v {
            None => StopKind::Missing,
            Some(Value::Null) => StopKind::Null,
            Some(Value::Bool(false)) => StopKind::False,
            Some(Value::Bool(true)) => StopKind::True,
            Some(Value::Number(n)) => {
                if n.as_f64().is_some_and(|f| f != 0.0) {
                    StopKind::NonZero
                } else {
                    StopKind::Zero
                }
            }
            Some(Value::String(s)) => StopKind::of_str(s),
            Some(_) => StopKind::Compound,
        }
    }

    pub fn of_str(s: &str) -> StopKind {
        match s {
            "stop" => StopKind::Stop,
            "toolUse" => StopKind::ToolUse,
            "error" => StopKind::Error,
            "aborted" => StopKind::Aborted,
            "length" => StopKind::Length,
            "" => StopKind::EmptyString,
            _ => StopKind::OtherString,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct LabelFacts {
    pub label: Option<Box<str>>,
    pub target_id: Option<Box<str>>,
    pub name: Option<Box<str>>,
}

const KNOWN_TYPES: [&str; 14] = [
    "",
    "message",
    "label",
    "custom",
    "model_change",
    "thinking_level_change",
    "session_info",
    "compaction",
    "branch_summary",
    "custom_message",
    "context_compaction",
    "session_summary",
    "context_window_change",
    "session",
];
const KNOWN_ROLES: [&str; 7] = [
    "user",
    "assistant",
    "toolResult",
    "bashExecution",
    "custom",
    "branchSummary",
    "compactionSummary",
];

impl Facts {
    /// The reference: the facts read from a parsed object.
    pub(crate) fn of(raw: &Map<String, Value>) -> Facts {
        let s = |k: &str| raw.get(k).and_then(Value::as_str);
        let ty = s("type").unwrap_or("");
        let role = if ty == "message" {
            raw.get("message")
                .and_then(Value::as_object)
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str)
        } else {
            None
        };
        let strs = LabelFacts {
            label: s("label").map(Box::from),
            target_id: s("targetId").map(Box::from),
            name: s("name").map(Box::from),
        };
        let (text, stop) = match (role, raw.get("message")) {
            (Some("assistant"), Some(Value::Object(m))) => (
                TextKind::of_content(m.get("content")),
                StopKind::of(m.get("stopReason")),
            ),
            _ => (TextKind::Blank, StopKind::Missing),
        };
        Facts::new(ty, role, s("timestamp"), strs, text, stop)
    }

    /// Facts packed from their values.
    pub(crate) fn new(
        ty: &str,
        role: Option<&str>,
        timestamp: Option<&str>,
        strs: LabelFacts,
        text: TextKind,
        stop: StopKind,
    ) -> Facts {
        let mut rare = RareFacts {
            strs,
            ..RareFacts::default()
        };
        let ty = match KNOWN_TYPES.iter().position(|k| *k == ty) {
            Some(k) => k as u8,
            None => {
                rare.ty = ty.into();
                RARE
            }
        };
        let role = match role {
            None => NO_ROLE,
            Some(r) => match KNOWN_ROLES.iter().position(|k| *k == r) {
                Some(k) => k as u8,
                None => {
                    rare.role = r.into();
                    RARE
                }
            },
        };
        let mut stamp = [0u8; STAMP];
        let stamp_len = match timestamp {
            None => NO_STAMP,
            Some(t) if t.len() <= STAMP => {
                stamp[..t.len()].copy_from_slice(t.as_bytes());
                t.len() as u8
            }
            Some(t) => {
                rare.timestamp = t.into();
                RARE
            }
        };
        let is_rare = ty == RARE || role == RARE || stamp_len == RARE;
        Facts {
            stamp,
            stamp_len,
            ty,
            role,
            text,
            stop,
            rare: (is_rare || rare.strs != LabelFacts::default()).then(|| Box::new(rare)),
        }
    }

    /// `type` when it is a string, else empty.
    pub(crate) fn ty(&self) -> &str {
        match (KNOWN_TYPES.get(usize::from(self.ty)), &self.rare) {
            (Some(k), _) => k,
            (None, Some(r)) => &r.ty,
            (None, None) => "",
        }
    }

    /// `message.role` of a `message` entry whose message is an object.
    pub(crate) fn role(&self) -> Option<&str> {
        match (self.role, &self.rare) {
            (NO_ROLE, _) => None,
            (RARE, Some(r)) => Some(&r.role),
            (k, _) => KNOWN_ROLES.get(usize::from(k)).copied(),
        }
    }

    pub(crate) fn timestamp(&self) -> Option<&str> {
        match (self.stamp_len, &self.rare) {
            (NO_STAMP, _) => None,
            (RARE, Some(r)) => Some(&r.timestamp),
            // Copied from a `&str` whole: always UTF-8.
            (n, _) => std::str::from_utf8(self.stamp.get(..usize::from(n))?).ok(),
        }
    }

    /// `label`, `targetId` and `name`, when any is a string.
    pub(crate) fn strs(&self) -> Option<&LabelFacts> {
        self.rare.as_deref().map(|r| &r.strs)
    }
}
