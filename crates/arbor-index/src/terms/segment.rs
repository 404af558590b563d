//! A segment as searches read it: its dictionary scanned with `memmem`,
//! and each term's posting list.

use crate::ascending::Ascending;
use memchr::memmem;

#[cfg(test)]
use super::encoding::decode_postings;
use super::encoding::Steps;

/// A segment's dictionary bytes (`\n term \n term \n … \n`): read into
/// memory, or mapped from the segment's file beside the index (see
/// `db::terms_path`), where they are the page cache's rather than arbor's
/// own (at 100,000 sessions they were 410 MB of the picker's heap).
pub enum TermBytes {
    Owned(Vec<u8>),
    #[cfg(target_os = "linux")]
    Mapped(std::sync::Arc<crate::mapguard::GuardedMap>),
}

impl TermBytes {
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            TermBytes::Owned(v) => v,
            #[cfg(target_os = "linux")]
            TermBytes::Mapped(m) => m.bytes(),
        }
    }

    /// Drops the mapped pages of `from..to` from the resident set (they
    /// read back from the page cache): a scan of a whole dictionary would
    /// otherwise keep all of it resident.
    fn release(&self, from: usize, to: usize) {
        #[cfg(target_os = "linux")]
        if let TermBytes::Mapped(m) = self {
            m.release_range(from, to.saturating_sub(from));
        }
        let _ = (from, to);
    }
}

/// A scan of a mapped dictionary releases what it has read every this many
/// bytes (see [`TermBytes::release`]), and looks for the needle in windows
/// of this size (one search for a needle that is nowhere would read the
/// whole dictionary at once).
pub(super) const SCAN_WINDOW: usize = if cfg!(test) { 4096 } else { 8 << 20 };

/// Drops a mapped dictionary's pages behind a reader going through its
/// terms in order (the terms a lookup matched lie all over a dictionary,
/// and copying them touched every page of it: +380 MB resident for the
/// moment of a first three-letter word at 100,000 sessions).
pub struct Behind<'s> {
    seg: &'s Segment,
    released: usize,
    /// Pages are released once this many bytes of them are behind.
    window: usize,
}

impl Behind<'_> {
    /// Term `t` is about to be read: the pages before it may go.
    pub fn at(&mut self, t: usize) {
        let Some(start) = self.seg.term_starts.get(t) else {
            return;
        };
        let start = start as usize;
        if start > self.released + self.window {
            self.seg.terms.release(self.released, start);
            self.released = start;
        }
    }
}

impl Drop for Behind<'_> {
    /// The pages read since the last release go too: left to the end of
    /// the search, up to a window of them stayed per segment read, ~90 MB
    /// for the first three-letter word at 100,000 sessions.
    fn drop(&mut self) {
        self.seg
            .terms
            .release(self.released, self.seg.terms.bytes().len());
    }
}

/// A stored segment, read back.
pub struct Segment {
    pub(super) terms: TermBytes,
    pub(super) term_starts: Ascending,
    post_starts: Ascending,
    // Read by the tests' lookups only: searches read posting lists from the
    // database (see `search::postings`).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(super) postings: Vec<u8>,
    /// At least the number of distinct ids in its posting lists (0:
    /// unknown; see [`Segment::with_docs`]).
    docs: usize,
    /// What its postings are checked against when read (`None`: not
    /// checked, a segment of the tests).
    check: Option<Box<crate::rowsum::SegmentCheck>>,
}

impl Segment {
    /// `None` when the blobs are inconsistent (a corrupt index).
    #[cfg(test)]
    pub fn from_blobs(terms: Vec<u8>, starts: &[u8], postings: Vec<u8>) -> Option<Segment> {
        Segment::from_parts(TermBytes::Owned(terms), starts, postings)
    }

    /// [`Segment::from_blobs`], with the dictionary's bytes wherever they are.
    #[cfg(test)]
    pub fn from_parts(terms: TermBytes, starts: &[u8], postings: Vec<u8>) -> Option<Segment> {
        let mut s = Segment::dictionary_in(terms, starts)?;
        if s.postings_len() != postings.len() {
            return None;
        }
        s.postings = postings;
        Some(s)
    }

    /// A segment whose dictionary is loaded but not its postings (read
    /// them with [`Segment::postings_range`] and [`decode_postings`]).
    #[cfg(test)]
    pub fn dictionary_only(terms: Vec<u8>, starts: &[u8]) -> Option<Segment> {
        Segment::dictionary_in(TermBytes::Owned(terms), starts)
    }

