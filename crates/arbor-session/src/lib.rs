//! The session model: reading, migrating and interpreting one session file.
//!
//! Nothing in here knows about terminals; the CLI, the TUI, the index and the
//! tests all drive the same code.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agents;
pub mod compare;
pub mod export;
pub mod info;
mod model;
mod read;
mod text;
mod write;

// The modules other crates, the tests and the benches use, by their old
// flat paths (`arbor_session::reader::…`).
pub use agents::{agent, foreign};
pub use info::extras;
pub use model::{context, entry, tree, types, view};
pub use read::{chunked, jsonscan, line_skim, open, reader};
pub use text::{normalize, render, search_text, searchable, words};
pub use write::{bulk, fileops, writer};

// The modules only this crate uses.
pub(crate) use model::{calls, ids};
pub(crate) use read::{load, source};
pub(crate) use write::splice;

// What most callers need, at the top.
pub use agent::Agent;
pub use context::{build_context, ContextFlavor, ContextMessage, SessionContext};
pub use entry::{Entry, Header};
pub use info::{scan_info, SessionInfo};
pub use reader::{read_session, Diagnostics, ReadError, Session};
pub use tree::SessionTree;
