//! `arbor list`, and the listing `search`, `labels` and `stats` share: the
//! rows of a scope through the index, ranked by a query.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use rayon::prelude::*;

use super::json::{escape_c1, push_host};
use super::project_cwd;
use crate::app::load::{load_listing_stored, LoadEvent};
use crate::cli::GlobalOpts;
use crate::term::{path as shown, sanitize_line as clean};
use arbor_index::stored::{ListRow, Listing, RowKey};
use arbor_index::Index;
use arbor_search::hits::file_hits;
use arbor_search::{rank_order_visiting, rank_with_index, Query};
use arbor_store::listing::{read_rows, sort_recent};
use arbor_store::{Scope, SessionFile, StoreConfig};

pub(super) fn list(
    config: &StoreConfig,
    g: &GlobalOpts,
    a: &crate::cli::ListArgs,
    out: &mut impl Write,
) -> Result<()> {
    let scope = if a.all {
        Scope::All
    } else {
        Scope::Project(project_cwd(a.cwd.as_deref())?)
    };
    let query = match &a.query {
        Some(q) => {
            let query = Query::parse(q);
            if let Some(err) = query.error() {
                bail!("invalid query: {err}");
            }
            Some(query)
        }
        None => None,
    };
    arbor_util::log::line("start");
    let index = crate::cli::behind::open_index(g);
    arbor_util::log::line("index opened");
    let Listed {
        listing,
        keys,
        mut problems,
        ..
    } = listed_rows(config, g, &scope, index, query.as_ref(), a.include_internal);
    let now = chrono::Utc::now().timestamp_millis();
    let host_w = crate::cli::columns::host_width(config);
    let fit = ListFit::new(crate::cli::columns::output_width(), host_w);
    let line = |r: ListRow, buf: &mut Vec<u8>| {
        let host = arbor_util::hosts::host_of(r.path());
        if a.json {
            let start = buf.len();
            r.write_json_line(buf);
            push_host(buf, start, host.as_deref());
            return;
        }
        let title = arbor_session::render::sanitize_line(r.title());
        // Cells, not characters: a wide title must not push the columns.
        let title = match fit.fitted {
            true => crate::ui::text::truncate(&title, fit.title),
            false => crate::ui::text::clip(&title, fit.title),
        };
        let id = clean(r.id());
        let text = format!(
            "{}  {:>5}  {:>4}  {:<agent_w$}  {}{}\n",
            crate::cli::report::pad(&title, fit.title),
            r.message_count(),
            arbor_util::age(now, r.modified_ms()),
            crate::cli::columns::agent_cell(r.agent()),
            crate::cli::columns::host_cell(host.as_deref(), host_w),
            crate::ui::text::clip(&id, fit.id),
            agent_w = crate::cli::columns::AGENT_W,
        );
        buf.extend_from_slice(text.as_bytes());
    };
    // Formatted on all cores and written a few thousand rows at a time:
    // the whole output at once (88 MB of JSON at 100,000 sessions) cost
    // more in fresh pages than the formatting itself.
    for batch in keys.chunks(8192) {
        let chunks: Vec<Vec<u8>> = batch
            .par_chunks(512)
            .map(|c| {
                let mut buf = Vec::with_capacity(c.len() * if a.json { 700 } else { 130 });
                for r in c.iter().filter_map(|&k| listing.row(k)) {
                    line(r, &mut buf);
                }
                match a.json {
                    true => escape_c1(buf),
                    false => buf,
                }
            })
            .collect();
        for c in chunks {
            out.write_all(&c)?;
        }
    }
    arbor_util::log::line("rows written");
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    for p in problems {
        eprintln!(
            "arbor: skipped {}: {}",
            shown(&p.path),
            clean(skip_reason(&p))
        );
    }
    // Nothing here is not an error (the status stays 0), but the way to
    // the other folders is said.
    if keys.is_empty() {
        match &query {
            None => no_sessions_hint(&scope, "lists every folder's"),
            Some(_) => {
                if let Scope::Project(cwd) = &scope {
                    let cwd = shown(Path::new(cwd));
                    eprintln!("arbor: no session in {cwd} matches; --all searches every folder");
                }
            }
        }
    }
    // The process ends now: skip freeing thousands of rows one by one.
    std::mem::forget(listing);
    Ok(())
}

