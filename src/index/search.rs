//! Answering the picker's body terms from the index.
//!
//! Per term (see `crate::search` for the language):
//! * a word of 3+ characters matches a body when it is a substring of it:
//!   the terms containing it are found in each segment's dictionary with one
//!   `memmem` scan, and their posting lists give the sessions, exactly (no
//!   text is read);
//! * a phrase without spaces is the same; a phrase `w1 w2 … wn` needs a term
//!   ending in `w1`, the terms `w2 … wn-1`, and a term starting with `wn`:
//!   the sessions having all of them are candidates, and each candidate's
//!   stored text is then searched for the phrase (so the answer is exact);
//! * `re:` reads the stored text of every session (or of `within`) and runs
//!   the regex over it: its cost grows with the text of the store, about 7 %
//!   of its bytes (user and assistant text only).
//!
//! The partial last line of a file being written (rare) is not in the word
//! index; its text is kept beside the row and searched directly.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use memchr::memmem;
use rusqlite::Connection;

use super::db::{absolute, key_path, read_at};
use super::terms::{Match, Segment};
use super::IndexError;
use crate::search::{Query, Term};

/// Per session path, a bit per query term (bit `i` = term `i`, for the
/// first 32 terms) that matched the session's message bodies.
pub type BodyHits = HashMap<PathBuf, u32>;

struct Files {
    paths: HashMap<u32, PathBuf>,
    /// Files whose partial last line has text (not in the word index).
    tails: Vec<(u32, String)>,
}

fn load_files(conn: &Connection) -> rusqlite::Result<Files> {
    let mut st = conn.prepare("SELECT id, path, tail_text FROM files WHERE problem IS NULL")?;
    let mut rows = st.query([])?;
    let mut paths = HashMap::new();
    let mut tails = Vec::new();
    while let Some(r) = rows.next()? {
        let Ok(id) = u32::try_from(r.get::<_, i64>(0)?) else {
            continue;
        };
        let key: Vec<u8> = r.get(1)?;
        paths.insert(id, key_path(&key));
        if let Some(t) = r.get::<_, Option<String>>(2)? {
            tails.push((id, t));
        }
    }
    Ok(Files { paths, tails })
}

fn load_segments(conn: &Connection) -> Result<Vec<Segment>, IndexError> {
    let mut st = conn.prepare("SELECT terms, starts, postings FROM segments")?;
    let mut rows = st.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let terms: Vec<u8> = r.get(0)?;
        let starts: Vec<u8> = r.get(1)?;
        let postings: Vec<u8> = r.get(2)?;
        match Segment::from_blobs(terms, &starts, postings) {
            Some(s) => out.push(s),
            None => return Err(IndexError::Corrupt(PathBuf::new())),
        }
    }
    Ok(out)
}

/// Sessions with a term matching `needle` the way `how` says.
fn lookup(segs: &[Segment], needle: &str, how: Match) -> HashSet<u32> {
    let mut out = HashSet::new();
    for s in segs {
        s.find(needle.as_bytes(), how, &mut |t| {
            s.postings(t, &mut |id| {
                out.insert(id);
            })
        });
    }
    out
}

/// The body text of a file: its chunks joined by a space, then the partial
/// last line's text.
fn body_text(
    st: &mut rusqlite::Statement,
    text_file: Option<&std::fs::File>,
    id: u32,
    tail: Option<&str>,
) -> Result<String, IndexError> {
    let mut text = String::new();
    let mut rows = st.query([id as i64])?;
    while let Some(r) = rows.next()? {
        let (off, len): (i64, i64) = (r.get(0)?, r.get(1)?);
        let chunk = text_file
            .and_then(|f| read_at(f, off as u64, len as usize).ok())
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| IndexError::Corrupt(PathBuf::new()))?;
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&chunk);
    }
    if let Some(t) = tail {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(t);
    }
    Ok(text)
}

