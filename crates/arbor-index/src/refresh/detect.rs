//! Which files changed: each listed file's `stat` against its stored row,
//! and the files to read again, continue or drop.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;

use rayon::prelude::*;
use rusqlite::{params, Connection};

use crate::codec::{self, fingerprint, FxBuild};
use crate::db::{key_path, Keys};
use crate::stored::StoredRows;
use crate::{Error, RefreshStats, Result};
use arbor_session::info::SessionInfo;
use arbor_session::Error as SessionError;
use arbor_store::scan::{ScanProblem, SessionFile};

use super::keys::{file_keys, Cursors, FolderRanges, ListedKeys};
use super::rows::{
    finished, parent_bytes, Cached, Found, Seen, StoredLook, SELECT_CACHED, SELECT_CACHED_IN,
};
use super::write::Writer;
use super::{UnchangedRows, Wanted};

/// What identifies a version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
}

impl Stat {
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stat {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime_ns: meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            Stat {
                dev: 0,
                ino: 0,
                size: meta.len(),
                mtime_ns,
            }
        }
    }
}

/// Stats every file, on all cores.
#[cfg(not(target_os = "linux"))]
fn stat_all(files: &[SessionFile]) -> Vec<std::io::Result<Stat>> {
    files
        .par_iter()
        .map(|f| std::fs::metadata(&f.path).map(|m| Stat::of(&m)))
        .collect()
}

/// Stats every file, on all cores, relative to its folder: a warm list of
/// 10,000 sessions is mostly these calls, and a full path lookup per file
/// costs the kernel several times a lookup of one name. Files of a folder
/// are listed together, so each worker opens a folder once per run of them.
#[cfg(target_os = "linux")]
fn stat_all(files: &[SessionFile]) -> Vec<std::io::Result<Stat>> {
    files
        .par_iter()
        .map_init(
            || None::<(PathBuf, std::io::Result<linux::Dir>)>,
            |dir, f| {
                let Some((parent, name)) = arbor_util::dir_and_name(&f.path) else {
                    return std::fs::metadata(&f.path).map(|m| Stat::of(&m));
                };
                if dir.as_ref().is_none_or(|(p, _)| p != parent) {
                    *dir = Some((parent.to_path_buf(), linux::Dir::open(parent)));
                }
                match dir.as_ref().map(|(_, d)| d) {
                    Some(Ok(d)) => d.stat(name),
                    _ => std::fs::metadata(&f.path).map(|m| Stat::of(&m)),
                }
            },
        )
        .collect()
}

#[cfg(target_os = "linux")]
pub(super) mod linux {
    use std::ffi::OsStr;
    use std::io;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, Mode, OFlags};

    use super::Stat;

    /// A folder opened only to look names up in it.
    pub struct Dir(OwnedFd);

    impl Dir {
        pub fn open(path: &Path) -> io::Result<Dir> {
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            Ok(Dir(rustix::fs::open(path, flags, Mode::empty())?))
        }

        /// Like `std::fs::metadata` (symlinks followed) of `name` in here.
        pub fn stat(&self, name: &OsStr) -> io::Result<Stat> {
            let st = rustix::fs::statat(&self.0, name, AtFlags::empty())?;
            // The field types vary with the architecture.
            Ok(Stat {
                dev: st.st_dev as u64,
                ino: st.st_ino as u64,
                size: st.st_size as u64,
                mtime_ns: (st.st_mtime as i64).saturating_mul(1_000_000_000)
                    + st.st_mtime_nsec as i64,
            })
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn same_stat_as_std() {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("a.jsonl");
            std::fs::write(&p, b"{}\n").unwrap();
            let ours = super::Dir::open(dir.path())
                .unwrap()
                .stat(p.file_name().unwrap())
                .unwrap();
            let std = super::Stat::of(&std::fs::metadata(&p).unwrap());
            assert_eq!(ours, std);
            let missing = super::Dir::open(dir.path()).unwrap().stat("nope".as_ref());
            assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
        }
    }
}

