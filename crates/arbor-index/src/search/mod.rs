//! Answering the picker's body terms from the index.
//!
//! Per term (see `arbor_search` for the language):
//! * a word of 3+ characters matches a body when it is a substring of it:
//!   the terms containing it are found in each segment's dictionary with one
//!   `memmem` scan, and their posting lists give the sessions, exactly (no
//!   text is read; only the matching posting lists are read from disk);
//! * a phrase without spaces is the same; a phrase `w1 w2 … wn` needs a term
//!   ending in `w1`, the terms `w2 … wn-1`, and a term starting with `wn`:
//!   the sessions having all of them are candidates, and each candidate's
//!   stored text is then searched for the phrase (so the answer is exact);
//! * `re:` runs the regex over the stored text of the candidate sessions:
//!   those of `within` when given, narrowed by the regex's literal prefixes
//!   when it has any (`re:fail\w+` only reads sessions with a word containing
//!   `fail`). A regex without a usable literal reads the text of every
//!   candidate: its cost grows with the store (the text is about 7 % of the
//!   session files' bytes).
//!
//! The partial last line of a file being written (rare) is not in the word
//! index; its text is kept beside the row and searched directly.

mod answer;
mod cache;
mod idset;
mod narrow;
mod postings;
mod text;

use std::sync::Arc;

use rusqlite::Connection;

use crate::db::Keys;
use crate::refresh::TEXT_SEGMENT;
use crate::Error;
use arbor_search::{Query, Term};

pub use arbor_search::{BodyHits, PathsById};

use answer::answer;
use cache::{mark_damaged, KeyBytes};
pub use cache::{Folders, SearchCache};

/// Loads what searches read (the dictionaries, where texts lie, the text
/// file) ahead of the first query.
pub fn warm(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    slot: &mut Option<SearchCache>,
    folders: Folders,
) -> Result<(), Error> {
    for may_retry in [true, false] {
        let snapshot = conn.unchecked_transaction()?;
        let c = SearchCache::current(&snapshot, db_path, slot, folders)?;
        // The words' dictionaries (the pairs' are loaded when a phrase or
        // a regex spanning words first asks).
        let kinds = std::iter::once(TEXT_SEGMENT)
            .chain(arbor_session::searchable::Part::ALL.map(|p| i64::from(p.code())));
        match kinds
            .into_iter()
            .try_for_each(|kind| c.segs(&snapshot, kind).map(|_| ()))
        {
            Err(Error::Changed) if may_retry => {
                *slot = None;
                continue;
            }
            other => other?,
        }
        if c.load_stored(&snapshot, db_path, map_text)? && may_retry {
            *slot = None;
            continue;
        }
        break;
    }
    Ok(())
}

/// Whether answering `t` reads stored text (else the word index answers).
fn reads_text(t: &Term) -> bool {
    match t {
        Term::Phrase(p) => p.contains(' ') || p.len() < 3,
        Term::Regex(_) => true,
        Term::Word { .. } => false,
    }
}

/// Which of `paths` (their places in the iteration) the index has no
/// text for (not indexed, or not a session to it): a body search cannot
/// have looked at them.
pub fn unindexed(
    conn: &Connection,
    db_path: &std::path::Path,
    cache: &mut Option<SearchCache>,
    folders: Folders,
    paths: &mut dyn Iterator<Item = (u32, &std::path::Path)>,
) -> Result<Vec<u32>, Error> {
    let cache = SearchCache::current(conn, db_path, cache, folders)?;
    let files = &cache.files;
    let set = cache
        .key_set
        .get_or_insert_with(|| files.keys.values().cloned().map(KeyBytes).collect());
    let mut keys = Keys::new();
    Ok(paths
        .filter(|(_, p)| !set.contains(keys.key(p).as_ref()))
        .map(|(i, _)| i)
        .collect())
}

