//! Every change arbor makes to a user's files, in one place to audit:
//! appends to a session (the writer builds the lines), whole-file atomic
//! writes (a fork, a migration and its `.bak`), new files that never
//! replace one unless asked (exports), the system trash (delete, restore,
//! one or many) and a permanent delete, arbor's note of the last batch it
//! trashed, and unpacking the demo store.
//!
//! Nothing here ever writes into a remote's mirror (see [`mirror_refusal`]).
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
/// A file that cannot be opened for writing says so (a read-only file
/// system is not a read error), and one that is gone says it is gone.
pub(crate) fn open_to_append(path: &Path) -> Result<(File, Metadata)> {
    refuse_mirror(path)?;
    open_session_file_with(path, OpenOptions::new().read(true).append(true)).map_err(|e| match e {
        Error::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Error::Vanished {
                path: path.to_path_buf(),
            }
        }
        Error::Read { source, .. } => Error::Write {
            path: path.to_path_buf(),
            source,
        },
        other => other,
    })
}

/// Why `path` may not be written: it is in arbor's mirror of another
/// machine's sessions, a copy the next sync would overwrite (the session
/// is changed on its own machine, then synced). `None` for every other
/// path.
pub fn mirror_refusal(path: &Path) -> Option<String> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let host = arbor_util::hosts::host_of(&absolute)?;
    Some(format!(
        "{} is arbor's copy of a session on {host}; arbor never writes a copy: \
         the change must be made on {host}",
        path.display()
    ))
}

fn refuse_mirror(path: &Path) -> Result<()> {
    match mirror_refusal(path) {
        Some(why) => Err(Error::Invalid(why)),
        None => Ok(()),
    }
}

fn refuse_mirror_io(path: &Path) -> std::io::Result<()> {
    match mirror_refusal(path) {
        Some(why) => Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            why,
        )),
        None => Ok(()),
    }
}

/// Appends `bytes` in one write call: `O_APPEND` makes it land after
/// whatever is in the file now.
pub fn append(file: &mut File, bytes: &[u8]) -> std::io::Result<()> {
    file.write_all(bytes)
}

/// Why an [`append_line`] failed, and what it left.
#[derive(Debug)]
pub(crate) struct AppendFailed {
    pub error: std::io::Error,
    /// Where arbor's partial line starts when it could not be cut off
    /// (another program appended after it, or the cut failed); `None`: the
    /// file is as it was.
    pub left_at: Option<u64>,
}

/// Appends one whole `line` all or nothing: one write call (never a
/// second one for the rest: another writer may have appended between
/// them), then waits until it is on disk. On any error (a full disk takes
/// part of the line, the sync fails) the file is cut back to its length
/// before the write and synced, so no half line is ever left behind.
///
/// Where arbor's bytes are is exact without reading anything: an
/// `O_APPEND` write moves the handle's offset to the end of the bytes it
/// wrote. They are cut only while they are still the end of the file:
/// bytes another program appended after them are never cut.
///
/// The write, the check of the length and the cut are made under an
/// exclusive `flock` of the file, which every arbor append and cut takes:
/// another arbor process (four labelling one session at once) cannot land
/// a line between the check and the cut, where the cut would take it. The
/// agents do not lock their files, so an agent's line could still land in
/// that window of two system calls; it would have to be written while
/// arbor's write is failing (a full disk fails the agent's write too, and
/// leaves at most its half line, which the cut takes with arbor's). No
/// call truncates a file only if it has a given length.
pub(crate) fn append_line(file: &mut File, line: &[u8]) -> Result<(), AppendFailed> {
    let _lock = AppendLock::take(file);
    append_line_locked(file, line)
}

/// An exclusive `flock` of a file while it lives (Unix; elsewhere nothing).
/// Taken through its own descriptor (a `dup`), so the file stays free to
/// write through the caller's handle.
struct AppendLock(Option<File>);

impl AppendLock {
    fn take(file: &File) -> AppendLock {
        #[cfg(unix)]
        {
            use rustix::fs::{flock, FlockOperation};
            let held = file.try_clone().ok().filter(|dup| {
                // A file system without locks: appended without one, as
                // before.
                loop {
                    match flock(dup, FlockOperation::LockExclusive) {
                        Err(rustix::io::Errno::INTR) => continue,
                        r => return r.is_ok(),
                    }
                }
            });
            AppendLock(held)
        }
        #[cfg(not(unix))]
        {
            let _ = file;
            AppendLock(None)
        }
    }
}

