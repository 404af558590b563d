//! The plain way to the rows: every file read on all cores, the rows sent
//! in batches with the progress.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use arbor_session::info::SessionInfo;
use arbor_store::listing::scan_file;
use arbor_store::{ScanProblem, SessionFile};
use arbor_util::shared_path::SharedPath;

use super::{LoadEvent, MakeRow, Out};

/// How often the fallback scan sends what it has (each batch re-sorts the
/// picker's list on its UI thread).
const SCAN_BATCH: Duration = Duration::from_millis(30);

/// The plain way: every file read on all cores, rows sent in batches with
/// the progress; ends the stream.
pub(super) fn read_files<M: MakeRow>(
    files: &[SessionFile],
    mut problems: Vec<ScanProblem>,
    (text, first_dirs): (bool, &[PathBuf]),
    make: &M,
    out: &mut Out<M::Row>,
) {
    let total = files.len();
    out.send(LoadEvent::Progress { done: 0, total });
    let files: Vec<&SessionFile> = files.iter().collect();
    let (first, rest) = project_first(&files, first_dirs);
    let cache = M::Cache::default();
    if !first.is_empty() {
        let scanned = scan(&first, text, make, &cache, SCAN_BATCH, 0, total, out);
        problems.extend(scanned.problems);
    }
    let done = first.len();
    let scanned = scan(&rest, text, make, &cache, SCAN_BATCH, done, total, out);
    problems.extend(scanned.problems);
    out.log(format_args!(
        "{total} files read, {} problems",
        problems.len()
    ));
    for p in &problems {
        out.log(format_args!("skipped {}: {}", p.path.display(), p.reason));
    }
    out.send(LoadEvent::Finished { problems });
}

/// `files` split into those under `dirs` (a project's folders) and the
/// rest, each in its order: a screen opened on a project reads its files
/// first, so that its list is complete before the whole store's (one
/// folder of ten at 100,000 sessions: its last rows came seconds in).
pub(super) fn project_first<'f>(
    files: &[&'f SessionFile],
    dirs: &[PathBuf],
) -> (Vec<&'f SessionFile>, Vec<&'f SessionFile>) {
    files
        .iter()
        .partition(|f| dirs.iter().any(|d| f.path.starts_with(d)))
}

/// What tells a later change of a scanned session: its messages, last
/// activity and the file's mtime (a rename or a label changes only that).
pub(super) type Fingerprint = (usize, i64, i64);

pub(super) fn fingerprint(info: &SessionInfo) -> Fingerprint {
    (info.message_count, info.modified_ms, info.file_mtime_ms)
}

pub(super) struct Scanned {
    pub(super) problems: Vec<ScanProblem>,
    pub(super) fingerprints: HashMap<SharedPath, Fingerprint>,
}

/// Reads `files` on all cores and sends their rows every `every`, each
/// batch followed by the progress (`before` files were counted already,
/// of `total`); the last batch goes without it.
#[allow(clippy::too_many_arguments)]
pub(super) fn scan<M: MakeRow>(
    files: &[&SessionFile],
    text: bool,
    make: &M,
    cache: &M::Cache,
    every: Duration,
    before: usize,
    total: usize,
    out: &mut Out<M::Row>,
) -> Scanned {
    type Read<R> = Result<(SharedPath, Fingerprint, R), ScanProblem>;
    let mut scanned = Scanned {
        problems: Vec::new(),
        fingerprints: HashMap::new(),
    };
    let (row_tx, row_rx) = channel::<Read<M::Row>>();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            files.par_iter().for_each_init(
                || row_tx.clone(),
                |row_tx, f| {
                    let read = scan_file(f, text)
                        .map(|info| {
                            (
                                info.path.clone(),
                                fingerprint(&info),
                                make.make(info, cache),
                            )
                        })
                        .map_err(|e| ScanProblem {
                            path: f.path.clone(),
                            reason: e.to_string(),
                        });
                    let _ = row_tx.send(read);
                },
            );
            drop(row_tx);
        });
        let mut done = before;
        let mut batch = Vec::new();
        let mut last = Instant::now();
        for read in row_rx {
            done += 1;
            match read {
                Ok((path, fp, row)) => {
                    scanned.fingerprints.insert(path, fp);
                    batch.push(row);
                }
                Err(p) => scanned.problems.push(p),
            }
            if last.elapsed() >= every {
                out.send(LoadEvent::Rows(std::mem::take(&mut batch)));
                out.send(LoadEvent::Progress {
                    done: done.min(total),
                    total,
                });
                last = Instant::now();
            }
        }
        out.send(LoadEvent::Rows(batch));
    });
    scanned
}
