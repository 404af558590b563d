//! Scoring a snapshot of sessions against a query, key after key.
//!
//! Typing re-asks every term but the last on each keystroke. The scorer
//! remembers each term's per-session result for the snapshot it was
//! computed on, so a keystroke costs one term over the sessions, whatever
//! the query's length.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use arbor_util::hash::FxBuild;
use arbor_util::memo::Memo;
use arbor_util::shared_path::{ByBytes, SharedPath};

use super::doc::SearchDoc;
use super::query::{tier_score, word_key, Fuzzy, Query, Span, Term, Tiers};
use arbor_session::searchable::Parts;

/// The sessions' search documents at one moment (shared, never mutated:
/// a change of rows makes a new snapshot).
#[derive(Default)]
pub struct Docs(pub Vec<(SharedPath, Arc<SearchDoc>)>);

impl PartialEq for Docs {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(|(a, b)| a.0 == b.0)
    }
}

impl std::fmt::Debug for Docs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Docs({} sessions)", self.0.len())
    }
}

/// Row id → the session's path, as the index names its sessions (each
/// path one allocation, shared by every answer that names it).
pub type PathsById = HashMap<u32, Arc<OsStr>, FxBuild>;

/// Per session, a bit per query term (bit `i` = term `i`, for the first 32
/// terms) that matched the session's message bodies, per rank of the part
/// it matched in ([`Tiers`]): the index's answer (the index's
/// `Index::search`), by the index's row ids with the table of their paths,
/// or by path (files read without the index). Looked up by the path's
/// bytes: hashing a `Path` walks its components, too slow once per session
/// per keystroke.
#[derive(Debug, Clone, Default)]
pub struct BodyHits {
    entries: Vec<(Arc<OsStr>, Tiers)>,
    /// The index's answer: by row id, and the table naming them.
    ids: Vec<(u32, Tiers)>,
    paths: Option<Arc<PathsById>>,
    /// For lookups by path, built when first asked.
    by_path: std::sync::OnceLock<HashMap<Arc<OsStr>, Tiers, FxBuild>>,
}

impl BodyHits {
    /// The index's answer: tiers by row id, the ids named in `paths`.
    pub fn of_ids(ids: Vec<(u32, Tiers)>, paths: Arc<PathsById>) -> BodyHits {
        BodyHits {
            ids,
            paths: Some(paths),
            ..Default::default()
        }
    }

    /// The index's answer by row id (none for answers by path).
    pub fn of_row_ids(&self) -> &[(u32, Tiers)] {
        &self.ids
    }

    /// Matches in conversation text (the first rank).
    pub fn insert(&mut self, path: PathBuf, bits: u32) {
        self.insert_shared(Arc::from(path.as_os_str()), [bits, 0, 0]);
    }

    /// Like [`BodyHits::insert`] with a path already shared (no copy), per rank.
    pub fn insert_shared(&mut self, path: Arc<OsStr>, tiers: Tiers) {
        self.by_path = Default::default();
        self.entries.push((path, tiers));
    }

    /// Adds `other`'s matches by path (an answer from other sessions'
    /// files: the same path is not in both).
    pub fn add_all(&mut self, other: Option<BodyHits>) {
        let Some(other) = other else { return };
        for (path, tiers) in other.map() {
            self.insert_shared(path.clone(), *tiers);
        }
    }

    fn map(&self) -> &HashMap<Arc<OsStr>, Tiers, FxBuild> {
        self.by_path.get_or_init(|| {
            let by_id = self.paths.iter().flat_map(|paths| {
                self.ids
                    .iter()
                    .filter_map(|(id, t)| Some((paths.get(id)?.clone(), *t)))
            });
            self.entries.iter().cloned().chain(by_id).collect()
        })
    }

    /// The terms that matched, whatever the rank.
    pub fn get(&self, path: &Path) -> Option<u32> {
        self.tiers(path).map(|t| t[0] | t[1] | t[2])
    }

    pub fn tiers(&self, path: &Path) -> Option<Tiers> {
        self.map().get(path.as_os_str()).copied()
    }

