//! Performing an effect to completion, by kind: what it reads ([`reads`]),
//! what it does to the files on disk ([`files`]: the trash, permanent
//! deletes), what it writes ([`writes`]).

mod files;
mod reads;
mod writes;

use super::open_index;
use super::workers::{search_done, tree_hits};
use crate::app::searcher::Searcher;
use crate::ui::app::{AppEvent, Effect};

pub use files::{remote_restore_text, restore_from_trash};
pub use writes::export_branch;

/// [`Effect::Search`] with `searcher` (its index, its memory of earlier
/// terms), as the search worker runs every query; other effects give
/// nothing. [`perform`] searches with the index the process uses.
pub fn perform_search(searcher: &mut Searcher, effect: Effect) -> Vec<AppEvent> {
    let Effect::Search {
        generation,
        query,
        docs,
        index_problem,
        first,
    } = effect
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let answer = searcher.search_first(
        &query,
        &docs,
        index_problem.as_deref(),
        &|| false,
        first.as_ref(),
        &mut |a| out.push(search_done(generation, &query, docs.clone(), a)),
    );
    out.extend(answer.map(|a| search_done(generation, &query, docs, a)));
    out
}

/// Performs an effect to completion and returns the events it produces.
/// The runtime calls it on worker threads; tests call it directly.
pub fn perform(effect: Effect) -> Vec<AppEvent> {
    match effect {
        Effect::Search { .. } => perform_search(&mut Searcher::new(open_index()), effect),
        Effect::LoadPreview { path, query, hits } => reads::preview(path, &query, hits),
        Effect::TreeHits { session, query } => {
            tree_hits(session, &query, &|| false).into_iter().collect()
        }
        Effect::Rescan(files) => reads::rescan(files),
        Effect::Rename { path, name } => writes::rename_session(path, name),
        Effect::Trash(path) => files::trash(path),
        Effect::MeasureBatch(paths) => files::measure_batch(paths),
        Effect::TrashBatch(paths) => files::trash_batch(&paths),
        Effect::RestoreBatch(paths) => files::restore_batch(&paths),
        Effect::DeleteBatch(paths) => files::delete_batch(paths),
        Effect::DeletePermanently(path) => files::delete_permanently(path),
        Effect::Restore(path) => {
            let result = restore_from_trash(&path);
            vec![AppEvent::Restored { path, result }]
        }
        Effect::OpenTree { path, agent } => vec![reads::read_tree(path, agent, false)],
        Effect::IndexTree(session) => vec![reads::index_tree(session)],
        Effect::ReloadTree { path, agent } => vec![reads::read_tree(path, agent, true)],
        Effect::Label {
            path,
            target,
            label,
        } => writes::label(path, &target, label.as_deref()),
        Effect::Branch {
            path,
            entry,
            summary,
        } => writes::branch(path, &entry, &summary),
        Effect::Fork { path, entry } => writes::fork(path, &entry),
        Effect::MigrateThen { path, then } => writes::migrate_then(path, *then),
        Effect::Export {
            path,
            leaf,
            format,
            thinking,
            file_name,
        } => writes::export(&path, &leaf, format, thinking, &file_name),
        Effect::LoadLabels {
            config,
            scope,
            include_internal,
        } => vec![reads::labels(&config, &scope, include_internal)],
        Effect::CloseTree | Effect::Copy(_) | Effect::Exit(_) => Vec::new(),
    }
}
