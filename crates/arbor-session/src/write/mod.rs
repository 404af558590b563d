//! Changing a user's session files: the lines arbor appends, in-place edits
//! of a line, batches to the trash and back, and — in [`fileops`] alone —
//! every operation that touches the file system.

pub mod bulk;
pub mod fileops;
pub mod journal;
pub(crate) mod own_partial;
pub mod splice;
pub mod writer;
