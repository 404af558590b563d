//! The picker's settings: where it was opened, which sessions it lists
//! (scope, filters) and how (sort, paths, the preview pane).

use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Current,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sort {
    Threaded,
    Recent,
    Relevance,
}

impl Sort {
    pub fn next(self) -> Sort {
        match self {
            Sort::Threaded => Sort::Recent,
            Sort::Recent => Sort::Relevance,
            Sort::Relevance => Sort::Threaded,
        }
    }
    pub fn label(self) -> &'static str {
        match self {
            Sort::Threaded => "Threaded",
            Sort::Recent => "Recent",
            Sort::Relevance => "Fuzzy",
        }
    }
}

/// What the user chose (or the start gave) about the list and the screen.
#[derive(Debug)]
pub struct Settings {
    /// The folder arbor was opened in: [`Scope::Current`] lists its sessions.
    pub(crate) project_cwd: String,
    pub scope: Scope,
    pub sort: Sort,
    pub named_only: bool,
    pub(crate) show_paths: bool,
    pub show_internal: bool,
    /// `None`: automatic (on when the terminal is wide enough).
    pub preview_on: Option<bool>,
    /// The home folder, shown as `~` in paths: resolved once by the runtime
    /// (none in tests, so that their screens do not depend on `$HOME`).
    pub home: Option<PathBuf>,
}

impl Settings {
    pub fn new(project_cwd: String) -> Settings {
        Settings {
            project_cwd,
            scope: Scope::Current,
            sort: Sort::Threaded,
            named_only: false,
            show_paths: false,
            show_internal: false,
            preview_on: None,
            home: None,
        }
    }

    /// What the list depends on besides the rows and the query.
    pub(super) fn list_settings(&self) -> ListSettings {
        ListSettings {
            scope: self.scope,
            sort: self.sort,
            show_internal: self.show_internal,
            named_only: self.named_only,
            project_cwd: self.project_cwd.clone(),
        }
    }
}

/// The settings a list of rows is computed for (see
/// [`super::PickerState::recompute`]).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ListSettings {
    scope: Scope,
    sort: Sort,
    show_internal: bool,
    named_only: bool,
    project_cwd: String,
}
