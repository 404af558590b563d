//! The picker's plan: the stored rows of the first screen at once, then the
//! others, then a look at every file through the index's refresh; on a
//! cold index a plain scan first, the index built behind it.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use arbor_index::{Index, ListedKeys, StoredLook};
use arbor_session::info::SessionInfo;
use arbor_store::listing::scan_file;
use arbor_store::{
    list_session_files, list_store, ScanProblem, Scope, SessionFile, StoreConfig, StoreListing,
};
use arbor_util::hash::FxBuild;
use arbor_util::shared_path::SharedPath;

use super::files::{fingerprint, project_first, read_files, scan, Fingerprint};
use super::{LoadEvent, LoadWarning, MakeRow, Out};

/// Rows of the first screen: the most recently written sessions.
const FIRST_SCREEN: usize = 200;

/// Rows of a project's first screen (see [`load_screen_for`]): more than
/// the store's, as its list hides internal sessions (workflow stages, a
/// Claude project's sub-agents), which a project that keeps every CI and
/// sub-agent run has many of among its newest. Its folder's rows are read
/// through the index of paths whatever the number kept: ~14 ms for a
/// 15,000-session folder.
const PROJECT_SCREEN: usize = 1000;

/// With at least this many files missing from the index, rows come from a
/// plain scan first and the index is built after them.
pub const COLD_FILES: usize = 64;

/// How often the scan of a cold index sends rows: a few batches per second
/// keep the list live without taking the scan's CPU.
const COLD_BATCH: Duration = Duration::from_millis(150);
/// How often the build of a cold index says how far it is.
const INDEXING_NOTE: Duration = Duration::from_millis(250);

/// The picker's plan, over the whole store. With the index (`None`: not
/// used; an error: a warning, then the files): its stored
/// rows at once (the newest first), then a look at every file, which
/// brings only what changed: new and grown sessions, and the ones gone.
/// Without it (off, unusable, or failing): every file read, in batches.
pub fn load_screen<M: MakeRow>(
    config: &StoreConfig,
    index: Option<Result<Index, arbor_index::Error>>,
    make: &M,
    emit: &mut dyn FnMut(LoadEvent<M::Row>),
) {
    load_screen_for(config, index, make, None, emit)
}

/// [`load_screen`] for a picker that opens on the sessions of `project`
/// (a cwd): the first screen also has that project's newest stored rows
/// when the store's newest are mostly other projects' (a project not
/// worked on lately had none until every row was in: 350–510 ms at 100,000
/// sessions).
pub fn load_screen_for<M: MakeRow>(
    config: &StoreConfig,
    index: Option<Result<Index, arbor_index::Error>>,
    make: &M,
    project: Option<&str>,
    emit: &mut dyn FnMut(LoadEvent<M::Row>),
) {
    load_screen_with(config, index, make, (project, None), emit)
}

/// Starts a builder of the index at the path given, in another process
/// (`false` when it could not).
pub type StartBuilder<'a> = &'a dyn Fn(&Path) -> bool;

/// [`load_screen_for`], leaving the build of a cold index to another
/// process (see [`arbor_index::behind`]): `start_builder` starts it (`false`
/// when it could not), unless one builds already. The rows come from a
/// plain scan as before; the loader waits for that build to end (sending
/// its progress as [`LoadEvent::Indexing`]) and then brings the index up to
/// date itself, which then reads only what changed meanwhile. The screen's
/// process holds the rows and the builder its buffers: at 100,000 sessions
/// the two had peaked at ~460 MB in one.
pub fn load_screen_behind<M: MakeRow>(
    config: &StoreConfig,
    index: Option<Result<Index, arbor_index::Error>>,
    make: &M,
    project: Option<&str>,
    start_builder: StartBuilder,
    emit: &mut dyn FnMut(LoadEvent<M::Row>),
) {
    load_screen_with(config, index, make, (project, Some(start_builder)), emit)
}

