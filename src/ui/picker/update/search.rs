//! The query's search: asked when the query is edited, and its answers
//! (first rows, interim, whole) shown as they come.

use std::sync::Arc;

use super::search_again;
use crate::app::searcher::{FirstRows, Stage};
use crate::ui::app::{Effect, Step};
use crate::ui::picker::state::{PickerState, Sort, StatusKind};
use arbor_search::{Docs, Query};

const INCOMPLETE: &str = "Search incomplete";

/// After an edit of the query: a search of every row when its text changed
/// (moving the cursor changes nothing).
pub fn query_edited(p: &mut PickerState, before: &str) -> Vec<Effect> {
    if p.search.query.text() == before {
        return Vec::new();
    }
    p.search.parsed = Query::parse_at(p.search.query.text(), p.now_ms);
    p.search.generation += 1;
    p.selection.select_first_on_results = true;
    p.selection.last_on_whole = false;
    if !p.search.parsed.has_conditions() {
        p.list.scores = None;
        p.search.incomplete = None;
        p.search.reading = None;
        p.search.partial = false;
        p.search.scored_query.clear();
        p.recompute();
        p.select_pos(0);
        return Vec::new();
    }
    if p.search.parsed.error().is_some() {
        p.recompute();
        return Vec::new();
    }
    vec![search_effect(p)]
}

pub fn search_effect(p: &mut PickerState) -> Effect {
    // The first screen is asked for first where the list ranks the best
    // first (sorted by time, any match may be the newest): two of them,
    // for a list whose height the answer changes and a page down. Only
    // for a query just typed, whose answer puts the selection on its
    // first row: the same query asked again (new rows, the index done)
    // keeps the selection where it is, which a list of two screens may
    // not hold. Not while rows load or the index is built: the rows and
    // the index change under the answer.
    let wanted = p.settings.sort != Sort::Recent
        && p.selection.select_first_on_results
        && p.progress.loading.is_none()
        && p.progress.indexing.is_none();
    let first = wanted.then(|| FirstRows {
        want: 2 * p.selection.page.max(1),
        scoped: p.scoped_times(),
    });
    if first.is_some() {
        p.first_rows_asked();
    }
    Effect::Search {
        generation: p.search.generation,
        query: p.search.parsed.clone(),
        docs: p.docs(),
        index_problem: p.progress.index_problem.clone(),
        first,
    }
}

/// The index could not be written: the query is asked again, its answer
/// saying so.
pub fn index_incomplete(p: &mut PickerState, reason: String) -> Step {
    p.progress.index_problem = Some(reason);
    Step::redraw(search_again(p).into_iter().collect())
}

/// A search's answer: dropped when it is an older query's, else the
/// scores shown and the selection placed.
pub fn answered(
    p: &mut PickerState,
    generation: u64,
    query: String,
    docs: &Arc<Docs>,
    scores: Vec<Option<u32>>,
    incomplete: Option<String>,
    stage: Stage,
) -> Step {
    let partial = stage == Stage::FirstRows;
    if generation != p.search.generation || (partial && !p.first_rows_fit()) {
        // An older query's, or first rows asked for under settings
        // changed since (the whole answer follows).
        return Step::none();
    }
    // A partial answer holds the screen's rows, final; the rest,
    // its count and what the bodies add come with the whole
    // answer, which says whether it is complete.
    p.search.partial = partial;
    if !partial {
        note_completeness(p, incomplete, stage);
    }
    p.set_scores(docs, scores);
    p.search.scored_query = query;
    p.recompute();
    place_selection(p, stage);
    Step::redraw(Vec::new())
}

/// Never an incomplete answer shown as complete: the header says so
/// while it lasts, the status line says why. While the index is still
/// being built, or the files it lacks are being read, the header says so
/// already: that is expected, not an error.
fn note_completeness(p: &mut PickerState, incomplete: Option<String>, stage: Stage) {
    let interim = matches!(stage, Stage::Interim { .. });
    let building = p.progress.loading.is_some() || p.progress.indexing.is_some() || interim;
    match &incomplete {
        Some(why) if !building && p.search.incomplete_reported.as_ref() != Some(why) => {
            p.set_status(StatusKind::Error, format!("{INCOMPLETE}: {why}"));
            p.search.incomplete_reported = Some(why.clone());
        }
        Some(_) => {}
        None => {
            p.search.incomplete_reported = None;
            if p.flash
                .status
                .as_ref()
                .is_some_and(|s| s.text.starts_with(INCOMPLETE))
            {
                p.flash.status = None;
            }
        }
    }
    p.search.incomplete = incomplete;
    p.search.reading = match stage {
        Stage::Interim { reading } => Some(reading),
        _ => None,
    };
}

/// Where the selection goes once an answer is shown.
fn place_selection(p: &mut PickerState, stage: Stage) {
    // An interim answer's best row may not be the whole answer's:
    // the whole one selects its own, unless the selection was
    // moved or a row asked about since.
    let interim_pick = p.selection.first_of_interim.take();
    if std::mem::take(&mut p.selection.select_first_on_results)
        || (interim_pick.is_some() && interim_pick == p.selection.selected)
    {
        p.select_pos(0);
        p.selection.scroll = 0;
    }
    if matches!(stage, Stage::Interim { .. }) {
        p.selection.first_of_interim = p.selection.selected.clone();
    }
    if stage == Stage::Whole && std::mem::take(&mut p.selection.last_on_whole) {
        p.select_pos(p.list.visible.len().saturating_sub(1));
    }
}
