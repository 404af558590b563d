//! Loading a version 3 session fast, in little memory.
//!
//! Each line is crossed once by the validating skimmer of the list rows
//! (`jsonscan`), which captures only what the tree needs of every entry (id,
//! parent, type, role, timestamp, label fields, tool call names); the entry
//! keeps its line of the file and parses it when something asks for more.
//! A line the skimmer is unsure about (escaped keys, duplicated fields,
//! surrogate escapes, numbers that overflow, invalid UTF-8, deep nesting…)
//! is parsed by the reader's general path, which decides: so every entry's
//! facts are exactly what [`Entry::new`] reads from the parsed object (a
//! property test checks both agree). Chunks of lines are read on all cores.

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use crate::calls::ToolCalls;
use crate::entry::{id_text, Entry, EntryId, Facts, LabelFacts, StopKind, TextKind};
use crate::jsonscan::Skim;
use crate::reader::{lines, parse_object, Diagnostics};
use crate::source::{LineRef, Source};

/// A tool call of a line: id, name, and where its arguments are in the
/// line (`None`: no `arguments`).
type CallSpan = (String, String, Option<(usize, usize)>);

/// What one line gives: an entry's identity and facts, its tool calls.
pub(crate) struct Scanned {
    pub id: Option<EntryId>,
    pub parent_id: Option<EntryId>,
    pub facts: Facts,
    pub calls: Vec<CallSpan>,
}

const TOP: [&[u8]; 8] = [
    b"type",
    b"id",
    b"parentId",
    b"timestamp",
    b"message",
    b"label",
    b"targetId",
    b"name",
];
const MESSAGE: [&[u8]; 3] = [b"role", b"content", b"stopReason"];
const BLOCK: [&[u8]; 5] = [b"type", b"id", b"name", b"arguments", b"text"];

/// A JSON string literal's text (`None` for any other value).
fn string(span: &str) -> Option<Cow<'_, str>> {
    let inner = span.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(span).ok().map(Cow::Owned)
}

/// The [`TextKind`] of a JSON string literal: most texts start with a
/// plain visible character, which settles it without decoding.
fn text_of(span: &str) -> Option<TextKind> {
    let inner = span.strip_prefix('"')?.strip_suffix('"')?;
    for &b in inner.as_bytes() {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => continue,
            b'\\' | 0x80.. => break,
            _ => return Some(TextKind::Text),
        }
    }
    Some(TextKind::of(&string(span)?))
}

/// An id-like value as the tree keys on it (see [`id_text`]).
fn id_of(span: Option<&str>) -> Option<EntryId> {
    let span = span?;
    if span.starts_with('"') {
        return string(span).map(|s| EntryId::from(s.as_ref()));
    }
    serde_json::from_str::<Value>(span)
        .ok()
        .and_then(|v| id_text(&v))
        .map(EntryId::from)
}

