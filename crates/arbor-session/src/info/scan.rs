//! Reading a file's row: whole files, streamed chunks, another agent's
//! translated lines, and the reusable read buffer.

use std::path::Path;

use crate::line_skim::LineSpans;
use crate::reader::lines;
use crate::{Error, Result};

use super::scanner::InfoScanner;
use super::SessionInfo;

/// Reads a file's list row in one pass.
pub fn scan_info(path: &Path) -> Result<SessionInfo> {
    scan_info_with(path, true)
}

/// [`scan_info`], gathering the searchable `all_text` only when `text`.
pub fn scan_info_with(path: &Path, text: bool) -> Result<SessionInfo> {
    scan_info_seeing(path, text, None).map(|seen| seen.info)
}

/// Who [`scan_info_seeing`] hands each line to, with its skim.
pub type LineSeer<'a> = dyn FnMut(&[u8], Option<&LineSpans>) + 'a;

/// What [`scan_info_seeing`] read: the row, and whether its lines were
/// the ones handed out (`false`: the file was another agent's, read
/// through its translation, whose lines were not).
pub struct SeenRow {
    pub info: SessionInfo,
    pub lines_seen: bool,
}

/// [`scan_info_with`], each complete line after the header also handed to
/// `each`, when given, with its skim ([`skim_line`](crate::line_skim::skim_line);
/// `None` when the skim refused it): one crossing of a line for the row
/// and for whoever reads its parts, as an index build does. Without
/// `each`, the row's own probe reads each line (it captures less).
pub fn scan_info_seeing(
    path: &Path,
    text: bool,
    mut each: Option<&mut LineSeer>,
) -> Result<SeenRow> {
    let io = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let (mut f, meta) = crate::open::open_session_file(path)?;
    let mut s = InfoScanner::new(path, mtime_ms(&meta));
    if !text {
        s = s.without_text();
    }
    with_read_buffer(|buf| {
        read_lines(&mut f, buf, |line, complete, end| {
            let at = end - line.len() as u64 - u64::from(complete);
            let each = match each.as_mut() {
                Some(each) if complete && s.header_seen => each,
                _ => {
                    s.feed_at(line, complete, at);
                    return s.failed.is_none();
                }
            };
            match crate::line_skim::skim_line(line) {
                Some(spans) => {
                    if !s.feed_skimmed_at(&spans, at) {
                        s.feed_at(line, true, at);
                    }
                    each(line, Some(&spans));
                }
                None => {
                    s.feed_at(line, true, at);
                    each(line, None);
                }
            }
            s.failed.is_none()
        })
    })
    .map_err(io)?;
    if s.failed.is_some() {
        // Not an Atomic session: maybe another agent's.
        if let Some(info) = scan_foreign(path, text)? {
            return Ok(SeenRow {
                info,
                lines_seen: false,
            });
        }
    }
    // Without the labelled entries' text the row is still right: their
    // labels then show without it.
    let _ = s.resolve_labels(&mut f);
    let info = s.finish().map_err(|reason| Error::NotASession {
        path: path.to_path_buf(),
        reason,
    })?;
    Ok(SeenRow {
        info,
        lines_seen: true,
    })
}

/// The row of another agent's session (Claude Code, Codex), translated
/// (`session::foreign`) as it is read, in bounded memory; `None` when the
/// file is in no format arbor knows. The row's `agent` is left to the
/// caller, who knows the store root.
pub fn scan_foreign(path: &Path, text: bool) -> Result<Option<SessionInfo>> {
    let Some(agent) = crate::foreign::detect_path(path) else {
        return Ok(None);
    };
    let (mut f, meta) = crate::open::open_session_file(path)?;
    let Some(mut t) = crate::foreign::Translator::new(agent, path) else {
        return Ok(None);
    };
    let mut s = InfoScanner::new(path, mtime_ms(&meta));
    if !text {
        s = s.without_text();
    }
    with_read_buffer(|buf| {
        read_lines(&mut f, buf, |line, complete, _| {
            t.feed_lines(line, complete, &mut |l, c| s.feed(l, c));
            true
        })
    })
    .map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(finish_foreign(t, s))
}