/// How much of the file a fingerprint covers.
const FP_BYTES: u64 = 4096;

fn read_range(f: &mut File, off: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut v = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(off))?;
    f.read_exact(&mut v)?;
    Ok(v)
}

/// Fingerprints of the first and the last (up to) 4 KiB before `end`.
pub(super) fn fingerprints(f: &mut File, end: u64) -> std::io::Result<(i64, i64)> {
    let head = read_range(f, 0, end.min(FP_BYTES))?;
    let tail = read_range(f, end.saturating_sub(FP_BYTES), end.min(FP_BYTES))?;
    Ok((fingerprint(&head), fingerprint(&tail)))
}

/// [`Found::info`] of an unchanged row that is not sent ([`Wanted`]).
const NOT_SENT: u32 = u32::MAX;

/// What the index has for the files given, found before any is opened.
pub(super) struct Looked {
    /// Each file's stat.
    stats: Vec<std::io::Result<Stat>>,
    /// Each file's stored row.
    found: Vec<Option<Found>>,
    /// The decoded rows, in the order read: one array of rows, moved into
    /// the listing's order in place (a box per row, then a copy into the
    /// batch, held two of them at 100,000 sessions).
    rows: Vec<SessionInfo>,
    /// The rows kept as stored, instead ([`UnchangedRows::Keep`]).
    stored: StoredRows,
    /// Keys of stored files not among those given.
    pub(super) unlisted: Vec<Vec<u8>>,
}

/// A stat per file (on all cores) while the stored rows are read, and
/// decoded or kept as they are when the caller wants the unchanged files'
/// rows.
#[allow(clippy::type_complexity)]
pub(super) fn look(
    conn: &Connection,
    files: &[SessionFile],
    folders: Option<&FolderRanges>,
    unchanged: &UnchangedRows,
    wanted: Wanted,
    pre: Option<StoredLook>,
) -> Result<Looked, Error> {
    let decode = matches!(unchanged, UnchangedRows::Send);
    let keep = matches!(unchanged, UnchangedRows::Keep(_));
    let mut stored = StoredRows::default();
    let mut found: Vec<Option<Found>> = Vec::new();
    let mut unlisted: Vec<Vec<u8>> = Vec::new();
    let mut decoded: Vec<SessionInfo> = Vec::new();
    let mut k = Keys::new();
    let (stats, read) = std::thread::scope(|scope| {
        // The stats first: the files' keys and their table are made beside
        // them (~50 ms at 100,000 files).
        let stats = scope.spawn(|| {
            let v = stat_all(files);
            arbor_util::log::line("index stats done");
            v
        });
        // A look matched with these same files stands for the table.
        let pre = pre.filter(|p| p.found.len() == files.len());
        let keys: Vec<Cow<[u8]>> = match pre {
            Some(_) => Vec::new(),
            None => files.iter().map(|f| k.key(&f.path)).collect(),
        };
        let listed = ListedKeys::new_here(files, &keys);
        let mut next = Cursors::default();
        let read = (|| -> Result<()> {
            if let Some(pre) = pre {
                found = pre.found;
                unlisted = pre.unlisted;
                return Ok(());
            }
            found = (0..files.len()).map(|_| None).collect();
            // Read, not mapped: at 100,000 sessions the table's pages in the
            // map were 146 MB of the process's resident set, and reading
            // them cost no more time than faulting them in.
            crate::db::set_mmap(conn, false)?;
            let mut each = |r: &rusqlite::Row| -> rusqlite::Result<()> {
                let key = r.get_ref(1)?.as_blob()?;
                let Some(i) = listed.get_after(key, &mut next).map(|i| i as usize) else {
                    unlisted.push(key.to_vec());
                    return Ok(());
                };
                let c = Seen::read(r)?;
                let state = r.get_ref(9)?.as_blob_or_null()?;
                let row = r.get_ref(10)?.as_blob_or_null()?;
                let blob = row.map(|b| (b, true)).or(state.map(|b| (b, false)));
                let info = match blob {
                    _ if c.problem.is_some() => None,
                    Some((b, is_row)) if keep => stored.keep(b, is_row),
                    Some((b, is_row)) if decode => codec::decode_with(b, wanted.usage)
                        .and_then(|i| finished(i, is_row))
                        .map(|info| {
                            if !wanted.sends(&info) {
                                return NOT_SENT;
                            }
                            if decoded.capacity() == 0 && !wanted.labelled_only {
                                decoded.reserve_exact(files.len());
                            }
                            decoded.push(info);
                            (decoded.len() - 1) as u32
                        }),
                    _ => None,
                };
                found[i] = Some(Found {
                    cached: c,
                    info,
                    has_blob: row.is_some() || state.is_some(),
                });
                Ok(())
            };
            match folders {
                // One project's folder of a store of many: at 100,000
                // sessions in ten folders, reading the whole table for one
                // folder's 10,000 rows was half of `arbor list`'s time.
                Some(ranges) => {
                    let mut st = conn.prepare(SELECT_CACHED_IN)?;
                    for (from, to) in ranges {
                        let mut rows = st.query((from, to))?;
                        while let Some(r) = rows.next()? {
                            each(r)?;
                        }
                    }
                }
                None => {
                    let mut st = conn.prepare(SELECT_CACHED)?;
                    let mut rows = st.query([])?;
                    while let Some(r) = rows.next()? {
                        each(r)?;
                    }
                }
            }
            arbor_util::log::line("index sql read");
            crate::db::set_mmap(conn, true)
        })();
        // A panic on the stat thread is this thread's.
        let stats = stats
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        drop(listed);
        (stats, read)
    });
    read?;
    let looked = Looked {
        stats,
        found,
        rows: decoded,
        stored,
        unlisted,
    };
    Ok(looked)
}