/// The fast path for one line; `None` sends it to the general parser.
pub(crate) fn scan_line(line: &[u8]) -> Option<Scanned> {
    let text = simdutf8::basic::from_utf8(line).ok()?;
    let mut top: [Option<&str>; 8] = [None; 8];
    let mut msg: [Option<&str>; 3] = [None; 3];
    let mut message_is_object = false;
    let mut blocks: Vec<[Option<&str>; 5]> = Vec::new();
    let mut sk = Skim::new(text);
    sk.object_with(0, &TOP, &mut top, &mut |key, sk| {
        if key != b"message" || sk.peek_nonws() != Some(b'{') {
            return None;
        }
        message_is_object = true;
        Some(sk.object_with(1, &MESSAGE, &mut msg, &mut |key, sk| {
            if key != b"content" || sk.peek_nonws() != Some(b'[') {
                return None;
            }
            Some(sk.array_with(2, &mut |sk, depth| {
                if sk.peek_nonws() != Some(b'{') {
                    return sk.value(depth);
                }
                let mut b = [None; 5];
                sk.object(depth + 1, &BLOCK, &mut b)?;
                blocks.push(b);
                Some(())
            }))
        }))
    })?;
    if !sk.at_end() || sk.saw_big_number() {
        return None;
    }
    let [ty, id, parent_id, timestamp, _, label, target_id, name] = top;
    let ty = ty.and_then(string).unwrap_or(Cow::Borrowed(""));
    let role = if ty == "message" && message_is_object {
        msg[0].and_then(string)
    } else {
        None
    };
    let mut calls = Vec::new();
    let (mut text_kind, mut stop) = (TextKind::Blank, StopKind::Missing);
    if role.as_deref() == Some("assistant") {
        stop = match msg[2] {
            None => StopKind::Missing,
            Some(v) if v.starts_with('"') => StopKind::of_str(&string(v)?),
            Some(v) => StopKind::of(serde_json::from_str::<Value>(v).ok().as_ref()),
        };
        match msg[1] {
            Some(c) if c.starts_with('"') => text_kind = text_of(c)?,
            _ => {}
        }
        for [bty, bid, bname, args, btext] in &blocks {
            let bty = bty.and_then(string);
            if bty.as_deref() == Some("text") {
                if let Some(t) = btext.filter(|t| t.starts_with('"')) {
                    text_kind = text_kind.and(text_of(t)?);
                }
                continue;
            }
            if bty.as_deref() != Some("toolCall") {
                continue;
            }
            if let (Some(cid), Some(cname)) = (bid.and_then(string), bname.and_then(string)) {
                let span = args.map(|a| {
                    let start = a.as_ptr() as usize - text.as_ptr() as usize;
                    (start, start + a.len())
                });
                calls.push((cid.into_owned(), cname.into_owned(), span));
            }
        }
    }
    let boxed = |s: Option<&str>| s.and_then(string).map(|s| Box::from(s.as_ref()));
    let strs = LabelFacts {
        label: boxed(label),
        target_id: boxed(target_id),
        name: boxed(name),
    };
    Some(Scanned {
        id: id_of(id),
        parent_id: id_of(parent_id),
        facts: Facts::new(
            &ty,
            role.as_deref(),
            timestamp.and_then(string).as_deref(),
            strs,
            text_kind,
            stop,
        ),
        calls,
    })
}

/// The general path: the line parsed by the reader, and the same facts
/// read from the object.
fn scan_parsed(obj: &serde_json::Map<String, Value>, calls: &mut ToolCalls) -> Scanned {
    let facts = Facts::of(obj);
    if facts.role() == Some("assistant") {
        if let Some(Value::Object(m)) = obj.get("message") {
            calls.insert_from_message(m);
        }
    }
    Scanned {
        id: obj.get("id").and_then(id_text).map(EntryId::from),
        parent_id: obj.get("parentId").and_then(id_text).map(EntryId::from),
        facts,
        calls: Vec::new(),
    }
}

/// One chunk's entries (numbered from 1 within the chunk; `unnamed`: those
/// without an id, named after their final number later), calls and
/// diagnostics.
#[derive(Default)]
struct Chunk {
    entries: Vec<Entry>,
    unnamed: Vec<usize>,
    calls: ToolCalls,
    diagnostics: Diagnostics,
}

impl Chunk {
    fn push(&mut self, s: Scanned, line: LineRef) {
        if s.id.is_none() {
            self.unnamed.push(self.entries.len());
        }
        let index = self.entries.len() + 1;
        self.entries
            .push(Entry::from_line(index, s.id, s.parent_id, s.facts, line));
    }
}

/// The entries of `buf[from..to]`; `base`: where `buf` starts in the file.
fn load_chunk(src: &Arc<Source>, buf: &[u8], base: usize, from: usize, to: usize) -> Chunk {
    let mut c = Chunk::default();
    // Sized once: growing by doubling held up to twice the entries.
    c.entries
        .reserve_exact(memchr::memchr_iter(b'\n', &buf[from..to]).count() + 1);
    let line_ref = |start, end| LineRef {
        src: src.clone(),
        start,
        end,
    };
    let mut at = base + from;
    for (line, newline) in lines(&buf[from..to]) {
        let start = at;
        let end = start + line.len();
        at = end + usize::from(newline);
        if line.iter().all(u8::is_ascii_whitespace) {
            c.diagnostics.blank_lines += 1;
            continue;
        }
        if let Some(s) = scan_line(line) {
            for (id, name, span) in &s.calls {
                let span = span.map(|(a, b)| LineRef {
                    src: src.clone(),
                    start: start + a,
                    end: start + b,
                });
                c.calls.insert_span(id, name, span);
            }
            c.push(s, line_ref(start, end));
            continue;
        }
        let mut lossy = false;
        match parse_object(line, &mut lossy) {
            Some(obj) => {
                if lossy {
                    c.diagnostics.lossy_lines += 1;
                }
                let s = scan_parsed(&obj, &mut c.calls);
                c.push(s, line_ref(start, end));
            }
            None if newline => c.diagnostics.skipped_lines += 1,
            None => c.diagnostics.partial_tail = true,
        }
    }
    c
}

