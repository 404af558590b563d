//! Watching a store for changes while the picker (or a tree) is open.
//!
//! Only the store roots and their project folders are watched, each one
//! level deep: sessions live exactly there, and a recursive watch would
//! follow a symlinked project folder into whatever tree it points at (one
//! link to a large tree cost 15,257 inotify watches). Folders are added and
//! dropped as they appear and disappear, so a project folder created while
//! arbor is open is watched at once, and a removed one takes its sessions
//! with it. Where native watching is unavailable (or out of watches), the
//! folders are polled instead.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify::{Event, EventKind, PollWatcher, RecommendedWatcher, RecursiveMode, Watcher};

use super::paths::{Agent, StoreKind};

/// A folder to watch, and how sessions are laid out in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchRoot {
    pub path: PathBuf,
    /// `PerProject`: sessions are in the root's project folders; `Flat`:
    /// in the folder itself (a custom session dir, or a tree's own folder).
    pub kind: StoreKind,
}

/// What changed on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreChange {
    /// Session files created, written, renamed or removed: each is read
    /// again (one that cannot be read is gone).
    Files(Vec<PathBuf>),
    /// A watched folder is gone (removed, or moved away): so is every
    /// session under it.
    FolderGone(PathBuf),
}

#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Changes are gathered this long after the first one, then sent together.
    pub debounce: Duration,
    /// Poll instead of native watching (for tests of the fallback).
    pub force_poll: bool,
    pub poll_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            debounce: Duration::from_millis(250),
            force_poll: false,
            poll_interval: Duration::from_secs(2),
        }
    }
}

/// A running watcher; dropping it stops watching.
pub struct StoreWatcher {
    watches: Arc<AtomicUsize>,
    polling: Arc<AtomicBool>,
    stop: Sender<Msg>,
}

impl StoreWatcher {
    /// Starts watching `roots` (folders that do not exist are skipped);
    /// `on_change` is called on the watcher's own thread. Returns once the
    /// watches are in place: any change after that is reported.
    pub fn start(
        roots: &[WatchRoot],
        options: WatchOptions,
        on_change: impl FnMut(Vec<StoreChange>) + Send + 'static,
    ) -> StoreWatcher {
        let (tx, rx) = channel::<Msg>();
        let watches = Arc::new(AtomicUsize::new(0));
        let polling = Arc::new(AtomicBool::new(false));
        let mut state = State {
            roots: roots.to_vec(),
            backend: Backend::new(tx.clone(), &options, watches.clone(), polling.clone()),
            pending: Vec::new(),
        };
        for r in roots {
            if is_dir(&r.path) {
                state.backend.add(&r.path);
            }
        }
        for d in state.project_dirs() {
            state.backend.add(&d);
        }
        std::thread::spawn(move || state.run(rx, options.debounce, on_change));
        StoreWatcher {
            watches,
            polling,
            stop: tx,
        }
    }

    /// Folders watched now (each costs one native watch: a symlinked
    /// project folder is one, whatever it points at).
    pub fn watch_count(&self) -> usize {
        self.watches.load(Ordering::Relaxed)
    }

    /// Whether some folders are polled (native watching failed for them).
    pub fn polling(&self) -> bool {
        self.polling.load(Ordering::Relaxed)
    }
}

impl Drop for StoreWatcher {
    fn drop(&mut self) {
        let _ = self.stop.send(Msg::Stop);
    }
}

/// Whether a file-system event changes content or the change time (not an
/// open, a read, or an attribute update other than the change time). A
/// file whose change time moved is live again (the picker's `●`): `touch`,
/// or a writer that only sets the time, is reported as an attribute change
/// (inotify's `IN_ATTRIB`, which cannot say which attribute).
pub fn is_change(kind: &EventKind) -> bool {
    use notify::event::{MetadataKind, ModifyKind};
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::WriteTime | MetadataKind::Any)) => {
            true
        }
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(_) | EventKind::Any | EventKind::Other => false,
    }
}

enum Msg {
    Event(notify::Result<Event>),
    Stop,
}

/// The native watcher, and a polling one for the folders it cannot watch.
struct Backend {
    native: Option<RecommendedWatcher>,
    poll: Option<PollWatcher>,
    tx: Sender<Msg>,
    poll_interval: Duration,
    /// Watched folders, and whether the native watcher holds each.
    watched: HashMap<PathBuf, bool>,
    count: Arc<AtomicUsize>,
    polling: Arc<AtomicBool>,
}

fn handler(tx: Sender<Msg>) -> impl Fn(notify::Result<Event>) + Send + 'static {
    move |ev| {
        let _ = tx.send(Msg::Event(ev));
    }
}

