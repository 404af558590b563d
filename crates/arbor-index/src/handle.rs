//! The [`Index`] handle: one connection to the index, and what it keeps
//! between refreshes and searches (the search cache, which rows a refresh
//! sends, the build lock).

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use arbor_search::Query;
use arbor_session::info::SessionInfo;
use arbor_store::scan::SessionFile;

use crate::refresh::{self, StoredRow};
use crate::{
    behind, db, default_dir, search, stored, BodyHits, Error, IndexStats, RefreshStats, FILE_NAME,
};

pub struct Index {
    conn: Connection,
    path: PathBuf,
    /// Kept between searches; dropped after this connection's own writes
    /// (other connections' commits are noticed through `data_version`).
    search_cache: std::cell::RefCell<Option<search::SearchCache>>,
    /// Set by [`Index::warm_search`]: this index will answer many searches,
    /// so it reads the text file through a map kept between them.
    many_searches: std::cell::Cell<bool>,
    /// Which rows a refresh sends, and with what (see
    /// [`Index::set_extras`], [`Index::set_labelled_only`]).
    wanted: refresh::Wanted,
    /// See [`Index::set_folders_only`].
    folders_only: bool,
    /// The folders of the files of the last refresh, when
    /// [`Index::set_folders_only`]: searches answer for their sessions.
    folders: Option<refresh::SharedFolders>,
    /// See [`Index::build_behind`].
    behind: Option<u64>,
    /// Held by this index's process for a build (see [`Index::take_build_lock`]).
    build_lock: Option<behind::BuildLock>,
}

/// Where the rows go of a refresh that sends none of the unchanged files
/// (the caller has or keeps them).
fn only_read<'a>(on_read: &'a mut dyn FnMut(Vec<SessionInfo>)) -> refresh::OnRows<'a> {
    refresh::OnRows {
        unchanged: None,
        read: on_read,
        behind: None,
    }
}

impl Index {
    /// The index under the cache dir (see [`default_dir`]).
    pub fn open_default() -> Result<Index, Error> {
        let dir = default_dir().ok_or(Error::NoCacheDir)?;
        Index::open(&dir.join(FILE_NAME))
    }