/// Splits `buf[from..to]` at line ends into about `n` pieces.
fn split(buf: &[u8], from: usize, to: usize, n: usize) -> Vec<(usize, usize)> {
    let step = ((to - from) / n.max(1)).max(1 << 20);
    let mut out = Vec::new();
    let mut a = from;
    while a < to {
        let want = (a + step).min(to);
        let b = if want >= to {
            to
        } else {
            memchr::memchr(b'\n', &buf[want..to]).map_or(to, |i| want + i + 1)
        };
        out.push((a, b));
        a = b;
    }
    out
}

/// The entries of `buf[from..to]` (the lines after the header of a
/// version 3 file, `buf` being `src`'s bytes), numbered from 1, with their
/// tool calls.
pub(crate) fn load_entries(
    src: &Arc<Source>,
    buf: &[u8],
    from: usize,
    to: usize,
    diagnostics: &mut Diagnostics,
) -> (Vec<Entry>, ToolCalls) {
    let mut entries = Vec::new();
    let mut calls = ToolCalls::default();
    let chunks = load_block(src, buf, 0, from, to);
    merge(chunks, &mut entries, &mut calls, diagnostics);
    (entries, calls)
}

/// The chunks of `buf[from..to]`, loaded on all cores.
fn load_block(src: &Arc<Source>, buf: &[u8], base: usize, from: usize, to: usize) -> Vec<Chunk> {
    let pieces = split(buf, from, to, rayon::current_num_threads() * 4);
    pieces
        .into_par_iter()
        .map(|(a, b)| load_chunk(src, buf, base, a, b))
        .collect()
}

/// Bytes read from the file at a time by [`load_entries_streamed`].
pub(crate) const READ_BLOCK: usize = 8 << 20;

/// [`load_entries`] of a version 3 file read from `src`'s file `block`
/// bytes at a time from `from` (the whole file never in memory: a big session costs
/// its entries' facts, not its size, and no page of it is written twice).
/// Returns where the file ended.
pub(crate) fn load_entries_streamed(
    src: &Arc<Source>,
    from: usize,
    block: usize,
    diagnostics: &mut Diagnostics,
) -> std::io::Result<(Vec<Entry>, ToolCalls, usize)> {
    let block = block.max(1);
    let mut entries = Vec::new();
    let mut calls = ToolCalls::default();
    // `buf` holds the file from `pos`: a line cut by the block's end is
    // carried over to the next block.
    let mut buf: Vec<u8> = Vec::with_capacity(block);
    let mut pos = from;
    let mut eof = false;
    while !eof {
        let have = buf.len();
        let want = (have + block).max(buf.capacity());
        buf.resize(want, 0);
        let n = src.read_into(&mut buf[have..], (pos + have) as u64)?;
        buf.truncate(have + n);
        eof = n == 0;
        // Whole lines only, but for the last block's tail.
        let end = match eof {
            true => buf.len(),
            false => match memchr::memrchr(b'\n', &buf) {
                Some(i) => i + 1,
                // A line longer than the block: read on, into room for
                // all of it made at once (grown by doubling, the copies
                // would hold the line two or three times over).
                None => {
                    let rest = line_rest(src, (pos + buf.len()) as u64)?;
                    buf.reserve_exact(rest.saturating_add(block));
                    continue;
                }
            },
        };
        let chunks = load_block(src, &buf, pos, 0, end);
        merge(chunks, &mut entries, &mut calls, diagnostics);
        buf.drain(..end);
        pos += end;
        if pos - from == end && !eof {
            // After the first block: room for the whole file's entries (and
            // tool calls) at that block's rate, so the array is not grown
            // (copied, its pages touched again) a dozen times, nor the map
            // rehashed.
            if let Some(len) = src.file_len() {
                let per = (end / entries.len().max(1)).max(1);
                let rest = (len as usize).saturating_sub(pos) / per;
                let calls_rest = rest * calls.len() / entries.len().max(1);
                entries.reserve(rest + rest / 16);
                calls.reserve(calls_rest + calls_rest / 16);
            }
        }
    }
    // Capacity never touched costs no memory; a big overshoot is let go.
    if entries.capacity() - entries.len() > entries.len() / 8 + 1024 {
        entries.shrink_to_fit();
    }
    Ok((entries, calls, pos))
}

