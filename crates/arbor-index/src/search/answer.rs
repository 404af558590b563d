//! Answering a query's body terms: each term's sessions by tier, combined
//! into the [`BodyHits`] a search gives.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::Connection;

use crate::codec::FxBuild;
use crate::db::Keys;
use crate::refresh::TEXT_SEGMENT;
use crate::terms::Match;
use crate::Error;
use arbor_search::hits::PartMatcher;
use arbor_search::Term;
use arbor_search::{Parts, Tiers};

use arbor_search::{BodyHits, PathsById};

use super::cache::SearchCache;
use super::idset::{IdSet, BITMAP_IDS};
use super::narrow::{narrow, regex_for_lowercased, regex_prefixes, within_a_term};
use super::postings::lookup_where;
use super::text::{short_needle, text_hits, FEW_LEFT};
use super::{Cancel, Within};

/// `search` in one snapshot, with the stored text loaded when needed.
#[allow(clippy::too_many_arguments)]
pub(super) fn answer(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    body_terms: &[(usize, &Term)],
    parts: Parts,
    cache: &mut SearchCache,
    within: Option<Within>,
    cancel: Cancel,
) -> Result<Option<BodyHits>, Error> {
    // `within` as row ids (the index keys absolute paths). Only texts to
    // read need it: word hits outside it are harmless to the caller, and a
    // query of words alone is answered from the word indexes.
    let reads = body_terms
        .iter()
        .any(|(_, t)| !matches!(t, Term::Word { .. }));
    let allowed: Option<IdSet> = within.filter(|_| reads).and_then(|w| match w {
        // As many paths as the index has sessions (a listing of the whole
        // store): reading every session's text reads no more than theirs,
        // and mapping 100,000 paths to ids cost ~40 ms. Not for a cache of
        // some folders' sessions, which are few to map, and which, when
        // few, are read rather than looked up (see `FEW_TO_READ`).
        Within::Paths(w) if w.len() >= cache.files.keys.len() && cache.folders.is_none() => None,
        Within::Paths(w) => {
            let by_key: HashMap<&[u8], u32, FxBuild> = cache
                .files
                .keys
                .iter()
                .map(|(id, k)| (k.as_encoded_bytes(), *id))
                .collect();
            let mut keys = Keys::new();
            Some(
                w.iter()
                    .filter_map(|p| by_key.get(keys.key(p).as_ref()).copied())
                    .collect(),
            )
        }
    });
    arbor_util::log::line("search files loaded");

    let mut bits = TierBits::new(cache.files.keys.len());
    // The parts of the best ranks, when a search of them alone answered
    // this term already (the picker asks them first: see
    // `Searcher::search_first`): only the rest is looked up.
    let best = parts.ranked_above(2);
    for (i, t) in body_terms {
        let key = format!("{}\n{}", parts.bits(), t.key());
        let hits = match cache.memo.get(&key) {
            Some(h) if allowed.is_none() => h.clone(),
            _ => {
                let known = (allowed.is_none() && best != parts && !best.is_empty())
                    .then(|| {
                        cache
                            .memo
                            .get(&format!("{}\n{}", best.bits(), t.key()))
                            .cloned()
                    })
                    .flatten();
                let h = Arc::new(term_hits(
                    conn,
                    db_path,
                    map_text,
                    cache,
                    t,
                    parts,
                    allowed.as_ref(),
                    cancel,
                    known.as_deref().map(|k| (k, best)),
                )?);
                if allowed.is_none() {
                    let bytes = h.iter().map(IdSet::heap_bytes).sum();
                    cache.memo.insert(key, h.clone(), bytes);
                }
                h
            }
        };
        for (tier, set) in hits.iter().enumerate() {
            for id in set.iter() {
                bits.add(id, tier, 1u32 << i);
            }
        }
    }
    arbor_util::log::line("search terms answered");

    // By row id, with the table of their paths: no path is copied or
    // looked up per answer (the picker maps ids to its rows once).
    let ids = bits.of_live(&cache.files.live);
    Ok(Some(BodyHits::of_ids(ids, Arc::clone(&cache.files.keys))))
}

/// Per row id, the terms that matched it per rank ([`Tiers`]): in an
/// array by id while ids are dense (a table keyed by id was ~40 % of a
/// keystroke's answer when a word is in most sessions), in a table past
/// that.
struct TierBits {
    dense: Vec<Tiers>,
    sparse: HashMap<u32, Tiers, FxBuild>,
    /// Ids below this go to the array.
    limit: usize,
}

impl TierBits {
    /// For an index of `sessions` sessions (ids grow past their count as
    /// files are read again: a few per session stay in the array).
    fn new(sessions: usize) -> TierBits {
        TierBits {
            dense: Vec::new(),
            sparse: HashMap::default(),
            limit: (4 * sessions + (1 << 16)).min(BITMAP_IDS as usize),
        }
    }