/// [`scan_foreign`] on bytes already read.
pub(crate) fn scan_foreign_bytes(
    path: &Path,
    buf: &[u8],
    file_mtime_ms: i64,
    text: bool,
) -> Option<SessionInfo> {
    let agent = crate::foreign::detect_bytes(buf)?;
    let mut t = crate::foreign::Translator::new(agent, path)?;
    let mut s = InfoScanner::new(path, file_mtime_ms);
    if !text {
        s = s.without_text();
    }
    for (line, complete) in lines(buf) {
        t.feed_lines(line, complete, &mut |l, c| s.feed(l, c));
    }
    finish_foreign(t, s)
}

/// The row of a translation fed to `s` (another agent's file has no
/// labels to resolve); its git branch is the translation's.
pub(crate) fn finish_foreign(
    t: crate::foreign::Translator,
    mut s: InfoScanner,
) -> Option<SessionInfo> {
    let branch = t.git_branch().map(str::to_string);
    t.finish_lines(&mut |l, c| s.feed(l, c));
    let mut row = s.finish().ok()?;
    row.git_branch = branch;
    Some(row)
}

/// A whole file and its mtime.
pub fn read_whole(path: &Path) -> Result<(Vec<u8>, i64)> {
    use std::io::Read;
    let (mut f, meta) = crate::open::open_session_file(path)?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut buf).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((buf, mtime_ms(&meta)))
}

thread_local! {
    static READ_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's reusable read buffer.
pub fn with_read_buffer<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    READ_BUF.with(|b| match b.try_borrow_mut() {
        Ok(mut buf) => {
            let r = f(&mut buf);
            if buf.len() > 4 * CHUNK {
                // A huge line grew it: do not keep that alive.
                *buf = Vec::new();
            }
            r
        }
        Err(_) => f(&mut Vec::new()),
    })
}

/// Read size of [`read_lines`]: small enough that the bytes just read are
/// still in the CPU cache when they are parsed.
const CHUNK: usize = 256 << 10;

/// Streams the lines of `r` (from its current position) in cache-sized
/// chunks. `f(line, complete, end)` gets each line without its `\n`,
/// whether it had one, and the number of bytes consumed up to and including
/// it; it returns false to stop. Returns the number of bytes read.
pub fn read_lines(
    r: &mut (impl std::io::Read + std::io::Seek),
    buf: &mut Vec<u8>,
    mut f: impl FnMut(&[u8], bool, u64) -> bool,
) -> std::io::Result<u64> {
    read_lines_capped(r, buf, usize::MAX, |piece| match piece {
        Piece::Line(line, complete, end) => f(line, complete, end),
        // Never: no line is longer than `usize::MAX`.
        Piece::Long(..) => true,
    })
}

/// What [`read_lines_capped`] hands out.
pub enum Piece<'a> {
    /// A line (without its `\n`), whether it had one, and the bytes
    /// consumed up to and including it.
    Line(&'a [u8], bool, u64),
    /// A line longer than the cap, not held: where it starts in the stream
    /// and where it ends (its `\n` excluded), and whether it had a `\n`.
    Long(u64, u64, bool),
}