/// Bytes from `at` to the end of its line (its newline included), or to
/// the end of the file; found a small block at a time, nothing kept.
fn line_rest(src: &Source, at: u64) -> std::io::Result<usize> {
    let mut probe = vec![0u8; 1 << 20];
    let mut off = at;
    loop {
        let n = src.read_into(&mut probe, off)?;
        if let Some(i) = memchr::memchr(b'\n', &probe[..n]) {
            return Ok((off - at) as usize + i + 1);
        }
        if n < probe.len() {
            return Ok((off - at) as usize + n);
        }
        off += n as u64;
    }
}

/// Appends loaded chunks (in file order) to `entries`, numbering them on.
fn merge(
    chunks: Vec<Chunk>,
    entries: &mut Vec<Entry>,
    calls: &mut ToolCalls,
    diagnostics: &mut Diagnostics,
) {
    let total: usize = chunks.iter().map(|c| c.entries.len()).sum();
    entries.reserve(total);
    for c in chunks {
        diagnostics.blank_lines += c.diagnostics.blank_lines;
        diagnostics.skipped_lines += c.diagnostics.skipped_lines;
        diagnostics.lossy_lines += c.diagnostics.lossy_lines;
        diagnostics.partial_tail |= c.diagnostics.partial_tail;
        calls.merge(c.calls);
        let base = entries.len();
        entries.extend(c.entries.into_iter().map(|mut e| {
            e.index += base;
            e
        }));
        for k in c.unnamed {
            let e = &mut entries[base + k];
            e.id = EntryId::from(format!("#{}", e.index));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(line: &str) -> Scanned {
        let obj = parse_object(line.as_bytes(), &mut false).unwrap();
        let mut calls = ToolCalls::default();
        scan_parsed(&obj, &mut calls)
    }

    /// Usual lines take the fast path and read as the reference does;
    /// unusual ones are handed over.
    #[test]
    fn fast_path_takes_usual_lines_only() {
        let usual = [
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hello"}}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","message":{"role":"assistant","content":[{"type":"text","text":"\n\u00a0"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"x"}}],"stopReason":"toolUse","usage":{"cost":{"total":1.5e-7}}}}"#,
            r#"{"type":"message","id":"a3","parentId":"a2","message":{"role":"assistant","content":" \u0085 ","stopReason":null}}"#,
            r#"{"type":"label","id":7,"parentId":{"x":1},"targetId":"a1","label":"start","name":5}"#,
            r#"{"type":"session_info","id":"a\"5","name":"  named  "}"#,
            r#"{"id":"x","message":{"role":"user"}}"#,
        ];
        for l in usual {
            let fast = scan_line(l.as_bytes()).unwrap_or_else(|| panic!("slow: {l}"));
            let slow = reference(l);
            assert_eq!(fast.id, slow.id, "{l}");
            assert_eq!(fast.parent_id, slow.parent_id, "{l}");
            assert_eq!(fast.facts, slow.facts, "{l}");
        }
        assert_eq!(
            scan_line(usual[2].as_bytes()).unwrap().facts.text,
            TextKind::Unsure
        );
        let unusual = [
            r#"{"\u0069d":"a1"}"#,
            r#"{"id":"a1","id":"a2"}"#,
            r#"{"type":"message","message":{"role":"user","role":"assistant"}}"#,
            r#"{"id":"a1","big":1e400}"#,
            r#"{"id":"a\ud83d\ude00"}"#,
            "\u{feff}{\"id\":\"a1\"}",
            r#"{"id":"a1"} x"#,
        ];
        for l in unusual {
            assert!(scan_line(l.as_bytes()).is_none(), "fast: {l}");
        }
    }
}