    /// [`Segment::dictionary_only`], with the dictionary's bytes wherever
    /// they are. `starts` (from the database) is checked against their
    /// length, which a map keeps whatever happens to its file: no term is
    /// ever sliced out of bounds.
    pub fn dictionary_in(terms: TermBytes, starts: &[u8]) -> Option<Segment> {
        let terms_len = terms.bytes().len();
        let n = u32::from_le_bytes(starts.get(..4)?.try_into().ok()?) as usize;
        // `n` is read from the index: each value takes a byte at least, so
        // a corrupt one is refused before anything is sized by it.
        if starts.len() - 4 < n.checked_mul(2)?.checked_add(1)? {
            return None;
        }
        let mut steps = Steps {
            bytes: starts,
            at: 4,
            last: 0,
            left: n,
            bad: false,
        };
        let term_starts = Ascending::from_values(&mut steps, n, true)?;
        if steps.bad || term_starts.len() != n {
            return None;
        }
        steps.last = 0;
        steps.left = n + 1;
        let post_starts = Ascending::from_values(&mut steps, n + 1, false)?;
        if steps.bad || post_starts.len() != n + 1 || steps.at != starts.len() {
            return None;
        }
        let in_bounds = |s: Option<u32>| s.is_none_or(|s| (1..terms_len).contains(&(s as usize)));
        (in_bounds(term_starts.get(0)) && in_bounds(term_starts.last())).then_some(Segment {
            terms,
            term_starts,
            post_starts,
            postings: Vec::new(),
            docs: 0,
            check: None,
        })
    }

    /// The segment, knowing that its posting lists hold at most `docs`
    /// distinct ids (the `docs` column: the files added to a new segment,
    /// the ids written by a merge; 0 in segments merged before it was
    /// counted). A lookup that has seen that many of its ids has seen all.
    pub fn with_docs(mut self, docs: usize) -> Segment {
        self.docs = docs;
        self
    }

    /// The segment, its postings to be checked by `check` when read.
    pub fn with_check(mut self, check: crate::rowsum::SegmentCheck) -> Segment {
        self.check = Some(Box::new(check));
        self
    }

    pub fn check(&self) -> Option<&crate::rowsum::SegmentCheck> {
        self.check.as_deref()
    }

    /// Drops the dictionary's mapped pages from the resident set (see
    /// [`TermBytes::release`]; nothing when it is read into memory).
    pub fn release(&self) {
        self.terms.release(0, usize::MAX);
    }

