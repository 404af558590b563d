//! Answers remembered for the next keystroke, bounded by count and by the
//! bytes they hold; the oldest leave first.
//!
//! Every prefix typed is a term of its own, and a term's answer grows with
//! the store (the picker's scores are four bytes a session): a memo bounded
//! only by its count of terms held 115 MB at 100,000 sessions after a
//! long session of typing.

use std::borrow::Borrow;
use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// A map of at most `terms` entries and `bytes` bytes of values (as the
/// caller counts them when it inserts).
#[derive(Debug)]
pub struct Memo<K, V> {
    map: HashMap<K, (V, usize)>,
    /// Keys, oldest first.
    order: VecDeque<K>,
    held: usize,
    most_terms: usize,
    most_bytes: usize,
}

impl<K: Hash + Eq + Clone, V> Memo<K, V> {
    pub fn new(terms: usize, bytes: usize) -> Memo<K, V> {
        Memo {
            map: HashMap::new(),
            order: VecDeque::new(),
            held: 0,
            most_terms: terms,
            most_bytes: bytes,
        }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.get(key).map(|(v, _)| v)
    }

    /// Remembers `value`, of `size` bytes, forgetting the oldest entries
    /// until both bounds hold (a value bigger than the whole memo is not
    /// kept).
    pub fn insert(&mut self, key: K, value: V, size: usize) {
        self.remove(&key);
        if size > self.most_bytes || self.most_terms == 0 {
            return;
        }
        while self.map.len() >= self.most_terms || self.held + size > self.most_bytes {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some((_, s)) = self.map.remove(&oldest) {
                self.held -= s;
            }
        }
        self.held += size;
        self.order.push_back(key.clone());
        self.map.insert(key, (value, size));
    }

    fn remove(&mut self, key: &K) {
        if let Some((_, s)) = self.map.remove(key) {
            self.held -= s;
            self.order.retain(|k| k != key);
        }
    }

    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
        self.held = 0;
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The bytes its values hold, as counted when inserted.
    pub fn bytes(&self) -> usize {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn the_oldest_leave_first_within_both_bounds() {
        let mut m: Memo<String, u32> = Memo::new(3, 100);
        for (i, k) in ["a", "b", "c", "d"].iter().enumerate() {
            m.insert(k.to_string(), i as u32, 10);
        }
        assert_eq!((m.len(), m.bytes()), (3, 30));
        assert_eq!(m.get("a"), None, "the oldest left for the fourth");
        assert_eq!(m.get("d"), Some(&3));
        // 60 bytes more leave room for b's 10 alone: c and d stay.
        m.insert("e".into(), 4, 60);
        assert_eq!(m.get("b"), None);
        assert_eq!((m.len(), m.bytes()), (3, 80));
        m.insert("f".into(), 5, 31);
        assert_eq!(m.get("c"), None);
        assert_eq!(m.get("d"), None, "one more byte than c's room");
        assert_eq!((m.len(), m.bytes()), (2, 91));
        // Inserting again replaces, and counts the new size.
        m.insert("f".into(), 6, 5);
        assert_eq!((m.get("f"), m.bytes()), (Some(&6), 65));
        // Bigger than the memo: not kept, and nothing forgotten for it.
        m.insert("g".into(), 7, 101);
        assert_eq!((m.get("g"), m.len()), (None, 2));
        m.clear();
        assert!(m.is_empty() && m.bytes() == 0);
    }
}
