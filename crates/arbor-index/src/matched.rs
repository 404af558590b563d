//! What a dictionary lookup of the word being typed leaves for the next
//! key: the terms it matched, with their bytes side by side, and how many
//! of their posting lists name each session. Typing extends the word
//! (`sess` → `sessi`), and a term holding `sessi` holds `sess`, so the next
//! lookup looks only at those terms.
//!
//! Why their bytes are copied: the matched terms lie scattered over
//! dictionaries of hundreds of megabytes (the tool output's, at 100,000
//! sessions), and looking at each where it lies was a cache miss per term:
//! ~50 ms a key for the ~300,000 terms holding `sess`. Side by side, one
//! `memmem` pass over a few megabytes finds those still matching.

use std::collections::HashMap;

use memchr::memmem;

use super::codec::FxBuild;
use super::terms::{Match, Segment};

/// The terms one lookup matched, per segment of its kind.
pub(super) struct Matched {
    pub needle: String,
    /// Per segment, the numbers of the terms matched, in dictionary order.
    pub terms: Vec<Vec<u32>>,
    /// Their bytes in the order of `terms`, each followed by `\n` (no term
    /// holds one).
    text: Vec<u8>,
    /// The size of their posting lists (what reading them costs).
    pub post_bytes: usize,
    /// For each session, in how many of those terms' posting lists it is,
    /// once a lookup counted them.
    pub counts: Option<IdCounts>,
}

/// Matched terms are kept only up to this many, and this many bytes (per
/// kind of segment: `ses` is ~13 MB of tool output terms at 100,000
/// sessions; a letter or two, which matches millions, is not kept).
const KEEP_TERMS: usize = 1 << 20;
pub(super) const KEEP_BYTES: usize = 16 << 20;

impl Matched {
    /// The terms of `segs` numbered in `terms` (per segment, in order),
    /// copied; `None` when there are too many to keep.
    #[cfg(test)]
    pub fn new(needle: &str, segs: &[&Segment], terms: Vec<Vec<u32>>) -> Option<Matched> {
        let mut text = Vec::new();
        for (s, ts) in segs.iter().zip(&terms) {
            for &t in ts {
                text.extend_from_slice(s.term(t as usize));
                text.push(b'\n');
            }
        }
        Matched::of_text(needle, segs, terms, text)
    }

    /// The terms of `segs` numbered in `terms` (per segment, in order),
    /// whose bytes `text` holds (in that order, each followed by `\n`) as
    /// the lookup copied them; `None` when there are too many to keep.
    pub fn of_text(
        needle: &str,
        segs: &[&Segment],
        terms: Vec<Vec<u32>>,
        text: Vec<u8>,
    ) -> Option<Matched> {
        if terms.len() != segs.len()
            || terms.iter().map(Vec::len).sum::<usize>() > KEEP_TERMS
            || text.len() > KEEP_BYTES
        {
            return None;
        }
        let post_bytes = segs
            .iter()
            .zip(&terms)
            .flat_map(|(s, ts)| ts.iter().map(|&t| s.postings_range(t as usize)))
            .map(|(a, b)| b - a)
            .sum();
        Some(Matched {
            needle: needle.to_string(),
            terms,
            text,
            post_bytes,
            counts: None,
        })
    }

    /// Whether every term `needle` can match (as `how` says) is among
    /// these: it extends this one's needle.
    pub fn narrows_to(&self, needle: &str, how: Match) -> bool {
        // A term holding `sessi` holds `sess`: the same test, with the new
        // needle as the term.
        how.term(needle.as_bytes(), self.needle.as_bytes())
    }

