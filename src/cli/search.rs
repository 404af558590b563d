//! `arbor search QUERY`: the entries that match, best first — the sessions
//! in the picker's order (the same query language and ranking), and in each
//! session its matching entries ([`arbor_search::hits::entry_hits`]), the
//! best-ranked parts first, then in file order. Exit status 1 when nothing
//! matched, like grep.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde::Serialize;

use super::commands::{listed_rows, project_cwd};
use super::{GlobalOpts, SearchArgs};
use crate::term::sanitize_line as clean;
use arbor_search::hits::{file_entry_hits_until, EntryHit};
use arbor_search::Query;
use arbor_store::{Scope, StoreConfig};

/// Nothing matched: the command's answer, not a failure to report
/// (the binary exits with status 1 and prints nothing).
#[derive(Debug, thiserror::Error)]
#[error("no entry matched")]
pub struct NoMatch;

/// One line of `arbor search --json`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonHit<'a> {
    path: String,
    session_id: &'a str,
    entry_id: &'a str,
    role: &'a str,
    timestamp: Option<&'a str>,
    snippet: &'a str,
    /// The part of the entry the snippet is from (`user`, `toolOutput`, …).
    part: &'static str,
    /// The match's byte range in `snippet`.
    #[serde(rename = "match")]
    highlight: [usize; 2],
    /// The remote the session is on; `null`: this machine.
    host: Option<&'a str>,
}

pub fn search(
    config: &StoreConfig,
    g: &GlobalOpts,
    a: &SearchArgs,
    out: &mut impl Write,
) -> Result<()> {
    let raw = a.query.join(" ");
    let query = Query::parse(&raw);
    if let Some(err) = query.error() {
        bail!("invalid query: {err}");
    }
    // Filters choose sessions, not entries: with nothing to look for in
    // them there is no entry to show, and a silent status 1 would read as
    // "nothing matched".
    if query.terms.is_empty() {
        bail!(
            "{:?} has no words to find entries by (filters and in: choose where to look); \
             add words, or list the sessions it chooses with: arbor list --query {:?}",
            raw,
            raw
        );
    }
    let ranked = ranked_sessions(config, g, a, &query)?;
    let cwd = std::env::current_dir()?;
    let mut written = Written {
        shown: 0,
        limit: if a.limit == 0 { usize::MAX } else { a.limit },
        json: a.json,
        plain: Vec::new(),
    };
    write_entries(&ranked, &query, &cwd, &mut written, out)?;
    arbor_util::log::line("entries written");
    if !a.json {
        write_plain(&written.plain, out)?;
    }
    if written.shown == 0 {
        return Err(NoMatch.into());
    }
    Ok(())
}

/// What the entries' search needs of each ranked session: its path and id.
type Ranked = (PathBuf, String);

/// The sessions of the scope `a` asks for that `query` matches, in the
/// picker's order.
fn ranked_sessions(
    config: &StoreConfig,
    g: &GlobalOpts,
    a: &SearchArgs,
    query: &Query,
) -> Result<Vec<Ranked>> {
    let scope = if a.all {
        Scope::All
    } else {
        Scope::Project(project_cwd(a.cwd.as_deref())?)
    };
    let index = super::behind::open_index(g);
    let listed = listed_rows(config, g, &scope, index, Some(query), false);
    let (listing, keys) = (listed.listing, listed.keys);
    if listed.in_scope == 0 {
        // Still status 1, but not silent: the others are a flag away.
        super::commands::no_sessions_hint(&scope, "searches every folder");
    }
    Ok(keys
        .iter()
        .filter_map(|&k| listing.row(k))
        .map(|r| (r.path().to_path_buf(), r.id().to_owned()))
        .collect())
}

