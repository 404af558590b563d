//! The word index: which sessions contain which whitespace-separated tokens.
//!
//! Session text is normalized (lowercased, whitespace runs collapsed to one
//! space) and split on spaces. A *segment* holds a sorted term dictionary and,
//! per term, the ids of the files whose text contains it. Segments are
//! immutable; new text makes a new segment, and small segments are merged.
//!
//! The dictionary is one byte string `\n term \n term \n … \n`, so substring
//! questions about terms are answered with one `memmem` scan each:
//! "contains w" finds `w`, "ends with w" finds `w\n`, "starts with w" finds
//! `\nw`, "is w" finds `\nw\n`. Since a token never contains a space, a word
//! is a substring of a text exactly when it is a substring of one of its terms.

use std::collections::HashMap;

use memchr::memmem;

use super::codec::FxBuild;

/// Gathers postings in memory until they are written as a segment.
#[derive(Default)]
pub struct SegmentBuilder {
    map: HashMap<Box<[u8]>, Vec<u32>, FxBuild>,
    postings: usize,
    term_bytes: usize,
    docs: usize,
}

/// Flush a builder above roughly this many bytes of memory.
const BUILDER_LIMIT: usize = 48 << 20;

impl SegmentBuilder {
    /// Adds the distinct terms of one file's new text.
    pub fn add<'a>(&mut self, file_id: u32, terms: impl IntoIterator<Item = &'a [u8]>) {
        self.docs += 1;
        for t in terms {
            match self.map.get_mut(t) {
                Some(v) => {
                    if v.last() != Some(&file_id) {
                        v.push(file_id);
                        self.postings += 1;
                    }
                }
                None => {
                    self.term_bytes += t.len();
                    self.postings += 1;
                    self.map.insert(t.into(), vec![file_id]);
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn docs(&self) -> usize {
        self.docs
    }

    pub fn full(&self) -> bool {
        self.postings * 4 + self.map.len() * 96 + self.term_bytes > BUILDER_LIMIT
    }

    /// Encodes and empties the builder.
    pub fn take(&mut self) -> Encoded {
        let map = std::mem::take(&mut self.map);
        let docs = std::mem::take(&mut self.docs);
        self.postings = 0;
        self.term_bytes = 0;
        let mut terms: Vec<(Box<[u8]>, Vec<u32>)> = map.into_iter().collect();
        terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut w = Writer::default();
        for (t, mut ids) in terms {
            ids.sort_unstable();
            ids.dedup();
            w.push(&t, &ids);
        }
        w.finish(docs)
    }
}

/// A segment ready to be stored.
pub struct Encoded {
    pub docs: usize,
    pub terms: Vec<u8>,
    pub starts: Vec<u8>,
    pub postings: Vec<u8>,
}

impl Encoded {
    pub fn bytes(&self) -> usize {
        self.terms.len() + self.starts.len() + self.postings.len()
    }
}

#[derive(Default)]
struct Writer {
    terms: Vec<u8>,
    term_starts: Vec<u32>,
    post_starts: Vec<u32>,
    postings: Vec<u8>,
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

impl Writer {
    /// `ids` sorted and distinct; terms pushed in increasing order.
    fn push(&mut self, term: &[u8], ids: &[u32]) {
        if ids.is_empty() {
            return;
        }
        if self.terms.is_empty() {
            self.terms.push(b'\n');
        }
        self.term_starts.push(self.terms.len() as u32);
        self.terms.extend_from_slice(term);
        self.terms.push(b'\n');
        self.post_starts.push(self.postings.len() as u32);
        let mut last = 0u32;
        for &id in ids {
            put_varint(&mut self.postings, id - last);
            last = id;
        }
    }

    fn finish(mut self, docs: usize) -> Encoded {
        if self.terms.is_empty() {
            self.terms.push(b'\n');
        }
        let n = self.term_starts.len();
        self.post_starts.push(self.postings.len() as u32);
        let mut starts = Vec::with_capacity(4 + 8 * n + 4);
        starts.extend_from_slice(&(n as u32).to_le_bytes());
        for s in self.term_starts.iter().chain(&self.post_starts) {
            starts.extend_from_slice(&s.to_le_bytes());
        }
        Encoded {
            docs,
            terms: self.terms,
            starts,
            postings: self.postings,
        }
    }
}

/// A stored segment, read back.
pub struct Segment {
    terms: Vec<u8>,
    term_starts: Vec<u32>,
    post_starts: Vec<u32>,
    postings: Vec<u8>,
}

impl Segment {
    /// `None` when the blobs are inconsistent (a corrupt index).
    pub fn from_blobs(terms: Vec<u8>, starts: &[u8], postings: Vec<u8>) -> Option<Segment> {
        let n = u32::from_le_bytes(starts.get(..4)?.try_into().ok()?) as usize;
        let words: Vec<u32> = starts[4..]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        if words.len() != 2 * n + 1 {
            return None;
        }
        let term_starts = words[..n].to_vec();
        let post_starts = words[n..].to_vec();
        let ok = term_starts.iter().all(|&s| (s as usize) <= terms.len())
            && post_starts.windows(2).all(|w| w[0] <= w[1])
            && post_starts
                .last()
                .is_some_and(|&e| e as usize == postings.len());
        ok.then_some(Segment {
            terms,
            term_starts,
            post_starts,
            postings,
        })
    }

    pub fn len(&self) -> usize {
        self.term_starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.term_starts.is_empty()
    }

    pub fn term(&self, t: usize) -> &[u8] {
        let s = self.term_starts[t] as usize;
        let e = self
            .term_starts
            .get(t + 1)
            .map_or(self.terms.len(), |&e| e as usize)
            - 1;
        &self.terms[s..e]
    }

    /// The term holding byte `pos` of the dictionary.
    fn term_at(&self, pos: usize) -> Option<usize> {
        let k = self.term_starts.partition_point(|&s| (s as usize) <= pos);
        k.checked_sub(1)
    }

    /// Calls `f` with each file id of term `t`.
    pub fn postings(&self, t: usize, f: &mut dyn FnMut(u32)) {
        let s = self.post_starts[t] as usize;
        let e = self.post_starts[t + 1] as usize;
        let b = &self.postings[s..e];
        let (mut i, mut id) = (0usize, 0u32);
        while i < b.len() {
            let mut v = 0u32;
            let mut shift = 0;
            while i < b.len() {
                let byte = b[i];
                i += 1;
                v |= ((byte & 0x7f) as u32) << shift;
                if byte < 0x80 {
                    break;
                }
                shift += 7;
            }
            id = id.wrapping_add(v);
            f(id);
        }
    }

    /// Terms that match `how`; each term reported once, in order.
    pub fn find(&self, needle: &[u8], how: Match, f: &mut dyn FnMut(usize)) {
        if needle.is_empty() || self.is_empty() || needle.contains(&b'\n') {
            return;
        }
        let pattern: Vec<u8> = match how {
            Match::Contains => needle.to_vec(),
            Match::EndsWith => [needle, b"\n"].concat(),
            Match::StartsWith => [b"\n", needle].concat(),
            Match::Exact => [b"\n", needle, b"\n"].concat(),
        };
        let finder = memmem::Finder::new(&pattern);
        let mut last = None;
        let mut from = 0usize;
        while let Some(p) = finder.find(&self.terms[from..]) {
            let pos = from + p;
            // For patterns starting with '\n', the term begins just after it.
            let at = if matches!(how, Match::StartsWith | Match::Exact) {
                pos + 1
            } else {
                pos
            };
            if let Some(t) = self.term_at(at) {
                if last != Some(t) {
                    f(t);
                    last = Some(t);
                }
                // Continue after this term.
                from = self
                    .term_starts
                    .get(t + 1)
                    .map_or(self.terms.len(), |&e| e as usize - 1);
            } else {
                from = pos + 1;
            }
            if from >= self.terms.len() {
                break;
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match {
    Contains,
    EndsWith,
    StartsWith,
    Exact,
}

/// Merges segments, dropping ids for which `live` is false.
pub fn merge(segs: &[Segment], live: &dyn Fn(u32) -> bool) -> Encoded {
    let mut heads = vec![0usize; segs.len()];
    let mut w = Writer::default();
    let mut ids = Vec::new();
    loop {
        let mut min: Option<&[u8]> = None;
        for (s, &h) in segs.iter().zip(&heads) {
            if h < s.len() {
                let t = s.term(h);
                if min.is_none_or(|m| t < m) {
                    min = Some(t);
                }
            }
        }
        let Some(term) = min else { break };
        let term = term.to_vec();
        ids.clear();
        for (s, h) in segs.iter().zip(heads.iter_mut()) {
            if *h < s.len() && s.term(*h) == term.as_slice() {
                s.postings(*h, &mut |id| {
                    if live(id) {
                        ids.push(id)
                    }
                });
                *h += 1;
            }
        }
        ids.sort_unstable();
        ids.dedup();
        w.push(&term, &ids);
    }
    w.finish(0)
}

/// The distinct space-separated tokens of a normalized text.
pub fn distinct_tokens(text: &str) -> Vec<&[u8]> {
    let mut seen: std::collections::HashSet<&[u8], FxBuild> = Default::default();
    text.as_bytes()
        .split(|&b| b == b' ')
        .filter(|t| !t.is_empty() && seen.insert(t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(docs: &[(u32, &str)]) -> Segment {
        let mut b = SegmentBuilder::default();
        for (id, text) in docs {
            b.add(*id, distinct_tokens(text));
        }
        let e = b.take();
        Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap()
    }

    fn ids(s: &Segment, needle: &str, how: Match) -> Vec<u32> {
        let mut out = Vec::new();
        s.find(needle.as_bytes(), how, &mut |t| {
            s.postings(t, &mut |id| out.push(id))
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    #[test]
    fn lookups() {
        let s = seg(&[
            (1, "the quick brown fox"),
            (2, "quickly foxes"),
            (300, "fox brown"),
        ]);
        assert_eq!(ids(&s, "fox", Match::Contains), [1, 2, 300]);
        assert_eq!(ids(&s, "fox", Match::Exact), [1, 300]);
        assert_eq!(ids(&s, "ick", Match::Contains), [1, 2]);
        assert_eq!(ids(&s, "ck", Match::EndsWith), [1]);
        assert_eq!(ids(&s, "quick", Match::StartsWith), [1, 2]);
        assert_eq!(ids(&s, "own", Match::EndsWith), [1, 300]);
        assert_eq!(ids(&s, "zebra", Match::Contains), Vec::<u32>::new());
        assert_eq!(ids(&s, "x f", Match::Contains), Vec::<u32>::new());
    }

    #[test]
    fn merging_unions_and_drops_dead_ids() {
        let a = seg(&[(1, "alpha beta"), (2, "beta")]);
        let b = seg(&[(1, "gamma"), (3, "beta alpha")]);
        let e = merge(&[a, b], &|id| id != 2);
        let m = Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap();
        assert_eq!(ids(&m, "beta", Match::Exact), [1, 3]);
        assert_eq!(ids(&m, "alpha", Match::Exact), [1, 3]);
        assert_eq!(ids(&m, "gamma", Match::Exact), [1]);
        assert_eq!(m.len(), 3);
    }
}
