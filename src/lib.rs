//! arbor: a fast terminal browser for Atomic and pi agent session files.
//!
//! The model (`session`, `store`, `search`) has no terminal imports; the CLI
//! and the TUI drive the same code.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod cli;
pub mod demo;
pub mod index;
pub mod log;
pub mod search;
pub mod session;
pub mod store;
pub mod ui;
pub mod util;
