//! Where events come from besides the workers: the terminal's input, the
//! clock, the loader (every session's row) and the watcher (changes on
//! disk), each on a thread of its own.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use crossterm::event::Event;

use super::{index_on, now_ms};
use crate::app::load::{load_screen_behind, load_screen_for, LoadEvent, LoadWarning, MakeRow};
use crate::ui::app::AppEvent;
use crate::ui::picker::{Folders, Row};
use arbor_index::{Index, StoredRow};
use arbor_session::info::SessionInfo;
use arbor_store::watch::{StoreChange, StoreWatcher, WatchOptions, WatchRoot};
use arbor_store::{ListedFolder, StoreConfig};
use arbor_util::shared_path::SharedPath;

/// The terminal's input as events. With the mouse off (`mouse`), mouse
/// reports are dropped: a terminal that sends them anyway (another
/// program asked for them) must not click for the user.
pub(super) fn spawn_input(tx: Sender<AppEvent>, mouse: bool) {
    let mut clicks = crate::ui::mouse::ClickPairs::default();
    std::thread::spawn(move || loop {
        let ev = match crossterm::event::read() {
            Ok(Event::Key(k)) if arbor_util::log::enabled() => {
                arbor_util::log::line(format!("key: {:?} {:?}", k.code, k.modifiers));
                AppEvent::Key(k)
            }
            Ok(Event::Key(k)) => AppEvent::Key(k),
            Ok(Event::Paste(text)) => AppEvent::Paste(text),
            Ok(Event::Mouse(_)) if !mouse => continue,
            Ok(Event::Mouse(m)) if clicks.is_double(&m, std::time::Instant::now()) => {
                AppEvent::DoubleClick(m)
            }
            Ok(Event::Mouse(m)) => AppEvent::Mouse(m),
            Ok(Event::Resize(w, h)) => AppEvent::Resize(w, h),
            Ok(_) => continue,
            Err(_) => break,
        };
        if tx.send(ev).is_err() {
            break;
        }
    });
}

pub(super) fn spawn_ticker(tx: Sender<AppEvent>) {
    std::thread::spawn(move || loop {
        std::thread::sleep(Duration::from_secs(1));
        if tx.send(AppEvent::Tick(now_ms())).is_err() {
            break;
        }
    });
}

/// The picker's rows, made on the loader's threads.
struct PickerRows;

impl MakeRow for PickerRows {
    type Row = Row;
    type Cache = Folders;
    fn make(&self, info: SessionInfo, dirs: &Folders) -> Row {
        Row::with_dirs(info, dirs)
    }

    fn make_stored(&self, row: StoredRow<'_>, path: SharedPath, dirs: &Folders) -> Option<Row> {
        Some(Row::of_view(&row.view()?, path, row.file().agent, dirs))
    }

    fn folders_listed(&self, folders: &[ListedFolder], dirs: &Folders) {
        dirs.listed(folders);
    }
}

/// Loads every session's row (see `index::load`), streaming it to the UI;
/// starts the watcher when the loader is about to look at the disk.
pub(super) fn spawn_loader(tx: Sender<AppEvent>, loader: Loader, drawn: Receiver<()>) {
    let Loader {
        config,
        project,
        builder_args,
    } = loader;
    std::thread::spawn(move || {
        let roots: Vec<WatchRoot> = config
            .roots
            .iter()
            .map(|r| WatchRoot {
                path: r.path.clone(),
                kind: r.kind,
            })
            .collect();
        let start_builder = |db: &std::path::Path| match arbor_index::behind::start_builder(
            builder_args.as_deref().unwrap_or_default(),
            db,
        ) {
            Ok(pid) => {
                arbor_util::log::line(format!("loader: the index is built by process {pid}"));
                true
            }
            Err(e) => {
                arbor_util::log::line(format!("loader: cannot start the index's build ({e})"));
                false
            }
        };
        let emit = &mut |ev| {
            let ev = match ev {
                LoadEvent::Rows(rows) => AppEvent::Rows(rows),
                LoadEvent::Progress { done, total } => AppEvent::LoadProgress { done, total },
                LoadEvent::Gone(path) => AppEvent::RowGone(path),
                LoadEvent::Indexing(n) => AppEvent::Indexing(n),
                LoadEvent::Finished { problems } => AppEvent::LoadFinished { problems },
                LoadEvent::FirstScreen => {
                    let _ = drawn.recv_timeout(Duration::from_millis(200));
                    return;
                }
                LoadEvent::Watch => return spawn_watcher(tx.clone(), roots.clone()),
                // Searches must say they may miss sessions.
                LoadEvent::Warning(LoadWarning::IndexNotUpdated(e)) => AppEvent::IndexIncomplete(e),
                // Logged by the loader; the screen goes on with the files.
                LoadEvent::Warning(_) => return,
            };
            let _ = tx.send(ev);
        };
        let index = index_on().then(Index::open_default);
        match builder_args {
            Some(_) => load_screen_behind(
                &config,
                index,
                &PickerRows,
                project.as_deref(),
                &start_builder,
                emit,
            ),
            None => load_screen_for(&config, index, &PickerRows, project.as_deref(), emit),
        }
    });
}

