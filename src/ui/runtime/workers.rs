//! The workers behind the screen: the search worker and the preview
//! worker, each answering only the newest request (older ones are stale).

use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use super::open_index;
use super::pools::{on_foreground_pool, search_in_foreground};
use crate::app::searcher::{Answer, FirstRows, Searcher};
use crate::ui::app::AppEvent;
use crate::ui::picker::{load_hits_noting, load_preview_with, PreviewHits, PreviewLimits};
use arbor_search::{Docs, Query};

/// The generation of the newest search asked for: an older one still
/// running gives up (see `Index::search_cancellable`).
pub(super) static WANTED_SEARCH: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// Previews asked for so far: the worker's job is stale once it moved on.
pub(super) static PREVIEWS_ASKED: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// Tree searches asked for so far (see `Effect::TreeHits`).
pub(super) static TREE_HITS_ASKED: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// What the search worker is asked.
pub(super) enum SearchJob {
    /// Load what searches need now, for this snapshot of the rows: sent
    /// once the rows are in, so that loading does not compete with the
    /// first screen for the two cores of a small machine.
    Warm(Arc<Docs>),
    Search(SearchBody),
}

/// One search (`Effect::Search`'s fields): its generation, the query, the
/// rows to score and why the index may be incomplete.
/// One search for the worker (an [`Effect::Search`]'s fields).
pub(super) struct SearchAsk {
    pub(super) generation: u64,
    pub(super) query: Query,
    pub(super) docs: Arc<Docs>,
    pub(super) index_problem: Option<String>,
    pub(super) first: Option<FirstRows>,
}

pub(super) type SearchBody = Box<SearchAsk>;

/// What the worker takes from its queue at once: the snapshot of a
/// warm-up asked for, and the newest search (older ones are stale).
type Drained = (Option<Arc<Docs>>, Option<SearchBody>);

/// Scores only the newest request; older ones still queued are dropped.
pub(super) fn spawn_search_worker(tx: Sender<AppEvent>) -> Sender<SearchJob> {
    let (jtx, jrx) = channel::<SearchJob>();
    std::thread::spawn(move || {
        let mut searcher = Searcher::new(open_index());
        // Work left for idle moments: asked between requests, never before
        // one that is waiting.
        let mut idle_work = false;
        loop {
            let next = if idle_work {
                newest_search_now(&jrx)
            } else {
                newest_search(&jrx).map(Some)
            };
            let Some(next) = next else { break };
            let Some((warm, job)) = next else {
                idle_work = searcher.idle();
                continue;
            };
            if let Some(docs) = warm {
                searcher.warm(Some(&docs));
                idle_work = true;
            }
            let Some(ask) = job else {
                continue;
            };
            let SearchAsk {
                generation,
                query,
                docs,
                index_problem,
                first,
            } = *ask;
            let stale = || WANTED_SEARCH.load(std::sync::atomic::Ordering::Relaxed) != generation;
            let mut early = |a: Answer| {
                let _ = tx.send(search_done(generation, &query, docs.clone(), a));
            };
            // `None`: a newer query is waiting, this answer would be dropped.
            let Some(answer) = search_in_foreground(
                &mut searcher,
                &query,
                &docs,
                index_problem.as_deref(),
                &stale,
                first.as_ref(),
                &mut early,
            ) else {
                continue;
            };
            if tx
                .send(search_done(generation, &query, docs, answer))
                .is_err()
            {
                break;
            }
            // The search may have loaded a newer snapshot of the index,
            // whose text is not checked yet.
            idle_work = true;
        }
    });
    jtx
}

pub(super) fn search_done(
    generation: u64,
    query: &Query,
    docs: Arc<Docs>,
    answer: Answer,
) -> AppEvent {
    AppEvent::SearchDone {
        generation,
        query: query.raw.clone(),
        docs,
        scores: answer.scores,
        incomplete: answer.incomplete,
        stage: answer.stage,
    }
}

