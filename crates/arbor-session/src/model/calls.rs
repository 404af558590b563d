//! Tool calls by id, to name a tool result after the call that made it.
//!
//! Built once when a session is loaded, from the lines as they are read:
//! the arguments stay in the file's bytes and are only decoded for the rows
//! that show them.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use std::sync::Arc;

use crate::entry::{Entry, EntryId};
use crate::source::{LineRef, Source};
use arbor_util::hash::FxBuild;

/// A call's arguments: missing (`null`), a value held, or a span of a line
/// that was checked to decode exactly as the whole line does: bytes
/// `start..start + len` of the calls' source (see [`ToolCalls::src`]), or
/// of another source's line (never, but kept correct).
#[derive(Clone)]
enum Args {
    Null,
    Value(Box<Value>),
    Span { start: u64, len: u32 },
    Line(Box<LineRef>),
}

/// 24 bytes: a session of a million entries holds a quarter of a million
/// calls (a name and a source handle in each took 64 a call).
#[derive(Clone)]
struct Call {
    /// Position in [`ToolCalls::names`].
    name: u32,
    args: Args,
}

/// Tool calls by id. A later call with the same id replaces an earlier one
/// (file order, and block order within a message).
#[derive(Clone, Default)]
pub struct ToolCalls {
    /// FxHash: every call of a big session is hashed on load, twice (each
    /// chunk's map, then the merge). Keyed by an [`EntryId`]: a call id
    /// of up to 14 bytes is held inline.
    map: HashMap<EntryId, Call, FxBuild>,
    /// The tool names, each once (a session calls a few tools many times).
    names: Vec<Box<str>>,
    /// The source the spans are in (the session's file).
    src: Option<Arc<Source>>,
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
        let decode = |bytes: &[u8]| {
            std::str::from_utf8(bytes)
                .ok()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(Value::Null)
        };
        let args = match &c.args {
            Args::Null => Cow::Owned(Value::Null),
            Args::Value(v) => Cow::Borrowed(&**v),
            Args::Span { start, len } => {
                let start = *start as usize;
                Cow::Owned(match &self.src {
                    Some(src) => decode(&src.read(start, start + *len as usize)),
                    None => Value::Null,
                })
            }
            Args::Line(l) => Cow::Owned(decode(&l.bytes())),
        };
        let name = self.names.get(c.name as usize).map_or("", |n| &**n);
        Some((name, args))
    }

    /// The position of `name` in `names`, added when not among the first
    /// [`SHARED_NAMES`] (a hostile file's thousands of names each cost a
    /// slot, never a quadratic search).
    fn name_at(&mut self, name: &str) -> u32 {
        const SHARED_NAMES: usize = 256;
        let known = &self.names[..self.names.len().min(SHARED_NAMES)];
        match known.iter().position(|n| **n == *name) {
            Some(k) => k as u32,
            None => {
                self.names.push(name.into());
                (self.names.len() - 1) as u32
            }
        }
    }

    /// Adds `later`'s calls, which replace these on equal ids.
    pub(crate) fn merge(&mut self, later: ToolCalls) {
        if self.map.is_empty() && self.names.is_empty() {
            *self = later;
            return;
        }
        let ToolCalls { map, names, src } = later;
        let renamed: Vec<u32> = names.iter().map(|n| self.name_at(n)).collect();
        for (id, mut call) in map {
            call.name = renamed.get(call.name as usize).copied().unwrap_or(0);
            if let Args::Span { start, len } = call.args {
                call.args = self.span_args(src.as_ref(), start, len);
            }
            self.map.insert(id, call);
        }
    }

    /// Arguments at `start..start + len` of `src`: a span of this map's
    /// source, or a line of its own.
    fn span_args(&mut self, src: Option<&Arc<Source>>, start: u64, len: u32) -> Args {
        let Some(src) = src else {
            return Args::Null;
        };
        match &self.src {
            None => self.src = Some(src.clone()),
            Some(mine) if Arc::ptr_eq(mine, src) => {}
            Some(_) => {
                return Args::Line(Box::new(LineRef {
                    src: src.clone(),
                    start: start as usize,
                    end: start as usize + len as usize,
                }))
            }
        }
        Args::Span { start, len }
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
            Some(s) => match u32::try_from(s.end - s.start) {
                Ok(len) => self.span_args(Some(&s.src), s.start as u64, len),
                Err(_) => Args::Line(Box::new(s)),
            },
            None => Args::Null,
        };
        let name = self.name_at(name);
        self.map.insert(id.into(), Call { name, args });
    }

    /// Records a call whose arguments are `args`.
    pub(crate) fn insert_value(&mut self, id: &str, name: &str, args: Value) {
        let name = self.name_at(name);
        self.map.insert(
            id.into(),
            Call {
                name,
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
                let name = self.name_at(name);
                self.map.insert(id.into(), Call { name, args });
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
