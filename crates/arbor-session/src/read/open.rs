//! Opening a session file without ever blocking.
//!
//! A path can change type between the directory listing and the open (a
//! `*.jsonl` renamed over by a FIFO): a plain `open` of a FIFO waits for a
//! writer forever, a device never ends. Every reader of session files (the
//! list scanner, the index, the tree/show/context reader, the watcher's
//! rescans, the writers) opens through here: without blocking, then checks
//! what the opened handle is, so a file swapped after any earlier `stat` is
//! still caught.

use std::fs::{File, Metadata, OpenOptions};
use std::path::Path;

use crate::{Error, Result};

/// Opens `path` for reading; only a regular file is accepted.
pub fn open_session_file(path: &Path) -> Result<(File, Metadata)> {
    open_session_file_with(path, OpenOptions::new().read(true))
}

/// A session file's bytes, whole (opened as [`open_session_file`] does).
pub(crate) fn read_session_bytes(path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let (mut f, meta) = open_session_file(path)?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    f.read_to_end(&mut buf).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(buf)
}

/// [`open_session_file`] with the caller's options (e.g. read + append).
pub(crate) fn open_session_file_with(
    path: &Path,
    opts: &mut OpenOptions,
) -> Result<(File, Metadata)> {
    let io = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO returns at once instead of waiting for
        // its other end. O_NOCTTY: a terminal device never becomes ours.
        opts.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = match opts.open(path) {
        Ok(f) => f,
        // A FIFO without a reader refuses a non-blocking open for writing.
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
            return Err(match std::fs::metadata(path) {
                Ok(m) if !m.is_file() => not_regular(path, &m),
                _ => io(e),
            });
        }
        Err(e) => return Err(io(e)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    #[cfg(unix)]
    {
        use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
        // A regular file ignores O_NONBLOCK, but later reads and writes
        // should not depend on that: clear it.
        fcntl_getfl(&file)
            .and_then(|flags| fcntl_setfl(&file, flags - OFlags::NONBLOCK))
            .map_err(|e| io(e.into()))?;
    }
    Ok((file, meta))
}

fn not_regular(path: &Path, meta: &Metadata) -> Error {
    if meta.is_dir() {
        return Error::IsDirectory {
            path: path.to_path_buf(),
        };
    }
    let mut kind = "not a regular file";
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_fifo() {
            kind = "a FIFO (named pipe), not a regular file";
        } else if t.is_socket() {
            kind = "a socket, not a regular file";
        } else if t.is_char_device() || t.is_block_device() {
            kind = "a device, not a regular file";
        }
    }
    Error::NotRegular {
        path: path.to_path_buf(),
        kind,
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = open_session_file(&p).unwrap_err();
        assert!(matches!(e, Error::NotRegular { .. }), "{e}");
        assert!(e.to_string().contains("FIFO"), "{e}");
        let e = open_session_file_with(&p, OpenOptions::new().read(true).append(true)).unwrap_err();
        assert!(matches!(e, Error::NotRegular { .. }), "{e}");
        let e = open_session_file_with(&p, OpenOptions::new().append(true)).unwrap_err();
        assert!(matches!(e, Error::NotRegular { .. }), "{e}");
        let e = open_session_file(Path::new("/dev/null")).unwrap_err();
        assert!(e.to_string().contains("device"), "{e}");
        assert!(matches!(
            open_session_file(dir.path()).unwrap_err(),
            Error::IsDirectory { .. }
        ));
    }

    #[test]
    fn a_regular_file_reads_normally() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.jsonl");
        std::fs::write(&p, b"{}\n").unwrap();
        let (mut f, meta) = open_session_file(&p).unwrap();
        assert_eq!(meta.len(), 3);
        let mut s = String::new();
        f.read_to_string(&mut s).unwrap();
        assert_eq!(s, "{}\n");
    }
}
