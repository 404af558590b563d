//! Answering the picker's body terms from the index.
//!
//! Per term (see `crate::search` for the language):
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

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use memchr::memmem;
use rusqlite::{Connection, MAIN_DB};

use super::codec::FxBuild;
use super::db::{key_path, read_at, Keys};
use super::terms::{decode_postings, Match, Segment};
use super::IndexError;
use crate::search::{Query, Term};

/// Per session path, a bit per query term (bit `i` = term `i`, for the
/// first 32 terms) that matched the session's message bodies. Paths are
/// absolute.
pub type BodyHits = HashMap<PathBuf, u32>;

type IdSet = HashSet<u32, FxBuild>;

struct Files {
    /// Row id → absolute path key, for the sessions (not the problem rows).
    keys: HashMap<u32, Vec<u8>, FxBuild>,
    /// Files whose partial last line has text (not in the word index).
    tails: Vec<(u32, String)>,
}

fn load_files(conn: &Connection) -> rusqlite::Result<Files> {
    // Both served by partial indexes, without reading the rows.
    let mut st = conn.prepare("SELECT id, path FROM files WHERE problem IS NULL")?;
    let mut rows = st.query([])?;
    let mut keys = HashMap::default();
    while let Some(r) = rows.next()? {
        let Ok(id) = u32::try_from(r.get::<_, i64>(0)?) else {
            continue;
        };
        keys.insert(id, r.get_ref(1)?.as_blob()?.to_vec());
    }
    let mut st = conn.prepare("SELECT id, tail_text FROM files WHERE tail_text IS NOT NULL")?;
    let tails = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
        .filter_map(|r| r.ok())
        .filter_map(|(id, t)| Some((u32::try_from(id).ok()?, t)))
        .filter(|(id, _)| keys.contains_key(id))
        .collect();
    Ok(Files { keys, tails })
}

/// The segments' dictionaries, with the row id that holds their postings.
fn load_dictionaries(conn: &Connection) -> Result<Vec<(i64, Segment)>, IndexError> {
    let mut st = conn.prepare("SELECT id, terms, starts FROM segments")?;
    let mut rows = st.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let terms: Vec<u8> = r.get(1)?;
        let starts = r.get_ref(2)?.as_blob().map_err(rusqlite::Error::from)?;
        match Segment::dictionary_only(terms, starts) {
            Some(s) => out.push((id, s)),
            None => return Err(IndexError::Corrupt(PathBuf::new())),
        }
    }
    Ok(out)
}

/// Sessions with a term matching `needle` the way `how` says; only the
/// matching posting lists are read.
fn lookup(
    conn: &Connection,
    segs: &[(i64, Segment)],
    needle: &str,
    how: Match,
) -> Result<IdSet, IndexError> {
    let mut out = IdSet::default();
    let mut buf = Vec::new();
    for (rowid, s) in segs {
        let mut ranges = Vec::new();
        s.find(needle.as_bytes(), how, &mut |t| {
            ranges.push(s.postings_range(t))
        });
        if ranges.is_empty() {
            continue;
        }
        let blob = conn.blob_open(MAIN_DB, c"segments", c"postings", *rowid, true)?;
        if blob.len() != s.postings_len() {
            return Err(IndexError::Corrupt(PathBuf::new()));
        }
        for (a, b) in ranges {
            buf.resize(b - a, 0);
            blob.read_at_exact(&mut buf, a)?;
            decode_postings(&buf, &mut |id| {
                out.insert(id);
            });
        }
    }
    Ok(out)
}

