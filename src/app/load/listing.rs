//! The listings' plans (`arbor list`, `stats`, `labels`, `--last`, the
//! labels screen): every row of one scope through a single refresh of the
//! index, or read from the files.

use std::collections::HashSet;
use std::time::Instant;

use arbor_index::stored::Listing;
use arbor_index::Index;
use arbor_search::Query;
use arbor_session::info::SessionInfo;
use arbor_store::{list_session_files, ScanProblem, Scope, SessionFile, StoreConfig};

use super::files::read_files;
use super::rows::{Listed, Plain};
use super::{LoadEvent, LoadWarning, Out};

/// The rows of `scope` for `arbor stats`, `labels`, `--last` and the
/// labels screen (with their labels; with usage when the index's extras
/// are on, only those with labels when it is set so), through one refresh
/// of the index (which it brings up to date), or read from the files (as
/// [`load_screen`](super::load_screen) takes `index`). Returns the index when the rows came
/// from it.
pub fn load_listing(
    config: &StoreConfig,
    scope: &Scope,
    index: Option<Result<Index, arbor_index::Error>>,
    emit: &mut dyn FnMut(LoadEvent<SessionInfo>),
) -> Option<Index> {
    load_listing_holding(config, scope, index, emit, READ_ROWS_HELD)
}

/// [`load_listing`], holding at most `held_at_most` rows read from
/// changed files while the index is brought up to date (see
/// [`READ_ROWS_HELD`]).
pub fn load_listing_holding(
    config: &StoreConfig,
    scope: &Scope,
    index: Option<Result<Index, arbor_index::Error>>,
    emit: &mut dyn FnMut(LoadEvent<SessionInfo>),
    held_at_most: usize,
) -> Option<Index> {
    let mut out = Out {
        emit,
        watching: false,
        started: Instant::now(),
    };
    let (files, mut problems) = list_session_files(config, scope);
    arbor_util::log::line("files listed");
    if let Some(index) = index {
        match index {
            Ok(mut index) => {
                index.set_folders_only(matches!(scope, Scope::Project(_)));
                // Nothing is sent before the refresh has gone well: else the
                // files are read, and would send their rows twice.
                let mut unchanged = Vec::new();
                let mut read = Vec::new();
                let mut let_go = false;
                let mut refreshed = refresh_holding(
                    &mut index,
                    &files,
                    &mut unchanged,
                    &mut read,
                    &mut let_go,
                    held_at_most,
                );
                // Past what is held (a first run), the rows read were let
                // go: the index has them now, unchanged.
                if let_go && matches!(&refreshed, Ok(s) if s.write_error.is_none()) {
                    let first = refreshed.map_or_else(|_| Vec::new(), |s| s.problems);
                    let_go = false;
                    (unchanged, read) = (Vec::new(), Vec::new());
                    refreshed = refresh_holding(
                        &mut index,
                        &files,
                        &mut unchanged,
                        &mut read,
                        &mut let_go,
                        usize::MAX,
                    );
                    if let Ok(stats) = &mut refreshed {
                        keep_first_problems(&mut stats.problems, first);
                    }
                }
                match refreshed {
                    Ok(stats) => match stats.write_error {
                        Some(e) if let_go => out.warn(LoadWarning::IndexNotUpdated(e)),
                        write_error => {
                            if let Some(d) = stats.deferred {
                                out.warn(LoadWarning::BuildingBehind(d));
                            }
                            if let Some(e) = write_error {
                                out.warn(LoadWarning::IndexNotUpdated(e));
                            }
                            out.send(LoadEvent::Rows(unchanged));
                            out.send(LoadEvent::Rows(read));
                            problems.extend(stats.problems);
                            out.send(LoadEvent::Finished { problems });
                            return Some(index);
                        }
                    },
                    Err(e) => out.warn(LoadWarning::IndexUnavailable(e)),
                }
            }
            Err(e) => out.warn(LoadWarning::IndexUnavailable(e)),
        }
    }
    read_files(&files, problems, (false, &[]), &Plain, &mut out);
    None
}

/// Adds a batch of rows to those a caller holds: the first (at 100,000
/// sessions the unchanged ones, ~45 MB of rows) moved rather than copied.
pub fn gather<T>(rows: &mut Vec<T>, batch: Vec<T>) {
    if rows.is_empty() {
        *rows = batch;
    } else {
        rows.extend(batch);
    }
}

