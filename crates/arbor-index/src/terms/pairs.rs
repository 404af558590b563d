//! Word pairs: adjacent words of a text, keyed by their words' numbers,
//! which let a phrase's candidates be narrowed by its pairs.

/// The number of an empty side: its pair is a half pair (`t1 ` or ` t2`,
/// see [`distinct_pair_ranges`]), or none when both are empty. No side
/// table holds that many sides.
pub const EMPTY_SIDE: u32 = u32::MAX - 1;

/// A pair of sides as one number: `left << 32 | right`, ordered as the
/// pairs of numbers are.
#[inline]
pub fn pair_key(left: u32, right: u32) -> u64 {
    u64::from(left) << 32 | u64::from(right)
}

/// The two side numbers of a [`pair_key`].
#[inline]
pub fn pair_sides(key: u64) -> (u32, u32) {
    ((key >> 32) as u32, key as u32)
}

/// One file's pair sides by number (a [`TermSet`]'s parts), which its
/// [`PairSet`]s' keys name.
#[derive(Default)]
pub struct Sides {
    bytes: Vec<u8>,
    ranges: Vec<(u32, u32)>,
}

impl Sides {
    pub fn new((bytes, ranges): (Vec<u8>, Vec<(u32, u32)>)) -> Sides {
        Sides { bytes, ranges }
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Roughly the memory it holds.
    pub fn bytes(&self) -> usize {
        self.bytes.len() + self.ranges.len() * 8
    }

    /// Side `n` ([`EMPTY_SIDE`] or a number past the table: empty).
    pub fn get(&self, n: u32) -> &[u8] {
        self.ranges
            .get(n as usize)
            .and_then(|&(s, l)| self.bytes.get(s as usize..(s + l) as usize))
            .unwrap_or_default()
    }

    /// The bytes of a pair (`left right`): the writer builds them in its
    /// segment's arena; the tests read them here.
    #[cfg(test)]
    pub fn pair(&self, key: u64) -> Vec<u8> {
        let (l, r) = pair_sides(key);
        [self.get(l), b" ", self.get(r)].concat()
    }
}

/// The distinct pairs of numbers (of terms in a [`TermSet`]) of a text:
/// its word pairs found by number, so the hot loop never copies or
/// compares a pair's bytes (they are written once per distinct pair, by
/// the caller).
///
/// Each pair is appended as one integer, and the log is sorted and its
/// repeats dropped when it fills and at the end: a build spends about as
/// long as with a table of the distinct pairs probed per word, and this
/// keeps no table to size, zero and grow per file. (A small cache of the
/// pairs just seen, to append fewer, was measured: its probe cost as much
/// as the sorting it saved.) The sort is a radix sort on the bytes the
/// keys use: a file's side numbers are small, so it takes four passes or
/// fewer over the log where a comparison sort took about twenty.
pub struct PairSet {
    /// Packed pairs ([`packed`]); sorted and distinct up to `sorted`.
    log: Vec<u64>,
    sorted: usize,
    /// The length at which the log is compacted (it grows with the number
    /// of distinct pairs, not with the text: memory stays bounded by them).
    cap: usize,
    /// The radix sort's other half.
    spare: Vec<u64>,
}

/// Where a [`PairSet`] first compacts its log (2 MB).
pub(super) const PAIR_LOG_CAP: usize = 1 << 18;

/// A pair as the log holds it: each side number plus 2 (wrapping), so that
/// [`EMPTY_SIDE`] is 0 and every number in use stays small.
#[inline]
pub(super) fn packed(first: u32, second: u32) -> u64 {
    pair_key(first.wrapping_add(2), second.wrapping_add(2))
}

/// The [`pair_key`] of a [`packed`] pair.
#[inline]
fn unpacked(k: u64) -> u64 {
    let (a, b) = pair_sides(k);
    pair_key(a.wrapping_sub(2), b.wrapping_sub(2))
}

impl Default for PairSet {
    fn default() -> Self {
        PairSet {
            log: Vec::new(),
            sorted: 0,
            cap: PAIR_LOG_CAP,
            spare: Vec::new(),
        }
    }
}

/// Sorts `v` by a least-significant-digit radix sort over the bytes that
/// are not zero in every key (a byte all keys share is a pass skipped too).
pub(super) fn radix_sort(v: &mut Vec<u64>, spare: &mut Vec<u64>) {
    if v.len() <= 64 {
        v.sort_unstable();
        return;
    }
    let used = v.iter().fold(0, |a, &k| a | k);
    let mut digits = [0u32; 8];
    let mut nd = 0;
    for d in 0..8 {
        if (used >> (8 * d)) & 0xff != 0 {
            digits[nd] = d;
            nd += 1;
        }
    }
    let digits = &digits[..nd];
    let mut counts = [[0u32; 256]; 8];
    for &k in v.iter() {
        for (c, &d) in counts.iter_mut().zip(digits) {
            c[(k >> (8 * d)) as usize & 0xff] += 1;
        }
    }
    // Every slot is written before it is read: only new room is zeroed
    // (zeroing the whole spare again was a pass over it per compaction).
    if spare.len() < v.len() {
        spare.resize(v.len(), 0);
    } else {
        spare.truncate(v.len());
    }
    for (c, &d) in counts.iter_mut().zip(digits) {
        if c.iter().any(|&n| n as usize == v.len()) {
            continue;
        }
        let mut sum = 0;
        for n in c.iter_mut() {
            let here = *n;
            *n = sum;
            sum += here;
        }
        for &k in v.iter() {
            let b = (k >> (8 * d)) as usize & 0xff;
            spare[c[b] as usize] = k;
            c[b] += 1;
        }
        std::mem::swap(v, spare);
    }
}

impl PairSet {
    #[inline]
    pub fn insert(&mut self, first: u32, second: u32) {
        self.log.push(packed(first, second));
        if self.log.len() >= self.cap {
            self.compact();
        }
    }

