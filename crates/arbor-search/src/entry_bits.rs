//! Which entries of a session each body term of a query matches in: a bit
//! per term per entry (the tree's search reads it; see
//! [`crate::hits::session_term_bits`]).

/// Entries per block: the unit the bits are written in on all cores.
pub const BLOCK: usize = 512;
const WORDS: usize = BLOCK / 64;

/// A bit per term per entry, block by block: a block's terms are
/// [`BLOCK`] bits each, side by side, so each block is written by one task
/// with no other's words in between. At a million entries and one term it
/// is 125 KB (a `u32` an entry was 4 MB, whatever the number of terms).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntryTermBits {
    entries: usize,
    terms: usize,
    words: Vec<u64>,
}

impl EntryTermBits {
    /// All clear, for `entries` entries and `terms` terms (at most 32: a
    /// query's terms past them are not looked for).
    pub fn new(entries: usize, terms: usize) -> EntryTermBits {
        let terms = terms.min(32);
        EntryTermBits {
            entries,
            terms,
            words: vec![0; entries.div_ceil(BLOCK) * terms * WORDS],
        }
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    pub fn terms(&self) -> usize {
        self.terms
    }

    /// Term `term` matches in entry `entry`.
    pub fn has(&self, entry: usize, term: usize) -> bool {
        if entry >= self.entries || term >= self.terms {
            return false;
        }
        let (block, k) = (entry / BLOCK, entry % BLOCK);
        let w = (block * self.terms + term) * WORDS + k / 64;
        self.words[w] >> (k % 64) & 1 == 1
    }

    /// The entries term `term` matches in, in order.
    pub fn entries_of(&self, term: usize) -> impl Iterator<Item = usize> + '_ {
        let per_block = self.terms * WORDS;
        let blocks = if term < self.terms && per_block > 0 {
            self.words.chunks(per_block).collect()
        } else {
            Vec::new()
        };
        blocks.into_iter().enumerate().flat_map(move |(b, words)| {
            let mine = &words[term * WORDS..(term + 1) * WORDS];
            mine.iter().enumerate().flat_map(move |(w, &bits)| {
                let first = b * BLOCK + w * 64;
                Ones(bits).map(move |i| first + i)
            })
        })
    }

    /// Each block of [`BLOCK`] entries' words, for its task to write with
    /// [`set_in_block`] (in block order).
    pub fn blocks_mut(&mut self) -> std::slice::ChunksMut<'_, u64> {
        self.words.chunks_mut((self.terms * WORDS).max(1))
    }

    /// [`EntryTermBits::blocks_mut`] for tasks on all cores.
    pub fn par_blocks_mut(&mut self) -> rayon::slice::ChunksMut<'_, u64> {
        use rayon::slice::ParallelSliceMut;
        self.words.par_chunks_mut((self.terms * WORDS).max(1))
    }
}

/// Sets in a block's words (of [`EntryTermBits::blocks_mut`]) the bits of
/// `terms` (bit `t`: term `t`) for its `k`th entry.
pub fn set_in_block(block: &mut [u64], k: usize, terms: u32) {
    let mut t = terms;
    while t != 0 {
        let term = t.trailing_zeros() as usize;
        if let Some(w) = block.get_mut(term * WORDS + k / 64) {
            *w |= 1 << (k % 64);
        }
        t &= t - 1;
    }
}

/// The set bits of a word, lowest first.
struct Ones(u64);

impl Iterator for Ones {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let i = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bits set block by block read back per entry and per term, across
    /// block borders and a last block part full.
    #[test]
    fn bits_set_by_block_read_back_by_entry_and_term() {
        let n = 3 * BLOCK + 77;
        let terms_of = |e: usize| -> u32 { (e % 7 == 0) as u32 | ((e % 3 == 1) as u32) << 2 };
        let mut bits = EntryTermBits::new(n, 3);
        for (b, block) in bits.blocks_mut().enumerate() {
            for k in 0..BLOCK {
                let e = b * BLOCK + k;
                if e < n {
                    set_in_block(block, k, terms_of(e));
                }
            }
        }
        for e in 0..n + 5 {
            for t in 0..4 {
                let want = e < n && t < 3 && terms_of(e) >> t & 1 == 1;
                assert_eq!(bits.has(e, t), want, "{e} {t}");
            }
        }
        for t in 0..4 {
            let want: Vec<usize> = (0..n)
                .filter(|&e| t < 3 && terms_of(e) >> t & 1 == 1)
                .collect();
            assert_eq!(bits.entries_of(t).collect::<Vec<_>>(), want, "{t}");
        }
        assert_eq!(EntryTermBits::new(n, 0).entries_of(0).count(), 0);
    }
}
