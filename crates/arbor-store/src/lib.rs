//! Where sessions live (docs/spec.md §1): agent and session dirs, the per-project
//! folders, scanning, and resolving a session by path, id or id prefix.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod error;
pub mod listing;
pub mod paths;
pub mod scan;
pub mod watch;

pub use arbor_util::hosts;
pub use error::{Error, Result};
pub use paths::{encode_cwd, Agent, StoreConfig, StoreKind, StoreRoot};
pub use scan::{
    list_session_files, list_store, resolve_session, ListedFolder, ScanProblem, Scope, SessionFile,
    StoreListing,
};
