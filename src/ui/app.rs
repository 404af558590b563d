//! The application state machine: events in, effects out.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::{KeyEvent, MouseEvent};

use super::picker::{PickerState, Preview, Row};
use crate::search::{Query, SearchDoc};
use crate::store::ScanProblem;

/// Everything that can happen: input, background results, file changes, time.
#[derive(Debug)]
pub enum AppEvent {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Resize(u16, u16),
    /// A second passed (ages, status expiry).
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
    SearchDone {
        generation: u64,
        query: String,
        scores: HashMap<PathBuf, u32>,
    },
    /// The watcher saw these paths change.
    FsChanged(Vec<PathBuf>),
    /// A watched file is gone (or no longer a session).
    RowGone(PathBuf),
    PreviewLoaded(Result<Preview, (PathBuf, String)>),
    Renamed {
        path: PathBuf,
        result: Result<String, String>,
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
}

/// I/O requested by `update`, performed by the runtime.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Score `docs` against `query`; answer with `SearchDone`.
    Search {
        generation: u64,
        query: Query,
        docs: Docs,
    },
    LoadPreview {
        path: PathBuf,
        query: Query,
    },
    /// Re-read these files' rows (after a change on disk).
    Rescan(Vec<PathBuf>),
    Rename {
        path: PathBuf,
        name: String,
    },
    Trash(PathBuf),
    DeletePermanently(PathBuf),
    Restore(PathBuf),
    /// Leave the UI with this outcome.
    Exit(Outcome),
}

/// A snapshot of the search documents (cheap: shared pointers).
#[derive(Clone)]
pub struct Docs(pub Vec<(PathBuf, Arc<SearchDoc>)>);

impl PartialEq for Docs {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.0 == b.0)
    }
}

impl std::fmt::Debug for Docs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Docs({} sessions)", self.0.len())
    }
}

impl PartialEq for Query {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Quit,
    /// Run the agent on this session, in its cwd.
    Resume {
        path: PathBuf,
        cwd: String,
    },
    /// Print the path on stdout (`--print`).
    Print(PathBuf),
}

#[derive(Debug)]
pub struct App {
    pub picker: PickerState,
    pub width: u16,
    pub height: u16,
    /// Enter prints the path instead of resuming.
    pub print_mode: bool,
    /// Set when the loop should end.
    pub outcome: Option<Outcome>,
}

impl App {
    pub fn new(project_cwd: String, now_ms: i64) -> App {
        App {
            picker: PickerState::new(project_cwd, now_ms),
            width: 80,
            height: 24,
            print_mode: false,
            outcome: None,
        }
    }

    /// The one place state changes.
    pub fn update(&mut self, ev: AppEvent) -> Vec<Effect> {
        if let AppEvent::Resize(w, h) = ev {
            self.width = w;
            self.height = h;
            return Vec::new();
        }
        let effects = super::picker::update(self, ev);
        for e in &effects {
            if let Effect::Exit(o) = e {
                self.outcome = Some(o.clone());
            }
        }
        effects
    }
}
