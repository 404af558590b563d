//! Picker behaviour (docs/spec.md §5): an event in, the effects to perform out.
//! Keys, paste and the mouse go to [`super::keys`] (or the dialog up); a
//! background result goes to the update of its kind: rows loaded or gone,
//! a search's answer, a preview read, a write on disk.

mod preview;
mod remotes;
mod rows;
pub mod search;
mod writes;

use crossterm::event::KeyEventKind;

use super::dialogs::labels;
use super::keys;
use super::state::{Dialog, PickerState};
use crate::ui::app::{App, AppEvent, Effect, Step};
use arbor_store::StoreConfig;

pub fn update(app: &mut App, ev: AppEvent) -> Step {
    // Typing pins the selection (to the best match, then by identity),
    // however the query was edited.
    let query_before =
        matches!(ev, AppEvent::Key(_)).then(|| app.picker.search.query.text().to_string());
    let no_dialog_before = app.picker.dialog.open == Dialog::None;
    let Step {
        effects: mut fx,
        redraw,
    } = match ev {
        AppEvent::Key(k) if k.kind != KeyEventKind::Release => keys::on_key(app, k).into(),
        AppEvent::Key(_) => Step::none(),
        AppEvent::Paste(text) => keys::on_paste(&mut app.picker, &text).into(),
        AppEvent::Mouse(m) => keys::on_mouse(app, m, false).into(),
        AppEvent::DoubleClick(m) => keys::on_mouse(app, m, true).into(),
        AppEvent::Resize(..) => Step::redraw(Vec::new()),
        AppEvent::Tick(now) => on_tick(app, now),
        other => on_result(&mut app.picker, &app.store, other),
    };
    let p = &mut app.picker;
    // So does a question about a row (delete, rename): rows arriving
    // meanwhile must not move the selection away from the row asked about.
    if query_before.is_some_and(|q| q != p.search.query.text())
        || (no_dialog_before && !matches!(p.dialog.open, Dialog::None | Dialog::Help))
    {
        p.hold_selection();
    }
    let list_h = super::view::list_rows(p, app.width, app.height);
    p.selection.page = list_h.max(1);
    p.clamp_scroll(list_h);
    if super::view::preview_visible(p, app.width) {
        fx.extend(preview::follow_selection(p));
    }
    p.follow_hits();
    Step {
        effects: fx,
        redraw,
    }
}

/// A second passed: drawn again when an age shown changes or a status
/// message expires.
fn on_tick(app: &mut App, now: i64) -> Step {
    let ages =
        super::view::clock_changes_view(&app.picker, app.width, app.height, app.frame_ms, now);
    let expired = app.picker.tick(now);
    Step {
        effects: Vec::new(),
        redraw: ages || expired,
    }
}

/// A background result. Most change what is shown; those that do not
/// (an older search's answer, a preview of a row no longer selected, a
/// change on disk still to be read) leave the frame as it is.
fn on_result(p: &mut PickerState, store: &StoreConfig, ev: AppEvent) -> Step {
    match ev {
        AppEvent::Rows(new) => rows::arrived(p, new),
        AppEvent::LoadProgress { done, total } => {
            p.progress.loading = Some((done, total));
            Step::redraw(Vec::new())
        }
        AppEvent::Indexing(progress) => rows::indexing(p, progress),
        AppEvent::LoadFinished { problems } => rows::load_finished(p, &problems),
        AppEvent::IndexIncomplete(reason) => search::index_incomplete(p, reason),
        AppEvent::SearchDone {
            generation,
            query,
            docs,
            scores,
            incomplete,
            stage,
        } => search::answered(p, generation, query, &docs, scores, incomplete, stage),
        AppEvent::FsChanged(paths) => rows::fs_changed(store, paths),
        AppEvent::RowGone(path) => rows::row_gone(p, &path),
        AppEvent::FolderGone(dir) => rows::folder_gone(p, &dir),
        AppEvent::PreviewLoaded(result) => preview::preview_loaded(p, result),
        AppEvent::HitsLoaded(result) => preview::hits_loaded(p, result),
        AppEvent::RenameNeedsMigration {
            path,
            name,
            version,
        } => writes::rename_needs_migration(p, path, name, version),
        AppEvent::Renamed { path, result } => writes::renamed(p, store, &path, result),
        AppEvent::Trashed { path, result } => writes::trashed(p, path, result),
        AppEvent::BatchMeasured(found) => writes::batch_measured(p, found),
        AppEvent::TrashedBatch { moved, failed } => writes::trashed_batch(p, moved, failed),
        AppEvent::RestoredBatch { restored, failed } => {
            writes::restored_batch(p, store, &restored, &failed)
        }
        AppEvent::DeletedBatch { deleted, failed } => writes::deleted_batch(p, &deleted, &failed),
        AppEvent::Deleted { path, result } => writes::deleted(p, &path, result),
        AppEvent::Restored { path, result } => writes::restored(p, store, &path, result),
        AppEvent::LabelsLoaded(found) => labels::loaded(p, found),
        AppEvent::RemoteSyncing { host, files } => remotes::syncing(p, &host, files),
        AppEvent::RemoteSynced { host, result } => remotes::synced(p, &host, result),
        AppEvent::Key(_)
        | AppEvent::Paste(_)
        | AppEvent::Mouse(_)
        | AppEvent::DoubleClick(_)
        | AppEvent::Resize(..)
        | AppEvent::Tick(_)
        | AppEvent::Keys(_)
        | AppEvent::TreeLoaded { .. }
        | AppEvent::Exported(_)
        | AppEvent::TreeSearchText { .. }
        | AppEvent::TreeHits { .. }
        | AppEvent::Wrote { .. } => Step::none(),
    }
}

/// With a query, every row scored again (stale results are dropped): the
/// rows or what can be searched changed under its answer.
fn search_again(p: &mut PickerState) -> Option<Effect> {
    if p.search.parsed.has_conditions() && p.search.parsed.error().is_none() {
        p.search.generation += 1;
        return Some(search::search_effect(p));
    }
    None
}