/// Blocks for a request, then takes everything queued.
fn newest_search(rx: &Receiver<SearchJob>) -> Option<Drained> {
    Some(drain_searches(rx.recv().ok()?, rx))
}

/// [`newest_search`] without waiting: `Some(None)` when nothing is queued,
/// `None` once the picker is gone.
fn newest_search_now(rx: &Receiver<SearchJob>) -> Option<Option<Drained>> {
    match rx.try_recv() {
        Ok(first) => Some(Some(drain_searches(first, rx))),
        Err(std::sync::mpsc::TryRecvError::Empty) => Some(None),
        Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
    }
}

/// `first` and everything queued after it, as [`newest_search`] gives them.
fn drain_searches(first: SearchJob, rx: &Receiver<SearchJob>) -> Drained {
    let (mut warm, mut job) = (None, None);
    for j in std::iter::once(first).chain(std::iter::from_fn(|| rx.try_recv().ok())) {
        match j {
            SearchJob::Warm(docs) => warm = Some(docs),
            SearchJob::Search(s) => job = Some(s),
        }
    }
    (warm, job)
}

/// `Effect::LoadPreview`'s fields: the session, the query, and the file's
/// change time when its matches are to be listed.
pub(super) type PreviewJob = (PathBuf, Query, Option<i64>);

pub(super) fn spawn_preview_worker(tx: Sender<AppEvent>) -> Sender<PreviewJob> {
    let (jtx, jrx) = channel::<PreviewJob>();
    std::thread::spawn(move || {
        while let Some((path, query, hits)) = latest(&jrx) {
            // Everything queued was taken: this job is the newest asked.
            let asked = PREVIEWS_ASKED.load(std::sync::atomic::Ordering::SeqCst);
            let stale = || PREVIEWS_ASKED.load(std::sync::atomic::Ordering::SeqCst) != asked;
            let limits = PreviewLimits::default();
            let r = on_foreground_pool(|| load_preview_with(&path, &limits))
                .map(|(p, _)| p)
                .map_err(|e| (path.clone(), e));
            if stale() {
                continue;
            }
            if tx.send(AppEvent::PreviewLoaded(r)).is_err() {
                break;
            }
            // Reading a big session for its matches can take a while: a
            // newer selection or query stops it.
            let Some(stamp) = hits else { continue };
            let hits = on_foreground_pool(|| preview_hits(path, &query, stamp, &limits, &stale));
            if let Some(ev) = hits {
                if stale() {
                    continue;
                }
                if tx.send(ev).is_err() {
                    break;
                }
            }
        }
    });
    jtx
}

/// The entries of `path` that match `query` as `HitsLoaded`; `None` once
/// `stale`.
pub(super) fn preview_hits(
    path: PathBuf,
    query: &Query,
    stamp: i64,
    limits: &PreviewLimits,
    stale: &dyn Fn() -> bool,
) -> Option<AppEvent> {
    let r = match load_hits_noting(&path, query, limits, stale) {
        Ok(None) => return None,
        Ok(Some((hits, total, unread))) => Ok(PreviewHits {
            path,
            query: query.raw.clone(),
            stamp,
            hits,
            total,
            unread,
        }),
        Err(e) => Err((path, e)),
    };
    Some(AppEvent::HitsLoaded(r))
}

/// Which entries of the tree's session match `query`, as `TreeHits`;
/// `None` once `stale`.
pub(super) fn tree_hits(
    session: crate::ui::app::SharedSession,
    query: &Query,
    stale: &(dyn Fn() -> bool + Sync),
) -> Option<AppEvent> {
    let bits = arbor_search::hits::session_term_bits(&session.0, query, stale)?;
    Some(AppEvent::TreeHits {
        session,
        query: query.raw.clone(),
        bits: Arc::new(bits),
    })
}

/// Blocks for a job, then skips to the newest one queued.
fn latest<T>(rx: &Receiver<T>) -> Option<T> {
    let mut job = rx.recv().ok()?;
    while let Ok(newer) = rx.try_recv() {
        job = newer;
    }
    Some(job)
}
