//! One parsed line of a session file, kept as raw JSON with loose accessors.
//!
//! Entries are stored as the JSON object they were read from, so unknown
//! types and fields survive untouched. Accessors are deliberately tolerant:
//! a field of the wrong type reads as absent instead of failing the line.

mod entry_id;
mod facts;
mod raw;
mod time;

pub use entry_id::EntryId;
pub(crate) use facts::{Facts, LabelFacts};
pub use facts::{StopKind, TextKind};
pub use raw::Raw;
pub use time::{format_iso_ms, number_ms, parse_iso_ms, sane_ms, LATEST_SANE_MS};

use std::borrow::Cow;

use crate::source::LineRef;

use serde_json::{Map, Value};

use raw::parse_line;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub raw: Map<String, Value>,
    pub id: String,
    pub version: u32,
}

impl Header {
    /// Builds a header from a parsed object, if it is one (`type: "session"`
    /// with a string `id`).
    pub fn from_object(raw: Map<String, Value>) -> Option<Header> {
        if raw.get("type").and_then(Value::as_str) != Some("session") {
            return None;
        }
        let id = raw.get("id")?.as_str()?.to_string();
        let version = raw
            .get("version")
            .and_then(Value::as_u64)
            .map(|v| v.min(u32::MAX as u64) as u32)
            .unwrap_or(1);
        Some(Header { raw, id, version })
    }

    pub fn cwd(&self) -> Option<&str> {
        self.raw.get("cwd").and_then(Value::as_str)
    }

    pub fn timestamp(&self) -> Option<&str> {
        self.raw.get("timestamp").and_then(Value::as_str)
    }

    pub fn parent_session(&self) -> Option<&str> {
        self.raw.get("parentSession").and_then(Value::as_str)
    }

    /// docs/spec.md §4: internal only with `internal: true` and a complete workflow marker.
    pub fn is_internal(&self) -> bool {
        is_internal_marker(&self.raw)
    }
}

/// The exact classification rule shared by the header and the fast scanner.
pub(crate) fn is_internal_marker(raw: &Map<String, Value>) -> bool {
    if raw.get("internal") != Some(&Value::Bool(true)) {
        return false;
    }
    let Some(wf) = raw.get("workflow").and_then(Value::as_object) else {
        return false;
    };
    ["runId", "stageId", "stageName"].iter().all(|k| {
        wf.get(*k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.trim().is_empty())
    })
}

/// One entry (any line after the header that parsed as a JSON object).
///
/// The facts the tree needs for every entry (id, parent, type, role,
/// timestamp, label fields) are read once when the file is loaded; the
/// whole JSON object (`raw`) is only parsed when something asks for it.
#[derive(Debug, PartialEq)]
pub struct Entry {
    /// 1-based position among the parsed lines (the header is 0).
    pub index: usize,
    /// Entry id; a non-string id is kept as its JSON text. Held inline
    /// when it is short (Atomic's are 8 bytes), so that a million entries
    /// do not make two million small allocations.
    pub id: EntryId,
    pub parent_id: Option<EntryId>,
    pub raw: Raw,
    facts: Facts,
}

/// Converts an id-like JSON value to the string the tree keys on.
pub fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Clone for Entry {
    fn clone(&self) -> Entry {
        Entry {
            index: self.index,
            id: self.id.clone(),
            parent_id: self.parent_id.clone(),
            raw: self.raw.duplicate(),
            facts: self.facts.clone(),
        }
    }
}

impl Entry {
    pub fn new(index: usize, raw: Map<String, Value>) -> Entry {
        let id = raw
            .get("id")
            .and_then(id_text)
            .map_or_else(|| EntryId::from(format!("#{index}")), EntryId::from);
        let parent_id = raw.get("parentId").and_then(id_text).map(EntryId::from);
        let facts = Facts::of(&raw);
        Entry {
            index,
            id,
            parent_id,
            raw: Raw::from(raw),
            facts,
        }
    }

