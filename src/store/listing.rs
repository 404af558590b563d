//! Reading list rows for many files at once, in parallel.

use rayon::prelude::*;

use super::paths::Origin;
use super::scan::{ScanProblem, Scope, SessionFile};
use crate::session::info::{scan_info, SessionInfo};

/// Reads the rows of `files` on all cores; failures become problems.
pub fn read_rows(files: &[SessionFile]) -> (Vec<SessionInfo>, Vec<ScanProblem>) {
    let results: Vec<Result<SessionInfo, ScanProblem>> = files
        .par_iter()
        .map(|f| {
            scan_info(&f.path)
                .map(|mut info| {
                    info.from_pi_store = f.origin == Origin::Pi;
                    info
                })
                .map_err(|e| ScanProblem {
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

/// Most recently modified first; ties by path for a stable order.
pub fn sort_recent(rows: &mut [SessionInfo]) {
    rows.sort_by(|a, b| {
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| a.path.cmp(&b.path))
    });
}