impl Drop for AppendLock {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(dup) = &self.0 {
            let _ = rustix::fs::flock(dup, rustix::fs::FlockOperation::Unlock);
        }
    }
}

fn append_line_locked(file: &mut File, line: &[u8]) -> Result<(), AppendFailed> {
    use std::io::Seek;
    let (error, written) = match file.write(line) {
        Ok(n) if n == line.len() => match file.sync_data() {
            Ok(()) => return Ok(()),
            Err(e) => (e, n),
        },
        Ok(n) => (short_write(n, line.len()), n),
        Err(e) => (e, 0),
    };
    if written == 0 {
        return Err(AppendFailed {
            error,
            left_at: None,
        });
    }
    // The offset is where arbor's bytes end; were it unreadable, the
    // file's length is (nothing can append to a full disk meanwhile).
    let end = file
        .stream_position()
        .or_else(|_| file.metadata().map(|m| m.len()))
        .unwrap_or(written as u64);
    let start = end.saturating_sub(written as u64);
    let cut = (|| {
        if file.metadata()?.len() != end {
            return Ok(false);
        }
        file.set_len(start)?;
        file.sync_data()?;
        Ok::<_, std::io::Error>(true)
    })();
    Err(AppendFailed {
        error,
        left_at: (!matches!(cut, Ok(true))).then_some(start),
    })
}

/// A write that took only part of a line: on a regular file that happens
/// when the disk (or a size limit) is full, and the next write would say
/// which.
fn short_write(written: usize, len: usize) -> std::io::Error {
    #[cfg(unix)]
    let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
    #[cfg(not(unix))]
    let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
    std::io::Error::new(
        full.kind(),
        format!("{full} (the disk took {written} of the line's {len} bytes)"),
    )
}

/// Cuts a dead partial last line arbor left (`from` is where it starts)
/// off a file that is `len` bytes long, then syncs it. Nothing is cut when
/// the file is no longer `len` bytes long: then it is being written.
/// (Between that check and the cut remain two system calls: closed to
/// other arbor processes by the lock every arbor append takes, open to the
/// agents, which do not lock their files; see `append_line`.)
pub(crate) fn cut_dead_partial_line(file: &mut File, from: u64, len: u64) -> std::io::Result<bool> {
    // Another arbor process's append waits for the cut (see `append_line`).
    let _lock = AppendLock::take(file);
    if file.metadata()?.len() != len {
        return Ok(false);
    }
    file.set_len(from)?;
    file.sync_data()?;
    Ok(true)
}

/// Opens a new temporary file beside `path` (same folder: the rename
/// stays on one file system) and returns it with its name.
///
/// A shared folder may hold anything at a predictable name, a symlink
/// planted to make arbor overwrite the link's target above all. So the
/// name ends in random hex, and the file is created with `O_EXCL` (a
/// name that exists, a link even dangling, is never opened) and
/// `O_NOFOLLOW`; a name taken is given up for another one.
fn new_temp_beside(path: &Path, fallback: &str) -> std::io::Result<(File, PathBuf)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(fallback);
    let mut attempts = 0;
    loop {
        let random = uuid::Uuid::new_v4().simple().to_string();
        let tmp = dir.join(format!(
            ".{name}.arbor-tmp-{}-{}",
            std::process::id(),
            &random[..16]
        ));
        match create_new_nofollow(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempts < 16 => {
                attempts += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Creates `path`, which must not exist (`O_CREAT | O_EXCL`), without
/// following a symlink there (`O_NOFOLLOW`: `O_EXCL` already refuses one;
/// said twice on purpose).
fn create_new_nofollow(path: &Path) -> std::io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    opts.open(path)
}

/// Refuses a symlink at `path`: a file arbor writes is replaced by a
/// rename, which would replace the link itself and leave its target as it
/// was, so it is refused with a clear error instead (never written
/// through, never silently unlinked).
pub(crate) fn refuse_symlink(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is a symbolic link; arbor does not write through one or replace it \
             (give the path of the file it points to)",
        )),
        _ => Ok(()),
    }
}