/// A refresh of the index for `files`, the rows of unchanged files into
/// `unchanged` and those read into `read`, up to `held` of them: past it
/// they are let go (`let_go`; `read` is then empty).
fn refresh_holding(
    index: &mut Index,
    files: &[SessionFile],
    unchanged: &mut Vec<SessionInfo>,
    read: &mut Vec<SessionInfo>,
    let_go: &mut bool,
    held: usize,
) -> Result<arbor_index::RefreshStats, arbor_index::Error> {
    // Rows left to a build behind are not stored: they cannot be let go
    // and read back.
    let mut behind = Vec::new();
    let stats = index.refresh_split(
        files,
        &mut |rows| gather(unchanged, rows),
        &mut |rows| {
            if *let_go {
                return;
            }
            read.extend(rows);
            if read.len() > held {
                *read = Vec::new();
                *let_go = true;
            }
        },
        Some(&mut |rows| gather(&mut behind, rows)),
    );
    read.extend(behind);
    stats
}

/// `arbor list`'s plan: [`load_listing`], but the rows of unchanged files
/// stay as the index stores them ([`Listing`]), to be read in place. Only
/// warnings and progress go to `emit`. Returns the index when the rows
/// came through it (bodies are then searched there); without a usable
/// index, or when `text` (a query will search the bodies) and the index
/// could not be brought up to date, or when a query would wait for most of
/// the index's build ([`crate::app::bodies::answer_from_files`]: that build is then left
/// behind), every row is read from its file (without its text): the
/// query's body matches are then found in the same read
/// ([`Listing::hits`], [`crate::app::bodies`]).
pub fn load_listing_stored(
    config: &StoreConfig,
    scope: &Scope,
    index: Option<Result<Index, arbor_index::Error>>,
    query: Option<&Query>,
    emit: &mut dyn FnMut(LoadEvent<SessionInfo>),
) -> (Listing, Vec<ScanProblem>, Option<Index>) {
    load_listing_stored_holding(config, scope, index, query, emit, READ_ROWS_HELD)
}

/// [`load_listing_stored`], holding at most `held` rows read from changed
/// files (see [`READ_ROWS_HELD`]).
pub fn load_listing_stored_holding(
    config: &StoreConfig,
    scope: &Scope,
    index: Option<Result<Index, arbor_index::Error>>,
    query: Option<&Query>,
    emit: &mut dyn FnMut(LoadEvent<SessionInfo>),
    held: usize,
) -> (Listing, Vec<ScanProblem>, Option<Index>) {
    let text = query.is_some();
    let mut out = Out {
        emit,
        watching: false,
        started: Instant::now(),
    };
    let (files, mut problems) = list_session_files(config, scope);
    arbor_util::log::line("files listed");
    let mut listing = Listing::default();
    let mut index = index;
    let bodies = query.filter(|q| arbor_search::hits::looks_at_entries(q));
    // Said once the files are read: the build starts then, not beside them.
    let mut behind = None;
    if let (Some(_), Some(Ok(ix))) = (bodies, &index) {
        behind = crate::app::bodies::answer_from_files(ix, &files);
        if behind.is_some() {
            index = None;
        }
    }
    match index {
        Some(Ok(mut index)) => {
            index.set_folders_only(matches!(scope, Scope::Project(_)));
            if text {
                build_for_query(&mut index, &mut out);
            }
            let mut refreshed = refresh_listing(&mut index, &files, &mut listing, held);
            // Rows read past what is held were let go: the index has them
            // now, to be read in place like any unchanged row.
            if let Ok((first, true)) = &mut refreshed {
                if first.write_error.is_none() {
                    let first = std::mem::take(&mut first.problems);
                    listing = Listing::default();
                    // Files changed since are few: their rows are all held.
                    refreshed = refresh_listing(&mut index, &files, &mut listing, usize::MAX);
                    if let Ok((stats, _)) = &mut refreshed {
                        keep_first_problems(&mut stats.problems, first);
                    }
                }
            }
            // Held while this writes, not while it searches: others would
            // take a query for a build.
            index.let_go_build_lock();
            match refreshed {
                Ok((stats, let_go)) => match stats.write_error {
                    Some(e) if text || let_go => out.warn(match text {
                        true => LoadWarning::SearchingFiles(e),
                        false => LoadWarning::IndexNotUpdated(e),
                    }),
                    write_error => {
                        if let Some(e) = write_error {
                            out.warn(LoadWarning::IndexNotUpdated(e));
                        }
                        if let Some(d) = stats.deferred {
                            if let Some(query) = bodies {
                                // The rows read are those the index lacks.
                                listing.hits = Some(lacking_hits(&listing.read, query));
                            }
                            out.warn(LoadWarning::BuildingBehind(d));
                        }
                        problems.extend(stats.problems);
                        listing.files = files;
                        return (listing, problems, Some(index));
                    }
                },
                Err(e) => out.warn(LoadWarning::IndexUnavailable(e)),
            }
            listing = Listing::default();
        }
        Some(Err(e)) => out.warn(LoadWarning::IndexUnavailable(e)),
        None => {}
    }
    if let Some(query) = bodies {
        let (rows, read_problems, hits) = crate::app::bodies::rows_and_hits(&files, query);
        out.log(format_args!(
            "{} files read with the query, {} problems",
            files.len(),
            read_problems.len()
        ));
        for p in &read_problems {
            out.log(format_args!("skipped {}: {}", p.path.display(), p.reason));
        }
        problems.extend(read_problems);
        if let Some(d) = behind {
            out.warn(LoadWarning::BuildingBehind(d));
        }
        listing.read = rows;
        listing.hits = Some(hits);
        listing.files = files;
        return (listing, problems, None);
    }
    let mut finished = Vec::new();
    let read = &mut listing.read;
    let mut plain = Out {
        emit: &mut |ev| match ev {
            LoadEvent::Rows(r) => read.extend(r),
            LoadEvent::Finished { problems } => finished = problems,
            other => (out.emit)(other),
        },
        watching: false,
        started: out.started,
    };
    // Without their text (a query that looks at bodies read them above).
    read_files(&files, problems, (false, &[]), &Listed, &mut plain);
    listing.files = files;
    (listing, finished, None)
}

