//! The streaming scanner that builds a row line by line, resumable on
//! appended lines.

use std::path::Path;

use serde_json::{Map, Value};

use crate::entry::{format_iso_ms, is_internal_marker, number_ms, parse_iso_ms, sane_ms};
use crate::extras::{apply_label, raw_id_hash, LineSource, Offsets};
use crate::line_skim::LineSpans;
use crate::reader::{parse_json_lenient, parse_object, too_deep};

use super::figures::usage_figures;
use super::probe::{fields_of, probe_fast, shallow_fields, LineFields, LineProbe};
use super::raw::{raw_content_text, raw_first_line, raw_id, raw_is, raw_str};
use super::SessionInfo;

/// Streaming extraction of a `SessionInfo`, resumable on appended lines.
#[derive(Clone)]
pub struct InfoScanner {
    info: SessionInfo,
    pub(super) header_seen: bool,
    pub(super) failed: Option<&'static str>,
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
                let ms = parse_iso_ms(s);
                // Normalized to UTC like the agents' `toISOString()`.
                i.created = ms.map(format_iso_ms).unwrap_or_else(|| s.clone());
                i.header_ms = ms.and_then(sane_ms);
            }
            Some(Value::Number(n)) => {
                if let Some(ms) = n.as_f64().and_then(number_ms) {
                    i.created = format_iso_ms(ms);
                    i.header_ms = Some(ms);
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
                .and_then(number_ms)
                .or_else(|| {
                    raw_str(p.timestamp)
                        .as_deref()
                        .and_then(parse_iso_ms)
                        .and_then(sane_ms)
                });
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
                // A fork copies its parent's replies, times and all; the
                // ones it made itself come after its header's time.
                let copied = i.parent_session_path.is_some()
                    && matches!((ms, i.header_ms), (Some(m), Some(h)) if m < h);
                i.usage
                    .add(model.as_deref().unwrap_or(""), at, figures.summed(), copied);
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
            // As the tree applies labels (docs/spec.md §3): a string target, a
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