/// Writes a temporary file with `fill`, syncs it, renames it over `path`
/// (the rename replaces a name, never follows a link there); the
/// temporary file is removed when any step fails.
fn replace_with(
    path: &Path,
    fallback: &str,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (mut f, tmp) = new_temp_beside(path, fallback)?;
    let result = (|| {
        fill(&mut f)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// [`replace_with`], but only where nothing is at `path` yet: a file, a
/// link (even dangling) or anything else there is left alone and the
/// result is `AlreadyExists`. Linux checks and renames in one step
/// (`RENAME_NOREPLACE`); elsewhere, or where the file system does not
/// support it, a hard link does the same (it fails on any name there);
/// without hard links, a check and a rename.
fn create_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let (mut f, tmp) = new_temp_beside(path, "new")?;
    let result = (|| {
        fill(&mut f)?;
        f.sync_all()?;
        drop(f);
        rename_noreplace(&tmp, path)
    })();
    let _ = std::fs::remove_file(&tmp);
    result?;
    sync_folder(path);
    Ok(())
}

/// Renames `from` to `to` unless `to` exists; `from` may remain (a hard
/// link was made): the caller removes it.
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(e.into()),
        }
    }
    match std::fs::hard_link(from, to) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
            // No hard links here either (FAT, some network file systems):
            // a check, then a rename, with the window between them.
            if std::fs::symlink_metadata(to).is_ok() {
                return Err(std::io::ErrorKind::AlreadyExists.into());
            }
            std::fs::rename(from, to)
        }
        other => other,
    }
}

/// Syncs the folder of `path`, so that a rename in it is on disk too.
fn sync_folder(path: &Path) {
    if let Ok(d) = File::open(path.parent().unwrap_or(Path::new("."))) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// folder, synced, renamed over it; then the folder is synced. A symlink
/// at `path` is refused (see [`refuse_symlink`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    refuse_mirror_io(path)?;
    refuse_symlink(path)?;
    replace_with(path, "session", |f| f.write_all(bytes))?;
    sync_folder(path);
    Ok(())
}

/// [`write_atomic_new_with`] of `bytes` (the fork streams; the tests
/// write bytes).
#[cfg(test)]
pub(crate) fn write_atomic_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_new_with(path, |f| f.write_all(bytes))
}

