//! Reading the changed files on all cores, within a budget of bytes in
//! flight, and handing each to the writer as it comes.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::RefreshStats;
use arbor_session::info::SessionInfo;
use arbor_store::scan::ScanProblem;

use super::detect::Job;
use super::parse::{parse_file, Parsed};
use super::write::Writer;
use super::Wanted;
use crate::Result;

/// How many bytes of parse results may wait for the writer. While it
/// commits they pile up to this, beside its builders at their fullest: at
/// 64 MB a first run at 100,000 sessions peaked at 336–346 MB, at 32 MB at
/// 272–300 MB (alternated runs), no slower.
const IN_FLIGHT_BYTES: usize = 32 << 20;

/// Bytes that may be in flight between threads: taking waits while others
/// hold them (one taker alone may exceed the limit, so a result bigger
/// than it still goes).
struct Budget {
    /// The bytes held, and whether the budget is closed.
    held: std::sync::Mutex<(usize, bool)>,
    freed: std::sync::Condvar,
    limit: usize,
}

impl Budget {
    fn new(limit: usize) -> Budget {
        Budget {
            held: std::sync::Mutex::new((0, false)),
            freed: std::sync::Condvar::new(),
            limit,
        }
    }

    fn take(&self, n: usize) {
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        while !held.1 && held.0 > 0 && held.0 + n > self.limit {
            held = match self.freed.wait(held) {
                Ok(h) => h,
                Err(_) => return,
            };
        }
        held.0 += n;
    }

    fn give(&self, n: usize) {
        if let Ok(mut held) = self.held.lock() {
            held.0 = held.0.saturating_sub(n);
            self.freed.notify_all();
        }
    }

    /// Lets every taker go from now on: the one giving bytes back has
    /// stopped (had it panicked, the takers would wait forever).
    fn close(&self) {
        if let Ok(mut held) = self.held.lock() {
            held.1 = true;
            self.freed.notify_all();
        }
    }
}

/// Closes a [`Budget`] when dropped, however its scope is left.
struct CloseOnDrop<'b>(&'b Budget);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The rows of `jobs` read from their files, as a listing without the
/// index reads them (the same rows, the same problems); nothing written.
pub(super) fn read_plain(
    jobs: Vec<Job>,
    wanted: Wanted,
    stats: &mut RefreshStats,
    on_rows: &mut dyn FnMut(Vec<SessionInfo>),
) {
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        let jobs = &jobs;
        scope.spawn(move || {
            jobs.par_iter().for_each_with(tx, |tx, (f, _, _)| {
                let _ =
                    tx.send(
                        arbor_store::listing::scan_file(f, false).map_err(|e| ScanProblem {
                            path: f.path.clone(),
                            reason: e.to_string(),
                        }),
                    );
            });
        });
        let mut batch = Vec::new();
        for read in rx {
            match read {
                Ok(mut row) => {
                    stats.reparsed += 1;
                    if !wanted.usage {
                        row.usage = Default::default();
                    }
                    if wanted.sends(&row) {
                        batch.push(row);
                    }
                }
                Err(problem) => stats.problems.push(problem),
            }
            if batch.len() >= 512 {
                on_rows(std::mem::take(&mut batch));
            }
        }
        if !batch.is_empty() {
            on_rows(batch);
        }
    });
}

/// Reads the files that changed on all cores (see [`read_order`]),
/// streams their rows to `on_rows` and writes them in batches. Returns how
/// the writing went: the rows are delivered either way.
pub(super) fn read_changed(
    writer: &mut Writer,
    mut jobs: Vec<Job>,
    wanted: Wanted,
    stats: &mut RefreshStats,
    on_rows: &mut dyn FnMut(Vec<SessionInfo>),
) -> Result<()> {
    read_order(&mut jobs);
    // A build, not a few appends: its builders' memory goes back as soon
    // as it is freed (see `PurgeAtOnce`).
    let bytes: u64 = jobs.iter().map(|j| j.2).sum();
    let _purge = (bytes > IN_FLIGHT_BYTES as u64).then(arbor_util::memory::PurgeAtOnce::start);
    // Bounded by bytes, not by count: the parse workers go on while the
    // writer encodes and stores a batch's segments (a third of a second,
    // nine times in a build of 10,000 sessions), where 32 results of small
    // files had filled a bounded channel at once and left a core idle.
    let (tx, rx) = mpsc::channel::<(Result<Parsed, ScanProblem>, usize)>();
    let budget = Budget::new(IN_FLIGHT_BYTES);
    let mut result = Ok(());
    std::thread::scope(|scope| {
        let (jobs, budget) = (&jobs, &budget);
        scope.spawn(move || {
            jobs.par_iter().for_each_with(tx, |tx, (f, c, _)| {
                // A build behind commands stops while one runs.
                crate::behind::pause_while_busy();
                let parsed = parse_file(f, c.as_ref());
                let weight = parsed.as_ref().map_or(0, Parsed::weight);
                budget.take(weight);
                if tx.send((parsed, weight)).is_err() {
                    budget.give(weight);
                }
            });
        });
        let _close = CloseOnDrop(budget);
        let mut batch = Vec::new();
        let mut last_emit = Instant::now();
        let mut last_commit = Instant::now();
        let mut test_pause = crate::behind::TestPause::from_env();
        for (msg, weight) in rx {
            // Given back at once: the result's memory is freed within this
            // turn of the loop.
            budget.give(weight);
            let p = match msg {
                Ok(p) => p,
                Err(problem) => {
                    stats.problems.push(problem);
                    continue;
                }
            };
            stats.bytes_parsed += p.bytes_parsed;
            if p.continued.is_some() {
                stats.appended += 1;
            } else {
                stats.reparsed += 1;
            }
            if result.is_ok() {
                result = writer.put(&p).map(|_| ());
            }
            match (p.row, p.state) {
                (Some(row), Ok(_)) if wanted.sends(&row) => batch.push(row),
                (Some(_), Ok(_)) => {}
                (_, Err(problem)) => stats.problems.push(ScanProblem {
                    path: p.file.path,
                    reason: problem,
                }),
                (None, Ok(_)) => {}
            }
            if batch.len() >= 512 || last_emit.elapsed() > Duration::from_millis(40) {
                on_rows(std::mem::take(&mut batch));
                last_emit = Instant::now();
            }
            if result.is_ok()
                && (writer.builder_full() || last_commit.elapsed() > Duration::from_secs(4))
            {
                crate::behind::pause_while_busy();
                result = writer.commit();
                last_commit = Instant::now();
            }
            if result.is_ok() && test_pause.after_one() {
                result = writer.commit();
                test_pause.wait();
            }
        }
        if !batch.is_empty() {
            on_rows(batch);
        }
    });
    result
}

