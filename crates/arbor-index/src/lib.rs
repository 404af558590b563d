//! The persistent index: list rows and a full-text index of every session,
//! kept in one SQLite file under the cache dir and updated incrementally.
//!
//! The index is a cache, never required for correctness: it is rebuilt
//! transparently when missing, corrupt or written by another arbor version,
//! every write is a transaction (a crash or Ctrl+C leaves the last committed
//! state), and every answer it gives equals what reading the files gives.
//!
//! # What is stored, per session file
//! * the path, `(dev, inode, size, mtime)`, the byte offset parsed so far
//!   (always the end of the last complete line) and fingerprints of the first
//!   and of the last 4 KiB before that offset;
//! * the list-row scanner's state at that offset ([`SessionInfo`](arbor_session::info::SessionInfo) in a
//!   compact binary form, without its text), and the row itself when a
//!   partial last line makes it differ;
//! * the searchable text (user and assistant message text, normalized:
//!   lowercased, whitespace runs collapsed), in chunks — one per parse —
//!   plus a word index over it (see [`terms`]).
//!
//! Rows handed out by the index have an empty `all_text`: bodies are only
//! searched through [`Index::search`].
//!
//! # Staying current
//! A file whose `(dev, inode, size, mtime)` is unchanged is not opened. One
//! that grew, with both fingerprints unchanged, is continued from the stored
//! offset: only the appended bytes are read. Anything else (truncated,
//! replaced, rewritten in place, another inode) is read again from the start
//! under a new row id, so stale postings of the old version can never match.
//!
//! # Using it from the picker
//! ```no_run
//! # use arbor_index::Index;
//! # use arbor_store::{list_session_files, Scope, StoreConfig};
//! # fn demo(config: &StoreConfig) -> Result<(), arbor_index::Error> {
//! let (files, _problems) = list_session_files(config, &Scope::All);
//! let mut index = Index::open_default()?;
//! // Cached rows arrive at once in one batch, then changed files as they are parsed.
//! let stats = index.refresh(&files, &mut |rows| { /* show rows */ })?;
//! // The watcher: a file changed, re-read its new bytes only.
//! # let path = std::path::Path::new("x");
//! let row = index.update_file(&config.session_file(path))?;
//! // A search: body hits per term, combined with fuzzy field matching.
//! let query = arbor_search::Query::parse("\"two words\" re:err\\w+");
//! let hits = index.search(&query)?;
//! # Ok(()) }
//! ```
//! `refresh` and `update_file` need `&mut self`; a picker that searches while
//! a refresh runs opens a second `Index` on the same file (SQLite's WAL lets
//! readers run beside the writer).

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod ascending;
pub mod behind;
mod codec;
mod db;
mod error;
mod handle;
#[cfg(target_os = "linux")]
mod mapguard;
mod matched;
mod refresh;
mod search;
mod stats;
pub mod stored;
mod termfile;
mod terms;

pub use codec::RowView;
pub use db::{default_dir, FILE_NAME, FORMAT};
pub use error::{Error, Result};
pub use handle::Index;
pub use refresh::{file_keys, ListedKeys, StoredLook, StoredRow};
pub use search::BodyHits;
pub use stats::{IndexStats, RefreshStats};
