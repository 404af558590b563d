//! Merging segments into one, dropping the ids of files gone.

#[cfg(test)]
use super::builder::Encoded;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::encoding::{decode_postings, FileSink, Sink, Writer};
use super::segment::{Behind, Segment};

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
