//! Bringing the index up to date with the files: what changed, parsing only
//! what is new, and writing it back transactionally.
//!
//! The steps, each in its own file: [`detect`] sorts the listed files into
//! unchanged, grown and changed by their stored rows ([`rows`], found by
//! [`keys`]); [`read`] parses the changed ones on all cores ([`parse`]) and
//! hands them to the [`write`]r; [`merge`] then folds small segments and
//! compacts the text file.

mod detect;
mod keys;
mod merge;
mod parse;
mod read;
mod rows;
mod write;

use std::path::Path;
use std::time::Instant;

use rusqlite::Connection;

use crate::behind::{self, BuildLock, Deferred};
use crate::stored::Unchanged;
use crate::{Error, RefreshStats};
use arbor_session::info::SessionInfo;
use arbor_store::scan::SessionFile;

pub use detect::Stat;
use detect::{fill_states, look, remove_gone, sort_out, Job};
pub(crate) use keys::{dir_ranges, folder_ranges};
pub use keys::{file_keys, FolderRanges, ListedKeys, SharedFolders};
pub use merge::{maybe_compact_text, maybe_merge};
pub use parse::parse_file;
use read::{read_changed, read_plain};
pub use rows::{load_one, stored_rows, StoredLook, StoredRow};
pub use write::{check_text_file, pair_segment, Writer, TEXT_SEGMENT};

/// Refreshes the index for `files`; see [`super::Index::refresh`].
/// With `folders` (the files are those folders' listing: one project's),
/// only the stored rows under them are read, and only those can be found
/// gone; else the whole table is read, in its order, and the rows of
/// vanished folders are dropped too.
pub fn refresh(
    conn: &Connection,
    db_path: &Path,
    files: &[SessionFile],
    folders: Option<&FolderRanges>,
    mut unchanged: UnchangedRows,
    (wanted, build): (Wanted, Build),
    on_rows: &mut OnRows,
) -> Result<RefreshStats, Error> {
    let t0 = Instant::now();
    let lap = |what: &str| {
        if arbor_util::log::enabled() {
            arbor_util::log::line(format!("index {what}"));
        }
    };
    let mut stats = RefreshStats {
        files: files.len(),
        ..Default::default()
    };
    check_text_file(conn, db_path)?;
    let pre = match &mut unchanged {
        UnchangedRows::Looked(look) => Some(std::mem::take(look)),
        _ => None,
    };
    let mut looked = look(conn, files, folders, &unchanged, wanted, pre)?;
    lap("rows loaded");
    let unlisted = std::mem::take(&mut looked.unlisted);
    let on_unchanged = on_rows
        .unchanged
        .as_mut()
        .map(|f| &mut **f as &mut dyn FnMut(Vec<SessionInfo>));
    let mut jobs = sort_out(files, looked, unchanged, &mut stats, on_unchanged);
    fill_states(conn, &mut jobs);
    lap("files checked");
    let _lock = match build.plan(db_path, &jobs) {
        Plan::Here(lock) => lock,
        Plan::Behind(deferred) => {
            let to = match on_rows.behind.as_mut() {
                Some(behind) => &mut **behind,
                None => &mut *on_rows.read,
            };
            read_plain(jobs, wanted, &mut stats, to);
            lap("read behind");
            stats.deferred = Some(deferred);
            stats.elapsed = t0.elapsed();
            return Ok(stats);
        }
    };
    let mut writer = Writer::new(conn, db_path.to_path_buf());
    remove_gone(&mut writer, files, &unlisted, &mut stats)?;
    lap("removals");
    let result = read_changed(&mut writer, jobs, wanted, &mut stats, on_rows.read);
    lap("parsed");
    // Segments and dead text only grow when a refresh writes: one that
    // wrote nothing (a warm run) has nothing to merge or compact.
    let wrote = writer.in_tx;
    let result = result.and_then(|_| writer.commit());
    drop(writer);
    lap("committed");
    let result = result.and_then(|_| match wrote {
        true => maybe_merge(conn, db_path)
            .and_then(|_| maybe_compact_text(conn, db_path, 64 << 20).map(|_| ())),
        false => Ok(()),
    });
    if let Err(e) = result {
        // The rows were delivered; only the cache could not be updated.
        stats.write_error = Some(e.plain_text());
    }
    lap("merged");
    stats.elapsed = t0.elapsed();
    Ok(stats)
}

