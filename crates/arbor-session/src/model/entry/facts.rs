//! What every entry answers without parsing its line: its type, role,
//! the kind of its text and stop reason, and the label it sets.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// What every entry answers without parsing its line: exactly what the
/// accessors of the same names read from the parsed object.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Facts {
    /// `type` when it is a string, else empty.
    pub ty: Cow<'static, str>,
    /// `message.role` of a `message` entry whose message is an object.
    pub role: Option<Cow<'static, str>>,
    pub timestamp: Option<Box<str>>,
    /// `label`, `targetId` and `name`, when any is a string.
    pub strs: Option<Box<LabelFacts>>,
    /// Of an assistant message: its text and how it stopped.
    pub text: TextKind,
    pub stop: StopKind,
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

/// A shared copy for the common spellings, an allocation for the others.
pub(crate) fn interned(s: &str, known: &[&'static str]) -> Cow<'static, str> {
    match known.iter().find(|k| **k == s) {
        Some(k) => Cow::Borrowed(k),
        None => Cow::Owned(s.to_string()),
    }
}

pub(crate) fn intern_type(s: &str) -> Cow<'static, str> {
    interned(s, &KNOWN_TYPES)
}

pub(crate) fn intern_role(s: &str) -> Cow<'static, str> {
    interned(s, &KNOWN_ROLES)
}

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
                .map(intern_role)
        } else {
            None
        };
        let strs = LabelFacts {
            label: s("label").map(Box::from),
            target_id: s("targetId").map(Box::from),
            name: s("name").map(Box::from),
        };
        let (text, stop) = match (role.as_deref(), raw.get("message")) {
            (Some("assistant"), Some(Value::Object(m))) => (
                TextKind::of_content(m.get("content")),
                StopKind::of(m.get("stopReason")),
            ),
            _ => (TextKind::Blank, StopKind::Missing),
        };
        Facts {
            ty: intern_type(ty),
            role,
            timestamp: s("timestamp").map(Box::from),
            strs: (strs != LabelFacts::default()).then(|| Box::new(strs)),
            text,
            stop,
        }
    }
}
