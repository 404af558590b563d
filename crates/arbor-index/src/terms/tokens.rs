//! The distinct tokens and pairs of a text, as the tests' reference for
//! what the builders index.

use super::builder::{grow_table, term_key, term_slot};
use super::pairs::{pair_left, pair_right};

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
/// appearance.
#[cfg(test)]
pub fn distinct_token_ranges(text: &str) -> Vec<(u32, u32)> {
    let b = text.as_bytes();
    let mut start = 0usize;
    let tokens = memchr::memchr_iter(b' ', b)
        .chain(std::iter::once(b.len()))
        .map(move |end| {
            let s = start;
            start = end + 1;
            (s, end - s)
        });
    distinct_ranges(b, tokens)
}

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
/// in order of first appearance; empty ones left out. An open-addressing
/// table of `(key, start, len)` where a string of up to 8 bytes is its own
/// key (so equal keys mean equal strings) and a longer one is keyed by its
/// hash and compared byte by byte.
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
            grow_table(&mut table);
            mask = table.len() - 1;
        }
    }
    out
}
