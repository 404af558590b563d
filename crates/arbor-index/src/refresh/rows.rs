//! The stored rows: what the index holds of each file, read back without
//! opening the files.

use std::path::Path;

use rayon::prelude::*;
use rusqlite::{Connection, OptionalExtension};

use crate::codec::{self};
use crate::db::{key_path, path_key, Keys};
use crate::{Error, Result};
use arbor_session::info::{InfoScanner, SessionInfo};
use arbor_store::scan::SessionFile;
use arbor_util::shared_path::SharedPath;

use super::detect::Stat;
use super::keys::{Cursors, FolderRanges, ListedKeys};

/// A row as stored.
#[derive(Clone, Debug)]
pub struct Cached {
    pub id: i64,
    pub stat: Stat,
    pub parsed: u64,
    pub head_fp: i64,
    pub tail_fp: i64,
    pub state: Option<Vec<u8>>,
    pub row: Option<Vec<u8>>,
    pub problem: Option<String>,
}

impl Cached {
    /// The list row this cached entry stands for.
    pub fn info(&self, file: &SessionFile) -> Option<SessionInfo> {
        match (&self.row, &self.state) {
            (Some(row), _) => finish_info(codec::decode(row)?, true, file),
            (None, Some(state)) => finish_info(codec::decode(state)?, false, file),
            (None, None) => None,
        }
    }
}

pub(super) const SELECT_CACHED: &str =
    "SELECT id, path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp, state, row, problem FROM files";

/// [`SELECT_CACHED`] of the rows whose paths are in `?1..?2`, through the
/// index of paths (see [`folder_ranges`]).
pub(super) const SELECT_CACHED_IN: &str =
    "SELECT id, path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp, state, row, problem
     FROM files WHERE path >= ?1 AND path < ?2";

/// [`SELECT_CACHED`] in the table's order, for [`stored_rows`] (which
/// binds a limit it does not use here).
const SELECT_CACHED_ALL: &str =
    "SELECT id, path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp, state, row, problem
     FROM files NOT INDEXED WHERE ?1 = ?1";

/// Every stored row's fingerprint as the read of the stored rows found
/// them ([`stored_rows`] with a look), matched to the listed files, for the
/// refresh after it ([`UnchangedRows::Looked`]): at 100,000 sessions
/// reading the table a second time for them was ~230 ms of the picker's
/// load, and matching them to the files again another ~50.
#[derive(Default)]
pub struct StoredLook {
    /// Per listed file, its stored row.
    pub(super) found: Vec<Option<Found>>,
    /// Keys of stored files not among those listed.
    pub(super) unlisted: Vec<Vec<u8>>,
}

/// A stored row found for a listed file, decoded as it was read (no copy
/// of the blobs is kept: at 100,000 sessions an arena of them and the
/// pages it faulted in were most of a warm listing's time and memory).
pub(super) struct Found {
    /// A changed file's state is read again ([`fill_states`]).
    pub(super) cached: Seen,
    /// Where in [`Looked::rows`] the list row it stands for is (without
    /// its path and agent); `None` when not decoded (not asked for, or
    /// damaged).
    pub(super) info: Option<u32>,
    /// It has a `state` or a `row`.
    pub(super) has_blob: bool,
}

/// A [`Cached`] without its blobs, as [`look`] keeps one per listed file
/// (88 bytes, not 136: ~5 MB at 100,000 files, held while the picker
/// loads and while the labels screen reads its rows).
pub(super) struct Seen {
    id: i64,
    pub(super) stat: Stat,
    parsed: u64,
    head_fp: i64,
    tail_fp: i64,
    pub(super) problem: Option<Box<str>>,
}

// One per listed file: growing it grows the picker's load at 100,000.
const _: () = assert!(std::mem::size_of::<Option<Found>>() <= 96);

impl Seen {
    pub(super) fn read(r: &rusqlite::Row) -> rusqlite::Result<Seen> {
        let c = cached_from_row_lite(r)?;
        Ok(Seen {
            id: c.id,
            stat: c.stat,
            parsed: c.parsed,
            head_fp: c.head_fp,
            tail_fp: c.tail_fp,
            problem: c.problem.map(String::into_boxed_str),
        })
    }