    /// The terms among these that `needle` matches as `how` says (it
    /// narrows this one's needle), and those it does not, per segment. The
    /// kept terms' `post_bytes` (0 here) is the caller's to set: it knows
    /// the segments.
    pub fn narrow(&self, needle: &str, how: Match) -> Narrowed {
        let n = needle.as_bytes();
        let mut out = Narrowed {
            kept: Matched {
                needle: needle.to_string(),
                terms: vec![Vec::new(); self.terms.len()],
                text: Vec::with_capacity(self.text.len()),
                post_bytes: 0,
                counts: None,
            },
            dropped: vec![Vec::new(); self.terms.len()],
        };
        let mut at = Cursor::new(self);
        if matches!(how, Match::Contains) && !n.is_empty() && !n.contains(&b'\n') {
            // A match never crosses a `\n`: it lies in the term it starts in.
            let mut taken = usize::MAX;
            for p in memmem::find_iter(&self.text, n) {
                while at.end <= p {
                    if taken != at.global {
                        out.drop(&at);
                    }
                    at.next(self);
                }
                if taken != at.global {
                    taken = at.global;
                    out.keep(&at, self);
                }
            }
            while at.seg < self.terms.len() {
                if taken != at.global {
                    out.drop(&at);
                }
                at.next(self);
            }
        } else {
            while at.seg < self.terms.len() {
                if how.term(&self.text[at.start..at.end], n) {
                    out.keep(&at, self);
                } else {
                    out.drop(&at);
                }
                at.next(self);
            }
        }
        out
    }
}

/// [`Matched::narrow`]'s answer.
pub(super) struct Narrowed {
    /// The terms still matched (without counts).
    pub kept: Matched,
    /// Per segment, the terms no longer matched.
    pub dropped: Vec<Vec<u32>>,
}

impl Narrowed {
    fn keep(&mut self, at: &Cursor, from: &Matched) {
        self.kept.terms[at.seg].push(from.terms[at.seg][at.idx]);
        self.kept
            .text
            .extend_from_slice(&from.text[at.start..=at.end]);
    }

    fn drop(&mut self, at: &Cursor) {
        // Only ever called on a term the cursor stands on.
        self.dropped[at.seg].push(at.term);
    }
}

/// Where a walk through [`Matched::text`] stands: on term `idx` of segment
/// `seg` (the `global`-th term), whose bytes are `text[start..end]`
/// (`text[end]` is its `\n`). Past the last term, `seg` is the number of
/// segments.
struct Cursor<'m> {
    seg: usize,
    idx: usize,
    global: usize,
    term: u32,
    start: usize,
    end: usize,
    /// The `\n`s after the current term's.
    ends: memchr::Memchr<'m>,
}

impl<'m> Cursor<'m> {
    fn new(m: &'m Matched) -> Cursor<'m> {
        let mut c = Cursor {
            seg: 0,
            idx: 0,
            global: 0,
            term: 0,
            start: 0,
            end: 0,
            ends: memchr::memchr_iter(b'\n', &m.text),
        };
        c.settle(m);
        c
    }

    /// Moves onto the next term.
    fn next(&mut self, m: &Matched) {
        if self.seg >= m.terms.len() {
            return;
        }
        self.idx += 1;
        self.global += 1;
        self.start = self.end + 1;
        self.settle(m);
    }

    /// From `seg` and `idx`: skips segments left without terms and finds
    /// where the term ends.
    fn settle(&mut self, m: &Matched) {
        while self.seg < m.terms.len() && self.idx >= m.terms[self.seg].len() {
            self.seg += 1;
            self.idx = 0;
        }
        if self.seg >= m.terms.len() {
            self.start = m.text.len();
            self.end = usize::MAX;
            return;
        }
        self.term = m.terms[self.seg][self.idx];
        self.end = self.ends.next().unwrap_or(m.text.len());
    }
}

/// How many times each session was counted (see [`Matched::counts`]).
#[derive(Default)]
pub(super) struct IdCounts {
    dense: Vec<u32>,
    /// Ids too large for `dense`.
    large: HashMap<u32, u32, FxBuild>,
}

/// Ids below this are counted in `dense` (at most 16 MiB).
const DENSE_IDS: u32 = 1 << 22;

impl IdCounts {
    pub fn add(&mut self, id: u32) {
        if id >= DENSE_IDS {
            *self.large.entry(id).or_default() += 1;
            return;
        }
        let i = id as usize;
        if i >= self.dense.len() {
            self.dense.resize(i + 1, 0);
        }
        self.dense[i] += 1;
    }