    pub fn contains_key(&self, path: &Path) -> bool {
        self.map().contains_key(path.as_os_str())
    }

    pub fn len(&self) -> usize {
        self.map().len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.ids.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Path, u32)> {
        self.map()
            .iter()
            .map(|(p, t)| (Path::new(p.as_ref()), t[0] | t[1] | t[2]))
    }
}

impl FromIterator<(PathBuf, u32)> for BodyHits {
    fn from_iter<I: IntoIterator<Item = (PathBuf, u32)>>(iter: I) -> Self {
        let mut h = BodyHits::default();
        for (p, b) in iter {
            h.insert(p, b);
        }
        h
    }
}

/// A term's score per document of one snapshot, from the documents alone:
/// four bytes a document, [`NO_SCORE`] where it does not match (an
/// `Option<u32>` takes eight).
type TermScores = Arc<[u32]>;

/// A document the term does not match; a real score this high is kept one
/// lower.
const NO_SCORE: u32 = u32::MAX;

fn packed(score: Option<u32>) -> u32 {
    score.map_or(NO_SCORE, |s| s.min(NO_SCORE - 1))
}

fn unpacked(score: u32) -> Option<u32> {
    (score != NO_SCORE).then_some(score)
}

/// How many documents ahead a scoring pass asks for the text (and twice
/// as many for the document).
const AHEAD: usize = 8;

/// How often (in sessions) a pass asks whether it is still wanted.
const CANCEL_EVERY: usize = 256;

/// Answers of at most this many distinct terms are kept,
const MEMO_TERMS: usize = 128;
/// and at most this many bytes of them (a term's scores and spans are five
/// bytes a document: at 100,000 sessions the 128 terms a long session of
/// typing left were 115 MB, and every prefix typed is a term; this keeps
/// the last 16 there, more than a query's words and the prefixes a
/// backspace goes back to).
const MEMO_BYTES: usize = 8 << 20;

/// A term's scores and, for an ASCII word, what the word one character
/// longer could match per document.
type Remembered = (TermScores, Option<Arc<[Span]>>);

pub struct Scorer {
    /// The snapshot the memo belongs to.
    docs: Option<Arc<Docs>>,
    memo: Memo<String, Remembered>,
    /// Path → position in the snapshot, built when first needed.
    position: HashMap<ByBytes, usize, FxBuild>,
    /// The index's table of paths (held, so that it is the same table
    /// while compared) and, per row id, the position of its session in the
    /// snapshot ([`NOWHERE`]: not among the rows): an answer names up to
    /// every session, and looking each up by path cost milliseconds a key.
    /// Third, per position, its row id ([`NOWHERE`]: not in the index).
    by_id: Option<(Arc<PathsById>, Vec<u32>, Vec<u32>)>,
}

/// A row id whose session is not in the snapshot.
const NOWHERE: u32 = u32::MAX;

/// Row ids below this many, for `n` sessions, are mapped to rows by a
/// table of positions (four bytes an id).
fn dense_ids(n: usize) -> usize {
    4 * n + (1 << 16)
}

impl Default for Scorer {
    fn default() -> Scorer {
        Scorer {
            docs: None,
            memo: Memo::new(MEMO_TERMS, MEMO_BYTES),
            position: HashMap::default(),
            by_id: None,
        }
    }
}

impl Scorer {
    pub fn new() -> Scorer {
        Scorer::default()
    }

