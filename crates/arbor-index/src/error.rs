//! The crate's one error type.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum IndexError {
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
