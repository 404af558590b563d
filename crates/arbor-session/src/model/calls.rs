//! Tool calls by id, to name a tool result after the call that made it.
//!
//! Built once when a session is loaded, from the lines as they are read:
//! the arguments stay in the file's bytes and are only decoded for the rows
//! that show them.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::entry::Entry;
use crate::source::LineRef;
use arbor_util::hash::FxBuild;

/// A call's arguments: missing (`null`), a value held, or a span of a line
/// that was checked to decode exactly as the whole line does.
#[derive(Clone)]
enum Args {
    Null,
    Value(Box<Value>),
    Span(LineRef),
}

#[derive(Clone)]
struct Call {
    name: Box<str>,
    args: Args,
}

/// Tool calls by id. A later call with the same id replaces an earlier one
/// (file order, and block order within a message).
#[derive(Clone, Default)]
pub struct ToolCalls {
    /// FxHash: every call of a big session is hashed on load, twice (each
    /// chunk's map, then the merge).
    map: HashMap<Box<str>, Call, FxBuild>,
}

impl std::fmt::Debug for ToolCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ToolCalls({} calls)", self.map.len())
    }
}

impl ToolCalls {
    /// The tool name and arguments of call `id`.
    pub fn get(&self, id: &str) -> Option<(&str, Cow<'_, Value>)> {
        let c = self.map.get(id)?;
        let args = match &c.args {
            Args::Null => Cow::Owned(Value::Null),
            Args::Value(v) => Cow::Borrowed(&**v),
            Args::Span(s) => Cow::Owned(
                std::str::from_utf8(&s.bytes())
                    .ok()
                    .and_then(|t| serde_json::from_str(t).ok())
                    .unwrap_or(Value::Null),
            ),
        };
        Some((&c.name, args))
    }

    /// Adds `later`'s calls, which replace these on equal ids.
    pub(crate) fn merge(&mut self, later: ToolCalls) {
        if self.map.is_empty() {
            self.map = later.map;
        } else {
            self.map.extend(later.map);
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Room for `more` calls (a big session's map is not grown step by step).
    pub(crate) fn reserve(&mut self, more: usize) {
        self.map.reserve(more);
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Records a call whose arguments are the bytes `span` (`None`: no
    /// `arguments` key).
    pub(crate) fn insert_span(&mut self, id: &str, name: &str, span: Option<LineRef>) {
        let args = match span {
            Some(s) => Args::Span(s),
            None => Args::Null,
        };
        self.map.insert(
            id.into(),
            Call {
                name: name.into(),
                args,
            },
        );
    }

    /// Records a call whose arguments are `args`.
    pub(crate) fn insert_value(&mut self, id: &str, name: &str, args: Value) {
        self.map.insert(
            id.into(),
            Call {
                name: name.into(),
                args: Args::Value(Box::new(args)),
            },
        );
    }

    /// Records the calls of a parsed assistant message object (`message`'s
    /// `content` blocks of type `toolCall` with a string id and name).
    pub(crate) fn insert_from_message(&mut self, message: &serde_json::Map<String, Value>) {
        let Some(Value::Array(blocks)) = message.get("content") else {
            return;
        };
        for b in blocks {
            if b.get("type").and_then(Value::as_str) != Some("toolCall") {
                continue;
            }
            if let (Some(id), Some(name)) = (
                b.get("id").and_then(Value::as_str),
                b.get("name").and_then(Value::as_str),
            ) {
                let args = match b.get("arguments") {
                    None => Args::Null,
                    Some(v) => Args::Value(Box::new(v.clone())),
                };
                self.map.insert(
                    id.into(),
                    Call {
                        name: name.into(),
                        args,
                    },
                );
            }
        }
    }

    /// The calls of `entries`, reading each assistant message (the reference
    /// the loader's index is checked against).
    pub fn from_entries(entries: &[Entry]) -> ToolCalls {
        let mut calls = ToolCalls::default();
        for e in entries {
            if e.role() != Some("assistant") {
                continue;
            }
            e.with_raw(|raw| {
                if let Some(Value::Object(m)) = raw.get("message") {
                    calls.insert_from_message(m);
                }
            });
        }
        calls
    }

    /// Every call as `(id, name, arguments)`, sorted by id (for tests).
    pub fn to_sorted_vec(&self) -> Vec<(String, String, Value)> {
        let mut v: Vec<(String, String, Value)> = self
            .map
            .keys()
            .filter_map(|id| {
                let (name, args) = self.get(id)?;
                Some((id.to_string(), name.to_string(), args.into_owned()))
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}
