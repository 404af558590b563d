//! The tree's type-to-search over every entry at once: each entry's
//! [`search_text`] (lowercased) in one buffer, built once per load on all
//! cores, so a keystroke costs one substring scan per word rather than
//! parsing every entry again.

use memchr::memmem::Finder;
use rayon::prelude::*;

use super::reader::Session;
use super::view::search_text;

/// Entries per piece of the search text.
const PIECE: usize = 512;

/// The search text of every entry of a session, in entry order, in pieces
/// of [`PIECE`] entries (built apart on all cores and kept apart: joining
/// them would hold the text twice for a moment).
#[derive(Debug, Default)]
pub struct SearchText {
    pieces: Vec<Piece>,
    len: usize,
}

#[derive(Debug, Default)]
struct Piece {
    /// The number of its first entry.
    first: usize,
    /// The texts, each followed by `\n` (never in a query word).
    text: Vec<u8>,
    /// End of each entry's text in `text` (before its `\n`).
    ends: Vec<usize>,
}

impl SearchText {
    pub fn build(session: &Session) -> SearchText {
        let entries = &session.entries;
        let calls = &session.calls;
        let pieces: Vec<Piece> = entries
            .par_chunks(PIECE)
            .enumerate()
            .map(|(n, chunk)| {
                let mut p = Piece {
                    first: n * PIECE,
                    text: Vec::new(),
                    ends: Vec::with_capacity(chunk.len()),
                };
                session.for_each_parsed(chunk, |e| {
                    p.text.extend_from_slice(search_text(e, calls).as_bytes());
                    p.ends.push(p.text.len());
                    p.text.push(b'\n');
                });
                p.text.shrink_to_fit();
                p
            })
            .collect();
        SearchText {
            pieces,
            len: entries.len(),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The search text of entry `i`.
    pub fn get(&self, i: usize) -> &str {
        let p = &self.pieces[i / PIECE];
        let k = i % PIECE;
        let start = match k {
            0 => 0,
            _ => p.ends[k - 1] + 1,
        };
        std::str::from_utf8(&p.text[start..p.ends[k]]).unwrap_or_default()
    }

    /// Which entries' text contains `word` (already lowercased, no
    /// whitespace): one scan of the text, skipping to the next entry after
    /// each hit; the pieces are scanned on all cores.
    pub fn containing(&self, word: &str) -> Vec<bool> {
        if word.is_empty() {
            return vec![true; self.len];
        }
        let finder = Finder::new(word.as_bytes());
        self.per_piece(|p, hit| {
            let mut at = 0;
            while let Some(found) = finder.find(&p.text[at..]) {
                let pos = at + found;
                // The entry whose text holds `pos`: the first end past it.
                let k = p.ends.partition_point(|&e| e < pos + word.len());
                if k >= p.ends.len() {
                    break;
                }
                hit[k] = true;
                at = p.ends[k] + 1;
            }
        })
    }

    /// [`SearchText::containing`], looking only at the entries `within`
    /// marks: the answer for a word that `word` contains (the previous
    /// keystroke's), whose matches hold every match of `word`. Typing a
    /// word then scans less at every key instead of the whole text again.
    pub fn containing_within(&self, word: &str, within: &[bool]) -> Vec<bool> {
        if within.len() != self.len {
            return self.containing(word);
        }
        let finder = Finder::new(word.as_bytes());
        self.per_piece(|p, hit| {
            let first = p.first;
            for (k, h) in hit.iter_mut().enumerate() {
                if within[first + k] {
                    let start = if k == 0 { 0 } else { p.ends[k - 1] + 1 };
                    *h = finder.find(&p.text[start..p.ends[k]]).is_some();
                }
            }
        })
    }

    /// Runs `scan` on every piece (on all cores) with the piece's slice of
    /// the answer, all false at first.
    fn per_piece(&self, scan: impl Fn(&Piece, &mut [bool]) + Sync) -> Vec<bool> {
        let mut hit = vec![false; self.len];
        hit.par_chunks_mut(PIECE)
            .zip(self.pieces.par_iter())
            .for_each(|(h, p)| scan(p, h));
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(entries: &[&str]) -> SearchText {
        let mut pieces = Vec::new();
        for (n, chunk) in entries.chunks(PIECE).enumerate() {
            let mut p = Piece {
                first: n * PIECE,
                ..Piece::default()
            };
            for e in chunk {
                p.text.extend_from_slice(e.as_bytes());
                p.ends.push(p.text.len());
                p.text.push(b'\n');
            }
            pieces.push(p);
        }
        SearchText {
            pieces,
            len: entries.len(),
        }
    }

    #[test]
    fn narrowing_answers_as_a_whole_scan() {
        let words = ["parse", "parser", "sparse", "pa", "rse", "x", "", "parsers"];
        let entries: Vec<String> = (0..(3 * PIECE + 17))
            .map(|i| match i % 5 {
                0 => format!("the parser {i}"),
                1 => format!("sparse matrix {i}"),
                2 => String::new(),
                3 => format!("p a r s e {i}"),
                _ => format!("parsers and parse{i}"),
            })
            .collect();
        let refs: Vec<&str> = entries.iter().map(String::as_str).collect();
        let t = text(&refs);
        for w in words {
            let naive: Vec<bool> = refs.iter().map(|e| e.contains(w)).collect();
            assert_eq!(t.containing(w), naive, "{w:?}");
            for u in words.iter().filter(|u| w.contains(**u)) {
                assert_eq!(
                    t.containing_within(w, &t.containing(u)),
                    naive,
                    "{w:?} in {u:?}"
                );
            }
        }
    }
}
