//! Entry id → position, and each entry's children, for a million entries
//! in little memory.
//!
//! A map of `String` to `usize` over a million ids was 2^21 buckets of 32
//! bytes and a copy of every id (about 80 MB); an id of 8 lowercase hex
//! digits (Atomic's shape, nearly every id) is kept here as its number, in
//! a bucket of 8 bytes, and only other ids as text. The children of every
//! entry are one array of positions, not an array per entry.

use std::borrow::Cow;
use std::collections::HashMap;

use arbor_util::hash::FxBuild;

/// Entry ids and the position of the entry each names (the last one, when
/// ids repeat: it is inserted last).
#[derive(Debug, Clone, Default)]
pub struct IdIndex {
    /// Ids of 8 lowercase hex digits, by their number.
    hex: HashMap<u32, u32, FxBuild>,
    /// Every other id.
    other: HashMap<Box<str>, u32, FxBuild>,
}

/// An id of 8 lowercase hex digits as its number (`None` for any other).
fn hex_id(id: &str) -> Option<u32> {
    let b = id.as_bytes();
    if b.len() != 8 {
        return None;
    }
    b.iter().try_fold(0u32, |n, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            _ => return None,
        };
        Some(n << 4 | u32::from(d))
    })
}

/// A position as stored (sessions hold far fewer than 2^32 entries).
fn pos32(i: usize) -> u32 {
    u32::try_from(i).unwrap_or(u32::MAX)
}

impl IdIndex {
    /// The index of `ids`, in order (a later equal id replaces an earlier).
    pub fn of<'a>(ids: impl Iterator<Item = &'a str> + Clone) -> IdIndex {
        let hex = ids.clone().filter(|id| hex_id(id).is_some()).count();
        let mut index = IdIndex {
            hex: HashMap::with_capacity_and_hasher(hex, FxBuild::default()),
            other: HashMap::default(),
        };
        for (i, id) in ids.enumerate() {
            index.insert(id, i);
        }
        index
    }

    pub fn insert(&mut self, id: &str, i: usize) {
        match hex_id(id) {
            Some(n) => {
                self.hex.insert(n, pos32(i));
            }
            None => {
                self.other.insert(id.into(), pos32(i));
            }
        }
    }

    /// The position of the entry `id` names.
    pub fn get(&self, id: &str) -> Option<usize> {
        let at = match hex_id(id) {
            Some(n) => self.hex.get(&n),
            None => self.other.get(id),
        };
        at.map(|&i| i as usize)
    }

    pub fn len(&self) -> usize {
        self.hex.len() + self.other.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every id and its position, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (Cow<'_, str>, usize)> + '_ {
        let hex = self
            .hex
            .iter()
            .map(|(n, &i)| (Cow::Owned(format!("{n:08x}")), i as usize));
        let other = self
            .other
            .iter()
            .map(|(id, &i)| (Cow::Borrowed(&**id), i as usize));
        hex.chain(other)
    }
}

/// Each entry's parent, 4 bytes an entry (an `Option<usize>` took 16).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parents(Vec<u32>);

const NO_PARENT: u32 = u32::MAX;

impl Parents {
    pub fn of(&self, i: usize) -> Option<usize> {
        match self.0[i] {
            NO_PARENT => None,
            p => Some(p as usize),
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = Option<usize>> + '_ {
        (0..self.len()).map(|i| self.of(i))
    }
}

impl From<&[Option<usize>]> for Parents {
    fn from(parent: &[Option<usize>]) -> Parents {
        Parents(parent.iter().map(|p| p.map_or(NO_PARENT, pos32)).collect())
    }
}

/// The children of every entry as one array: entry `i`'s are
/// `list[start[i]..start[i + 1]]`.
#[derive(Debug, Clone, Default)]
pub struct Children {
    start: Vec<u32>,
    list: Vec<u32>,
}

impl Children {
    /// The children of `n` entries from their parents, each entry's in
    /// file order.
    pub fn of(parent: &[Option<usize>]) -> Children {
        let n = parent.len();
        let mut start = vec![0u32; n + 1];
        for p in parent.iter().flatten() {
            start[p + 1] += 1;
        }
        for k in 0..n {
            start[k + 1] += start[k];
        }
        let mut fill: Vec<u32> = start[..n].to_vec();
        let mut list = vec![0u32; start[n] as usize];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                list[fill[p] as usize] = pos32(i);
                fill[p] += 1;
            }
        }
        Children { start, list }
    }

    /// Sorts each entry's children by `time`, oldest first, as Atomic's
    /// tree sorts them (see [`super::js_sort`]).
    pub(crate) fn sort_each_by_time(&mut self, time: impl Fn(u32) -> Option<i64>) {
        for w in self.start.windows(2) {
            super::js_sort::sort_by_time(&mut self.list[w[0] as usize..w[1] as usize], &time);
        }
    }

    /// The children of `i`, as positions.
    pub fn of_entry(
        &self,
        i: usize,
    ) -> impl DoubleEndedIterator<Item = usize> + ExactSizeIterator + '_ {
        self[i].iter().map(|&c| c as usize)
    }
}

impl std::ops::Index<usize> for Children {
    type Output = [u32];

    fn index(&self, i: usize) -> &[u32] {
        &self.list[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_ids_and_others_are_found_and_listed() {
        let ids = ["0000abcd", "ffffffff", "0000ABCD", "#3", "0000abcd", "abc"];
        let index = IdIndex::of(ids.iter().copied());
        assert_eq!(index.get("0000abcd"), Some(4));
        assert_eq!(index.get("ffffffff"), Some(1));
        assert_eq!(index.get("0000ABCD"), Some(2));
        assert_eq!(index.get("#3"), Some(3));
        assert_eq!(index.get("abc"), Some(5));
        assert_eq!(index.get("0000abce"), None);
        assert_eq!(index.len(), 5);
        let mut all: Vec<(String, usize)> =
            index.iter().map(|(id, i)| (id.into_owned(), i)).collect();
        all.sort();
        assert_eq!(all[0], ("#3".to_string(), 3));
        assert_eq!(all[2], ("0000abcd".to_string(), 4));
    }

    #[test]
    fn children_are_listed_per_parent() {
        let parent = [None, Some(0), Some(0), Some(1), None, Some(0)];
        let mut c = Children::of(&parent);
        assert_eq!(&c[0], &[1, 2, 5]);
        assert_eq!(&c[1], &[3]);
        assert!(c[4].is_empty());
        c.sort_each_by_time(|i| Some(-i64::from(i)));
        assert_eq!(&c[0], &[5, 2, 1]);
        assert_eq!(c.of_entry(0).collect::<Vec<_>>(), vec![5, 2, 1]);
    }
}
