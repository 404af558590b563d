//! One parsed line of a session file, kept as raw JSON with loose accessors.
//!
//! Entries are stored as the JSON object they were read from, so unknown
//! types and fields survive untouched. Accessors are deliberately tolerant:
//! a field of the wrong type reads as absent instead of failing the line.

use serde_json::{Map, Value};

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

    /// SPEC §4: internal only with `internal: true` and a complete workflow marker.
    pub fn is_internal(&self) -> bool {
        is_internal_marker(&self.raw)
    }
}

/// The exact classification rule shared by the header and the fast scanner.
pub fn is_internal_marker(raw: &Map<String, Value>) -> bool {
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
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 1-based position among the parsed lines (the header is 0).
    pub index: usize,
    /// Entry id; a non-string id is kept as its JSON text.
    pub id: String,
    pub parent_id: Option<String>,
    pub raw: Map<String, Value>,
}

/// Converts an id-like JSON value to the string the tree keys on.
pub fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

impl Entry {
    pub fn new(index: usize, raw: Map<String, Value>) -> Entry {
        let id = raw
            .get("id")
            .and_then(id_text)
            .unwrap_or_else(|| format!("#{index}"));
        let parent_id = raw.get("parentId").and_then(id_text);
        Entry {
            index,
            id,
            parent_id,
            raw,
        }
    }

    pub fn entry_type(&self) -> &str {
        self.raw.get("type").and_then(Value::as_str).unwrap_or("")
    }

    pub fn timestamp(&self) -> Option<&str> {
        self.raw.get("timestamp").and_then(Value::as_str)
    }

    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.raw.get(key).and_then(Value::as_str)
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
        self.message()?.get("role").and_then(Value::as_str)
    }

    pub fn is_message_role(&self, role: &str) -> bool {
        self.role() == Some(role)
    }

    pub fn label_text(&self) -> Option<&str> {
        self.str_field("label")
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

/// Milliseconds since the epoch of an ISO 8601 timestamp.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|d| d.timestamp_millis())
}

/// ISO 8601 UTC with milliseconds, the shape every agent writes.
pub fn format_iso_ms(ms: i64) -> String {
    use chrono::{Datelike, Timelike};
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(d) if (0..=9999).contains(&d.year()) => format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            d.year(),
            d.month(),
            d.day(),
            d.hour(),
            d.minute(),
            d.second(),
            d.timestamp_subsec_millis()
        ),
        Some(d) => d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => "1970-01-01T00:00:00.000Z".to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_format_matches_chrono() {
        for ms in [
            0i64,
            1,
            999,
            1_767_225_600_123,
            253_402_300_799_999,
            253_402_300_800_000,
            -1,
            -62_167_219_200_000,
            -62_200_000_000_000,
        ] {
            let chrono = chrono::DateTime::from_timestamp_millis(ms)
                .unwrap()
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            assert_eq!(super::format_iso_ms(ms), chrono, "{ms}");
        }
    }
}