    /// Computes (and remembers) what [`Scorer::score`] needs from the
    /// documents alone, so it can run while the index answers the bodies.
    /// False when `cancel` said to stop (a newer query typed): what was
    /// left undone is not remembered.
    pub fn prepare(
        &mut self,
        query: &Query,
        docs: &Arc<Docs>,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> bool {
        self.adopt(docs);
        query
            .terms
            .iter()
            .all(|t| self.term(t, query.parts, docs, cancel).is_some())
    }

    fn adopt(&mut self, docs: &Arc<Docs>) {
        if !self.docs.as_ref().is_some_and(|d| Arc::ptr_eq(d, docs)) {
            self.docs = Some(docs.clone());
            self.memo.clear();
            self.position.clear();
            self.by_id = None;
        }
    }

    /// Each document's relevance (`None`: no match), in `docs`' order.
    /// `hits` gives body matches for the documents without their own body
    /// text (rows from the index); the others are searched directly.
    pub fn score(
        &mut self,
        query: &Query,
        docs: &Arc<Docs>,
        hits: Option<&BodyHits>,
    ) -> Vec<Option<u32>> {
        if query.error().is_some() {
            return vec![None; docs.0.len()];
        }
        self.adopt(docs);
        // Never stopped: every term is scored.
        let Some(per_term) = query
            .terms
            .iter()
            .map(|t| self.term(t, query.parts, docs, &|| false))
            .collect::<Option<Vec<TermScores>>>()
        else {
            return vec![None; docs.0.len()];
        };
        let bits = match hits {
            Some(h) => self.body_bits(docs, h),
            None => vec![Tiers::default(); docs.0.len()],
        };
        (0..docs.0.len())
            .map(|d| {
                if !query.accepts(&docs.0[d].1.facts) {
                    return None;
                }
                // Documents with their own body text (the user and assistant
                // text) were searched directly; the hits add the other parts.
                let mut total = 0u32;
                for (i, (t, scores)) in query.terms.iter().zip(&per_term).enumerate() {
                    let s = unpacked(scores[d])
                        .or_else(|| hits.is_some().then(|| tier_score(t, i, &bits[d])).flatten())?;
                    total = total.saturating_add(s);
                }
                Some(total)
            })
            .collect()
    }

    /// The index's bits per document. Paths are looked up by their bytes:
    /// hashing a `Path` walks its components, which a keystroke cannot
    /// afford once per session.
    fn body_bits(&mut self, docs: &Docs, h: &BodyHits) -> Vec<Tiers> {
        let mut bits = vec![Tiers::default(); docs.0.len()];
        self.make_positions(docs);
        if let Some(paths) = &h.paths {
            self.map_ids(paths);
            let by_id = self
                .by_id
                .as_ref()
                .map_or(&[][..], |(_, v, _)| v.as_slice());
            let position = &self.position;
            for &(id, b) in &h.ids {
                let d = match by_id.get(id as usize) {
                    Some(&d) => (d != NOWHERE).then_some(d as usize),
                    // Past the table (see `dense_ids`): by its path.
                    None => paths
                        .get(&id)
                        .and_then(|p| position.get(p.as_ref()).copied()),
                };
                if let Some(d) = d {
                    bits[d] = b;
                }
            }
        }
        for (path, b) in &h.entries {
            if let Some(&d) = self.position.get(path.as_ref()) {
                bits[d] = *b;
            }
        }
        bits
    }

    /// The rows of the answer to `query` that `best` (the index's answer
    /// for the parts of the best ranks alone: conversation text and tool
    /// calls) already places: those that score more than any other
    /// session can once the rest (tool output, thinking) is looked up. A
    /// term a session matches in its fields or a part of those ranks
    /// scores what it will score (only the best rank counts); a term it
    /// does not may still match in the rest, for the least a body match
    /// scores. `None` where no row is placed. The terms must have been
    /// scored (see [`Scorer::prepare`]). The scores are those the rows
    /// are listed by ([`Query::rank_score`]).
    pub fn score_placed(
        &mut self,
        query: &Query,
        docs: &Arc<Docs>,
        best: &BodyHits,
    ) -> Option<Vec<Option<u32>>> {
        if query.error().is_some() {
            return None;
        }
        self.adopt(docs);
        let per_term = query
            .terms
            .iter()
            .map(|t| self.term(t, query.parts, docs, &|| false))
            .collect::<Option<Vec<TermScores>>>()?;
        let bits = self.body_bits(docs, best);
        let rest = query.parts.ranked_above(2) != query.parts;
        let mut scores = vec![None; docs.0.len()];
        // The most a session not placed yet can score.
        let mut ceiling = 0u32;
        for (d, (_, doc)) in docs.0.iter().enumerate() {
            if !query.accepts(&doc.facts) {
                continue;
            }
            // (the most it can score, whether that is its score); `None`:
            // it cannot match.
            let mut most = Some((0u32, true));
            for (i, (t, per)) in query.terms.iter().zip(&per_term).enumerate() {
                let Some((total, known)) = most else { break };
                most = match unpacked(per[d]).or_else(|| tier_score(t, i, &bits[d])) {
                    Some(s) => Some((total.saturating_add(s), known)),
                    None => t
                        .body_score(2)
                        .filter(|_| rest)
                        .map(|least| (total.saturating_add(least), false)),
                };
            }
            // Ranked as the sessions are listed (Atomic's order first,
            // which the rest cannot change, then this score).
            match most {
                Some((total, true)) => scores[d] = Some(query.rank_score(doc, total)),
                Some((total, false)) => ceiling = ceiling.max(query.rank_score(doc, total)),
                None => {}
            }
        }
        let mut placed = false;
        for s in &mut scores {
            if s.is_some_and(|s| s > ceiling) {
                placed = true;
            } else {
                *s = None;
            }
        }
        placed.then_some(scores)
    }

    /// Learns where the index's `paths` are in `docs` ahead of an answer
    /// naming them (see `Index::share_paths`): the first answer naming
    /// 100,000 sessions spent ~70 ms on it. Each path the snapshot has is
    /// replaced by the snapshot's own allocation of it, so the index keeps
    /// no copy of its own. `paths` returns the table the answers will
    /// carry, whose ids are then mapped to the rows.
    pub fn learn_paths(
        &mut self,
        docs: &Arc<Docs>,
        paths: impl FnOnce(&mut dyn FnMut(&mut Arc<OsStr>)) -> Option<Arc<PathsById>>,
    ) {
        self.adopt(docs);
        self.make_positions(docs);
        self.by_id = None;
        let position = &self.position;
        let table = paths(&mut |p| {
            if let Some(&d) = position.get(p.as_ref()) {
                let own = docs.0[d].0.as_os_arc();
                if !Arc::ptr_eq(own, p) {
                    *p = Arc::clone(own);
                }
            }
        });
        if let Some(table) = table {
            self.map_ids(&table);
        }
    }

    /// Per row id of the index's `paths`, where its session is in the
    /// snapshot: made once per table (a table is the index's until its
    /// sessions change).
    fn map_ids(&mut self, paths: &Arc<PathsById>) {
        if !self
            .by_id
            .as_ref()
            .is_some_and(|(p, _, _)| Arc::ptr_eq(p, paths))
        {
            // Row ids grow as files are read again: an id past a few per
            // session (rare) is looked up by its path instead.
            let top = paths.keys().max().map_or(0, |&m| m as usize + 1);
            let mut by_id = vec![NOWHERE; top.min(dense_ids(paths.len()))];
            let mut of_doc = vec![NOWHERE; self.position.len()];
            for (&id, p) in paths.iter() {
                let Some(&d) = self.position.get(p.as_ref()) else {
                    continue;
                };
                if let Some(slot) = by_id.get_mut(id as usize) {
                    *slot = d as u32;
                }
                if let Some(slot) = of_doc.get_mut(d) {
                    *slot = id;
                }
            }
            self.by_id = Some((paths.clone(), by_id, of_doc));
        }
    }

    /// Each document's row id in the index (`None` where it has none),
    /// once the index's paths are mapped to `docs` (see
    /// [`Scorer::learn_paths`]; `None` before).
    pub fn index_ids(&self, docs: &Arc<Docs>) -> Option<impl Fn(u32) -> Option<u32> + '_> {
        let same = self.docs.as_ref().is_some_and(|d| Arc::ptr_eq(d, docs));
        let (_, _, of_doc) = self.by_id.as_ref().filter(|_| same)?;
        Some(move |d: u32| of_doc.get(d as usize).copied().filter(|&id| id != NOWHERE))
    }

