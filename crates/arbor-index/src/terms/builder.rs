//! Gathering a segment's postings in memory as files are written, and
//! encoding them when the segment is full.

use arbor_util::prefetch::prefetch;

use super::encoding::Writer;
use super::pairs::pair_sides;

/// Gathers postings in memory until they are written as a segment.
///
/// Terms live in one arena and are found through an open-addressing table
/// keyed like `distinct_token_ranges` does (a term of up to 8 bytes is its
/// own key): this is the single writer's hot loop during a build. Postings
/// are logged in the order they come (a term number per posting, a file id
/// per run of them) and sorted into per-term lists when the segment is
/// encoded: appending to a list per term touched a cache line per posting
/// scattered over all of them (half the writer's time in a cold build).
pub struct SegmentBuilder {
    table: Vec<(u64, u32, u32)>,
    arena: Vec<u8>,
    starts: Vec<u32>,
    /// A term number per posting, in the order added.
    log: Vec<u32>,
    /// Per [`SegmentBuilder::add`]: its file id and where its run of `log` ends.
    runs: Vec<(u32, u32)>,
    docs: usize,
    /// The terms and postings it held when last encoded (the next one is
    /// sized for as many).
    terms_seen: usize,
    log_seen: usize,
    /// The slots `table` gets at the first add after an encode (it is
    /// empty until then; see [`SegmentBuilder::sized_like`]).
    table_slots: usize,
}

impl Default for SegmentBuilder {
    fn default() -> Self {
        SegmentBuilder {
            table: vec![(0, 0, 0); 1024],
            arena: Vec::new(),
            starts: Vec::new(),
            log: Vec::new(),
            runs: Vec::new(),
            docs: 0,
            terms_seen: 0,
            log_seen: 0,
            table_slots: 1024,
        }
    }
}

/// How many terms ahead [`SegmentBuilder::add`] asks for their slots.
const LOOKAHEAD: usize = 16;

/// Flush a builder above roughly this many bytes of memory.
const BUILDER_LIMIT: usize = 48 << 20;

/// Flush a builder whose dictionary is small beside its postings above
/// this many bytes of postings. A flush costs mostly its dictionary
/// (written, then merged): where there are few terms (at 10,000 stress
/// sessions the fullest builder held 13,000 terms and 47 MB of postings)
/// flushing early is cheap and bounds the build's memory (139 -> 87 MB,
/// 21 -> 22 s); where there are many (100,000 realistic ones: 430,000
/// terms, 28 MB of dictionary beside 19 MB of postings), flushing at this
/// size merged big dictionaries more often (50 -> 56 s, 287 -> 322 MB).
const POSTINGS_LIMIT: usize = 16 << 20;

/// A term's first 8 bytes as a big-endian number (zero-padded): ordered as
/// the bytes are, so that only terms with equal numbers compare the rest.
#[inline]
fn sort_prefix(t: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = t.len().min(8);
    b[..n].copy_from_slice(&t[..n]);
    u64::from_be_bytes(b)
}

/// A term's key: a term of up to 8 bytes is its own (its bytes as a
/// little-endian number, zero-padded; read with overlapping loads rather
/// than a copy of variable length), a longer one its hash.
#[inline(always)]
pub(super) fn term_key(t: &[u8]) -> u64 {
    let n = t.len();
    if n > 8 {
        use std::hash::Hasher;
        let mut h = crate::codec::FxHasher::default();
        h.write(t);
        h.finish()
    } else if n >= 4 {
        // The two loads overlap on equal bytes, so OR-ing them is exact.
        let lo = u64::from(u32::from_le_bytes([t[0], t[1], t[2], t[3]]));
        let hi = u64::from(u32::from_le_bytes([t[n - 4], t[n - 3], t[n - 2], t[n - 1]]));
        lo | hi << (8 * (n - 4))
    } else if n > 0 {
        let (a, b, c) = (u64::from(t[0]), u64::from(t[n / 2]), u64::from(t[n - 1]));
        a | b << (8 * (n / 2)) | c << (8 * (n - 1))
    } else {
        0
    }
}