/// Reads the resumable state of the changed files that have one (their
/// rows were read without it), when it is still the version looked at (a
/// writer elsewhere may have moved it on). A state that cannot be read
/// leaves the file to be read from the start, which is always right.
pub(super) fn fill_states(conn: &Connection, jobs: &mut [Job]) {
    let sql = "SELECT state FROM files
               WHERE id = ?1 AND parsed = ?2 AND head_fp = ?3 AND tail_fp = ?4";
    let Ok(mut st) = conn.prepare(sql) else {
        for (_, c, _) in jobs.iter_mut() {
            *c = None;
        }
        return;
    };
    for (_, c, _) in jobs.iter_mut() {
        if let Some(c) = c {
            c.state = st
                .query_row(params![c.id, c.parsed as i64, c.head_fp, c.tail_fp], |r| {
                    r.get::<_, Option<Vec<u8>>>(0)
                })
                .ok()
                .flatten();
        }
    }
}

/// A file to read: its stored row when it has one, and its size.
pub(super) type Job<'f> = (&'f SessionFile, Option<Cached>, u64);

/// Sorts the files out by what the index has: the rows of unchanged files
/// go to `on_rows` in one batch (decoded by [`look`]; only counted when
/// the caller has them already, `!emit_unchanged`), problems stored with
/// an unchanged file and files that cannot be looked at go to the stats,
/// and the files to read are returned (their states still to be read).
pub(super) fn sort_out<'f>(
    files: &'f [SessionFile],
    looked: Looked,
    mut unchanged_rows: UnchangedRows,
    stats: &mut RefreshStats,
    on_rows: Option<&mut dyn FnMut(Vec<SessionInfo>)>,
) -> Vec<Job<'f>> {
    let Looked {
        stats: stat_result,
        found,
        rows: mut decoded,
        stored,
        ..
    } = looked;
    let unchanged = |st: &std::io::Result<Stat>, fd: Option<&Found>| match (st, fd) {
        (Ok(st), Some(fd)) => fd.cached.stat == *st && fd.cached.problem.is_none() && fd.has_blob,
        _ => false,
    };
    // Positions in `decoded` of the rows sent, in the files' order.
    let mut first: Vec<usize> = Vec::with_capacity(files.len());
    let mut kept = 0usize;
    let mut jobs: Vec<Job> = Vec::new();
    for (n, ((f, stat), mut fd)) in files.iter().zip(stat_result).zip(found).enumerate() {
        let same = unchanged(&stat, fd.as_ref());
        match &mut unchanged_rows {
            UnchangedRows::Skip | UnchangedRows::Looked(_) if same => {
                kept += 1;
                continue;
            }
            UnchangedRows::Send if same && fd.as_ref().and_then(|fd| fd.info) == Some(NOT_SENT) => {
                kept += 1;
                continue;
            }
            UnchangedRows::Keep(u) if same => {
                if let Some(k) = fd.as_mut().and_then(|fd| fd.info.take()) {
                    u.of_file.push((n as u32, k));
                    kept += 1;
                    continue;
                }
            }
            _ => {}
        }
        let (fd, info) = match fd {
            Some(mut fd) => {
                let info = fd.info.take().filter(|_| same).map(|k| {
                    let i = &mut decoded[k as usize];
                    i.path = f.path.as_path().into();
                    i.agent = f.agent;
                    k as usize
                });
                (Some(fd), info)
            }
            None => (None, None),
        };
        match (stat, fd, info) {
            (Ok(_), _, Some(info)) => first.push(info),
            (Ok(st), Some(fd), None) if fd.cached.stat == st && fd.cached.problem.is_some() => {
                stats.problems.push(ScanProblem {
                    path: f.path.clone(),
                    reason: fd.cached.problem.map(String::from).unwrap_or_default(),
                })
            }
            (Ok(st), fd, None) => jobs.push((f, fd.map(|fd| fd.cached.into_cached()), st.size)),
            (Err(source), _, _) => stats.problems.push(ScanProblem {
                path: f.path.clone(),
                reason: SessionError::Read {
                    path: f.path.clone(),
                    source,
                }
                .to_string(),
            }),
        }
    }
    stats.cached = first.len() + kept;
    if !first.is_empty() {
        // The rows sent first, in that order, the others after them
        // (then cut off): moved in place.
        let n = first.len();
        let mut used = vec![false; decoded.len()];
        for &k in &first {
            used[k] = true;
        }
        first.extend((0..decoded.len()).filter(|&k| !used[k]));
        drop(used);
        arbor_store::listing::apply_order(&mut decoded, first);
        decoded.truncate(n);
        if let Some(on_rows) = on_rows {
            on_rows(decoded);
        }
    }
    if let UnchangedRows::Keep(u) = unchanged_rows {
        u.rows = stored;
    }
    jobs
}

/// Drops the rows of files that are gone: their folder was listed without
/// them (it holds one of `files`), or the folder itself is gone. Rows of
/// other stores are kept.
pub(super) fn remove_gone(
    writer: &mut Writer,
    files: &[SessionFile],
    unlisted: &[Vec<u8>],
    stats: &mut RefreshStats,
) -> Result<()> {
    if unlisted.is_empty() {
        return Ok(());
    }
    let keys = file_keys(files);
    let dirs: HashSet<&[u8], FxBuild> = keys.iter().filter_map(|k| parent_bytes(k)).collect();
    let mut dir_exists: HashMap<Vec<u8>, bool, FxBuild> = HashMap::default();
    for key in unlisted {
        let Some(parent) = parent_bytes(key) else {
            continue;
        };
        let gone = dirs.contains(parent)
            || !*dir_exists
                .entry(parent.to_vec())
                .or_insert_with(|| key_path(parent).is_dir());
        if gone && writer.delete_path(&key_path(key))? {
            stats.removed += 1;
        }
    }
    Ok(())
}
