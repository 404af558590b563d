//! A query's body terms found in one long text a block at a time: the text
//! is normalized a megabyte at a time into a window that keeps the end of
//! the block before (as long as the longest term, so a match across a
//! border is found), instead of normalizing the whole text into a copy (a
//! tool's output of 200 MB was held twice, then three times with the
//! matched text kept for its snippet). Words and phrases only: a regex can
//! match across any distance, so a text is matched whole when one is asked.

use std::ops::Range;

use arbor_session::normalize::normalize;

use super::query::Term;

/// Texts at least this long are matched a block at a time.
pub const LONG_TEXT: usize = 4 << 20;
/// How much text is normalized at a time.
const BLOCK: usize = 1 << 20;

/// [`find_in_blocks`] for a text of at least [`LONG_TEXT`] bytes; `None`
/// for a shorter one (matched whole) or when a term is a regex.
pub fn find_in_long(terms: &[Term], mask: u32, text: &str) -> Option<Vec<Option<Range<usize>>>> {
    if text.len() < LONG_TEXT {
        return None;
    }
    find_in_blocks(terms, mask, text, BLOCK)
}

/// The first match of each term of `mask` in `text`'s normal form (as
/// `Term::find_in` on the whole normal form finds it), as a byte range of
/// that normal form; `None` when a term of `mask` is a regex.
pub fn find_in_blocks(
    terms: &[Term],
    mask: u32,
    text: &str,
    block: usize,
) -> Option<Vec<Option<Range<usize>>>> {
    let wanted = |i: usize| i < 32 && mask & (1 << i) != 0;
    let mut longest = 0;
    for (_, t) in terms.iter().enumerate().filter(|&(i, _)| wanted(i)) {
        longest = longest.max(match t {
            Term::Word { lower, .. } => lower.len(),
            Term::Phrase(p) => p.len(),
            Term::Regex(_) => return None,
        });
    }
    let mut found: Vec<Option<Range<usize>>> = vec![None; terms.len()];
    let mut window = String::with_capacity(block + longest + 8);
    // Where `window` starts in the whole normal form.
    let mut base = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(block);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (piece, tail) = rest.split_at(cut);
        rest = tail;
        // After a space, or at the start, as the whole text is normalized.
        normalize(piece, &mut window);
        if rest.is_empty() && window.ends_with(' ') {
            // The normal form of a part has no space at its end.
            window.pop();
        }
        let mut left = 0;
        for (i, t) in terms.iter().enumerate().filter(|&(i, _)| wanted(i)) {
            if found[i].is_none() {
                found[i] = t.find_in(&window).map(|r| base + r.start..base + r.end);
                left += usize::from(found[i].is_none());
            }
        }
        if left == 0 {
            break;
        }
        // Keep what a match across the border may start in, and at least
        // the last character (whether the text is after a space).
        let mut keep = window.len().saturating_sub(longest);
        while keep > 0 && !window.is_char_boundary(keep) {
            keep -= 1;
        }
        if keep == window.len() {
            keep = window.char_indices().next_back().map_or(0, |(k, _)| k);
        }
        window.drain(..keep);
        base += keep;
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Query;

    /// The first match of each term in the whole normal form.
    fn whole(q: &Query, text: &str) -> Vec<Option<Range<usize>>> {
        let mut norm = String::new();
        arbor_session::normalize::push_normalized(text, &mut norm);
        q.terms.iter().map(|t| t.find_in(&norm)).collect()
    }

    #[test]
    fn matches_across_block_borders_are_found_where_the_whole_text_has_them() {
        let q = Query::parse_at("needle \"two  Words\" ÉCOLE zzz", 0);
        let mut text = String::new();
        for n in 0..400 {
            text.push_str(&"word ".repeat(n % 37));
            text.push_str(["NEEDLE", "two\n\n words", "\u{c9}cole", "x  \t y"][n % 4]);
            text.push_str("  \u{212a}elvin\n");
        }
        let mask = u32::MAX;
        for block in [1, 2, 3, 5, 7, 64, 1000, 1 << 20] {
            let got = find_in_blocks(&q.terms, mask, &text, block).unwrap();
            assert_eq!(got, whole(&q, &text), "block {block}");
        }
        assert!(whole(&q, &text).iter().take(3).all(Option::is_some));
        let q = Query::parse_at("re:nee+dle", 0);
        assert!(find_in_blocks(&q.terms, mask, &text, 64).is_none());
    }
}