/// Writes what `fill` writes to the new file `path` atomically, a piece
/// at a time (a fork of a large session is never held whole); anything at
/// `path` already (a link too) is left alone: `AlreadyExists`. Nothing is
/// left behind when `fill` fails.
pub(crate) fn write_atomic_new_with(
    path: &Path,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<()> {
    refuse_mirror_io(path)?;
    create_with(path, fill)
}

/// Writes `bak` atomically with `bytes` and the original's permissions and
/// times (`meta`): a backup dated today would hide when the session was
/// last used. Whatever is at `bak` (arbor's name for it) is replaced, a
/// link there too: it is renamed over, never written through.
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
/// touched, unless `replace`: then a new file is renamed over it (a
/// symlink there is refused, never written through).
pub fn write_new(
    path: &Path,
    replace: bool,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<()> {
    refuse_mirror(path)?;
    if replace {
        refuse_symlink(path).map_err(Error::CreateFile)?;
        // The filling's errors are told apart from the creation's.
        let mut fill_error = None;
        let result = replace_with(path, "export", |f| {
            write(f).and_then(|_| f.flush()).map_err(|e| {
                let shown = std::io::Error::new(e.kind(), e.to_string());
                fill_error = Some(e);
                shown
            })
        });
        return match (result, fill_error) {
            (Ok(()), _) => Ok(()),
            (Err(_), Some(e)) => Err(Error::FillFile(e)),
            (Err(e), None) => Err(Error::CreateFile(e)),
        };
    }
    let mut f = create_new_nofollow(path).map_err(Error::CreateFile)?;
    write(&mut f)
        .and_then(|_| f.flush())
        .map_err(Error::FillFile)
}

/// Creates the folder `path` and those above it that are missing (where
/// `arbor man --dir` writes its pages).
pub fn create_folders(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path)
}

/// Writes `bytes` to `path` (creating its folders) and dates it
/// `modified` when it can (a copy dated now would look live). A symlink
/// at `path` is not followed (the open fails).
pub fn write_dated(path: &Path, bytes: &[u8], modified: SystemTime) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut opts = OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    let mut f = opts.open(path)?;
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

/// Moves `path` to the system trash. A move the trash refuses leaves
/// nothing in it (the trash makes an empty placeholder of the file before
/// moving it, and leaves it when the move fails: a file that cannot be
/// moved, say).
pub fn trash(path: &Path) -> Result<(), trash::Error> {
    if let Some(why) = mirror_refusal(path) {
        return Err(trash::Error::Unknown { description: why });
    }
    let before = home_trash_slots(path);
    let result = trash::delete(path);
    if result.is_err() {
        remove_refused_placeholders(path, &before);
    } else {
        trash_companions(&[path]);
    }
    result
}

/// The folder a session keeps beside its file, named as the file less
/// `.jsonl` (Claude Code's `<id>/subagents/` and `<id>/tool-results/`),
/// when there is one: it goes to the trash and comes back with its
/// session, or its sub-agent runs would be listed as sessions of their own
/// with the session gone. A symlink is not followed.
pub fn companion_dir(path: &Path) -> Option<PathBuf> {
    let dir = companion_path(path)?;
    std::fs::symlink_metadata(&dir)
        .is_ok_and(|m| m.is_dir())
        .then_some(dir)
}

/// Where [`companion_dir`] of `path` would be.
fn companion_path(path: &Path) -> Option<PathBuf> {
    (path.extension()? == "jsonl").then(|| path.with_extension(""))
}

/// The companion folders of sessions just moved to the trash, in one call
/// (one by one when it fails). A folder the trash refuses stays: its
/// session is in the trash all the same.
fn trash_companions(moved: &[&Path]) {
    let dirs: Vec<PathBuf> = moved.iter().filter_map(|p| companion_dir(p)).collect();
    if !dirs.is_empty() && trash::delete_all(&dirs).is_err() {
        for d in dirs.iter().filter(|d| d.exists()) {
            let _ = trash::delete(d);
        }
    }
}

/// After a move of `path` was refused: the placeholders it left in the
/// slots that were free `before` it.
fn remove_refused_placeholders(path: &Path, before: &[(PathBuf, PathBuf)]) {
    for slot in home_trash_slots(path) {
        if !before.contains(&slot) {
            remove_placeholder(&slot, false);
        }
    }
}

/// Files handed to the trash in one call by [`trash_many`].
pub const TRASH_CALL: usize = 64;

/// Moves each of `paths` (at most [`TRASH_CALL`] for one call to count)
/// to the system trash; each result is that file's own, in order. The
/// trash is asked for them all in one call (each call resolves the trash
/// folder and reads the mount table again). A call that fails has moved
/// the files before the one that failed: those are gone from their place,
/// and the others are asked for one by one, so that each failure is its
/// own (and leaves nothing in the trash, as [`trash`]).
pub fn trash_many(paths: &[PathBuf]) -> Vec<Result<(), trash::Error>> {
    if paths.iter().any(|p| mirror_refusal(p).is_some()) {
        return paths.iter().map(|p| trash(p)).collect();
    }
    // A file missing already fails a call before it moves anything.
    let present: Vec<bool> = paths
        .iter()
        .map(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    let asked: Vec<&PathBuf> = paths
        .iter()
        .zip(&present)
        .filter_map(|(p, &here)| here.then_some(p))
        .collect();
    let before: Vec<Vec<(PathBuf, PathBuf)>> = asked.iter().map(|p| home_trash_slots(p)).collect();
    let all_moved = asked.is_empty() || trash::delete_all(&asked).is_ok();
    if !all_moved {
        for (p, before) in asked.iter().zip(&before) {
            if std::fs::symlink_metadata(p).is_ok() {
                remove_refused_placeholders(p, before);
            }
        }
    }
    let mut companions_of: Vec<&Path> = Vec::new();
    let results = paths
        .iter()
        .zip(present)
        .map(|(p, here)| {
            if here && (all_moved || std::fs::symlink_metadata(p).is_err()) {
                companions_of.push(p);
                Ok(())
            } else {
                // Moves its companion itself.
                trash(p)
            }
        })
        .collect();
    trash_companions(&companions_of);
    results
}

/// The names the home trash has taken for a file named as `path` is
/// (`name`, `name.2`, … as the freedesktop trash numbers them), each as
/// its entry in `files` and its info, up to the first free one.
fn home_trash_slots(path: &Path) -> Vec<(PathBuf, PathBuf)> {
    let (Some(trash), Some(name)) = (dirs::data_dir(), path.file_name()) else {
        return Vec::new();
    };
    let trash = trash.join("Trash");
    let mut out = Vec::new();
    for k in 1usize.. {
        let mut n = name.to_os_string();
        if k > 1 {
            n.push(format!(".{k}"));
        }
        let file = trash.join("files").join(&n);
        n.push(".trashinfo");
        let info = trash.join("info").join(n);
        if std::fs::symlink_metadata(&file).is_err() && std::fs::symlink_metadata(&info).is_err() {
            break;
        }
        out.push((file, info));
    }
    out
}

/// Removes a trash entry that holds no file: an empty regular file in
/// `files` whose info is gone (a refused move) or, with `with_info`, is
/// there too (a move cut off between the two). Anything else is left.
fn remove_placeholder((file, info): &(PathBuf, PathBuf), with_info: bool) {
    let info_there = std::fs::symlink_metadata(info).is_ok();
    if info_there != with_info {
        return;
    }
    match std::fs::symlink_metadata(file) {
        Ok(m) if m.is_file() && m.len() == 0 => {
            let _ = std::fs::remove_file(file);
        }
        Ok(_) => return,
        Err(_) => {}
    }
    if with_info {
        let _ = std::fs::remove_file(info);
    }
}

/// Deletes `path` for good.
pub fn delete_permanently(path: &Path) -> std::io::Result<()> {
    refuse_mirror_io(path)?;
    std::fs::remove_file(path)
}

#[derive(Debug)]
pub enum RestoreError {
    Trash(trash::Error),
    /// Nothing trashed from that path is in the trash now.
    NotInTrash,
    /// This platform's trash cannot be restored from by a program.
    Unsupported,
    /// arbor's note of the batch could not be written.
    Note(std::io::Error),
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
        let resolved: Vec<Option<PathBuf>> = paths.iter().map(|p| resolved(p)).collect();
        // Each session's companion folder comes back with it.
        let companions: Vec<PathBuf> = paths
            .iter()
            .chain(resolved.iter().flatten())
            .filter_map(|p| companion_path(p))
            .collect();
        let wanted: HashSet<&Path> = paths
            .iter()
            .map(PathBuf::as_path)
            .chain(resolved.iter().flatten().map(PathBuf::as_path))
            .chain(companions.iter().map(PathBuf::as_path))
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
                        trash::os_limited::restore_all([item]).map_err(RestoreError::Trash)?;
                        let companion = [Some(p), r.as_ref()]
                            .into_iter()
                            .flatten()
                            .filter_map(|p| companion_path(p))
                            .find_map(|c| newest.remove(&c));
                        // A folder standing in its place keeps it in the
                        // trash: the session is back all the same.
                        if let Some(c) = companion {
                            let _ = trash::os_limited::restore_all([c]);
                        }
                        Ok(())
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

/// `path` with its folder resolved: the trash records a path so (a store
/// reached through a symlink is recorded at the link's target), so that
/// spelling is looked for too.
fn resolved(path: &Path) -> Option<PathBuf> {
    path.parent()
        .and_then(|d| d.canonicalize().ok())
        .zip(path.file_name())
        .map(|(dir, name)| dir.join(name))
}

/// For a batch cut off that began at `since_ms`, of `paths` (its files
/// not noted as moved): those in the trash since then and gone from their
/// place (the move under way when it stopped). The placeholder of a move
/// cut off before its file moved (an empty file in the trash, with its
/// info, for a file still in its place) is removed. Only the trash's
/// items for `paths` are looked at. `Err`: the trash could not be listed.
pub(crate) fn settle_cut_off_moves(
    paths: &[PathBuf],
    since_ms: i64,
) -> Result<Vec<PathBuf>, RestoreError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    #[cfg(all(
        unix,
        not(target_os = "macos"),
        not(target_os = "ios"),
        not(target_os = "android")
    ))]
    {
        use std::collections::HashMap;
        let mut wanted: HashMap<PathBuf, &PathBuf> = HashMap::new();
        for p in paths {
            wanted.insert(p.clone(), p);
            if let Some(r) = resolved(p) {
                wanted.insert(r, p);
            }
        }
        // Deletion dates are whole seconds.
        let since = since_ms.div_euclid(1000) - 1;
        let mut moved = Vec::new();
        for item in trash::os_limited::list().map_err(RestoreError::Trash)? {
            let Some(&p) = wanted.get(&item.original_path()) else {
                continue;
            };
            if item.time_deleted < since {
                continue;
            }
            if std::fs::symlink_metadata(p).is_err() {
                if !moved.contains(p) {
                    moved.push(p.clone());
                }
                continue;
            }
            let info = PathBuf::from(&item.id);
            let file = info
                .parent()
                .and_then(Path::parent)
                .zip(info.file_stem())
                .map(|(trash, name)| trash.join("files").join(name));
            if let Some(file) = file {
                remove_placeholder(&(file, info), true);
            }
        }
        Ok(moved)
    }
    #[cfg(not(all(
        unix,
        not(target_os = "macos"),
        not(target_os = "ios"),
        not(target_os = "android")
    )))]
    {
        // No listing to look in: a file gone from its place moved.
        let _ = since_ms;
        Ok(paths
            .iter()
            .filter(|p| std::fs::symlink_metadata(p).is_err())
            .cloned()
            .collect())
    }
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