fn load_screen_with<M: MakeRow>(
    config: &StoreConfig,
    index: Option<Result<Index, arbor_index::Error>>,
    make: &M,
    (project, start_builder): (Option<&str>, Option<StartBuilder>),
    emit: &mut dyn FnMut(LoadEvent<M::Row>),
) {
    let mut out = Out {
        emit,
        watching: false,
        started: Instant::now(),
    };
    if let Some(index) = index {
        match index {
            Ok(mut index) => {
                out.log(format_args!("index open"));
                let mut load = IndexLoad::new(config, make);
                load.start_builder = start_builder;
                if let Some(cwd) = project {
                    let dirs = arbor_store::scan::project_dirs_of(config, cwd);
                    load.project = Some((cwd.to_string(), dirs));
                }
                match load.run(&mut index, &mut out) {
                    Ok(()) => return,
                    Err(e) => out.warn(LoadWarning::IndexUnavailable(e)),
                }
            }
            Err(e) => out.warn(LoadWarning::IndexUnavailable(e)),
        }
    }
    out.watch();
    let (files, problems) = list_session_files(config, &Scope::All);
    out.log(format_args!("{} files found", files.len()));
    let dirs = project.map_or_else(Vec::new, |cwd| {
        arbor_store::scan::project_dirs_of(config, cwd)
    });
    read_files(&files, problems, (true, &dirs), make, &mut out);
}

/// Waits for another process to build the index, started by `start`
/// unless one builds already, sending its progress (rows it has written
/// since, of the `of` missing) as the screen's build progress. Returns
/// `false` at once when none could be started: the refresh builds it here.
fn wait_for_build<R>(index: &Index, start: StartBuilder, of: usize, out: &mut Out<R>) -> bool {
    /// How long a builder just started may take to take the lock.
    const TO_START: Duration = Duration::from_secs(5);
    /// How long a builder may write nothing before the screen stops
    /// waiting and builds what is left itself (a builder stopped with
    /// Ctrl+Z would else keep the screen "Indexing" for ever).
    const STALLED: Duration = Duration::from_secs(60);
    let db = index.path();
    let before = index.files_count().unwrap_or(0);
    if arbor_index::behind::builder(db).is_none() && !start(db) {
        return false;
    }
    out.log(format_args!("the index is built by another process"));
    let (t, mut seen) = (Instant::now(), false);
    let (mut last, mut moved) = (0, Instant::now());
    loop {
        let written = index.files_count().map_or(0, |n| n.saturating_sub(before));
        if written != last {
            (last, moved) = (written, Instant::now());
        }
        match arbor_index::behind::builder(db) {
            Some(_) if moved.elapsed() > STALLED => {
                out.log(format_args!("the other process's build stalled"));
                break;
            }
            Some(_) => seen = true,
            None if seen || written >= of || t.elapsed() > TO_START => break,
            None => {}
        }
        out.send(LoadEvent::Indexing(Some((written.min(of), of))));
        std::thread::sleep(INDEXING_NOTE);
    }
    out.log(format_args!("the other process's build ended"));
    true
}

/// The screen's plan through the index; see [`load_screen`].
struct IndexLoad<'a, M: MakeRow> {
    config: &'a StoreConfig,
    make: &'a M,
    /// For rows made on the loader's own thread.
    cache: M::Cache,
    /// Paths of the first screen's rows (sent before the listing).
    first: Vec<SharedPath>,
    /// The project the screen opens on, and its folders (see
    /// [`load_screen_for`]).
    project: Option<(String, Vec<PathBuf>)>,
    /// How many of the first screen's rows that project's list shows.
    project_shown: usize,
    /// What the read of the stored rows found, for the refresh.
    look: Option<StoredLook>,
    /// See [`load_screen_behind`].
    start_builder: Option<StartBuilder<'a>>,
}

impl<'a, M: MakeRow> IndexLoad<'a, M> {
    fn new(config: &'a StoreConfig, make: &'a M) -> Self {
        IndexLoad {
            config,
            make,
            cache: M::Cache::default(),
            first: Vec::new(),
            project: None,
            project_shown: 0,
            look: None,
            start_builder: None,
        }
    }