impl Backend {
    fn new(
        tx: Sender<Msg>,
        options: &WatchOptions,
        count: Arc<AtomicUsize>,
        polling: Arc<AtomicBool>,
    ) -> Backend {
        let native = if options.force_poll {
            None
        } else {
            RecommendedWatcher::new(handler(tx.clone()), notify::Config::default())
                .map_err(|e| arbor_util::log::line(format!("watcher: native watching failed: {e}")))
                .ok()
        };
        Backend {
            native,
            poll: None,
            tx,
            poll_interval: options.poll_interval,
            watched: HashMap::new(),
            count,
            polling,
        }
    }

    fn is_watched(&self, dir: &Path) -> bool {
        self.watched.contains_key(dir)
    }

    /// Watches `dir` alone (not its subfolders); false when neither way works.
    fn add(&mut self, dir: &Path) -> bool {
        if self.is_watched(dir) {
            return true;
        }
        let native = self
            .native
            .as_mut()
            .is_some_and(|w| w.watch(dir, RecursiveMode::NonRecursive).is_ok());
        if !native {
            if self.poll.is_none() {
                arbor_util::log::line(format!(
                    "watcher: polling every {:?} (native watching unavailable)",
                    self.poll_interval
                ));
                let cfg = notify::Config::default().with_poll_interval(self.poll_interval);
                self.poll = PollWatcher::new(handler(self.tx.clone()), cfg).ok();
            }
            let polled = self
                .poll
                .as_mut()
                .is_some_and(|w| w.watch(dir, RecursiveMode::NonRecursive).is_ok());
            if !polled {
                return false;
            }
            self.polling.store(true, Ordering::Relaxed);
        }
        self.watched.insert(dir.to_path_buf(), native);
        self.count.store(self.watched.len(), Ordering::Relaxed);
        true
    }

    fn remove(&mut self, dir: &Path) {
        if let Some(native) = self.watched.remove(dir) {
            // The watch may already be gone with its folder: nothing to undo then.
            let _ = if native {
                self.native.as_mut().map(|w| w.unwatch(dir))
            } else {
                self.poll.as_mut().map(|w| w.unwatch(dir))
            };
        }
        self.count.store(self.watched.len(), Ordering::Relaxed);
    }
}

struct State {
    roots: Vec<WatchRoot>,
    backend: Backend,
    /// Changes not yet sent, in order (a folder gone, then re-created, must
    /// arrive in that order).
    pending: Vec<StoreChange>,
}

impl State {
    fn run(
        mut self,
        rx: Receiver<Msg>,
        debounce: Duration,
        mut on_change: impl FnMut(Vec<StoreChange>),
    ) {
        let mut first: Option<Instant> = None;
        loop {
            let msg = match first {
                None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(t) => rx.recv_timeout(debounce.saturating_sub(t.elapsed())),
            };
            match msg {
                Ok(Msg::Event(Ok(ev))) => self.on_event(ev),
                Ok(Msg::Event(Err(e))) => arbor_util::log::line(format!("watcher: {e}")),
                Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => {}
            }
            if self.pending.is_empty() {
                continue;
            }
            let t = *first.get_or_insert_with(Instant::now);
            if t.elapsed() >= debounce {
                first = None;
                on_change(coalesce(std::mem::take(&mut self.pending)));
            }
        }
    }

    fn on_event(&mut self, ev: Event) {
        if ev.need_rescan() {
            // Events were lost (the kernel's queue overflowed): look again.
            self.resync();
            return;
        }
        if !is_change(&ev.kind) {
            return;
        }
        use notify::event::{ModifyKind, RenameMode};
        for (i, p) in ev.paths.into_iter().enumerate() {
            // Whether this path names something that went away (a folder
            // re-created since looks the same on disk as one never gone).
            let went = match ev.kind {
                EventKind::Remove(_) => true,
                EventKind::Modify(ModifyKind::Name(RenameMode::From)) => true,
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => i == 0,
                _ => false,
            };
            self.on_path(p, went);
        }
    }

    fn on_path(&mut self, p: PathBuf, went: bool) {
        let dated = self.dated_level(&p);
        let project = self.is_project_dir_path(&p) || dated.is_some();
        if self.backend.is_watched(&p) {
            if went || !is_dir(&p) {
                self.backend.remove(&p);
                self.pending.push(StoreChange::FolderGone(p.clone()));
            }
        } else if !project {
            if is_session_path(&p) && p.parent().is_some_and(|d| self.backend.is_watched(d)) {
                self.pending.push(StoreChange::Files(vec![p]));
            }
            return;
        }
        if project && !self.backend.is_watched(&p) && is_dir(&p) {
            match dated {
                Some(level) => self.add_dated(&p, level),
                None => self.add_folder(&p),
            }
        }
    }

