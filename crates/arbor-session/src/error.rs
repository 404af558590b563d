//! The one error type of the session crate: why a session file could not be
//! read, written, exported or compared, or an argument naming part of one
//! is wrong. The texts are what the CLI prints (tests compare them).

use std::path::PathBuf;

/// Everything that can go wrong in `arbor_session`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // Reading a file as a session.
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is a directory, not a session file")]
    IsDirectory { path: PathBuf },
    #[error("{path} is {kind}")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("{path} is not a session file: {reason}")]
    NotASession { path: PathBuf, reason: &'static str },

    // Appending to or rewriting a session file.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An append failed and was undone: the file is as it was.
    #[error("cannot write {path}: {source}; nothing was written")]
    NotWritten {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// An append failed, and the part of arbor's line that was written could
    /// not be cut off (another program appended after it, or the cut failed).
    #[error("cannot write {path}: {source}; part of arbor's line stayed at byte {at} and could not be cut off (readers skip it as an unreadable line)")]
    PartialLeft {
        path: PathBuf,
        #[source]
        source: std::io::Error,
        at: u64,
    },
    /// The file is not there any more (moved, renamed or trashed).
    #[error("{path} is gone (moved, renamed or trashed since it was opened); nothing was written")]
    Vanished { path: PathBuf },
    #[error("{path} is a version {version} file; it must be migrated to version 3 first (arbor rewrites it atomically and keeps a .bak copy)")]
    NeedsMigration { path: PathBuf, version: u32 },
    #[error("{path} ends in a partial line (another program is writing it); nothing was written, try again")]
    PartialLastLine { path: PathBuf },
    #[error("{path} kept changing while arbor read it (another program is writing it); nothing was written, try again")]
    Busy { path: PathBuf },
    #[error("{path}: another program was in the middle of writing a line when arbor appended its own, so the two were interleaved at byte {at}: arbor's entry was not saved, and the other program's line was split around it (readers skip both parts as unreadable lines); the lines before are intact; try again")]
    Interleaved { path: PathBuf, at: u64 },
    #[error("{path} is a {agent} session: labels, names, branches and forks are Atomic and pi features its format does not support, and arbor never writes into another agent's files")]
    Foreign { path: PathBuf, agent: &'static str },
    #[error("{0}")]
    Invalid(String),

    // Creating a new file (`fileops::write_new`).
    /// The file could not be created (`AlreadyExists`: it is there, and
    /// was not touched).
    #[error("{0}")]
    CreateFile(std::io::Error),
    /// The file was created but filling it failed.
    #[error("{0}")]
    FillFile(std::io::Error),

    // Entries named by id.
    /// No entry has this id or id prefix.
    #[error("no entry {0}")]
    UnknownEntryId(String),
    /// The id prefix starts more than one entry's id.
    #[error("entry id {given:?} is ambiguous: {count} entries start with it ({examples}); give more of it")]
    AmbiguousEntryId {
        given: String,
        count: usize,
        examples: String,
    },
    /// An [`Error::AmbiguousEntryId`] (the `source`) in the file `path`
    /// (export's `--leaf`). The text names its `source`, as every error
    /// here does: the CLI prints a cause only where the text does not
    /// (`arbor::cli::error_line`).
    #[error("{path}: {source}")]
    AmbiguousEntryIn { path: PathBuf, source: Box<Error> },
    #[error("no entry {id} in {path}")]
    NoSuchEntry { path: PathBuf, id: String },
    /// An entry to compare is not in the session.
    #[error("no entry {0} in the session")]
    NoEntryInSession(String),

    // Command-line values.
    /// A `--format` that is none of the formats.
    #[error("unknown format {0:?} (md, html or json)")]
    UnknownFormat(String),
    /// A `--flavor` that is neither of the flavors.
    #[error("unknown flavor {0:?} (atomic or pi)")]
    UnknownFlavor(String),
}

/// A result whose error is this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
