//! The application state machine: events in, effects out.

use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, MouseEvent};

use super::keymap::{bind, ch, ctrl, key, Answer, Keymap, CANCEL_ID};
use super::picker::{PickerState, Preview, PreviewHits, Row, StatusKind};
use super::tree::{Loaded, TreeDialog, TreeState};
use arbor_search::Query;
use arbor_session::search_text::SearchText;
use arbor_session::Agent;
use arbor_store::{ScanProblem, SessionFile, StoreConfig};

/// Everything that can happen: input, background results, file changes, time.
#[derive(Debug)]
pub enum AppEvent {
    Key(KeyEvent),
    /// Text the user pasted (bracketed paste): it goes into the focused
    /// text field as text, never as keys, so a newline in it is not Enter.
    Paste(String),
    Mouse(MouseEvent),
    /// The second left press of a double click (see `mouse::ClickPairs`),
    /// in place of its `Mouse` event: what Enter does, on the row under it.
    DoubleClick(MouseEvent),
    Resize(u16, u16),
    /// A second passed, at this time: the ages shown change with it, and
    /// status messages expire.
    Tick(i64),
    /// Rows read by the loader (or re-read after a change).
    Rows(Vec<Row>),
    LoadProgress {
        done: usize,
        total: usize,
    },
    LoadFinished {
        problems: Vec<ScanProblem>,
    },
    /// The index is being built behind the listed rows (files done of
    /// total); `None` when it is complete. Message bodies are searchable
    /// once it is.
    Indexing(Option<(usize, usize)>),
    SearchDone {
        generation: u64,
        query: String,
        /// The snapshot scored, and each of its documents' relevance.
        docs: Arc<Docs>,
        scores: Vec<Option<u32>>,
        /// Why some sessions' message bodies were not searched (`None`:
        /// the answer is complete).
        incomplete: Option<String>,
        /// How much of the answer it is.
        stage: crate::app::searcher::Stage,
    },
    /// The index could not be written (e.g. the cache disk is full): its
    /// stored text may lack sessions or their newest messages.
    IndexIncomplete(String),
    /// The watcher saw these paths change.
    FsChanged(Vec<PathBuf>),
    /// A remote's background sync took this many files so far.
    RemoteSyncing {
        host: String,
        files: u64,
    },
    /// A remote's background sync ended: the files it took, or why it
    /// failed (a sentence naming the host).
    RemoteSynced {
        host: String,
        result: Result<u64, String>,
    },
    /// The user's `keybindings.json` changed: the bindings it now gives.
    Keys(Arc<crate::ui::keybindings::UserKeys>),
    /// A watched file is gone (or no longer a session).
    RowGone(PathBuf),
    /// A watched folder is gone: so is every session under it.
    FolderGone(PathBuf),
    PreviewLoaded(Result<Preview, (PathBuf, String)>),
    /// The entries of a previewed session that match the query.
    HitsLoaded(Result<PreviewHits, (PathBuf, String)>),
    /// Per entry of the tree's session, the bits of the query's body
    /// terms that match in it (see `search::hits::session_term_bits`).
    TreeHits {
        session: SharedSession,
        query: String,
        bits: Arc<arbor_search::entry_bits::EntryTermBits>,
    },
    Renamed {
        path: PathBuf,
        result: Result<String, String>,
    },
    /// A rename refused: the file is version 1/2 and must be rewritten
    /// first (the picker asks).
    RenameNeedsMigration {
        path: PathBuf,
        name: String,
        version: u32,
    },
    Trashed {
        path: PathBuf,
        result: Result<(), String>,
    },
    Deleted {
        path: PathBuf,
        result: Result<(), String>,
    },
    Restored {
        path: PathBuf,
        result: Result<(), String>,
    },
    /// A marked batch's files as they are now: bytes and last change (ms),
    /// `None` for a file gone.
    BatchMeasured(Vec<(PathBuf, Option<(u64, i64)>)>),
    /// A batch went to the trash: those moved, and those not with why.
    TrashedBatch {
        moved: Vec<PathBuf>,
        failed: Vec<(PathBuf, String)>,
    },
    /// A batch came back from the trash.
    RestoredBatch {
        restored: Vec<PathBuf>,
        failed: Vec<(PathBuf, String)>,
    },
    /// A batch deleted for good (after the trash refused it and `y`).
    DeletedBatch {
        deleted: Vec<PathBuf>,
        failed: Vec<(PathBuf, String)>,
    },
    /// A session read for the tree view (`reload`: the open tree's file changed).
    TreeLoaded {
        path: PathBuf,
        reload: bool,
        result: Result<Box<Loaded>, String>,
    },
    /// An export finished: where it was written, or why not.
    Exported(Result<PathBuf, String>),
    /// The search text of a loaded tree's session, built off the UI thread.
    TreeSearchText {
        session: SharedSession,
        text: Arc<SearchText>,
    },
    /// The labels of the picker's scope (Ctrl+L), newest first.
    LabelsLoaded(Vec<arbor_session::extras::LabelRow>),
    /// A label / branch / fork / migration finished; `new_path` for a fork.
    Wrote {
        path: PathBuf,
        what: WriteKind,
        result: Result<Option<PathBuf>, String>,
    },
}

