//! Reading posting lists: the terms a body term matches in each
//! dictionary, and the sessions their lists name.

use std::path::PathBuf;

use rusqlite::{Connection, MAIN_DB};

use crate::matched::{IdCounts, Matched, Narrowed, KEEP_BYTES};
use crate::terms::{decode_postings, Match, Segment};
use crate::Error;

use super::cache::Dict;
use super::idset::IdSet;
use super::text::READ_GAP;

/// The sessions having a term that matches `needle` as `how` says and
/// that `keep` accepts (stopping once they are every live session).
pub(super) fn lookup_where(
    conn: &Connection,
    segs: &[Dict],
    needle: &str,
    how: Match,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
    live: &IdSet,
) -> Result<IdSet, Error> {
    Ok(lookup_until(conn, segs, needle, how, keep, Some(live), None, false)?.0)
}

/// The sessions having a term of `segs` that matches `needle` as `how`
/// says and that `keep` accepts, stopping once the answer holds every id
/// of `live` (when there is one).
///
/// `among`: per segment, the terms that match (those a shorter needle
/// matched, narrowed: see [`Matched::narrow`]) instead of a search of the
/// whole dictionary. With
/// `remember`, also returns the terms this lookup matched per segment,
/// when it found them all, and their bytes (each followed by `\n`, up to
/// [`KEEP_BYTES`]) copied as the search found them: read again
/// afterwards, their pages (released behind the search) were read from
/// the file a second time.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(super) fn lookup_until(
    conn: &Connection,
    segs: &[Dict],
    needle: &str,
    how: Match,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
    live: Option<&IdSet>,
    among: Option<&[Vec<u32>]>,
    remember: bool,
) -> Result<(IdSet, Option<(Vec<Vec<u32>>, Vec<u8>)>), Error> {
    let full = |out: &IdSet| live.is_some_and(|l| !l.is_empty() && out.covers(l));
    let mut out = IdSet::default();
    let mut buf = Vec::new();
    let mut all_matched: Option<Vec<Vec<u32>>> = remember.then(|| Vec::with_capacity(segs.len()));
    let mut text: Vec<u8> = Vec::new();
    for (k, (rowid, s)) in segs.iter().enumerate() {
        let mut reader = Postings {
            conn,
            rowid: *rowid,
            seg: s,
            blob: None,
            batch: Vec::new(),
        };
        let mut result = Ok(false);
        let mut add = |reader: &mut Postings, out: &mut IdSet, r: (usize, usize)| {
            if reader.must_flush(r) {
                result = reader.flush(&mut buf, out, &full);
                if !matches!(result, Ok(false)) {
                    return false;
                }
            }
            reader.batch.push(r);
            true
        };
        let among = among.and_then(|a| a.get(k));
        if among.is_some() || (live.is_some() && s.docs() > 0) {
            // The matching terms, found once; their longest lists first.
            // Term numbers as `u32`: a dictionary's offsets are.
            let mut matched: Vec<u32> = Vec::new();
            match among {
                Some(terms) => {
                    let mut behind = s.behind();
                    matched.extend(terms.iter().copied().filter(|&t| {
                        behind.at(t as usize);
                        (t as usize) < s.len() && keep(s.term(t as usize))
                    }))
                }
                None => find_terms(
                    s,
                    needle,
                    how,
                    keep,
                    &mut matched,
                    all_matched.is_some().then_some(&mut text),
                ),
            }
            if let Some(m) = all_matched.as_mut() {
                m.push(matched.clone());
            }
            // Each list's place, looked up once (a third letter matches
            // a quarter of a million terms of the biggest dictionary).
            let ranges: Vec<(usize, usize)> = matched
                .iter()
                .map(|&t| s.postings_range(t as usize))
                .collect();
            let biggest = match s.docs() {
                0 => Biggest::NotDone,
                _ => biggest_lists_first(&mut reader, &ranges, &mut out, &full)?,
            };
            match biggest {
                Biggest::Full => return Ok((out, None)),
                Biggest::SegmentDone => continue,
                Biggest::NotDone => {}
            }
            for r in ranges {
                if !add(&mut reader, &mut out, r) {
                    break;
                }
            }
        } else {
            all_matched = None;
            // Terms come in dictionary order, and so do their posting
            // lists: a short word matches thousands of neighbours, read
            // together a batch at a time, so that the lookup stops (at the
            // next batch) once the answer is full rather than after finding
            // every term.
            s.find_while(needle.as_bytes(), how, &mut |t| {
                !keep(s.term(t)) || add(&mut reader, &mut out, s.postings_range(t))
            });
        }
        if matches!(result, Ok(false)) {
            result = reader.flush(&mut buf, &mut out, &full);
        }
        if result? {
            return Ok((out, None));
        }
    }
    Ok((out, all_matched.map(|m| (m, text))))
}

