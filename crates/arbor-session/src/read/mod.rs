//! Reading a session file: opening it without blocking, its lines (whole,
//! in chunks, or skimmed), and the tolerant parse into a [`Session`](reader::Session).

pub mod chunked;
pub mod jsonscan;
pub mod lifted;
pub mod line_skim;
pub(crate) mod load;
pub mod open;
pub mod reader;
pub(crate) mod source;
