//! Thread pools of arbor's own: the work the screen waits for runs off
//! rayon's shared pool (which a first run's index build holds), and the
//! work it does not wait for runs below the UI thread.

use std::sync::Arc;

use crate::app::searcher::{Answer, FirstRows, Searcher};
use arbor_search::{Docs, Query};

/// Runs `work` (a search, a user's write, a preview, the tree's matches)
/// on threads of its own: these run on all cores, and on the shared pool
/// they queued behind a first run's index build, which keeps that pool's
/// threads busy (a rename while 3,000 sessions were indexed waited ~10 s to
/// be written, and a query typed then was answered only after the build).
pub(super) fn on_foreground_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    match foreground_pool() {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// The threads of [`on_foreground_pool`]; `None` when they could not be
/// started (the work then runs on the shared pool).
fn foreground_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        sized(rayon::ThreadPoolBuilder::new())
            .thread_name(|n| format!("arbor-foreground-{n}"))
            .build()
            .ok()
    })
    .as_ref()
}

/// Threads for work the screen does not wait for (a million-entry
/// session's search text takes seconds on every core): scheduled below the
/// UI thread, so the keys typed meanwhile still draw at once.
/// `None` when its threads could not be started (the work then runs on
/// the shared pool).
pub(super) fn background_pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        sized(rayon::ThreadPoolBuilder::new())
            .thread_name(|n| format!("arbor-background-{n}"))
            .start_handler(|_| lower_priority())
            .build()
            .ok()
    })
    .as_ref()
}

/// A pool sized by the address-space limit when there is one (see
/// `address_space::pool_threads`); one thread per core otherwise.
fn sized(builder: rayon::ThreadPoolBuilder) -> rayon::ThreadPoolBuilder {
    match crate::address_space::pool_threads() {
        Some(n) => builder.num_threads(n),
        None => builder,
    }
}

/// Lowers the calling thread's scheduling priority (nice 10); on Linux a
/// nice value belongs to the thread.
fn lower_priority() {
    #[cfg(unix)]
    // SAFETY: setpriority only reads its arguments; `0` is this thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 10);
    }
}

/// A picker search off rayon's shared pool (see [`on_foreground_pool`]):
/// during a first run the index build holds that pool, and a query typed
/// was answered only after the build.
pub(super) fn search_in_foreground(
    searcher: &mut Searcher,
    query: &Query,
    docs: &Arc<Docs>,
    index_problem: Option<&str>,
    stale: &(dyn Fn() -> bool + Sync),
    first: Option<&FirstRows>,
    early: &mut (dyn FnMut(Answer) + Send),
) -> Option<Answer> {
    on_foreground_pool(|| searcher.search_first(query, docs, index_problem, stale, first, early))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Holds every thread of rayon's shared pool (as a first run's index
    /// build holds them) until the guard it returns is dropped.
    fn hold_the_shared_pool() -> impl Drop {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::mpsc::channel;
        struct Held(Arc<AtomicBool>);
        impl Drop for Held {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let hold = Arc::new(AtomicBool::new(true));
        let threads = rayon::current_num_threads();
        let (held_tx, held_rx) = channel();
        for _ in 0..threads {
            let (held_tx, hold) = (held_tx.clone(), hold.clone());
            rayon::spawn(move || {
                let _ = held_tx.send(());
                while hold.load(Ordering::Acquire) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            });
        }
        for _ in 0..threads {
            held_rx.recv().unwrap();
        }
        Held(hold)
    }

    /// Waits for `work` on a thread of its own; `None` past a guard
    /// against a hang (not a timing: the shared pool stays held until the
    /// answer comes or this gives up).
    fn answer<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(work());
        });
        rx.recv_timeout(std::time::Duration::from_secs(30)).ok()
    }

    /// A user's write parses on threads of its own: with every thread of
    /// the shared pool held, its parallel work still finishes. On the
    /// shared pool it would wait for them, and they are let go only after.
    #[test]
    fn foreground_work_does_not_wait_for_the_shared_pool() {
        use rayon::prelude::*;
        let held = hold_the_shared_pool();
        let got = answer(|| super::on_foreground_pool(|| (0..10_000u64).into_par_iter().sum()));
        drop(held);
        assert_eq!(got, Some(49_995_000u64));
    }

    /// So does the picker's search, fuzzy pass and all.
    #[test]
    fn a_search_does_not_wait_for_the_shared_pool() {
        use arbor_search::{Docs, Query, SearchDoc};
        use arbor_session::info::SessionInfo;
        let docs: Vec<_> = ["parser fix", "emigre notes", "cache"]
            .iter()
            .map(|name| {
                let info = SessionInfo {
                    id: format!("id-{name}"),
                    name: Some(name.to_string()),
                    has_name: true,
                    cwd: "/w".into(),
                    ..Default::default()
                };
                let path = PathBuf::from(format!("/s/{name}.jsonl"));
                (path.into(), Arc::new(SearchDoc::from_info(&info)))
            })
            .collect();
        let docs = Arc::new(Docs(docs));
        let held = hold_the_shared_pool();
        let got = answer(move || {
            let mut searcher = Searcher::new(None);
            let query = Query::parse("emigr");
            let answer = search_in_foreground(
                &mut searcher,
                &query,
                &docs,
                None,
                &|| false,
                None,
                &mut |_| {},
            );
            answer.map(|a| a.scores.iter().map(Option::is_some).collect::<Vec<_>>())
        });
        drop(held);
        assert_eq!(got, Some(Some(vec![false, true, false])));
    }
}
