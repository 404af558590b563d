//! The branch tree of one session: Atomic's `/tree` screen, with the moves
//! written back to disk.

mod detail;
mod dialogs;
mod keys;
mod state;
mod view;

pub use detail::detail_lines;
pub use dialogs::user_text;
pub use dialogs::{Choice, ExportChoice, Offer, CONTINUE_KEYS, EXPORT_KEYS, OFFER_KEYS};
pub use keys::{update, Action, CompareAction, ContextAction, COMPARE_KEYS, CONTEXT_KEYS, KEYS};
pub use state::{CompareView, Loaded, OpenedAt, TreeDialog, TreeState, TREE_MAX_LINE};
pub use view::{help_rows, render};

/// Rows the tree's list shows on a `width` × `height` screen.
pub fn list_height(width: u16, height: u16) -> usize {
    view::list_area(width, height).height as usize
}