/// What handling an event came to: the effects to perform, and whether
/// anything on screen changed (the frame is drawn again only then).
#[derive(Debug, Default)]
#[must_use]
pub struct Step {
    pub effects: Vec<Effect>,
    pub redraw: bool,
}

impl Step {
    /// Nothing happened.
    pub fn none() -> Step {
        Step::default()
    }

    /// The screen changed.
    pub fn redraw(effects: Vec<Effect>) -> Step {
        Step {
            effects,
            redraw: true,
        }
    }

    /// Work to do, nothing new to show yet.
    pub fn quiet(effects: Vec<Effect>) -> Step {
        Step {
            effects,
            redraw: false,
        }
    }
}

/// A handler's `None` is an event that changed nothing.
impl From<Option<Vec<Effect>>> for Step {
    fn from(fx: Option<Vec<Effect>>) -> Step {
        match fx {
            Some(effects) => Step::redraw(effects),
            None => Step::none(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Label,
    /// A label cleared (an empty label line).
    LabelRemoved,
    Branch,
    Fork,
}

/// A loaded session handed to a worker (equal when it is the same one).
#[derive(Clone)]
pub struct SharedSession(pub Arc<arbor_session::Session>);

impl PartialEq for SharedSession {
    fn eq(&self, other: &SharedSession) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SharedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedSession({})", self.0.path.display())
    }
}

/// I/O requested by `update`, performed by the runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Score `docs` against `query`; answer with `SearchDone`.
    Search {
        generation: u64,
        query: Query,
        docs: Arc<Docs>,
        /// Why the index may lack text (see `AppEvent::IndexIncomplete`).
        index_problem: Option<String>,
        /// The rows to answer first, when the list shows the best first.
        first: Option<crate::app::searcher::FirstRows>,
    },
    /// Read the preview of `path` (answered by `PreviewLoaded`); with
    /// `hits`, also list its entries that match `query` (answered by
    /// `HitsLoaded`), for the file as it was at that time (ms).
    LoadPreview {
        path: PathBuf,
        query: Query,
        hits: Option<i64>,
    },
    /// Find which entries of the tree's session match `query`'s body
    /// terms (answered by `TreeHits`).
    TreeHits {
        session: SharedSession,
        query: Query,
    },
    /// Re-read these files' rows (after a change on disk).
    Rescan(Vec<SessionFile>),
    Rename {
        path: PathBuf,
        name: String,
    },
    Trash(PathBuf),
    DeletePermanently(PathBuf),
    Restore(PathBuf),
    /// Read the sizes and change times of a marked batch (for its
    /// question); answer with `BatchMeasured`.
    MeasureBatch(Vec<PathBuf>),
    /// Move each of these to the trash (one failure leaves the others).
    TrashBatch(Vec<PathBuf>),
    /// Bring a batch back from the trash, listing it once.
    RestoreBatch(Vec<PathBuf>),
    DeleteBatch(Vec<PathBuf>),
    /// Read a session for the tree view.
    OpenTree {
        path: PathBuf,
        agent: Agent,
    },
    ReloadTree {
        path: PathBuf,
        agent: Agent,
    },
    /// Build the search text of the tree's session (answered by `TreeSearchText`).
    IndexTree(SharedSession),
    /// Back from the tree view to the picker.
    CloseTree,
    Label {
        path: PathBuf,
        target: String,
        label: Option<String>,
    },
    Branch {
        path: PathBuf,
        entry: String,
        summary: String,
    },
    Fork {
        path: PathBuf,
        entry: String,
    },
    /// Rewrite a v1/v2 file as v3 (the user agreed), then perform `then`.
    MigrateThen {
        path: PathBuf,
        then: Box<Effect>,
    },
    /// Put text on the clipboard (OSC 52, through the terminal).
    Copy(String),
    /// Read the labels of `scope` (through the index when it is on);
    /// answer with `LabelsLoaded`.
    LoadLabels {
        config: StoreConfig,
        scope: arbor_store::Scope,
        include_internal: bool,
    },
    /// Write the branch of `path` ending at `leaf` into the current folder
    /// as `file_name` (or a numbered variant: nothing is replaced).
    Export {
        path: PathBuf,
        leaf: String,
        format: arbor_session::export::ExportFormat,
        thinking: bool,
        file_name: String,
    },
    /// Leave the UI with this outcome.
    Exit(Outcome),
}

pub use arbor_search::Docs;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Quit,
    /// Run the session's agent on it, in its cwd.
    Resume {
        path: PathBuf,
        /// The session id (a `{id}` in the resume command).
        id: String,
        cwd: String,
        agent: Agent,
    },
    /// [`Outcome::Resume`] in the current folder: the session's own is
    /// gone, and the person agreed in the UI (never asked again).
    ResumeHere {
        path: PathBuf,
        id: String,
        cwd: String,
        agent: Agent,
    },
    /// Print the path on stdout (`--print`).
    Print(PathBuf),
}

