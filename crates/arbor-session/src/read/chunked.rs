//! A session file's lines, read forward or backward a chunk at a time, in
//! bounded memory: a line longer than the limit is never held, only
//! reported by its place and length. For what needs only part of a file
//! (the picker's preview: the header, the last messages, the first match),
//! however big the file or its lines are.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

/// One line (without its newline), or where a line too long to hold is.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text {
        start: u64,
        bytes: Vec<u8>,
        /// Whether a newline ends it (the last line of a file may have
        /// none: a writer mid-append).
        newline: bool,
    },
    Huge {
        start: u64,
        len: u64,
    },
}

/// Bytes asked of the file at a time.
pub const CHUNK: usize = 256 << 10;

fn read_at(file: &File, off: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut f = file;
    f.seek(SeekFrom::Start(off))?;
    let mut done = 0;
    while done < buf.len() {
        match f.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Lines from `start` to `end`, first to last.
pub struct Forward<'f> {
    file: &'f File,
    /// File offset of `buf[0]`.
    base: u64,
    buf: Vec<u8>,
    /// Bytes of `buf` already handed out.
    used: usize,
    end: u64,
    max_line: usize,
    /// Bytes read from the file so far.
    pub bytes_read: u64,
}

impl<'f> Forward<'f> {
    pub fn new(file: &'f File, start: u64, end: u64, max_line: usize) -> Forward<'f> {
        Forward {
            file,
            base: start,
            buf: Vec::new(),
            used: 0,
            end,
            max_line,
            bytes_read: 0,
        }
    }

    /// The offset of the next line.
    pub fn position(&self) -> u64 {
        self.base + self.used as u64
    }

    /// Appends the next chunk to `buf`; false at the end.
    fn fill(&mut self) -> std::io::Result<bool> {
        let at = self.base + self.buf.len() as u64;
        let want = CHUNK.min(self.end.saturating_sub(at) as usize);
        if want == 0 {
            return Ok(false);
        }
        let old = self.buf.len();
        self.buf.resize(old + want, 0);
        let n = read_at(self.file, at, &mut self.buf[old..])?;
        self.buf.truncate(old + n);
        self.bytes_read += n as u64;
        Ok(n > 0)
    }

    /// Drops what was handed out, keeping the partial line.
    fn compact(&mut self) {
        self.buf.drain(..self.used);
        self.base += self.used as u64;
        self.used = 0;
    }

    pub fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let rest = &self.buf[self.used..];
            if let Some(i) = memchr::memchr(b'\n', rest) {
                let start = self.position();
                let line = if i > self.max_line {
                    Line::Huge {
                        start,
                        len: i as u64,
                    }
                } else {
                    Line::Text {
                        start,
                        bytes: rest[..i].to_vec(),
                        newline: true,
                    }
                };
                self.used += i + 1;
                return Ok(Some(line));
            }
            if rest.len() > self.max_line {
                return self.skip_huge().map(Some);
            }
            self.compact();
            if !self.fill()? {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let line = Line::Text {
                    start: self.base,
                    bytes: std::mem::take(&mut self.buf),
                    newline: false,
                };
                self.base = self.end;
                return Ok(Some(line));
            }
        }
    }

    /// Reads on to the end of a line too long to hold, keeping none of it.
    fn skip_huge(&mut self) -> std::io::Result<Line> {
        let start = self.position();
        loop {
            let rest = &self.buf[self.used..];
            if let Some(i) = memchr::memchr(b'\n', rest) {
                self.used += i + 1;
                let len = self.position() - 1 - start;
                return Ok(Line::Huge { start, len });
            }
            self.used = self.buf.len();
            self.compact();
            if !self.fill()? {
                return Ok(Line::Huge {
                    start,
                    len: self.base - start,
                });
            }
        }
    }
}

/// Lines from `end` back to `start`, last to first.
pub struct Backward<'f> {
    file: &'f File,
    /// Everything before this offset is still unread.
    pos: u64,
    start: u64,
    /// The chunk at `pos`; `chunk[..pending]` is not handed out yet.
    chunk: Vec<u8>,
    pending: usize,
    /// The pieces of the line being put together, last piece first.
    parts: Vec<Vec<u8>>,
    len: u64,
    /// Where the line being put together ends (its newline, or the end).
    line_end: u64,
    end: u64,
    max_line: usize,
    /// Bytes read from the file so far.
    pub bytes_read: u64,
}