/// A dictionary this big is scanned on two threads, half of its terms
/// each: a word's third letter scans every dictionary, and at 100,000
/// sessions the tool output's biggest (6 million terms) took ~55 ms of
/// the ~200 of such a key, while the other core waited.
const SPLIT_SCAN_BYTES: usize = if cfg!(test) { 4096 } else { 32 << 20 };

/// The terms of `s` that match `needle` as `how` says and that `keep`
/// accepts, into `matched` in order; with `text`, their bytes too (each
/// followed by `\n`, up to about [`KEEP_BYTES`]).
fn find_terms(
    s: &Segment,
    needle: &str,
    how: Match,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
    matched: &mut Vec<u32>,
    mut text: Option<&mut Vec<u8>>,
) {
    let copy = text.is_some();
    let scan = |among: std::ops::Range<usize>, matched: &mut Vec<u32>, text: &mut Vec<u8>| {
        s.find_in(needle.as_bytes(), how, among, &mut |t| {
            let term = s.term(t);
            if keep(term) {
                matched.push(t as u32);
                if copy && text.len() <= KEEP_BYTES {
                    text.extend_from_slice(term);
                    text.push(b'\n');
                }
            }
            true
        })
    };
    let mut first_text = Vec::new();
    let first_text = text.as_deref_mut().unwrap_or(&mut first_text);
    if s.terms_bytes() < SPLIT_SCAN_BYTES {
        return scan(0..s.len(), matched, first_text);
    }
    let half = s.len() / 2;
    let (mut later, mut later_text) = (Vec::new(), Vec::new());
    rayon::join(
        || scan(0..half, matched, first_text),
        || scan(half..s.len(), &mut later, &mut later_text),
    );
    matched.extend(later);
    if let Some(text) = text {
        // As one scan would have copied them: while under the bound.
        for term in later_text.split_inclusive(|&b| b == b'\n') {
            if text.len() > KEEP_BYTES {
                break;
            }
            text.extend_from_slice(term);
        }
    }
}

/// Needles this long or longer are answered by counting (see
/// [`narrowed_by_counts`]): words, which the picker asks of the index from
/// their third character. A shorter one is usually in nearly every session,
/// and its lookup stops as soon as it knows that.
pub(super) const COUNT_FROM: usize = 3;

/// A needle's lists are counted afresh only up to this size: past it, the
/// word is likely in nearly every session, and a lookup that stops once it
/// holds them all reads less (`the`).
pub(super) const COUNT_BYTES: usize = 8 << 20;

/// The lookup of a needle that extends the last one of its kind (the word
/// being typed: `sess` → `sessi`), from the terms that one matched (see
/// [`Matched`]). The answer is the union of the posting lists of the terms
/// the needle still matches: rather than read them all again, the lists of
/// the terms it no longer matches (few, as a word grows) are taken away
/// from how many times each session was counted. The first such lookup
/// counts the lists it keeps, and so does one that would take away more
/// than it keeps.
pub(super) fn narrowed_by_counts(
    conn: &Connection,
    segs: &[Dict],
    needle: &str,
    how: Match,
    prior: Matched,
) -> Result<(IdSet, Matched), Error> {
    let Narrowed { mut kept, dropped } = prior.narrow(needle, how);
    let dropped_bytes = postings_bytes(segs, &dropped);
    kept.post_bytes = prior.post_bytes.saturating_sub(dropped_bytes);
    let counts = match prior.counts {
        Some(mut counts) if dropped_bytes <= kept.post_bytes => {
            for ((rowid, s), terms) in segs.iter().zip(&dropped) {
                read_lists(conn, *rowid, s, terms, &mut |id| counts.remove(id))?;
            }
            counts
        }
        _ => {
            let mut counts = IdCounts::default();
            for ((rowid, s), terms) in segs.iter().zip(&kept.terms) {
                read_lists(conn, *rowid, s, terms, &mut |id| counts.add(id))?;
            }
            counts
        }
    };
    let mut hit = IdSet::default();
    counts.for_each_id(&mut |id| hit.insert(id));
    kept.counts = Some(counts);
    Ok((hit, kept))
}

