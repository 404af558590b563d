//! Effects on the trash: one session or a batch moved to it, measured
//! first, restored from it, or deleted for good when it refuses them.

use std::path::PathBuf;

use crate::ui::app::AppEvent;
use crate::ui::trash_text;
use arbor_session::fileops;

pub fn trash(path: PathBuf) -> Vec<AppEvent> {
    // A remote's session goes to the trash there, by its arbor.
    if let Some((remotes, remote)) = super::super::remote_of(&path) {
        let write = crate::app::remote_write::RemoteWrite::Trash;
        let result = crate::app::remote_write::run(remotes, remote, &path, &write, false)
            .map(|_| ())
            .map_err(|e| format!("{e:#}"));
        return vec![AppEvent::Trashed { path, result }];
    }
    let result = fileops::trash(&path).map_err(|e| trash_text::trash_error_text(&e));
    if result.is_ok() {
        note_batch(std::slice::from_ref(&path));
    }
    vec![AppEvent::Trashed { path, result }]
}

/// A marked batch's files as they are now: bytes and last change.
pub fn measure_batch(paths: Vec<PathBuf>) -> Vec<AppEvent> {
    let measured = paths
        .into_iter()
        .map(|p| {
            let m = arbor_session::bulk::size_and_mtime(&p).ok();
            (p, m)
        })
        .collect();
    vec![AppEvent::BatchMeasured(measured)]
}

/// Moves a batch with its note kept as a journal (see
/// `arbor_session::bulk::Journal`): a picker killed in the middle of it
/// leaves a batch `arbor restore` undoes exactly.
pub fn trash_batch(paths: &[PathBuf]) -> Vec<AppEvent> {
    use arbor_session::bulk;
    let note = bulk::record_path();
    if let Some(note) = &note {
        let _ = bulk::settle(note);
    }
    let abs: Vec<PathBuf> = paths.iter().map(|p| absolute(p)).collect();
    let now = crate::ui::runtime::now_ms();
    let mut journal = note.as_deref().and_then(|n| {
        bulk::Journal::begin(n, &abs, now)
            .map_err(|e| arbor_util::log::line(format!("trash note {}: {e}", n.display())))
            .ok()
    });
    let out = bulk::trash_all_noted(paths, journal.as_mut());
    if let Some(Err(e)) = journal.map(bulk::Journal::finish) {
        arbor_util::log::line(format!("trash note: {e}"));
    }
    vec![AppEvent::TrashedBatch {
        moved: out.done,
        failed: out
            .failed
            .iter()
            .map(|(p, e)| (p.clone(), trash_text::trash_error_text(e)))
            .collect(),
    }]
}

pub fn restore_batch(paths: &[PathBuf]) -> Vec<AppEvent> {
    let text = trash_text::restore_error_text;
    let (restored, failed) = match arbor_session::bulk::restore_all(paths) {
        Ok(mut out) => {
            out.done.append(&mut out.in_place);
            let failed = out.failed.iter().map(|(p, e)| (p.clone(), text(e)));
            (out.done, failed.collect())
        }
        Err(e) => (
            Vec::new(),
            paths.iter().map(|p| (p.clone(), text(&e))).collect(),
        ),
    };
    vec![AppEvent::RestoredBatch { restored, failed }]
}

pub fn delete_batch(paths: Vec<PathBuf>) -> Vec<AppEvent> {
    let (mut deleted, mut failed) = (Vec::new(), Vec::new());
    for p in paths {
        match fileops::delete_permanently(&p) {
            Ok(()) => deleted.push(p),
            Err(e) => failed.push((p, trash_text::io_reason(&e))),
        }
    }
    vec![AppEvent::DeletedBatch { deleted, failed }]
}

pub fn delete_permanently(path: PathBuf) -> Vec<AppEvent> {
    let result = fileops::delete_permanently(&path).map_err(|e| trash_text::io_reason(&e));
    vec![AppEvent::Deleted { path, result }]
}

/// Notes what the picker just moved to the trash as the last batch, for
/// `arbor restore` after the picker has closed (a failure only logged: the
/// picker's own undo does not need the note).
fn note_batch(paths: &[PathBuf]) {
    let Some(note) = arbor_session::bulk::record_path() else {
        return;
    };
    let abs: Vec<PathBuf> = paths.iter().map(|p| absolute(p)).collect();
    let now = crate::ui::runtime::now_ms();
    if let Err(e) = arbor_session::bulk::write_record(&note, &abs, now) {
        arbor_util::log::line(format!("trash note {}: {e}", note.display()));
    }
}

/// Puts the most recently trashed copy of `path` back; errors in words.
pub fn restore_from_trash(path: &std::path::Path) -> Result<(), String> {
    fileops::restore_from_trash(path).map_err(|e| trash_text::restore_error_text(&e))
}

fn absolute(p: &std::path::Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
