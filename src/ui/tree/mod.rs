//! The branch tree of one session: Atomic's `/tree` screen, with the moves
//! written back to disk.

mod detail;
mod keys;
mod state;
mod view;

pub use detail::detail_lines;
pub use keys::update;
pub use state::{Loaded, TreeDialog, TreeState};
pub use view::render;

/// Rows the tree's list shows on a `width` × `height` screen.
pub fn list_height(width: u16, height: u16) -> usize {
    view::list_area(width, height).height as usize
}