    /// An entry whose object stays in the file's bytes until needed; `id`,
    /// `parent_id` and `facts` must be what [`Entry::new`] reads from it.
    pub(crate) fn from_line(
        index: usize,
        id: Option<EntryId>,
        parent_id: Option<EntryId>,
        facts: Facts,
        line: LineRef,
    ) -> Entry {
        Entry {
            index,
            id: id.unwrap_or_else(|| EntryId::from(format!("#{index}"))),
            parent_id,
            raw: Raw::lazy(line),
            facts,
        }
    }

    /// This entry with its object parsed: itself when it already is, else
    /// a copy that holds the object, so that a pass over many entries
    /// (rendering rows, building search text) does not keep them all parsed.
    pub fn parsed(&self) -> Cow<'_, Entry> {
        if self.raw.is_parsed() {
            return Cow::Borrowed(self);
        }
        let e = self.clone();
        let _ = &*e.raw;
        Cow::Owned(e)
    }

    /// [`Entry::parsed`] from the bytes of its line, read already (a pass
    /// over many entries reads their lines a block at a time).
    pub(crate) fn parsed_from(&self, line: &[u8]) -> Entry {
        let mut e = self.clone();
        if !e.raw.is_parsed() {
            e.raw = Raw::from(parse_line(line));
        }
        e
    }

    /// The length of the entry's line when it is too long to read (the
    /// session's lines were limited: see [`crate::Session::limit_lines`]);
    /// the entry then reads as an empty object.
    pub fn unread_len(&self) -> Option<usize> {
        self.raw.unread_len()
    }

    /// Calls `f` with the entry's object without keeping it parsed (see [`Raw::with`]).
    pub fn with_raw<R>(&self, f: impl FnOnce(&Map<String, Value>) -> R) -> R {
        self.raw.with(f)
    }

    pub fn entry_type(&self) -> &str {
        self.facts.ty()
    }

    pub fn timestamp(&self) -> Option<&str> {
        self.facts.timestamp()
    }

    pub fn str_field(&self, key: &str) -> Option<&str> {
        let strs = self.facts.strs();
        match key {
            "timestamp" => self.timestamp(),
            "label" => strs.and_then(|s| s.label.as_deref()),
            "targetId" => strs.and_then(|s| s.target_id.as_deref()),
            "name" => strs.and_then(|s| s.name.as_deref()),
            _ => self.raw.get(key).and_then(Value::as_str),
        }
    }

    /// The `message` object of a message entry.
    pub fn message(&self) -> Option<&Map<String, Value>> {
        if self.entry_type() != "message" {
            return None;
        }
        self.raw.get("message").and_then(Value::as_object)
    }

    /// The role of a message entry (`hookMessage` already migrated to `custom`).
    pub fn role(&self) -> Option<&str> {
        self.facts.role()
    }

    pub fn is_message_role(&self, role: &str) -> bool {
        self.role() == Some(role)
    }

    pub fn label_text(&self) -> Option<&str> {
        self.str_field("label")
    }

    /// Of an assistant message: whether its content has non-blank text
    /// (`Blank` for any other entry).
    pub fn assistant_text(&self) -> TextKind {
        self.facts.text
    }

    /// Of an assistant message: its `stopReason` (`Missing` for any other entry).
    pub fn assistant_stop(&self) -> StopKind {
        self.facts.stop
    }
}

/// Text of a `content` value: a string, or the text blocks joined by `sep`.
pub fn content_text(content: Option<&Value>, sep: &str) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            let mut first = true;
            for b in blocks {
                if b.get("type").and_then(Value::as_str) == Some("text") {
                    if let Some(t) = b.get("text").and_then(Value::as_str) {
                        if !first {
                            out.push_str(sep);
                        }
                        out.push_str(t);
                        first = false;
                    }
                }
            }
            out
        }
        _ => String::new(),
    }
}