impl<'f> Backward<'f> {
    pub fn new(file: &'f File, start: u64, end: u64, max_line: usize) -> Backward<'f> {
        Backward {
            file,
            pos: end,
            start,
            chunk: Vec::new(),
            pending: 0,
            parts: Vec::new(),
            len: 0,
            line_end: end,
            end,
            max_line,
            bytes_read: 0,
        }
    }

    fn add(&mut self, from: usize, to: usize) {
        self.len += (to - from) as u64;
        if self.len > self.max_line as u64 {
            self.parts.clear();
        } else if to > from {
            self.parts.push(self.chunk[from..to].to_vec());
        }
    }

    /// The line put together, which starts at `line_start`; `None` when blank.
    fn take(&mut self, line_start: u64) -> Option<Line> {
        let len = std::mem::take(&mut self.len);
        let parts = std::mem::take(&mut self.parts);
        let newline = self.line_end < self.end;
        self.line_end = line_start.saturating_sub(1);
        if len == 0 {
            return None;
        }
        if len > self.max_line as u64 {
            return Some(Line::Huge {
                start: line_start,
                len,
            });
        }
        let mut bytes = Vec::with_capacity(len as usize);
        for p in parts.iter().rev() {
            bytes.extend_from_slice(p);
        }
        Some(Line::Text {
            start: line_start,
            bytes,
            newline,
        })
    }

    pub fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            if let Some(i) = memchr::memrchr(b'\n', &self.chunk[..self.pending]) {
                self.add(i + 1, self.pending);
                self.pending = i;
                if let Some(line) = self.take(self.pos + i as u64 + 1) {
                    return Ok(Some(line));
                }
                continue;
            }
            self.add(0, self.pending);
            self.pending = 0;
            if self.pos <= self.start {
                self.chunk.clear();
                let line = self.take(self.start);
                self.line_end = self.start;
                // Once the first line is out, nothing is left.
                self.len = 0;
                return Ok(line);
            }
            let n = CHUNK.min((self.pos - self.start) as usize);
            self.pos -= n as u64;
            self.chunk.resize(n, 0);
            let got = read_at(self.file, self.pos, &mut self.chunk)?;
            self.bytes_read += got as u64;
            if got < n {
                // The file shrank under us: what is left is unreadable.
                self.chunk.clear();
                self.start = self.pos;
                return Ok(None);
            }
            self.pending = n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(content: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, content).unwrap();
        let f = File::open(&p).unwrap();
        (dir, f)
    }

    fn forward(content: &[u8], max: usize) -> Vec<Line> {
        let (_d, f) = file(content);
        let mut r = Forward::new(&f, 0, content.len() as u64, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out
    }

    fn backward(content: &[u8], max: usize) -> Vec<Line> {
        let (_d, f) = file(content);
        let mut r = Backward::new(&f, 0, content.len() as u64, max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().unwrap() {
            out.push(l);
        }
        out.reverse();
        out
    }

    fn text(start: u64, s: &str, newline: bool) -> Line {
        Line::Text {
            start,
            bytes: s.as_bytes().to_vec(),
            newline,
        }
    }

    #[test]
    fn both_ways_agree_on_lines_and_huge_ones() {
        // Long lines cross chunk boundaries both ways.
        let long = "x".repeat(CHUNK + 10);
        let huge = "y".repeat(3 * CHUNK);
        let content = format!("a\n{long}\n\n{huge}\nb\nlast");
        let max = 2 * CHUNK;
        let a = 2 + long.len() as u64 + 2;
        let want = vec![
            text(0, "a", true),
            text(2, &long, true),
            Line::Huge {
                start: a,
                len: huge.len() as u64,
            },
            text(a + huge.len() as u64 + 1, "b", true),
            text(a + huge.len() as u64 + 3, "last", false),
        ];
        let mut fwd = forward(content.as_bytes(), max);
        // Forward hands out the blank line; the backward reader skips it.
        assert_eq!(fwd.remove(2), text(a - 1, "", true));
        assert_eq!(fwd, want);
        assert_eq!(backward(content.as_bytes(), max), want);
    }

    #[test]
    fn a_final_newline_ends_the_last_line() {
        assert_eq!(
            backward(b"one\ntwo\n", 100),
            vec![text(0, "one", true), text(4, "two", true)]
        );
        assert_eq!(
            forward(b"one\ntwo\n", 100),
            vec![text(0, "one", true), text(4, "two", true)]
        );
        assert_eq!(backward(b"", 100), vec![]);
        assert_eq!(forward(b"", 100), vec![]);
    }

    #[test]
    fn a_huge_last_line_is_only_measured() {
        let huge = vec![b'z'; 5 * CHUNK + 3];
        let mut content = b"h\n".to_vec();
        content.extend_from_slice(&huge);
        let (_d, f) = file(&content);
        let mut r = Backward::new(&f, 0, content.len() as u64, CHUNK);
        assert_eq!(
            r.next_line().unwrap(),
            Some(Line::Huge {
                start: 2,
                len: huge.len() as u64
            })
        );
        assert_eq!(r.next_line().unwrap(), Some(text(0, "h", true)));
        assert_eq!(r.next_line().unwrap(), None);
    }
}