impl Outcome {
    /// A resume whose folder no longer exists: it runs nowhere until the
    /// person agrees to the current folder (see [`App::ask_resume_here`]).
    pub fn folder_gone(&self) -> bool {
        // A remote's session resumes in its folder there.
        matches!(self, Outcome::Resume { cwd, path, .. }
            if !cwd.is_empty() && !std::path::Path::new(cwd).is_dir()
                && arbor_util::hosts::host_of(path).is_none())
    }
}

/// Enter on a session whose folder is gone: the question asked over the
/// screen before arbor leaves it. Declining goes back to the screen as it
/// was (the selection kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeHereQuestion {
    /// The [`Outcome::Resume`] asked about.
    pub outcome: Outcome,
    /// The current folder, where it would run.
    pub here: String,
}

const HERE_YES: &str = "arbor.resumeHere.yes";
const HERE_NO: &str = "arbor.resumeHere.no";

/// Its keys: `y` resumes in the current folder; `n`, Esc (or Enter, the
/// `[y/N]` default) go back.
pub const RESUME_HERE_KEYS: Keymap<Answer> = Keymap(&[
    bind(
        &[
            (ch('y').as_id(HERE_YES), Answer::Yes),
            (ch('Y').quiet().as_id(HERE_YES), Answer::Yes),
        ],
        "resume in the current folder",
    ),
    bind(
        &[
            (ch('n').as_id(HERE_NO), Answer::No),
            (ch('N').quiet().as_id(HERE_NO), Answer::No),
            (key(KeyCode::Esc).as_id(CANCEL_ID), Answer::No),
            (key(KeyCode::Enter).quiet().as_id(HERE_NO), Answer::No),
            (ctrl('c').quiet().as_id(CANCEL_ID), Answer::No),
        ],
        "back",
    ),
]);