    /// Watches a new folder of a dated root (`YYYY`, `YYYY/MM`: `level` 1,
    /// 2; a day, 3) and the ones already in it (`mkdir -p` makes the day
    /// before the month's watch is in place); a day's sessions are reported.
    fn add_dated(&mut self, dir: &Path, level: usize) {
        if level >= 3 {
            self.add_folder(dir);
            return;
        }
        if !self.backend.add(dir) {
            return;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            if super::scan::is_date_name(&e.file_name()) && e.file_type().is_ok_and(|t| t.is_dir())
            {
                self.add_dated(&e.path(), level + 1);
            }
        }
    }

    /// How deep `p` is in a dated root (Codex's `YYYY/MM/DD`: 1 to 3), when
    /// it is named like one of its folders.
    fn dated_level(&self, p: &Path) -> Option<usize> {
        self.roots
            .iter()
            .filter(|r| r.kind == StoreKind::Dated)
            .find_map(|r| {
                let rel = p.strip_prefix(&r.path).ok()?;
                let n = rel.components().count();
                let dated = rel.iter().all(super::scan::is_date_name);
                ((1..=3).contains(&n) && dated).then_some(n)
            })
    }

    /// Watches a new project folder, and reports the sessions already in it
    /// (written before the watch was in place).
    fn add_folder(&mut self, dir: &Path) {
        if self.backend.add(dir) {
            let files = session_files_in(dir);
            if !files.is_empty() {
                self.pending.push(StoreChange::Files(files));
            }
        }
    }

    /// A folder directly in a per-project root, named like a project folder.
    fn is_project_dir_path(&self, p: &Path) -> bool {
        p.parent().is_some_and(|parent| {
            self.roots
                .iter()
                .any(|r| r.kind == StoreKind::PerProject && r.path == parent)
        }) && p
            .file_name()
            .is_some_and(|n| super::scan::is_project_dir_name(&n.to_string_lossy()))
    }

    /// The folders watched besides the roots: project folders, and a dated
    /// root's year, month and day folders (a day folder created later
    /// appears in a watched month's, a month in a year's).
    fn project_dirs(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for r in self.roots.iter().filter(|r| r.kind != StoreKind::Flat) {
            if r.kind == StoreKind::Dated {
                out.extend(super::scan::dated_parents(&r.path));
            }
            out.extend(super::scan::session_dirs(&r.path, r.kind));
        }
        out
    }

    /// Brings the watched folders in line with the disk and reports every
    /// session (rows that did not change cost a `stat` each to re-check).
    fn resync(&mut self) {
        let gone: Vec<PathBuf> = self
            .backend
            .watched
            .keys()
            .filter(|d| !is_dir(d))
            .cloned()
            .collect();
        for d in gone {
            self.backend.remove(&d);
            self.pending.push(StoreChange::FolderGone(d));
        }
        for r in self.roots.clone() {
            if is_dir(&r.path) {
                self.backend.add(&r.path);
            }
        }
        for d in self.project_dirs() {
            self.backend.add(&d);
        }
        let mut files = Vec::new();
        for r in &self.roots {
            match r.kind {
                StoreKind::Flat => files.extend(session_files_in(&r.path)),
                StoreKind::PerProject | StoreKind::Dated => {
                    for d in super::scan::session_dirs(&r.path, r.kind) {
                        files.extend(session_files_in(&d));
                    }
                }
            }
        }
        self.pending.push(StoreChange::Files(files));
    }
}

/// Merges runs of file changes (each path once), keeping folder removals
/// in their place.
fn coalesce(changes: Vec<StoreChange>) -> Vec<StoreChange> {
    let mut out = Vec::new();
    let mut files: BTreeSet<PathBuf> = BTreeSet::new();
    for c in changes {
        match c {
            StoreChange::Files(f) => files.extend(f),
            gone @ StoreChange::FolderGone(_) => {
                if !files.is_empty() {
                    out.push(StoreChange::Files(
                        std::mem::take(&mut files).into_iter().collect(),
                    ));
                }
                out.push(gone);
            }
        }
    }
    if !files.is_empty() {
        out.push(StoreChange::Files(files.into_iter().collect()));
    }
    out
}

fn is_dir(p: &Path) -> bool {
    std::fs::metadata(p).is_ok_and(|m| m.is_dir())
}

fn is_session_path(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "jsonl")
}