/// Whether two terms of the same length, over 8 bytes (whose keys are
/// hashes), are the same: up to 16 bytes by two overlapping loads each,
/// inline (a call to `memcmp` per found long term was a twentieth of a
/// build of realistic sessions, whose tool output is paths and names).
#[inline(always)]
pub(super) fn same_long_term(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if !(8..=16).contains(&n) {
        return a == b;
    }
    // One load each (in bounds: 8 <= n <= 16).
    let at = |x: &[u8], i: usize| {
        x.get(i..i + 8)
            .and_then(|s| <[u8; 8]>::try_from(s).ok())
            .map_or(0, u64::from_le_bytes)
    };
    at(a, 0) == at(b, 0) && at(a, n - 8) == at(b, n - 8)
}

/// Where a term's probe starts: every bit of the key reaches the low bits
/// the tables use (a short term's key is its bytes, and a plain multiply
/// let only its first three bytes choose among 65,536 slots, so terms
/// sharing them, `config`/`confirm`, piled up in one run of slots).
#[inline(always)]
pub(super) fn term_slot(key: u64, len: usize) -> usize {
    // MurmurHash3's finalizer.
    let mut x = key ^ (len as u64).rotate_left(59);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x as usize
}

/// Doubles an open-addressing table of `(key, number, len + 1)` slots (a
/// length of 0 is an empty slot), each entry put back where its probe
/// starts ([`term_slot`]) or after. The one growth of the term tables.
pub(super) fn grow_table(table: &mut Vec<(u64, u32, u32)>) {
    let bigger = table.len() * 2;
    let old = std::mem::replace(table, vec![(0, 0, 0); bigger]);
    let mask = bigger - 1;
    for (k, n, len) in old.into_iter().filter(|e| e.2 != 0) {
        let mut j = term_slot(k, len as usize - 1) & mask;
        while table[j].2 != 0 {
            j = (j + 1) & mask;
        }
        table[j] = (k, n, len);
    }
}

impl SegmentBuilder {
    fn term(&self, t: usize) -> &[u8] {
        let s = self.starts[t] as usize;
        let e = self
            .starts
            .get(t + 1)
            .map_or(self.arena.len(), |&e| e as usize);
        &self.arena[s..e]
    }

