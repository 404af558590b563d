//! What the writes on disk came to: a rename, the trash (one session or a
//! batch), its undo, a permanent delete.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::search_again;
use crate::ui::app::{Effect, Step};
use crate::ui::picker::dialogs::delete::sessions;
use crate::ui::picker::keys::{Action, KEYS};
use crate::ui::picker::state::{Dialog, Measured, PickerState, Row, StatusKind, LIVE_WINDOW_MS};
use arbor_store::StoreConfig;

/// A rename refused by a version 1/2 file: the rewrite is asked.
pub fn rename_needs_migration(
    p: &mut PickerState,
    path: PathBuf,
    name: String,
    version: u32,
) -> Step {
    p.flash.status = None;
    p.dialog.open = Dialog::ConfirmMigrateRename {
        path,
        name,
        version,
    };
    Step::redraw(Vec::new())
}

pub fn renamed(
    p: &mut PickerState,
    store: &StoreConfig,
    path: &Path,
    result: Result<String, String>,
) -> Step {
    match result {
        Ok(name) => {
            p.set_status(
                StatusKind::Success,
                format!(
                    "Renamed to \u{201c}{}\u{201d}",
                    arbor_session::render::sanitize_line(&name)
                ),
            );
            return Step::redraw(vec![Effect::Rescan(vec![store.session_file(path)])]);
        }
        Err(e) => {
            p.set_status(StatusKind::Error, format!("Rename failed: {e}"));
        }
    }
    Step::redraw(Vec::new())
}

/// One session to the trash: gone from the list (Ctrl+Z brings it back),
/// or, the trash refusing it, the permanent delete asked.
pub fn trashed(p: &mut PickerState, path: PathBuf, result: Result<(), String>) -> Step {
    if matches!(&p.dialog.open, Dialog::Trashing { path: t } if *t == path) {
        p.dialog.open = Dialog::None;
    }
    match result {
        Ok(()) => {
            // Kept, as a batch's rows are, for Ctrl+Z to list and select
            // at once.
            if let Some(i) = p.row_index(&path) {
                let row = p.list.rows[i].clone();
                p.trash.rows.insert(path.clone(), row);
            }
            p.remove_keeping_place(&path);
            p.trash.batches.push(vec![path]);
            p.set_status(
                StatusKind::Success,
                format!(
                    "Session moved to trash · {} undo",
                    KEYS.keys_of(&[Action::Undo])
                ),
            );
        }
        Err(reason) => {
            p.flash.status = None;
            p.dialog.open = Dialog::ConfirmPermanent {
                paths: vec![path],
                reason,
                shown_ms: p.now_ms,
                moved: 0,
            };
        }
    }
    Step::redraw(Vec::new())
}

/// A marked batch's sizes and change times: its question is complete.
pub fn batch_measured(p: &mut PickerState, found: Vec<(PathBuf, Option<(u64, i64)>)>) -> Step {
    let Dialog::ConfirmBatch { paths, measured } = &mut p.dialog.open else {
        // Cancelled meanwhile.
        return Step::none();
    };
    let now = p.now_ms;
    let mut m = Measured {
        bytes: 0,
        live: Vec::new(),
    };
    // Files gone already are no longer asked about.
    let here: HashSet<&PathBuf> = found
        .iter()
        .filter_map(|(f, s)| s.is_some().then_some(f))
        .collect();
    paths.retain(|x| here.contains(x));
    for (path, (bytes, mtime)) in found.into_iter().filter_map(|(f, s)| Some((f, s?))) {
        m.bytes += bytes;
        if now - mtime < LIVE_WINDOW_MS {
            m.live.push((path, now - mtime));
        }
    }
    if paths.is_empty() {
        p.dialog.open = Dialog::None;
        p.set_status(StatusKind::Info, "The marked sessions are gone already");
    } else {
        *measured = Some(m);
    }
    Step::redraw(Vec::new())
}

