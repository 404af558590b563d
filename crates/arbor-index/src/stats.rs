//! What a refresh did, and the figures `arbor index --stats` shows.

use std::path::PathBuf;
use std::time::Duration;

use arbor_store::scan::ScanProblem;

use crate::behind;

/// What a refresh did.
#[derive(Debug, Clone, Default)]
pub struct RefreshStats {
    /// Files given.
    pub files: usize,
    /// Rows served from the index without opening the file.
    pub cached: usize,
    /// Files continued from their stored offset (only appended bytes read).
    pub appended: usize,
    /// Files read from the start (new, replaced, truncated, rewritten).
    pub reparsed: usize,
    /// Rows dropped because their file is gone.
    pub removed: usize,
    /// Bytes read and parsed.
    pub bytes_parsed: u64,
    /// Files that could not be listed (not a session, unreadable), in the
    /// same words as a scan without the index.
    pub problems: Vec<ScanProblem>,
    /// The rows were delivered but the index could not be updated.
    pub write_error: Option<String>,
    /// What the index lacked was read from the files and left to a build
    /// behind the answer (see [`Index::build_behind`]).
    pub deferred: Option<behind::Deferred>,
    pub elapsed: Duration,
}

/// Figures for `arbor index --stats`.
#[derive(Debug, Clone)]
pub struct IndexStats {
    pub path: PathBuf,
    /// Database plus WAL.
    pub disk_bytes: u64,
    pub sessions: u64,
    /// Files recorded as not being sessions.
    pub not_sessions: u64,
    /// Bytes of the session files covered.
    pub store_bytes: u64,
    /// Bytes of normalized searchable text.
    pub text_bytes: u64,
    pub segments: u64,
    pub last_update: Option<String>,
    pub format: String,
}