/// Which screen is open.
#[derive(Debug)]
pub enum Mode {
    Picker,
    Tree(Box<TreeState>),
}

#[derive(Debug)]
pub struct App {
    pub mode: Mode,
    pub picker: PickerState,
    pub width: u16,
    pub height: u16,
    /// Enter prints the path instead of resuming.
    pub print_mode: bool,
    /// Set when the loop should end.
    pub outcome: Option<Outcome>,
    /// Opened as `arbor tree SESSION`: Esc quits instead of going to a picker.
    pub tree_only: bool,
    /// The store's roots: the agent of a path the watcher reports.
    pub store: StoreConfig,
    /// The clock of the frame on screen (of the last step that asked for
    /// one): a tick redraws only when an age shown then has changed.
    pub frame_ms: i64,
    /// The local time's offset from UTC, from the runtime's clock (UTC
    /// until it says: tests draw the same anywhere).
    pub utc_offset: chrono::FixedOffset,
    /// The tree being opened at an entry (from the picker's labels, or
    /// `arbor tree --at`): select this entry of this file once it is read.
    pub open_at: Option<(PathBuf, String)>,
    /// Asked over the screen: resume in the current folder?
    pub resume_here: Option<ResumeHereQuestion>,
    /// The tree being opened with a search typed (the picker's query, at
    /// one of its matches): this search, in this file.
    pub open_search: Option<(PathBuf, String)>,
}

impl App {
    pub fn new(project_cwd: String, now_ms: i64) -> App {
        App {
            mode: Mode::Picker,
            picker: PickerState::new(project_cwd, now_ms),
            width: 80,
            height: 24,
            print_mode: false,
            outcome: None,
            tree_only: false,
            store: StoreConfig::default(),
            frame_ms: now_ms,
            utc_offset: chrono::Offset::fix(&chrono::Utc),
            open_at: None,
            resume_here: None,
            open_search: None,
        }
    }

    /// The local offset from UTC now (the runtime asks its clock at start
    /// and with each tick: it changes with daylight saving time).
    pub fn set_utc_offset(&mut self, offset: chrono::FixedOffset) {
        self.utc_offset = offset;
        if let Mode::Tree(t) = &mut self.mode {
            t.utc_offset = offset;
        }
    }

    /// `update` at a moment of the clock: the runtime passes the time each
    /// event is handled, so that rules about time (a question that ignores
    /// keys for a moment, status messages that expire) read it from the
    /// state, never from the system clock inside `update`.
    pub fn update_at(&mut self, now_ms: i64, ev: AppEvent) -> Vec<Effect> {
        self.step_at(now_ms, ev).effects
    }

    /// The one place state changes.
    pub fn update(&mut self, ev: AppEvent) -> Vec<Effect> {
        self.step(ev).effects
    }

    /// [`App::step`] at a moment of the clock (see [`App::update_at`]).
    pub fn step_at(&mut self, now_ms: i64, ev: AppEvent) -> Step {
        self.picker.now_ms = now_ms;
        if let Mode::Tree(t) = &mut self.mode {
            t.now_ms = now_ms;
        }
        self.step(ev)
    }

