//! Texts that many sessions share, kept once for the whole process.
//!
//! At 100,000 sessions the picker held each session's folder (lowercased,
//! for `dir:`) and its models twice (as written, and lowercased for
//! `model:`) on their own: ~150 bytes a session, ~15 MB, for a few hundred
//! distinct folders and a handful of model lists. What is interned here
//! stays until the process ends: a store has few distinct values of these.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};

/// The one shared copy of `text`.
pub fn text(text: &str) -> Arc<str> {
    static TEXTS: OnceLock<Mutex<HashSet<Arc<str>>>> = OnceLock::new();
    let mut set = lock(TEXTS.get_or_init(Mutex::default));
    if let Some(t) = set.get(text) {
        return Arc::clone(t);
    }
    let t: Arc<str> = Arc::from(text);
    set.insert(Arc::clone(&t));
    t
}

/// A list of texts, shared.
pub type List = Arc<[Box<str>]>;

/// The one shared copy of the list `items`.
pub fn list<'a>(items: impl IntoIterator<Item = &'a str>) -> List {
    static LISTS: OnceLock<Mutex<HashSet<List>>> = OnceLock::new();
    let items: Vec<Box<str>> = items.into_iter().map(Box::from).collect();
    let mut set = lock(LISTS.get_or_init(Mutex::default));
    if let Some(l) = set.get(items.as_slice()) {
        return Arc::clone(l);
    }
    let l: List = Arc::from(items);
    set.insert(Arc::clone(&l));
    l
}

/// A poisoned interner (a panic while it was held, which only an
/// allocation failure could cause) is still a valid set.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_and_lists_share_one_copy() {
        let (a, b) = (text("/home/u/proj"), text(&String::from("/home/u/proj")));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &text("/home/u/other")));
        let (x, y) = (list(["m1", "m2"]), list(vec!["m1", "m2"]));
        assert!(Arc::ptr_eq(&x, &y));
        assert_eq!(&*x, &[Box::from("m1"), Box::from("m2")]);
        assert!(!Arc::ptr_eq(&x, &list(["m2", "m1"])), "order is kept");
        assert!(list([]).is_empty());
    }
}
