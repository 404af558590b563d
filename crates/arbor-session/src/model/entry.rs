//! One parsed line of a session file, kept as raw JSON with loose accessors.
//!
//! Entries are stored as the JSON object they were read from, so unknown
//! types and fields survive untouched. Accessors are deliberately tolerant:
//! a field of the wrong type reads as absent instead of failing the line.

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::source::LineRef;

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
///
/// The facts the tree needs for every entry (id, parent, type, role,
/// timestamp, label fields) are read once when the file is loaded; the
/// whole JSON object (`raw`) is only parsed when something asks for it.
#[derive(Debug, PartialEq)]
pub struct Entry {
    /// 1-based position among the parsed lines (the header is 0).
    pub index: usize,
    /// Entry id; a non-string id is kept as its JSON text.
    pub id: String,
    pub parent_id: Option<String>,
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

/// The JSON object of an entry: held from the start (`Raw::from`), or kept
/// as its line of the file and parsed when first dereferenced. Reading it
/// through [`Raw::with`] does not keep the parsed object, so a pass over
/// every entry (search, `arbor show`) costs time, not memory.
pub struct Raw {
    line: Option<LineRef>,
    parsed: OnceLock<Box<Map<String, Value>>>,
}

/// Parses a line as the reader did when it accepted it.
fn parse_line(bytes: &[u8]) -> Map<String, Value> {
    let mut lossy = false;
    crate::reader::parse_object(bytes, &mut lossy).unwrap_or_default()
}

impl From<Map<String, Value>> for Raw {
    fn from(map: Map<String, Value>) -> Raw {
        Raw {
            line: None,
            parsed: OnceLock::from(Box::new(map)),
        }
    }
}

impl Raw {
    pub(crate) fn lazy(line: LineRef) -> Raw {
        Raw {
            line: Some(line),
            parsed: OnceLock::new(),
        }
    }

    /// Calls `f` with the object, parsing the line for this call only when
    /// it is not held already.
    pub fn with<R>(&self, f: impl FnOnce(&Map<String, Value>) -> R) -> R {
        match (self.parsed.get(), &self.line) {
            (Some(m), _) => f(m),
            (None, Some(line)) => f(&parse_line(&line.bytes())),
            (None, None) => f(&Map::new()),
        }
    }

    /// Where the entry's line is in the file (`None`: held parsed).
    pub(crate) fn line_range(&self) -> Option<(usize, usize)> {
        self.line.as_ref().map(|l| (l.start, l.end))
    }

    /// The entry's line as it is in the file, when the object is not
    /// held parsed (a cheap look at the bytes before parsing them).
    pub fn unparsed_line(&self) -> Option<impl std::ops::Deref<Target = [u8]>> {
        match (self.parsed.get(), &self.line) {
            (None, Some(line)) => Some(line.bytes()),
            _ => None,
        }
    }

    /// Whether the parsed object is held in memory.
    pub fn is_parsed(&self) -> bool {
        self.parsed.get().is_some()
    }
}

impl std::ops::Deref for Raw {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.parsed.get_or_init(|| {
            Box::new(match &self.line {
                Some(line) => parse_line(&line.bytes()),
                None => Map::new(),
            })
        })
    }
}

impl Raw {
    /// Not `Clone`: `entry.raw.clone()` keeps meaning a copy of the object.
    fn duplicate(&self) -> Raw {
        Raw {
            line: self.line.clone(),
            parsed: self.parsed.clone(),
        }
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

impl PartialEq for Raw {
    fn eq(&self, other: &Raw) -> bool {
        self.with(|a| other.with(|b| a == b))
    }
}

impl PartialEq<Map<String, Value>> for Raw {
    fn eq(&self, other: &Map<String, Value>) -> bool {
        self.with(|a| a == other)
    }
}

impl PartialEq<Raw> for Map<String, Value> {
    fn eq(&self, other: &Raw) -> bool {
        other == self
    }
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with(|m| m.fmt(f))
    }
}

impl Entry {
    pub fn new(index: usize, raw: Map<String, Value>) -> Entry {
        let id = raw
            .get("id")
            .and_then(id_text)
            .unwrap_or_else(|| format!("#{index}"));
        let parent_id = raw.get("parentId").and_then(id_text);
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
        id: Option<String>,
        parent_id: Option<String>,
        facts: Facts,
        line: LineRef,
    ) -> Entry {
        Entry {
            index,
            id: id.unwrap_or_else(|| format!("#{index}")),
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

    /// Calls `f` with the entry's object without keeping it parsed (see [`Raw::with`]).
    pub fn with_raw<R>(&self, f: impl FnOnce(&Map<String, Value>) -> R) -> R {
        self.raw.with(f)
    }

    pub fn entry_type(&self) -> &str {
        &self.facts.ty
    }

    pub fn timestamp(&self) -> Option<&str> {
        self.facts.timestamp.as_deref()
    }

    pub fn str_field(&self, key: &str) -> Option<&str> {
        let strs = self.facts.strs.as_deref();
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
        self.facts.role.as_deref()
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

/// Milliseconds since the epoch of an ISO 8601 timestamp.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    canonical_iso_ms(s).or_else(|| {
        chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|d| d.timestamp_millis())
    })
}

/// [`parse_iso_ms`] of the one shape agents write, `YYYY-MM-DDTHH:MM:SS.mmmZ`,
/// without chrono's general parser (a million entries' times are sorted on
/// every load); `None` for anything else, chrono's to decide.
fn canonical_iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    if b[16] != b':' || b[19] != b'.' || b[23] != b'Z' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        b[r].iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec, ms) = (num(11..13)?, num(14..16)?, num(17..19)?, num(20..23)?);
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days_in_month = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    // A leap second (:60) is chrono's to read.
    if d < 1 || d > days_in_month || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms)
}

