//! arbor: a fast terminal browser for Atomic and pi agent session files.
//!
//! The model (`session`, `store`, `search`) has no terminal imports; the CLI
//! and the TUI drive the same code.

pub mod cli;
pub mod demo;
pub mod index;
pub mod log;
pub mod search;
pub mod session;
pub mod store;
pub mod ui;
pub mod util;