/// The size of the posting lists of `terms` (per segment of `segs`).
pub(super) fn postings_bytes(segs: &[Dict], terms: &[Vec<u32>]) -> usize {
    segs.iter()
        .zip(terms)
        .flat_map(|((_, s), ts)| ts.iter().map(|&t| s.postings_range(t as usize)))
        .map(|(a, b)| b - a)
        .sum()
}

/// Every id in the posting lists of `terms` (in dictionary order) of one
/// segment, read a batch at a time.
fn read_lists(
    conn: &Connection,
    rowid: i64,
    seg: &Segment,
    terms: &[u32],
    f: &mut dyn FnMut(u32),
) -> Result<(), Error> {
    let mut reader = Postings {
        conn,
        rowid,
        seg,
        blob: None,
        batch: Vec::new(),
    };
    let mut buf = Vec::new();
    for &t in terms {
        let r = seg.postings_range(t as usize);
        if reader.must_flush(r) {
            reader.drain(&mut buf, f)?;
        }
        reader.batch.push(r);
    }
    reader.drain(&mut buf, f)
}

/// What [`biggest_lists_first`] got to.
pub(super) enum Biggest {
    /// The answer holds every live id.
    Full,
    /// It holds every id of the segment.
    SegmentDone,
    /// Neither: the segment's lists are to be read in full.
    NotDone,
}

/// How many of a segment's biggest matching lists are read before the rest.
const BIGGEST_LISTS: usize = 64;

/// A letter or two is in thousands of terms, and in nearly every file:
/// the longest posting lists among them (the commonest terms) usually hold
/// every id of the segment, which is known once as many distinct ids as
/// its `docs` were seen. Reads those lists of `matched` (terms of the
/// reader's segment), biggest first, into `out`; the caller reads the rest
/// only when they did not suffice.
pub(super) fn biggest_lists_first(
    reader: &mut Postings,
    ranges: &[(usize, usize)],
    out: &mut IdSet,
    full: &dyn Fn(&IdSet) -> bool,
) -> Result<Biggest, Error> {
    use std::cmp::Reverse;
    let s = reader.seg;
    // The longest lists, kept in a small heap (a letter matches millions
    // of terms at 100,000 sessions: no copy of them all).
    let mut heap = std::collections::BinaryHeap::with_capacity(BIGGEST_LISTS + 1);
    for &(a, b) in ranges {
        // Most lists are no longer than the heap's shortest: not pushed.
        if heap.len() == BIGGEST_LISTS
            && heap
                .peek()
                .is_some_and(|Reverse(least): &Reverse<(usize, usize)>| (b - a, a) <= *least)
        {
            continue;
        }
        heap.push(Reverse((b - a, a)));
        if heap.len() > BIGGEST_LISTS {
            heap.pop();
        }
    }
    let mut biggest: Vec<(usize, usize)> = heap.into_iter().map(|Reverse(x)| x).collect();
    biggest.sort_unstable_by(|a, b| b.cmp(a));
    let (mut seen, mut distinct) = (IdSet::default(), 0usize);
    let mut buf = Vec::new();
    for (len, a) in biggest {
        buf.resize(len, 0);
        reader.blob()?.read_at_exact(&mut buf, a)?;
        decode_postings(&buf, &mut |id| {
            out.insert(id);
            if !seen.contains(&id) {
                seen.insert(id);
                distinct += 1;
            }
        });
        if full(out) {
            return Ok(Biggest::Full);
        }
        if distinct >= s.docs() {
            return Ok(Biggest::SegmentDone);
        }
    }
    Ok(Biggest::NotDone)
}

/// Posting lists of one segment read a batch at a time (see
/// [`lookup_until`]).
pub(super) struct Postings<'c, 's> {
    conn: &'c Connection,
    rowid: i64,
    seg: &'s Segment,
    blob: Option<rusqlite::blob::Blob<'c>>,
    /// Ranges in the postings blob, each starting at or after the end of
    /// the one before, within [`READ_GAP`] of it.
    batch: Vec<(usize, usize)>,
}

/// A batch of posting lists is read once it spans this much.
const BATCH_BYTES: usize = 256 << 10;