    /// An error means the caller reads every file instead: rows sent from
    /// the index whose files are gone have been taken back by then.
    fn run(&mut self, index: &mut Index, out: &mut Out<M::Row>) -> Result<(), arbor_index::Error> {
        // Another process committing to the index after the stored rows are
        // read could make a sent row stale in a way the refresh (which only
        // compares files with the index) would not see: then every row is
        // sent again.
        let mut version = index.data_version()?;
        self.send_first_screen(index, out)?;
        self.send_project_screen(index, out);
        // The folders are listed before the other stored rows are made (on
        // all cores, ~45 ms at 100,000 files), so that making a row knows
        // which files are symlinks without looking at each or listing its
        // folder again; not before the first screen is drawn, which it
        // slowed by ~10 ms.
        let listing = list_store(self.config, &Scope::All);
        self.make.folders_listed(&listing.folders, &self.cache);
        out.log(format_args!("{} files listed", listing.files.len()));
        let StoreListing {
            files,
            mut problems,
            ..
        } = listing;
        let total = files.len();
        // Each stored row is matched with its listed file once, as it is
        // read; the refresh compares them as matched. Rows of files not
        // listed are not sent (of the first screen's, taken back).
        let keys = arbor_index::file_keys(&files);
        let listed = ListedKeys::new(&files, &keys);
        let mut was_shown = vec![false; total];
        let mut first_gone = Vec::new();
        for path in std::mem::take(&mut self.first) {
            match listed.find(&path) {
                Some(i) => was_shown[i] = true,
                None => first_gone.push(path),
            }
        }
        if let Err(e) = self.send_rest(index, &listed, &mut was_shown, out) {
            for path in first_gone {
                out.send(LoadEvent::Gone(path.to_path_buf()));
            }
            return Err(e);
        }
        let shown = was_shown.iter().filter(|&&s| s).count();
        out.send(LoadEvent::Progress {
            done: shown.min(total),
            total,
        });
        let missing: Vec<&SessionFile> = files
            .iter()
            .zip(&was_shown)
            .filter_map(|(f, &shown)| (!shown).then_some(f))
            .collect();
        let cold = missing.len() >= COLD_FILES;
        // The watcher starts before the refresh, which then catches
        // whatever changed before it was watching. (On a cold index, after
        // the scan: its own opening of every file would cost the watcher
        // seconds.)
        let scanned = if cold {
            let scanned = self.scan_cold(&missing, shown, total, out);
            // A first run's build goes to another process; a build running
            // already is waited for. Otherwise (an index that lacks many
            // files but has others) it is built here: after a build
            // elsewhere the rows shown from the index would be read again.
            let first_run = shown == 0;
            let builder = self
                .start_builder
                .filter(|_| first_run || arbor_index::behind::builder(index.path()).is_some());
            let built_elsewhere =
                builder.is_some_and(|start| wait_for_build(index, start, missing.len(), out));
            // Every row shown was scanned: the built rows are compared with
            // those (else the refresh sends every row again).
            if built_elsewhere && first_run {
                if let Ok(now) = index.data_version() {
                    if self.read_built(index, &listed, &scanned, out) {
                        version = now;
                    }
                }
            }
            scanned
        } else {
            out.watch();
            HashMap::new()
        };
        let others_wrote = index.data_version()? != version;
        let refreshed = self.refresh(
            index,
            &files,
            others_wrote,
            scanned,
            (shown, cold.then_some(missing.len())),
            out,
        );
        let (stats, changed) = match refreshed {
            Ok(r) => r,
            Err(e) => {
                if cold {
                    out.send(LoadEvent::Indexing(None));
                }
                for path in first_gone {
                    out.send(LoadEvent::Gone(path.to_path_buf()));
                }
                return Err(e);
            }
        };
        // Before `Indexing(None)`, whose searches must know it.
        if let Some(e) = stats.write_error {
            out.warn(LoadWarning::IndexNotUpdated(e));
        }
        if cold {
            out.send(LoadEvent::Indexing(None));
        }
        problems.extend(stats.problems);
        let sent = Shown {
            files: &files,
            listed: &listed,
            was_shown: &was_shown,
            first_gone,
        };
        self.settle(sent, &changed, &problems, out);
        out.log(format_args!(
            "{total} files through the index ({} changed)",
            changed.len()
        ));
        out.send(LoadEvent::Finished { problems });
        Ok(())
    }

    /// The stored rows of the first screen, without looking at the disk;
    /// returns once it is drawn (or soon after).
    fn send_first_screen(
        &mut self,
        index: &mut Index,
        out: &mut Out<M::Row>,
    ) -> Result<(), arbor_index::Error> {
        let first = index.stored_rows(&self.config.roots, Some(FIRST_SCREEN))?;
        let cwd = self.project.as_ref().map(|(cwd, _)| cwd.as_str());
        let rows: Vec<M::Row> = first
            .into_iter()
            .map(|info| {
                // As the picker's list of the current folder shows rows.
                if cwd == Some(info.cwd.as_str()) && !info.internal {
                    self.project_shown += 1;
                }
                self.first.push(info.path.clone());
                self.make.make(info, &self.cache)
            })
            .collect();
        let any = !rows.is_empty();
        out.send(LoadEvent::Rows(rows));
        out.log(format_args!("first screen"));
        if any {
            out.send(LoadEvent::FirstScreen);
        }
        Ok(())
    }