enum Check<'q> {
    Phrase(Box<memmem::Finder<'q>>),
    Regex(&'q regex::Regex),
}

pub fn search(
    conn: &Connection,
    text_path: &std::path::Path,
    query: &Query,
    within: Option<&HashSet<PathBuf>>,
) -> Result<Option<BodyHits>, IndexError> {
    let body_terms: Vec<(usize, &Term)> = query
        .terms
        .iter()
        .enumerate()
        .filter(|(i, t)| *i < 32 && t.searches_body())
        .collect();
    if body_terms.is_empty() || query.error().is_some() {
        return Ok(None);
    }
    let files = load_files(conn)?;
    // The index knows absolute paths.
    let within: Option<HashSet<PathBuf>> =
        within.map(|w| w.iter().map(|p| absolute(p).into_owned()).collect());
    let within = within.as_ref();
    let allowed = |id: &u32| -> bool {
        match (files.paths.get(id), within) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(p), Some(w)) => w.contains(p),
        }
    };
    let needs_words = body_terms
        .iter()
        .any(|(_, t)| matches!(t, Term::Word { .. } | Term::Phrase(_)));
    let segs = if needs_words {
        load_segments(conn)?
    } else {
        Vec::new()
    };
    let tail_of: HashMap<u32, &str> = files
        .tails
        .iter()
        .map(|(id, t)| (*id, t.as_str()))
        .collect();

    let mut bits: HashMap<u32, u32> = HashMap::new();
    // Terms answered by reading text: (bit, check, candidates or all).
    let mut checks: Vec<(u32, Check, Option<HashSet<u32>>)> = Vec::new();
    for (i, t) in &body_terms {
        let bit = 1u32 << i;
        match t {
            Term::Word { lower, .. } => {
                let mut hit = lookup(&segs, lower, Match::Contains);
                for (id, tail) in &files.tails {
                    if memmem::find(tail.as_bytes(), lower.as_bytes()).is_some() {
                        hit.insert(*id);
                    }
                }
                for id in hit.into_iter().filter(allowed) {
                    *bits.entry(id).or_default() |= bit;
                }
            }
            Term::Phrase(p) if !p.contains(' ') => {
                let mut hit = lookup(&segs, p, Match::Contains);
                for (id, tail) in &files.tails {
                    if memmem::find(tail.as_bytes(), p.as_bytes()).is_some() {
                        hit.insert(*id);
                    }
                }
                for id in hit.into_iter().filter(allowed) {
                    *bits.entry(id).or_default() |= bit;
                }
            }
            Term::Phrase(p) => {
                let words: Vec<&str> = p.split(' ').collect();
                let n = words.len();
                let mut cands = lookup(&segs, words[0], Match::EndsWith);
                for (k, w) in words.iter().enumerate().skip(1) {
                    if cands.is_empty() {
                        break;
                    }
                    let how = if k == n - 1 {
                        Match::StartsWith
                    } else {
                        Match::Exact
                    };
                    let next = lookup(&segs, w, how);
                    cands.retain(|id| next.contains(id));
                }
                // A phrase may reach into the unindexed partial last line.
                cands.extend(files.tails.iter().map(|(id, _)| *id));
                cands.retain(allowed);
                checks.push((
                    bit,
                    Check::Phrase(Box::new(memmem::Finder::new(p.as_bytes()))),
                    Some(cands),
                ));
            }
            Term::Regex(r) => checks.push((bit, Check::Regex(r), None)),
        }
    }

    if !checks.is_empty() {
        let mut to_read: Vec<u32> = if checks.iter().any(|c| c.2.is_none()) {
            files.paths.keys().copied().filter(allowed).collect()
        } else {
            let mut s: HashSet<u32> = HashSet::new();
            for c in &checks {
                s.extend(c.2.iter().flatten());
            }
            s.into_iter().collect()
        };
        to_read.sort_unstable();
        let mut st = conn.prepare("SELECT off, len FROM chunks WHERE file_id=?1 ORDER BY id")?;
        // Missing when no text was ever stored (then no chunk refers to it).
        let text_file = std::fs::File::open(text_path).ok();
        for id in to_read {
            let text = body_text(&mut st, text_file.as_ref(), id, tail_of.get(&id).copied())?;
            for (bit, check, cands) in &checks {
                if cands.as_ref().is_some_and(|c| !c.contains(&id)) {
                    continue;
                }
                let ok = match check {
                    Check::Phrase(f) => f.find(text.as_bytes()).is_some(),
                    Check::Regex(r) => r.is_match(&text),
                };
                if ok {
                    *bits.entry(id).or_default() |= bit;
                }
            }
        }
    }

    Ok(Some(
        bits.into_iter()
            .filter_map(|(id, b)| files.paths.get(&id).map(|p| (p.clone(), b)))
            .collect(),
    ))
}
