//! The session model: reading, migrating and interpreting one session file.
//!
//! Nothing in here knows about terminals; the CLI, the TUI, the index and the
//! tests all drive the same code.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod agent;
pub mod bulk;
pub mod calls;
pub mod chunked;
pub mod compare;
pub mod context;
pub mod entry;
pub mod export;
pub mod extras;
pub mod fileops;
pub mod foreign;
pub mod ids;
pub mod info;
pub mod jsonscan;
pub mod line_skim;
mod load;
pub mod normalize;
pub mod open;
pub mod reader;
pub mod render;
pub mod search_text;
pub mod searchable;
mod source;
pub mod splice;
pub mod tree;
pub mod types;
pub mod view;
pub mod words;
pub mod writer;

pub use agent::Agent;
pub use context::{build_context, ContextFlavor, ContextMessage, SessionContext};
pub use entry::{Entry, Header};
pub use info::{scan_info, SessionInfo};
pub use reader::{read_session, Diagnostics, ReadError, Session};
pub use tree::SessionTree;
