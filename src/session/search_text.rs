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
            .map(|chunk| {
                let mut p = Piece {
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
    /// each hit.
    pub fn containing(&self, word: &str) -> Vec<bool> {
        let mut hit = vec![word.is_empty(); self.len];
        if word.is_empty() {
            return hit;
        }
        let finder = Finder::new(word.as_bytes());
        for (n, p) in self.pieces.iter().enumerate() {
            let mut at = 0;
            while let Some(found) = finder.find(&p.text[at..]) {
                let pos = at + found;
                // The entry whose text holds `pos`: the first end past it.
                let k = p.ends.partition_point(|&e| e < pos + word.len());
                if k >= p.ends.len() {
                    break;
                }
                hit[n * PIECE + k] = true;
                at = p.ends[k] + 1;
            }
        }
        hit
    }
}