fn session_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    super::scan::files_in(dir, Agent::Atomic, &mut files, &mut problems);
    files.into_iter().map(|f| f.path).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, CreateKind, DataChange, MetadataKind, ModifyKind, RemoveKind};

    #[test]
    fn reads_are_not_changes() {
        assert!(!is_change(&EventKind::Access(AccessKind::Any)));
        assert!(!is_change(&EventKind::Modify(ModifyKind::Metadata(
            MetadataKind::AccessTime
        ))));
        // A new change time (`touch`): the file is live again.
        assert!(is_change(&EventKind::Modify(ModifyKind::Metadata(
            MetadataKind::WriteTime
        ))));
        assert!(is_change(&EventKind::Modify(ModifyKind::Metadata(
            MetadataKind::Any
        ))));
        assert!(!is_change(&EventKind::Modify(ModifyKind::Metadata(
            MetadataKind::Permissions
        ))));
        assert!(is_change(&EventKind::Modify(ModifyKind::Data(
            DataChange::Any
        ))));
        assert!(is_change(&EventKind::Create(CreateKind::File)));
        assert!(is_change(&EventKind::Remove(RemoveKind::File)));
    }

    #[test]
    fn coalesce_keeps_folder_removals_in_order() {
        let p = |s: &str| PathBuf::from(s);
        let got = coalesce(vec![
            StoreChange::Files(vec![p("/r/a/1.jsonl")]),
            StoreChange::Files(vec![p("/r/a/1.jsonl"), p("/r/b/2.jsonl")]),
            StoreChange::FolderGone(p("/r/a")),
            StoreChange::Files(vec![p("/r/a/3.jsonl")]),
        ]);
        assert_eq!(
            got,
            vec![
                StoreChange::Files(vec![p("/r/a/1.jsonl"), p("/r/b/2.jsonl")]),
                StoreChange::FolderGone(p("/r/a")),
                StoreChange::Files(vec![p("/r/a/3.jsonl")]),
            ]
        );
    }

    /// Collects changes until `done` says the wanted ones arrived.
    struct Seen(Receiver<Vec<StoreChange>>, Vec<StoreChange>);

    impl Seen {
        fn wait(&mut self, what: &str, done: impl Fn(&[StoreChange]) -> bool) {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !done(&self.1) {
                let left = deadline.saturating_duration_since(Instant::now());
                match self.0.recv_timeout(left) {
                    Ok(c) => self.1.extend(c),
                    Err(_) => panic!("timed out waiting for {what}; seen {:?}", self.1),
                }
            }
        }
    }

    fn has_file(c: &[StoreChange], p: &Path) -> bool {
        c.iter()
            .any(|c| matches!(c, StoreChange::Files(f) if f.iter().any(|x| x == p)))
    }

    fn start(root: &Path, force_poll: bool) -> (StoreWatcher, Seen) {
        start_kind(root, StoreKind::PerProject, force_poll)
    }

    /// Watches `root`, a store of `kind`, quickly (50 ms debounce, 100 ms
    /// polls), the changes collected in the [`Seen`].
    fn start_kind(root: &Path, kind: StoreKind, force_poll: bool) -> (StoreWatcher, Seen) {
        let (tx, rx) = channel();
        let w = StoreWatcher::start(
            &[WatchRoot {
                path: root.to_path_buf(),
                kind,
            }],
            WatchOptions {
                debounce: Duration::from_millis(50),
                force_poll,
                poll_interval: Duration::from_millis(100),
            },
            move |c| {
                let _ = tx.send(c);
            },
        );
        (w, Seen(rx, Vec::new()))
    }

    /// A project folder created while watching is watched at once (its
    /// sessions, and the ones written later, are reported); a removed one
    /// is reported gone as a whole.
    fn folders_come_and_go(force_poll: bool) {
        let store = tempfile::tempdir().unwrap();
        let root = store.path().join("sessions");
        std::fs::create_dir_all(root.join("--old--")).unwrap();
        std::fs::write(root.join("--old--/a.jsonl"), "{}\n").unwrap();
        let (w, mut seen) = start(&root, force_poll);
        assert_eq!(w.watch_count(), 2, "the root and its one project folder");
        assert_eq!(w.polling(), force_poll);

        let new = root.join("--new--");
        std::fs::create_dir(&new).unwrap();
        let first = new.join("b.jsonl");
        std::fs::write(&first, "{}\n").unwrap();
        seen.wait("the new folder's session", |c| has_file(c, &first));
        let later = new.join("c.jsonl");
        std::fs::write(&later, "{}\n").unwrap();
        seen.wait("a session written in the new folder", |c| {
            has_file(c, &later)
        });
        assert_eq!(w.watch_count(), 3);

        std::fs::remove_dir_all(root.join("--old--")).unwrap();
        let gone = root.join("--old--");
        seen.wait("the removed folder", |c| {
            c.contains(&StoreChange::FolderGone(gone.clone()))
        });
        assert_eq!(w.watch_count(), 2);
    }

    /// Codex's day folders (`YYYY/MM/DD`) created while watching: a new
    /// day, a new month and a new year are each watched at once, their
    /// rollouts reported, and later ones in them too.
    fn dated_folders_appear(force_poll: bool) {
        let store = tempfile::tempdir().unwrap();
        let root = store.path().join("sessions");
        std::fs::create_dir_all(root.join("2025/10/29")).unwrap();
        let old = root.join("2025/10/29/rollout-a.jsonl");
        std::fs::write(&old, "{}\n").unwrap();
        let (w, mut seen) = start_kind(&root, StoreKind::Dated, force_poll);
        assert_eq!(w.watch_count(), 4, "the root, its year, month and day");
        for day in ["2025/10/30", "2025/11/01", "2026/01/02"] {
            std::fs::create_dir_all(root.join(day)).unwrap();
            let first = root.join(day).join("rollout-b.jsonl");
            std::fs::write(&first, "{}\n").unwrap();
            seen.wait(&format!("the rollout in the new {day}"), |c| {
                has_file(c, &first)
            });
            // A rollout written later in it: the day folder is watched.
            let later = root.join(day).join("rollout-c.jsonl");
            std::fs::write(&later, "{}\n").unwrap();
            seen.wait(&format!("a later rollout in {day}"), |c| {
                has_file(c, &later)
            });
        }
        // The new year, its month, their day folders: 4 + 1 + 2 + 3.
        assert_eq!(w.watch_count(), 10);
    }

    #[test]
    fn native_dated_folders_appear() {
        dated_folders_appear(false);
    }

    #[test]
    fn polled_dated_folders_appear() {
        dated_folders_appear(true);
    }

    #[test]
    fn native_folders_come_and_go() {
        folders_come_and_go(false);
    }

    #[test]
    fn polled_folders_come_and_go() {
        folders_come_and_go(true);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_project_folder_is_one_watch() {
        let store = tempfile::tempdir().unwrap();
        let root = store.path().join("sessions");
        std::fs::create_dir_all(&root).unwrap();
        let big = store.path().join("big");
        for i in 0..50 {
            std::fs::create_dir_all(big.join(format!("d{i}/e/f"))).unwrap();
        }
        std::os::unix::fs::symlink(&big, root.join("--linked--")).unwrap();
        let (w, mut seen) = start(&root, false);
        assert_eq!(
            w.watch_count(),
            2,
            "the root and the link, not the tree behind it"
        );
        // A session written through the link is seen under the link's path.
        std::fs::write(big.join("s.jsonl"), "{}\n").unwrap();
        let through = root.join("--linked--/s.jsonl");
        seen.wait("the session behind the link", |c| has_file(c, &through));
        // Removing the link takes its sessions away.
        std::fs::remove_file(root.join("--linked--")).unwrap();
        let gone = root.join("--linked--");
        seen.wait("the removed link", |c| {
            c.contains(&StoreChange::FolderGone(gone.clone()))
        });
    }

    /// Folders that cannot hold sessions and files that are not sessions
    /// are not reported.
    #[test]
    fn ignores_what_is_not_a_session() {
        let store = tempfile::tempdir().unwrap();
        let root = store.path().join("sessions");
        std::fs::create_dir_all(root.join("--p--")).unwrap();
        let (w, mut seen) = start(&root, false);
        std::fs::create_dir(root.join("tool-results")).unwrap();
        std::fs::write(root.join("tool-results/x.jsonl"), "{}\n").unwrap();
        std::fs::write(root.join("--p--/notes.txt"), "x").unwrap();
        std::fs::create_dir(root.join("--p--/sub")).unwrap();
        std::fs::write(root.join("--p--/sub/deep.jsonl"), "{}\n").unwrap();
        let marker = root.join("--p--/m.jsonl");
        std::fs::write(&marker, "{}\n").unwrap();
        seen.wait("the marker", |c| has_file(c, &marker));
        let files: Vec<&PathBuf> = seen
            .1
            .iter()
            .flat_map(|c| match c {
                StoreChange::Files(f) => f.iter().collect(),
                StoreChange::FolderGone(_) => Vec::new(),
            })
            .collect();
        assert_eq!(files, vec![&marker]);
        assert_eq!(w.watch_count(), 2);
    }
}
