//! The session picker: Atomic's `/resume` screen, live and searchable.

mod keys;
mod preview;
mod state;
mod view;

pub use keys::update;
pub use preview::{load_preview, load_preview_with, Preview, PreviewLimits};
pub use state::{
    Dialog, Folders, PickerState, Row, Scope, Sort, Status, StatusKind, VisibleRow,
    PERMANENT_GUARD_MS,
};
pub use view::{list_area, list_rows, render};