    /// [`App::update`], saying also whether the frame on screen is out of
    /// date: the runtime draws only then.
    pub fn step(&mut self, ev: AppEvent) -> Step {
        if let AppEvent::Resize(w, h) = ev {
            self.width = w;
            self.height = h;
            self.frame_ms = self.picker.now_ms;
            // The tree keeps its scroll between frames: a shorter screen
            // must still show the selection, a taller one no blank rows.
            if let Mode::Tree(t) = &mut self.mode {
                t.clamp_scroll(super::tree::list_height(w, h));
            }
            return Step::redraw(Vec::new());
        }
        if let AppEvent::Keys(keys) = ev {
            self.keys_changed(keys);
            return Step::redraw(Vec::new());
        }
        if self.resume_here.is_some() {
            if let Some(step) = self.on_resume_here(&ev) {
                return step;
            }
        }
        let mut step = self.route(ev);
        // A tree search that needs to know which entries match asks once.
        if let Mode::Tree(t) = &mut self.mode {
            if let Some(query) = t.take_hits_request() {
                step.effects.push(Effect::TreeHits {
                    session: SharedSession(t.loaded.session.clone()),
                    query,
                });
            }
        }
        if step.redraw {
            self.frame_ms = self.picker.now_ms;
        }
        for e in &step.effects {
            if let Effect::Exit(o) = e {
                self.outcome = Some(o.clone());
            }
        }
        step
    }

    /// The user's bindings changed: they are in force from the next key,
    /// and the status line says so (or what could not be read).
    fn keys_changed(&mut self, keys: Arc<crate::ui::keybindings::UserKeys>) {
        let (text, error) = match crate::ui::keybindings::summary(&keys) {
            Some(problem) => (problem, true),
            None => (
                format!("Keys read again from {}", crate::ui::key_file::FILE_NAME),
                false,
            ),
        };
        crate::ui::keybindings::install(keys);
        match &mut self.mode {
            Mode::Tree(t) => t.status = Some((text, error)),
            Mode::Picker => {
                let kind = if error {
                    StatusKind::Error
                } else {
                    StatusKind::Info
                };
                self.picker.set_status(kind, text);
            }
        }
    }

    /// The runtime found `outcome`'s folder gone ([`Outcome::folder_gone`]):
    /// ask, over the screen, whether to resume in `here` instead.
    pub fn ask_resume_here(&mut self, outcome: Outcome, here: String) {
        self.outcome = None;
        self.resume_here = Some(ResumeHereQuestion { outcome, here });
    }

    /// Input while the question is up: its answer, or nothing (typed text,
    /// pastes and clicks do not reach the screen under it). Background
    /// results go on to the screens (`None`).
    fn on_resume_here(&mut self, ev: &AppEvent) -> Option<Step> {
        let k = match ev {
            AppEvent::Key(k) if k.kind != KeyEventKind::Release => k,
            AppEvent::Key(_)
            | AppEvent::Paste(_)
            | AppEvent::Mouse(_)
            | AppEvent::DoubleClick(_) => return Some(Step::none()),
            _ => return None,
        };
        let Some(answer) = RESUME_HERE_KEYS.action(k, true) else {
            return Some(Step::none());
        };
        let q = self.resume_here.take()?;
        match (answer, q.outcome) {
            (
                Answer::Yes,
                Outcome::Resume {
                    path,
                    id,
                    cwd,
                    agent,
                },
            ) => {
                let o = Outcome::ResumeHere {
                    path,
                    id,
                    cwd,
                    agent,
                };
                self.outcome = Some(o.clone());
                Some(Step::redraw(vec![Effect::Exit(o)]))
            }
            _ => {
                const NOT: &str = "Not resumed: the session's folder no longer exists";
                match &mut self.mode {
                    Mode::Tree(t) => t.status = Some((NOT.into(), false)),
                    Mode::Picker => self.picker.set_status(super::picker::StatusKind::Info, NOT),
                }
                Some(Step::redraw(Vec::new()))
            }
        }
    }

