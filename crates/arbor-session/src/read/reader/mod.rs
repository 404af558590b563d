//! The tolerant reader: one JSON object per line, never a panic.

mod migrate;
mod tolerant;

pub(crate) use migrate::{migrate_v1, migrate_v2};
pub(crate) use tolerant::DEEP_PLACEHOLDER;
pub use tolerant::{lines, parse_json_lenient, parse_object, repair_line, too_deep, MAX_DEPTH};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::calls::ToolCalls;
use crate::entry::{Entry, Header};
use crate::source::Source;
use crate::{Error, Result};

use migrate::parse_legacy;

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

    /// From now on, a line longer than `max` bytes is never read: its
    /// entry keeps its facts (type, role, ids, time) and reads as an empty
    /// object, and [`Entry::unread_len`] says how long the line is. For a
    /// screen, whose memory must not follow one line of hundreds of
    /// megabytes.
    pub fn limit_lines(&self, max: usize) {
        if let Some(s) = &self.source {
            s.limit_lines(max);
        }
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
        // Lines far apart (around a line too long to read, or a long
        // stretch of other entries) are read one at a time: the span
        // between them could be hundreds of megabytes.
        const GAP: usize = 64 << 10;
        let used: usize = entries
            .iter()
            .filter_map(|e| e.raw.line_range())
            .map(|(s, e)| e - s)
            .sum();
        if to - from > 2 * used + GAP {
            for e in entries {
                match e.raw.line_range().filter(|_| !e.raw.is_parsed()) {
                    Some((s, end)) => {
                        let line = src.read(s, end);
                        f(e, (line.len() == end - s).then_some(&line[..]));
                    }
                    None => f(e, None),
                }
            }
            return;
        }
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

/// Reads and migrates a session file.
pub fn read_session(path: &Path) -> Result<Session> {
    let (mut file, meta) = crate::open::open_session_file(path)?;
    let io = |source| Error::Read {
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
pub fn read_session_lean(path: &Path) -> Result<Session> {
    read_session_lean_in(path, crate::load::READ_BLOCK)
}

/// [`read_session_lean`] reading `block` bytes at a time (tests cut lines
/// at every place with small blocks).
#[doc(hidden)]
pub fn read_session_lean_in(path: &Path, block: usize) -> Result<Session> {
    let io = |source| Error::Read {
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

/// [`read_session_lean`] of a file opened already (read through `file`:
/// the same file even if `path` is replaced meanwhile).
pub(crate) fn read_session_lean_file(path: &Path, file: std::fs::File) -> Result<Session> {
    lean_file(path, file, crate::load::READ_BLOCK)
}

/// [`read_session_lean_in`] of an open file, named `path`.
fn lean_file(path: &Path, file: std::fs::File, block: usize) -> Result<Session> {
    const FIRST: usize = 1 << 20;
    let io = |source| Error::Read {
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
        None if n < FIRST => Err(Error::NotASession {
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
pub fn check_header(path: &Path) -> Result<()> {
    use std::io::BufRead;
    let (file, _) = crate::open::open_session_file(path)?;
    let mut r = std::io::BufReader::with_capacity(64 << 10, file);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = r
            .read_until(b'\n', &mut line)
            .map_err(|source| Error::Read {
                path: path.to_path_buf(),
                source,
            })?;
        if n == 0 {
            return Err(Error::NotASession {
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
                None => Err(Error::NotASession {
                    path: path.to_path_buf(),
                    reason: "the first entry is not a session header with a string id",
                }),
            };
        }
    }
}

/// Parses a session from bytes already read.
pub fn parse_session(path: &Path, buf: &[u8]) -> Result<Session> {
    parse_session_owned(path, Arc::new(buf.to_vec()))
}

/// Parses a session from bytes it keeps: entries of a version 3 file stay
/// lines of `buf` until asked for (see `load`).
pub(crate) fn parse_session_owned(path: &Path, buf: Arc<Vec<u8>>) -> Result<Session> {
    parse_session_from(path, buf, None)
}

/// [`parse_session_owned`] of the bytes read from `file`, which entries can
/// be read from again once the bytes are let go ([`Session::release_bytes`]).
fn parse_session_from(
    path: &Path,
    buf: Arc<Vec<u8>>,
    file: Option<std::fs::File>,
) -> Result<Session> {
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
pub fn parse_session_eager(path: &Path, buf: &[u8]) -> Result<Session> {
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
fn find_header(path: &Path, buf: &[u8], diagnostics: &mut Diagnostics) -> Result<(Header, usize)> {
    find_header_in(path, buf, diagnostics)?.ok_or_else(|| Error::NotASession {
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
) -> Result<Option<(Header, usize)>> {
    let mut at = 0;
    for (line, newline) in lines(buf) {
        at += line.len() + usize::from(newline);
        let Some(obj) = parse_line(line, newline, diagnostics) else {
            continue;
        };
        let header = Header::from_object(obj).ok_or_else(|| Error::NotASession {
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
