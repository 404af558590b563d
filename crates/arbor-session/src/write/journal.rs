//! The note of a batch on its way to the trash, kept as a journal: the
//! files about to move are noted (atomically) before the first moves, and
//! each move is noted as it is done, so that a batch cut off (Ctrl-C, a
//! kill, a crash) can still be undone exactly: `arbor restore` brings back
//! what moved and nothing else.
//!
//! The note (`last-trash.json`) is JSON lines: the first says when the
//! batch began and which files it means to move (`"moving": true` while
//! it runs); each after it names one file moved. A batch that ends is
//! rewritten as one line naming what moved (the note as it always was).

use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::fileops::{self, RestoreError};

/// A batch as its note says.
#[derive(Debug, PartialEq)]
pub struct Batch {
    /// When it began (ms since the epoch).
    pub started_ms: i64,
    /// What moved (a batch that ended), or what it meant to move (one cut
    /// off: see `moved`).
    pub paths: Vec<PathBuf>,
    /// For a batch cut off before its end: the moves it noted.
    pub cut_off: Option<Vec<PathBuf>>,
}

/// A batch being moved: its note open to note each move.
pub struct Journal {
    record: PathBuf,
    file: File,
    started_ms: i64,
    moved: Vec<PathBuf>,
    /// The note it replaced, put back when nothing moves: the last batch
    /// is still the one before.
    before: Option<Vec<u8>>,
}

impl Journal {
    /// Notes `paths` (absolute) as the batch about to move, replacing the
    /// note of the last one, before anything moves.
    pub fn begin(record: &Path, paths: &[PathBuf], started_ms: i64) -> std::io::Result<Journal> {
        let head = json!({
            "trashedMs": started_ms,
            "moving": true,
            "paths": paths.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
        });
        let before = std::fs::read(record).ok();
        fileops::write_note(record, format!("{head}\n").as_bytes())?;
        Ok(Journal {
            before,
            record: record.to_path_buf(),
            file: fileops::open_note_to_append(record)?,
            started_ms,
            moved: Vec::new(),
        })
    }

    /// Notes that `path` is in the trash now.
    pub fn moved(&mut self, path: &Path) -> std::io::Result<()> {
        self.moved.push(path.to_path_buf());
        // Not waited for on disk (a wait per move costs more than the
        // move): a line written is kept through a kill, and the moves a
        // power cut may lose are found in the trash by [`settle`].
        let line = format!("{}\n", json!({ "moved": path.to_string_lossy() }));
        fileops::append(&mut self.file, line.as_bytes())
    }

    /// The batch has ended: the note names what moved (no note when
    /// nothing did).
    pub fn finish(self) -> std::io::Result<()> {
        drop(self.file);
        if self.moved.is_empty() {
            return match &self.before {
                Some(bytes) => fileops::write_note(&self.record, bytes),
                None => fileops::remove_note(&self.record),
            };
        }
        write_record(&self.record, &self.moved, self.started_ms)
    }
}

/// Notes `paths` (absolute) as the last batch moved to the trash, at
/// `time_ms`. Nothing is noted for an empty batch.
pub fn write_record(record: &Path, paths: &[PathBuf], time_ms: i64) -> std::io::Result<()> {
    if paths.is_empty() {
        return Ok(());
    }
    let v = json!({
        "trashedMs": time_ms,
        "paths": paths.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
    });
    fileops::write_note(record, v.to_string().as_bytes())
}

fn paths_of(v: &Value) -> Option<Vec<PathBuf>> {
    Some(
        v.as_array()?
            .iter()
            .filter_map(|p| p.as_str().map(PathBuf::from))
            .collect(),
    )
}

/// The last batch noted (`None`: nothing noted, or the note is
/// unreadable). A line cut off by a kill in the middle of it is skipped.
pub fn read_batch(record: &Path) -> Option<Batch> {
    let text = std::fs::read_to_string(record).ok()?;
    let mut lines = text.lines();
    let head: Value = serde_json::from_str(lines.next()?).ok()?;
    let paths = paths_of(head.get("paths")?)?;
    let started_ms = head.get("trashedMs").and_then(Value::as_i64).unwrap_or(0);
    let cut_off = (head.get("moving") == Some(&Value::Bool(true))).then(|| {
        lines
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v.get("moved")?.as_str().map(PathBuf::from))
            .collect()
    });
    Some(Batch {
        started_ms,
        paths,
        cut_off,
    })
}

/// The note of a batch cut off made whole: what it noted as moved, and
/// the move under way when it stopped when that file did reach the trash;
/// the placeholder the trash leaves of a move cut off before its file
/// (an empty file and its info) is removed. A batch that ended is left
/// as it is. `Err`: the trash could not be listed (the note is left).
pub fn settle(record: &Path) -> Result<Option<Vec<PathBuf>>, RestoreError> {
    let Some(batch) = read_batch(record) else {
        return Ok(None);
    };
    let Some(noted) = batch.cut_off else {
        return Ok(Some(batch.paths));
    };
    let unnoted: Vec<PathBuf> = batch
        .paths
        .iter()
        .filter(|p| !noted.contains(p))
        .cloned()
        .collect();
    let found = fileops::settle_cut_off_moves(&unnoted, batch.started_ms)?;
    let moved: Vec<PathBuf> = batch
        .paths
        .into_iter()
        .filter(|p| noted.contains(p) || found.contains(p))
        .collect();
    let written = if moved.is_empty() {
        fileops::remove_note(record)
    } else {
        write_record(record, &moved, batch.started_ms)
    };
    written.map_err(RestoreError::Note)?;
    Ok(Some(moved))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_journal_reads_back_as_cut_off_until_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let note = dir.path().join("arbor/last-trash.json");
        let paths = vec![PathBuf::from("/a/b.jsonl"), PathBuf::from("/c d/é.jsonl")];
        let mut j = Journal::begin(&note, &paths, 7).unwrap();
        j.moved(&paths[0]).unwrap();
        let b = read_batch(&note).unwrap();
        assert_eq!(b.started_ms, 7);
        assert_eq!(b.paths, paths);
        assert_eq!(b.cut_off, Some(vec![paths[0].clone()]));
        // A line cut off in the middle is skipped.
        std::fs::write(
            &note,
            std::fs::read_to_string(&note).unwrap() + "{\"moved\":\"/c d",
        )
        .unwrap();
        assert_eq!(read_batch(&note).unwrap().cut_off.unwrap().len(), 1);
        let mut j = Journal::begin(&note, &paths, 8).unwrap();
        j.moved(&paths[1]).unwrap();
        j.finish().unwrap();
        let b = read_batch(&note).unwrap();
        assert_eq!((b.paths, b.cut_off), (vec![paths[1].clone()], None));
        // Nothing moved: the note of the batch before stays.
        Journal::begin(&note, &paths, 9).unwrap().finish().unwrap();
        assert_eq!(read_batch(&note).unwrap().started_ms, 8);
        std::fs::remove_file(&note).unwrap();
        Journal::begin(&note, &paths, 10).unwrap().finish().unwrap();
        assert!(!note.exists());
    }
}
