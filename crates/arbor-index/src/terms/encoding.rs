//! The bytes of a segment: its dictionary, the starts of its terms' lists,
//! and the posting lists (gaps as varints, or a bitmap for common words).

use super::builder::Encoded;

/// Where a [`Writer`] puts a dictionary's or its postings' bytes: memory,
/// or a file.
pub(super) trait Sink {
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
pub(super) struct FileSink {
    out: std::io::BufWriter<std::fs::File>,
    sum: Option<crate::db::TextSum>,
    /// The first write that failed; reported when the writer finishes.
    error: Option<std::io::Error>,
}

impl FileSink {
    pub(super) fn new(file: std::fs::File, summed: bool) -> FileSink {
        FileSink {
            out: std::io::BufWriter::with_capacity(1 << 20, file),
            sum: summed.then(Default::default),
            error: None,
        }
    }

    /// The file, flushed, and the sum of what was written.
    pub(super) fn finish(self) -> std::io::Result<(std::fs::File, i64)> {
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
pub(super) struct Writer<T, P, Q> {
    terms: T,
    terms_len: usize,
    postings: P,
    pub(super) postings_len: usize,
    /// The starts blob so far: the count, then each term's start.
    starts: Vec<u8>,
    n: usize,
    post_starts: Q,
    /// One posting list's varints, put in one piece (a put per posting
    /// was a call to copy one or two bytes).
    scratch: Vec<u8>,
}

pub(super) type MemoryWriter = Writer<Vec<u8>, Vec<u8>, Vec<u8>>;

impl Default for MemoryWriter {
    fn default() -> Self {
        Writer::new(Vec::new(), Vec::new(), Vec::new(), 0)
    }
}

/// Appends `v` as a varint ([`varint`]'s bytes).
#[inline]
fn push_varint(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint's bytes: at most 5 for a `u32`.
pub(super) fn varint(mut v: u32, buf: &mut [u8; 5]) -> &[u8] {
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
    pub(super) fn new(terms: T, postings: P, post_starts: Q, n: usize) -> Writer<T, P, Q> {
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
            scratch: Vec::new(),
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        self.terms.put(bytes);
        self.terms_len += bytes.len();
    }

    /// `ids` sorted and distinct; terms pushed in increasing order.
    pub(super) fn push(&mut self, term: &[u8], ids: &[u32]) {
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
        let mut list = std::mem::take(&mut self.scratch);
        list.clear();
        let mut last = 0u32;
        for &id in ids {
            push_varint(&mut list, id - last);
            last = id;
        }
        self.put_postings(&list);
        self.scratch = list;
    }

    fn put_postings(&mut self, bytes: &[u8]) {
        self.postings.put(bytes);
        self.postings_len += bytes.len();
    }

    /// The dictionary's sink and length, the postings' sink, and the starts
    /// blob, the lists' starts read back from their sink.
    pub(super) fn finish_parts(
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
    let mut last = 0u32;
    for (i, v) in values.enumerate() {
        if i == n {
            // The posting starts count from 0 again.
            last = 0;
        }
        push_varint(&mut out, v - last);
        last = v;
    }
    out
}

/// The values of one sequence of a packed starts blob (see
/// [`pack_starts`]), read from `at` on; `bad` is set, and the values stop,
/// where the bytes end mid-varint or a sum passes `u32::MAX`.
pub(super) struct Steps<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    pub(super) last: u32,
    pub(super) left: usize,
    pub(super) bad: bool,
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
    pub(super) fn finish(self, docs: usize) -> Encoded {
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

/// How a posting list stored as a bitmap starts: no list of varints does
/// (a varint's last byte is never zero unless it is the only one).
///
/// A list is a bitmap when that is smaller: the mark, the first id as a
/// varint, then a bit per id from it to the last (bit `i % 8` of byte
/// `i / 8` for id `first + i`). A common word's list names most sessions;
/// as gaps of one or two bytes each it took ~8 times the bits (at 100,000
/// sessions, bitmaps made the posting lists 67 MB smaller, ~16 %).
pub(super) const BITMAP_MARK: [u8; 2] = [0x80, 0x00];

/// The bytes of the bits of the ids `first..=last`.
pub(super) fn bitmap_bytes(first: u32, last: u32) -> usize {
    (last - first) as usize / 8 + 1
}

/// The bytes of `ids` (sorted, distinct) as gaps in varints.
pub(super) fn varint_list_len(ids: &[u32]) -> usize {
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