/// The widths of `arbor list`'s title and id columns: fitted to a known
/// width (the title takes the slack, cut with an ellipsis; ids shortened
/// to a prefix `arbor show` takes when the title would be cramped), else
/// the fixed 70-cell title and whole ids scripts have always read.
struct ListFit {
    fitted: bool,
    title: usize,
    id: usize,
}

impl ListFit {
    /// A UUID, the ids of every agent's new sessions.
    const FULL_ID: usize = 36;
    const SHORT_ID: usize = 8;
    /// Narrower than this, the ids are shortened to give the title room.
    const ROOMY_TITLE: usize = 40;

    /// `host_w`: the host column's cells, its separator included (0:
    /// no column).
    fn new(width: Option<usize>, host_w: usize) -> ListFit {
        let Some(w) = width else {
            return ListFit {
                fitted: false,
                title: 70,
                id: usize::MAX,
            };
        };
        // Messages, age and agent, and the four separators.
        let others = 5 + 4 + crate::cli::columns::AGENT_W + 4 * 2 + host_w;
        let id = if w.saturating_sub(others + Self::FULL_ID) >= Self::ROOMY_TITLE {
            Self::FULL_ID
        } else {
            Self::SHORT_ID
        };
        ListFit {
            fitted: true,
            title: crate::cli::columns::slack(w, others + id, 10),
            id: if id == Self::FULL_ID { usize::MAX } else { id },
        }
    }
}

/// Why a file was skipped, without the path its read error repeats
/// (`PATH is not a session file: …` → `not a session file: …`).
fn skip_reason(p: &arbor_store::ScanProblem) -> &str {
    let path = p.path.to_string_lossy();
    match p.reason.strip_prefix(path.as_ref()) {
        Some(rest) => {
            let rest = rest.trim_start_matches(':').trim_start();
            rest.strip_prefix("is ").unwrap_or(rest)
        }
        None => &p.reason,
    }
}

/// A command that found no session in the current folder says, on
/// stderr, that `--all` reaches the others (`what` it would do there);
/// nothing for `--all`.
pub(in crate::cli) fn no_sessions_hint(scope: &Scope, what: &str) {
    if let Scope::Project(cwd) = scope {
        eprintln!(
            "arbor: no sessions in {}; --all {what}",
            shown(Path::new(cwd))
        );
    }
}

/// What [`listed_rows`] found.
pub(in crate::cli) struct Listed {
    pub listing: Listing,
    /// The rows to show, in order.
    pub keys: Vec<RowKey>,
    /// How many rows were in scope before a query chose among them.
    pub in_scope: usize,
    /// The files that could not be listed.
    pub problems: Vec<arbor_store::ScanProblem>,
}

/// The rows of `scope` (internal ones when `include_internal`), the most
/// recent first or ranked by `query`, through `index` when given: the
/// stored rows are read (and ranked) from where they lie. Warnings are
/// said on stderr.
pub(in crate::cli) fn listed_rows(
    config: &StoreConfig,
    g: &GlobalOpts,
    scope: &Scope,
    index: Option<Result<Index, arbor_index::Error>>,
    query: Option<&Query>,
    include_internal: bool,
) -> Listed {
    let mut warn = |ev| {
        if let LoadEvent::Warning(w) = ev {
            crate::cli::behind::warn(g, &w)
        }
    };
    let (listing, problems, index) = load_listing_stored(config, scope, index, query, &mut warn);
    arbor_util::log::line("rows read");
    let mut keys = listing.keys();
    keys.retain(|k| {
        (include_internal || !k.internal)
            && match scope {
                Scope::All => true,
                Scope::Project(cwd) => listing.row(*k).is_some_and(|r| r.cwd() == cwd),
            }
    });
    // As `sort_recent`: the newest first, ties by path.
    keys.par_sort_unstable_by(|a, b| {
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| listing.path(*a).cmp(listing.path(*b)))
    });
    arbor_util::log::line("rows sorted");
    let in_scope = keys.len();
    let (listing, keys) = match query {
        Some(query) => rank_listing(
            query,
            listing,
            keys,
            index.as_ref(),
            matches!(scope, Scope::All),
        ),
        None => (listing, keys),
    };
    arbor_util::log::line("ranked");
    Listed {
        listing,
        keys,
        in_scope,
        problems,
    }
}