    /// Sorts the log and drops its repeats.
    fn compact(&mut self) {
        if self.sorted < self.log.len() {
            radix_sort(&mut self.log, &mut self.spare);
            self.log.dedup();
            self.sorted = self.log.len();
        }
        // Room for as many again before the next compaction.
        self.cap = self.cap.max(self.log.len() * 2);
    }

    /// How many distinct pairs (compacts the log).
    #[cfg(test)]
    pub fn len(&mut self) -> usize {
        self.compact();
        self.log.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.log.is_empty()
    }

    /// The distinct pairs, each once, in no particular order (the index
    /// takes them by [`PairSet::take_keys`]; the tests read them here).
    #[cfg(test)]
    pub fn pairs(&mut self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.compact();
        self.log.iter().map(|&k| pair_sides(unpacked(k)))
    }

    /// The distinct pairs' keys ([`pair_key`]), each once, taken out (the
    /// set is left empty; its log keeps its memory for the next file).
    pub fn take_keys(&mut self) -> Vec<u64> {
        self.compact();
        let keys = self.log.iter().map(|&k| unpacked(k)).collect();
        self.clear();
        keys
    }

    /// Empties the set, keeping its log's memory up to the first cap.
    /// A bigger log is let go and a new one taken rather than shrunk:
    /// `shrink_to` reallocates, which copies the cap's worth of bytes that
    /// are no longer wanted (2 MB twice per file with many pairs).
    pub fn clear(&mut self) {
        if self.log.capacity() > PAIR_LOG_CAP {
            self.log = Vec::with_capacity(PAIR_LOG_CAP);
        }
        if self.spare.capacity() > PAIR_LOG_CAP {
            self.spare = Vec::new();
        }
        self.log.clear();
        self.sorted = 0;
        self.cap = PAIR_LOG_CAP;
    }
}

/// The end of a term that a pair keeps of it as its first word: its
/// longest end without a digit or a `/`, at most [`PAIR_SIDE_MAX`] bytes
/// (cut at a character). Pairs are there to make a phrase of common words
/// cheap (each word alone is in most sessions), and a phrase `w1 w2` is in
/// a text exactly when one of its pairs `t1 t2` has `t1` ending in `w1`
/// and `t2` starting with `w2`; kept whole, the terms of tool output (paths,
/// line numbers, hashes) made nearly every pair unique, over 90 % of the
/// pairs' bytes (a 5.7 GB store's index passed 2.6 GB). Cut to these sides
/// (`src/ui/render.rs:42` ends in `:`, starts with `src`), they still
/// answer every phrase whose words hold no digit or `/` and are at most
/// [`PAIR_SIDE_MAX`] bytes ([`pair_side_word`]) exactly; the others are
/// answered from the words' dictionaries (see `index::search`).
pub fn pair_left(t: &[u8]) -> &[u8] {
    let clean = t
        .iter()
        .rposition(|&b| b.is_ascii_digit() || b == b'/')
        .map_or(0, |i| i + 1);
    let mut start = clean.max(t.len().saturating_sub(PAIR_SIDE_MAX));
    // At a character: not inside a UTF-8 sequence.
    while start < t.len() && (t[start] & 0xc0) == 0x80 {
        start += 1;
    }
    &t[start..]
}

/// The start of a term that a pair keeps of it as its second word (see
/// [`pair_left`]).
pub fn pair_right(t: &[u8]) -> &[u8] {
    let clean = t
        .iter()
        .position(|&b| b.is_ascii_digit() || b == b'/')
        .unwrap_or(t.len());
    let mut end = clean.min(PAIR_SIDE_MAX);
    while end > 0 && end < t.len() && (t[end] & 0xc0) == 0x80 {
        end -= 1;
    }
    &t[..end]
}

/// Whether a phrase's word is kept whole by [`pair_left`] and
/// [`pair_right`] wherever a term holds it at that end: then the pairs
/// answer for it.
pub fn pair_side_word(w: &[u8]) -> bool {
    !w.is_empty() && w.len() <= PAIR_SIDE_MAX && !w.iter().any(|&b| b.is_ascii_digit() || b == b'/')
}

/// The most bytes of a term a pair keeps on each side.
pub const PAIR_SIDE_MAX: usize = 16;