    /// Adds the distinct terms of one file's new text (a term given twice
    /// is stored once).
    ///
    /// The table outgrows the caches in a build (millions of terms and word
    /// pairs), so nearly every probe was a cache miss waited for one at a
    /// time: the slots of the terms [`LOOKAHEAD`] places ahead are asked for
    /// first, so that many misses are in flight at once.
    pub fn add<'a>(&mut self, file_id: u32, terms: impl IntoIterator<Item = &'a [u8]>) {
        self.add_keyed(
            file_id,
            terms
                .into_iter()
                .filter(|t| !t.is_empty())
                .map(|t| (term_key(t), t.len(), t)),
        );
    }

    /// The probe loop of [`SegmentBuilder::add`]: `(key, length, term)`.
    ///
    /// A long term found in the table is then compared with its bytes, two
    /// more misses away (its start in `starts`, then the arena): so each
    /// term's slot is asked for [`LOOKAHEAD`] × 3 places ahead, read at × 2
    /// to ask for its start, that start read at × 1 to ask for its bytes
    /// (the writer's CPU ×0.77 on a 10,000-file realistic slice, where it
    /// is most of a first build's). A look ahead is only a hint: a term
    /// added meanwhile, or a probe past its first slot, costs a miss, never
    /// a wrong answer.
    #[inline(always)]
    fn add_keyed<'a>(&mut self, file_id: u32, terms: impl Iterator<Item = (u64, usize, &'a [u8])>) {
        self.docs += 1;
        self.ensure_table();
        let terms: Vec<(u64, &[u8])> = terms.map(|(k, _, t)| (k, t)).collect();
        let n = terms.len();
        let mut found = [u32::MAX; 2 * LOOKAHEAD];
        for &(key, t) in terms.iter().take(3 * LOOKAHEAD) {
            self.prefetch(key, t.len());
        }
        for (i, &(key, t)) in terms.iter().enumerate() {
            if let Some(&(k, a)) = terms.get(i + 3 * LOOKAHEAD) {
                self.prefetch(k, a.len());
            }
            if let Some(&(k, a)) = terms.get(i + 2 * LOOKAHEAD) {
                let j = (i + 2 * LOOKAHEAD) % (2 * LOOKAHEAD);
                found[j] = u32::MAX;
                if a.len() > 8 {
                    let slot = term_slot(k, a.len()) & (self.table.len() - 1);
                    let (sk, idx, len) = self.table[slot];
                    if sk == k && len as usize == a.len() + 1 {
                        found[j] = idx;
                        prefetch(&self.starts, idx as usize);
                    }
                }
            }
            if i + LOOKAHEAD < n {
                let idx = found[(i + LOOKAHEAD) % (2 * LOOKAHEAD)];
                if let Some(&s) = self.starts.get(idx as usize) {
                    prefetch(&self.arena, s as usize);
                }
            }
            let idx = self.slot_of(key, t);
            self.log.push(idx);
        }
        if self.runs.last().map_or(0, |r| r.1 as usize) < self.log.len() {
            self.runs.push((file_id, self.log.len() as u32));
        }
    }

    /// Adds one file's distinct word pairs, each given by its key
    /// ([`pair_key`]) in a numbering of sides that lasts as long as this
    /// builder's contents (the writer's, until it commits): equal keys are
    /// equal pairs, so no pair's bytes are hashed or compared, and they are
    /// written once, when the pair is new (`side` gives a side's bytes).
    ///
    /// A builder is given either pairs this way or terms by
    /// [`SegmentBuilder::add`], never both: their slots are keyed apart.
    pub fn add_pairs<'s>(&mut self, file_id: u32, keys: &[u64], side: impl Fn(u32) -> &'s [u8]) {
        self.docs += 1;
        self.ensure_table();
        for &key in keys.iter().take(LOOKAHEAD) {
            self.prefetch(key, 0);
        }
        for (i, &key) in keys.iter().enumerate() {
            if let Some(&k) = keys.get(i + LOOKAHEAD) {
                self.prefetch(k, 0);
            }
            let idx = self.pair_slot(key, &side);
            self.log.push(idx);
        }
        if self.runs.last().map_or(0, |r| r.1 as usize) < self.log.len() {
            self.runs.push((file_id, self.log.len() as u32));
        }
    }

    /// The number of the pair keyed `key`, added when new. Its slot's length
    /// is 1 (an empty term's, which [`SegmentBuilder::add`] never adds), so
    /// that growing the table finds it where this probe does.
    #[inline(always)]
    fn pair_slot<'s>(&mut self, key: u64, side: &impl Fn(u32) -> &'s [u8]) -> u32 {
        let mask = self.table.len() - 1;
        let mut i = term_slot(key, 0) & mask;
        loop {
            let (k, idx, len) = self.table[i];
            if len == 0 {
                let idx = self.starts.len() as u32;
                self.table[i] = (key, idx, 1);
                self.starts.push(self.arena.len() as u32);
                let (left, right) = pair_sides(key);
                self.arena.extend_from_slice(side(left));
                self.arena.push(b' ');
                self.arena.extend_from_slice(side(right));
                if self.starts.len() * 2 > self.table.len() {
                    self.grow();
                }
                return idx;
            }
            if k == key {
                return idx;
            }
            i = (i + 1) & mask;
        }
    }

    /// Asks for the cache line of the slot where a term's probe starts.
    #[inline(always)]
    fn prefetch(&self, key: u64, len: usize) {
        let i = term_slot(key, len) & (self.table.len() - 1);
        prefetch(&self.table, i);
    }

    /// The number of term `t` (keyed `key`), added when new.
    #[inline(always)]
    fn slot_of(&mut self, key: u64, t: &[u8]) -> u32 {
        let mask = self.table.len() - 1;
        let mut i = term_slot(key, t.len()) & mask;
        loop {
            let (k, idx, len) = self.table[i];
            if len == 0 {
                // A new term (slots hold len + 1; 0 is empty).
                let idx = self.starts.len() as u32;
                self.table[i] = (key, idx, t.len() as u32 + 1);
                self.starts.push(self.arena.len() as u32);
                self.arena.extend_from_slice(t);
                if self.starts.len() * 2 > self.table.len() {
                    self.grow();
                }
                return idx;
            }
            if k == key
                && len as usize == t.len() + 1
                && (t.len() <= 8 || same_long_term(self.term(idx as usize), t))
            {
                return idx;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        grow_table(&mut self.table);
    }

    /// Gives the table its slots, when an encode left it empty.
    #[inline]
    fn ensure_table(&mut self) {
        if self.table.is_empty() {
            self.table = vec![(0, 0, 0); self.table_slots.max(1024)];
        }
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The bytes its buffers hold (their capacities), for the trace.
    pub fn heap_bytes(&self) -> usize {
        self.table.capacity() * 16
            + self.arena.capacity()
            + self.starts.capacity() * 4
            + self.log.capacity() * 4
            + self.runs.capacity() * 8
    }

    pub fn full(&self) -> bool {
        // The log, and as much again for the sorted lists when encoding.
        let postings = self.log.len() * 8;
        let dictionary = self.starts.len() * 40 + self.arena.len();
        postings + dictionary > BUILDER_LIMIT
            || (postings > POSTINGS_LIMIT && dictionary < postings / 4)
    }

    /// Encodes and empties the builder, which is then ready for as much
    /// again (see [`SegmentBuilder::sized_like`]).
    pub fn take(&mut self) -> Encoded {
        let mut b = std::mem::take(self);
        let encoded = b.encode();
        *self = SegmentBuilder::sized_like(&b);
        encoded
    }

    /// An empty builder with room for what `was` held: a build's builders
    /// fill up alike from one commit to the next, and one grown from a
    /// table of 1,024 slots and empty buffers rehashed its table and
    /// copied its buffers a dozen times per commit (a twentieth of a
    /// build of realistic sessions). Nothing is written now: the table is
    /// made at the first add (after the commit has stored and freed the
    /// encoded segment, so the two never add up in the build's peak), and
    /// the buffers' pages are touched as they fill.
    fn sized_like(was: &SegmentBuilder) -> SegmentBuilder {
        let terms = was.terms_seen;
        SegmentBuilder {
            table: Vec::new(),
            table_slots: (terms * 2 + 1).next_power_of_two().max(1024),
            arena: Vec::with_capacity(was.arena.capacity()),
            starts: Vec::with_capacity(terms),
            log: Vec::with_capacity(was.log_seen),
            runs: Vec::with_capacity(was.runs.capacity()),
            docs: 0,
            terms_seen: 0,
            log_seen: 0,
        }
    }

    /// Encodes the builder's postings (leaving its buffers' capacities,
    /// read by [`SegmentBuilder::sized_like`]).
    fn encode(&mut self) -> Encoded {
        let b = self;
        b.terms_seen = b.starts.len();
        b.log_seen = b.log.len();
        // The table only finds terms, and is the builder's biggest part (two
        // to four slots of 16 bytes a term): gone before the sort's lists
        // are made, a commit's peak at 100,000 sessions is ~30 MB lower.
        b.table = Vec::new();
        let n = b.starts.len();
        // Each term's postings, in file order: a counting sort of the log.
        let mut at = vec![0u32; n + 1];
        for &t in &b.log {
            at[t as usize + 1] += 1;
        }
        for t in 0..n {
            at[t + 1] += at[t];
        }
        let bounds = at.clone();
        let mut ids = vec![0u32; b.log.len()];
        let mut from = 0usize;
        for &(file, end) in &b.runs {
            for &t in &b.log[from..end as usize] {
                let slot = &mut at[t as usize];
                ids[*slot as usize] = file;
                *slot += 1;
            }
            from = end as usize;
        }
        b.log = Vec::new();
        // Sorted by each term's first 8 bytes as a number, the rest of the
        // bytes compared only between terms that share those: comparing
        // bytes throughout missed the cache on both terms at every step.
        let mut keyed: Vec<(u64, u32)> =
            (0..n).map(|t| (sort_prefix(b.term(t)), t as u32)).collect();
        keyed.sort_unstable_by(|x, y| {
            x.0.cmp(&y.0)
                .then_with(|| b.term(x.1 as usize).cmp(b.term(y.1 as usize)))
        });
        let order: Vec<u32> = keyed.into_iter().map(|(_, t)| t).collect();
        // Sized at once: the dictionary exactly (each term and its `\n`),
        // the postings at a byte and a half a posting (gaps of one or two
        // bytes; a list that is longer as a bitmap is shorter).
        let mut w = Writer::new(
            Vec::with_capacity(b.arena.len() + n + 2),
            Vec::with_capacity(ids.len() + ids.len() / 2 + 16),
            Vec::with_capacity(4 * n + 4),
            n,
        );
        let mut sorted = Vec::new();
        for t in order {
            let list = &mut ids[bounds[t as usize] as usize..bounds[t as usize + 1] as usize];
            if list.windows(2).all(|p| p[0] < p[1]) {
                w.push(b.term(t as usize), list);
            } else {
                // Files read again under older ids, or a file given twice.
                sorted.clear();
                sorted.extend_from_slice(list);
                sorted.sort_unstable();
                sorted.dedup();
                w.push(b.term(t as usize), &sorted);
            }
        }
        w.finish(b.docs)
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