    /// The stored row to read a changed file from (its state read later).
    pub(super) fn into_cached(self) -> Cached {
        Cached {
            id: self.id,
            stat: self.stat,
            parsed: self.parsed,
            head_fp: self.head_fp,
            tail_fp: self.tail_fp,
            state: None,
            row: None,
            problem: self.problem.map(String::from),
        }
    }
}

/// `state` (a scanner before `finish`) or `row` (finished) → the list row.
fn finish_info(info: SessionInfo, is_row: bool, file: &SessionFile) -> Option<SessionInfo> {
    let mut info = finished(info, is_row)?;
    info.path = file.path.as_path().into();
    info.agent = file.agent;
    Some(info)
}

/// The list row of a decoded `state` or `row`, without its path and agent.
pub(super) fn finished(info: SessionInfo, is_row: bool) -> Option<SessionInfo> {
    if is_row {
        Some(info)
    } else {
        InfoScanner::resume(info).finish().ok()
    }
}

/// The parent folder of a path key (everything before the last separator).
pub(super) fn parent_bytes(key: &[u8]) -> Option<&[u8]> {
    let sep = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    let i = key.iter().rposition(sep)?;
    Some(&key[..i.max(1)])
}

/// Like `cached_from_row` without reading the `state` and `row` blobs.
fn cached_from_row_lite(r: &rusqlite::Row) -> rusqlite::Result<Cached> {
    Ok(Cached {
        id: r.get(0)?,
        stat: Stat {
            dev: r.get::<_, i64>(2)? as u64,
            ino: r.get::<_, i64>(3)? as u64,
            size: r.get::<_, i64>(4)? as u64,
            mtime_ns: r.get(5)?,
        },
        parsed: r.get::<_, i64>(6)? as u64,
        head_fp: r.get(7)?,
        tail_fp: r.get(8)?,
        state: None,
        row: None,
        problem: r.get(11)?,
    })
}

fn cached_from_row(r: &rusqlite::Row) -> rusqlite::Result<(Vec<u8>, Cached)> {
    let mut c = cached_from_row_lite(r)?;
    c.state = r.get(9)?;
    c.row = r.get(10)?;
    Ok((r.get(1)?, c))
}

pub fn load_one(conn: &Connection, path: &Path) -> Result<Option<Cached>> {
    let sql = format!("{SELECT_CACHED} WHERE path = ?1");
    Ok(conn
        .query_row(&sql, [path_key(path)], |r| cached_from_row(r).map(|c| c.1))
        .optional()?)
}