    /// The index in the database file `path` (created when missing; rebuilt
    /// when corrupt or from another arbor version).
    pub fn open(path: &Path) -> Result<Index, Error> {
        Ok(Index {
            conn: db::open(path)?,
            path: path.to_path_buf(),
            search_cache: Default::default(),
            many_searches: Default::default(),
            wanted: Default::default(),
            folders_only: false,
            folders: None,
            behind: None,
            build_lock: None,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// SQLite's `quick_check` of every page of the database (structure,
    /// records, free list: not the values, which the rows' sums check),
    /// then every word segment's checksum; the index is started again
    /// when either fails. `arbor index` runs it,
    /// not every command: it reads the whole file. `Some(what failed)`
    /// when it rebuilt.
    pub fn check_pages(&mut self) -> Result<Option<String>, Error> {
        let found = self.conn.prepare("PRAGMA quick_check").and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()
        });
        let what = match found {
            Ok(lines) if lines.len() == 1 && lines[0] == "ok" => {
                match crate::rowsum::segments_intact(&self.conn) {
                    Ok(true) => return Ok(None),
                    Ok(false) => "a word segment failed its checksum".to_string(),
                    Err(e) => {
                        let e = Error::Sqlite(e);
                        if !db::is_broken(&e) {
                            return Err(e);
                        }
                        e.to_string()
                    }
                }
            }
            Ok(lines) => lines.into_iter().next().unwrap_or_default(),
            Err(e) => {
                let e = Error::Sqlite(e);
                if !db::is_broken(&e) {
                    return Err(e);
                }
                e.to_string()
            }
        };
        self.clear()?;
        Ok(Some(what))
    }

    /// A refresh that finds more than `over` bytes it lacks, or another
    /// process building the index, reads those files' rows from them,
    /// writes nothing, and says so in [`RefreshStats::deferred`]: the
    /// caller answers and leaves the build to another process (see
    /// [`behind`]). Unset, a refresh builds whatever it lacks.
    pub fn build_behind(&mut self, over: u64) {
        self.behind = Some(over);
    }

    /// Undoes [`Index::build_behind`]: refreshes build what they lack.
    pub fn build_here(&mut self) {
        self.behind = None;
    }

    /// Lets the build lock go (see [`Index::take_build_lock`]).
    pub fn let_go_build_lock(&mut self) {
        self.build_lock = None;
    }

    /// Whether a refresh may leave what it lacks to a build behind it.
    pub fn builds_behind(&self) -> bool {
        self.behind.is_some()
    }

    /// The bytes past which a refresh leaves what it lacks to a build
    /// behind it (see [`Index::build_behind`]).
    pub fn behind_over(&self) -> Option<u64> {
        self.behind
    }

    /// Holds the build lock from now on (waiting for another builder to
    /// finish when `wait`); `false` when another process holds it.
    /// Refreshes of an index that does not hold it take it for a build.
    pub fn take_build_lock(&mut self, wait: bool) -> Result<bool, Error> {
        if self.build_lock.is_some() {
            return Ok(true);
        }
        let io = |source| Error::Io {
            path: behind::lock_path(&self.path),
            source,
        };
        self.build_lock = match wait {
            true => Some(behind::BuildLock::wait(&self.path).map_err(io)?),
            false => behind::BuildLock::try_take(&self.path).map_err(io)?,
        };
        Ok(self.build_lock.is_some())
    }

    /// Deletes everything; the next refresh reads every file.
    pub fn clear(&mut self) -> Result<(), Error> {
        self.search_cache.get_mut().take();
        let placeholder = Connection::open_in_memory()?;
        drop(std::mem::replace(&mut self.conn, placeholder));
        db::delete(&self.path).map_err(|source| Error::Io {
            path: self.path.clone(),
            source,
        })?;
        self.conn = db::open(&self.path)?;
        Ok(())
    }

    /// Whether rows from [`Index::refresh`] carry their usage (for `arbor
    /// stats`). Off by default: a listing leaves it out of the rows it did
    /// not read again, which keeps it fast. Labels always come (the query's
    /// `label:` looks at them; most rows have none).
    pub fn set_extras(&mut self, on: bool) {
        self.wanted.usage = on;
    }

    /// Whether a refresh sends only the rows that have labels (the labels
    /// screen and `arbor labels`): the others are looked at and counted,
    /// not kept. At 100,000 sessions, ~4,500 rows of 90,000.
    pub fn set_labelled_only(&mut self, on: bool) {
        self.wanted.labelled_only = on;
    }

    /// Whether the files a refresh is given are some folders' listing (one
    /// project's, `Scope::Project`): then the refresh reads only the stored
    /// rows under those folders (at 100,000 sessions in ten folders, the
    /// whole table read for one folder's rows was half of `arbor list`'s
    /// time), and the searches after it answer only for their sessions
    /// (loading every session's path was ~90 ms of a query's). Rows of
    /// other folders are left to a refresh of the whole store.
    pub fn set_folders_only(&mut self, on: bool) {
        self.folders_only = on;
    }

    /// Brings the index up to date with `files` and streams their rows.
    ///
    /// `on_rows` first gets every row whose file is unchanged, in one batch,
    /// before any file is opened; then the rows of new and changed files in
    /// batches as they are parsed (on all cores, largest files first). Rows
    /// arrive in no particular order. Meanwhile the index is written in
    /// transactions. Rows of files not in `files` are removed when their
    /// folder was listed (it contains a file of `files`) or no longer exists;
    /// rows of other folders (another store, another scope) are kept.
    ///
    /// Problems (not a session, unreadable) are returned in the stats rather
    /// than as errors. An error means nothing was delivered (the caller then
    /// reads the files itself); a failure to *write* after rows were
    /// delivered is reported in [`RefreshStats::write_error`].
    pub fn refresh(
        &mut self,
        files: &[SessionFile],
        on_rows: &mut dyn FnMut(Vec<SessionInfo>),
    ) -> Result<RefreshStats, Error> {
        let on_rows = std::cell::RefCell::new(on_rows);
        self.refresh_split(
            files,
            &mut |rows| (on_rows.borrow_mut())(rows),
            &mut |rows| (on_rows.borrow_mut())(rows),
            None,
        )
    }

    /// [`Index::refresh`], the rows of unchanged files (one batch, first)
    /// going to `on_unchanged` and those read from their files to
    /// `on_read`: a caller that cannot hold every row read (a first run)
    /// can let those go and read them back, but not those a refresh left
    /// to a build behind ([`Index::build_behind`]), which go to `on_behind`
    /// when given.
    pub fn refresh_split(
        &mut self,
        files: &[SessionFile],
        on_unchanged: &mut dyn FnMut(Vec<SessionInfo>),
        on_read: &mut dyn FnMut(Vec<SessionInfo>),
        on_behind: Option<&mut dyn FnMut(Vec<SessionInfo>)>,
    ) -> Result<RefreshStats, Error> {
        let on_rows = refresh::OnRows {
            unchanged: Some(on_unchanged),
            read: on_read,
            behind: on_behind.map(|f| f as &mut dyn FnMut(Vec<SessionInfo>)),
        };
        self.refresh_inner(files, refresh::UnchangedRows::Send, on_rows)
    }

    /// Like [`Index::refresh`], but the rows of unchanged files are kept
    /// as stored (`unchanged`, read in place by a listing) and `on_rows`
    /// gets only those of new or changed files.
    /// Rows left to a build behind go to `on_behind` (as in
    /// [`Index::refresh_split`]).
    pub fn refresh_stored(
        &mut self,
        files: &[SessionFile],
        unchanged: &mut stored::Unchanged,
        on_rows: &mut dyn FnMut(Vec<SessionInfo>),
        on_behind: Option<&mut dyn FnMut(Vec<SessionInfo>)>,
    ) -> Result<RefreshStats, Error> {
        let mut rows = only_read(on_rows);
        rows.behind = on_behind.map(|f| f as &mut dyn FnMut(Vec<SessionInfo>));
        self.refresh_inner(files, refresh::UnchangedRows::Keep(unchanged), rows)
    }

    fn refresh_inner(
        &mut self,
        files: &[SessionFile],
        mut unchanged: refresh::UnchangedRows,
        mut on_rows: refresh::OnRows,
    ) -> Result<RefreshStats, Error> {
        self.search_cache.get_mut().take();
        let wanted = self.wanted;
        self.folders = self
            .folders_only
            .then(|| std::sync::Arc::new(refresh::folder_ranges(&refresh::file_keys(files))));
        let ranges = self.folders.clone();
        let folders = ranges.as_deref().map(Vec::as_slice);
        let build = refresh::Build {
            behind: self.behind,
            holding: self.build_lock.is_some(),
        };
        match refresh::refresh(
            &self.conn,
            &self.path,
            files,
            folders,
            unchanged.again(),
            (wanted, build),
            &mut on_rows,
        ) {
            Err(e) if db::is_broken(&e) => {
                // Nothing was delivered yet (reading the rows failed): rebuild.
                self.clear()?;
                refresh::refresh(
                    &self.conn,
                    &self.path,
                    files,
                    folders,
                    unchanged,
                    (wanted, build),
                    &mut on_rows,
                )
            }
            other => other,
        }
    }

    /// Like [`Index::refresh`], but `on_rows` gets only the rows of new or
    /// changed files: the caller already has the others (from
    /// [`Index::stored_rows`]). After a rebuild of a broken index every row
    /// is new.
    pub fn refresh_changes(
        &mut self,
        files: &[SessionFile],
        on_rows: &mut dyn FnMut(Vec<SessionInfo>),
    ) -> Result<RefreshStats, Error> {
        self.refresh_inner(files, refresh::UnchangedRows::Skip, only_read(on_rows))
    }

    /// [`Index::refresh_changes`] after [`Index::stored_rows_looked`] with
    /// no other connection's commit in between (see
    /// [`Index::data_version`]): the rows it read are compared, not read
    /// again. `files` are those the stored rows were read with.
    pub fn refresh_changes_looked(
        &mut self,
        files: &[SessionFile],
        look: refresh::StoredLook,
        on_rows: &mut dyn FnMut(Vec<SessionInfo>),
    ) -> Result<RefreshStats, Error> {
        self.refresh_inner(
            files,
            refresh::UnchangedRows::Looked(look),
            only_read(on_rows),
        )
    }

    /// The stored rows of the sessions under `roots`, without looking at
    /// the files (so possibly out of date; [`Index::refresh_changes`] then
    /// brings the news): the most recently written `limit` files, or all.
    ///
    /// A damaged index is deleted here (the refresh that follows rebuilds
    /// it) and gives no rows.
    pub fn stored_rows(
        &mut self,
        roots: &[arbor_store::StoreRoot],
        limit: Option<usize>,
    ) -> Result<Vec<SessionInfo>, Error> {
        self.stored_rows_map(roots, (limit, None), &|row| {
            row.info(row.file().path.as_path().into())
        })
    }

    /// [`Index::stored_rows`] of the `limit` most recently written files
    /// of each of `dirs` (a project's folders, `store::project_dirs_of`):
    /// read through the index of paths, so their cost is that of the
    /// folders' rows, however many newer ones the others hold.
    pub fn stored_rows_in(
        &mut self,
        roots: &[arbor_store::StoreRoot],
        dirs: &[PathBuf],
        limit: usize,
    ) -> Result<Vec<SessionInfo>, Error> {
        let ranges = refresh::dir_ranges(dirs);
        self.stored_rows_map(roots, (Some(limit), Some(&ranges)), &|row| {
            row.info(row.file().path.as_path().into())
        })
    }

    /// [`Index::stored_rows`], each row given to `f` as it is decoded (on
    /// the decoding threads), keeping what it returns.
    pub fn stored_rows_map<R: Send>(
        &mut self,
        roots: &[arbor_store::StoreRoot],
        (limit, within): (Option<usize>, Option<&refresh::FolderRanges>),
        f: &(dyn Fn(StoredRow<'_>) -> Option<R> + Sync),
    ) -> Result<Vec<R>, Error> {
        match refresh::stored_rows(&self.conn, roots, (limit, within), f, None) {
            Ok(batches) => {
                let mut rows = Vec::with_capacity(batches.iter().map(Vec::len).sum());
                for b in batches {
                    rows.extend(b);
                }
                Ok(rows)
            }
            Err(e) if db::is_broken(&e) => {
                self.clear()?;
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    /// The stored rows of the files listed (`listed`), as
    /// [`Index::stored_rows_map`] gives them (each row knows its file:
    /// [`StoredRow::listed`]), with what [`Index::refresh_changes_looked`]
    /// compares those files with. The rows come in the batches they were
    /// made in (in order): the caller's pass over them is their one copy.
    pub fn stored_rows_looked<R: Send>(
        &mut self,
        roots: &[arbor_store::StoreRoot],
        listed: &refresh::ListedKeys,
        f: &(dyn Fn(StoredRow<'_>) -> Option<R> + Sync),
    ) -> Result<(Vec<Vec<R>>, refresh::StoredLook), Error> {
        let mut look = refresh::StoredLook::default();
        match refresh::stored_rows(
            &self.conn,
            roots,
            (None, None),
            f,
            Some((&mut look, listed)),
        ) {
            Ok(rows) => Ok((rows, look)),
            Err(e) if db::is_broken(&e) => {
                self.clear()?;
                Ok((Vec::new(), refresh::StoredLook::default()))
            }
            Err(e) => Err(e),
        }
    }

    /// Changes whenever another connection commits to the index.
    pub fn data_version(&self) -> Result<i64, Error> {
        Ok(self
            .conn
            .query_row("PRAGMA data_version", [], |r| r.get(0))?)
    }

    /// The watcher's path: re-reads `file` (only its appended bytes when it
    /// just grew) and returns its row, marked with the file's agent; `None`
    /// when the file is gone or is not a session.
    pub fn update_file(&mut self, file: &SessionFile) -> Result<Option<SessionInfo>, Error> {
        self.search_cache.get_mut().take();
        let path = file.path.as_path();
        let is_file = std::fs::metadata(path).is_ok_and(|m| m.is_file());
        let mut w = refresh::Writer::new(&self.conn, self.path.clone());
        if !is_file {
            w.delete_path(path)?;
            w.commit()?;
            return Ok(None);
        }
        let cached = refresh::load_one(&self.conn, path)?;
        if let Some(c) = &cached {
            let m = std::fs::metadata(path).map_err(|source| Error::Io {
                path: path.to_path_buf(),
                source,
            })?;
            if refresh::Stat::of(&m) == c.stat {
                return Ok(c.info(file));
            }
        }
        let parsed = match refresh::parse_file(file, cached.as_ref()) {
            Ok(p) => p,
            Err(_) => return Ok(None),
        };
        w.put(&parsed)?;
        w.commit()?;
        drop(w);
        refresh::maybe_merge(&self.conn, &self.path)?;
        Ok(parsed.row.filter(|_| parsed.state.is_ok()))
    }

    /// Which sessions match each body term of `query` (see [`BodyHits`]);
    /// `None` when the query has no term that looks at message bodies.
    /// Loads what searches need, so the first keystroke does not wait for
    /// it (the picker's search worker calls this when it starts). From then
    /// on stored text is read through a map kept between searches.
    pub fn warm_search(&self) -> Result<(), Error> {
        if !self.many_searches.replace(true) {
            // A search before this one opened the text file to read spans.
            if let Some(c) = self.search_cache.borrow_mut().as_mut() {
                c.forget_text();
            }
        }
        // Without SQLite's map: every page of it that a search reads
        // (posting lists, rows) would stay in the resident set for as long
        // as the searcher lives (+40 MB at 10,000 sessions after a few
        // queries, up to the map's 256 MB on a big index); through its
        // small page cache, keystrokes measured no slower.
        db::set_mmap(&self.conn, false)?;
        search::warm(
            &self.conn,
            &self.path,
            true,
            &mut self.search_cache.borrow_mut(),
            self.folders.as_ref(),
        )
    }

    /// Checks the checksums of about `budget` more bytes of the stored text
    /// a long-lived searcher reads through its map (after
    /// [`Index::warm_search`]), so that the searches which read it do not
    /// wait for that. The picker's search worker calls this while it has
    /// nothing else to do. True while some text is left to check.
    pub fn check_text(&self, budget: usize) -> bool {
        self.many_searches.get()
            && self
                .search_cache
                .borrow_mut()
                .as_mut()
                .is_some_and(|c| c.check_text(budget))
    }

    /// Whether this index's last searches answered every body term of
    /// `query` (then asking it again reads nothing).
    pub fn remembers(&self, query: &Query) -> bool {
        search::remembers(&self.search_cache.borrow(), query)
    }

    /// Like [`Index::search`]; gives up with [`Error::Cancelled`] as
    /// soon as `cancel` says so (it is asked while stored text is read, the
    /// only slow part).
    pub fn search_cancellable(
        &self,
        query: &Query,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Option<BodyHits>, Error> {
        self.search_in(query, None, cancel)
    }

    pub fn search(&self, query: &Query) -> Result<Option<BodyHits>, Error> {
        self.search_in(query, None, &|| false)
    }

    /// Like [`Index::search`], limited to the sessions in `within` (the
    /// rows on screen): `re:` terms then only read those sessions' text.
    pub fn search_within(
        &self,
        query: &Query,
        within: &[&Path],
    ) -> Result<Option<BodyHits>, Error> {
        self.search_in(query, Some(search::Within::Paths(within)), &|| false)
    }

    /// A body search through this index's connection and memo.
    fn search_in(
        &self,
        query: &Query,
        within: Option<search::Within>,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Option<BodyHits>, Error> {
        if !self.many_searches.get() {
            // Posting lists read through SQLite's map stay in the resident
            // set until the process ends: a one-shot search of a short
            // word at 100,000 sessions read ~100 MB of them that way.
            db::set_mmap(&self.conn, false)?;
        }
        search::search(
            &self.conn,
            &self.path,
            self.many_searches.get(),
            &mut self.search_cache.borrow_mut(),
            self.folders.as_ref(),
            query,
            within,
            cancel,
        )
    }

    /// Which of `paths` (given with their places) have no text in the
    /// index: a body search through it cannot have looked at them (not
    /// indexed yet, or never written). Gives their places.
    pub fn unindexed<'p>(
        &self,
        paths: impl IntoIterator<Item = (u32, &'p Path)>,
    ) -> Result<Vec<u32>, Error> {
        search::unindexed(
            &self.conn,
            &self.path,
            &mut self.search_cache.borrow_mut(),
            self.folders.as_ref(),
            &mut paths.into_iter(),
        )
    }

    /// Hands `f` every session's path as this index's search answers name
    /// it (the same shared string each time), to map to its rows ahead of
    /// the first answer (see `Searcher::idle`) and to replace by its own
    /// allocation of the same path, so that one copy of each is kept.
    /// Returns the table of paths the answers will carry.
    pub fn share_paths(
        &self,
        f: &mut dyn FnMut(&mut std::sync::Arc<std::ffi::OsStr>),
    ) -> Result<std::sync::Arc<arbor_search::PathsById>, Error> {
        search::share_paths(
            &self.conn,
            &self.path,
            &mut self.search_cache.borrow_mut(),
            self.folders.as_ref(),
            f,
        )
    }

    /// Rewrites the text file without dead text (of files gone or read
    /// again) when that is over half of it and at least `min_dead` bytes.
    /// Refreshes do this by themselves above 64 MiB. Returns whether it did.
    pub fn compact(&mut self, min_dead: u64) -> Result<bool, Error> {
        self.search_cache.get_mut().take();
        refresh::maybe_compact_text(&self.conn, &self.path, min_dead)
    }

    /// Settles what the last writes left in the write-ahead log into the
    /// database file, so that the size [`Index::stats`] reports is what
    /// stays on disk: right after a build at 100,000 sessions the log held
    /// ~110 MB that closing the index then folded in (1.60 GB reported,
    /// 1.49 GB left).
    pub fn settle(&self) -> Result<(), Error> {
        db::checkpoint(&self.conn)
    }

    /// Files the index has a row for (sessions or not): how far a build
    /// is, as another process looks at it.
    pub fn files_count(&self) -> Result<usize, Error> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM files", [], |r| r.get(0))?;
        Ok(n as usize)
    }

    /// Files the index has a row for in the folders of `files`: how much
    /// of a listing it could answer (a project's folder may be missing
    /// from an index that holds the others').
    pub fn files_held_in_folders_of(&self, files: &[SessionFile]) -> Result<usize, Error> {
        let ranges = refresh::folder_ranges(&refresh::file_keys(files));
        let mut st = self
            .conn
            .prepare_cached("SELECT count(*) FROM files WHERE path >= ?1 AND path < ?2")?;
        let mut n = 0usize;
        for (from, to) in &ranges {
            let held: i64 = st.query_row((from, to), |r| r.get(0))?;
            n += held as usize;
        }
        Ok(n)
    }

    pub fn stats(&self) -> Result<IndexStats, Error> {
        let c = &self.conn;
        let (sessions, not_sessions, store_bytes, text_bytes): (i64, i64, i64, i64) = c.query_row(
            "SELECT count(*) FILTER (WHERE problem IS NULL),
                        count(*) FILTER (WHERE problem IS NOT NULL),
                        coalesce(sum(size), 0), coalesce(sum(text_bytes), 0)
                 FROM files",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
        let segments: i64 = c.query_row("SELECT count(*) FROM segments", [], |r| r.get(0))?;
        Ok(IndexStats {
            path: self.path.clone(),
            disk_bytes: db::disk_bytes(&self.path),
            sessions: sessions as u64,
            not_sessions: not_sessions as u64,
            store_bytes: store_bytes as u64,
            text_bytes: text_bytes as u64,
            segments: segments as u64,
            last_update: db::get_meta(c, "last_update")?,
            format: db::get_meta(c, "format")?.unwrap_or_default(),
        })
    }
}
