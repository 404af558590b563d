//! arbor: a fast terminal browser for Atomic and pi agent session files.
//!
//! This crate is the application: the command line (`cli`), the terminal
//! UI (`ui`) and the plans they share (`app`: which answer comes from the
//! index, which from the files, what is built behind). The model lives in
//! the library crates beside it: `arbor-session`, `arbor-store`,
//! `arbor-search` and `arbor-index` (see docs/architecture.md).

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod abort;
pub mod address_space;
pub mod allocator;
pub mod app;
pub mod cli;
pub mod demo;
pub mod settings;
pub mod term;
pub mod ui;
