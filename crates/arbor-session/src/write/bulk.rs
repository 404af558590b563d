//! Many sessions to the trash and back (the picker's marked batch, `arbor
//! trash`, `arbor restore`): each file moved on its own, so that one
//! failure leaves the others; the trash listed once for a whole batch to
//! restore; and a note of the last batch, kept beside the trash, so that
//! `arbor restore` can bring it back after the picker that trashed it has
//! closed.

use std::path::{Path, PathBuf};

use crate::fileops::{self, RestoreError};
pub use crate::write::journal::{read_batch, settle, write_record, Batch, Journal};

/// Sessions changed within this window may be in use by a live agent: a
/// delete asks again (picker) or leaves them (`arbor trash`).
pub const LIVE_WINDOW_MS: i64 = 10_000;

/// What became of each file of a batch, in the order given.
#[derive(Debug)]
pub struct Outcome<E> {
    pub done: Vec<PathBuf>,
    /// Nothing to do: a session to restore that is in its place already
    /// and no longer in the trash (brought back by the picker's undo, say).
    pub in_place: Vec<PathBuf>,
    pub failed: Vec<(PathBuf, E)>,
}

impl<E> Default for Outcome<E> {
    fn default() -> Self {
        Outcome {
            done: Vec::new(),
            in_place: Vec::new(),
            failed: Vec::new(),
        }
    }
}

/// A file's size and when it last changed (ms since the epoch; 0 when the
/// system keeps no time): what a batch question and `arbor trash` read
/// just before moving it.
pub fn size_and_mtime(path: &Path) -> std::io::Result<(u64, i64)> {
    let m = std::fs::metadata(path)?;
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    Ok((m.len(), mtime))
}

/// Moves each of `paths` to the system trash; never deletes one.
pub fn trash_all(paths: &[PathBuf]) -> Outcome<trash::Error> {
    trash_all_noted(paths, None)
}

/// [`trash_all`], with the batch noted as it goes in `journal` (see
/// [`Journal`]) when there is one: after each call to the trash, the
/// moves it made. A move that the journal fails to note is still done
/// (`arbor restore` finds such a move in the trash, as it finds those of
/// a call cut off).
pub fn trash_all_noted(
    paths: &[PathBuf],
    mut journal: Option<&mut Journal>,
) -> Outcome<trash::Error> {
    let mut out = Outcome::default();
    let kill_after = test_kill_after_moves();
    let mut start = 0;
    while start < paths.len() {
        let mut end = paths.len().min(start + fileops::TRASH_CALL);
        if let Some(n) = kill_after.filter(|&n| n > start) {
            end = end.min(n);
        }
        let call = &paths[start..end];
        let moved_before = out.done.len();
        for (p, r) in call.iter().zip(fileops::trash_many(call)) {
            match r {
                Ok(()) => out.done.push(p.clone()),
                Err(e) => out.failed.push((p.clone(), e)),
            }
        }
        if kill_after.is_some_and(|n| n <= out.done.len()) {
            // A test's kill: right after the Nth move, before its note.
            std::process::abort();
        }
        if let Some(j) = journal.as_deref_mut() {
            for p in &out.done[moved_before..] {
                let _ = j.moved(&std::path::absolute(p).unwrap_or_else(|_| p.clone()));
            }
        }
        start = end;
    }
    out
}

/// `ARBOR_TEST_KILL_AFTER_MOVES=N`: a batch aborts the process after its
/// Nth move, as a kill would (debug builds only: for the tests of a batch
/// cut off).
fn test_kill_after_moves() -> Option<usize> {
    if cfg!(debug_assertions) {
        std::env::var("ARBOR_TEST_KILL_AFTER_MOVES")
            .ok()?
            .parse()
            .ok()
    } else {
        None
    }
}

/// Puts back the most recently trashed copy of each of `paths` (see
/// [`Outcome::in_place`]). `Err`: the trash could not be listed (nothing
/// was restored).
pub fn restore_all(paths: &[PathBuf]) -> Result<Outcome<RestoreError>, RestoreError> {
    let mut out = Outcome::default();
    for (p, r) in paths.iter().zip(fileops::restore_many(paths)?) {
        match r {
            Ok(()) => out.done.push(p.clone()),
            Err(RestoreError::NotInTrash) if p.exists() => out.in_place.push(p.clone()),
            Err(e) => out.failed.push((p.clone(), e)),
        }
    }
    Ok(out)
}

/// Where the last batch is noted: beside the freedesktop trash
/// (`$XDG_DATA_HOME/arbor/last-trash.json`), so that a test's own trash
/// folder has its own note.
pub fn record_path() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("arbor").join("last-trash.json"))
}

/// The note after a restore: the paths that failed and are still in the
/// trash (to try again), or no note at all.
pub fn update_record(record: &Path, left: &[PathBuf], time_ms: i64) -> std::io::Result<()> {
    if left.is_empty() {
        return fileops::remove_note(record);
    }
    write_record(record, left, time_ms)
}

/// Sessions in the trash that came from a `.jsonl` file: their original
/// paths, newest trashed first (for `arbor restore ID`).
pub fn trashed_sessions() -> Result<Vec<PathBuf>, RestoreError> {
    fileops::trashed_files().map(|v| {
        v.into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_round_trips_and_goes_when_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let note = dir.path().join("arbor/last-trash.json");
        let paths = vec![PathBuf::from("/a/b.jsonl"), PathBuf::from("/c d/é.jsonl")];
        let read = |n: &Path| read_batch(n).map(|b| b.paths);
        write_record(&note, &paths, 1).unwrap();
        assert_eq!(read(&note), Some(paths.clone()));
        update_record(&note, &paths[1..], 2).unwrap();
        assert_eq!(read(&note), Some(paths[1..].to_vec()));
        update_record(&note, &[], 3).unwrap();
        assert!(!note.exists());
        // Nothing noted: no file, and no error removing none.
        update_record(&note, &[], 4).unwrap();
        write_record(&note, &[], 5).unwrap();
        assert_eq!(read(&note), None);
    }
}