/// A batch to the trash: those moved gone from the list (kept for the
/// undo), those refused asked about for a permanent delete.
pub fn trashed_batch(
    p: &mut PickerState,
    moved: Vec<PathBuf>,
    failed: Vec<(PathBuf, String)>,
) -> Step {
    if matches!(p.dialog.open, Dialog::TrashingBatch { .. }) {
        p.dialog.open = Dialog::None;
    }
    let selected_gone = p
        .selection
        .selected
        .as_ref()
        .is_some_and(|s| moved.contains(s));
    let pos = p.selected_pos();
    for path in &moved {
        if let Some(row) = p.remove(path) {
            p.trash.rows.insert(path.clone(), row);
        }
    }
    p.recompute();
    if let (true, Some(pos)) = (selected_gone, pos) {
        // The selection stays at its place, as for one session.
        p.select_pos(pos.min(p.list.visible.len().saturating_sub(1)));
    }
    let n = moved.len();
    if n > 0 {
        p.trash.batches.push(moved);
        p.set_status(
            StatusKind::Success,
            format!(
                "{} moved to trash · {} undo",
                sessions(n),
                KEYS.keys_of(&[Action::Undo])
            ),
        );
    }
    if let Some((_, reason)) = failed.first() {
        // Never silently gone for good: the trash refused these,
        // and the permanent delete is asked as for one session.
        let reason = reason.clone();
        p.flash.status = None;
        p.dialog.open = Dialog::ConfirmPermanent {
            paths: failed.into_iter().map(|(path, _)| path).collect(),
            reason,
            shown_ms: p.now_ms,
            moved: n,
        };
    }
    Step::redraw(Vec::new())
}

/// An undone batch: its rows back in the list, its files read again.
pub fn restored_batch(
    p: &mut PickerState,
    store: &StoreConfig,
    restored: &[PathBuf],
    failed: &[(PathBuf, String)],
) -> Step {
    let n = restored.len();
    match failed.first() {
        None => p.set_status(
            StatusKind::Success,
            format!("{} restored from trash", sessions(n)),
        ),
        Some((_, e)) => p.set_status(
            StatusKind::Error,
            format!(
                "Undo: {} of {} restored; {} not: {e}",
                n,
                n + failed.len(),
                failed.len()
            ),
        ),
    }
    let mut fx = list_restored(p, restored);
    fx.push(Effect::Rescan(
        restored.iter().map(|x| store.session_file(x)).collect(),
    ));
    Step::redraw(fx)
}

/// The rows of sessions back from the trash listed again, and the
/// selection on the one the list shows first: the undo returns to what
/// was deleted, not to wherever the selection moved after it.
fn list_restored(p: &mut PickerState, restored: &[PathBuf]) -> Vec<Effect> {
    let back: Vec<Row> = restored
        .iter()
        .filter_map(|x| p.trash.rows.remove(x))
        .collect();
    if back.is_empty() {
        return Vec::new();
    }
    let ids: HashSet<String> = back.iter().map(|r| r.id().to_owned()).collect();
    p.upsert(back);
    p.recompute();
    // By session id: the row listed for it (its path is the one it had).
    let first = p
        .list
        .visible
        .iter()
        .position(|v| ids.contains(p.list.rows[v.idx].id()));
    let again = search_again(p);
    match first {
        Some(pos) => p.user_select_pos(pos),
        // Listed once the query's answer comes: held there by path.
        None => {
            if let Some(path) = restored.first() {
                p.hold_selection();
                p.selection.selected = Some(path.clone());
            }
        }
    }
    again.into_iter().collect()
}

pub fn deleted_batch(
    p: &mut PickerState,
    deleted: &[PathBuf],
    failed: &[(PathBuf, String)],
) -> Step {
    for path in deleted {
        p.remove(path);
    }
    p.recompute();
    match failed.first() {
        None => p.set_status(
            StatusKind::Success,
            format!("{} deleted permanently", sessions(deleted.len())),
        ),
        Some((_, e)) => p.set_status(
            StatusKind::Error,
            format!(
                "{} deleted permanently; {} not: {e}",
                deleted.len(),
                failed.len()
            ),
        ),
    }
    Step::redraw(Vec::new())
}

pub fn deleted(p: &mut PickerState, path: &Path, result: Result<(), String>) -> Step {
    match result {
        Ok(()) => {
            p.remove_keeping_place(path);
            p.set_status(StatusKind::Success, "Session deleted permanently");
        }
        Err(e) => p.set_status(StatusKind::Error, format!("Delete failed: {e}")),
    }
    Step::redraw(Vec::new())
}

pub fn restored(
    p: &mut PickerState,
    store: &StoreConfig,
    path: &Path,
    result: Result<(), String>,
) -> Step {
    match result {
        Ok(()) => {
            p.set_status(StatusKind::Success, "Session restored from trash");
            let mut fx = list_restored(p, &[path.to_path_buf()]);
            fx.push(Effect::Rescan(vec![store.session_file(path)]));
            return Step::redraw(fx);
        }
        Err(e) => p.set_status(StatusKind::Error, format!("Undo failed: {e}")),
    }
    Step::redraw(Vec::new())
}
