//! The event loop: terminal, input, loader, watcher, workers; runs effects.
//!
//! Split by concept: [`terminal`] sets the terminal up and restores it,
//! [`sources`] starts the threads events come from (input, clock, loader,
//! watcher), [`workers`] answer searches and previews, [`effects`]
//! performs everything else, and [`pools`] keeps that work off rayon's
//! shared pool.

mod effects;
mod key_watch;
mod pools;
mod sources;
mod terminal;
mod workers;

use std::path::PathBuf;
use std::sync::mpsc::{channel, Sender};

use anyhow::{Context as _, Result};
use crossterm::{ExecutableCommand, QueueableCommand};

use super::app::{App, AppEvent, Effect, Outcome};
use super::theme::Theme;
use arbor_store::watch::WatchRoot;
use arbor_store::{StoreConfig, StoreKind};
use pools::on_foreground_pool;
use sources::{spawn_input, spawn_loader, spawn_ticker, start_watcher, Loader};
use terminal::{copy_osc52, setup_terminal, Term};
use workers::{
    spawn_preview_worker, spawn_search_worker, tree_hits, PreviewJob, SearchAsk, SearchJob,
    PREVIEWS_ASKED, TREE_HITS_ASKED, WANTED_SEARCH,
};

pub use effects::{
    export_branch, perform, perform_search, remote_restore_text, restore_from_trash,
};
pub use terminal::restore_terminal;

/// How the picker was started.
#[derive(Debug, Clone)]
pub struct PickerOptions {
    pub config: StoreConfig,
    pub project_cwd: String,
    pub print_mode: bool,
    pub start_in_all: bool,
    pub note: Option<String>,
    /// `arbor tree SESSION`: open this session's tree directly, no picker.
    pub open_tree: Option<arbor_store::SessionFile>,
    /// `arbor tree SESSION --at ENTRY`: the entry it opens at.
    pub tree_at: Option<String>,
    /// Use the persistent index (rows, body search, incremental rescans).
    pub use_index: bool,
    /// `arbor QUERY…`: the query typed when the picker opens.
    pub query: String,
    /// The options naming the store for `arbor index --behind`, which
    /// builds a cold index beside the screen (see `index::behind`); `None`
    /// builds it in this process.
    pub builder_args: Option<Vec<std::ffi::OsString>>,
    /// The settings of the screen's look and input.
    pub look: Look,
    /// The remotes whose mirrors are listed: each is synced behind the
    /// screen as it opens.
    pub remotes: crate::app::remotes::Remotes,
}

/// The settings the screen starts with (see `settings`).
#[derive(Debug, Clone, Copy)]
pub struct Look {
    pub theme: Theme,
    /// Capture the mouse (off: the terminal's own selection works).
    pub mouse: bool,
    pub sort: super::picker::Sort,
    /// `None`: the preview follows the terminal's width.
    pub preview_on: Option<bool>,
}

/// The remotes the picker lists (set once at start; read by the effects
/// that write a remote's session there).
static REMOTES: std::sync::OnceLock<crate::app::remotes::Remotes> = std::sync::OnceLock::new();

/// The remotes configured, and the one owning `path` when it is a
/// mirrored file.
fn remote_of(
    path: &std::path::Path,
) -> Option<(
    &'static crate::app::remotes::Remotes,
    &'static arbor_remote::Remote,
)> {
    let remotes = REMOTES.get()?;
    Some((remotes, remotes.owning(path)?))
}

/// Whether this process uses the index (set once at start; read by workers).
static USE_INDEX: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn index_on() -> bool {
    USE_INDEX.load(std::sync::atomic::Ordering::Relaxed)
}

/// Opens the index for a worker; `None` (logged) when it cannot be used.
fn open_index() -> Option<arbor_index::Index> {
    if !index_on() {
        return None;
    }
    match arbor_index::Index::open_default() {
        Ok(i) => Some(i),
        Err(e) => {
            arbor_util::log::line(format!("index: cannot open ({e}); reading files instead"));
            None
        }
    }
}

