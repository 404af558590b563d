//! Reading list rows for many files at once, in parallel.

use rayon::prelude::*;

use super::scan::{ScanProblem, Scope, SessionFile};
use arbor_session::info::{scan_info_with, SessionInfo};
use arbor_session::Error as SessionError;

/// The list row of one file, marked with the file's agent: how every path
/// that reads rows without the index (a listing, the picker's loader and
/// watcher) reads one.
pub fn scan_file(f: &SessionFile, text: bool) -> Result<SessionInfo, SessionError> {
    let mut info = if f.agent.is_foreign() {
        arbor_session::info::scan_foreign(&f.path, text)?.ok_or_else(|| {
            SessionError::NotASession {
                path: f.path.clone(),
                reason: "not a session of any agent arbor reads",
            }
        })?
    } else {
        scan_info_with(&f.path, text)?
    };
    info.agent = f.agent;
    Ok(info)
}

/// Reads the rows of `files` on all cores; failures become problems.
pub fn read_rows(files: &[SessionFile]) -> (Vec<SessionInfo>, Vec<ScanProblem>) {
    read_rows_with(files, true)
}

/// [`read_rows`] with the searchable `all_text` only when `text` (a plain
/// listing does not need it: faster, and far less memory).
pub fn read_rows_with(files: &[SessionFile], text: bool) -> (Vec<SessionInfo>, Vec<ScanProblem>) {
    let results: Vec<Result<SessionInfo, ScanProblem>> = files
        .par_iter()
        .map(|f| {
            scan_file(f, text).map_err(|e| ScanProblem {
                path: f.path.clone(),
                reason: e.to_string(),
            })
        })
        .collect();
    let mut rows = Vec::with_capacity(results.len());
    let mut problems = Vec::new();
    for r in results {
        match r {
            Ok(i) => rows.push(i),
            Err(p) => problems.push(p),
        }
    }
    (rows, problems)
}

/// Keeps the rows a listing shows: the project's own (by header cwd) and,
/// unless asked, no internal workflow sessions.
pub fn filter_rows(rows: &mut Vec<SessionInfo>, scope: &Scope, include_internal: bool) {
    rows.retain(|r| {
        (include_internal || !r.internal)
            && match scope {
                Scope::All => true,
                Scope::Project(cwd) => &r.cwd == cwd,
            }
    });
}

/// By path (each row's is its own).
pub fn sort_by_path(rows: &mut [SessionInfo]) {
    // As `sort_recent`: a stable sort of big rows held a copy of half of them.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_unstable_by(|&a, &b| rows[a].path.cmp(&rows[b].path));
    apply_order(rows, order);
}

/// Most recently modified first; ties by path for a stable order.
pub fn sort_recent(rows: &mut [SessionInfo]) {
    // Rows are big: sort an index, then move each row into place once.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&rows[a], &rows[b]);
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| a.path.cmp(&b.path))
    });
    apply_order(rows, order);
}

/// Rearranges `v` so that `v[k]` becomes the old `v[order[k]]` (`order`
/// a permutation of `0..v.len()`).
pub fn apply_order<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..v.len() {
        // Follow the cycle through `start`, marking visited slots.
        let mut k = start;
        while order[k] != usize::MAX {
            let from = order[k];
            order[k] = usize::MAX;
            if from == start || order[from] == usize::MAX {
                break;
            }
            v.swap(k, from);
            k = from;
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn apply_order_permutes() {
        for n in 0..8usize {
            // every rotation and the reversal
            let mut orders: Vec<Vec<usize>> = (0..n)
                .map(|r| (0..n).map(|i| (i + r) % n).collect())
                .collect();
            orders.push((0..n).rev().collect());
            for order in orders {
                let mut v: Vec<usize> = (0..n).map(|i| i * 10).collect();
                super::apply_order(&mut v, order.clone());
                let want: Vec<usize> = order.iter().map(|&i| i * 10).collect();
                assert_eq!(v, want, "{order:?}");
            }
        }
    }
}
