//! The tree's type-to-search over every entry at once: each entry's
//! [`search_text`] (lowercased) in one buffer, built once per load on all
//! cores, so a keystroke costs one substring scan per word rather than
//! parsing every entry again.

use memchr::memmem::Finder;
use rayon::prelude::*;

use super::reader::Session;
use super::view::search_text;

/// The search text of every entry of a session, in entry order.
#[derive(Debug, Default)]
pub struct SearchText {
    /// The texts, each followed by `\n` (never in a query word).
    text: Vec<u8>,
    /// End of each entry's text in `text` (before its `\n`).
    ends: Vec<usize>,
}

impl SearchText {
    pub fn build(session: &Session) -> SearchText {
        let entries = &session.entries;
        let calls = &session.calls;
        let parts: Vec<(Vec<u8>, Vec<usize>)> = entries
            .par_chunks(512)
            .map(|chunk| {
                let mut text = Vec::new();
                let mut ends = Vec::with_capacity(chunk.len());
                for e in chunk {
                    text.extend_from_slice(search_text(e, calls).as_bytes());
                    ends.push(text.len());
                    text.push(b'\n');
                }
                (text, ends)
            })
            .collect();
        let total = parts.iter().map(|p| p.0.len()).sum();
        let mut out = SearchText {
            text: Vec::with_capacity(total),
            ends: Vec::with_capacity(entries.len()),
        };
        for (text, ends) in parts {
            let base = out.text.len();
            out.text.extend_from_slice(&text);
            out.ends.extend(ends.into_iter().map(|e| base + e));
        }
        out
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The search text of entry `i`.
    pub fn get(&self, i: usize) -> &str {
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] + 1,
        };
        std::str::from_utf8(&self.text[start..self.ends[i]]).unwrap_or_default()
    }

    /// Which entries' text contains `word` (already lowercased, no
    /// whitespace): one scan of the whole buffer, skipping to the next
    /// entry after each hit.
    pub fn containing(&self, word: &str) -> Vec<bool> {
        let mut hit = vec![false; self.ends.len()];
        if word.is_empty() {
            hit.fill(true);
            return hit;
        }
        let finder = Finder::new(word.as_bytes());
        let mut at = 0;
        while let Some(p) = finder.find(&self.text[at..]) {
            let pos = at + p;
            // The entry whose text holds `pos`: the first end past it.
            let i = self.ends.partition_point(|&e| e < pos + word.len());
            if i >= self.ends.len() {
                break;
            }
            hit[i] = true;
            at = self.ends[i] + 1;
        }
        hit
    }
}