/// Every session's path as the answers name it, handed to `f` to look at
/// or to replace by the caller's own allocation of the same path: the
/// picker's rows hold every path already, and a copy here was ~17 MB at
/// 100,000 sessions. A word's answer names nearly every session, and
/// mapping their paths to rows then was ~40 ms of the first such key at
/// 100,000 sessions, so the caller also learns them here.
pub fn share_paths(
    conn: &Connection,
    db_path: &std::path::Path,
    cache: &mut Option<SearchCache>,
    folders: Folders,
    f: &mut dyn FnMut(&mut Arc<std::ffi::OsStr>),
) -> Result<Arc<PathsById>, Error> {
    let cache = SearchCache::current(conn, db_path, cache, folders)?;
    // Shared with answers given before: those keep the table they name.
    for p in Arc::make_mut(&mut cache.files.keys).values_mut() {
        let before = Arc::clone(p);
        f(p);
        if p.as_encoded_bytes() != before.as_encoded_bytes() {
            // Another path would name another file: keep the index's.
            *p = before;
        }
    }
    // Its keys were clones of the paths replaced; made again when asked.
    cache.key_set = None;
    Ok(Arc::clone(&cache.files.keys))
}

/// Whether the answer to every body term of `query` is remembered in
/// `slot` (the next search of it reads nothing; the index may have
/// changed since, which that search then finds).
pub fn remembers(slot: &Option<SearchCache>, query: &Query) -> bool {
    slot.as_ref().is_some_and(|cache| {
        query
            .terms
            .iter()
            .take(32)
            .filter(|t| t.searches_body())
            .all(|t| {
                cache
                    .memo
                    .get(&format!("{}\n{}", query.parts.bits(), t.key()))
                    .is_some()
            })
    })
}

/// Asked between sessions while stored text is read: true when the answer
/// is no longer wanted (a newer query was typed).
pub type Cancel<'a> = &'a (dyn Fn() -> bool + Sync);

/// The sessions a search answers for, when not all of them: by path (the
/// rows on screen).
#[derive(Clone, Copy)]
pub enum Within<'a> {
    Paths(&'a [&'a std::path::Path]),
}

/// `map_text`: the caller will search many times (see [`Text::Mapped`]).
#[allow(clippy::too_many_arguments)]
pub fn search(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    slot: &mut Option<SearchCache>,
    folders: Folders,
    query: &Query,
    within: Option<Within>,
    cancel: Cancel,
) -> Result<Option<BodyHits>, Error> {
    let body_terms: Vec<(usize, &Term)> = query
        .terms
        .iter()
        .enumerate()
        .filter(|(i, t)| *i < 32 && t.searches_body())
        .collect();
    if body_terms.is_empty() || query.error().is_some() {
        return Ok(None);
    }
    arbor_util::log::line("search start");
    let needs_text = query.parts.covers_text() && body_terms.iter().any(|(_, t)| reads_text(t));
    let mut may_retry = true;
    loop {
        // One snapshot for the whole answer: the cache's parts (loaded
        // now or in an earlier snapshot of the same `data_version`), the
        // posting lists and the text file agree with each other, whatever
        // another process commits meanwhile (a refresh giving files new
        // ids, a merge of segments, a compaction).
        let snapshot = conn.unchecked_transaction()?;
        let cache = SearchCache::current(&snapshot, db_path, slot, folders)?;
        cache.remember = map_text;
        if needs_text && cache.load_stored(&snapshot, db_path, map_text)? && may_retry {
            *slot = None;
            may_retry = false;
            continue;
        }
        let result = answer(
            &snapshot,
            db_path,
            map_text,
            &body_terms,
            query.parts,
            cache,
            within,
            cancel,
        );
        let damaged = cache
            .stored
            .as_mut()
            .map(|s| std::mem::take(s.damaged.get_mut().unwrap_or_else(|e| e.into_inner())))
            .unwrap_or_default();
        drop(snapshot);
        // What the lookups read of the dictionaries' maps leaves the
        // resident set (a word's first letters read nearly every term:
        // +390 MB at 100,000 sessions); the next key's lookups map again
        // the pages they read.
        for segs in cache.segs.values() {
            segs.iter().for_each(|(_, s)| s.release());
        }
        if matches!(result, Err(Error::Changed)) && may_retry {
            *slot = None;
            may_retry = false;
            continue;
        }
        if !damaged.is_empty() {
            mark_damaged(conn, &damaged);
            // This connection's own write: the cache is reloaded.
            *slot = None;
        }
        return result;
    }
}