/// A sync of each remote's mirror (see `arbor_remote::sync`), each on a
/// thread of its own: its progress comes as `RemoteSyncing`, its end as
/// `RemoteSynced`, and the files it changed as `FsChanged`, read again
/// as any file changed on disk. ssh is never let ask anything (the screen
/// is the terminal's): an unknown host key or a password prompt fails
/// the sync, said on the status line.
pub(super) fn spawn_syncs(
    tx: &Sender<AppEvent>,
    remotes: &crate::app::remotes::Remotes,
    cancel: &arbor_remote::SyncCancel,
) -> Vec<std::thread::JoinHandle<()>> {
    let mut threads = Vec::new();
    let Some(cache) = remotes.cache.clone() else {
        return threads;
    };
    let mut ssh = remotes.ssh.clone();
    ssh.batch = true;
    for remote in remotes.remotes.clone() {
        let (tx, cache, ssh) = (tx.clone(), cache.clone(), ssh.clone());
        let cancel = cancel.clone();
        threads.push(std::thread::spawn(move || {
            let host = remote.name.clone();
            let mirror = arbor_remote::mirror_dir(&cache, &host);
            let mut files = 0u64;
            let mut changed = Vec::new();
            let _ = tx.send(AppEvent::RemoteSyncing {
                host: host.clone(),
                files,
            });
            let result = arbor_remote::sync_cancellable(&remote, &cache, &ssh, &cancel, &mut |p| {
                if let arbor_remote::SyncProgress::File { path } = p {
                    files += 1;
                    changed.extend(crate::app::remotes::mirrored_file(&mirror, &path));
                    let _ = tx.send(AppEvent::RemoteSyncing {
                        host: host.clone(),
                        files,
                    });
                }
            });
            arbor_util::log::line(format!("sync {host}: {result:?}"));
            if !changed.is_empty() {
                let _ = tx.send(AppEvent::FsChanged(changed));
            }
            let _ = tx.send(AppEvent::RemoteSynced {
                host,
                result: result.map(|r| r.files).map_err(|e| e.to_string()),
            });
        }));
    }
    threads
}

/// What the loader loads, and how a cold index is built.
pub(super) struct Loader {
    pub(super) config: StoreConfig,
    pub(super) project: Option<String>,
    pub(super) builder_args: Option<Vec<std::ffi::OsString>>,
}

/// Watches the store (see `store::watch`); changes arrive as `FsChanged`
/// and `FolderGone`. Returns once the watches are in place.
pub(super) fn start_watcher(tx: Sender<AppEvent>, roots: &[WatchRoot]) -> StoreWatcher {
    StoreWatcher::start(roots, WatchOptions::default(), move |changes| {
        for c in changes {
            let ev = match c {
                StoreChange::Files(paths) => AppEvent::FsChanged(paths),
                StoreChange::FolderGone(dir) => AppEvent::FolderGone(dir),
            };
            let _ = tx.send(ev);
        }
    })
}

/// [`start_watcher`] for the loader: returns once the watches are in place
/// (the refresh that follows then catches whatever changed before), and
/// keeps the watcher on a thread of its own for the rest of the process.
fn spawn_watcher(tx: Sender<AppEvent>, roots: Vec<WatchRoot>) {
    let (ready_tx, ready_rx) = channel::<()>();
    std::thread::spawn(move || {
        let _watcher = start_watcher(tx, &roots);
        let _ = ready_tx.send(());
        loop {
            std::thread::park();
        }
    });
    let _ = ready_rx.recv();
}
