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
    // A remote's sessions go to the trash there: one call of its arbor
    // for all of them.
    let (mut moved, mut failed) = (Vec::new(), Vec::new());
    let mut local = Vec::new();
    let mut by_host: Vec<(&arbor_remote::Remote, Vec<PathBuf>)> = Vec::new();
    let mut remotes = None;
    for p in paths {
        match super::super::remote_of(p) {
            Some((all, remote)) => {
                remotes = Some(all);
                match by_host.iter_mut().find(|(r, _)| r.name == remote.name) {
                    Some((_, ps)) => ps.push(p.clone()),
                    None => by_host.push((remote, vec![p.clone()])),
                }
            }
            None => local.push(p.clone()),
        }
    }
    for (remote, ps) in by_host {
        let Some(all) = remotes else { break };
        let mut done = crate::app::remote_write::trash_all(all, remote, &ps);
        moved.append(&mut done.moved);
        failed.append(&mut done.failed);
    }
    if !local.is_empty() {
        let (mut m, mut f) = trash_local_batch(&local);
        moved.append(&mut m);
        failed.append(&mut f);
    }
    vec![AppEvent::TrashedBatch { moved, failed }]
}

/// This machine's sessions of a batch, moved with the journal kept.
fn trash_local_batch(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
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
    let failed = out
        .failed
        .iter()
        .map(|(p, e)| (p.clone(), trash_text::trash_error_text(e)))
        .collect();
    (out.done, failed)
}

/// A remote's session is in the trash on its own machine: put back there,
/// by the user (`None`: the session is this machine's).
pub fn remote_restore_refusal(path: &std::path::Path) -> Option<String> {
    let (_, remote) = super::super::remote_of(path)?;
    Some(remote_restore_text(&remote.name))
}

/// What restoring a session of `host` says: where and how it is done.
pub fn remote_restore_text(host: &str) -> String {
    format!(
        "it is in the trash on {host}; run `arbor restore` on {host} to put it back \
         (the copy here follows at the next sync)"
    )
}

pub fn restore_batch(paths: &[PathBuf]) -> Vec<AppEvent> {
    let (there, paths): (Vec<PathBuf>, Vec<PathBuf>) = paths
        .iter()
        .cloned()
        .partition(|p| remote_restore_refusal(p).is_some());
    let refused = there.into_iter().filter_map(|p| {
        let why = remote_restore_refusal(&p)?;
        Some((p, why))
    });
    let (restored, mut failed): (Vec<PathBuf>, Vec<(PathBuf, String)>) = if paths.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        restore_local_batch(&paths)
    };
    failed.extend(refused);
    vec![AppEvent::RestoredBatch { restored, failed }]
}

fn restore_local_batch(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let text = trash_text::restore_error_text;
    match arbor_session::bulk::restore_all(paths) {
        Ok(mut out) => {
            out.done.append(&mut out.in_place);
            let failed = out.failed.iter().map(|(p, e)| (p.clone(), text(e)));
            (out.done, failed.collect())
        }
        Err(e) => (
            Vec::new(),
            paths.iter().map(|p| (p.clone(), text(&e))).collect(),
        ),
    }
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
    if let Some(why) = remote_restore_refusal(path) {
        return Err(why);
    }
    fileops::restore_from_trash(path).map_err(|e| trash_text::restore_error_text(&e))
}

fn absolute(p: &std::path::Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
