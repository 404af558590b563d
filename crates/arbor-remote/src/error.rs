//! The crate's one error type. Every message is one line and names the
//! remote (and its host) it is about.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("\"{0}\" is not a remote name: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)")]
    BadName(String),
    #[error("remote {name}: {why}")]
    BadSetting { name: String, why: String },
    #[error("no remote named \"{0}\" in the settings")]
    NoSuchRemote(String),
    #[error("a remote named \"{0}\" is already in the settings")]
    AlreadyExists(String),
    #[error("the ssh command {0:?} cannot be split into words: {1}")]
    BadSshCommand(String, &'static str),
    #[error("{host} could not be reached ({why}); the last mirror is kept")]
    Unreachable { host: String, why: String },
    #[error("{host} did not answer within {secs} s; the last mirror is kept")]
    TimedOut { host: String, secs: u64 },
    #[error("{host}: ssh could not verify the host's key (unknown, or changed); run `ssh {host}` in a terminal to see why and answer ssh's question (arbor never bypasses it)")]
    HostKeyUnknown { host: String },
    #[error("{host}: the sync was stopped (arbor was leaving); the last mirror is kept")]
    Cancelled { host: String },
    #[error("{host} refused the login: {why} (arbor uses your ssh keys and agent; it stores no password)")]
    LoginRefused { host: String, why: String },
    #[error("{host}: rsync is not installed there (arbor copies the session folders with it)")]
    RsyncMissingRemote { host: String },
    #[error(
        "rsync is not installed on this machine (arbor copies remote session folders with it)"
    )]
    RsyncMissingLocal,
    #[error("{host}: rsync failed: {why}")]
    Rsync { host: String, why: String },
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the settings file {}: {why}", .path.display())]
    SettingsFile { path: PathBuf, why: String },
}

impl RemoteError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> RemoteError {
        RemoteError::Io {
            path: path.into(),
            source,
        }
    }
}