/// `keys` of `listing` ranked by `query` (bodies searched in `index` when
/// the rows came through it, else in the files). When the index cannot be
/// searched, the files are read whole and ranked instead: a listing of
/// those rows. `whole`: the listing is the whole store's (internal
/// sessions too), which the index's search is told.
fn rank_listing(
    query: &Query,
    mut listing: Listing,
    keys: Vec<RowKey>,
    index: Option<&Index>,
    whole: bool,
) -> (Listing, Vec<RowKey>) {
    let found = listing.hits.take();
    let paths = || keys.iter().map(|&k| listing.path(k));
    let hits = match index {
        // A build runs behind: the rows read from their files are those the
        // index lacks (or holds an older version of), their matches found
        // in their files; the index answers for the others.
        Some(index) if found.is_some() => {
            let lacking: std::collections::HashSet<&std::path::Path> =
                listing.read.iter().map(|r| r.path.as_path()).collect();
            let held: Vec<&std::path::Path> = listing
                .keys()
                .into_iter()
                .map(|k| listing.path(k))
                .filter(|p| !lacking.contains(p))
                .collect();
            index.search_within(query, &held).map(|hits| {
                let mut hits = hits.unwrap_or_default();
                hits.add_all(found);
                Some(hits)
            })
        }
        // Told every session listed, the index reads them all when they are
        // as many as it has, without matching each path to its own.
        Some(index) if whole => index.search_within(
            query,
            &listing
                .keys()
                .into_iter()
                .map(|k| listing.path(k))
                .collect::<Vec<_>>(),
        ),
        Some(index) => index.search_within(query, &paths().collect::<Vec<_>>()),
        // Found as the rows were read from the files (none when the query
        // looks at no bodies).
        None => Ok(found),
    };
    arbor_util::log::line("searched");
    match hits {
        Ok(hits) => {
            // Without words, nothing is fuzzy matched.
            let words = query.terms.iter().any(|t| t.word().is_some());
            let row = |i: usize| {
                let k = keys[i];
                let row = listing.row(k)?;
                let mut doc = if words {
                    row.search_doc()
                } else {
                    row.search_doc_short()
                };
                // A stored row's facts are made without its path.
                doc.facts.host = arbor_util::hosts::host_of(listing.path(k));
                Some((doc, listing.path(k)))
            };
            let mut visit: Vec<usize> = (0..keys.len()).collect();
            visit.sort_unstable_by_key(|&i| listing.placement(keys[i]));
            let order = rank_order_visiting(query, keys.len(), Some(&visit), row, hits.as_ref());
            let keys = order.into_iter().map(|i| keys[i]).collect();
            (listing, keys)
        }
        Err(e) => {
            let files: Vec<SessionFile> = keys
                .iter()
                .filter_map(|&k| listing.row(k))
                .map(|r| SessionFile {
                    path: r.path().to_path_buf(),
                    agent: r.agent(),
                })
                .collect();
            let listing = Listing::of_rows(rank_by_files(query, &files, &e));
            let keys = listing.keys();
            (listing, keys)
        }
    }
}

/// The rows of `files` read whole and ranked by `query` against their
/// text, after the index failed (`e`, said).
fn rank_by_files(
    query: &Query,
    files: &[SessionFile],
    e: &arbor_index::Error,
) -> Vec<arbor_session::SessionInfo> {
    eprintln!(
        "arbor: index search failed ({}); reading the files",
        clean(&e.to_string())
    );
    let (mut full, _) = read_rows(files);
    sort_recent(&mut full);
    let paths: Vec<PathBuf> = full.iter().map(|r| r.path.to_path_buf()).collect();
    rank_with_index(query, full, file_hits(query, &paths).as_ref())
}
