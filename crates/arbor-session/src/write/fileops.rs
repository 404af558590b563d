//! Every change arbor makes to a user's files, in one place to audit:
//! appends to a session (the writer builds the lines), whole-file atomic
//! writes (a fork, a migration and its `.bak`), new files that never
//! replace one unless asked (exports), the system trash (delete, restore,
//! one or many) and a permanent delete, arbor's note of the last batch it
//! trashed, and unpacking the demo store.
//!
//! Not here: the index's own cache files (`index/`), the `--log` file and
//! the terminal, which are not the user's files.

use std::fs::{File, Metadata, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::open::open_session_file_with;
use crate::{Error, Result};

/// Opens a session to append to it (and read it: an append is built from
/// the file as it is right before the write). Only a regular file opens.
pub(crate) fn open_to_append(path: &Path) -> Result<(File, Metadata)> {
    open_session_file_with(path, OpenOptions::new().read(true).append(true))
}

/// Appends `bytes` in one write call: `O_APPEND` makes it land after
/// whatever is in the file now.
pub fn append(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    file.write_all(bytes)
}

/// [`append`], then waits until the bytes are on disk.
pub(crate) fn append_synced(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    file.write_all(bytes)?;
    file.sync_data()
}

/// A temporary file beside `path` (same folder: the rename stays on one
/// file system), named after it and this process.
fn temp_beside(path: &Path, fallback: &str) -> std::path::PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    dir.join(format!(
        ".{}.arbor-tmp-{}",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or(fallback),
        std::process::id()
    ))
}