/// [`read_lines`], but a line longer than `cap` bytes is never held: its
/// bytes are read through and it is handed out as where it is
/// ([`Piece::Long`]), for the caller to read a block at a time (a line of
/// hundreds of megabytes held in the read buffer was the bulk of what a
/// search held).
pub fn read_lines_capped(
    r: &mut (impl std::io::Read + std::io::Seek),
    buf: &mut Vec<u8>,
    cap: usize,
    mut f: impl FnMut(Piece<'_>) -> bool,
) -> std::io::Result<u64> {
    if buf.len() < CHUNK {
        buf.resize(CHUNK, 0);
    }
    // Stream offset of buf[0]; buf[start..filled] is read but not consumed,
    // and holds no newline before `scanned`.
    let mut base: u64 = 0;
    let (mut start, mut filled, mut scanned) = (0usize, 0usize, 0usize);
    // Inside a line over the cap: where it started.
    let mut long: Option<u64> = None;
    loop {
        let mut grown = None;
        if filled == buf.len() {
            if long.is_some() {
                // The long line's bytes so far are not kept.
                base += filled as u64;
                (start, filled, scanned) = (0, 0, 0);
            } else if start > 0 {
                buf.copy_within(start..filled, 0);
                base += start as u64;
                filled -= start;
                scanned -= start;
                start = 0;
            } else {
                // One line longer than the buffer: grow it, unless it is
                // longer than the cap.
                grown = grow(r, buf, filled, cap)?;
                if grown.is_none() {
                    long = Some(base);
                    base += filled as u64;
                    (start, filled, scanned) = (0, 0, 0);
                }
            }
        }
        let n = match grown {
            Some(n) => n,
            None => loop {
                match r.read(&mut buf[filled..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            },
        };
        if n == 0 {
            if let Some(at) = long {
                f(Piece::Long(at, base + filled as u64, false));
            } else if start < filled {
                f(Piece::Line(
                    &buf[start..filled],
                    false,
                    base + filled as u64,
                ));
            }
            return Ok(base + filled as u64);
        }
        filled += n;
        while let Some(p) = memchr::memchr(b'\n', &buf[scanned..filled]) {
            let nl = scanned + p;
            let keep_going = match long.take() {
                Some(at) => f(Piece::Long(at, base + nl as u64, true)),
                None => f(Piece::Line(&buf[start..nl], true, base + nl as u64 + 1)),
            };
            start = nl + 1;
            scanned = start;
            if !keep_going {
                return Ok(base + filled as u64);
            }
        }
        scanned = filled;
        if start == filled {
            base += start as u64;
            start = 0;
            filled = 0;
            scanned = 0;
        }
    }
}

/// Makes room in `buf` (its first `filled` bytes kept, one line not yet
/// ended) for the rest of that line, whose end is found first (read ahead,
/// then read again from where it was): the buffer is sized once, and
/// filled without being zeroed first (`Read::read_to_end` reads into spare
/// capacity). Doubling it held a line of 200 MB in 256 MB zeroed, and in
/// the 128 MB before it that the allocator had not given back yet.
/// Returns the bytes read; `None` (nothing read) when the line is longer
/// than `cap`.
fn grow(
    r: &mut (impl std::io::Read + std::io::Seek),
    buf: &mut Vec<u8>,
    filled: usize,
    cap: usize,
) -> std::io::Result<Option<usize>> {
    use std::io::{Read, SeekFrom};
    let here = r.stream_position()?;
    let mut ahead = 0usize;
    let mut probe = vec![0u8; 64 << 10];
    loop {
        let n = match r.read(&mut probe) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', &probe[..n]) {
            ahead += i + 1;
            break;
        }
        ahead += n;
        if filled.saturating_add(ahead) > cap {
            break;
        }
    }
    drop(probe);
    r.seek(SeekFrom::Start(here))?;
    if filled.saturating_add(ahead) > cap {
        return Ok(None);
    }
    // At least a block more: a line that grew meanwhile costs one more
    // round, not one per byte.
    let want = (filled + ahead).max(buf.len() + CHUNK.min(ahead));
    buf.truncate(filled);
    buf.reserve_exact(want - filled);
    // `read_to_end` retries an interrupted read itself.
    let read = r.take((want - filled) as u64).read_to_end(buf)?;
    buf.resize(want, 0);
    Ok(Some(read))
}

pub fn scan_info_bytes(path: &Path, buf: &[u8], file_mtime_ms: i64) -> Result<SessionInfo> {
    let row = scan_bytes_with(InfoScanner::new(path, file_mtime_ms), path, buf);
    if row.is_err() {
        // Another agent's session, as `scan_info_with` reads it.
        if let Some(info) = scan_foreign_bytes(path, buf, file_mtime_ms, true) {
            return Ok(info);
        }
    }
    row
}

/// [`scan_info_bytes`] through `serde_json` only (the reference for the fast path).
#[doc(hidden)]
pub fn scan_info_bytes_reference(
    path: &Path,
    buf: &[u8],
    file_mtime_ms: i64,
) -> Result<SessionInfo> {
    scan_bytes_with(
        InfoScanner::new(path, file_mtime_ms).without_fast_path(),
        path,
        buf,
    )
}

fn scan_bytes_with(s: InfoScanner, path: &Path, buf: &[u8]) -> Result<SessionInfo> {
    scan_lines(s, path, buf, |s, line, nl, at| s.feed_at(line, nl, at))
}

/// Feeds each line of `buf` to the scanner with `feed(scanner, line,
/// ends_in_newline, offset)` until it fails, then resolves the labels and
/// finishes the row.
fn scan_lines(
    mut s: InfoScanner,
    path: &Path,
    buf: &[u8],
    mut feed: impl FnMut(&mut InfoScanner, &[u8], bool, u64),
) -> Result<SessionInfo> {
    let base = buf.as_ptr() as usize;
    for (line, nl) in lines(buf) {
        feed(&mut s, line, nl, (line.as_ptr() as usize - base) as u64);
        if s.failed.is_some() {
            break;
        }
    }
    let _ = s.resolve_labels(&mut &buf[..]);
    s.finish().map_err(|reason| Error::NotASession {
        path: path.to_path_buf(),
        reason,
    })
}

/// [`scan_info_bytes`] as an index build feeds the scanner: each complete
/// line skimmed once for the row and the words
/// ([`skim_line`](crate::line_skim::skim_line), then
/// [`InfoScanner::feed_skimmed_at`]). For tests that check it gives the
/// same rows.
#[doc(hidden)]
pub fn scan_info_bytes_skimmed(path: &Path, buf: &[u8], file_mtime_ms: i64) -> Result<SessionInfo> {
    let s = InfoScanner::new(path, file_mtime_ms);
    scan_lines(s, path, buf, |s, line, nl, at| {
        let fed =
            nl && crate::line_skim::skim_line(line).is_some_and(|sp| s.feed_skimmed_at(&sp, at));
        if !fed {
            s.feed_at(line, nl, at);
        }
    })
}

pub fn mtime_ms(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as they are read: whole, or (over the cap) where they are.
    fn pieces(data: &[u8], cap: usize) -> Vec<(String, u64, u64, bool)> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        let mut r = std::io::Cursor::new(data);
        read_lines_capped(&mut r, &mut buf, cap, |p| {
            out.push(match p {
                Piece::Line(l, c, end) => (String::from_utf8_lossy(l).into_owned(), 0, end, c),
                Piece::Long(s, e, c) => ("long".into(), s, e, c),
            });
            true
        })
        .unwrap();
        // The buffer never grew past the cap (and a block).
        if cap != usize::MAX {
            assert!(buf.len() <= cap + CHUNK, "{}", buf.len());
        }
        out
    }

    #[test]
    fn a_line_over_the_cap_is_read_through_and_told_where_it_is() {
        let b = "b".repeat(3 * CHUNK + 5);
        let c = "c".repeat(2 * CHUNK);
        let data = format!("a\n{b}\n{c}\nd");
        let got = pieces(data.as_bytes(), 2 * CHUNK + 10);
        let (b_start, b_end) = (2u64, 2 + b.len() as u64);
        let c_end = b_end + 1 + c.len() as u64;
        assert_eq!(
            got,
            vec![
                ("a".into(), 0, 2, true),
                ("long".into(), b_start, b_end, true),
                (c.clone(), 0, c_end + 1, true),
                ("d".into(), 0, c_end + 2, false),
            ]
        );
        // Without a cap every line is whole, the buffer sized to the longest.
        let all = pieces(data.as_bytes(), usize::MAX);
        assert_eq!(all[1].0, b);
        assert_eq!(all.len(), 4);
    }
}
