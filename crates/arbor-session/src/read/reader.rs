//! The tolerant reader: one JSON object per line, never a panic.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::calls::ToolCalls;
use crate::entry::{Entry, Header};
use crate::ids::legacy_entry_id;
use crate::source::Source;

/// Why a file could not be read as a session.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is a directory, not a session file")]
    IsDirectory { path: PathBuf },
    #[error("{path} is {kind}")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{path} is not a session file: {reason}")]
    NotASession { path: PathBuf, reason: &'static str },
}

/// What the reader skipped or repaired, for diagnostics rows.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Diagnostics {
    /// Blank lines.
    pub blank_lines: usize,
    /// Lines that are not JSON objects (garbage, scalars, `null`, too deep).
    pub skipped_lines: usize,
    /// Lines that were not valid UTF-8 and were decoded with replacement characters.
    pub lossy_lines: usize,
    /// The last line has no newline and does not parse: probably a writer mid-append.
    pub partial_tail: bool,
}

impl Diagnostics {
    pub fn is_clean(&self) -> bool {
        self.skipped_lines == 0 && self.lossy_lines == 0 && !self.partial_tail
    }

    /// Lines not used as entries, the count shown to users.
    pub fn skipped(&self) -> usize {
        self.skipped_lines + usize::from(self.partial_tail)
    }

