//! Rows loaded, re-read or gone: the loader's progress, the index being
//! built, and the watcher's changes.

use std::path::{Path, PathBuf};

use super::search_again;
use crate::ui::app::{Effect, Step};
use crate::ui::picker::state::{PickerState, Row, StatusKind};
use arbor_store::{ScanProblem, SessionFile, StoreConfig};

/// Rows read by the loader (or re-read after a change).
pub fn arrived(p: &mut PickerState, rows: Vec<Row>) -> Step {
    p.upsert(rows);
    p.recompute();
    // New rows are unscored: score everything again.
    Step::redraw(search_again(p).into_iter().collect())
}

/// The index's progress; once built, a query is asked again.
pub fn indexing(p: &mut PickerState, progress: Option<(usize, usize)>) -> Step {
    let finished = progress.is_none() && p.progress.indexing.is_some();
    p.progress.indexing = progress;
    // Bodies were not searchable while the index was being built.
    if finished {
        if let Some(search) = search_again(p) {
            return Step::redraw(vec![search]);
        }
    }
    Step::redraw(Vec::new())
}

pub fn load_finished(p: &mut PickerState, problems: &[ScanProblem]) -> Step {
    p.progress.loading = None;
    if !problems.is_empty() {
        p.set_status(
            StatusKind::Info,
            format!(
                "{} file{} skipped: not readable sessions (arbor list shows why)",
                problems.len(),
                if problems.len() == 1 { "" } else { "s" }
            ),
        );
    }
    Step::redraw(Vec::new())
}

/// The watcher saw these paths change: the sessions among them are read
/// again (nothing new to show until they are).
pub fn fs_changed(store: &StoreConfig, paths: Vec<PathBuf>) -> Step {
    let paths: Vec<SessionFile> = paths
        .into_iter()
        .filter(|x| x.extension().is_some_and(|e| e == "jsonl"))
        .map(|x| store.session_file(&x))
        .collect();
    Step::quiet(if paths.is_empty() {
        Vec::new()
    } else {
        vec![Effect::Rescan(paths)]
    })
}

pub fn row_gone(p: &mut PickerState, path: &Path) -> Step {
    if p.row_index(path).is_none() {
        return Step::none();
    }
    p.remove_keeping_place(path);
    Step::redraw(Vec::new())
}

/// A watched folder is gone: so is every session under it.
pub fn folder_gone(p: &mut PickerState, dir: &Path) -> Step {
    let gone: Vec<PathBuf> = p
        .list
        .rows
        .iter()
        .filter(|r| r.info.path.starts_with(dir))
        .map(|r| r.info.path.to_path_buf())
        .collect();
    if gone.is_empty() {
        return Step::none();
    }
    for path in &gone {
        p.remove(path);
    }
    p.recompute();
    Step::redraw(Vec::new())
}
