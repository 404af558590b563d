//! One sync of a mirror at a time (the picker's background sync and
//! `arbor remote sync` may meet): an exclusive `flock` on a file in the
//! mirror, released when the holder ends, even by a crash.

use std::fs::File;
use std::path::Path;

use crate::RemoteError;

pub(crate) struct Lock {
    _file: File,
}

impl Lock {
    /// Waits for the lock at `path` (a sync ends within its timeout).
    pub(crate) fn take(path: &Path) -> Result<Lock, RemoteError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| RemoteError::io(path, e))?;
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: flock(2) on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
                return Err(RemoteError::io(path, std::io::Error::last_os_error()));
            }
        }
        Ok(Lock { _file: file })
    }
}