/// The order files are read (and their rows written) in: the few big
/// enough that one of them left alone at the end would hold a core for a
/// while first, biggest first; the others by path, so that their rows
/// reach the path indexes in order. In the order of the listing (folders
/// in the file system's order) each row landed on a page of those indexes
/// that SQLite's small cache no longer held, and wrote it to the log
/// again: a first run at 100,000 sessions wrote 8.3 GB for an index of
/// 1.3 GB, and writes 4.0 GB now (system time 25 -> 22 s).
pub(super) fn read_order(jobs: &mut [Job]) {
    let total: u64 = jobs.iter().map(|j| j.2).sum();
    let big = |j: &Job| j.2 >= total / 256;
    jobs.sort_by(|a, b| match (big(a), big(b)) {
        (true, true) => b.2.cmp(&a.2),
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (false, false) => {
            let (a, b) = (a.0.path.as_os_str(), b.0.path.as_os_str());
            a.as_encoded_bytes().cmp(b.as_encoded_bytes())
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    use arbor_store::scan::SessionFile;

    /// Big files go first, biggest first; the others in their paths' order.
    #[test]
    fn files_are_read_big_first_then_by_path() {
        let file = |p: &str| SessionFile {
            path: PathBuf::from(p),
            agent: arbor_session::agent::Agent::Atomic,
        };
        let files = [
            file("/s/b/2.jsonl"),
            file("/s/a/9.jsonl"),
            file("/s/c/huge.jsonl"),
            file("/s/a/1.jsonl"),
            file("/s/b/big.jsonl"),
        ];
        let sizes = [10, 30, 100_000, 20, 5_000];
        let mut jobs: Vec<Job> = files.iter().zip(sizes).map(|(f, n)| (f, None, n)).collect();
        read_order(&mut jobs);
        let order: Vec<&str> = jobs.iter().map(|j| j.0.path.to_str().unwrap()).collect();
        assert_eq!(
            order,
            [
                "/s/c/huge.jsonl",
                "/s/b/big.jsonl",
                "/s/a/1.jsonl",
                "/s/a/9.jsonl",
                "/s/b/2.jsonl"
            ]
        );
    }

    /// A taker waits while others hold the budget, and one taker alone may
    /// take more than the limit (a result bigger than it still goes).
    #[test]
    fn a_budget_holds_takers_until_bytes_are_given_back() {
        let budget = Budget::new(10);
        budget.take(100);
        budget.give(100);
        budget.take(8);
        let events = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                budget.take(5);
                events.lock().unwrap().push("taken");
            });
            // Time for the taker to reach its wait (were it not to wait,
            // it would be done before the bytes are given).
            std::thread::sleep(Duration::from_millis(50));
            events.lock().unwrap().push("given");
            budget.give(8);
        });
        assert_eq!(*events.lock().unwrap(), ["given", "taken"]);
        // Closed (the writer stopped), a waiting taker goes on.
        budget.give(5);
        budget.take(8);
        let (went, gone) = mpsc::channel();
        let shared = &budget;
        std::thread::scope(|s| {
            s.spawn(move || {
                shared.take(5);
                let _ = went.send(());
            });
            std::thread::sleep(Duration::from_millis(50));
            budget.close();
            // Not a timing goal: without `close` the taker would never go.
            let result = gone.recv_timeout(Duration::from_secs(30));
            if result.is_err() {
                budget.give(8);
            }
            assert!(result.is_ok(), "a closed budget lets its takers go");
        });
    }
}
