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