/// Stored rows of the sessions under `roots` (most recently written files
/// first, at most `limit` of them), without looking at the files: what
/// the picker paints before it has looked at the disk. Paths are given as
/// a listing of those roots would give them. Only the files a listing
/// could find are included (a per-project root's folders, a flat root).
/// The rows come in the batches they were decoded in, in order.
/// With `within`, only the newest `limit` of each of those folders
/// (through the index of paths: a folder's rows at most, whatever the
/// store's size, where the index of times would pass every newer row of
/// the other folders).
pub fn stored_rows<R: Send>(
    conn: &Connection,
    roots: &[arbor_store::StoreRoot],
    (limit, within): (Option<usize>, Option<&FolderRanges>),
    f: &(dyn Fn(StoredRow<'_>) -> Option<R> + Sync),
    look: Option<(&mut StoredLook, &ListedKeys)>,
) -> Result<Vec<Vec<R>>, Error> {
    let mut k = Keys::new();
    let is_sep = |b: u8| b == b'/' || (cfg!(windows) && b == b'\\');
    // A root given with a trailing separator keys like the same root
    // without it (a file's key never has two separators in a row).
    let root_keys: Vec<(Vec<u8>, &arbor_store::StoreRoot)> = roots
        .iter()
        .map(|r| {
            let mut key = k.key(&r.path).into_owned();
            while key.len() > 1 && key.last().is_some_and(|&b| is_sep(b)) {
                key.pop();
            }
            (key, r)
        })
        .collect();
    // Columns of the path, the state and the row.
    let (sql, cols) = match (limit, &look) {
        // Every row, with what a refresh compares.
        (None, Some(_)) => (SELECT_CACHED_ALL, [1, 9, 10]),
        (_, None) if within.is_some() => (
            "SELECT path, state, row FROM files WHERE id IN
             (SELECT id FROM files INDEXED BY files_sessions
              WHERE problem IS NULL AND path >= ?2 AND path < ?3
              ORDER BY mtime_ns DESC LIMIT ?1)",
            [0, 1, 2],
        ),
        (Some(_), _) => (
            "SELECT path, state, row FROM files WHERE problem IS NULL
             ORDER BY mtime_ns DESC LIMIT ?1",
            [0, 1, 2],
        ),
        // In the table's order: through the index of times (which SQLite
        // picks for the `WHERE`), each row was a seek to a page of its own,
        // 460 ms for 100,000 rows where the table's pages in order take 50.
        (None, None) => (
            "SELECT path, state, row FROM files NOT INDEXED
             WHERE problem IS NULL AND ?1 = ?1",
            [0, 1, 2],
        ),
    };
    // All of them read, not mapped (see `look`).
    if limit.is_none() {
        crate::db::set_mmap(conn, false)?;
    }
    let files = look.as_ref().map_or(&[][..], |(_, listed)| listed.files);
    let decode = |(file, bytes, is_row): &(RowFile, Vec<u8>, bool)| {
        let (file, listed) = match file {
            RowFile::Found(file) => (file, None),
            RowFile::Listed(i) => (&files[*i as usize], Some(*i)),
        };
        f(StoredRow {
            file,
            listed,
            bytes,
            is_row: *is_row,
        })
    };
    // The rows are decoded on the other cores as SQLite reads them (read
    // first and decoded after, 10,000 rows reached the picker ~30 ms later).
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(RowFile, Vec<u8>, bool)>>(4);
    std::thread::scope(|s| {
        let decoder = s.spawn(move || {
            // A batch's rows collected on their own, and left so: extending
            // one vector as batches came copied every row each time it grew
            // (~95 ms of 100,000 rows' CPU), and moving them into one at
            // the end was a copy the caller's own pass can make.
            let mut batches: Vec<Vec<R>> = Vec::new();
            for batch in rx {
                batches.push(batch.par_iter().filter_map(decode).collect());
            }
            batches
        });
        let read_all = limit.is_none();
        let limit = limit.map_or(-1, |l| l as i64);
        let read = match within.filter(|_| look.is_none()) {
            Some(ranges) => {
                let read = ranges.iter().try_for_each(|(from, to)| {
                    let tx = tx.clone();
                    read_stored(
                        conn,
                        (sql, cols),
                        (limit, from, to),
                        &root_keys,
                        is_sep,
                        tx,
                        None,
                    )
                });
                drop(tx);
                read
            }
            None => read_stored(conn, (sql, cols), [limit], &root_keys, is_sep, tx, look),
        };
        if read_all {
            crate::db::set_mmap(conn, true)?;
        }
        read?;
        Ok(decoder
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// One stored row as [`stored_rows`] reads it, not decoded yet: the
/// caller decodes it ([`StoredRow::info`]) or makes what it keeps straight
/// from the bytes ([`StoredRow::view`]: the picker's rows, for which a
/// decoded row was a dozen strings made and dropped per session).
pub struct StoredRow<'a> {
    file: &'a SessionFile,
    /// Which of the listed files it is (read with a look).
    listed: Option<u32>,
    bytes: &'a [u8],
    /// A finished row (`row`), not a scanner's state (`state`).
    is_row: bool,
}

impl<'a> StoredRow<'a> {
    /// The file the row is of (under the store root a listing finds it).
    pub fn file(&self) -> &'a SessionFile {
        self.file
    }

    /// Which of the files listed it is, when read with them
    /// ([`crate::Index::stored_rows_looked`]).
    pub fn listed(&self) -> Option<usize> {
        self.listed.map(|i| i as usize)
    }

    /// The row decoded, at `path` (the file's); `None` when the bytes do
    /// not read as a row.
    pub fn info(&self, path: SharedPath) -> Option<SessionInfo> {
        let mut info = finished(codec::decode_with(self.bytes, false)?, self.is_row)?;
        info.path = path;
        info.agent = self.file.agent;
        Some(info)
    }

    /// The row read in place: what [`StoredRow::info`] decodes, field for
    /// field (its path and agent are the file's).
    pub fn view(&self) -> Option<codec::RowView<'a>> {
        let mut view = codec::view(self.bytes)?;
        if !self.is_row {
            view.finish_state();
        }
        Some(view)
    }
}

/// The file of a stored row read: found under a store root by its key, or
/// the listed file it was matched with.
enum RowFile {
    Found(SessionFile),
    Listed(u32),
}

/// Reads the stored rows `sql` selects (see [`stored_rows`]) and sends
/// them to `tx` a batch at a time, undecoded. With a look, only the rows
/// of listed files are sent.
fn read_stored(
    conn: &Connection,
    (sql, [path_col, state_col, row_col]): (&str, [usize; 3]),
    params: impl rusqlite::Params,
    root_keys: &[(Vec<u8>, &arbor_store::StoreRoot)],
    is_sep: impl Fn(u8) -> bool,
    tx: std::sync::mpsc::SyncSender<Vec<(RowFile, Vec<u8>, bool)>>,
    mut look: Option<(&mut StoredLook, &ListedKeys)>,
) -> Result<(), Error> {
    /// Rows per batch sent to be decoded.
    const BATCH: usize = 512;
    let mut st = conn.prepare(sql)?;
    let mut rows = st.query(params)?;
    let mut raw: Vec<(RowFile, Vec<u8>, bool)> = Vec::with_capacity(BATCH);
    if let Some((look, listed)) = look.as_mut() {
        look.found = (0..listed.files.len()).map(|_| None).collect();
    }
    let mut next = Cursors::default();
    while let Some(r) = rows.next()? {
        let key = r
            .get_ref(path_col)?
            .as_blob()
            .map_err(rusqlite::Error::from)?;
        let blob_at =
            |i: usize| -> rusqlite::Result<Option<&[u8]>> { Ok(r.get_ref(i)?.as_blob_or_null()?) };
        let (state, row) = (blob_at(state_col)?, blob_at(row_col)?);
        let file = match look.as_mut() {
            Some((look, listed)) => {
                let Some(i) = listed.get_after(key, &mut next) else {
                    look.unlisted.push(key.to_vec());
                    continue;
                };
                let cached = Seen::read(r)?;
                let problem = cached.problem.is_some();
                look.found[i as usize] = Some(Found {
                    cached,
                    info: None,
                    has_blob: state.is_some() || row.is_some(),
                });
                if problem {
                    continue;
                }
                RowFile::Listed(i)
            }
            None => match found_under_root(key, root_keys, &is_sep) {
                Some(file) => RowFile::Found(file),
                None => continue,
            },
        };
        let (blob, is_row) = match (row, state) {
            (Some(row), _) => (row.to_vec(), true),
            (None, Some(state)) => (state.to_vec(), false),
            (None, None) => continue,
        };
        raw.push((file, blob, is_row));
        if raw.len() == BATCH {
            // The decoder is gone only when it panicked (the join says so).
            if tx
                .send(std::mem::replace(&mut raw, Vec::with_capacity(BATCH)))
                .is_err()
            {
                return Ok(());
            }
        }
    }
    if !raw.is_empty() {
        let _ = tx.send(raw);
    }
    Ok(())
}

/// The file of a stored row's key, under the store root a listing would
/// find it in; `None` when no root holds it.
fn found_under_root(
    key: &[u8],
    root_keys: &[(Vec<u8>, &arbor_store::StoreRoot)],
    is_sep: impl Fn(u8) -> bool,
) -> Option<SessionFile> {
    use arbor_store::StoreKind;
    // The root a listing would find the file under (nested roots: the
    // one whose layout fits the file's depth).
    let (rel, root) = root_keys.iter().find_map(|(rk, root)| {
        let rest = key.strip_prefix(rk.as_slice())?;
        let (&sep, rel) = rest.split_first()?;
        let depth = rel.iter().filter(|&&b| is_sep(b)).count();
        let fits = match root.kind {
            StoreKind::Flat => depth == 0,
            StoreKind::PerProject => depth == 1,
            StoreKind::Dated => depth == 0 || depth == 3,
        } || (root.agent == arbor_session::Agent::Claude && depth == 3);
        (is_sep(sep) && fits).then_some((rel, *root))
    })?;
    Some(SessionFile {
        path: root.path.join(key_path(rel)),
        agent: root.agent,
    })
}