/// The body text of a file: its chunks joined by a space, then the partial
/// last line's text.
fn body_text(
    spans: &[(u64, usize)],
    text_file: Option<&std::fs::File>,
    tail: Option<&str>,
) -> Result<String, IndexError> {
    let mut text = String::new();
    for &(off, len) in spans {
        let chunk = text_file
            .and_then(|f| read_at(f, off, len).ok())
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

/// Literals one of which every match of `r` starts with (lowercased, as
/// the stored text is), when there is such a finite set of non-empty,
/// space-free literals. A necessary condition used to skip sessions.
fn regex_prefixes(r: &regex::Regex) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .build()
        .parse(r.as_str())
        .ok()?;
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let lits = seq.literals()?;
    let mut out: Vec<String> = Vec::new();
    for l in lits {
        let s = std::str::from_utf8(l.as_bytes()).ok()?;
        if s.is_empty() || s.chars().any(char::is_whitespace) {
            return None;
        }
        let s = s.to_lowercase();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then_some(out)
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
    crate::util::trace("search start");
    let files = load_files(conn)?;
    // `within` as row ids (the index keys absolute paths). Only texts to
    // read need it: word hits outside it are harmless to the caller.
    let reads_text = body_terms.iter().any(|(_, t)| match t {
        Term::Regex(_) => true,
        Term::Phrase(p) => p.contains(' '),
        Term::Word { .. } => false,
    });
    let allowed: Option<IdSet> = within.filter(|_| reads_text).map(|w| {
        let by_key: HashMap<&[u8], u32, FxBuild> = files
            .keys
            .iter()
            .map(|(id, k)| (k.as_slice(), *id))
            .collect();
        let mut keys = Keys::new();
        w.iter()
            .filter_map(|p| by_key.get(keys.key(p).as_ref()).copied())
            .collect()
    });
    let allowed = |id: &u32| -> bool {
        match &allowed {
            None => files.keys.contains_key(id),
            Some(a) => a.contains(id),
        }
    };
    crate::util::trace("search files loaded");
    let needs_words = body_terms.iter().any(|(_, t)| !matches!(t, Term::Regex(_)))
        || body_terms
            .iter()
            .any(|(_, t)| matches!(t, Term::Regex(r) if regex_prefixes(r).is_some()));
    let segs = if needs_words {
        load_dictionaries(conn)?
    } else {
        Vec::new()
    };
    crate::util::trace("search dictionaries loaded");
    let tail_of: HashMap<u32, &str> = files
        .tails
        .iter()
        .map(|(id, t)| (*id, t.as_str()))
        .collect();
    let in_tails = |needle: &str| -> Vec<u32> {
        files
            .tails
            .iter()
            .filter(|(_, t)| memmem::find(t.as_bytes(), needle.as_bytes()).is_some())
            .map(|(id, _)| *id)
            .collect()
    };

    let mut bits: HashMap<u32, u32, FxBuild> = HashMap::default();
    // Terms answered by reading text: (bit, check, candidates or all).
    let mut checks: Vec<(u32, Check, Option<IdSet>)> = Vec::new();
    for (i, t) in &body_terms {
        let bit = 1u32 << i;
        match t {
            Term::Word { lower: needle, .. } | Term::Phrase(needle) if !needle.contains(' ') => {
                let mut hit = lookup(conn, &segs, needle, Match::Contains)?;
                hit.extend(in_tails(needle));
                for id in hit.into_iter().filter(&allowed) {
                    *bits.entry(id).or_default() |= bit;
                }
            }
            Term::Word { .. } => {}
            Term::Phrase(p) => {
                let words: Vec<&str> = p.split(' ').collect();
                let n = words.len();
                let mut cands = lookup(conn, &segs, words[0], Match::EndsWith)?;
                for (k, w) in words.iter().enumerate().skip(1) {
                    if cands.is_empty() {
                        break;
                    }
                    let how = if k == n - 1 {
                        Match::StartsWith
                    } else {
                        Match::Exact
                    };
                    let next = lookup(conn, &segs, w, how)?;
                    cands.retain(|id| next.contains(id));
                }
                // A phrase may reach into the unindexed partial last line.
                cands.extend(files.tails.iter().map(|(id, _)| *id));
                cands.retain(&allowed);
                checks.push((
                    bit,
                    Check::Phrase(Box::new(memmem::Finder::new(p.as_bytes()))),
                    Some(cands),
                ));
            }
            Term::Regex(r) => {
                let cands = match regex_prefixes(r) {
                    Some(lits) => {
                        let mut c = IdSet::default();
                        for l in &lits {
                            c.extend(lookup(conn, &segs, l, Match::Contains)?);
                            c.extend(in_tails(l));
                        }
                        c.retain(&allowed);
                        Some(c)
                    }
                    None => None,
                };
                checks.push((bit, Check::Regex(r), cands));
            }
        }
    }
    crate::util::trace("search lookups done");

    if !checks.is_empty() {
        let mut to_read: Vec<u32> = if checks.iter().any(|c| c.2.is_none()) {
            files.keys.keys().copied().filter(&allowed).collect()
        } else {
            let mut s = IdSet::default();
            for c in &checks {
                s.extend(c.2.iter().flatten());
            }
            s.into_iter().collect()
        };
        to_read.sort_unstable();
        // Where each file's text lies, then read and check on all cores.
        let mut spans: HashMap<u32, Vec<(u64, usize)>, FxBuild> = HashMap::default();
        {
            let wanted: IdSet = to_read.iter().copied().collect();
            let mut st = conn.prepare("SELECT file_id, off, len FROM chunks ORDER BY id")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let Ok(id) = u32::try_from(r.get::<_, i64>(0)?) else {
                    continue;
                };
                if wanted.contains(&id) {
                    let (off, len): (i64, i64) = (r.get(1)?, r.get(2)?);
                    spans
                        .entry(id)
                        .or_default()
                        .push((off as u64, len as usize));
                }
            }
        }
        // Missing when no text was ever stored (then no chunk refers to it).
        let text_file = std::fs::File::open(text_path).ok();
        use rayon::prelude::*;
        let found: Result<Vec<(u32, u32)>, IndexError> = to_read
            .par_iter()
            .map(|&id| {
                let text = body_text(
                    spans.get(&id).map_or(&[][..], Vec::as_slice),
                    text_file.as_ref(),
                    tail_of.get(&id).copied(),
                )?;
                let mut b = 0u32;
                for (bit, check, cands) in &checks {
                    if cands.as_ref().is_some_and(|c| !c.contains(&id)) {
                        continue;
                    }
                    let ok = match check {
                        Check::Phrase(f) => f.find(text.as_bytes()).is_some(),
                        Check::Regex(r) => r.is_match(&text),
                    };
                    if ok {
                        b |= bit;
                    }
                }
                Ok((id, b))
            })
            .collect();
        for (id, b) in found? {
            if b != 0 {
                *bits.entry(id).or_default() |= b;
            }
        }
    }
    crate::util::trace("search texts read");

    Ok(Some(
        bits.into_iter()
            .filter_map(|(id, b)| files.keys.get(&id).map(|k| (key_path(k), b)))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::regex_prefixes;

    fn prefixes(p: &str) -> Option<Vec<String>> {
        let r = regex::RegexBuilder::new(p)
            .case_insensitive(true)
            .build()
            .unwrap();
        regex_prefixes(&r).map(|mut v| {
            v.sort();
            v
        })
    }

    #[test]
    fn literal_prefixes() {
        assert_eq!(prefixes("Fail\\w+"), Some(vec!["fail".into()]));
        assert_eq!(
            prefixes("(abc|xyz)d"),
            Some(vec!["abcd".into(), "xyzd".into()])
        );
        assert_eq!(prefixes("\\w+fail"), None);
        assert_eq!(prefixes("a b"), None);
        assert_eq!(prefixes("x?y"), Some(vec!["xy".into(), "y".into()]));
        // 's' also matches the long s 'ſ' case-insensitively: both kept.
        let s = prefixes("sun").unwrap();
        assert!(s.contains(&"sun".to_string()) && s.contains(&"ſun".to_string()));
    }
}