/// Who builds what the index lacks before a query is answered from it. A
/// query searches the bodies in the index once it holds most files (see
/// `bodies::answer_from_files`): what it lacks is indexed here, unless a
/// build runs behind: what that has not written yet is then read from the
/// files (the rows by the refresh, the bodies by [`lacking_hits`]), not
/// waited for.
fn build_for_query(index: &mut Index, out: &mut Out<'_, SessionInfo>) {
    if index.builds_behind() && arbor_index::behind::builder(index.path()).is_some() {
        return;
    }
    // The lock is taken whether or not a builder was seen: one starting
    // just after the look would else build the same files beside this one.
    index.build_here();
    if let Some(pid) = arbor_index::behind::builder(index.path()) {
        out.warn(LoadWarning::WaitingForBuild(pid));
    }
    if let Err(e) = index.take_build_lock(true) {
        out.log(format_args!("the build lock: {e}"));
    }
}

/// The body matches of `query` in the files of `rows` (those a refresh
/// read because the index lacks them: a build runs behind), as the index
/// would give them: with the index's answer for the others, the whole
/// answer (see `rank_listing`). A file that cannot be read has none.
fn lacking_hits(rows: &[SessionInfo], query: &Query) -> arbor_search::BodyHits {
    let files: Vec<SessionFile> = rows
        .iter()
        .map(|r| SessionFile {
            path: r.path.to_path_buf(),
            agent: r.agent,
        })
        .collect();
    let tiers = crate::app::bodies::tiers_from_files(&files, query, &|| false);
    let mut hits = arbor_search::BodyHits::default();
    for (row, t) in rows.iter().zip(tiers.into_iter().flatten()) {
        if let Some(t) = t.filter(|t| *t != arbor_search::Tiers::default()) {
            hits.insert_shared(row.path.as_os_arc().clone(), t);
        }
    }
    hits
}

/// At most this many rows a listing's refresh reads from changed files
/// are held: past it (a first run, a store copied in) they are let go and
/// read back from the index once it has them. A first run at 100,000
/// sessions held every session's whole row while it built the index: ~250
/// MB of its ~480 MB peak.
pub const READ_ROWS_HELD: usize = 4096;

/// Adds to a second refresh's `problems` those of the first it did not
/// find again: a file that could not be read is said once.
fn keep_first_problems(problems: &mut Vec<ScanProblem>, first: Vec<ScanProblem>) {
    let again: HashSet<&std::path::Path> = problems.iter().map(|p| p.path.as_path()).collect();
    let first: Vec<ScanProblem> = first
        .into_iter()
        .filter(|p| !again.contains(p.path.as_path()))
        .collect();
    problems.extend(first);
}

/// A refresh of the index for `files` into `listing`: the rows of files it
/// finds unchanged kept as stored, those it reads held up to `held` (see
/// [`READ_ROWS_HELD`]). Also says whether it let rows go (then `listing`
/// lacks them).
fn refresh_listing(
    index: &mut Index,
    files: &[SessionFile],
    listing: &mut Listing,
    held: usize,
) -> Result<(arbor_index::RefreshStats, bool), arbor_index::Error> {
    let read = &mut listing.read;
    let mut let_go = false;
    // As in `refresh_holding`.
    let mut behind = Vec::new();
    let stats = index.refresh_stored(
        files,
        &mut listing.unchanged,
        &mut |rows| {
            if let_go {
                return;
            }
            read.extend(rows);
            if read.len() > held {
                *read = Vec::new();
                let_go = true;
            }
        },
        Some(&mut |rows| gather(&mut behind, rows)),
    )?;
    read.extend(behind);
    Ok((stats, let_go))
}
