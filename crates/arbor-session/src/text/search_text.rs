//! The tree's type-to-search over every entry at once: each entry's
//! [`search_text`] (lowercased) in one buffer, built once per load on all
//! cores, so a keystroke costs one substring scan per word rather than
//! parsing every entry again.

use memchr::memmem::Finder;
use rayon::prelude::*;

use crate::reader::Session;
use crate::view::search_text;

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
    /// End of each entry's text in `text` (before its `\n`): 4 bytes an
    /// entry (a piece's text stays under 4 GB: see [`Piece::push`]).
    ends: Vec<u32>,
    /// Each entry's [`byte_classes`]: which entries a word can be in,
    /// known without reading their text.
    classes: Vec<u32>,
}

/// The bit of a byte's class: one per letter (a text holds a one-letter
/// word exactly when it has that bit), the rest shared — 4 bytes an entry
/// (a million entries' classes took 8 MB as 64 classes).
const fn class_bit(b: u8) -> u32 {
    let class = match b {
        b'a'..=b'z' => b - b'a',
        b'0'..=b'9' => 26 + (b - b'0') % 3,
        0x80.. => 31,
        _ => 29 + b % 2,
    };
    1 << class
}

const CLASS: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = class_bit(b as u8);
        b += 1;
    }
    t
};

/// The classes of the bytes of `text`.
fn byte_classes(text: &[u8]) -> u32 {
    text.iter().fold(0, |m, &b| m | CLASS[b as usize])
}

impl Piece {
    fn push(&mut self, text: &[u8]) {
        // The tree reads no line over 32 MB, so 512 entries' texts fit in
        // 4 GB; were they longer, the rest of the piece is not searched.
        if self.text.len() + text.len() < u32::MAX as usize {
            self.text.extend_from_slice(text);
        }
        self.ends.push(self.text.len() as u32);
        self.classes.push(byte_classes(text));
        self.text.push(b'\n');
    }

    /// The text of its `k`th entry.
    fn entry(&self, k: usize) -> &[u8] {
        let start = match k {
            0 => 0,
            _ => self.ends[k - 1] as usize + 1,
        };
        &self.text[start..self.ends[k] as usize]
    }
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
                    classes: Vec::with_capacity(chunk.len()),
                };
                session.for_each_parsed(chunk, |e| p.push(search_text(e, calls).as_bytes()));
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
        std::str::from_utf8(self.pieces[i / PIECE].entry(i % PIECE)).unwrap_or_default()
    }

    /// Which entries' text contains `word` (already lowercased, no
    /// whitespace), a bit per entry (bit `i % 64` of word `i / 64`; a
    /// `bool` each was 1 MB at a million entries). Only the entries holding
    /// every byte class of the word are read (none for a letter: its class
    /// answers); the pieces are scanned on all cores.
    pub fn containing(&self, word: &str) -> Vec<u64> {
        self.scan(word, None)
    }

    /// [`SearchText::containing`], looking only at the entries `within`
    /// marks (bits as it answers): the answer for a word that `word`
    /// contains (the previous keystroke's), whose matches hold every match
    /// of `word`. Typing a word then scans less at every key instead of the
    /// whole text again.
    pub fn containing_within(&self, word: &str, within: &[u64]) -> Vec<u64> {
        if within.len() != self.len.div_ceil(64) {
            return self.containing(word);
        }
        self.scan(word, Some(within))
    }

    fn scan(&self, word: &str, within: Option<&[u64]>) -> Vec<u64> {
        let need = byte_classes(word.as_bytes());
        let exact = word.is_empty() || word.len() == 1 && word.as_bytes()[0].is_ascii_lowercase();
        let finder = Finder::new(word.as_bytes());
        let marked = |bits: &[u64], i: usize| bits[i / 64] >> (i % 64) & 1 == 1;
        // Every entry holds the empty word.
        let within = within.filter(|_| !word.is_empty());
        self.per_piece(|p, hit| {
            for k in 0..p.ends.len() {
                if p.classes[k] & need != need || within.is_some_and(|w| !marked(w, p.first + k)) {
                    continue;
                }
                if exact || finder.find(p.entry(k)).is_some() {
                    hit[k / 64] |= 1 << (k % 64);
                }
            }
        })
    }

    /// Runs `scan` on every piece (on all cores) with the piece's words of
    /// the answer, all clear at first.
    fn per_piece(&self, scan: impl Fn(&Piece, &mut [u64]) + Sync) -> Vec<u64> {
        let mut hit = vec![0u64; self.len.div_ceil(64)];
        hit.par_chunks_mut(PIECE / 64)
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
                p.push(e.as_bytes());
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
        let words = [
            "parse", "parser", "sparse", "pa", "rse", "x", "", "parsers", "p", "7", "é", "-", "1-",
        ];
        let entries: Vec<String> = (0..(3 * PIECE + 17))
            .map(|i| match i % 5 {
                0 => format!("the parser {i}"),
                1 => format!("sparse matrix {i}"),
                2 => String::new(),
                3 => format!("p a r s e {i}-é"),
                _ => format!("parsers and parse{i}"),
            })
            .collect();
        let refs: Vec<&str> = entries.iter().map(String::as_str).collect();
        let t = text(&refs);
        let bools = |bits: Vec<u64>| -> Vec<bool> {
            (0..refs.len())
                .map(|i| bits[i / 64] >> (i % 64) & 1 == 1)
                .collect()
        };
        for w in words {
            let naive: Vec<bool> = refs.iter().map(|e| e.contains(w)).collect();
            assert_eq!(bools(t.containing(w)), naive, "{w:?}");
            for u in words.iter().filter(|u| w.contains(**u)) {
                assert_eq!(
                    bools(t.containing_within(w, &t.containing(u))),
                    naive,
                    "{w:?} in {u:?}"
                );
            }
        }
    }
}