    fn route(&mut self, ev: AppEvent) -> Step {
        match ev {
            AppEvent::TreeLoaded {
                path,
                reload,
                result,
            } => Step::redraw(self.tree_loaded(path, reload, result)),
            AppEvent::TreeSearchText { session, text } => {
                if let Mode::Tree(t) = &mut self.mode {
                    t.set_search_text(&session.0, text);
                    // A search typed meanwhile now reads the whole text.
                    if !t.search.text().trim().is_empty() {
                        t.rebuild();
                        // The rows changed under the selection: keep it on screen.
                        t.clamp_scroll(super::tree::list_height(self.width, self.height));
                        return Step::redraw(Vec::new());
                    }
                }
                Step::none()
            }
            AppEvent::TreeHits {
                session,
                query,
                bits,
            } => {
                if let Mode::Tree(t) = &mut self.mode {
                    if t.set_hits(&session.0, query, bits) {
                        t.clamp_scroll(super::tree::list_height(self.width, self.height));
                        return Step::redraw(Vec::new());
                    }
                }
                Step::none()
            }
            AppEvent::Wrote { path, what, result } => Step::redraw(self.wrote(path, what, result)),
            AppEvent::Exported(result) => {
                let (msg, err) = match result {
                    Ok(p) => (format!("Exported to {}", p.display()), false),
                    Err(e) => (format!("Export failed: {e}"), true),
                };
                match &mut self.mode {
                    Mode::Tree(t) => t.status = Some((msg, err)),
                    Mode::Picker => self.picker.set_status(
                        if err {
                            super::picker::StatusKind::Error
                        } else {
                            super::picker::StatusKind::Success
                        },
                        msg,
                    ),
                }
                Step::redraw(Vec::new())
            }
            AppEvent::FsChanged(paths) => {
                let mut fx = Vec::new();
                if let Mode::Tree(t) = &self.mode {
                    if paths.iter().any(|p| p == &t.path) {
                        fx.push(Effect::ReloadTree {
                            path: t.path.clone(),
                            agent: t.loaded.agent,
                        });
                    }
                }
                let picker = super::picker::update(self, AppEvent::FsChanged(paths));
                fx.extend(picker.effects);
                Step {
                    effects: fx,
                    redraw: picker.redraw && matches!(self.mode, Mode::Picker),
                }
            }
            ev @ (AppEvent::Key(_)
            | AppEvent::Paste(_)
            | AppEvent::Mouse(_)
            | AppEvent::DoubleClick(_)
            | AppEvent::Tick(_))
                if matches!(self.mode, Mode::Tree(_)) =>
            {
                if let AppEvent::Tick(now) = ev {
                    self.picker.tick(now);
                }
                super::tree::update(self, ev)
            }
            // Background results keep the picker current while the tree is
            // open, unseen there.
            ev => {
                let step = super::picker::update(self, ev);
                Step {
                    redraw: step.redraw && matches!(self.mode, Mode::Picker),
                    ..step
                }
            }
        }
    }