/// The best sessions' entries, read on all cores in rank order and
/// written in that order; once the limit is reached no further session
/// is begun (at most one per core is read in vain).
fn write_entries(
    ranked: &[Ranked],
    query: &Query,
    cwd: &Path,
    written: &mut Written,
    out: &mut impl Write,
) -> Result<()> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let stopped = || stop.load(std::sync::atomic::Ordering::Relaxed);
    let hits_of = |row: &Ranked| {
        // A session that changed or went away since is skipped; one read
        // when the limit was reached is left off.
        let mut hits = file_entry_hits_until(&row.0, query, &stopped).ok()?;
        // Best-ranked parts first, then file order (a stable sort).
        hits.sort_by_key(|h| std::cmp::Reverse(h.score));
        Some(hits)
    };
    let taken = std::sync::atomic::AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, ranked.len().max(1));
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Option<Vec<EntryHit>>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx = tx.clone();
            let (taken, stop, hits_of) = (&taken, &stop, &hits_of);
            scope.spawn(move || {
                use std::sync::atomic::Ordering::Relaxed;
                while !stop.load(Relaxed) {
                    let i = taken.fetch_add(1, Relaxed);
                    let Some(row) = ranked.get(i) else { break };
                    if tx.send((i, hits_of(row))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        // However the writing ends (the limit, a closed pipe), the sessions
        // being read are left off.
        let _stop_readers = StopOnDrop(&stop);
        let mut waiting: std::collections::BTreeMap<usize, Option<Vec<EntryHit>>> =
            std::collections::BTreeMap::new();
        let mut next = 0;
        for (i, hits) in rx {
            waiting.insert(i, hits);
            while let Some(hits) = waiting.remove(&next) {
                let row = &ranked[next];
                next += 1;
                let Some(hits) = hits else { continue };
                if written.session(row, hits, cwd, out)? {
                    return Ok(());
                }
            }
        }
        Ok(())
    })
}

/// The entries written so far, up to the limit: with `--json` each as it
/// comes, else kept to be written in aligned columns at the end.
struct Written {
    shown: usize,
    limit: usize,
    json: bool,
    /// Per entry: its session's id and path.
    plain: Vec<(String, String, EntryHit)>,
}

impl Written {
    /// One session's hits, up to the limit; `true` once it is reached.
    fn session(
        &mut self,
        row: &Ranked,
        hits: Vec<EntryHit>,
        cwd: &Path,
        out: &mut impl Write,
    ) -> Result<bool> {
        let path = std::path::absolute(cwd.join(&row.0))
            .unwrap_or_else(|_| row.0.clone())
            .to_string_lossy()
            .into_owned();
        let host = arbor_util::hosts::host_of(&row.0);
        for h in hits {
            if self.shown >= self.limit {
                break;
            }
            self.shown += 1;
            if self.json {
                let line = JsonHit {
                    path: path.clone(),
                    session_id: &row.1,
                    entry_id: &h.entry_id,
                    role: &h.role,
                    timestamp: h.timestamp.as_deref(),
                    snippet: &h.snippet,
                    part: h.part.name(),
                    highlight: [h.highlight.start, h.highlight.end],
                    host: host.as_deref(),
                };
                serde_json::to_writer(&mut *out, &line)?;
                out.write_all(b"\n")?;
            } else {
                self.plain.push((row.1.clone(), path.clone(), h));
            }
        }
        Ok(self.shown >= self.limit)
    }
}

/// The entries as text: time, session id, entry id, role and snippet.
fn write_plain(plain: &[(String, String, EntryHit)], out: &mut impl Write) -> Result<()> {
    let role_w = plain.iter().map(|p| p.2.role.len()).max().unwrap_or(0);
    let id_w = plain.iter().map(|p| p.2.entry_id.len()).max().unwrap_or(0);
    for (sid, _, h) in plain {
        // `2026-01-01T12:00:00.000Z` → `2026-01-01 12:00`.
        let when = h
            .timestamp
            .as_deref()
            .filter(|t| t.len() >= 16 && t.is_char_boundary(16))
            .map_or_else(|| " ".repeat(16), |t| t[..16].replace('T', " "));
        writeln!(
            out,
            "{}  {}  {:<id_w$}  {:<role_w$}  {}",
            clean(&when),
            clean(sid),
            clean(&h.entry_id),
            clean(&h.role),
            clean(&h.snippet),
        )?;
    }
    Ok(())
}

/// Sets its flag when dropped.
struct StopOnDrop<'a>(&'a std::sync::atomic::AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}
