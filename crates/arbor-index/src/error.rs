//! The crate's one error type.
//!
//! Every function of the crate's own answers with [`Result`]; `rusqlite`'s
//! result type is left to the closures handed to `rusqlite` (row mappers).
//! What SQLite said stays whole in [`Error::Sqlite`]: whether the index is
//! started again is decided on its code (`db::is_broken`).

use std::path::PathBuf;

/// What went wrong in the index.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("index database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("index at {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no cache directory for the index (set ARBOR_CACHE_DIR or XDG_CACHE_HOME)")]
    NoCacheDir,
    #[error("the index at {0} is corrupt")]
    Corrupt(PathBuf),
    #[error("the search was cancelled")]
    Cancelled,
    /// A file the reader's snapshot names is gone: a newer snapshot does
    /// not name it (see `termfile::sweep`).
    #[error("the index changed while it was read")]
    Changed,
}

impl Error {
    /// The words `RefreshStats::write_error` (and a merge's failure) have
    /// always given: SQLite's own message, without the `index database: `
    /// this type's display puts before it.
    pub(crate) fn plain_text(&self) -> String {
        match self {
            Error::Sqlite(e) => e.to_string(),
            e => e.to_string(),
        }
    }
}

/// The crate's result: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;