/// Who builds what a refresh finds the index lacks (see [`super::behind`]).
#[derive(Clone, Copy, Default)]
pub struct Build {
    /// Bytes past which it is left to a build behind (`None`: built here).
    pub behind: Option<u64>,
    /// This process holds the build lock already.
    pub holding: bool,
}

enum Plan {
    /// Indexed here, holding the build lock when it could be had.
    Here(Option<BuildLock>),
    Behind(Deferred),
}

impl Build {
    fn plan(self, db_path: &Path, jobs: &[Job]) -> Plan {
        if jobs.is_empty() || self.holding {
            return Plan::Here(None);
        }
        // A file continued from its stored state costs what it grew by.
        let bytes: u64 = jobs
            .iter()
            .map(|(_, c, size)| match c {
                Some(c) if c.state.is_some() => size.saturating_sub(c.parsed),
                _ => *size,
            })
            .sum();
        let deferred = |builder| {
            Plan::Behind(Deferred {
                files: jobs.len(),
                bytes,
                builder,
            })
        };
        match self.behind {
            Some(over) => match behind::builder(db_path) {
                Some(pid) => deferred(Some(pid)),
                None if bytes > over => deferred(None),
                None => Plan::Here(None),
            },
            // A build: others that can wait for it do (the lock may be
            // held by one: then both build, as before there was a lock).
            None if bytes > behind::threshold() => {
                Plan::Here(BuildLock::try_take(db_path).ok().flatten())
            }
            None => Plan::Here(None),
        }
    }
}

/// Which rows a refresh sends, and with what.
#[derive(Clone, Copy, Default)]
pub struct Wanted {
    /// With their usage by model and hour (`arbor stats`).
    pub usage: bool,
    /// Only those with labels (the others are counted, not sent).
    pub labelled_only: bool,
}

impl Wanted {
    fn sends(&self, row: &SessionInfo) -> bool {
        !self.labelled_only || !row.labels.is_empty()
    }
}

/// Where a refresh sends its rows: those of unchanged files (one batch,
/// before any file is read; none but with [`UnchangedRows::Send`]) and
/// those read from new or changed files.
pub struct OnRows<'a> {
    pub unchanged: Option<&'a mut dyn FnMut(Vec<SessionInfo>)>,
    pub read: &'a mut dyn FnMut(Vec<SessionInfo>),
    /// The rows of files left to a build behind (see [`Build`]), when not
    /// to `read`: the index will not have them to be read back.
    pub behind: Option<&'a mut dyn FnMut(Vec<SessionInfo>)>,
}

/// What a refresh does with the rows of the files it finds unchanged.
pub enum UnchangedRows<'u> {
    /// Decodes them and sends them first.
    Send,
    /// Only counts them: the caller has them.
    Skip,
    /// As `Skip`, the caller having read them with what the refresh
    /// compares ([`StoredLook`]), so the table is not read again.
    Looked(StoredLook),
    /// Keeps them as stored, to be read in place.
    Keep(&'u mut Unchanged),
}

impl UnchangedRows<'_> {
    /// The same choice again, for a second refresh; rows looked at before
    /// go to the first (a second one, after a rebuild, reads the table).
    pub fn again(&mut self) -> UnchangedRows<'_> {
        if let UnchangedRows::Looked(look) = self {
            let look = std::mem::take(look);
            *self = UnchangedRows::Skip;
            return UnchangedRows::Looked(look);
        }
        match self {
            UnchangedRows::Send => UnchangedRows::Send,
            UnchangedRows::Skip | UnchangedRows::Looked(_) => UnchangedRows::Skip,
            UnchangedRows::Keep(u) => UnchangedRows::Keep(u),
        }
    }
}