    fn tree_loaded(
        &mut self,
        path: PathBuf,
        reload: bool,
        result: Result<Box<Loaded>, String>,
    ) -> Vec<Effect> {
        match (result, &mut self.mode) {
            (Ok(loaded), Mode::Tree(t)) if reload && t.path == path => {
                let session = SharedSession(loaded.session.clone());
                t.write_failed = false;
                t.replace(*loaded);
                t.clamp_scroll(super::tree::list_height(self.width, self.height));
                t.expect_search_text();
                return vec![Effect::IndexTree(session)];
            }
            (Ok(loaded), _) if !reload => {
                let session = SharedSession(loaded.session.clone());
                let at = self.open_at.take().filter(|(p, _)| *p == path);
                let search = self.open_search.take().filter(|(p, _)| *p == path);
                let mut t = TreeState::new(path, *loaded, self.picker.now_ms);
                t.utc_offset = self.utc_offset;
                t.from_picker = !self.tree_only;
                // Its search text is on its way: a search waits for it
                // rather than reading every entry here.
                t.expect_search_text();
                if let Some((_, text)) = search {
                    // Opened at the entry asked for, else at the first match.
                    t.start_search(&text, at.is_none());
                    let listed = self.picker.hits().filter(|h| h.path == t.path);
                    t.preview_matches = listed.map(|h| (text.trim().to_string(), h.total));
                }
                if let Some((_, entry)) = at {
                    // Where the match picked is, said when it is not its own
                    // row under the filter in force.
                    let opened = t.open_at(&entry);
                    if opened == super::tree::OpenedAt::Missing {
                        let id = arbor_session::render::sanitize_line(&entry);
                        t.status = Some((format!("No entry {id} in this session"), true));
                    } else if let Some(said) = opened.said() {
                        t.status = Some((said, false));
                    }
                }
                // The first frame shows the selection (the leaf: often the
                // last row of a long session).
                t.clamp_scroll(super::tree::list_height(self.width, self.height));
                self.mode = Mode::Tree(Box::new(t));
                return vec![Effect::IndexTree(session)];
            }
            (Err(e), Mode::Tree(t)) if t.path == path => {
                // A failed write reloads the tree; its message (why nothing
                // was written: the file was trashed, say) stays, as a reload
                // of a file that is gone would only say the same less clearly.
                let write_message = std::mem::take(&mut t.write_failed)
                    .then(|| t.status.take())
                    .flatten();
                t.status = write_message.or_else(|| Some((format!("Reload failed: {e}"), true)));
            }
            (Err(e), _) => {
                self.picker.set_status(
                    super::picker::StatusKind::Error,
                    format!("Cannot open the tree: {e}"),
                );
                if self.tree_only {
                    return vec![Effect::Exit(Outcome::Quit)];
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn wrote(
        &mut self,
        path: PathBuf,
        what: WriteKind,
        result: Result<Option<PathBuf>, String>,
    ) -> Vec<Effect> {
        let Mode::Tree(t) = &mut self.mode else {
            return Vec::new();
        };
        let agent = t.loaded.agent;
        let id = t.loaded.session.id().to_string();
        let cwd = t
            .loaded
            .session
            .header
            .cwd()
            .unwrap_or_default()
            .to_string();
        match result {
            Err(e) => {
                t.resend = None;
                let text = if e.contains("nothing was written") {
                    e
                } else {
                    format!("Nothing written: {e}")
                };
                t.status = Some((text, true));
                t.write_failed = true;
                vec![Effect::ReloadTree { path, agent }]
            }
            Ok(new_path) => {
                // "Forking…" is over: the offer to resume says what happened.
                t.status = None;
                match what {
                    WriteKind::Label => t.status = Some(("Label saved".into(), false)),
                    WriteKind::LabelRemoved => t.status = Some(("Label removed".into(), false)),
                    WriteKind::Branch => {
                        t.dialog = TreeDialog::OfferResume {
                            path: path.clone(),
                            id,
                            cwd,
                            what: "Branched: the session now continues from there.".into(),
                            prompt: t.resend.take(),
                            copied: false,
                        };
                    }
                    WriteKind::Fork => {
                        let new_path = new_path.unwrap_or_else(|| path.clone());
                        let name = new_path
                            .file_name()
                            .map(|n| n.to_string_lossy().to_string())
                            .unwrap_or_default();
                        // The fork is named like the agent names files: its id is in the name.
                        let id = arbor_store::scan::id_from_file_name(&new_path)
                            .map_or(id, str::to_string);
                        t.dialog = TreeDialog::OfferResume {
                            path: new_path.clone(),
                            id,
                            cwd,
                            what: format!("Forked to {name}."),
                            prompt: t.resend.take(),
                            copied: false,
                        };
                        // Beside its source: the same store root, the same agent.
                        let file = SessionFile {
                            path: new_path,
                            agent,
                        };
                        return vec![
                            Effect::ReloadTree { path, agent },
                            Effect::Rescan(vec![file]),
                        ];
                    }
                }
                vec![Effect::ReloadTree { path, agent }]
            }
        }
    }
}