/// ISO 8601 UTC with milliseconds, the shape every agent writes.
pub fn format_iso_ms(ms: i64) -> String {
    use chrono::{Datelike, Timelike};
    match chrono::DateTime::from_timestamp_millis(ms) {
        // Written digit by digit: `format!` was 5 % of a 100,000-row
        // `arbor list --json`.
        Some(d) if (0..=9999).contains(&d.year()) => {
            let mut b = *b"0000-00-00T00:00:00.000Z";
            let mut put = |at: usize, width: usize, mut v: u32| {
                for k in (at..at + width).rev() {
                    b[k] = b'0' + (v % 10) as u8;
                    v /= 10;
                }
            };
            put(0, 4, d.year() as u32);
            put(5, 2, d.month());
            put(8, 2, d.day());
            put(11, 2, d.hour());
            put(14, 2, d.minute());
            put(17, 2, d.second());
            put(20, 3, d.timestamp_subsec_millis());
            b.iter().map(|&c| c as char).collect()
        }
        Some(d) => d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        None => "1970-01-01T00:00:00.000Z".to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn formatted_times_are_chronos() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for k in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Years 0 to 9999 and a little past either end.
            let ms = (seed % 330_000_000_000_000) as i64 - 62_200_000_000_000;
            let ms = if k % 10 == 0 { ms % 86_400_000 } else { ms };
            let want = chrono::DateTime::from_timestamp_millis(ms)
                .expect("in chrono's range")
                .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                .to_string();
            assert_eq!(super::format_iso_ms(ms), want, "{ms}");
        }
    }

    /// The shortcut for the usual shape reads every string as chrono does
    /// (or leaves it to chrono).
    #[test]
    fn canonical_times_read_as_chrono_reads_them() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut cases: Vec<String> = vec![
            "2024-02-29T23:59:59.999Z".into(),
            "2023-02-29T00:00:00.000Z".into(),
            "1900-02-29T00:00:00.000Z".into(),
            "2000-02-29T00:00:00.000Z".into(),
            "2016-12-31T23:59:60.000Z".into(),
            "0000-01-01T00:00:00.000Z".into(),
            "9999-12-31T23:59:59.999Z".into(),
            "1969-12-31T23:59:59.999Z".into(),
            "2025-13-01T00:00:00.000Z".into(),
            "2025-00-10T00:00:00.000Z".into(),
            "2025-01-01t00:00:00.000z".into(),
            "2025-01-01T00:00:00.000+01:00".into(),
            "2025-01-01T24:00:00.000Z".into(),
            "2025-1-01T00:00:00.000Z".into(),
            "2025-01-01T00:00:00Z".into(),
        ];
        for _ in 0..20_000 {
            cases.push(format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                next(10_000),
                next(14),
                next(33),
                next(26),
                next(61),
                next(62),
                next(1000)
            ));
        }
        for c in cases {
            let chrono = chrono::DateTime::parse_from_rfc3339(&c)
                .ok()
                .map(|d| d.timestamp_millis());
            assert_eq!(super::parse_iso_ms(&c), chrono, "{c}");
            if let Some(fast) = super::canonical_iso_ms(&c) {
                assert_eq!(Some(fast), chrono, "{c}");
            }
        }
    }

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
