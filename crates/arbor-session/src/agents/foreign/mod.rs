//! Sessions of other agents — Claude Code and Codex — read as Atomic
//! version 3 sessions.
//!
//! A foreign file is translated, line by line, into the lines an Atomic
//! session would hold (a header, then `message`, `compaction`,
//! `custom_message` … entries with `id`/`parentId`), and the result goes
//! through arbor's own reader, list-row scanner, tree, context and exports.
//! So every screen and command works on them without knowing the format, and
//! the rules that differ live in `claude.rs` and `codex.rs`, each with where it
//! comes from.
//!
//! Lines that are not JSON objects are copied as they are, so the reader
//! counts them as skipped (or as a partial last line) exactly as in an
//! Atomic file.

mod atomic;
mod claude;
mod codex;
mod translator;

pub use translator::Translator;

use std::path::Path;

use serde_json::{Map, Value};

use crate::agent::Agent;
use crate::reader::{lines, parse_object};

/// Which foreign format a file's first JSON object is in, if any.
pub fn detect(obj: &Map<String, Value>) -> Option<Agent> {
    let ty = obj.get("type").and_then(Value::as_str);
    if obj.contains_key("payload")
        && matches!(
            ty,
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        )
    {
        return Some(Agent::Codex);
    }
    // The pre-wrapper rollout: a bare meta object first (with its
    // `instructions`, and no `version`, which tells it from an Atomic
    // header that lost its `type`).
    if ty.is_none()
        && obj.contains_key("id")
        && obj.contains_key("timestamp")
        && obj.contains_key("instructions")
        && !obj.contains_key("version")
    {
        return Some(Agent::Codex);
    }
    if obj.contains_key("sessionId") || obj.contains_key("parentUuid") || obj.contains_key("uuid") {
        return Some(Agent::Claude);
    }
    match ty {
        Some("summary" | "custom-title" | "file-history-snapshot" | "queue-operation") => {
            Some(Agent::Claude)
        }
        _ => None,
    }
}

/// Which foreign format `buf` is in, from its first JSON object.
pub(crate) fn detect_bytes(buf: &[u8]) -> Option<Agent> {
    lines(buf)
        .find_map(|(l, _)| parse_object(l, &mut false))
        .and_then(|o| detect(&o))
}

/// Which foreign format the file at `path` is in, from its first JSON
/// object (looked for in its first MiB, as [`detect_bytes`] looks in the
/// whole); `None` for Atomic files and anything unreadable.
pub fn detect_path(path: &Path) -> Option<Agent> {
    use std::io::{BufRead, Read};
    let (f, _) = crate::open::open_session_file(path).ok()?;
    let mut r = std::io::BufReader::new(f).take(1 << 20);
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if let Some(o) = parse_object(text, &mut false) {
            return detect(&o);
        }
    }
}

/// The Atomic version 3 lines of a foreign session file (an Atomic or pi
/// file is returned as it is).
pub(crate) fn translate(agent: Agent, path: &Path, buf: &[u8]) -> Vec<u8> {
    let Some(mut t) = Translator::new(agent, path) else {
        return buf.to_vec();
    };
    let mut out = Vec::with_capacity(buf.len());
    for (raw, complete) in lines(buf) {
        t.feed(raw, complete);
        t.drain_into(&mut out);
    }
    t.finish(&mut out);
    out
}

/// [`translate`] of an open file into `out`, in bounded memory: the input
/// is read a chunk at a time, a line longer than `max_line` is never held
/// (left out of the translation; its place and length are returned), and
/// the translation is written as it goes, holding only the last
/// [`WINDOW`](translator::WINDOW) entries (the ones a later line may still change).
pub fn translate_file(
    agent: Agent,
    path: &Path,
    file: &std::fs::File,
    max_line: usize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<Vec<(u64, u64)>> {
    use crate::chunked::{Forward, Line as Chunk};
    let len = file.metadata()?.len();
    let mut huge = Vec::new();
    let Some(mut t) = Translator::new(agent, path) else {
        return Ok(huge);
    };
    let mut fwd = Forward::new(file, 0, len, max_line);
    let mut buf = Vec::new();
    while let Some(line) = fwd.next_line()? {
        match line {
            Chunk::Huge { start, len } => huge.push((start, len)),
            Chunk::Text { bytes, newline, .. } => t.feed(&bytes, newline),
        }
        t.drain_into(&mut buf);
        if buf.len() >= 256 << 10 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    t.finish(&mut buf);
    out.write_all(&buf)?;
    Ok(huge)
}
