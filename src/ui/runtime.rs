//! The event loop: terminal, input, loader, watcher, workers; runs effects.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use crossterm::clipboard::CopyToClipboard;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture, Event,
};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{ExecutableCommand, QueueableCommand};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;

use super::app::{App, AppEvent, Effect, Outcome, WriteKind};
use super::picker::{
    load_hits, load_preview, load_preview_with, Folders, PreviewHits, PreviewLimits, Row,
};
use super::theme::Theme;
use crate::app::load::{load_screen_behind, load_screen_for, LoadEvent, LoadWarning, MakeRow};
use crate::app::searcher::{Answer, FirstRows, Searcher};
use arbor_index::{Index, StoredRow};
use arbor_search::{Docs, Query};
use arbor_session::fileops;
use arbor_session::info::SessionInfo;
use arbor_store::listing::scan_file;
use arbor_store::watch::{StoreChange, StoreWatcher, WatchOptions, WatchRoot};
use arbor_store::{ListedFolder, StoreConfig, StoreKind};
use arbor_util::shared_path::SharedPath;

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
}

/// Whether this process uses the index (set once at start; read by workers).
static USE_INDEX: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The generation of the newest search asked for: an older one still
/// running gives up (see `Index::search_cancellable`).
static WANTED_SEARCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

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

/// The terminal: stdout, or `/dev/tty` when stdout is captured (`--print`),
/// so that stdout carries only the chosen path.
type Term = Terminal<CrosstermBackend<Box<dyn Write + Send>>>;

fn tty_writer() -> Result<Box<dyn Write + Send>> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        Ok(Box::new(std::io::stdout()))
    } else {
        let tty = crate::term::open_tty(false).context(
            "no terminal to draw on (stdout is not a terminal and /dev/tty cannot be opened)",
        )?;
        Ok(Box::new(tty))
    }
}

fn setup_terminal() -> Result<Term> {
    let mut w = tty_writer()?;
    super::signals::install();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        hook(info);
    }));
    enable_raw_mode().context("cannot switch the terminal to raw mode")?;
    // From here on a terminating signal restores the terminal first.
    super::signals::set_screen(true);
    // Bracketed paste: pasted text arrives as one event, not as keys (a
    // newline in it would be Enter, and resume a session).
    let modes = w
        .execute(EnterAlternateScreen)
        .and_then(|w| w.execute(EnableMouseCapture))
        .and_then(|w| w.execute(EnableBracketedPaste));
    if let Err(e) = modes {
        restore_terminal();
        return Err(e).context("cannot set up the terminal");
    }
    let w: Box<dyn Write + Send> = Box::new(FrameWriter::new(w));
    Terminal::new(CrosstermBackend::new(w)).map_err(|e| {
        restore_terminal();
        anyhow::Error::from(e).context("cannot set up the terminal")
    })
}

/// The terminal's writer: a frame goes out in one write. Through stdout's
/// line buffer it was a write per kilobyte, after one of its own for the
/// synchronized update's start, each a wakeup of the terminal (and of a
/// pseudo-terminal's reader) before the frame was whole. What a panic
/// leaves buffered is dropped, not written once the terminal is restored.
struct FrameWriter(Option<std::io::BufWriter<Box<dyn Write + Send>>>);

impl FrameWriter {
    fn new(w: Box<dyn Write + Send>) -> FrameWriter {
        FrameWriter(Some(std::io::BufWriter::with_capacity(1 << 16, w)))
    }
}

impl Write for FrameWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.as_mut() {
            Some(w) => w.write(buf),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.0.as_mut() {
            Some(w) => w.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for FrameWriter {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Some(w) = self.0.take() {
                // The bytes are let go unwritten.
                drop(w.into_parts());
            }
        }
    }
}

