//! The session picker: Atomic's `/resume` screen, live and searchable.

mod dialogs;
mod flash;
mod keys;
mod list;
mod matches;
mod preview;
mod progress;
mod remotes;
mod row;
mod search;
mod selection;
mod settings;
mod state;
mod trash;
mod update;
mod view;

pub use dialogs::delete::{PERMANENT_KEYS, TRASHING_KEYS};
pub use dialogs::labels::LABEL_KEYS;
pub use keys::{Action, KEYS};
pub use preview::{
    load_hits, load_hits_noting, load_preview, load_preview_with, Preview, PreviewHits,
    PreviewLimits, Unread, MAX_HITS,
};
pub use remotes::{HostStatus, Remotes};
pub use row::{Folders, Row, RowInfo, FIRST_PROMPT_KEPT};
pub use state::{
    Dialog, Flash, Modal, PickerState, PreviewPane, Progress, Scope, Search, Selection,
    SessionList, Settings, Sort, Status, StatusKind, Trashed, VisibleRow, PERMANENT_GUARD_MS,
};
pub use update::update;
pub use view::{help_rows, list_area, list_rows, render};