/// `path` absolute, free of links, `.` and `..`: the watcher watches the
/// folder the file really is in (a linked session's own folder never sees
/// its writes).
fn canonical_file_path(path: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The local time's offset from UTC now.
fn local_offset() -> chrono::FixedOffset {
    *chrono::Local::now().offset()
}

/// Runs the picker (or a tree) until the user leaves; returns what they chose.
pub fn run_picker(mut opts: PickerOptions) -> Result<Outcome> {
    USE_INDEX.store(opts.use_index, std::sync::atomic::Ordering::Relaxed);
    // Absolute paths throughout: the index keys on them, and resuming runs
    // the agent in another directory.
    for r in &mut opts.config.roots {
        if let Ok(a) = std::path::absolute(&r.path) {
            r.path = a;
        }
    }
    // The watcher reports paths under the folder it watches, absolute: the
    // tree's file must be named the same way, or its changes never match.
    if let Some(file) = &mut opts.open_tree {
        file.path = canonical_file_path(&file.path);
    }
    let mut app = App::new(opts.project_cwd.clone(), now_ms());
    // What drawing needs from the environment, read here once.
    app.picker.settings.home = dirs::home_dir();
    app.set_utc_offset(local_offset());
    app.store = opts.config.clone();
    app.print_mode = opts.print_mode;
    app.picker.flash.note = opts.note.clone();
    if opts.start_in_all {
        app.picker.settings.scope = super::picker::Scope::All;
    }
    app.picker.settings.sort = opts.look.sort;
    app.picker.settings.preview_on = opts.look.preview_on;
    app.picker.progress.loading = Some((0, 0));
    app.picker.remotes = opts.remotes.statuses();
    let _ = REMOTES.set(opts.remotes.clone());
    if !opts.query.is_empty() {
        app.picker.start_with_query(&opts.query);
    }
    app.tree_only = opts.open_tree.is_some();
    if let (Some(file), Some(entry)) = (&opts.open_tree, &opts.tree_at) {
        app.open_at = Some((file.path.clone(), entry.clone()));
    }
    let theme = opts.look.theme;
    // The user's keys, and what in their file could not be used: said
    // here (it stays on the terminal after arbor ends) and on the status
    // line.
    let keys = super::keybindings::load();
    for p in &keys.problems {
        eprintln!("arbor: {}", crate::ui::text::sanitize_line(p));
    }
    if let Some(problem) = super::keybindings::summary(&keys) {
        app.picker
            .set_status(super::picker::StatusKind::Error, problem);
    }
    super::keybindings::install(std::sync::Arc::new(keys));

    let mut terminal = setup_terminal(opts.look.mouse)?;
    let result = event_loop(&mut terminal, &mut app, &theme, &opts);
    super::signals::set_wake(None);
    restore_terminal();
    super::signals::die_if_received();
    result
}

fn event_loop(
    terminal: &mut Term,
    app: &mut App,
    theme: &Theme,
    opts: &PickerOptions,
) -> Result<Outcome> {
    let size = terminal.size()?;
    app.width = size.width;
    app.height = size.height;
    // The first frame paints before any file is read.
    draw(terminal, app, theme)?;

    let (tx, rx) = channel::<AppEvent>();
    super::signals::set_wake(Some(tx.clone()));
    // Told once, when a frame with rows has been drawn.
    let (drawn_tx, drawn_rx) = channel::<()>();
    let mut drawn_tx = Some(drawn_tx);
    spawn_input(tx.clone(), opts.look.mouse);
    spawn_ticker(tx.clone());
    // Lives as long as the loop.
    let _keys_watcher =
        key_watch::watch_keys(tx.clone(), (*super::keybindings::in_force()).clone());
    let search_tx = spawn_search_worker(tx.clone());
    let preview_tx = spawn_preview_worker(tx.clone());
    // However the loop ends (a choice, quit, a signal, an error), the
    // remotes' syncs still under way are stopped before arbor goes on.
    let mut syncs = StopOnDrop::default();
    // Lives as long as the loop.
    let _tree_watcher = match &opts.open_tree {
        None => {
            // The loader starts the watcher when it is about to look at
            // the disk (see `index::load`).
            // Opened on the current folder's sessions, those come first.
            let project = (!opts.start_in_all).then(|| opts.project_cwd.clone());
            let loader = Loader {
                config: opts.config.clone(),
                project,
                builder_args: opts.builder_args.clone(),
            };
            spawn_loader(tx.clone(), loader, drawn_rx);
            // Behind the first frame, never before it.
            syncs.threads = sources::spawn_syncs(&tx, &opts.remotes, &syncs.cancel);
            None
        }
        Some(file) => {
            let path = &file.path;
            // Watching (one folder: quick) before the file is read, so
            // that nothing written in between goes unseen.
            let dir = path.parent().map(|d| WatchRoot {
                path: d.to_path_buf(),
                kind: StoreKind::Flat,
            });
            let watcher = start_watcher(tx.clone(), &Vec::from_iter(dir));
            run_effect(
                Effect::OpenTree {
                    path: path.clone(),
                    agent: file.agent,
                },
                &tx,
                &search_tx,
                &preview_tx,
            );
            Some(watcher)
        }
    };

    loop {
        let ev = rx.recv().context("event channel closed")?;
        if super::signals::received() {
            // `run_picker` restores the terminal, then dies of the signal.
            return Ok(Outcome::Quit);
        }
        let mut dirty = handle(app, ev, &tx, &search_tx, &preview_tx);
        // Drain what is already queued, then draw once.
        while let Ok(ev) = rx.try_recv() {
            dirty |= handle(app, ev, &tx, &search_tx, &preview_tx);
            if app.outcome.is_some() {
                break;
            }
        }
        if let Some(o) = app.outcome.take() {
            // Its folder is gone: asked here, so that declining goes back
            // to the screen rather than out of arbor.
            match std::env::current_dir() {
                Ok(here) if o.folder_gone() => {
                    app.ask_resume_here(o, here.display().to_string());
                    draw(terminal, app, theme)?;
                    continue;
                }
                _ => return Ok(o),
            }
        }
        if dirty {
            draw(terminal, app, theme)?;
            if !app.picker.list.rows.is_empty() {
                if let Some(t) = drawn_tx.take() {
                    let _ = t.send(());
                    arbor_util::log::line("first frame with rows drawn");
                }
            }
        }
    }
}

/// Cancels the syncs it holds when dropped: their rsync process groups are
/// killed, so that a hung host's rsync does not outlive the picker. Then
/// waits for their threads a little, for each to leave its mirror as a
/// failed sync does (read-only, its state written) before arbor exits.
#[derive(Default)]
struct StopOnDrop {
    cancel: arbor_remote::SyncCancel,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.cancel.cancel();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while !self
            .threads
            .iter()
            .all(std::thread::JoinHandle::is_finished)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// Draws a frame inside a synchronized update: a terminal that supports
/// it shows the frame whole, never half old and half new (others ignore
/// the sequences).
fn draw(terminal: &mut Term, app: &App, theme: &Theme) -> Result<()> {
    use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
    // Queued: it goes out with the frame, which `draw` flushes.
    terminal.backend_mut().queue(BeginSynchronizedUpdate)?;
    let drawn = terminal.draw(|f| super::render(f, app, theme)).map(|_| ());
    terminal.backend_mut().execute(EndSynchronizedUpdate)?;
    drawn?;
    Ok(())
}

fn handle(
    app: &mut App,
    ev: AppEvent,
    tx: &Sender<AppEvent>,
    search_tx: &Sender<SearchJob>,
    preview_tx: &Sender<PreviewJob>,
) -> bool {
    let loaded = matches!(ev, AppEvent::LoadFinished { .. });
    if let AppEvent::Tick(_) = ev {
        app.set_utc_offset(local_offset());
    }
    let step = app.step_at(now_ms(), ev);
    for effect in step.effects {
        run_effect(effect, tx, search_tx, preview_tx);
    }
    if loaded {
        let _ = search_tx.send(SearchJob::Warm(app.picker.docs()));
    }
    step.redraw
}

fn run_effect(
    effect: Effect,
    tx: &Sender<AppEvent>,
    search_tx: &Sender<SearchJob>,
    preview_tx: &Sender<PreviewJob>,
) {
    match effect {
        // Latest-wins workers: stale requests are dropped.
        Effect::Search {
            generation,
            query,
            docs,
            index_problem,
            first,
        } => {
            WANTED_SEARCH.store(generation, std::sync::atomic::Ordering::Relaxed);
            let _ = search_tx.send(SearchJob::Search(Box::new(SearchAsk {
                generation,
                query,
                docs,
                index_problem,
                first,
            })));
        }
        Effect::LoadPreview { path, query, hits } => {
            PREVIEWS_ASKED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = preview_tx.send((path, query, hits));
        }
        Effect::TreeHits { session, query } => {
            // Latest wins: a search typed since stops this one.
            let asked = TREE_HITS_ASKED.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let tx = tx.clone();
            std::thread::spawn(move || {
                let stale = || TREE_HITS_ASKED.load(std::sync::atomic::Ordering::SeqCst) != asked;
                if let Some(ev) = on_foreground_pool(|| tree_hits(session, &query, &stale)) {
                    let _ = tx.send(ev);
                }
            });
        }
        Effect::Exit(_) | Effect::CloseTree => {}
        Effect::Copy(text) => copy_osc52(&text),
        other => {
            let tx = tx.clone();
            arbor_util::log::line(format!("effect: {other:?}"));
            std::thread::spawn(move || {
                for ev in on_foreground_pool(|| perform(other)) {
                    let _ = tx.send(ev);
                }
            });
        }
    }
}
