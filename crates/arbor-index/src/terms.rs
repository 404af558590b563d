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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::ascending::Ascending;
use arbor_util::prefetch::prefetch;
use memchr::memmem;

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
fn term_key(t: &[u8]) -> u64 {
    let n = t.len();
    if n > 8 {
        use std::hash::Hasher;
        let mut h = super::codec::FxHasher::default();
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

/// Where a term's probe starts: every bit of the key reaches the low bits
/// the tables use (a short term's key is its bytes, and a plain multiply
/// let only its first three bytes choose among 65,536 slots, so terms
/// sharing them, `config`/`confirm`, piled up in one run of slots).
#[inline(always)]
fn term_slot(key: u64, len: usize) -> usize {
    // MurmurHash3's finalizer.
    let mut x = key ^ (len as u64).rotate_left(59);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x as usize
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
                && (t.len() <= 8 || self.term(idx as usize) == t)
            {
                return idx;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let bigger = self.table.len() * 2;
        let old = std::mem::replace(&mut self.table, vec![(0, 0, 0); bigger]);
        let mask = bigger - 1;
        for (k, idx, len) in old.into_iter().filter(|e| e.2 != 0) {
            let mut j = term_slot(k, len as usize - 1) & mask;
            while self.table[j].2 != 0 {
                j = (j + 1) & mask;
            }
            self.table[j] = (k, idx, len);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    pub fn docs(&self) -> usize {
        self.docs
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

    /// Encodes and empties the builder.
    pub fn take(&mut self) -> Encoded {
        let mut b = std::mem::take(self);
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
        let mut w = Writer::default();
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

/// Where a [`Writer`] puts a dictionary's or its postings' bytes: memory,
/// or a file.
trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Bytes written to a file as a merge makes them, summed on the way when
/// asked (held in memory, a merge's output and input were its peak: up to
/// 256 MB of each at 100,000 sessions).
struct FileSink {
    out: std::io::BufWriter<std::fs::File>,
    sum: Option<super::db::TextSum>,
    /// The first write that failed; reported when the writer finishes.
    error: Option<std::io::Error>,
}

impl FileSink {
    fn new(file: std::fs::File, summed: bool) -> FileSink {
        FileSink {
            out: std::io::BufWriter::with_capacity(1 << 20, file),
            sum: summed.then(Default::default),
            error: None,
        }
    }

    /// The file, flushed, and the sum of what was written.
    fn finish(self) -> std::io::Result<(std::fs::File, i64)> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let sum = self.sum.map_or(0, |s| s.finish());
        Ok((self.out.into_inner().map_err(|e| e.into_error())?, sum))
    }
}

impl Sink for FileSink {
    fn put(&mut self, bytes: &[u8]) {
        use std::io::Write;
        if self.error.is_none() {
            if let Some(sum) = &mut self.sum {
                sum.update(bytes);
            }
            if let Err(e) = self.out.write_all(bytes) {
                self.error = Some(e);
            }
        }
    }
}

/// Writes a segment: its dictionary to `terms`, its posting lists to
/// `postings`, the terms' starts in memory, and the lists' starts to
/// `post_starts` (a merge's go to a file: in memory, the starts of a merge
/// of millions of terms were held twice over, once as numbers and once as
/// the blob's bytes).
struct Writer<T, P, Q> {
    terms: T,
    terms_len: usize,
    postings: P,
    postings_len: usize,
    /// The starts blob so far: the count, then each term's start.
    starts: Vec<u8>,
    n: usize,
    post_starts: Q,
}

type MemoryWriter = Writer<Vec<u8>, Vec<u8>, Vec<u8>>;

impl Default for MemoryWriter {
    fn default() -> Self {
        Writer::new(Vec::new(), Vec::new(), Vec::new(), 0)
    }
}

/// A varint's bytes: at most 5 for a `u32`.
fn varint(mut v: u32, buf: &mut [u8; 5]) -> &[u8] {
    let mut n = 0;
    while v >= 0x80 {
        buf[n] = (v as u8) | 0x80;
        v >>= 7;
        n += 1;
    }
    buf[n] = v as u8;
    &buf[..=n]
}

impl<T: Sink, P: Sink, Q: Sink> Writer<T, P, Q> {
    /// Room for the starts of up to `n` terms, allocated once: a merge of
    /// 256 MB grown by doubling held up to twice its output.
    fn new(terms: T, postings: P, post_starts: Q, n: usize) -> Writer<T, P, Q> {
        let mut starts = Vec::with_capacity(4 + 8 * n + 4);
        starts.extend_from_slice(&[0; 4]);
        Writer {
            terms,
            terms_len: 0,
            postings,
            postings_len: 0,
            starts,
            n: 0,
            post_starts,
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        self.terms.put(bytes);
        self.terms_len += bytes.len();
    }

    /// `ids` sorted and distinct; terms pushed in increasing order.
    fn push(&mut self, term: &[u8], ids: &[u32]) {
        if ids.is_empty() {
            return;
        }
        if self.terms_len == 0 {
            self.put(b"\n");
        }
        self.starts
            .extend_from_slice(&(self.terms_len as u32).to_le_bytes());
        self.n += 1;
        self.put(term);
        self.put(b"\n");
        self.post_starts
            .put(&(self.postings_len as u32).to_le_bytes());
        let mut buf = [0u8; 5];
        let (first, last) = (ids[0], ids[ids.len() - 1]);
        let bitmap_len =
            BITMAP_MARK.len() + varint(first, &mut buf).len() + bitmap_bytes(first, last);
        if bitmap_len < varint_list_len(ids) {
            self.put_postings(&BITMAP_MARK);
            let base = varint(first, &mut buf).len();
            self.postings.put(&buf[..base]);
            self.postings_len += base;
            let mut bits = vec![0u8; bitmap_bytes(first, last)];
            for &id in ids {
                let i = (id - first) as usize;
                bits[i >> 3] |= 1 << (i & 7);
            }
            self.put_postings(&bits);
            return;
        }
        let mut last = 0u32;
        for &id in ids {
            let b = varint(id - last, &mut buf);
            self.postings.put(b);
            self.postings_len += b.len();
            last = id;
        }
    }

    fn put_postings(&mut self, bytes: &[u8]) {
        self.postings.put(bytes);
        self.postings_len += bytes.len();
    }

    /// The dictionary's sink and length, the postings' sink, and the starts
    /// blob, the lists' starts read back from their sink.
    fn finish_parts(
        mut self,
        read_back: impl FnOnce(Q, &mut Vec<u8>) -> std::io::Result<()>,
    ) -> std::io::Result<(T, usize, P, Vec<u8>)> {
        if self.terms_len == 0 {
            self.put(b"\n");
        }
        self.post_starts
            .put(&(self.postings_len as u32).to_le_bytes());
        let n = self.n as u32;
        self.starts[..4].copy_from_slice(&n.to_le_bytes());
        self.starts.reserve_exact(4 * self.n + 4);
        read_back(self.post_starts, &mut self.starts)?;
        let starts = pack_starts(&self.starts);
        Ok((self.terms, self.terms_len, self.postings, starts))
    }
}

/// The starts blob as stored: the count of terms (4 bytes, little-endian),
/// then each term's start in the dictionary and then each posting list's
/// start and the lists' end, each sequence as the varints of the steps
/// from one value to the next (from 0). Steps are a term's length and a
/// list's: a byte or two each, where 4-byte values took 107 MB at 100,000
/// sessions (7 % of the index).
///
/// `raw` is the count and the values as little-endian `u32`s.
pub(crate) fn pack_starts(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() / 3 + 8);
    out.extend_from_slice(&raw[..4]);
    let n = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]) as usize;
    let values = raw[4..]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    let (mut last, mut buf) = (0u32, [0u8; 5]);
    for (i, v) in values.enumerate() {
        if i == n {
            // The posting starts count from 0 again.
            last = 0;
        }
        out.extend_from_slice(varint(v - last, &mut buf));
        last = v;
    }
    out
}

/// The values of one sequence of a packed starts blob (see
/// [`pack_starts`]), read from `at` on; `bad` is set, and the values stop,
/// where the bytes end mid-varint or a sum passes `u32::MAX`.
struct Steps<'a> {
    bytes: &'a [u8],
    at: usize,
    last: u32,
    left: usize,
    bad: bool,
}

impl Iterator for Steps<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.left == 0 || self.bad {
            return None;
        }
        let mut step = 0u64;
        for k in 0..5 {
            let Some(&b) = self.bytes.get(self.at) else {
                self.bad = true;
                return None;
            };
            self.at += 1;
            step |= u64::from(b & 0x7f) << (7 * k);
            if b < 0x80 {
                let next = u64::from(self.last) + step;
                let Ok(next) = u32::try_from(next) else {
                    self.bad = true;
                    return None;
                };
                self.left -= 1;
                self.last = next;
                return Some(next);
            }
        }
        self.bad = true;
        None
    }
}

impl MemoryWriter {
    fn finish(self, docs: usize) -> Encoded {
        let appended = self.finish_parts(|q, starts| {
            starts.extend_from_slice(&q);
            Ok(())
        });
        let Ok((terms, _, postings, starts)) = appended else {
            unreachable!("appending to a vector does not fail");
        };
        Encoded {
            docs,
            terms,
            starts,
            postings,
        }
    }
}

/// A merged segment whose dictionary is in its file already and whose
/// posting lists are in a file of their own (see [`merge_to_files`]).
pub struct Merged {
    pub docs: usize,
    pub terms_len: usize,
    /// The dictionary's `db::text_sum`.
    pub terms_sum: i64,
    pub starts: Vec<u8>,
    /// The posting lists, read from the start.
    pub postings: std::fs::File,
    pub postings_len: usize,
}

/// A segment's dictionary bytes (`\n term \n term \n … \n`): read into
/// memory, or mapped from the segment's file beside the index (see
/// `db::terms_path`), where they are the page cache's rather than arbor's
/// own (at 100,000 sessions they were 410 MB of the picker's heap).
pub enum TermBytes {
    Owned(Vec<u8>),
    #[cfg(target_os = "linux")]
    Mapped(std::sync::Arc<super::mapguard::GuardedMap>),
}

impl TermBytes {
    fn bytes(&self) -> &[u8] {
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
const SCAN_WINDOW: usize = if cfg!(test) { 4096 } else { 8 << 20 };

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
    terms: TermBytes,
    term_starts: Ascending,
    post_starts: Ascending,
    postings: Vec<u8>,
    /// At least the number of distinct ids in its posting lists (0:
    /// unknown; see [`Segment::with_docs`]).
    docs: usize,
}

impl Segment {
    /// `None` when the blobs are inconsistent (a corrupt index).
    pub fn from_blobs(terms: Vec<u8>, starts: &[u8], postings: Vec<u8>) -> Option<Segment> {
        Segment::from_parts(TermBytes::Owned(terms), starts, postings)
    }

    /// [`Segment::from_blobs`], with the dictionary's bytes wherever they are.
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
    fn behind_every(&self, window: usize) -> Behind<'_> {
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
    fn term_at_from(&self, pos: usize, from: usize) -> Option<usize> {
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

/// How a posting list stored as a bitmap starts: no list of varints does
/// (a varint's last byte is never zero unless it is the only one).
///
/// A list is a bitmap when that is smaller: the mark, the first id as a
/// varint, then a bit per id from it to the last (bit `i % 8` of byte
/// `i / 8` for id `first + i`). A common word's list names most sessions;
/// as gaps of one or two bytes each it took ~8 times the bits (at 100,000
/// sessions, bitmaps made the posting lists 67 MB smaller, ~16 %).
const BITMAP_MARK: [u8; 2] = [0x80, 0x00];

/// The bytes of the bits of the ids `first..=last`.
fn bitmap_bytes(first: u32, last: u32) -> usize {
    (last - first) as usize / 8 + 1
}

/// The bytes of `ids` (sorted, distinct) as gaps in varints.
fn varint_list_len(ids: &[u32]) -> usize {
    let mut last = 0u32;
    ids.iter()
        .map(|&id| {
            let gap = id - last;
            last = id;
            // Seven bits a byte: 1 byte up to 127, 2 up to 16,383, …
            (32 - (gap | 1).leading_zeros() as usize).div_ceil(7)
        })
        .sum()
}

/// Calls `f` with each file id of an encoded posting list.
pub fn decode_postings(b: &[u8], f: &mut dyn FnMut(u32)) {
    if let Some(rest) = b.strip_prefix(&BITMAP_MARK) {
        decode_bitmap(rest, f);
        return;
    }
    let (mut i, mut id) = (0usize, 0u32);
    while i < b.len() {
        let mut v = 0u32;
        let mut shift = 0;
        while i < b.len() {
            let byte = b[i];
            i += 1;
            // Bits past a u32's (only in damaged bytes) are dropped.
            v |= u32::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
            if byte < 0x80 {
                break;
            }
            shift += 7;
        }
        id = id.wrapping_add(v);
        f(id);
    }
}

/// The ids of a bitmap list (after its mark): the first id as a varint,
/// then the bits. Ids past `u32::MAX` (only in a damaged list) are dropped.
fn decode_bitmap(b: &[u8], f: &mut dyn FnMut(u32)) {
    let (mut first, mut i) = (0u64, 0usize);
    while let Some(&byte) = b.get(i) {
        // Five bytes hold any u32 (a longer run is damage: cut it short).
        first |= u64::from(byte & 0x7f) << (7 * i);
        i += 1;
        if byte < 0x80 || i == 5 {
            break;
        }
    }
    let bits = &b[i..];
    let mut emit = |at: u64, mut w: u64| {
        while w != 0 {
            let id = first + at + u64::from(w.trailing_zeros());
            w &= w - 1;
            if let Ok(id) = u32::try_from(id) {
                f(id);
            }
        }
    };
    let mut words = bits.chunks_exact(8);
    let mut at = 0u64;
    for w in &mut words {
        let mut le = [0u8; 8];
        le.copy_from_slice(w);
        emit(at, u64::from_le_bytes(le));
        at += 64;
    }
    let mut le = [0u8; 8];
    le[..words.remainder().len()].copy_from_slice(words.remainder());
    emit(at, u64::from_le_bytes(le));
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

/// Merges segments (with their postings loaded), dropping ids for which
/// `live` is false: [`merge_to_files`] in memory, what the tests hold it to.
#[cfg(test)]
pub fn merge(segs: &[Segment], live: &dyn Fn(u32) -> bool) -> Encoded {
    // The inputs' sizes bound the output's: terms found in several
    // segments are written once, and the lists of ids dropped shrink.
    let terms = Vec::with_capacity(segs.iter().map(|s| s.terms.bytes().len()).sum());
    let postings = Vec::with_capacity(segs.iter().map(|s| s.postings.len()).sum());
    let mut readers: Vec<&[u8]> = segs.iter().map(|s| s.postings.as_slice()).collect();
    let mut readers: Vec<&mut dyn std::io::Read> = readers
        .iter_mut()
        .map(|r| r as &mut dyn std::io::Read)
        .collect();
    match merge_with(segs, &mut readers, live, (terms, postings, Vec::new())) {
        Ok((docs, w)) => w.finish(docs),
        // Reading a slice fails only where a list lies past its end, which
        // `Segment::from_blobs` rules out.
        Err(e) => panic!("postings checked when loaded: {e}"),
    }
}

/// [`merge`] in bounded memory: each segment's posting lists read in order
/// from `postings` (one reader per segment, from its first list), the
/// dictionary written to `terms`, the posting lists and their starts to the
/// two scratch files (all empty) as they are made, the inputs' mapped
/// dictionaries released behind the merge. What it holds is the starts blob
/// (eight bytes a term).
pub fn merge_to_files(
    segs: &[Segment],
    postings: &mut [&mut dyn std::io::Read],
    live: &dyn Fn(u32) -> bool,
    terms: std::fs::File,
    [scratch, scratch_starts]: [std::fs::File; 2],
) -> std::io::Result<Merged> {
    use std::io::{Read, Seek};
    let sinks = (
        FileSink::new(terms, true),
        FileSink::new(scratch, false),
        FileSink::new(scratch_starts, false),
    );
    let (docs, w) = merge_with(segs, postings, live, sinks)?;
    let postings_len = w.postings_len;
    let (terms, terms_len, postings, starts) = w.finish_parts(|q, starts| {
        let (mut file, _) = q.finish()?;
        file.rewind()?;
        file.read_to_end(starts)?;
        Ok(())
    })?;
    let (_, terms_sum) = terms.finish()?;
    let (mut postings, _) = postings.finish()?;
    postings.rewind()?;
    Ok(Merged {
        docs,
        terms_len,
        terms_sum,
        starts,
        postings,
        postings_len,
    })
}

fn merge_with<T: Sink, P: Sink, Q: Sink>(
    segs: &[Segment],
    postings: &mut [&mut dyn std::io::Read],
    live: &dyn Fn(u32) -> bool,
    (terms, out, post_starts): (T, P, Q),
) -> std::io::Result<(usize, Writer<T, P, Q>)> {
    assert_eq!(segs.len(), postings.len(), "a reader per segment");
    let mut heads = vec![0usize; segs.len()];
    // Where each reader is in its segment's postings.
    let mut read = vec![0usize; segs.len()];
    let mut behind: Vec<Behind> = segs.iter().map(|s| s.behind_every(1 << 20)).collect();
    let most = segs.iter().map(Segment::len).sum();
    let mut w = Writer::new(terms, out, post_starts, most);
    let (mut ids, mut list) = (Vec::new(), Vec::new());
    // The distinct ids written (a bitmap by id), for `docs`.
    let (mut written, mut docs) = (Vec::<u64>::new(), 0usize);
    // Each segment's next term (borrowed, not copied: a big merge has
    // millions of terms), the smallest first and, of equal terms, the
    // earliest segment's. Scanning every segment's head for the smallest
    // and again for its equals was most of a first run's last merges (a
    // tool output part of ~35 segments at 100,000 sessions, ~20 s).
    let mut next: BinaryHeap<Reverse<(&[u8], usize)>> = segs
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(k, s)| Reverse((s.term(0), k)))
        .collect();
    // The segments holding the term merged, in order.
    let mut holding: Vec<usize> = Vec::with_capacity(segs.len());
    while let Some(Reverse((term, first))) = next.pop() {
        holding.clear();
        holding.push(first);
        while let Some(&Reverse((t, k))) = next.peek() {
            if t != term {
                break;
            }
            holding.push(k);
            next.pop();
        }
        ids.clear();
        // Each segment's postings are sorted; most terms are in one segment,
        // or in several whose ids follow each other.
        let mut sorted = true;
        for &k in &holding {
            let (s, h) = (&segs[k], heads[k]);
            // The lists follow each other: each is read where the last one
            // ended.
            let (start, end) = s.postings_range(h);
            if start != read[k] || end < start {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "a segment's posting lists do not follow each other",
                ));
            }
            list.resize(end - start, 0);
            postings[k].read_exact(&mut list)?;
            read[k] = end;
            decode_postings(&list, &mut |id| {
                if live(id) {
                    sorted &= ids.last().is_none_or(|&l| l < id);
                    ids.push(id)
                }
            });
            heads[k] += 1;
            behind[k].at(heads[k]);
            if heads[k] < s.len() {
                next.push(Reverse((s.term(heads[k]), k)));
            }
        }
        if !sorted {
            ids.sort_unstable();
            ids.dedup();
        }
        for &id in &ids {
            let (word, bit) = ((id >> 6) as usize, 1u64 << (id & 63));
            if word >= written.len() {
                written.resize(word + 1, 0);
            }
            docs += usize::from(written[word] & bit == 0);
            written[word] |= bit;
        }
        w.push(term, &ids);
    }
    Ok((docs, w))
}

/// A set of distinct terms, gathered one at a time (a file's words of one
/// part): an arena of their bytes and an open-addressing table keyed as in
/// `distinct_token_ranges`.
pub struct TermSet {
    table: Vec<(u64, u32, u32)>,
    arena: Vec<u8>,
    ranges: Vec<(u32, u32)>,
}

impl Default for TermSet {
    fn default() -> Self {
        TermSet {
            table: vec![(0, 0, 0); 256],
            arena: Vec::new(),
            ranges: Vec::new(),
        }
    }
}

impl TermSet {
    /// The bytes its buffers hold (their capacities), for the trace.
    pub fn heap_bytes(&self) -> usize {
        self.table.capacity() * 16 + self.arena.capacity() + self.ranges.capacity() * 8
    }

    /// Adds `t` unless it is empty or already in.
    #[inline]
    pub fn insert(&mut self, t: &[u8]) {
        self.index_of(t);
    }

    /// Adds `t` unless it is already in, and gives its number (the order of
    /// first insertion: `into_parts`' ranges); `None` for an empty term or
    /// one the arena cannot hold.
    #[inline]
    pub fn index_of(&mut self, t: &[u8]) -> Option<u32> {
        if t.is_empty()
            || t.len() >= u32::MAX as usize
            || self.arena.len() + t.len() >= u32::MAX as usize
        {
            return None;
        }
        let (key, len) = (term_key(t), t.len() as u32);
        let mask = self.table.len() - 1;
        let mut i = term_slot(key, t.len()) & mask;
        loop {
            let (k, n, tl) = self.table[i];
            if tl == 0 {
                // Slots hold len + 1 so that 0 means empty, and the term's
                // number (its start is in `ranges`).
                let start = self.arena.len() as u32;
                let n = self.ranges.len() as u32;
                self.table[i] = (key, n, len + 1);
                self.arena.extend_from_slice(t);
                self.ranges.push((start, len));
                if self.ranges.len() * 2 > self.table.len() {
                    self.grow();
                }
                return Some(n);
            }
            if k == key && tl == len + 1 && (len <= 8 || self.term(n) == t) {
                return Some(n);
            }
            i = (i + 1) & mask;
        }
    }

    /// The bytes of term number `n`.
    #[inline]
    pub fn term(&self, n: u32) -> &[u8] {
        let (s, len) = self.ranges[n as usize];
        &self.arena[s as usize..(s + len) as usize]
    }

    fn grow(&mut self) {
        let bigger = self.table.len() * 2;
        let old = std::mem::replace(&mut self.table, vec![(0, 0, 0); bigger]);
        let mask = bigger - 1;
        for (k, ts, tl) in old.into_iter().filter(|e| e.2 != 0) {
            let mut j = term_slot(k, tl as usize - 1) & mask;
            while self.table[j].2 != 0 {
                j = (j + 1) & mask;
            }
            self.table[j] = (k, ts, tl);
        }
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The terms' bytes, one after another, and each term's `(start, len)`
    /// in them, in order of first insertion.
    pub fn into_parts(self) -> (Vec<u8>, Vec<(u32, u32)>) {
        (self.arena, self.ranges)
    }

    /// [`TermSet::into_parts`], leaving the set empty but its table
    /// allocated, sized for as many terms as it held (see [`reset_table`]).
    pub fn take_parts(&mut self) -> (Vec<u8>, Vec<(u32, u32)>) {
        reset_table(&mut self.table, self.ranges.len());
        (
            std::mem::take(&mut self.arena),
            std::mem::take(&mut self.ranges),
        )
    }
}

/// Empties an open-addressing table for reuse: its memory is kept (a
/// fresh one is fresh pages to fault in and zero, and growing it again
/// rehashes it again), cut down to what `used` entries need: a set is
/// reused for the next file, and files are read biggest first, so the
/// next one needs about as many.
fn reset_table<T: Copy + Default>(table: &mut Vec<T>, used: usize) {
    let want = (used * 2 + 1).next_power_of_two().max(256);
    if table.len() > want {
        table.truncate(want);
    }
    table.fill(T::default());
}

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

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
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
const PAIR_LOG_CAP: usize = 1 << 18;

/// A pair as the log holds it: each side number plus 2 (wrapping), so that
/// [`EMPTY_SIDE`] is 0 and every number in use stays small.
#[inline]
fn packed(first: u32, second: u32) -> u64 {
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
fn radix_sort(v: &mut Vec<u64>, spare: &mut Vec<u64>) {
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
    spare.clear();
    spare.resize(v.len(), 0);
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
    pub fn len(&mut self) -> usize {
        self.compact();
        self.log.len()
    }

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
    pub fn clear(&mut self) {
        self.log.clear();
        self.log.shrink_to(PAIR_LOG_CAP);
        self.spare.clear();
        self.spare.shrink_to(PAIR_LOG_CAP);
        self.sorted = 0;
        self.cap = PAIR_LOG_CAP;
    }
}

/// The distinct space-separated tokens of a normalized text. (This and the
/// `distinct_*` functions below are the plain definitions the index's sets,
/// [`TermSet`] and [`PairSet`] fed word by word, are tested against.)
#[cfg(test)]
pub fn distinct_tokens(text: &str) -> Vec<&[u8]> {
    let b = text.as_bytes();
    distinct_token_ranges(text)
        .into_iter()
        .map(|(s, n)| &b[s as usize..(s + n) as usize])
        .collect()
}

/// [`distinct_tokens`] as `(start, len)` byte ranges, in order of first
/// appearance: an open-addressing table of `(key, start, len)` where a
/// token of up to 8 bytes is its own key (so equal keys mean equal tokens)
/// and a longer one is keyed by its hash and compared byte by byte.
#[cfg(test)]
pub fn distinct_token_ranges(text: &str) -> Vec<(u32, u32)> {
    let b = text.as_bytes();
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut table: Vec<(u64, u32, u32)> = vec![(0, 0, 0); 256];
    let mut mask = table.len() - 1;
    let mut start = 0usize;
    for end in memchr::memchr_iter(b' ', b).chain(std::iter::once(b.len())) {
        let t = &b[start..end];
        let s = start;
        start = end + 1;
        if t.is_empty() || t.len() > u32::MAX as usize {
            continue;
        }
        let (key, len) = (term_key(t), t.len() as u32);
        // Slots hold len + 1 so that 0 means empty.
        let mut i = term_slot(key, len as usize) & mask;
        loop {
            let (k, ts, tl) = table[i];
            if tl == 0 {
                table[i] = (key, s as u32, len + 1);
                out.push((s as u32, len));
                break;
            }
            if k == key && tl == len + 1 && (len <= 8 || b[ts as usize..(ts + len) as usize] == *t)
            {
                break;
            }
            i = (i + 1) & mask;
        }
        if out.len() * 2 > table.len() {
            // Grow and re-insert.
            let bigger = table.len() * 2;
            let old = std::mem::replace(&mut table, vec![(0, 0, 0); bigger]);
            mask = bigger - 1;
            for (k, ts, tl) in old.into_iter().filter(|e| e.2 != 0) {
                let mut j = term_slot(k, tl as usize - 1) & mask;
                while table[j].2 != 0 {
                    j = (j + 1) & mask;
                }
                table[j] = (k, ts, tl);
            }
        }
    }
    out
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

/// The distinct *word pairs* of a normalized text: every two adjacent
/// tokens with the space between them, cut to the first one's
/// [`pair_left`] and the second one's [`pair_right`] (`"t1 t2"`, itself a
/// byte range of the text; where one side is empty, the *half pair* `"t1 "`
/// or `" t2"`; none where both are), as `(start, len)` ranges in order of
/// first appearance. A pair
/// never spans one of `bounds` (sorted byte offsets where a new piece of
/// text starts, e.g. the next tool output of a part joined after a space):
/// a match never spans two pieces.
///
/// Since a token holds no space, a phrase `w1 w2` is a substring of a text
/// exactly when it is a substring of one of its pairs (a pair whose first
/// token ends in `w1` and whose second starts with `w2`): the pairs'
/// dictionary answers two-word phrases of [`pair_side_word`]s exactly, and narrows longer ones
/// (and regexes whose literals hold a space) to the sessions where their
/// words are adjacent. With the half pairs, `w ` (a term ending in `w` and
/// another after it) and ` w` are substrings of a pair exactly when they
/// are of the text, whatever the other term is.
#[cfg(test)]
pub fn distinct_pair_ranges(text: &str, bounds: &[u32]) -> Vec<(u32, u32)> {
    let b = text.as_bytes();
    let mut start = 0usize;
    let mut prev: Option<usize> = None;
    let mut next_bound = 0usize;
    let pairs = memchr::memchr_iter(b' ', b)
        .chain(std::iter::once(b.len()))
        .filter_map(move |end| {
            let s = start;
            start = end + 1;
            if end == s {
                return None;
            }
            // A piece starting after the previous token's start and at or
            // before this one's: the two are not adjacent.
            let mut crossed = false;
            while next_bound < bounds.len() && bounds[next_bound] as usize <= s {
                crossed |= prev.is_some_and(|p| (bounds[next_bound] as usize) > p);
                next_bound += 1;
            }
            // The first token's end and the second's start (contiguous
            // in the text, across their one space).
            let pair = match prev {
                Some(p) if !crossed => {
                    let (left, right) = (pair_left(&b[p..s - 1]), pair_right(&b[s..end]));
                    let from = s - 1 - left.len();
                    // One empty side leaves a half pair (`t1 ` or ` t2`).
                    (!left.is_empty() || !right.is_empty())
                        .then_some((from, left.len() + 1 + right.len()))
                }
                _ => None,
            };
            prev = Some(s);
            pair
        });
    distinct_ranges(b, pairs)
}

/// The distinct byte strings among `ranges` of `b` (as `(start, len)`),
/// in order of first appearance; empty ones left out.
#[cfg(test)]
fn distinct_ranges(b: &[u8], ranges: impl Iterator<Item = (usize, usize)>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut table: Vec<(u64, u32, u32)> = vec![(0, 0, 0); 256];
    let mut mask = table.len() - 1;
    for (s, n) in ranges {
        if n == 0 || n > u32::MAX as usize || s > u32::MAX as usize {
            continue;
        }
        let t = &b[s..s + n];
        let (key, len) = (term_key(t), n as u32);
        // Slots hold len + 1 so that 0 means empty.
        let mut i = term_slot(key, len as usize) & mask;
        loop {
            let (k, ts, tl) = table[i];
            if tl == 0 {
                table[i] = (key, s as u32, len + 1);
                out.push((s as u32, len));
                break;
            }
            if k == key && tl == len + 1 && (len <= 8 || b[ts as usize..(ts + len) as usize] == *t)
            {
                break;
            }
            i = (i + 1) & mask;
        }
        if out.len() * 2 > table.len() {
            // Grow and re-insert.
            let bigger = table.len() * 2;
            let old = std::mem::replace(&mut table, vec![(0, 0, 0); bigger]);
            mask = bigger - 1;
            for (k, ts, tl) in old.into_iter().filter(|e| e.2 != 0) {
                let mut j = term_slot(k, tl as usize - 1) & mask;
                while table[j].2 != 0 {
                    j = (j + 1) & mask;
                }
                table[j] = (k, ts, tl);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dictionary whose recorded term count disagrees with its offsets
    /// (a corrupt index) is refused, whatever the count, never sliced.
    #[test]
    fn offsets_that_do_not_fit_their_count_are_refused() {
        let terms = b"\nab\ncd\n".to_vec();
        let starts = |n: u32, words: &[u32]| {
            let mut b = n.to_le_bytes().to_vec();
            b.extend(words.iter().flat_map(|w| w.to_le_bytes()));
            pack_starts(&b)
        };
        let good = starts(2, &[1, 4, 0, 2, 3]);
        assert_eq!(good, [2, 0, 0, 0, 1, 3, 0, 2, 1]);
        let s = Segment::dictionary_only(terms.clone(), &good).unwrap();
        assert_eq!((s.term(1), s.postings_range(1)), (&b"cd"[..], (2, 3)));
        for n in [0, 1, 3, 1 << 29, (1 << 30) + 1, u32::MAX] {
            let mut b = good.clone();
            b[..4].copy_from_slice(&n.to_le_bytes());
            assert!(Segment::dictionary_only(terms.clone(), &b).is_none(), "{n}");
        }
        // Out of bounds, a repeated term start, or a step past `u32::MAX`.
        assert!(Segment::dictionary_only(terms.clone(), &starts(2, &[1, 9, 0, 2, 3])).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &starts(2, &[1, 1, 0, 2, 3])).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &starts(2, &[0, 4, 0, 2, 3])).is_none());
        let mut over = good[..5].to_vec();
        over.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0, 2, 1]);
        assert!(Segment::dictionary_only(terms.clone(), &over).is_none());
        // Cut short (mid-varint or a value short), or with bytes after.
        assert!(Segment::dictionary_only(terms.clone(), &[&good[..], &[0x80]].concat()).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &[&good[..8], &[0x81]].concat()).is_none());
        assert!(Segment::dictionary_only(terms.clone(), &good[..8]).is_none());
        assert!(Segment::dictionary_only(terms, &[&good[..], &[0]].concat()).is_none());
    }

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
    fn distinct_tokens_are_exact() {
        let text = "a b a  bb abcdefgh abcdefgh abcdefghi abcdefghj abcdefghi x\u{0} x é é";
        let got: Vec<&[u8]> = distinct_tokens(text);
        let mut want: Vec<&[u8]> = Vec::new();
        for t in text.as_bytes().split(|&b| b == b' ') {
            if !t.is_empty() && !want.contains(&t) {
                want.push(t);
            }
        }
        assert_eq!(got, want);
        // Many distinct tokens (the table grows).
        let many: String = (0..5000).map(|i| format!("t{} ", i % 3000)).collect();
        assert_eq!(distinct_tokens(&many).len(), 3000);
    }

    #[test]
    fn pair_sides_are_cut_at_digits_slashes_and_characters() {
        assert_eq!(pair_left(b"src/ui/render.rs:42:"), b":");
        assert_eq!(pair_right(b"src/ui/render.rs:42:"), b"src");
        assert_eq!(pair_left(b"render"), b"render");
        assert_eq!(pair_right(b"42abc"), b"");
        // At most 16 bytes, never inside a character.
        let e = "é".repeat(20) + "a";
        assert_eq!(pair_left(e.as_bytes()), ("é".repeat(7) + "a").as_bytes());
        assert_eq!(pair_right(e.as_bytes()), "é".repeat(8).as_bytes());
        assert!(pair_side_word(b"render") && !pair_side_word(b"rs:42"));
        assert!(!pair_side_word(b"a/b") && !pair_side_word(b"averyveryverylongword"));
    }

    /// The pairs of `text` as strings.
    fn pairs_of<'t>(text: &'t str, bounds: &[u32]) -> Vec<&'t str> {
        distinct_pair_ranges(text, bounds)
            .into_iter()
            .map(|(s, n)| &text[s as usize..(s + n) as usize])
            .collect()
    }

    #[test]
    fn pairs_are_adjacent_tokens_within_a_piece() {
        let text = "fn main fn main() x y fn";
        let got: Vec<&str> = pairs_of(text, &[]);
        assert_eq!(
            got,
            ["fn main", "main fn", "fn main()", "main() x", "x y", "y fn"]
        );
        // Pieces `ab cd` and `ef gh` joined by a space: no `cd ef`.
        let joined = "ab cd ef gh";
        let got: Vec<&str> = pairs_of(joined, &[6]);
        assert_eq!(got, ["ab cd", "ef gh"]);
        // A piece of one token between two others, and an empty piece.
        let j = "a b c";
        let got: Vec<&str> = pairs_of(j, &[2, 4, 4]);
        assert!(got.is_empty(), "{got:?}");
        assert!(distinct_pair_ranges("", &[]).is_empty());
        assert!(distinct_pair_ranges("one", &[]).is_empty());
        // A pair keeps the first term's end and the second's start without
        // a digit or a `/`, at most 16 bytes each; where one is empty, a
        // half pair (`line `, ` of` around `42`).
        let t = "see line 42 of src/main.rs:7: now averyveryverylongword x é";
        let got: Vec<&str> = pairs_of(t, &[]);
        assert_eq!(
            got,
            [
                "see line",
                "line ",
                " of",
                "of src",
                ": now",
                "now averyveryverylon",
                "veryverylongword x",
                "x é"
            ]
        );
    }

    #[test]
    fn short_keys_are_the_padded_bytes() {
        for t in [
            "", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh",
        ] {
            let mut w = [0u8; 8];
            w[..t.len()].copy_from_slice(t.as_bytes());
            assert_eq!(term_key(t.as_bytes()), u64::from_le_bytes(w), "{t}");
        }
    }

    #[test]
    fn postings_come_out_sorted_and_once() {
        // Files read again keep older ids (added after newer ones), and a
        // file may be added twice in one batch.
        let mut b = SegmentBuilder::default();
        b.add(7, distinct_tokens("alpha beta"));
        b.add(3, distinct_tokens("beta gamma"));
        b.add(9, distinct_tokens("alpha"));
        b.add(3, distinct_tokens("alpha beta"));
        b.add(4, distinct_tokens(""));
        let e = b.take();
        let s = Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap();
        assert_eq!(ids(&s, "alpha", Match::Exact), [3, 7, 9]);
        assert_eq!(ids(&s, "beta", Match::Exact), [3, 7]);
        assert_eq!(ids(&s, "gamma", Match::Exact), [3]);
        let mut raw = Vec::new();
        s.find(b"alpha", Match::Exact, &mut |t| {
            s.postings(t, &mut |id| raw.push(id))
        });
        assert_eq!(raw, [3, 7, 9], "stored sorted, without repeats");
        assert_eq!(e.docs, 5);
    }

    /// One posting list written by a [`Writer`] (its bytes).
    fn encoded_list(ids: &[u32]) -> Vec<u8> {
        let mut w = MemoryWriter::default();
        w.push(b"t", ids);
        w.finish(ids.len()).postings
    }

    fn decoded(b: &[u8]) -> Vec<u32> {
        let mut got = Vec::new();
        decode_postings(b, &mut |id| got.push(id));
        got
    }

    #[test]
    fn a_common_words_list_is_a_bitmap_and_a_rare_ones_gaps() {
        let dense: Vec<u32> = (1000..3000).filter(|i| i % 3 != 0).collect();
        let b = encoded_list(&dense);
        assert!(b.starts_with(&BITMAP_MARK), "{:?}", &b[..4]);
        assert_eq!(b.len(), 2 + 2 + 2000 / 8);
        assert_eq!(decoded(&b), dense);
        let sparse = [5, 900, 70_000, 4_000_000_000];
        let b = encoded_list(&sparse);
        assert!(!b.starts_with(&BITMAP_MARK));
        assert_eq!(b.len(), varint_list_len(&sparse));
        assert_eq!(decoded(&b), sparse);
        // The largest ids, and id 0 first, as bits.
        for ids in [
            (u32::MAX - 100..=u32::MAX).collect::<Vec<_>>(),
            (0..64).collect(),
        ] {
            let b = encoded_list(&ids);
            assert!(b.starts_with(&BITMAP_MARK));
            assert_eq!(decoded(&b), ids);
        }
    }

    proptest::proptest! {
        /// A merge of any segments (their ids interleaved, repeated, or
        /// apart; a term in any number of them) holds each term once, with
        /// the sorted union of its live ids, and no term left without one.
        #[test]
        fn a_merge_unions_any_segments(
            segs in proptest::collection::vec(
                proptest::collection::vec(
                    (0u32..64, proptest::collection::vec(0usize..6, 0..4)),
                    0..10,
                ),
                1..40,
            ),
            dead in 0u32..8,
        ) {
            let vocab = ["a", "b", "ab", "ba", "c", "zz"];
            let live = |id: u32| id % 7 != dead;
            let mut want: std::collections::BTreeMap<&str, std::collections::BTreeSet<u32>> =
                Default::default();
            let built: Vec<Segment> = segs
                .iter()
                .map(|docs| {
                    // A segment's documents by id, in order.
                    let mut by_id: std::collections::BTreeMap<u32, Vec<&str>> = Default::default();
                    for (id, words) in docs {
                        for &w in words {
                            by_id.entry(*id).or_default().push(vocab[w]);
                            if live(*id) {
                                want.entry(vocab[w]).or_default().insert(*id);
                            }
                        }
                    }
                    let texts: Vec<(u32, String)> =
                        by_id.into_iter().map(|(id, w)| (id, w.join(" "))).collect();
                    let pairs: Vec<(u32, &str)> =
                        texts.iter().map(|(i, t)| (*i, t.as_str())).collect();
                    seg(&pairs)
                })
                .collect();
            let e = merge(&built, &live);
            let m = Segment::from_blobs(e.terms, &e.starts, e.postings).unwrap();
            proptest::prop_assert_eq!(m.len(), want.len());
            for (term, ids) in &want {
                let mut got = Vec::new();
                m.find(term.as_bytes(), Match::Exact, &mut |t| {
                    m.postings(t, &mut |id| got.push(id))
                });
                proptest::prop_assert_eq!(&got, &ids.iter().copied().collect::<Vec<_>>(), "{}", term);
            }
        }

        /// Any sorted list comes back as it was, in the smaller of the two
        /// forms.
        #[test]
        fn posting_lists_round_trip_in_their_smaller_form(
            ids in proptest::collection::btree_set(0u32..5000, 1..400),
            base in proptest::prop_oneof![proptest::strategy::Just(0u32), 0u32..u32::MAX - 5000],
        ) {
            let ids: Vec<u32> = ids.into_iter().map(|i| i + base).collect();
            let b = encoded_list(&ids);
            proptest::prop_assert_eq!(decoded(&b), ids.clone());
            let gaps = varint_list_len(&ids);
            let mut buf = [0u8; 5];
            let bits = 2 + varint(ids[0], &mut buf).len() + bitmap_bytes(ids[0], ids[ids.len() - 1]);
            proptest::prop_assert_eq!(b.len(), gaps.min(bits));
        }

        /// Damaged bytes (a bitmap's or gaps') decode to something without
        /// a panic.
        #[test]
        fn any_bytes_decode_without_a_panic(
            b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            marked in proptest::prelude::any::<bool>(),
        ) {
            let b = if marked { [&BITMAP_MARK[..], &b].concat() } else { b };
            let _ = decoded(&b);
        }
    }

    /// Pairs given by side numbers encode the same segment as the same
    /// pairs given by their bytes: through table growth, with half pairs
    /// (an empty side), and with the numbering shared by several files.
    #[test]
    fn pairs_by_key_encode_as_their_bytes() {
        let mut sides = TermSet::default();
        let words: Vec<String> = (0..3000).map(|i| format!("w{}", i * 7919 % 5003)).collect();
        let n: Vec<u32> = words
            .iter()
            .map(|w| sides.index_of(w.as_bytes()).unwrap())
            .collect();
        let side = |k: u32| match k {
            EMPTY_SIDE => &[][..],
            k => sides.term(k),
        };
        let (mut by_key, mut by_bytes) = (SegmentBuilder::default(), SegmentBuilder::default());
        for file in 0..5u32 {
            let mut keys: Vec<u64> = (0..2000usize)
                .map(|i| {
                    let j = (i * 31 + file as usize * 17) % n.len();
                    match i % 50 {
                        0 => pair_key(n[j], EMPTY_SIDE),
                        1 => pair_key(EMPTY_SIDE, n[j]),
                        _ => pair_key(n[j], n[(j + 1 + file as usize) % n.len()]),
                    }
                })
                .collect();
            keys.sort_unstable();
            keys.dedup();
            by_key.add_pairs(file * 3, &keys, side);
            let bytes: Vec<Vec<u8>> = keys
                .iter()
                .map(|&k| {
                    let (l, r) = pair_sides(k);
                    [side(l), b" ", side(r)].concat()
                })
                .collect();
            by_bytes.add(file * 3, bytes.iter().map(Vec::as_slice));
        }
        let (a, b) = (by_key.take(), by_bytes.take());
        assert!(a.terms.len() > 10_000, "the table grew");
        assert_eq!(a.terms, b.terms);
        assert_eq!(a.starts, b.starts);
        assert_eq!(a.postings, b.postings);
        assert_eq!(a.docs, b.docs);
    }

    #[test]
    fn term_sets_keep_each_term_once() {
        let text = "a b a  bb abcdefgh abcdefgh abcdefghi abcdefghj abcdefghi x\u{0} x é é";
        let mut set = TermSet::default();
        for t in text.as_bytes().split(|&b| b == b' ') {
            set.insert(t);
        }
        let (arena, ranges) = set.into_parts();
        let got: Vec<&[u8]> = ranges
            .iter()
            .map(|&(s, n)| &arena[s as usize..(s + n) as usize])
            .collect();
        assert_eq!(got, distinct_tokens(text));
        let mut many = TermSet::default();
        for i in 0..5000 {
            many.insert(format!("term{}", i % 3000).as_bytes());
        }
        assert_eq!(many.len(), 3000);
    }

    #[test]
    fn pairs_by_number_are_the_distinct_adjacent_pairs() {
        // Long words (hashed) and short ones (their own key), repeats, and
        // enough of them to grow both tables several times.
        let mut text = String::new();
        for i in 0..4000u32 {
            let w = match i % 7 {
                0 => format!("averyveryverylongword{}", i % 61),
                1 => "fn".to_string(),
                2 => ["averyveryverylongwordwithoutdigits", "src/main"][(i % 2) as usize].into(),
                3 => ["w", "x", "y", "z"][(i % 4) as usize].into(),
                _ => format!("w{}", (i * 31) % 113),
            };
            text.push_str(&w);
            text.push(' ');
        }
        let text = text.trim_end();
        let (mut words, mut pairs) = (TermSet::default(), PairSet::default());
        let mut prev = None;
        for t in text.split(' ') {
            let n = words.index_of(t.as_bytes()).unwrap();
            assert_eq!(words.term(n), t.as_bytes());
            if let Some(p) = prev {
                pairs.insert(p, n);
            }
            prev = Some(n);
        }
        // Cut to their sides, each distinct one once (as the index does).
        let mut got: Vec<String> = Vec::new();
        for (a, b) in pairs.pairs() {
            let (a, b) = (pair_left(words.term(a)), pair_right(words.term(b)));
            let p = format!(
                "{} {}",
                String::from_utf8_lossy(a),
                String::from_utf8_lossy(b)
            );
            if (!a.is_empty() || !b.is_empty()) && !got.contains(&p) {
                got.push(p);
            }
        }
        let mut want = pairs_of(text, &[]);
        got.sort();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(words.len(), distinct_tokens(text).len());
    }

    #[test]
    fn a_pair_set_holds_each_pair_once_across_compactions_and_reuse() {
        // More inserts than the first cap, drawn so that some repeat at
        // once, some much later (a compaction between), with empty sides'
        // large numbers among them.
        let mut set = PairSet::default();
        for round in 0..2u64 {
            let mut want = std::collections::BTreeSet::new();
            let mut x = 0x2545_f491_4f6c_dd1d_u64 ^ round;
            for i in 0..(PAIR_LOG_CAP as u64 * 3) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let first = match x % 5 {
                    0 => u32::MAX - 1,
                    _ => (x >> 8) as u32 % (1 << (10 + i % 8)),
                };
                let second = (x >> 40) as u32 % 3000;
                for _ in 0..=(x >> 60) % 3 {
                    set.insert(first, second);
                }
                want.insert((first, second));
            }
            assert_eq!(set.len(), want.len());
            let got: std::collections::BTreeSet<(u32, u32)> = set.pairs().collect();
            assert_eq!(got, want, "round {round}");
            set.clear();
            assert!(set.is_empty());
        }
    }

    /// The radix sort sorts as a comparison sort does: keys of a few
    /// bytes, of all eight, with bytes every key shares, short and long.
    #[test]
    fn the_radix_sort_sorts() {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let shapes: [fn(u64) -> u64; 4] = [
            |r| r,
            |r| r & 0x0000_0fff_0000_ffff,
            |r| 0x0100_0000_0000_0000 | (r & 0xff_00ff),
            |r| r % 3,
        ];
        let mut spare = Vec::new();
        for shape in shapes {
            for n in [0, 1, 63, 64, 65, 1000, 70_000] {
                let mut v: Vec<u64> = (0..n).map(|_| shape(next())).collect();
                let mut want = v.clone();
                want.sort_unstable();
                radix_sort(&mut v, &mut spare);
                assert_eq!(v, want, "{n}");
            }
        }
    }

    /// A dictionary scanned in windows (many of them here: the window is
    /// 4 KiB in tests), read or mapped from a file, finds exactly the terms
    /// that match one by one, matches across windows' edges included.
    #[test]
    fn a_scan_in_windows_finds_what_each_term_matches() {
        let text: String = (0..4000u32)
            .map(|i| format!("t{}{} ", "ab".repeat((i % 13) as usize), i * 7919 % 100_003))
            .collect();
        let mut b = SegmentBuilder::default();
        b.add(1, distinct_tokens(&text));
        let e = b.take();
        assert!(e.terms.len() > 8 * SCAN_WINDOW);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("terms");
        std::fs::write(&file, &e.terms).unwrap();
        let mut segments = vec![Segment::dictionary_only(e.terms.clone(), &e.starts).unwrap()];
        #[cfg(target_os = "linux")]
        {
            let f = std::fs::File::open(&file).unwrap();
            let m = super::super::mapguard::GuardedMap::new(f, e.terms.len() as u64).unwrap();
            let mapped = TermBytes::Mapped(std::sync::Arc::new(m));
            segments.push(Segment::dictionary_in(mapped, &e.starts).unwrap());
        }
        let all: Vec<Vec<u8>> = (0..segments[0].len())
            .map(|t| segments[0].term(t).to_vec())
            .collect();
        for needle in [
            "ab", "9", "b1", "t", "bab", "abab4", "t12", "00", "zz", "3 ",
        ] {
            for how in [
                Match::Contains,
                Match::StartsWith,
                Match::EndsWith,
                Match::Exact,
            ] {
                let want: Vec<usize> = (0..all.len())
                    .filter(|&t| how.term(&all[t], needle.as_bytes()))
                    .collect();
                for s in &segments {
                    let mut got = Vec::new();
                    s.find(needle.as_bytes(), how, &mut |t| got.push(t));
                    assert_eq!(got, want, "{needle:?} {how:?}");
                    // Stopping early stops at the first ones.
                    let mut first = Vec::new();
                    s.find_while(needle.as_bytes(), how, &mut |t| {
                        first.push(t);
                        first.len() < 3
                    });
                    assert_eq!(first, want[..want.len().min(3)], "{needle:?} {how:?}");
                    // Ranges scanned on their own find as much together.
                    let n = s.len();
                    for cuts in [vec![n / 2], vec![1, n / 3, n - 1], vec![0, n]] {
                        let mut bounds = vec![0];
                        bounds.extend(cuts);
                        bounds.push(n);
                        let mut got = Vec::new();
                        for r in bounds.windows(2) {
                            s.find_in(needle.as_bytes(), how, r[0]..r[1], &mut |t| {
                                assert!(r[0] <= t && t < r[1], "{t} outside {r:?}");
                                got.push(t);
                                true
                            });
                        }
                        assert_eq!(got, want, "{needle:?} {how:?} cut at {bounds:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_term_is_found_from_any_earlier_term() {
        let text: Vec<String> = (0..300)
            .map(|i| format!("w{i}{}", "x".repeat(i % 7)))
            .collect();
        let docs: Vec<(u32, &str)> = text
            .iter()
            .enumerate()
            .map(|(i, t)| (i as u32, t.as_str()))
            .collect();
        let s = seg(&docs);
        assert_eq!(s.len(), 300);
        for pos in 0..s.terms.bytes().len() {
            let want = s
                .term_starts
                .partition_point_in(0, s.len(), |st| (st as usize) <= pos)
                .checked_sub(1);
            let upto = want.unwrap_or(0);
            for from in [0, upto / 2, upto, upto + 1, s.len() + 3] {
                assert_eq!(s.term_at_from(pos, from), want, "pos {pos} from {from}");
            }
        }
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
        // The live ids written, each once: a lookup that has seen that
        // many has seen them all.
        assert_eq!(e.docs, 2);
    }

    /// A merge written to files as it goes makes the bytes a merge in memory
    /// makes, and sums the dictionary as `db::text_sum` does.
    #[test]
    fn a_merge_to_files_writes_what_one_in_memory_makes() {
        let words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"];
        let segs = || {
            (0..4u32)
                .map(|k| {
                    let docs: Vec<(u32, String)> = (0..50u32)
                        .map(|i| {
                            let id = i * 4 + k;
                            let text: Vec<&str> = words
                                .iter()
                                .enumerate()
                                .filter(|(w, _)| (id as usize * 7 + w * 3) % 5 < 2)
                                .map(|(_, t)| *t)
                                .collect();
                            (id, format!("{} x{id}", text.join(" ")))
                        })
                        .collect();
                    let pairs: Vec<(u32, &str)> =
                        docs.iter().map(|(i, t)| (*i, t.as_str())).collect();
                    seg(&pairs)
                })
                .collect::<Vec<_>>()
        };
        let live = |id: u32| id % 9 != 0;
        let want = merge(&segs(), &live);
        let inputs = segs();
        let mut readers: Vec<&[u8]> = inputs.iter().map(|s| s.postings.as_slice()).collect();
        let mut readers: Vec<&mut dyn std::io::Read> = readers
            .iter_mut()
            .map(|r| r as &mut dyn std::io::Read)
            .collect();
        let mut terms = tempfile::tempfile().unwrap();
        let scratch = [tempfile::tempfile().unwrap(), tempfile::tempfile().unwrap()];
        let dictionary = terms.try_clone().unwrap();
        let mut got = merge_to_files(&inputs, &mut readers, &live, dictionary, scratch).unwrap();
        let mut written = Vec::new();
        std::io::Seek::rewind(&mut terms).unwrap();
        std::io::Read::read_to_end(&mut terms, &mut written).unwrap();
        assert_eq!(written, want.terms);
        assert_eq!(got.terms_len, want.terms.len());
        assert_eq!(got.terms_sum, crate::db::text_sum(&written));
        let mut postings = Vec::new();
        std::io::Read::read_to_end(&mut got.postings, &mut postings).unwrap();
        assert_eq!(got.postings_len, postings.len());
        assert_eq!(
            (got.starts, postings, got.docs),
            (want.starts, want.postings, want.docs)
        );
        assert!(want.docs > 150 && want.docs < 200, "{}", want.docs);
    }
}