    /// The newest stored rows of the project's folders (`PROJECT_SCREEN`
    /// of them, the newest of all its folders), when the first screen
    /// shows fewer than a few screenfuls of its list. Best effort: the rest
    /// of the rows come either way.
    fn send_project_screen(&mut self, index: &mut Index, out: &mut Out<M::Row>) {
        /// Rows of the project's list in the first screen that are enough.
        const ENOUGH: usize = 64;
        let Some((_, dirs)) = &self.project else {
            return;
        };
        if dirs.is_empty() || self.project_shown >= ENOUGH {
            return;
        }
        let mut project = match index.stored_rows_in(&self.config.roots, dirs, PROJECT_SCREEN) {
            Ok(rows) => rows,
            Err(e) => {
                out.log(format_args!("the project's rows: {e}"));
                return;
            }
        };
        // Each folder gave its newest: these are the newest of them all.
        project.sort_unstable_by_key(|info| std::cmp::Reverse(info.file_mtime_ms));
        project.truncate(PROJECT_SCREEN);
        let sent: HashSet<SharedPath> = self.first.iter().cloned().collect();
        let rows: Vec<M::Row> = project
            .into_iter()
            .filter(|info| !sent.contains(&info.path))
            .map(|info| {
                self.first.push(info.path.clone());
                self.make.make(info, &self.cache)
            })
            .collect();
        out.log(format_args!("{} rows of the project", rows.len()));
        if !rows.is_empty() {
            out.send(LoadEvent::Rows(rows));
        }
    }

    /// The other stored rows of the files `listed`, without looking at the
    /// files; marks each file whose row is sent.
    fn send_rest(
        &mut self,
        index: &mut Index,
        listed: &ListedKeys,
        was_shown: &mut [bool],
        out: &mut Out<M::Row>,
    ) -> Result<(), arbor_index::Error> {
        // Each row made as it is decoded, on the decoding threads.
        let (make, cache, sent) = (self.make, &self.cache, &*was_shown);
        let (rest, look) = index.stored_rows_looked(&self.config.roots, listed, &|row| {
            let i = row.listed()?;
            if sent[i] {
                return None;
            }
            let path: SharedPath = row.file().path.as_path().into();
            Some((i, make.make_stored(row, path, cache)?))
        })?;
        self.look = Some(look);
        let mut rows = Vec::with_capacity(rest.iter().map(Vec::len).sum());
        for (i, row) in rest.into_iter().flatten() {
            was_shown[i] = true;
            rows.push(row);
        }
        out.log(format_args!("{} stored rows", rows.len()));
        out.send(LoadEvent::Rows(rows));
        Ok(())
    }

    /// A cold (or mostly cold) index: the rows the index lacks, at the
    /// speed of a plain scan and without their text; the index is built
    /// behind them. Returns their fingerprints.
    fn scan_cold(
        &mut self,
        missing: &[&SessionFile],
        shown: usize,
        total: usize,
        out: &mut Out<M::Row>,
    ) -> HashMap<SharedPath, Fingerprint> {
        let dirs = self.project.as_ref().map_or(&[][..], |(_, dirs)| dirs);
        let (mine, rest) = project_first(missing, dirs);
        let (make, cache) = (self.make, &self.cache);
        // Files that cannot be read are found again by the refresh.
        let mut scanned = HashMap::new();
        if !mine.is_empty() {
            let of_project = scan(&mine, false, make, cache, COLD_BATCH, shown, total, out);
            scanned = of_project.fingerprints;
            out.log(format_args!(
                "{} rows of the project scanned",
                scanned.len()
            ));
        }
        let done = shown + mine.len();
        let others = scan(&rest, false, make, cache, COLD_BATCH, done, total, out);
        scanned.extend(others.fingerprints);
        out.watch();
        out.log(format_args!(
            "{} rows scanned; building the index",
            scanned.len()
        ));
        out.send(LoadEvent::Finished {
            problems: Vec::new(),
        });
        out.send(LoadEvent::Indexing(Some((0, missing.len()))));
        scanned
    }

    /// After another process built the index: its rows, read as the
    /// refresh then compares them with the files (`look`), sent where they
    /// differ from the row scanned (the file changed between the scan and
    /// the build). Else the refresh would find another process wrote and
    /// send every row again, all decoded at once: at 100,000 sessions the
    /// screen's process peaked at ~400 MB. Best effort: `false` leaves it
    /// to the refresh.
    fn read_built(
        &mut self,
        index: &mut Index,
        listed: &ListedKeys,
        scanned: &HashMap<SharedPath, Fingerprint>,
        out: &mut Out<M::Row>,
    ) -> bool {
        let (make, cache) = (self.make, &self.cache);
        let read = index.stored_rows_looked(&self.config.roots, listed, &|row| {
            row.listed()?;
            let view = row.view()?;
            let path = row.file().path.as_path();
            let built = (view.message_count, view.modified_ms, view.file_mtime_ms);
            if scanned.get(path) == Some(&built) {
                return None;
            }
            make.make_stored(row, path.into(), cache)
        });
        match read {
            Ok((rows, look)) => {
                self.look = Some(look);
                let rows: Vec<M::Row> = rows.into_iter().flatten().collect();
                out.log(format_args!(
                    "{} rows differ from those scanned",
                    rows.len()
                ));
                if !rows.is_empty() {
                    out.send(LoadEvent::Rows(rows));
                }
                true
            }
            Err(e) => {
                out.log(format_args!("the rows built elsewhere: {e}"));
                false
            }
        }
    }