impl<'c> Postings<'c, '_> {
    /// Whether `r` cannot join the batch (it is out of order, far from it,
    /// or the batch is big enough to read).
    fn must_flush(&self, r: (usize, usize)) -> bool {
        match (self.batch.first(), self.batch.last()) {
            (Some(&(start, _)), Some(&(_, end))) => {
                r.0 < end || r.0 > end + READ_GAP || end - start > BATCH_BYTES
            }
            _ => false,
        }
    }

    /// The segment's postings blob, opened when first read.
    fn blob(&mut self) -> Result<&rusqlite::blob::Blob<'c>, Error> {
        if self.blob.is_none() {
            let blob = self
                .conn
                .blob_open(MAIN_DB, c"segments", c"postings", self.rowid, true)?;
            if blob.len() != self.seg.postings_len() {
                return Err(Error::Corrupt(PathBuf::new()));
            }
            self.blob = Some(blob);
        }
        self.blob.as_ref().ok_or(Error::Corrupt(PathBuf::new()))
    }

    /// Reads the batch's lists, handing `f` each id.
    fn drain(&mut self, buf: &mut Vec<u8>, f: &mut dyn FnMut(u32)) -> Result<(), Error> {
        let (Some(&(start, _)), Some(&(_, end))) = (self.batch.first(), self.batch.last()) else {
            return Ok(());
        };
        buf.resize(end - start, 0);
        self.blob()?.read_at_exact(buf, start)?;
        for &(a, b) in &self.batch {
            decode_postings(&buf[a - start..b - start], f);
        }
        self.batch.clear();
        Ok(())
    }

    /// Reads the batch's lists into `out`; true once `full` says it is.
    fn flush(
        &mut self,
        buf: &mut Vec<u8>,
        out: &mut IdSet,
        full: &dyn Fn(&IdSet) -> bool,
    ) -> Result<bool, Error> {
        let (Some(&(start, _)), Some(&(_, end))) = (self.batch.first(), self.batch.last()) else {
            return Ok(false);
        };
        buf.resize(end - start, 0);
        self.blob()?.read_at_exact(buf, start)?;
        for (n, &(a, b)) in self.batch.iter().enumerate() {
            decode_postings(&buf[a - start..b - start], &mut |id| out.insert(id));
            if n % 64 == 63 && full(out) {
                return Ok(true);
            }
        }
        self.batch.clear();
        Ok(full(out))
    }
}

#[cfg(test)]
mod tests {

    /// A big dictionary, scanned on two threads, gives the terms one scan
    /// finds, in order, with their bytes, for every kind of match.
    #[test]
    fn a_split_scan_finds_what_one_scan_finds() {
        use crate::terms::{distinct_tokens, Match, Segment, SegmentBuilder};
        let text: String = (0..3000u32)
            .map(|i| format!("w{}{} ", "xy".repeat((i % 11) as usize), i * 7919 % 100_003))
            .collect();
        let mut b = SegmentBuilder::default();
        b.add(1, distinct_tokens(&text));
        let e = b.take();
        let s = Segment::dictionary_only(e.terms.clone(), &e.starts).unwrap();
        assert!(s.terms_bytes() > 4 * super::SPLIT_SCAN_BYTES);
        let keep = |t: &[u8]| !t.ends_with(b"7");
        for needle in ["xy", "w", "9", "yx1", "nowhere"] {
            for how in [
                Match::Contains,
                Match::StartsWith,
                Match::EndsWith,
                Match::Exact,
            ] {
                let (mut want, mut want_text) = (Vec::new(), Vec::new());
                s.find(needle.as_bytes(), how, &mut |t| {
                    if keep(s.term(t)) {
                        want.push(t as u32);
                        want_text.extend_from_slice(s.term(t));
                        want_text.push(b'\n');
                    }
                });
                let (mut got, mut got_text) = (Vec::new(), Vec::new());
                super::find_terms(&s, needle, how, &keep, &mut got, Some(&mut got_text));
                assert_eq!(got, want, "{needle:?} {how:?}");
                assert_eq!(got_text, want_text, "{needle:?} {how:?}");
                let mut alone = Vec::new();
                super::find_terms(&s, needle, how, &keep, &mut alone, None);
                assert_eq!(alone, want, "{needle:?} {how:?}");
            }
        }
    }
}
