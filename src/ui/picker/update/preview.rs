//! The preview of the selected session: asked as the selection, the
//! query or the file changes, and shown when it is read.

use std::path::PathBuf;

use crate::ui::app::{Effect, Step};
use crate::ui::picker::preview::{Preview, PreviewHits};
use crate::ui::picker::state::{PickerState, StatusKind};
use arbor_search::hits::looks_at_entries;
use arbor_search::Query;

/// The preview follows the selection, the query once its results are in
/// (for its list of matches) and the file as it changes; each (session,
/// query, change) is loaded once, and its matches are read once while
/// remembered.
pub fn follow_selection(p: &mut PickerState) -> Option<Effect> {
    let r = p.selected_row()?;
    let (path, stamp) = (r.info.path.to_path_buf(), r.info.file_mtime_ms);
    let want = (path.clone(), p.search.scored_query.clone(), stamp);
    if p.preview.requested.as_ref() == Some(&want) {
        return None;
    }
    p.preview.requested = Some(want);
    let query = Query::parse(&p.search.scored_query);
    let hits = (looks_at_entries(&query)
        && p.cached_hits(&path, &p.search.scored_query, stamp)
            .is_none())
    .then_some(stamp);
    Some(Effect::LoadPreview { path, query, hits })
}

/// A preview read: shown while its session is still the one selected.
pub fn preview_loaded(p: &mut PickerState, result: Result<Preview, (PathBuf, String)>) -> Step {
    match result {
        Ok(preview) => {
            if p.selection.selected.as_ref() != Some(&preview.path) {
                return Step::none();
            }
            p.preview.shown = Some(preview);
        }
        Err((path, e)) => {
            if p.selection.selected.as_ref() != Some(&path) {
                return Step::none();
            }
            p.preview.shown = None;
            p.set_status(StatusKind::Error, format!("Preview failed: {e}"));
        }
    }
    Step::redraw(Vec::new())
}

/// A session's matching entries read: remembered, and drawn when they
/// are the selected session's for the query shown.
pub fn hits_loaded(p: &mut PickerState, result: Result<PreviewHits, (PathBuf, String)>) -> Step {
    match result {
        Ok(hits) => {
            let shown = p
                .selected_row()
                .is_some_and(|r| r.info.path == hits.path && p.search.scored_query == hits.query);
            p.remember_hits(hits);
            if !shown {
                return Step::none();
            }
        }
        Err((path, e)) => {
            if p.selection.selected.as_ref() != Some(&path) {
                return Step::none();
            }
            p.set_status(StatusKind::Error, format!("Matches not read: {e}"));
        }
    }
    Step::redraw(Vec::new())
}