    /// Brings the index up to date, sending the rows it has that were not
    /// sent yet (all of them when `others_wrote`) with the progress (from
    /// `shown` files, or of the build, when `building` this many files).
    /// Returns the refresh's figures and the paths whose rows are sent.
    fn refresh(
        &mut self,
        index: &mut Index,
        files: &[SessionFile],
        others_wrote: bool,
        scanned: HashMap<SharedPath, Fingerprint>,
        (shown, building): (usize, Option<usize>),
        out: &mut Out<M::Row>,
    ) -> Result<(arbor_index::RefreshStats, HashSet<SharedPath>), arbor_index::Error> {
        let total = files.len();
        let mut done = shown;
        let mut indexed = 0usize;
        let mut last_note = Instant::now();
        let mut changed: HashSet<SharedPath> = HashSet::new();
        let (make, cache) = (self.make, &self.cache);
        let mut on_rows = |infos: Vec<SessionInfo>| {
            done += infos.len();
            indexed += infos.len();
            // Rows just scanned are the same rows (unless the file changed
            // in between): not sent twice. Made here, not on rayon: the
            // refresh's own rayon workers wait on this callback, so using
            // the pool here would deadlock.
            let rows: Vec<M::Row> = infos
                .into_iter()
                .filter(|i| scanned.get(&i.path) != Some(&fingerprint(i)))
                .map(|info| {
                    changed.insert(info.path.clone());
                    make.make(info, cache)
                })
                .collect();
            if !rows.is_empty() {
                out.send(LoadEvent::Rows(rows));
            }
            match building {
                Some(of) => {
                    if last_note.elapsed() >= INDEXING_NOTE {
                        out.send(LoadEvent::Indexing(Some((indexed, of))));
                        last_note = Instant::now();
                    }
                }
                None => out.send(LoadEvent::Progress {
                    done: done.min(total),
                    total,
                }),
            }
        };
        // What the stored rows' read found stands only while no other
        // process wrote to the index since.
        let look = self.look.take();
        let stats = match look {
            _ if others_wrote => index.refresh(files, &mut on_rows),
            Some(look) => index.refresh_changes_looked(files, look, &mut on_rows),
            None => index.refresh_changes(files, &mut on_rows),
        }?;
        changed.extend(scanned.into_keys());
        Ok((stats, changed))
    }

    /// After the refresh: first-screen rows whose files are gone (or no
    /// longer sessions) are taken back, and unchanged files whose stored
    /// row could not be read back (damaged) are read directly rather than
    /// left out.
    fn settle(
        &mut self,
        shown: Shown,
        changed: &HashSet<SharedPath>,
        problems: &[ScanProblem],
        out: &mut Out<M::Row>,
    ) {
        let broken: HashSet<&OsStr, FxBuild> =
            problems.iter().map(|p| p.path.as_os_str()).collect();
        for path in shown.first_gone {
            out.send(LoadEvent::Gone(path.to_path_buf()));
        }
        // A file listed but unreadable: its stored row goes too.
        for p in problems {
            if shown
                .listed
                .find(&p.path)
                .is_some_and(|i| shown.was_shown[i])
            {
                out.send(LoadEvent::Gone(p.path.clone()));
            }
        }
        for (f, &sent) in shown.files.iter().zip(shown.was_shown) {
            if !sent && !changed.contains(f.path.as_path()) && !broken.contains(f.path.as_os_str())
            {
                if let Ok(info) = scan_file(f, true) {
                    let row = self.make.make(info, &self.cache);
                    out.send(LoadEvent::Rows(vec![row]));
                }
            }
        }
    }
}

/// What a load sent of the files listed.
struct Shown<'s> {
    files: &'s [SessionFile],
    listed: &'s ListedKeys<'s>,
    /// Per file, whether its stored row was sent.
    was_shown: &'s [bool],
    /// Rows of the first screen whose files were not listed.
    first_gone: Vec<SharedPath>,
}
