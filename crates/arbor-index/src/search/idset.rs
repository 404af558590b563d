//! Sets of file row ids: what a search narrows and answers with.

use std::collections::HashSet;

use crate::codec::FxBuild;

/// A set of file row ids: a bitmap (row ids are small and dense; a
/// posting list of a common word names most sessions), with a side set for
/// any id too large for it.
#[derive(Default, Clone)]
pub(super) struct IdSet {
    words: Vec<u64>,
    large: HashSet<u32, FxBuild>,
}

/// Ids below this live in the bitmap (at most 512 KiB).
pub(super) const BITMAP_IDS: u32 = 1 << 22;

impl IdSet {
    pub(super) fn insert(&mut self, id: u32) {
        if id >= BITMAP_IDS {
            self.large.insert(id);
            return;
        }
        let w = (id >> 6) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (id & 63);
    }

    pub(super) fn contains(&self, id: &u32) -> bool {
        if *id >= BITMAP_IDS {
            return self.large.contains(id);
        }
        self.words
            .get((*id >> 6) as usize)
            .is_some_and(|w| w & (1 << (id & 63)) != 0)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.large.is_empty() && self.words.iter().all(|&w| w == 0)
    }

    /// About what it holds on the heap (the bitmap and the side set).
    pub(super) fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8 + self.large.capacity() * 8
    }

    /// Whether every id of `other` is in this set.
    pub(super) fn covers(&self, other: &IdSet) -> bool {
        other
            .words
            .iter()
            .enumerate()
            .all(|(i, &w)| w == 0 || self.words.get(i).is_some_and(|&mine| w & !mine == 0))
            && other.large.iter().all(|id| self.large.contains(id))
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words
            .iter()
            .enumerate()
            .flat_map(|(i, &w)| {
                let mut w = w;
                std::iter::from_fn(move || {
                    if w == 0 {
                        return None;
                    }
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    Some((i as u32) << 6 | b)
                })
            })
            .chain(self.large.iter().copied())
    }

    /// Drops the ids in `other`.
    pub(super) fn subtract(&mut self, other: &IdSet) {
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            *w &= !o;
        }
        self.large.retain(|id| !other.large.contains(id));
    }

    /// Whether it holds at most `n` ids.
    pub(super) fn len_at_most(&self, n: usize) -> bool {
        let mut count = self.large.len();
        for w in &self.words {
            count += w.count_ones() as usize;
            if count > n {
                return false;
            }
        }
        count <= n
    }

    /// Adds the ids of `ids` that are also in `live` and, when there is
    /// one, in `allowed`: a word at a time (an id at a time, through a
    /// table of paths, was ~25 % of a keystroke's lookups when a word is in
    /// most sessions).
    pub(super) fn add_kept(&mut self, ids: &IdSet, live: &IdSet, allowed: Option<&IdSet>) {
        let n = ids.words.len().min(live.words.len());
        if self.words.len() < n {
            self.words.resize(n, 0);
        }
        for (i, w) in self.words[..n].iter_mut().enumerate() {
            let mut add = ids.words[i] & live.words[i];
            if let Some(a) = allowed {
                add &= a.words.get(i).copied().unwrap_or(0);
            }
            *w |= add;
        }
        for id in &ids.large {
            if live.large.contains(id) && allowed.is_none_or(|a| a.contains(id)) {
                self.large.insert(*id);
            }
        }
    }

    /// Keeps the ids also in `other`.
    pub(super) fn intersect(&mut self, other: &IdSet) {
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
        }
        self.large.retain(|id| other.large.contains(id));
    }
}

impl Extend<u32> for IdSet {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        for id in iter {
            self.insert(id);
        }
    }
}

impl FromIterator<u32> for IdSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut s = IdSet::default();
        s.extend(iter);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Adding a set's ids kept by `live` (and `allowed`) a word at a
        /// time adds exactly the ids an id-by-id filter keeps, whatever
        /// the sets' lengths, and ids past the bitmap included.
        #[test]
        fn ids_kept_a_word_at_a_time_are_those_kept_one_by_one(
            before in proptest::collection::vec(0u32..700, 0..40),
            ids in proptest::collection::vec(0u32..900, 0..200),
            live in proptest::collection::vec(0u32..800, 0..200),
            allowed in proptest::option::of(proptest::collection::vec(0u32..600, 0..200)),
            large in proptest::collection::vec(0u32..4, 0..4),
        ) {
            let set = |v: &[u32], big: &[u32]| -> IdSet {
                v.iter().copied().chain(big.iter().map(|b| BITMAP_IDS + b)).collect()
            };
            let ids_set = set(&ids, &large);
            let live_set = set(&live, &large[..large.len() / 2]);
            let allowed_set = allowed.as_ref().map(|a| set(a, &large[..large.len().min(1)]));
            let mut got = set(&before, &[]);
            got.add_kept(&ids_set, &live_set, allowed_set.as_ref());
            let mut want = set(&before, &[]);
            want.extend(ids_set.iter().filter(|id| {
                live_set.contains(id) && allowed_set.as_ref().is_none_or(|a| a.contains(id))
            }));
            let sorted = |s: &IdSet| {
                let mut v: Vec<u32> = s.iter().collect();
                v.sort_unstable();
                v
            };
            proptest::prop_assert_eq!(sorted(&got), sorted(&want));
        }
    }

    #[test]
    fn a_set_covers_another_when_it_holds_all_its_ids() {
        let set = |ids: &[u32]| {
            let mut s = IdSet::default();
            for &id in ids {
                s.insert(id);
            }
            s
        };
        let big = BITMAP_IDS + 5;
        let live = set(&[1, 64, 200, big]);
        assert!(set(&[0, 1, 64, 200, 300, big]).covers(&live));
        assert!(!set(&[1, 64, 200]).covers(&live));
        assert!(!set(&[1, 64, big]).covers(&live));
        // Shorter bitmaps: a word beyond the other's end must be empty.
        assert!(!set(&[1]).covers(&set(&[1, 4000])));
        assert!(set(&[1, 4000]).covers(&set(&[1])));
        assert!(set(&[]).covers(&set(&[])));
    }
}