    /// What is wrong with the file, in words (`None` when nothing is): the
    /// lines skipped, a last line cut short, and lines that were read but
    /// are not valid UTF-8 (a file with only those has nothing skipped).
    pub fn describe(&self) -> Option<String> {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        let mut parts = Vec::new();
        if self.skipped_lines > 0 {
            let n = self.skipped_lines;
            parts.push(format!("{n} unreadable line{} skipped", s(n)));
        }
        if self.partial_tail {
            parts.push("last line incomplete (still being written?), skipped".to_string());
        }
        if self.lossy_lines > 0 {
            let n = self.lossy_lines;
            parts.push(format!(
                "{n} line{} not valid UTF-8 (invalid bytes shown as \u{fffd})",
                s(n)
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// [`Diagnostics::describe`] for a header: a few words.
    pub fn brief(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.skipped() > 0 {
            parts.push(format!("{} skipped", self.skipped()));
        }
        if self.lossy_lines > 0 {
            parts.push(format!("{} not UTF-8", self.lossy_lines));
        }
        (!parts.is_empty()).then(|| format!("lines: {}", parts.join(", ")))
    }
}

/// A whole session file, migrated in memory to version 3.
#[derive(Debug, Clone)]
pub struct Session {
    pub path: PathBuf,
    pub header: Header,
    /// The version the file is written in (1, 2 or 3); entries are always v3 shaped.
    pub file_version: u32,
    pub entries: Vec<Entry>,
    /// The tool calls of `entries`, by id.
    pub calls: ToolCalls,
    pub diagnostics: Diagnostics,
    /// Bytes of the file that were read.
    pub bytes: u64,
    /// Where the entries' lines are (a version 3 file's).
    pub(crate) source: Option<Arc<Source>>,
    /// Another agent's file, read translated (`session::foreign`): arbor
    /// never writes into it.
    pub foreign: Option<crate::agent::Agent>,
}

impl Session {
    pub fn id(&self) -> &str {
        &self.header.id
    }

    pub fn needs_migration(&self) -> bool {
        self.file_version < 3
    }

    /// Lets go of the file's bytes: entries read their lines from the file
    /// when asked (a long-lived session then costs its facts, not its
    /// size). False when there is no file to read from.
    pub fn release_bytes(&self) -> bool {
        self.source.as_ref().is_some_and(|s| s.release())
    }

    /// Reads the lines of `entries` (in file order) a block at a time and
    /// calls `f` with each entry parsed.
    pub fn for_each_parsed(&self, entries: &[Entry], mut f: impl FnMut(&Entry)) {
        self.for_each_line(entries, |e, line| match line {
            Some(l) => f(&e.parsed_from(l)),
            None => f(&e.parsed()),
        });
    }

    /// Reads the lines of `entries` (in file order) a block at a time and
    /// calls `f` with each entry and its line's bytes; `None` for an entry
    /// held parsed (or whose line could not be read: read it through
    /// [`Entry::with_raw`]).
    pub fn for_each_line(&self, entries: &[Entry], mut f: impl FnMut(&Entry, Option<&[u8]>)) {
        let span = entries.iter().filter_map(|e| e.raw.line_range()).fold(
            None,
            |acc: Option<(usize, usize)>, (s, e)| {
                Some(acc.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
            },
        );
        let (Some(src), Some((from, to))) = (&self.source, span) else {
            entries.iter().for_each(|e| f(e, None));
            return;
        };
        let block = src.read(from, to);
        for e in entries {
            match e.raw.line_range() {
                Some((s, end)) if end <= from + block.len() && !e.raw.is_parsed() => {
                    f(e, Some(&block[s - from..end - from]))
                }
                _ => f(e, None),
            }
        }
    }

    /// Calls `f` with each entry of `idx` parsed, in that order, reading
    /// the lines of a run of entries that lie close together in the file
    /// (later and later, with little else between) a block at a time,
    /// and any other entry's line alone.
    pub fn for_each_parsed_at(&self, idx: &[usize], mut f: impl FnMut(&Entry)) {
        const GAP: usize = 64 << 10;
        const MAX: usize = 8 << 20;
        let entries = &self.entries;
        let Some(src) = &self.source else {
            idx.iter().for_each(|&i| f(&entries[i].parsed()));
            return;
        };
        let mut k = 0;
        while k < idx.len() {
            let first = &entries[idx[k]];
            let Some((from, mut to)) = first.raw.line_range() else {
                f(&first.parsed());
                k += 1;
                continue;
            };
            let mut used = to - from;
            let mut j = k + 1;
            while let Some((s, e)) = idx.get(j).and_then(|&i| entries[i].raw.line_range()) {
                let span = e.saturating_sub(from);
                if s < to || span > MAX || span > 2 * (used + (e - s)) + GAP {
                    break;
                }
                used += e - s;
                to = e;
                j += 1;
            }
            if j == k + 1 {
                f(&first.parsed());
                k += 1;
                continue;
            }
            let block = src.read(from, to);
            for &i in &idx[k..j] {
                let e = &entries[i];
                match e.raw.line_range() {
                    Some((s, end)) if end <= from + block.len() => {
                        f(&e.parsed_from(&block[s - from..end - from]))
                    }
                    _ => f(&e.parsed()),
                }
            }
            k = j;
        }
    }
}

/// Splits a buffer into lines, tolerating a missing final newline.
/// Returns `(line, ended_with_newline)`.
pub fn lines(buf: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                Some((line, true))
            }
            None => {
                let line = rest;
                rest = &[];
                Some((line, false))
            }
        }
    })
}

/// Parses one line to a JSON object; `None` when it is not one.
pub fn parse_object(line: &[u8], lossy: &mut bool) -> Option<Map<String, Value>> {
    let text: std::borrow::Cow<str> = match std::str::from_utf8(line) {
        Ok(s) => s.into(),
        Err(_) => {
            *lossy = true;
            String::from_utf8_lossy(line)
        }
    };
    let text = text.trim_start_matches('\u{feff}');
    match parse_json_lenient(text) {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Deepest nesting arbor parses. JavaScript readers accept any depth; this
/// bound keeps a hostile line from exhausting memory or the stack. It is
/// the one rule of every reader: a deeper line is unreadable to the tree
/// reader and to the list-row scanner alike (see [`too_deep`]).
pub const MAX_DEPTH: usize = 20_000;

/// Whether `line` nests arrays and objects deeper than [`MAX_DEPTH`].
/// Linear, and free for lines too short to be that deep.
pub fn too_deep(line: &[u8]) -> bool {
    if line.len() <= 2 * MAX_DEPTH {
        return false;
    }
    let (mut depth, mut in_string, mut i) = (0usize, false, 0);
    while i < line.len() {
        match (in_string, line[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') => in_string = false,
            (false, b'"') => in_string = true,
            (false, b'{' | b'[') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            (false, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// Rewrites what JavaScript accepts but strict JSON does not: lone UTF-16
/// surrogate escapes become U+FFFD (what the agents' own UTF-8 encoding
/// turns them into) and out-of-range numbers become the largest finite
/// double. Returns the text (`None` when unchanged) and the nesting depth.
pub fn repair_line(line: &str) -> (Option<String>, usize) {
    let b = line.as_bytes();
    let esc = |i: usize| -> Option<u16> {
        if i + 6 <= b.len() && b[i] == b'\\' && b[i + 1] == b'u' {
            u16::from_str_radix(std::str::from_utf8(&b[i + 2..i + 6]).ok()?, 16).ok()
        } else {
            None
        }
    };
    let mut out = String::with_capacity(line.len());
    let mut changed = false;
    let (mut depth, mut max_depth) = (0usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_string {
            if c == b'\\' {
                match esc(i) {
                    Some(0xd800..=0xdbff) if matches!(esc(i + 6), Some(0xdc00..=0xdfff)) => {
                        out.push_str(&line[i..i + 12]);
                        i += 12;
                    }
                    Some(0xd800..=0xdfff) => {
                        out.push_str("\\ufffd");
                        changed = true;
                        i += 6;
                    }
                    _ => {
                        // The backslash and the character it escapes, which
                        // may be multi-byte in invalid JSON (`"\é"`, or `\`
                        // before a lossy U+FFFD): slicing a fixed two bytes
                        // here used to panic on a non-char boundary.
                        out.push('\\');
                        i += 1;
                        if let Some(ch) = line[i..].chars().next() {
                            out.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                continue;
            }
            if c == b'"' {
                in_string = false;
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    max_depth = max_depth.max(depth);
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                b'-' | b'0'..=b'9' => {
                    let end = b[i..]
                        .iter()
                        .position(|x| !matches!(x, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                        .map_or(b.len(), |p| i + p);
                    let tok = &line[i..end];
                    match tok.parse::<f64>() {
                        Ok(f) if f.is_infinite() => {
                            out.push_str(if f < 0.0 {
                                "-1.7976931348623157e308"
                            } else {
                                "1.7976931348623157e308"
                            });
                            changed = true;
                        }
                        _ => out.push_str(tok),
                    }
                    i = end;
                    continue;
                }
                _ => {}
            }
        }
        // Copy one whole character (multi-byte UTF-8 included).
        let ch = line[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8();
    }
    (changed.then_some(out), max_depth)
}

/// Parses JSON the way the agents' JavaScript readers accept it.
pub fn parse_json_lenient(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    let (fixed, depth) = repair_line(text);
    if depth > MAX_DEPTH {
        return None;
    }
    let text = fixed.as_deref().unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let mut v = {
        let sd = serde_stacker::Deserializer::new(&mut de);
        <Value as serde::Deserialize>::deserialize(sd).ok()?
    };
    de.end().ok()?;
    if depth > KEEP_DEPTH {
        // Everything else in arbor (clone, drop, serialize) recurses; deep
        // subtrees are cut here and freed on a big stack of their own.
        let mut cut = Vec::new();
        trim_deep(&mut v, 0, &mut cut);
        stacker::grow(64 << 20, move || drop(cut));
    }
    Some(v)
}

/// Nesting kept in memory; deeper JSON is replaced by `DEEP_PLACEHOLDER`.
pub const KEEP_DEPTH: usize = 64;
pub const DEEP_PLACEHOLDER: &str = "[arbor: JSON nested too deeply to show]";

fn trim_deep(v: &mut Value, depth: usize, cut: &mut Vec<Value>) {
    if depth >= KEEP_DEPTH && (v.is_array() || v.is_object()) {
        cut.push(std::mem::replace(v, Value::String(DEEP_PLACEHOLDER.into())));
        return;
    }
    match v {
        Value::Array(a) => a.iter_mut().for_each(|x| trim_deep(x, depth + 1, cut)),
        Value::Object(m) => m.values_mut().for_each(|x| trim_deep(x, depth + 1, cut)),
        _ => {}
    }
}

/// Reads and migrates a session file.
pub fn read_session(path: &Path) -> Result<Session, ReadError> {
    let (mut file, meta) = crate::open::open_session_file(path)?;
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut buf = Vec::with_capacity(meta.len() as usize + 1);
    std::io::Read::read_to_end(&mut file, &mut buf).map_err(io)?;
    parse_session_from(path, Arc::new(buf), Some(file))
}

/// [`read_session`] that never holds the file: a version 3 file's lines are
/// read a block at a time and its entries read their lines from the file
/// when asked (as after [`Session::release_bytes`]). For screens and
/// commands that read few entries' objects (the tree, `show --json`); a
/// file whose header is not in its first megabyte, or an older version,
/// is read whole and let go after.
pub fn read_session_lean(path: &Path) -> Result<Session, ReadError> {
    read_session_lean_in(path, crate::load::READ_BLOCK)
}

/// [`read_session_lean`] reading `block` bytes at a time (tests cut lines
/// at every place with small blocks).
#[doc(hidden)]
pub fn read_session_lean_in(path: &Path, block: usize) -> Result<Session, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Another agent's file: translated as it is read into an unnamed
    // scratch file (bounded memory), whose entries are read as asked.
    if let Some(agent) = crate::foreign::detect_path(path) {
        let (file, meta) = crate::open::open_session_file(path)?;
        let mut scratch = crate::fileops::scratch_file().map_err(io)?;
        let mut w = std::io::BufWriter::with_capacity(256 << 10, &mut scratch);
        crate::foreign::translate_file(agent, path, &file, usize::MAX, &mut w).map_err(io)?;
        std::io::Write::flush(&mut w).map_err(io)?;
        drop(w);
        let mut s = lean_file(path, scratch, block)?;
        s.foreign = Some(agent);
        s.bytes = meta.len();
        return Ok(s);
    }
    let (file, _) = crate::open::open_session_file(path)?;
    lean_file(path, file, block)
}

/// [`read_session_lean_in`] of an open file, named `path`.
fn lean_file(path: &Path, file: std::fs::File, block: usize) -> Result<Session, ReadError> {
    const FIRST: usize = 1 << 20;
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let src = Arc::new(Source::file_only(file));
    let mut first = vec![0u8; FIRST];
    let n = src.read_into(&mut first, 0).map_err(io)?;
    first.truncate(n);
    // Whole lines only, unless that is the whole file.
    let whole = match n < FIRST {
        true => n,
        false => memchr::memrchr(b'\n', &first).map_or(0, |i| i + 1),
    };
    let mut diagnostics = Diagnostics::default();
    let found = find_header_in(path, &first[..whole], &mut diagnostics)?;
    match found {
        Some((header, body)) if header.version >= 3 => {
            drop(first);
            let (entries, calls, end) =
                crate::load::load_entries_streamed(&src, body, block, &mut diagnostics)
                    .map_err(io)?;
            Ok(Session {
                path: path.to_path_buf(),
                file_version: header.version,
                header,
                entries,
                calls,
                diagnostics,
                bytes: end as u64,
                source: Some(src),
                foreign: None,
            })
        }
        None if n < FIRST => Err(ReadError::NotASession {
            path: path.to_path_buf(),
            reason: "no session header",
        }),
        _ => {
            let s = read_session(path)?;
            s.release_bytes();
            Ok(s)
        }
    }
}

/// Checks that `path` is a session file by reading up to its header only
/// (the errors `read_session` gives for a file that is not one).
pub fn check_header(path: &Path) -> Result<(), ReadError> {
    use std::io::BufRead;
    let (file, _) = crate::open::open_session_file(path)?;
    let mut r = std::io::BufReader::with_capacity(64 << 10, file);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|source| ReadError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if n == 0 {
            return Err(ReadError::NotASession {
                path: path.to_path_buf(),
                reason: "no session header",
            });
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if let Some(obj) = parse_object(text, &mut false) {
            return match Header::from_object(obj) {
                Some(_) => Ok(()),
                None => Err(ReadError::NotASession {
                    path: path.to_path_buf(),
                    reason: "the first entry is not a session header with a string id",
                }),
            };
        }
    }
}

/// Parses a session from bytes already read.
pub fn parse_session(path: &Path, buf: &[u8]) -> Result<Session, ReadError> {
    parse_session_owned(path, Arc::new(buf.to_vec()))
}

/// Parses a session from bytes it keeps: entries of a version 3 file stay
/// lines of `buf` until asked for (see `load`).
pub fn parse_session_owned(path: &Path, buf: Arc<Vec<u8>>) -> Result<Session, ReadError> {
    parse_session_from(path, buf, None)
}

/// [`parse_session_owned`] of the bytes read from `file`, which entries can
/// be read from again once the bytes are let go ([`Session::release_bytes`]).
fn parse_session_from(
    path: &Path,
    buf: Arc<Vec<u8>>,
    file: Option<std::fs::File>,
) -> Result<Session, ReadError> {
    if let Some(agent) = crate::foreign::detect_bytes(&buf) {
        let translated = crate::foreign::translate(agent, path, &buf);
        let mut s = parse_session_from(path, Arc::new(translated), None)?;
        s.foreign = Some(agent);
        s.bytes = buf.len() as u64;
        return Ok(s);
    }
    let mut diagnostics = Diagnostics::default();
    let (header, body) = find_header(path, &buf, &mut diagnostics)?;
    let file_version = header.version;
    let mut source = None;
    let (entries, calls) = if file_version >= 3 {
        let src = Arc::new(Source::new(buf.clone(), file));
        source = Some(src.clone());
        crate::load::load_entries(&src, &buf, body, buf.len(), &mut diagnostics)
    } else {
        let entries = parse_legacy(&header, &buf[body..], &mut diagnostics);
        let calls = ToolCalls::from_entries(&entries);
        (entries, calls)
    };
    Ok(Session {
        path: path.to_path_buf(),
        header,
        file_version,
        entries,
        calls,
        diagnostics,
        bytes: buf.len() as u64,
        source,
        foreign: None,
    })
}

/// The reference reader the fast loader is checked against (tests,
/// benchmarks): every line parsed into a JSON object up front, as arbor
/// read sessions before the loader kept lines for later.
pub fn parse_session_eager(path: &Path, buf: &[u8]) -> Result<Session, ReadError> {
    let mut diagnostics = Diagnostics::default();
    let (header, body) = find_header(path, buf, &mut diagnostics)?;
    let entries = parse_legacy(&header, &buf[body..], &mut diagnostics);
    let calls = ToolCalls::from_entries(&entries);
    Ok(Session {
        path: path.to_path_buf(),
        file_version: header.version,
        header,
        entries,
        calls,
        diagnostics,
        bytes: buf.len() as u64,
        source: None,
        foreign: None,
    })
}

/// The session header, the first line that parses as an object, and
/// where the entries after it start.
fn find_header(
    path: &Path,
    buf: &[u8],
    diagnostics: &mut Diagnostics,
) -> Result<(Header, usize), ReadError> {
    find_header_in(path, buf, diagnostics)?.ok_or_else(|| ReadError::NotASession {
        path: path.to_path_buf(),
        reason: "no session header",
    })
}

/// [`find_header`], `None` when no line of `buf` is an object (the
/// streamed reader reads on).
fn find_header_in(
    path: &Path,
    buf: &[u8],
    diagnostics: &mut Diagnostics,
) -> Result<Option<(Header, usize)>, ReadError> {
    let mut at = 0;
    for (line, newline) in lines(buf) {
        at += line.len() + usize::from(newline);
        let Some(obj) = parse_line(line, newline, diagnostics) else {
            continue;
        };
        let header = Header::from_object(obj).ok_or_else(|| ReadError::NotASession {
            path: path.to_path_buf(),
            reason: "the first entry is not a session header with a string id",
        })?;
        return Ok(Some((header, at)));
    }
    Ok(None)
}

/// One line as a JSON object, counted in `diagnostics` when it is blank,
/// not an object (a cut last line: the partial tail) or read lossily.
fn parse_line(
    line: &[u8],
    newline: bool,
    diagnostics: &mut Diagnostics,
) -> Option<Map<String, Value>> {
    if line.iter().all(u8::is_ascii_whitespace) {
        diagnostics.blank_lines += 1;
        return None;
    }
    let mut lossy = false;
    let Some(obj) = parse_object(line, &mut lossy) else {
        if newline {
            diagnostics.skipped_lines += 1;
        } else {
            diagnostics.partial_tail = true;
        }
        return None;
    };
    if lossy {
        diagnostics.lossy_lines += 1;
    }
    Some(obj)
}

/// The entries of a version 1 or 2 file, parsed and migrated in memory
/// (and of any file, for [`parse_session_eager`]).
fn parse_legacy(header: &Header, body: &[u8], diagnostics: &mut Diagnostics) -> Vec<Entry> {
    let mut raw_entries: Vec<Map<String, Value>> = Vec::new();
    for (line, newline) in lines(body) {
        let Some(obj) = parse_line(line, newline, diagnostics) else {
            continue;
        };
        raw_entries.push(obj);
    }
    if header.version < 2 {
        migrate_v1(&header.id, &mut raw_entries);
    }
    if header.version < 3 {
        migrate_v2(&mut raw_entries);
    }
    raw_entries
        .into_iter()
        .enumerate()
        .map(|(i, raw)| Entry::new(i + 1, raw))
        .collect()
}

/// v1 → v2: ids, a linear parent chain, and index-based compaction pointers.
pub fn migrate_v1(session_id: &str, entries: &mut [Map<String, Value>]) {
    let mut taken: HashSet<String> = entries
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut ids = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter_mut().enumerate() {
        let id = match e.get("id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => {
                let mut attempt = 0;
                loop {
                    let candidate = legacy_entry_id(session_id, i + 1, attempt);
                    if taken.insert(candidate.clone()) {
                        break candidate;
                    }
                    attempt += 1;
                }
            }
        };
        ids.push(id);
    }
    for i in 0..entries.len() {
        let parent = if i == 0 {
            Value::Null
        } else {
            Value::String(ids[i - 1].clone())
        };
        let e = &mut entries[i];
        e.insert("id".into(), Value::String(ids[i].clone()));
        e.insert("parentId".into(), parent);
        if e.get("type").and_then(Value::as_str) == Some("compaction") {
            // The index counts the header as line 0, so entry k sits at index k.
            if let Some(idx) = e.get("firstKeptEntryIndex").and_then(Value::as_u64) {
                let target = (idx as usize).checked_sub(1).and_then(|k| ids.get(k));
                if let Some(target) = target {
                    e.insert("firstKeptEntryId".into(), Value::String(target.clone()));
                }
                e.shift_remove("firstKeptEntryIndex");
            }
        }
    }
}

/// v2 → v3: the `hookMessage` role became `custom`.
pub fn migrate_v2(entries: &mut [Map<String, Value>]) {
    for e in entries {
        if let Some(Value::Object(m)) = e.get_mut("message") {
            if m.get("role").and_then(Value::as_str) == Some("hookMessage") {
                m.insert("role".into(), Value::String("custom".into()));
            }
        }
    }
}