    /// Takes one count of `id` away (the lists taken away were among those
    /// counted).
    pub fn remove(&mut self, id: u32) {
        if id >= DENSE_IDS {
            if let Some(n) = self.large.get_mut(&id) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.large.remove(&id);
                }
            }
            return;
        }
        if let Some(n) = self.dense.get_mut(id as usize) {
            *n = n.saturating_sub(1);
        }
    }

    /// Each session counted at least once.
    pub fn for_each_id(&self, f: &mut dyn FnMut(u32)) {
        for (id, &n) in self.dense.iter().enumerate() {
            if n > 0 {
                f(id as u32);
            }
        }
        for &id in self.large.keys() {
            f(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(terms: &[&str]) -> Segment {
        // As the index writes one: a `\n` before the first term and after
        // each; the count, where each term starts, and empty posting lists.
        let mut bytes = vec![b'\n'];
        let mut starts = (terms.len() as u32).to_le_bytes().to_vec();
        for t in terms {
            starts.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            bytes.extend_from_slice(t.as_bytes());
            bytes.push(b'\n');
        }
        starts.extend(std::iter::repeat_n(0u8, 4 * (terms.len() + 1)));
        Segment::dictionary_only(bytes, &crate::terms::pack_starts(&starts)).unwrap()
    }

    /// Narrowing the copied terms finds what looking at each term in its
    /// dictionary finds, for every kind of match, across empty segments.
    #[test]
    fn narrowing_keeps_exactly_the_terms_still_matching() {
        let a = ["parse", "parser", "sparse", "spa", "xparsex"];
        let b: [&str; 0] = [];
        let c = ["parsed", "par", "apart", "parse"];
        let segs = [segment(&a), segment(&b), segment(&c)];
        let refs: Vec<&Segment> = segs.iter().collect();
        let all: Vec<Vec<u32>> = refs.iter().map(|s| (0..s.len() as u32).collect()).collect();
        let m = Matched::new("", &refs, all.clone()).unwrap();
        for how in [
            Match::Contains,
            Match::StartsWith,
            Match::EndsWith,
            Match::Exact,
        ] {
            for needle in [
                "par", "pars", "parse", "arse", "rse", "x", "s", "zzz", "parsed",
            ] {
                let got = m.narrow(needle, how);
                for (k, s) in refs.iter().enumerate() {
                    let want: Vec<u32> = (0..s.len() as u32)
                        .filter(|&t| {
                            let mut found = false;
                            s.find(needle.as_bytes(), how, &mut |f| found |= f == t as usize);
                            found
                        })
                        .collect();
                    let dropped: Vec<u32> = all[k]
                        .iter()
                        .copied()
                        .filter(|t| !want.contains(t))
                        .collect();
                    assert_eq!(got.kept.terms[k], want, "{needle} {how:?} segment {k}");
                    assert_eq!(got.dropped[k], dropped, "{needle} {how:?} segment {k}");
                }
                // The kept text is the kept terms' bytes, and narrows again.
                let again = got.kept.narrow(needle, how);
                assert_eq!(again.kept.terms, got.kept.terms, "{needle} {how:?}");
                assert!(again.dropped.iter().all(Vec::is_empty));
            }
        }
    }

    #[test]
    fn counts_add_and_remove() {
        let mut c = IdCounts::default();
        for id in [3, 3, 9, DENSE_IDS + 5, DENSE_IDS + 5] {
            c.add(id);
        }
        c.remove(3);
        c.remove(9);
        c.remove(DENSE_IDS + 5);
        let mut ids = Vec::new();
        c.for_each_id(&mut |id| ids.push(id));
        assert_eq!(ids, [3, DENSE_IDS + 5]);
        c.remove(DENSE_IDS + 5);
        ids.clear();
        c.for_each_id(&mut |id| ids.push(id));
        assert_eq!(ids, [3]);
    }
}
