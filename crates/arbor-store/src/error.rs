//! The one error type of the store crate.

use std::path::PathBuf;

/// Everything that can go wrong in `arbor_store`: today, a session named
/// on the command line that names no one session file.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// No session file has this path, id or id prefix.
    #[error("no session matches {0:?} (give a path, a session id or a unique id prefix)")]
    NotFound(String),
    /// The path exists but is no regular file.
    #[error("{} is not a session file: {reason}", path.display())]
    NotAFile { path: PathBuf, reason: String },
    /// The id prefix starts more than one session's id.
    #[error("{query:?} is ambiguous: {count} sessions match ({examples})")]
    Ambiguous {
        query: String,
        count: usize,
        examples: String,
    },
}

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
