//! The Atomic entries a translation writes, and the readers of JSON fields
//! both formats share.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::entry::parse_iso_ms;

pub(super) fn header(id: &str, timestamp: Option<&str>, cwd: &str) -> Map<String, Value> {
    let mut h = Map::new();
    h.insert("type".into(), "session".into());
    h.insert("version".into(), 3.into());
    h.insert("id".into(), id.into());
    if let Some(t) = timestamp {
        h.insert("timestamp".into(), t.into());
    }
    h.insert("cwd".into(), cwd.into());
    h
}

pub(super) fn entry(
    ty: &str,
    id: &str,
    parent: Option<&str>,
    timestamp: Option<&str>,
) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert("type".into(), ty.into());
    e.insert("id".into(), id.into());
    e.insert("parentId".into(), parent.map_or(Value::Null, Value::from));
    if let Some(t) = timestamp {
        e.insert("timestamp".into(), t.into());
    }
    e
}

pub(super) fn message(
    id: &str,
    parent: Option<&str>,
    timestamp: Option<&str>,
    mut msg: Map<String, Value>,
) -> Map<String, Value> {
    let mut e = entry("message", id, parent, timestamp);
    if let Some(ms) = timestamp.and_then(parse_iso_ms) {
        msg.entry("timestamp").or_insert(ms.into());
    }
    e.insert("message".into(), Value::Object(msg));
    e
}

pub(super) fn custom_message(
    id: &str,
    parent: Option<&str>,
    timestamp: Option<&str>,
    custom_type: &str,
    text: String,
    display: bool,
) -> Map<String, Value> {
    let mut e = entry("custom_message", id, parent, timestamp);
    e.insert("customType".into(), custom_type.into());
    e.insert("content".into(), text.into());
    e.insert("display".into(), display.into());
    e
}

pub(super) fn compaction(
    id: &str,
    parent: Option<&str>,
    timestamp: Option<&str>,
    summary: String,
    tokens_before: Option<Value>,
) -> Map<String, Value> {
    let mut e = entry("compaction", id, parent, timestamp);
    e.insert("summary".into(), summary.into());
    // Nothing from before the boundary is kept verbatim: what the model
    // sees afterwards starts with the summary (both agents replace the
    // history with it).
    e.insert("firstKeptEntryId".into(), Value::Null);
    if let Some(t) = tokens_before {
        e.insert("tokensBefore".into(), t);
    }
    e.insert("details".into(), json!({ "strategy": "verbatim-lines" }));
    e
}

pub(super) fn session_info(id: &str, parent: Option<&str>, name: &str) -> Map<String, Value> {
    let mut e = entry("session_info", id, parent, None);
    e.insert("name".into(), name.into());
    e
}

pub(super) fn str_of<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

/// The text of a content value: a string, or the text blocks of an array.
pub(super) fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            for b in blocks {
                let t = match b {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => str_of(o, "text"),
                    _ => None,
                };
                if let Some(t) = t {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(t);
                }
            }
            out
        }
        _ => String::new(),
    }
}

pub(super) fn text_block(text: impl Into<Value>) -> Value {
    json!({ "type": "text", "text": text.into() })
}

/// A `toolResult` message's body: the call it answers, the tool's name
/// from `tools` (the names the calls gave; `null` when the call was not
/// seen), its `content` and `isError`.
pub(super) fn tool_result(
    tools: &HashMap<String, String>,
    call: &str,
    content: Value,
    is_error: bool,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("role".into(), "toolResult".into());
    m.insert("toolCallId".into(), call.into());
    m.insert(
        "toolName".into(),
        tools.get(call).map_or(Value::Null, |n| n.clone().into()),
    );
    m.insert("content".into(), content);
    m.insert("isError".into(), is_error.into());
    m
}

/// The file's stem (`<session id>.jsonl` → the id).
pub(super) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// A text or image content block in Atomic's shape.
pub(super) fn block(b: &Value) -> Option<Value> {
    match b {
        Value::String(s) => Some(text_block(s.clone())),
        Value::Object(o) => match str_of(o, "type") {
            Some("text") => Some(text_block(o.get("text").cloned().unwrap_or(json!("")))),
            Some("image") => {
                let src = o.get("source").and_then(Value::as_object);
                Some(json!({
                    "type": "image",
                    "data": src.and_then(|s| s.get("data")).cloned().unwrap_or(json!("")),
                    "mimeType": src.and_then(|s| s.get("media_type")).cloned().unwrap_or(json!("")),
                }))
            }
            _ => None,
        },
        _ => None,
    }
}
