//! The branch tree of one session: Atomic's `/tree` screen, with the moves
//! written back to disk.

mod detail;
mod keys;
mod state;
mod view;

pub use detail::detail_lines;
pub use keys::user_text;
pub use keys::{
    update, Action, Choice, CompareAction, ContextAction, ExportChoice, Offer, COMPARE_KEYS,
    CONTEXT_KEYS, CONTINUE_KEYS, EXPORT_KEYS, KEYS, OFFER_KEYS,
};
pub use state::{CompareView, Loaded, TreeDialog, TreeState};
pub use view::{help_rows, render};

/// Rows the tree's list shows on a `width` × `height` screen.
pub fn list_height(width: u16, height: u16) -> usize {
    view::list_area(width, height).height as usize
}