/// Opens that note to note each move of a batch (see `journal`).
pub(crate) fn open_note_to_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().append(true).open(path)
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
    fn nothing_is_written_in_a_remote_s_mirror() {
        let dir = tempfile::tempdir().unwrap();
        let mirror = dir.path().join("cache/remotes/devbox/home/s");
        std::fs::create_dir_all(&mirror).unwrap();
        arbor_util::hosts::register(&mirror, "devbox");
        let p = mirror.join("a.jsonl");
        std::fs::write(&p, "{}\n").unwrap();
        let why = mirror_refusal(&p).unwrap();
        assert!(why.contains("session on devbox"), "{why}");
        assert!(open_to_append(&p).is_err());
        assert!(write_atomic(&p, b"x").is_err());
        assert!(write_atomic_new(&mirror.join("b.jsonl"), b"x").is_err());
        assert!(write_new(&mirror.join("c.md"), true, |f| f.write_all(b"x")).is_err());
        assert!(trash(&p).is_err());
        assert!(trash_many(std::slice::from_ref(&p))[0].is_err());
        assert!(delete_permanently(&p).is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"{}\n");
        assert!(!mirror.join("b.jsonl").exists() && !mirror.join("c.md").exists());
        // Beside the mirror, all as before.
        assert!(mirror_refusal(&dir.path().join("cache/remotes/devbox/state.json")).is_none());
    }

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

    /// The check of the length and the cut after a failed append happen
    /// under a lock every arbor append takes: another arbor process's line
    /// waits until both are done (it is never cut with arbor's half line).
    #[cfg(unix)]
    #[test]
    fn an_append_waits_for_another_appenders_lock() {
        use rustix::fs::{flock, FlockOperation};
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{}\n").unwrap();
        // Another arbor process, between its failed write and its cut.
        let other = std::fs::File::open(&p).unwrap();
        flock(&other, FlockOperation::LockExclusive).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let path = p.clone();
        let appender = std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            append_line(&mut f, b"{\"a\":1}\n").unwrap();
            tx.send(()).unwrap();
        });
        // Held off while the lock is held, however long that is.
        assert!(rx
            .recv_timeout(std::time::Duration::from_millis(500))
            .is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"{}\n");
        flock(&other, FlockOperation::Unlock).unwrap();
        rx.recv().unwrap();
        appender.join().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{}\n{\"a\":1}\n");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_at_a_temporary_name_is_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let planted = dir.path().join(".s.jsonl.arbor-tmp-1-0123456789abcdef");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let e = create_new_nofollow(&planted).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(create_new_nofollow(&dangling).is_err());
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // The names cannot be guessed: two in a row differ.
        let target = dir.path().join("s.jsonl");
        let (_, a) = new_temp_beside(&target, "s").unwrap();
        let (_, b) = new_temp_beside(&target, "s").unwrap();
        assert_ne!(a, b);
        assert!(a
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(".s.jsonl.arbor-tmp-"));
    }

    #[test]
    fn a_new_file_is_made_only_where_nothing_is() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.jsonl");
        write_atomic_new(&p, b"one\n").unwrap();
        let e = write_atomic_new(&p, b"two\n").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"one\n");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_partial_line_is_cut_only_while_the_file_is_as_seen() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.jsonl");
        std::fs::write(&p, b"{}\n{\"type\":\"label\"").unwrap();
        let mut f = OpenOptions::new().read(true).append(true).open(&p).unwrap();
        // Grown since it was seen at 10 bytes: being written, left alone.
        assert!(!cut_dead_partial_line(&mut f, 3, 10).unwrap());
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 18);
        assert!(cut_dead_partial_line(&mut f, 3, 18).unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"{}\n");
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