    /// A reader of this segment's terms in increasing order that drops the
    /// mapped pages behind it (see [`Behind`]).
    pub fn behind(&self) -> Behind<'_> {
        self.behind_every(SCAN_WINDOW)
    }

    /// [`Segment::behind`], releasing every `window` bytes (a merge reads
    /// dozens of dictionaries at once).
    pub(super) fn behind_every(&self, window: usize) -> Behind<'_> {
        Behind {
            seg: self,
            released: 0,
            window,
        }
    }

    /// See [`Segment::with_docs`]; 0 when unknown.
    pub fn docs(&self) -> usize {
        self.docs
    }

    /// The length of the postings blob the dictionary expects.
    pub fn postings_len(&self) -> usize {
        self.post_starts.last().map_or(0, |e| e as usize)
    }

    pub fn len(&self) -> usize {
        self.term_starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.term_starts.is_empty()
    }

    pub fn term(&self, t: usize) -> &[u8] {
        let terms = self.terms.bytes();
        let Some((s, e)) = self.term_starts.pair(t) else {
            panic!("term {t} past {}", self.term_starts.len());
        };
        let e = e.map_or(terms.len(), |e| e as usize) - 1;
        &terms[s as usize..e]
    }

    /// The term whose bytes hold position `pos` of the dictionary, searched
    /// from term `from` on (any, when `from` is 0 or past `pos`): galloping
    /// forward from it, so a nearby term costs a step or two.
    pub(super) fn term_at_from(&self, pos: usize, from: usize) -> Option<usize> {
        let starts = &self.term_starts;
        let le = |s: u32| (s as usize) <= pos;
        // `partition_point_in` gallops from where it starts.
        let from = if starts.get(from).is_some_and(le) {
            from
        } else {
            0
        };
        starts
            .partition_point_in(from, starts.len(), le)
            .checked_sub(1)
    }

    /// Calls `f` with each file id of term `t` (postings must be loaded).
    #[cfg(test)]
    pub fn postings(&self, t: usize, f: &mut dyn FnMut(u32)) {
        let (s, e) = self.postings_range(t);
        decode_postings(&self.postings[s..e], f);
    }

    /// Where term `t`'s posting list lies in the postings blob.
    pub fn postings_range(&self, t: usize) -> (usize, usize) {
        match self.post_starts.pair(t) {
            Some((s, Some(e))) => (s as usize, e as usize),
            _ => panic!("posting list {t} past {}", self.post_starts.len()),
        }
    }

    /// Terms that match `how`; each term reported once, in order.
    #[cfg(test)]
    pub fn find(&self, needle: &[u8], how: Match, f: &mut dyn FnMut(usize)) {
        self.find_while(needle, how, &mut |t| {
            f(t);
            true
        });
    }

    /// [`Segment::find`], in dictionary order, until `f` returns false.
    pub fn find_while(&self, needle: &[u8], how: Match, f: &mut dyn FnMut(usize) -> bool) {
        self.find_in(needle, how, 0..self.len(), f)
    }

    /// The bytes of the dictionary's terms (each followed by `\n`).
    pub fn terms_bytes(&self) -> usize {
        self.terms.bytes().len()
    }

    /// [`Segment::find_while`] among the terms `among` alone: the scans of
    /// consecutive ranges find together what one scan of them all finds
    /// (so a big dictionary can be scanned on several threads).
    pub fn find_in(
        &self,
        needle: &[u8],
        how: Match,
        among: std::ops::Range<usize>,
        f: &mut dyn FnMut(usize) -> bool,
    ) {
        if needle.is_empty() || self.is_empty() || needle.contains(&b'\n') {
            return;
        }
        let all = self.terms.bytes();
        // From the `\n` before the first term (a pattern that starts with
        // one finds it there) to the `\n` after the last.
        let start = match among.start {
            0 => 0,
            t => match self.term_starts.get(t) {
                Some(s) => s as usize - 1,
                None => return,
            },
        };
        let end = self
            .term_starts
            .get(among.end)
            .map_or(all.len(), |e| e as usize)
            .min(all.len());
        if start >= end {
            return;
        }
        let pattern: Vec<u8> = match how {
            Match::Contains => needle.to_vec(),
            Match::EndsWith => [needle, b"\n"].concat(),
            Match::StartsWith => [b"\n", needle].concat(),
            Match::Exact => [b"\n", needle, b"\n"].concat(),
        };
        let finder = memmem::Finder::new(&pattern);
        // Positions past the range's end are not looked at.
        let terms = &all[..end];
        let mut last = None;
        let mut from = start;
        // Up to where the scan's pages were released.
        let mut released = start;
        loop {
            if from - released >= SCAN_WINDOW {
                self.terms.release(released, from);
                released = from;
            }
            let end = (from + SCAN_WINDOW + pattern.len()).min(terms.len());
            let Some(p) = finder.find(&terms[from..end]) else {
                if end == terms.len() {
                    break;
                }
                // The next window overlaps this one by less than a match.
                from = end + 1 - pattern.len();
                continue;
            };
            let pos = from + p;
            // For patterns starting with '\n', the term begins just after it.
            let at = if matches!(how, Match::StartsWith | Match::Exact) {
                pos + 1
            } else {
                pos
            };
            // Matches come in order: the term is searched for from the last
            // one on (a letter is in nearly every term of a dictionary of
            // millions, where a binary search per match was most of a
            // lookup).
            if let Some(t) = self.term_at_from(at, last.map_or(0, |l| l + 1)) {
                if last != Some(t) {
                    if !f(t) {
                        break;
                    }
                    last = Some(t);
                }
                // Continue after this term.
                from = self
                    .term_starts
                    .get(t + 1)
                    .map_or(terms.len(), |e| e as usize - 1);
            } else {
                from = pos + 1;
            }
            if from >= terms.len() {
                break;
            }
        }
        self.terms.release(released, terms.len());
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Match {
    Contains,
    EndsWith,
    StartsWith,
    Exact,
}

impl Match {
    /// Whether one term matches `needle` this way (what [`Segment::find`]
    /// looks for in a whole dictionary).
    pub fn term(self, term: &[u8], needle: &[u8]) -> bool {
        match self {
            Match::Contains => memmem::find(term, needle).is_some(),
            Match::StartsWith => term.starts_with(needle),
            Match::EndsWith => term.ends_with(needle),
            Match::Exact => term == needle,
        }
    }
}