    fn make_positions(&mut self, docs: &Docs) {
        if self.position.is_empty() {
            self.position = docs
                .0
                .iter()
                .enumerate()
                .map(|(d, (p, _))| (ByBytes(p.clone()), d))
                .collect();
        }
    }

    /// `None` when `cancel` said to stop.
    fn term(
        &mut self,
        t: &Term,
        parts: Parts,
        docs: &Docs,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<TermScores> {
        let key = format!("{}\n{}", parts.bits(), t.key());
        if let Some((s, _)) = self.memo.get(&key) {
            return Some(s.clone());
        }
        // A word typed one character past a remembered one: only the
        // sessions the shorter word left open are looked at (see `Span`).
        let word = t.word().filter(|w| w.is_ascii());
        let shorter = word.filter(|w| w.len() >= 2).and_then(|w| {
            self.memo
                .get(&format!(
                    "{}\n{}",
                    parts.bits(),
                    word_key(&w[..w.len() - 1])
                ))
                .and_then(|(_, spans)| spans.clone())
        });
        let n = word.map_or(0, str::len);
        // On all cores: fuzzy matching the short fields of every session is
        // the bulk of a keystroke's work.
        let all = &docs.0;
        // Each document is its own few allocations, scattered over the
        // heap: the pass asks for the ones a few documents ahead (a miss per
        // document was ~40 % of a pass at 100,000 sessions).
        // A query typed past this one stops the pass (asked every few
        // hundred sessions): fast typing or a paste would otherwise wait
        // for a whole pass per key already replaced.
        let stop = std::sync::atomic::AtomicBool::new(false);
        let stopped = |d: usize| {
            if d % CANCEL_EVERY == 0 && cancel() {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            stop.load(std::sync::atomic::Ordering::Relaxed)
        };
        let ahead = |d: usize| {
            if let Some((_, doc)) = all.get(d + 2 * AHEAD) {
                SearchDoc::prefetch_header(doc);
            }
            if let Some((_, doc)) = all.get(d + AHEAD) {
                doc.prefetch_text();
            }
        };
        let (scores, spans): (Vec<u32>, Vec<Span>) = match shorter {
            Some(shorter) => (0..all.len())
                .into_par_iter()
                .map_init(Fuzzy::new, |fz, d| {
                    if stopped(d) {
                        return (NO_SCORE, Span::ANY);
                    }
                    ahead(d);
                    let b = shorter[d];
                    if b.admits(n) {
                        let (score, span) = t.local_score_spanned(&all[d].1, parts, fz);
                        (packed(score), span)
                    } else {
                        (NO_SCORE, b.grown())
                    }
                })
                .unzip(),
            None => (0..all.len())
                .into_par_iter()
                .map_init(Fuzzy::new, |fz, d| {
                    if stopped(d) {
                        return (NO_SCORE, Span::ANY);
                    }
                    ahead(d);
                    let (score, span) = t.local_score_spanned(&all[d].1, parts, fz);
                    (packed(score), span)
                })
                .unzip(),
        };
        if stop.into_inner() {
            return None;
        }
        let scores: TermScores = scores.into();
        let spans: Option<Arc<[Span]>> = word.is_some().then(|| spans.into());
        let bytes = scores.len() * std::mem::size_of::<u32>()
            + spans
                .as_ref()
                .map_or(0, |s| s.len() * std::mem::size_of::<Span>());
        self.memo.insert(key, (scores.clone(), spans), bytes);
        Some(scores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_session::info::SessionInfo;

    fn docs(names: &[(&str, &str)]) -> Arc<Docs> {
        Arc::new(Docs(
            names
                .iter()
                .map(|(name, body)| {
                    let info = SessionInfo {
                        id: format!("id-{name}"),
                        name: Some(name.to_string()),
                        has_name: true,
                        cwd: "/w".into(),
                        all_text: body.to_string(),
                        ..Default::default()
                    };
                    (
                        PathBuf::from(format!("/s/{name}.jsonl")).into(),
                        Arc::new(SearchDoc::from_info(&info)),
                    )
                })
                .collect(),
        ))
    }

    /// The picker's scorer applies the filters as `Query::score` does.
    #[test]
    fn filters_apply_in_the_scorer() {
        let d = docs(&[("parser fix", "x"), ("auth", "y")]);
        let q = Query::parse_at("dir:w", 0);
        assert_eq!(Scorer::new().score(&q, &d, None), vec![Some(0), Some(0)]);
        let q = Query::parse_at("dir:nowhere", 0);
        assert_eq!(Scorer::new().score(&q, &d, None), vec![None, None]);
        let q = Query::parse_at("auth is:named", 0);
        let s = Scorer::new().score(&q, &d, None);
        assert!(s[0].is_none() && s[1].is_some());
    }

    /// The memo never changes an answer: scoring key by key gives what a
    /// fresh scorer (and `Query::score`) gives for each prefix.
    #[test]
    fn remembered_terms_answer_like_fresh_ones() {
        let d = docs(&[
            ("parser fix", "the session parser failed on CRLF"),
            ("auth", "token refresh in the session"),
            ("cache", "nothing to see"),
        ]);
        let typed = "session parser \"token re\" re:fail\\w+";
        let mut scorer = Scorer::new();
        for end in 1..=typed.len() {
            let q = Query::parse(&typed[..end]);
            let got = scorer.score(&q, &d, None);
            let fresh = Scorer::new().score(&q, &d, None);
            assert_eq!(got, fresh, "{}", &typed[..end]);
            let mut fz = Fuzzy::new();
            for ((path, doc), got) in d.0.iter().zip(&got) {
                assert_eq!(
                    *got,
                    q.score(doc, &mut fz),
                    "{} on {}",
                    &typed[..end],
                    path.display()
                );
            }
        }
    }

    /// The memo holds at most `MEMO_BYTES` of scores, the oldest terms
    /// leaving first, and what it forgot is scored again as a fresh scorer
    /// scores it.
    #[test]
    fn the_memo_is_bounded_by_its_bytes() {
        let names: Vec<(String, String)> = (0..40_000)
            .map(|i| (format!("n{i} parser"), String::new()))
            .collect();
        let pairs: Vec<(&str, &str)> = names
            .iter()
            .map(|(n, b)| (n.as_str(), b.as_str()))
            .collect();
        let d = docs(&pairs);
        let cost = d.0.len() * 5;
        let most = MEMO_BYTES / cost;
        assert!(most < MEMO_TERMS, "the bytes bound this memo: {most}");
        let mut scorer = Scorer::new();
        let words: Vec<String> = (0..most + 20).map(|i| format!("n{i}")).collect();
        let first = Query::parse(&words[0]);
        let want = scorer.score(&first, &d, None);
        for w in &words[1..] {
            scorer.score(&Query::parse(w), &d, None);
            assert!(scorer.memo.bytes() <= MEMO_BYTES, "{}", scorer.memo.bytes());
        }
        assert_eq!(scorer.memo.len(), most);
        // The first word was forgotten, and is scored again the same.
        assert_eq!(scorer.score(&first, &d, None), want);
        assert_eq!(Scorer::new().score(&first, &d, None), want);
        let matched = want.iter().filter(|s| s.is_some()).count();
        assert!(matched > 0 && matched < d.0.len(), "{matched}");
    }

    /// A session the third key leaves out (`ab` spans 6 characters, so
    /// `abc` spans at least 7, past its limit of 6) is looked at again by
    /// the fourth, whose limit is 8.
    #[test]
    fn a_session_left_out_by_one_key_can_match_a_later_one() {
        let d = docs(&[("axxxxbca", "")]);
        let mut scorer = Scorer::new();
        let typed: Vec<_> = ["a", "ab", "abc", "abca"]
            .iter()
            .map(|w| scorer.score(&Query::parse(w), &d, None)[0].is_some())
            .collect();
        assert_eq!(typed, [true, false, false, true]);
    }

    proptest::proptest! {
        /// Typing a word key by key, each key looking only at the sessions
        /// the previous one left open, answers as a fresh scorer does:
        /// fields whose matches sit at the edge of the compact limit, a
        /// substring of the short texts, non-ASCII fields and bodies.
        #[test]
        fn words_typed_key_by_key_answer_like_fresh_ones(
            fields in proptest::collection::vec(
                proptest::collection::vec("([abc]{0,3}[ _/x]{0,5}){0,8}|[aé]{0,4}", 1..4),
                1..12,
            ),
            body in proptest::collection::vec("|abc|ba", 12),
            typed in proptest::collection::vec("[abcx]{1,7}", 1..3),
        ) {
            let d = Arc::new(Docs(
                fields
                    .iter()
                    .enumerate()
                    .map(|(i, f)| {
                        let doc = SearchDoc::new(
                            f.iter().map(String::as_str),
                            [f[0].as_str()],
                            &body[i],
                            Default::default(),
                        );
                        (PathBuf::from(format!("/s/{i}.jsonl")).into(), Arc::new(doc))
                    })
                    .collect(),
            ));
            let mut scorer = Scorer::new();
            let text = typed.join(" ");
            for end in 1..=text.len() {
                let q = Query::parse(&text[..end]);
                let got = scorer.score(&q, &d, None);
                let fresh = Scorer::new().score(&q, &d, None);
                proptest::prop_assert_eq!(got, fresh, "{}", &text[..end]);
            }
        }
    }

    #[test]
    fn a_new_snapshot_forgets_the_old_answers() {
        let mut scorer = Scorer::new();
        let q = Query::parse("zebra");
        assert_eq!(scorer.score(&q, &docs(&[("a", "")]), None), vec![None]);
        let got = scorer.score(&q, &docs(&[("zebra", "")]), None);
        assert!(got[0].is_some());
    }

    /// The index's answer by row id reaches the rows whatever the ids: a
    /// small one through the table of positions, one far past the
    /// sessions' count (ids grow as files are read again) by its path;
    /// an id the table does not name, nowhere.
    #[test]
    fn answers_by_row_id_reach_their_rows() {
        let d = docs(&[("a", ""), ("b", ""), ("c", "")]);
        let paths: PathsById = [
            (7u32, d.0[0].0.as_os_arc().clone()),
            (50_000_000, d.0[2].0.as_os_arc().clone()),
        ]
        .into_iter()
        .collect();
        let hits = BodyHits::of_ids(
            vec![(7, [1, 0, 0]), (50_000_000, [0, 0, 1]), (9, [1, 0, 0])],
            Arc::new(paths),
        );
        let q = Query::parse("tokenizer");
        let mut scorer = Scorer::new();
        let got = scorer.score(&q, &d, Some(&hits));
        assert!(
            got[0].is_some() && got[1].is_none() && got[2].is_some(),
            "{got:?}"
        );
        // The tiers rank: conversation text above tool output.
        assert!(got[0] > got[2], "{got:?}");
        assert_eq!(hits.get(&PathBuf::from("/s/c.jsonl")), Some(1));
        assert_eq!(hits.len(), 2);
        // Again, from the table made for these paths.
        assert_eq!(scorer.score(&q, &d, Some(&hits)), got);
    }

    #[test]
    fn body_bits_count_for_rows_without_text() {
        let d = docs(&[("a", ""), ("b", "")]);
        let q = Query::parse("tokenizer");
        let hits: BodyHits = [(PathBuf::from("/s/b.jsonl"), 1u32)].into_iter().collect();
        let got = Scorer::new().score(&q, &d, Some(&hits));
        assert!(got[0].is_none() && got[1].is_some());
    }

    /// A pass stopped by a newer query is not remembered: the next one to
    /// ask scores the term whole.
    #[test]
    fn a_stopped_pass_is_not_remembered() {
        let names: Vec<String> = (0..1000).map(|i| format!("parser {i}")).collect();
        let pairs: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), "")).collect();
        let d = docs(&pairs);
        let q = Query::parse_at("parser", 0);
        let mut scorer = Scorer::new();
        assert!(!scorer.prepare(&q, &d, &|| true));
        let fresh = Scorer::new().score(&q, &d, None);
        assert!(fresh.iter().all(Option::is_some));
        assert_eq!(scorer.score(&q, &d, None), fresh);
        assert!(scorer.prepare(&q, &d, &|| false));
    }
}
