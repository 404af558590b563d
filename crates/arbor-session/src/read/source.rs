//! Where the lines of a loaded session are: its bytes in memory, or — once
//! they are let go (`Session::release_bytes`) — the open file, read a line
//! at a time when an entry is asked for.
//!
//! The file is the one that was read (the handle, not the path): a session
//! replaced by a rename is still read as it was. A file changed in place
//! under arbor reads as whatever is there now; a line that no longer parses
//! reads as an empty object until the watcher's reload.

use std::fs::File;
use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

#[derive(Debug)]
pub(crate) struct Source {
    bytes: RwLock<Option<Arc<Vec<u8>>>>,
    file: Option<File>,
    /// Longer lines are never read (see [`Source::limit_lines`]).
    max_line: AtomicUsize,
}

impl Source {
    pub fn new(bytes: Arc<Vec<u8>>, file: Option<File>) -> Source {
        Source {
            bytes: RwLock::new(Some(bytes)),
            file,
            max_line: AtomicUsize::new(usize::MAX),
        }
    }

    /// A source with no bytes in memory: lines are read from `file`.
    pub fn file_only(file: File) -> Source {
        Source {
            bytes: RwLock::new(None),
            file: Some(file),
            max_line: AtomicUsize::new(usize::MAX),
        }
    }

    /// From now on, a line longer than `max` bytes is not read: its entry
    /// reads as an empty object, and says how long the line is
    /// ([`crate::Entry::unread_len`]). For a screen, whose memory must
    /// not follow one line of hundreds of megabytes.
    pub fn limit_lines(&self, max: usize) {
        self.max_line.store(max, Ordering::Relaxed);
    }

    /// Reads into `buf` from `off` of the file, as much as there is (0
    /// without a file).
    pub fn read_into(&self, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
        match &self.file {
            Some(f) => read_at(f, buf, off),
            None => Ok(0),
        }
    }

    /// The file's length now (`None` without a file).
    pub fn file_len(&self) -> Option<u64> {
        self.file.as_ref()?.metadata().ok().map(|m| m.len())
    }

    fn held(&self) -> Option<Arc<Vec<u8>>> {
        match self.bytes.read() {
            Ok(g) => g.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Lets go of the bytes in memory when the file can be read instead.
    pub fn release(&self) -> bool {
        if self.file.is_none() || !cfg!(any(unix, windows)) {
            return false;
        }
        match self.bytes.write() {
            Ok(mut g) => *g = None,
            Err(poisoned) => *poisoned.into_inner() = None,
        }
        true
    }

    /// Bytes `start..end` (fewer when the file is shorter now; none when
    /// it cannot be read).
    pub fn read(&self, start: usize, end: usize) -> Bytes {
        let end = end.max(start);
        if let Some(b) = self.held() {
            if end <= b.len() {
                return Bytes::Shared(b, start, end);
            }
        }
        let Some(f) = &self.file else {
            return Bytes::Owned(Vec::new());
        };
        let mut buf = vec![0u8; end - start];
        let n = read_at(f, &mut buf, start as u64).unwrap_or(0);
        buf.truncate(n);
        Bytes::Owned(buf)
    }
}

impl crate::lifted::LineBytes for LineRef {
    /// From the bytes held, or else from the file.
    fn read_at(&self, buf: &mut [u8], off: usize) -> usize {
        let at = self.start + off;
        let want = buf.len().min(self.end.saturating_sub(at));
        if let Some(b) = self.src.held() {
            if self.end <= b.len() {
                return b[at..].read_at(&mut buf[..want], 0);
            }
        }
        self.src.read_into(&mut buf[..want], at as u64).unwrap_or(0)
    }
}

/// Reads into `buf` from `off`, as much as there is; no shared file
/// position, so several threads may read one file.
pub(crate) fn read_at(f: &File, buf: &mut [u8], off: u64) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        #[cfg(unix)]
        let n = {
            use std::os::unix::fs::FileExt;
            f.read_at(&mut buf[done..], off + done as u64)
        };
        #[cfg(windows)]
        let n = {
            use std::os::windows::fs::FileExt;
            f.seek_read(&mut buf[done..], off + done as u64)
        };
        #[cfg(not(any(unix, windows)))]
        let n: std::io::Result<usize> = {
            let _ = (f, off);
            Ok(0)
        };
        match n {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Bytes of a source: a range of the bytes held, or a copy read from the file.
pub(crate) enum Bytes {
    Shared(Arc<Vec<u8>>, usize, usize),
    Owned(Vec<u8>),
}

impl Bytes {
    /// The bytes as a vector of their own: a copy read from the file is
    /// moved out, not copied again.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Bytes::Owned(v) => v,
            shared => shared.to_vec(),
        }
    }
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Shared(b, s, e) => b.get(*s..*e).unwrap_or_default(),
            Bytes::Owned(v) => v,
        }
    }
}

/// One line of a session file.
#[derive(Clone)]
pub(crate) struct LineRef {
    pub src: Arc<Source>,
    pub start: usize,
    pub end: usize,
}

impl LineRef {
    pub fn bytes(&self) -> Bytes {
        self.src.read(self.start, self.end)
    }

    /// Parses the line for this use only, a huge one a block at a time
    /// (see [`crate::lifted`]): its bytes are never held whole.
    pub fn parse(&self) -> Option<serde_json::Map<String, serde_json::Value>> {
        let len = self.end.saturating_sub(self.start);
        if len >= crate::lifted::LIFT_LINE {
            if let crate::lifted::Lifted::Parsed(m) = crate::lifted::parse_lifted(self, len) {
                return Some(m);
            }
        }
        crate::reader::parse_object(&self.bytes(), &mut false)
    }

    /// Whether the line is longer than its source reads (never read).
    pub fn too_long(&self) -> bool {
        self.end.saturating_sub(self.start) > self.src.max_line.load(Ordering::Relaxed)
    }
}