    fn add(&mut self, id: u32, tier: usize, bit: u32) {
        let i = id as usize;
        if i >= self.limit {
            self.sparse.entry(id).or_default()[tier] |= bit;
            return;
        }
        if i >= self.dense.len() {
            // Ids come in increasing order per set: grown by doubling.
            let len = (i + 1).max(2 * self.dense.len()).min(self.limit);
            self.dense.resize(len, Tiers::default());
        }
        self.dense[i][tier] |= bit;
    }

    /// The ids with a bit, among `live`.
    fn of_live(self, live: &IdSet) -> Vec<(u32, Tiers)> {
        let none = Tiers::default();
        let dense = self
            .dense
            .into_iter()
            .enumerate()
            .filter(|(_, t)| *t != none)
            .map(|(id, t)| (id as u32, t));
        dense
            .chain(self.sparse)
            .filter(|(id, _)| live.contains(id))
            .collect()
    }
}

/// The sessions (among `allowed`, or all) whose parts in `parts` match one
/// term, per rank of the part (see [`Part::tier`]). The user and assistant
/// text together is answered from the stored text; every other part from
/// its own word index: exactly for a word, else as candidates whose session
/// files are then read to confirm (they are in the page cache).
#[allow(clippy::too_many_arguments)]
pub(super) fn term_hits(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    cache: &mut SearchCache,
    t: &Term,
    parts: Parts,
    allowed: Option<&IdSet>,
    cancel: Cancel,
    known: Option<(&[IdSet; 3], Parts)>,
) -> Result<[IdSet; 3], Error> {
    // `known`: the answer of some of `parts` (looked up alone before).
    let (mut out, done) = match known {
        Some((k, done)) => (k.clone(), done),
        None => (Default::default(), Parts::NONE),
    };
    if parts.covers_text() && !done.covers_text() {
        out[0] = text_hits(conn, db_path, map_text, cache, t, allowed, cancel)?;
    }
    // What the stored text did not answer: the other parts, and the user's
    // or the assistant's text alone (the stored text holds both together).
    let rest = parts
        .iter()
        .filter(|p| !(done.contains(*p) || p.is_text() && parts.covers_text()))
        .fold(Parts::NONE, |a, p| a.union(Parts::one(p)));
    if rest.is_empty() {
        return Ok(out);
    }
    let word = match t {
        Term::Word { lower, .. } => Some(lower.as_str()),
        Term::Phrase(p) if !p.contains(' ') && p.len() >= 3 => Some(p.as_str()),
        _ => None,
    };
    // Sessions to read (`None`: all of them) and the parts to read there.
    let mut cands: Option<IdSet> = Some(IdSet::default());
    let mut to_confirm = Parts::NONE;
    let short = short_needle(t);
    for part in rest.iter() {
        let kind = if part.is_text() {
            TEXT_SEGMENT
        } else {
            i64::from(part.code())
        };
        // Only the best part a session matches in ranks it (`tier_score`).
        // A letter or two is in millions of terms, and proving that a
        // session lacks it reads every posting list holding it (`"t` in the
        // tool output: 585 ms at 100,000 sessions); but nearly every session
        // has it in a better part already, and the few left are read.
        if short && !part.is_text() && part.tier() > 0 {
            if let Some(c) = cands.as_mut() {
                if let Some(left) = few_left(cache, &out[..part.tier()], allowed) {
                    to_confirm = to_confirm.union(Parts::one(part));
                    c.extend(left.iter());
                    continue;
                }
            }
        }
        if let (Term::Regex(r), false) = (t, part.is_text()) {
            if regex_in_terms(conn, cache, r, kind, allowed, &mut out[part.tier()])? {
                continue;
            }
        }
        if let Some(w) = word {
            let ids = cache.lookup(conn, w, Match::Contains, kind)?;
            if part.is_text() {
                // Only candidates: which of the two it is in, the file says.
                to_confirm = to_confirm.union(Parts::one(part));
                if let Some(c) = cands.as_mut() {
                    c.extend(ids.iter());
                    c.extend(cache.in_tails(w));
                }
            } else {
                out[part.tier()].add_kept(&ids, &cache.files.live, allowed);
            }
            continue;
        }
        let found: Option<IdSet> = match t {
            Term::Word { .. } => Some(IdSet::default()),
            Term::Phrase(_) | Term::Regex(_) => match narrow(conn, cache, t, kind)? {
                // A regex without literals: every session is read.
                None => None,
                // Only candidates: which of the two it is in, the file says.
                Some(n) if part.is_text() => {
                    let mut c = n.maybe;
                    c.extend(n.sure.iter());
                    Some(c)
                }
                Some(n) => {
                    // What the dictionaries answer needs no reading.
                    out[part.tier()].add_kept(&n.sure, &cache.files.live, allowed);
                    if n.maybe.is_empty() {
                        continue;
                    }
                    Some(n.maybe)
                }
            },
        };
        to_confirm = to_confirm.union(Parts::one(part));
        match (found, cands.as_mut()) {
            (Some(f), Some(c)) => {
                c.extend(f.iter());
                if part.is_text() {
                    // A partial last line is not in the word index.
                    c.extend(cache.files.tails.iter().map(|(id, _)| *id));
                }
            }
            (None, _) => cands = None,
            (Some(_), None) => {}
        }
    }
    if to_confirm.is_empty() {
        return Ok(out);
    }
    confirm_by_reading(cache, t, (cands, to_confirm), allowed, cancel, &mut out)?;
    Ok(out)
}

