//! Effects that read: a preview and its matches, rows re-read after a
//! change, a session for the tree, the labels in scope.

use std::path::PathBuf;
use std::sync::Arc;

use super::super::pools::background_pool;
use super::super::workers::preview_hits;
use super::super::{index_on, open_index};
use crate::ui::app::{AppEvent, SharedSession};
use crate::ui::picker::{load_preview, PreviewLimits, Row};
use arbor_search::Query;
use arbor_store::listing::scan_file;
use arbor_store::{SessionFile, StoreConfig};

/// The preview of `path`, then (with the file's change time in `hits`)
/// its entries that match `query`.
pub fn preview(path: PathBuf, query: &Query, hits: Option<i64>) -> Vec<AppEvent> {
    let mut out = vec![AppEvent::PreviewLoaded(
        load_preview(&path).map_err(|e| (path.clone(), e)),
    )];
    if let Some(stamp) = hits {
        let limits = PreviewLimits::default();
        if let Some(ev) = preview_hits(path, query, stamp, &limits, &|| false) {
            out.push(ev);
        }
    }
    out
}

/// The rows of `files` read again: a row each, or that it is gone.
pub fn rescan(files: Vec<SessionFile>) -> Vec<AppEvent> {
    // The index reads only the appended bytes of a growing session.
    let mut index = open_index();
    files
        .into_iter()
        .map(|f| {
            let row = match index.as_mut().map(|i| i.update_file(&f)) {
                Some(Ok(r)) => r,
                Some(Err(e)) => {
                    arbor_util::log::line(format!(
                        "index: update of {} failed: {e}",
                        f.path.display()
                    ));
                    scan_file(&f, true).ok()
                }
                None => scan_file(&f, true).ok(),
            };
            match row {
                Some(info) => AppEvent::Rows(vec![Row::new(info)]),
                None => AppEvent::RowGone(f.path),
            }
        })
        .collect()
}

/// A session read for the tree view (`reload`: the open tree's file changed).
pub fn read_tree(path: PathBuf, agent: arbor_session::Agent, reload: bool) -> AppEvent {
    let result = crate::ui::tree::Loaded::read(&path, agent).map(Box::new);
    AppEvent::TreeLoaded {
        path,
        reload,
        result,
    }
}

/// The search text of the tree's session, built below the UI thread.
pub fn index_tree(session: SharedSession) -> AppEvent {
    let build = || arbor_session::search_text::SearchText::build(&session.0);
    let text = Arc::new(match background_pool() {
        Some(pool) => pool.install(build),
        None => build(),
    });
    AppEvent::TreeSearchText { session, text }
}

/// The labels of the sessions in `scope`, newest first.
pub fn labels(
    config: &StoreConfig,
    scope: &arbor_store::Scope,
    include_internal: bool,
) -> AppEvent {
    // The rows with labels, as `arbor labels --all` reads them: the
    // picker holds its own rows already (at 100,000 sessions, all
    // of them decoded again here took it from ~270 to ~485 MB).
    let index = index_on().then(|| {
        arbor_index::Index::open_default().map(|mut i| {
            i.set_labelled_only(true);
            i
        })
    });
    let mut rows = Vec::new();
    crate::app::load::load_listing(config, scope, index, &mut |ev| {
        if let crate::app::load::LoadEvent::Rows(mut r) = ev {
            // Rows read from their files come all.
            r.retain(|r| !r.labels.is_empty());
            crate::app::load::gather(&mut rows, r);
        }
    });
    arbor_store::listing::filter_rows(&mut rows, scope, include_internal);
    AppEvent::LabelsLoaded(arbor_session::extras::label_rows(&rows))
}
