//! `state.json` in each mirror: when it was last synced, when a sync was
//! last tried, why the last one failed, and whether arbor is installed on
//! the remote. A missing or unreadable file is an empty state: the state
//! is a note for the user, never a reason to fail.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::mirror::mirror_dir;
use crate::RemoteError;

pub const STATE_FILE: &str = "state.json";

/// Whether arbor runs on the remote, once looked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "found", rename_all = "lowercase")]
pub enum ArborOnRemote {
    /// Found; the program to run (`arbor` or its path).
    Yes {
        program: String,
    },
    No,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MirrorState {
    /// Milliseconds since the epoch of the last sync that succeeded.
    pub last_ok_ms: Option<i64>,
    /// Milliseconds since the epoch of the last sync tried.
    pub last_attempt_ms: Option<i64>,
    /// The last sync's error, one line; `None` when it succeeded.
    pub last_error: Option<String>,
    /// `None` until looked for.
    #[serde(default)]
    pub arbor_on_remote: Option<ArborOnRemote>,
}

/// The state of the mirror of the remote `name` (empty when none is
/// written or it cannot be read).
pub fn read_state(cache: &Path, name: &str) -> MirrorState {
    std::fs::read(mirror_dir(cache, name).join(STATE_FILE))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Writes the state of the mirror of `name` atomically (the mirror folder
/// is created, private, when missing).
pub fn write_state(cache: &Path, name: &str, state: &MirrorState) -> Result<(), RemoteError> {
    let dir = mirror_dir(cache, name);
    crate::mirror_files::create_private(&dir)?;
    let bytes = serde_json::to_vec_pretty(state).map_err(|e| RemoteError::io(&dir, e.into()))?;
    let path = dir.join(STATE_FILE);
    arbor_session::fileops::write_atomic(&path, &bytes).map_err(|e| RemoteError::io(&path, e))
}

/// Milliseconds since the epoch now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_a_broken_file_is_empty() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(read_state(d.path(), "x"), MirrorState::default());
        let s = MirrorState {
            last_ok_ms: Some(1),
            last_attempt_ms: Some(2),
            last_error: Some("devbox could not be reached".into()),
            arbor_on_remote: Some(ArborOnRemote::Yes {
                program: "arbor".into(),
            }),
        };
        write_state(d.path(), "x", &s).unwrap();
        assert_eq!(read_state(d.path(), "x"), s);
        std::fs::write(mirror_dir(d.path(), "x").join(STATE_FILE), "{").unwrap();
        assert_eq!(read_state(d.path(), "x"), MirrorState::default());
    }
}