/// Writes a temporary file with `fill`, syncs it, renames it over `path`;
/// the temporary file is removed when any step fails.
fn replace_with(
    path: &Path,
    fallback: &str,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let tmp = temp_beside(path, fallback);
    let result = (|| {
        let mut f = File::create(&tmp)?;
        fill(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// folder, synced, renamed over it; then the folder is synced.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`] of what `fill` writes, a piece at a time (a fork of a
/// large session is never held whole); nothing is left behind when `fill`
/// fails.
pub(crate) fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    replace_with(path, "session", fill)?;
    if let Ok(d) = File::open(path.parent().unwrap_or(Path::new("."))) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Writes `bak` atomically with `bytes` and the original's permissions and
/// times (`meta`): a backup dated today would hide when the session was
/// last used.
pub(crate) fn write_backup(bak: &Path, bytes: &[u8], meta: &Metadata) -> std::io::Result<()> {
    replace_with(bak, "bak", |f| {
        f.write_all(bytes)?;
        f.set_permissions(meta.permissions())?;
        let mut times = std::fs::FileTimes::new();
        if let Ok(t) = meta.modified() {
            times = times.set_modified(t);
        }
        if let Ok(t) = meta.accessed() {
            times = times.set_accessed(t);
        }
        f.set_times(times)
    })
}

/// Creates `path` and fills it with `write`. An existing file is never
/// touched, unless `replace` (then it is emptied first).
pub fn write_new(
    path: &Path,
    replace: bool,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    let mut opts = OpenOptions::new();
    opts.write(true);
    if replace {
        opts.create(true).truncate(true);
    } else {
        opts.create_new(true);
    }
    let mut f = opts.open(path).map_err(Error::CreateFile)?;
    write(&mut f)
        .and_then(|_| f.flush())
        .map_err(Error::FillFile)
}

/// Writes `bytes` to `path` (creating its folders) and dates it
/// `modified` when it can (a copy dated now would look live).
pub fn write_dated(path: &Path, bytes: &[u8], modified: SystemTime) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    let _ = f.set_modified(modified);
    Ok(())
}

/// An unnamed file for a translation too big to keep in memory: on the
/// disk of the temporary folder, removed from its folder at once (the
/// system frees it when the handle closes).
pub fn scratch_file() -> std::io::Result<std::fs::File> {
    let dir = std::env::temp_dir();
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{Mode, OFlags};
        let flags = OFlags::TMPFILE | OFlags::RDWR | OFlags::CLOEXEC;
        if let Ok(fd) = rustix::fs::open(&dir, flags, Mode::from_raw_mode(0o600)) {
            return Ok(std::fs::File::from(fd));
        }
    }
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    loop {
        let name = format!(
            "arbor-translated-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        let p = dir.join(name);
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true).create_new(true);
        #[cfg(windows)]
        {
            use std::os::windows::fs::OpenOptionsExt;
            // FILE_FLAG_DELETE_ON_CLOSE
            o.custom_flags(0x0400_0000);
        }
        match o.open(&p) {
            Ok(f) => {
                #[cfg(unix)]
                let _ = std::fs::remove_file(&p);
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Moves `path` to the system trash.
pub fn trash(path: &Path) -> Result<(), trash::Error> {
    trash::delete(path)
}

/// Files handed to the trash in one call by [`trash_many`].
const TRASH_CALL: usize = 64;

/// Moves each of `paths` to the system trash; each result is that file's
/// own, in order. The trash is asked for many files per call (each call
/// resolves the trash folder and reads the mount table again). A call
/// that fails has moved the files before the one that failed: those are
/// gone from their place, and the others are asked for one by one, so
/// that each failure is its own.
pub(crate) fn trash_many(paths: &[PathBuf]) -> Vec<Result<(), trash::Error>> {
    let mut out = Vec::with_capacity(paths.len());
    for chunk in paths.chunks(TRASH_CALL) {
        // A file missing already fails a call before it moves anything.
        let present: Vec<bool> = chunk
            .iter()
            .map(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        let asked: Vec<&PathBuf> = chunk
            .iter()
            .zip(&present)
            .filter_map(|(p, &here)| here.then_some(p))
            .collect();
        let all_moved = asked.is_empty() || trash::delete_all(&asked).is_ok();
        for (p, here) in chunk.iter().zip(present) {
            out.push(if !here {
                trash(p)
            } else if all_moved || std::fs::symlink_metadata(p).is_err() {
                Ok(())
            } else {
                trash(p)
            });
        }
    }
    out
}

/// Deletes `path` for good.
pub fn delete_permanently(path: &Path) -> std::io::Result<()> {
    std::fs::remove_file(path)
}

#[derive(Debug)]
pub enum RestoreError {
    Trash(trash::Error),
    /// Nothing trashed from that path is in the trash now.
    NotInTrash,
    /// This platform's trash cannot be restored from by a program.
    Unsupported,
}

/// `$yes` where the `trash` crate can list and restore items (its
/// `os_limited` API: Windows, and the freedesktop trash of the Unixes but
/// Apple's and Android), `$no` elsewhere; the platform test written once.
macro_rules! where_trash_restores {
    ($yes:block else $no:block) => {
        where_trash_restores!(@cfg any(
            target_os = "windows",
            all(
                unix,
                not(target_os = "macos"),
                not(target_os = "ios"),
                not(target_os = "android")
            )
        ), $yes, $no)
    };
    (@cfg $platform:meta, $yes:block, $no:block) => {{
        #[cfg($platform)]
        $yes
        #[cfg(not($platform))]
        $no
    }};
}

/// Puts the most recently trashed copy of `path` back.
pub fn restore_from_trash(path: &Path) -> Result<(), RestoreError> {
    restore_many(&[path.to_path_buf()])?
        .pop()
        .unwrap_or(Err(RestoreError::NotInTrash))
}

/// Puts back the most recently trashed copy of each of `paths`, with the
/// trash listed once for them all (a listing reads every item's info
/// file); each on its own, so that one failure leaves the others. `Err`:
/// the trash could not be listed.
pub(crate) fn restore_many(
    paths: &[PathBuf],
) -> Result<Vec<Result<(), RestoreError>>, RestoreError> {
    where_trash_restores!({
        use std::collections::{HashMap, HashSet};
        // The trash records a path with its folder resolved (a store reached
        // through a symlink is recorded at the link's target), so that
        // spelling is looked for too.
        let resolved: Vec<Option<PathBuf>> = paths
            .iter()
            .map(|p| {
                p.parent()
                    .and_then(|d| d.canonicalize().ok())
                    .zip(p.file_name())
                    .map(|(dir, name)| dir.join(name))
            })
            .collect();
        let wanted: HashSet<&Path> = paths
            .iter()
            .map(PathBuf::as_path)
            .chain(resolved.iter().flatten().map(PathBuf::as_path))
            .collect();
        let mut newest: HashMap<PathBuf, trash::TrashItem> = HashMap::new();
        for item in trash::os_limited::list().map_err(RestoreError::Trash)? {
            let original = item.original_path();
            if !wanted.contains(original.as_path()) {
                continue;
            }
            match newest.get(&original) {
                Some(old) if old.time_deleted >= item.time_deleted => {}
                _ => {
                    newest.insert(original, item);
                }
            }
        }
        Ok(paths
            .iter()
            .zip(&resolved)
            .map(
                |(p, r)| match newest.remove(p).or_else(|| newest.remove(r.as_ref()?)) {
                    Some(item) => {
                        trash::os_limited::restore_all([item]).map_err(RestoreError::Trash)
                    }
                    None => Err(RestoreError::NotInTrash),
                },
            )
            .collect())
    } else {
        Ok(paths
            .iter()
            .map(|_| Err(RestoreError::Unsupported))
            .collect())
    })
}

/// The original paths of the files in the trash, the most recently
/// trashed first.
pub(crate) fn trashed_files() -> Result<Vec<PathBuf>, RestoreError> {
    where_trash_restores!({
        let mut items = trash::os_limited::list().map_err(RestoreError::Trash)?;
        items.sort_by_key(|i| std::cmp::Reverse(i.time_deleted));
        Ok(items.iter().map(trash::TrashItem::original_path).collect())
    } else {
        Err(RestoreError::Unsupported)
    })
}

/// Writes arbor's note of the last batch it trashed (for `arbor restore`),
/// creating its folder.
pub(crate) fn write_note(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_atomic(path, bytes)
}

/// Removes that note (none there is no error).
pub(crate) fn remove_note(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_never_replaces_one_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.md");
        write_new(&p, false, |f| f.write_all(b"first")).unwrap();
        let e = write_new(&p, false, |f| f.write_all(b"second")).unwrap_err();
        assert!(
            matches!(&e, Error::CreateFile(e) if e.kind() == std::io::ErrorKind::AlreadyExists)
        );
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        write_new(&p, true, |f| f.write_all(b"2nd")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"2nd");
    }

    #[test]
    fn atomic_writes_leave_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"old\n").unwrap();
        let old = std::fs::metadata(&p).unwrap();
        let bak = dir.path().join("s.jsonl.bak");
        write_backup(&bak, b"old\n", &old).unwrap();
        write_atomic(&p, b"new\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        assert_eq!(
            std::fs::metadata(&bak).unwrap().modified().unwrap(),
            old.modified().unwrap()
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_dated_file_carries_its_date() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/s.jsonl");
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        write_dated(&p, b"x\n", t).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), t);
    }
}