/// The sessions (among `allowed`) not in any of the `better` parts'
/// answers, when they are few enough to read (see `FEW_LEFT`).
fn few_left(cache: &SearchCache, better: &[IdSet], allowed: Option<&IdSet>) -> Option<IdSet> {
    let mut left = cache.files.live.clone();
    for b in better {
        left.subtract(b);
    }
    if let Some(a) = allowed {
        left.intersect(a);
    }
    left.len_at_most(FEW_LEFT).then_some(left)
}

/// A regex whose matches stay inside one term: the terms of the part's
/// dictionaries (`kind`) answer, into `out`. False when the regex is not
/// such a one (then its sessions are read).
fn regex_in_terms(
    conn: &Connection,
    cache: &mut SearchCache,
    r: &regex::Regex,
    kind: i64,
    allowed: Option<&IdSet>,
    out: &mut IdSet,
) -> Result<bool, Error> {
    if let (true, Some(lits), Some(bytes)) = (
        within_a_term(r.as_str()),
        regex_prefixes(r),
        regex_for_lowercased(r.as_str()),
    ) {
        let live = cache.files.live.clone();
        for l in &lits {
            let ids = lookup_where(
                conn,
                cache.segs(conn, kind)?,
                l,
                Match::Contains,
                &|term| bytes.is_match(term),
                &live,
            )?;
            out.add_kept(&ids, &cache.files.live, allowed);
        }
        return Ok(true);
    }
    Ok(false)
}

/// Reads the session files of the candidates (`None`: every session) for
/// the parts `to_confirm` of term `t`, adding those that match to `out` by
/// rank.
fn confirm_by_reading(
    cache: &SearchCache,
    t: &Term,
    (cands, to_confirm): (Option<IdSet>, Parts),
    allowed: Option<&IdSet>,
    cancel: Cancel,
    out: &mut [IdSet; 3],
) -> Result<(), Error> {
    let keep = |keys: &PathsById, id: &u32| -> bool {
        keys.contains_key(id) && allowed.is_none_or(|a| a.contains(id))
    };
    let keys = &cache.files.keys;
    // Only the best part a session matches ranks it (`tier_score`): a
    // session already found in a part as good as the best left to
    // confirm gains nothing from its file being read (`re:token\s+\w+` at
    // 10,000 sessions read 8,900 files, 24 s, for sessions its text had
    // already found).
    let best_left = to_confirm
        .iter()
        .map(arbor_session::searchable::Part::tier)
        .min()
        .unwrap_or(0);
    let settled = |id: &u32| out[..=best_left].iter().any(|found| found.contains(id));
    let mut to_read: Vec<u32> = match cands {
        Some(c) => c
            .iter()
            .filter(|id| keep(keys, id) && !settled(id))
            .collect(),
        None => keys
            .keys()
            .copied()
            .filter(|id| keep(keys, id) && !settled(id))
            .collect(),
    };
    to_read.sort_unstable();
    arbor_util::log::line(format!("search: reading {} session files", to_read.len()));
    use rayon::prelude::*;
    let found: Vec<(u32, Tiers)> = to_read
        .par_iter()
        .map(|&id| {
            if cancel() {
                return Err(Error::Cancelled);
            }
            let mut m = PartMatcher::one(t, to_confirm);
            if let Some(path) = keys.get(&id) {
                m.file(std::path::Path::new(path));
            }
            Ok((id, m.tiers))
        })
        .collect::<Result<_, _>>()?;
    for (id, tiers) in found {
        for (tier, b) in tiers.iter().enumerate() {
            if b & 1 != 0 {
                out[tier].insert(id);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each id's bits per rank, whether it is kept in the array (below
    /// the limit) or the table (past it, and past the bitmap), and only
    /// the live ones.
    #[test]
    fn tier_bits_by_id_dense_or_not() {
        let mut bits = super::TierBits::new(10);
        let far = BITMAP_IDS + 3;
        let over = bits.limit as u32 + 7;
        for (id, tier, bit) in [
            (3, 0, 1),
            (3, 2, 2),
            (9, 1, 4),
            (over, 0, 8),
            (far, 2, 1),
            (5, 0, 0),
        ] {
            bits.add(id, tier, bit);
        }
        let live: IdSet = [3, 5, over, far].into_iter().collect();
        let mut got = bits.of_live(&live);
        got.sort_unstable();
        assert_eq!(
            got,
            vec![(3, [1, 0, 2]), (over, [8, 0, 0]), (far, [0, 0, 1])]
        );
    }
}
