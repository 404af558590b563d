//! The session picker: Atomic's `/resume` screen, live and searchable.

mod dialogs;
mod keys;
mod matches;
mod preview;
mod row;
mod state;
mod update;
mod view;

pub use dialogs::delete::{PERMANENT_KEYS, TRASHING_KEYS};
pub use dialogs::labels::LABEL_KEYS;
pub use keys::{Action, KEYS};
pub use preview::{
    load_hits, load_hits_noting, load_preview, load_preview_with, Preview, PreviewHits,
    PreviewLimits, Unread, MAX_HITS,
};
pub use row::{Folders, Row, RowInfo, FIRST_PROMPT_KEPT};
pub use state::{
    Dialog, PickerState, Scope, Sort, Status, StatusKind, VisibleRow, PERMANENT_GUARD_MS,
};
pub use update::update;
pub use view::{help_rows, list_area, list_rows, render};
