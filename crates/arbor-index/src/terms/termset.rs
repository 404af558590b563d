//! The distinct words of a file's text, each numbered once.

use super::builder::{grow_table, same_long_term, term_key, term_slot};

/// A set of distinct terms, gathered one at a time (a file's words of one
/// part): an arena of their bytes and an open-addressing table keyed as in
/// `distinct_token_ranges`.
pub struct TermSet {
    table: Vec<(u64, u32, u32)>,
    arena: Vec<u8>,
    ranges: Vec<(u32, u32)>,
}

impl Default for TermSet {
    fn default() -> Self {
        TermSet {
            table: vec![(0, 0, 0); 256],
            arena: Vec::new(),
            ranges: Vec::new(),
        }
    }
}

impl TermSet {
    /// The bytes its buffers hold (their capacities), for the trace.
    pub fn heap_bytes(&self) -> usize {
        self.table.capacity() * 16 + self.arena.capacity() + self.ranges.capacity() * 8
    }

    /// Adds `t` unless it is empty or already in.
    #[inline]
    #[cfg(test)]
    pub fn insert(&mut self, t: &[u8]) {
        self.index_of(t);
    }

    /// Adds `t` unless it is already in, and gives its number (the order of
    /// first insertion: `into_parts`' ranges); `None` for an empty term or
    /// one the arena cannot hold.
    #[inline]
    pub fn index_of(&mut self, t: &[u8]) -> Option<u32> {
        if t.is_empty()
            || t.len() >= u32::MAX as usize
            || self.arena.len() + t.len() >= u32::MAX as usize
        {
            return None;
        }
        let (key, len) = (term_key(t), t.len() as u32);
        let mask = self.table.len() - 1;
        let mut i = term_slot(key, t.len()) & mask;
        loop {
            let (k, n, tl) = self.table[i];
            if tl == 0 {
                // Slots hold len + 1 so that 0 means empty, and the term's
                // number (its start is in `ranges`).
                let start = self.arena.len() as u32;
                let n = self.ranges.len() as u32;
                self.table[i] = (key, n, len + 1);
                self.arena.extend_from_slice(t);
                self.ranges.push((start, len));
                if self.ranges.len() * 2 > self.table.len() {
                    self.grow();
                }
                return Some(n);
            }
            if k == key && tl == len + 1 && (len <= 8 || same_long_term(self.term(n), t)) {
                return Some(n);
            }
            i = (i + 1) & mask;
        }
    }

    /// The bytes of term number `n`.
    #[inline]
    pub fn term(&self, n: u32) -> &[u8] {
        let (s, len) = self.ranges[n as usize];
        &self.arena[s as usize..(s + len) as usize]
    }

    fn grow(&mut self) {
        grow_table(&mut self.table);
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The terms' bytes, one after another, and each term's `(start, len)`
    /// in them, in order of first insertion.
    #[cfg(test)]
    pub fn into_parts(self) -> (Vec<u8>, Vec<(u32, u32)>) {
        (self.arena, self.ranges)
    }

    /// [`TermSet::into_parts`], leaving the set empty but its table
    /// allocated, sized for as many terms as it held (see [`reset_table`]),
    /// and room for as many bytes and terms again: the parts are handed
    /// away, and a set grown from nothing for each file reallocated (and
    /// copied) its arena a dozen times per file.
    pub fn take_parts(&mut self) -> (Vec<u8>, Vec<(u32, u32)>) {
        reset_table(&mut self.table, self.ranges.len());
        let (bytes, terms) = (self.arena.len(), self.ranges.len());
        (
            std::mem::replace(&mut self.arena, Vec::with_capacity(bytes)),
            std::mem::replace(&mut self.ranges, Vec::with_capacity(terms)),
        )
    }
}

/// Empties an open-addressing table for reuse: its memory is kept (a
/// fresh one is fresh pages to fault in and zero, and growing it again
/// rehashes it again), cut down to what `used` entries need: a set is
/// reused for the next file, and files are read biggest first, so the
/// next one needs about as many.
fn reset_table<T: Copy + Default>(table: &mut Vec<T>, used: usize) {
    let want = (used * 2 + 1).next_power_of_two().max(256);
    if table.len() > want {
        table.truncate(want);
    }
    table.fill(T::default());
}
