//! The session picker: Atomic's `/resume` screen, live and searchable.

mod keys;
mod matches;
mod preview;
mod state;
mod view;

pub use keys::{update, Action, KEYS, PERMANENT_KEYS, TRASHING_KEYS};
pub use preview::{
    load_hits, load_preview, load_preview_with, Preview, PreviewHits, PreviewLimits, MAX_HITS,
};
pub use state::{
    Dialog, Folders, PickerState, Row, Scope, Sort, Status, StatusKind, VisibleRow,
    FIRST_PROMPT_KEPT, PERMANENT_GUARD_MS,
};
pub use view::{help_rows, list_area, list_rows, render};
