//! Every change arbor makes to a mirror, its own cache (as the index's
//! files are; a user's files go through `arbor_session::fileops`): its
//! private folders, its files read-only between syncs, the lock one sync
//! holds, a list left over, and the mirror deleted (`--purge`).
//!
//! A mirror holds another machine's conversations: its folders are 0700.
//! rsync writes a grown file in place (`--append-verify`), which a 0400
//! file refuses to anyone but root, so a sync makes its files 0600 first
//! and 0400 again after (nobody else can enter the folders meanwhile).

use std::fs::File;
use std::path::Path;

use crate::RemoteError;

/// Creates `dir` and its missing parents; `dir` itself is made 0700 (the
/// parents, arbor's cache, are left as they are).
pub(crate) fn create_private(dir: &Path) -> Result<(), RemoteError> {
    std::fs::create_dir_all(dir).map_err(|e| RemoteError::io(dir, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| RemoteError::io(dir, e))?;
    }
    Ok(())
}

/// Makes every regular file under `dir` 0400 (`readonly`) or 0600; links
/// are not followed (rsync makes none; anything else is left alone).
pub(crate) fn set_readonly(dir: &Path, readonly: bool) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if readonly { 0o400 } else { 0o600 };
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(t) = e.file_type() else { continue };
                if t.is_dir() {
                    todo.push(e.path());
                } else if t.is_file() {
                    let _ =
                        std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode));
                }
            }
        }
    }
}

/// One sync of a mirror at a time (the picker's background sync and
/// `arbor remote sync` may meet): an exclusive `flock` on a file in the
/// mirror, released when the holder ends, even by a crash.
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

/// Removes a file of the mirror's own (a list a pass no longer needs).
pub(crate) fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
}

/// Deletes the mirror of the remote `name` (`arbor remote remove
/// --purge`); false when there was none.
pub fn purge_mirror(cache: &Path, name: &str) -> Result<bool, RemoteError> {
    let dir = crate::mirror_dir(cache, name);
    if !dir.exists() {
        return Ok(false);
    }
    std::fs::remove_dir_all(&dir).map_err(|e| RemoteError::io(&dir, e))?;
    Ok(true)
}