/// Leaves raw mode, the alternate screen and the modes arbor turned on;
/// safe to call twice. The one place that undoes `setup_terminal`: on
/// leaving, on a panic and on a terminating signal (see `signals`).
pub fn restore_terminal() {
    let _ = disable_raw_mode();
    if let Ok(mut w) = tty_writer() {
        let _ = w.execute(DisableBracketedPaste);
        let _ = w.execute(DisableMouseCapture);
        let _ = w.execute(LeaveAlternateScreen);
        let _ = w.execute(crossterm::cursor::Show);
    }
    super::signals::set_screen(false);
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
    app.picker.home = dirs::home_dir();
    app.set_utc_offset(local_offset());
    app.store = opts.config.clone();
    app.print_mode = opts.print_mode;
    app.picker.note = opts.note.clone();
    if opts.start_in_all {
        app.picker.scope = super::picker::Scope::All;
    }
    app.picker.loading = Some((0, 0));
    if !opts.query.is_empty() {
        app.picker.start_with_query(&opts.query);
    }
    app.tree_only = opts.open_tree.is_some();
    if let (Some(file), Some(entry)) = (&opts.open_tree, &opts.tree_at) {
        app.open_at = Some((file.path.clone(), entry.clone()));
    }
    let theme = Theme::from_env();

    let mut terminal = setup_terminal()?;
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
    spawn_input(tx.clone());
    spawn_ticker(tx.clone());
    let search_tx = spawn_search_worker(tx.clone());
    let preview_tx = spawn_preview_worker(tx.clone());
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
            if !app.picker.rows.is_empty() {
                if let Some(t) = drawn_tx.take() {
                    let _ = t.send(());
                    arbor_util::log::line("first frame with rows drawn");
                }
            }
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

/// What the search worker is asked.
enum SearchJob {
    /// Load what searches need now, for this snapshot of the rows: sent
    /// once the rows are in, so that loading does not compete with the
    /// first screen for the two cores of a small machine.
    Warm(Arc<Docs>),
    Search(SearchBody),
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

/// Asks the terminal to put `text` on the clipboard (OSC 52).
fn copy_osc52(text: &str) {
    if let Ok(mut w) = tty_writer() {
        let _ = w.execute(CopyToClipboard::to_clipboard_from(text));
    }
}

/// [`Effect::Search`] with `searcher` (its index, its memory of earlier
/// terms), as the search worker runs every query; other effects give
/// nothing. [`perform`] searches with the index the process uses.
pub fn perform_search(searcher: &mut Searcher, effect: Effect) -> Vec<AppEvent> {
    let Effect::Search {
        generation,
        query,
        docs,
        index_problem,
        first,
    } = effect
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let answer = searcher.search_first(
        &query,
        &docs,
        index_problem.as_deref(),
        &|| false,
        first.as_ref(),
        &mut |a| out.push(search_done(generation, &query, docs.clone(), a)),
    );
    out.extend(answer.map(|a| search_done(generation, &query, docs, a)));
    out
}

/// A session read for the tree view (`reload`: the open tree's file changed).
fn read_tree(path: PathBuf, agent: arbor_session::Agent, reload: bool) -> AppEvent {
    let result = super::tree::Loaded::read(&path, agent).map(Box::new);
    AppEvent::TreeLoaded {
        path,
        reload,
        result,
    }
}

/// Performs an effect to completion and returns the events it produces.
/// The runtime calls it on worker threads; tests call it directly.
pub fn perform(effect: Effect) -> Vec<AppEvent> {
    match effect {
        Effect::Search { .. } => perform_search(&mut Searcher::new(open_index()), effect),
        Effect::LoadPreview { path, query, hits } => {
            let mut out = vec![AppEvent::PreviewLoaded(
                load_preview(&path).map_err(|e| (path.clone(), e)),
            )];
            if let Some(stamp) = hits {
                let limits = PreviewLimits::default();
                if let Some(ev) = preview_hits(path, &query, stamp, &limits, &|| false) {
                    out.push(ev);
                }
            }
            out
        }
        Effect::TreeHits { session, query } => {
            tree_hits(session, &query, &|| false).into_iter().collect()
        }
        Effect::Rescan(files) => {
            // The index reads only the appended bytes of a growing session.
            let mut index = open_index();
            files
                .into_iter()
                .map(|f| {
                    let row = match index.as_mut().map(|i| i.update_file(&f)) {
                        Some(Ok(r)) => r,
                        Some(Err(e)) => {
                            arbor_util::log::line(format!(
                                "index: update of {} failed: {e}",
                                f.path.display()
                            ));
                            scan_file(&f, true).ok()
                        }
                        None => scan_file(&f, true).ok(),
                    };
                    match row {
                        Some(info) => AppEvent::Rows(vec![Row::new(info)]),
                        None => AppEvent::RowGone(f.path),
                    }
                })
                .collect()
        }
        Effect::Rename { path, name } => {
            use arbor_session::writer::WriteError;
            let result = match arbor_session::writer::append_session_name(&path, &name) {
                Err(WriteError::NeedsMigration { version, .. }) => {
                    return vec![AppEvent::RenameNeedsMigration {
                        path,
                        name,
                        version,
                    }]
                }
                r => r.map(|_| name).map_err(|e| e.to_string()),
            };
            vec![AppEvent::Renamed { path, result }]
        }
        Effect::Trash(path) => {
            let result = fileops::trash(&path).map_err(|e| super::trash_text::trash_error_text(&e));
            if result.is_ok() {
                note_batch(std::slice::from_ref(&path));
            }
            vec![AppEvent::Trashed { path, result }]
        }
        Effect::MeasureBatch(paths) => {
            let measured = paths
                .into_iter()
                .map(|p| {
                    let m = arbor_session::bulk::size_and_mtime(&p).ok();
                    (p, m)
                })
                .collect();
            vec![AppEvent::BatchMeasured(measured)]
        }
        Effect::TrashBatch(paths) => {
            let out = arbor_session::bulk::trash_all(&paths);
            note_batch(&out.done);
            vec![AppEvent::TrashedBatch {
                moved: out.done,
                failed: out
                    .failed
                    .iter()
                    .map(|(p, e)| (p.clone(), super::trash_text::trash_error_text(e)))
                    .collect(),
            }]
        }
        Effect::RestoreBatch(paths) => {
            let text = super::trash_text::restore_error_text;
            let (restored, failed) = match arbor_session::bulk::restore_all(&paths) {
                Ok(mut out) => {
                    out.done.append(&mut out.in_place);
                    let failed = out.failed.iter().map(|(p, e)| (p.clone(), text(e)));
                    (out.done, failed.collect())
                }
                Err(e) => (
                    Vec::new(),
                    paths.iter().map(|p| (p.clone(), text(&e))).collect(),
                ),
            };
            vec![AppEvent::RestoredBatch { restored, failed }]
        }
        Effect::DeleteBatch(paths) => {
            let (mut deleted, mut failed) = (Vec::new(), Vec::new());
            for p in paths {
                match fileops::delete_permanently(&p) {
                    Ok(()) => deleted.push(p),
                    Err(e) => failed.push((p, super::trash_text::io_reason(&e))),
                }
            }
            vec![AppEvent::DeletedBatch { deleted, failed }]
        }
        Effect::DeletePermanently(path) => {
            let result =
                fileops::delete_permanently(&path).map_err(|e| super::trash_text::io_reason(&e));
            vec![AppEvent::Deleted { path, result }]
        }
        Effect::Restore(path) => {
            let result = restore_from_trash(&path);
            vec![AppEvent::Restored { path, result }]
        }
        Effect::OpenTree { path, agent } => vec![read_tree(path, agent, false)],
        Effect::IndexTree(session) => {
            let build = || arbor_session::search_text::SearchText::build(&session.0);
            let text = Arc::new(match background_pool() {
                Some(pool) => pool.install(build),
                None => build(),
            });
            vec![AppEvent::TreeSearchText { session, text }]
        }
        Effect::ReloadTree { path, agent } => vec![read_tree(path, agent, true)],
        Effect::Label {
            path,
            target,
            label,
        } => {
            let result = arbor_session::writer::append_label(&path, &target, label.as_deref())
                .map(|_| None)
                .map_err(|e| e.to_string());
            vec![AppEvent::Wrote {
                path,
                what: if label.is_some() {
                    WriteKind::Label
                } else {
                    WriteKind::LabelRemoved
                },
                result,
            }]
        }
        Effect::Branch {
            path,
            entry,
            summary,
        } => {
            let result = arbor_session::writer::append_branch(&path, &entry, &summary)
                .map(|_| None)
                .map_err(|e| e.to_string());
            vec![AppEvent::Wrote {
                path,
                what: WriteKind::Branch,
                result,
            }]
        }
        Effect::Fork { path, entry } => {
            let result = arbor_session::writer::fork(&path, &entry, None)
                .map(|f| Some(f.path))
                .map_err(|e| e.to_string());
            vec![AppEvent::Wrote {
                path,
                what: WriteKind::Fork,
                result,
            }]
        }
        Effect::MigrateThen { path, then } => match arbor_session::writer::migrate_file(&path) {
            Ok(_) => perform(*then),
            // The picker's rename hears of it as a failed rename.
            Err(e) if matches!(*then, Effect::Rename { .. }) => vec![AppEvent::Renamed {
                path,
                result: Err(e.to_string()),
            }],
            Err(e) => vec![AppEvent::Wrote {
                path,
                what: WriteKind::Label,
                result: Err(e.to_string()),
            }],
        },
        Effect::Export {
            path,
            leaf,
            format,
            thinking,
            file_name,
        } => {
            let result = std::env::current_dir()
                .map_err(|e| format!("cannot read the current folder: {e}"))
                .and_then(|dir| export_branch(&path, &leaf, format, thinking, &file_name, &dir));
            vec![AppEvent::Exported(result)]
        }
        Effect::LoadLabels {
            config,
            scope,
            include_internal,
        } => {
            // The rows with labels, as `arbor labels --all` reads them: the
            // picker holds its own rows already (at 100,000 sessions, all
            // of them decoded again here took it from ~270 to ~485 MB).
            let index = index_on().then(|| {
                arbor_index::Index::open_default().map(|mut i| {
                    i.set_labelled_only(true);
                    i
                })
            });
            let mut rows = Vec::new();
            crate::app::load::load_listing(&config, &scope, index, &mut |ev| {
                if let crate::app::load::LoadEvent::Rows(mut r) = ev {
                    // Rows read from their files come all.
                    r.retain(|r| !r.labels.is_empty());
                    crate::app::load::gather(&mut rows, r);
                }
            });
            arbor_store::listing::filter_rows(&mut rows, &scope, include_internal);
            vec![AppEvent::LabelsLoaded(arbor_session::extras::label_rows(
                &rows,
            ))]
        }
        Effect::CloseTree | Effect::Copy(_) | Effect::Exit(_) => Vec::new(),
    }
}

/// The tree's export: the branch of `path` ending at `leaf`, written into
/// `dir` as `file_name` or a numbered variant of it.
pub fn export_branch(
    path: &std::path::Path,
    leaf: &str,
    format: arbor_session::export::ExportFormat,
    thinking: bool,
    file_name: &str,
    dir: &std::path::Path,
) -> Result<PathBuf, String> {
    use arbor_session::export;
    let doc = export::export_file(path, Some(leaf), format, export::ExportOptions { thinking })
        .map_err(|e| e.to_string())?;
    export::write_in_dir(dir, file_name, &doc)
        .map_err(|e| format!("cannot write into {}: {e}", dir.display()))
}

/// Notes what the picker just moved to the trash as the last batch, for
/// `arbor restore` after the picker has closed (a failure only logged: the
/// picker's own undo does not need the note).
fn note_batch(paths: &[PathBuf]) {
    let Some(note) = arbor_session::bulk::record_path() else {
        return;
    };
    let abs: Vec<PathBuf> = paths
        .iter()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let now = chrono::Utc::now().timestamp_millis();
    if let Err(e) = arbor_session::bulk::write_record(&note, &abs, now) {
        arbor_util::log::line(format!("trash note {}: {e}", note.display()));
    }
}

/// Puts the most recently trashed copy of `path` back; errors in words.
pub fn restore_from_trash(path: &std::path::Path) -> Result<(), String> {
    fileops::restore_from_trash(path).map_err(|e| super::trash_text::restore_error_text(&e))
}

fn spawn_input(tx: Sender<AppEvent>) {
    std::thread::spawn(move || loop {
        let ev = match crossterm::event::read() {
            Ok(Event::Key(k)) if arbor_util::log::enabled() => {
                arbor_util::log::line(format!("key: {:?} {:?}", k.code, k.modifiers));
                AppEvent::Key(k)
            }
            Ok(Event::Key(k)) => AppEvent::Key(k),
            Ok(Event::Paste(text)) => AppEvent::Paste(text),
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

fn spawn_ticker(tx: Sender<AppEvent>) {
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
fn spawn_loader(tx: Sender<AppEvent>, loader: Loader, drawn: Receiver<()>) {
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

/// What the loader loads, and how a cold index is built.
struct Loader {
    config: StoreConfig,
    project: Option<String>,
    builder_args: Option<Vec<std::ffi::OsString>>,
}

/// Scores only the newest request; older ones still queued are dropped.
fn spawn_search_worker(tx: Sender<AppEvent>) -> Sender<SearchJob> {
    let (jtx, jrx) = channel::<SearchJob>();
    std::thread::spawn(move || {
        let mut searcher = Searcher::new(open_index());
        // Work left for idle moments: asked between requests, never before
        // one that is waiting.
        let mut idle_work = false;
        loop {
            let next = if idle_work {
                newest_search_now(&jrx)
            } else {
                newest_search(&jrx).map(Some)
            };
            let Some(next) = next else { break };
            let Some((warm, job)) = next else {
                idle_work = searcher.idle();
                continue;
            };
            if let Some(docs) = warm {
                searcher.warm(Some(&docs));
                idle_work = true;
            }
            let Some(ask) = job else {
                continue;
            };
            let SearchAsk {
                generation,
                query,
                docs,
                index_problem,
                first,
            } = *ask;
            let stale = || WANTED_SEARCH.load(std::sync::atomic::Ordering::Relaxed) != generation;
            let mut early = |a: Answer| {
                let _ = tx.send(search_done(generation, &query, docs.clone(), a));
            };
            // `None`: a newer query is waiting, this answer would be dropped.
            let Some(answer) = search_in_foreground(
                &mut searcher,
                &query,
                &docs,
                index_problem.as_deref(),
                &stale,
                first.as_ref(),
                &mut early,
            ) else {
                continue;
            };
            if tx
                .send(search_done(generation, &query, docs, answer))
                .is_err()
            {
                break;
            }
            // The search may have loaded a newer snapshot of the index,
            // whose text is not checked yet.
            idle_work = true;
        }
    });
    jtx
}

/// A picker search off rayon's shared pool (see [`on_foreground_pool`]):
/// during a first run the index build holds that pool, and a query typed
/// was answered only after the build.
fn search_in_foreground(
    searcher: &mut Searcher,
    query: &Query,
    docs: &Arc<Docs>,
    index_problem: Option<&str>,
    stale: &(dyn Fn() -> bool + Sync),
    first: Option<&FirstRows>,
    early: &mut (dyn FnMut(Answer) + Send),
) -> Option<Answer> {
    on_foreground_pool(|| searcher.search_first(query, docs, index_problem, stale, first, early))
}

fn search_done(generation: u64, query: &Query, docs: Arc<Docs>, answer: Answer) -> AppEvent {
    AppEvent::SearchDone {
        generation,
        query: query.raw.clone(),
        docs,
        scores: answer.scores,
        incomplete: answer.incomplete,
        stage: answer.stage,
    }
}

/// Runs `work` (a search, a user's write, a preview, the tree's matches)
/// on threads of its own: these run on all cores, and on the shared pool
/// they queued behind a first run's index build, which keeps that pool's
/// threads busy (a rename while 3,000 sessions were indexed waited ~10 s to
/// be written, and a query typed then was answered only after the build).
fn on_foreground_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match foreground_pool() {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// The threads of [`on_foreground_pool`]; `None` when they could not be
/// started (the work then runs on the shared pool).
fn foreground_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|n| format!("arbor-foreground-{n}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Threads for work the screen does not wait for (a million-entry
/// session's search text takes seconds on every core): scheduled below the
/// UI thread, so the keys typed meanwhile still draw at once.
/// `None` when its threads could not be started (the work then runs on
/// the shared pool).
fn background_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .thread_name(|n| format!("arbor-background-{n}"))
            .start_handler(|_| lower_priority())
            .build()
            .ok()
    })
    .as_ref()
}

/// Lowers the calling thread's scheduling priority (nice 10); on Linux a
/// nice value belongs to the thread.
fn lower_priority() {
    #[cfg(unix)]
    // SAFETY: setpriority only reads its arguments; `0` is this thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// Previews asked for so far: the worker's job is stale once it moved on.
static PREVIEWS_ASKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
/// Tree searches asked for so far (see `Effect::TreeHits`).
static TREE_HITS_ASKED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// `Effect::LoadPreview`'s fields: the session, the query, and the file's
/// change time when its matches are to be listed.
type PreviewJob = (PathBuf, Query, Option<i64>);

/// The entries of `path` that match `query` as `HitsLoaded`; `None` once
/// `stale`.
fn preview_hits(
    path: PathBuf,
    query: &Query,
    stamp: i64,
    limits: &PreviewLimits,
    stale: &dyn Fn() -> bool,
) -> Option<AppEvent> {
    let r = match load_hits(&path, query, limits, stale) {
        Ok(None) => return None,
        Ok(Some((hits, total))) => Ok(PreviewHits {
            path,
            query: query.raw.clone(),
            stamp,
            hits,
            total,
        }),
        Err(e) => Err((path, e)),
    };
    Some(AppEvent::HitsLoaded(r))
}

/// Which entries of the tree's session match `query`, as `TreeHits`;
/// `None` once `stale`.
fn tree_hits(
    session: super::app::SharedSession,
    query: &Query,
    stale: &(dyn Fn() -> bool + Sync),
) -> Option<AppEvent> {
    let bits = arbor_search::hits::session_term_bits(&session.0, query, stale)?;
    Some(AppEvent::TreeHits {
        session,
        query: query.raw.clone(),
        bits: Arc::new(bits),
    })
}

fn spawn_preview_worker(tx: Sender<AppEvent>) -> Sender<PreviewJob> {
    let (jtx, jrx) = channel::<PreviewJob>();
    std::thread::spawn(move || {
        while let Some((path, query, hits)) = latest(&jrx) {
            // Everything queued was taken: this job is the newest asked.
            let asked = PREVIEWS_ASKED.load(std::sync::atomic::Ordering::SeqCst);
            let stale = || PREVIEWS_ASKED.load(std::sync::atomic::Ordering::SeqCst) != asked;
            let limits = PreviewLimits::default();
            let r = on_foreground_pool(|| load_preview_with(&path, &limits))
                .map(|(p, _)| p)
                .map_err(|e| (path.clone(), e));
            if stale() {
                continue;
            }
            if tx.send(AppEvent::PreviewLoaded(r)).is_err() {
                break;
            }
            // Reading a big session for its matches can take a while: a
            // newer selection or query stops it.
            let Some(stamp) = hits else { continue };
            let hits = on_foreground_pool(|| preview_hits(path, &query, stamp, &limits, &stale));
            if let Some(ev) = hits {
                if stale() {
                    continue;
                }
                if tx.send(ev).is_err() {
                    break;
                }
            }
        }
    });
    jtx
}

/// One search (`Effect::Search`'s fields): its generation, the query, the
/// rows to score and why the index may be incomplete.
/// One search for the worker (an [`Effect::Search`]'s fields).
struct SearchAsk {
    generation: u64,
    query: Query,
    docs: Arc<Docs>,
    index_problem: Option<String>,
    first: Option<FirstRows>,
}

type SearchBody = Box<SearchAsk>;

/// What the worker takes from its queue at once: the snapshot of a
/// warm-up asked for, and the newest search (older ones are stale).
type Drained = (Option<Arc<Docs>>, Option<SearchBody>);

/// Blocks for a request, then takes everything queued.
fn newest_search(rx: &Receiver<SearchJob>) -> Option<Drained> {
    Some(drain_searches(rx.recv().ok()?, rx))
}

/// [`newest_search`] without waiting: `Some(None)` when nothing is queued,
/// `None` once the picker is gone.
fn newest_search_now(rx: &Receiver<SearchJob>) -> Option<Option<Drained>> {
    match rx.try_recv() {
        Ok(first) => Some(Some(drain_searches(first, rx))),
        Err(std::sync::mpsc::TryRecvError::Empty) => Some(None),
        Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
    }
}

/// `first` and everything queued after it, as [`newest_search`] gives them.
fn drain_searches(first: SearchJob, rx: &Receiver<SearchJob>) -> Drained {
    let (mut warm, mut job) = (None, None);
    for j in std::iter::once(first).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
        match j {
            SearchJob::Warm(docs) => warm = Some(docs),
            SearchJob::Search(s) => job = Some(s),
        }
    }
    (warm, job)
}

/// Blocks for a job, then skips to the newest one queued.
fn latest<T>(rx: &Receiver<T>) -> Option<T> {
    let mut job = rx.recv().ok()?;
    while let Ok(newer) = rx.try_recv() {
        job = newer;
    }
    Some(job)
}

/// Watches the store (see `store::watch`); changes arrive as `FsChanged`
/// and `FolderGone`. Returns once the watches are in place.
fn start_watcher(tx: Sender<AppEvent>, roots: &[WatchRoot]) -> StoreWatcher {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The copy (`y` on a resent message) is crossterm's OSC 52 command:
    /// the clipboard selection, the text's UTF-8 bytes in standard base64.
    #[test]
    fn copy_is_osc52_to_the_clipboard() {
        use crossterm::Command as _;
        let mut s = String::new();
        super::CopyToClipboard::to_clipboard_from("Man ✓")
            .write_ansi(&mut s)
            .unwrap();
        assert_eq!(s, "\x1b]52;c;TWFuIOKckw==\x1b\\");
    }

    /// Holds every thread of rayon's shared pool (as a first run's index
    /// build holds them) until the guard it returns is dropped.
    fn hold_the_shared_pool() -> impl Drop {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::mpsc::channel;
        struct Held(Arc<AtomicBool>);
        impl Drop for Held {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let hold = Arc::new(AtomicBool::new(true));
        let threads = rayon::current_num_threads();
        let (held_tx, held_rx) = channel();
        for _ in 0..threads {
            let (held_tx, hold) = (held_tx.clone(), hold.clone());
            rayon::spawn(move || {
                let _ = held_tx.send(());
                while hold.load(Ordering::Acquire) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            });
        }
        for _ in 0..threads {
            held_rx.recv().unwrap();
        }
        Held(hold)
    }

    /// Waits for `work` on a thread of its own; `None` past a guard
    /// against a hang (not a timing: the shared pool stays held until the
    /// answer comes or this gives up).
    fn answer<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(work());
        });
        rx.recv_timeout(std::time::Duration::from_secs(30)).ok()
    }

    /// A user's write parses on threads of its own: with every thread of
    /// the shared pool held, its parallel work still finishes. On the
    /// shared pool it would wait for them, and they are let go only after.
    #[test]
    fn foreground_work_does_not_wait_for_the_shared_pool() {
        use rayon::prelude::*;
        let held = hold_the_shared_pool();
        let got = answer(|| super::on_foreground_pool(|| (0..10_000u64).into_par_iter().sum()));
        drop(held);
        assert_eq!(got, Some(49_995_000u64));
    }

    /// So does the picker's search, fuzzy pass and all.
    #[test]
    fn a_search_does_not_wait_for_the_shared_pool() {
        use arbor_search::{Docs, Query, SearchDoc};
        use arbor_session::info::SessionInfo;
        let docs: Vec<_> = ["parser fix", "emigre notes", "cache"]
            .iter()
            .map(|name| {
                let info = SessionInfo {
                    id: format!("id-{name}"),
                    name: Some(name.to_string()),
                    has_name: true,
                    cwd: "/w".into(),
                    ..Default::default()
                };
                let path = PathBuf::from(format!("/s/{name}.jsonl"));
                (path.into(), Arc::new(SearchDoc::from_info(&info)))
            })
            .collect();
        let docs = Arc::new(Docs(docs));
        let held = hold_the_shared_pool();
        let got = answer(move || {
            let mut searcher = Searcher::new(None);
            let query = Query::parse("emigr");
            let answer = search_in_foreground(
                &mut searcher,
                &query,
                &docs,
                None,
                &|| false,
                None,
                &mut |_| {},
            );
            answer.map(|a| a.scores.iter().map(Option::is_some).collect::<Vec<_>>())
        });
        drop(held);
        assert_eq!(got, Some(Some(vec![false, true, false])));
    }

    /// A frame is written at once when flushed; what a panic leaves
    /// buffered never reaches the terminal (restored by then).
    #[test]
    fn a_frame_goes_out_whole_and_a_panic_leaves_nothing_behind() {
        use std::io::Write;
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Sink(Arc<Mutex<Vec<usize>>>);
        impl Write for Sink {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().push(buf.len());
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let sink = Sink::default();
        let mut w = super::FrameWriter::new(Box::new(sink.clone()));
        for _ in 0..100 {
            w.write_all(&[b'x'; 60]).unwrap();
        }
        assert!(sink.0.lock().unwrap().is_empty());
        w.flush().unwrap();
        assert_eq!(*sink.0.lock().unwrap(), [6000], "one write");
        drop(w);

        let sink = Sink::default();
        let inner = sink.clone();
        let panicked = std::panic::catch_unwind(move || {
            let mut w = super::FrameWriter::new(Box::new(inner));
            w.write_all(b"half a frame").unwrap();
            panic!("while drawing");
        });
        assert!(panicked.is_err());
        assert!(sink.0.lock().unwrap().is_empty());
    }
}
