//! Texts that many sessions share, kept once for the whole process.
//!
//! At 100,000 sessions the picker held each session's folder (lowercased,
//! for `dir:`) and its models twice (as written, and lowercased for
//! `model:`) on their own: ~150 bytes a session, ~15 MB, for a few hundred
//! distinct folders and a handful of model lists. What is interned here
//! stays until the process ends: a store has few distinct values of these.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use hashbrown::HashTable;

use crate::hash::{bytes_hash, FxBuild};

/// Texts by themselves, and lists by their items: each shared copy with
/// its lowercase form (made when first asked). Looked up without making
/// anything: a loader asks for every row's folder and models.
#[derive(Default)]
struct Interned {
    texts: HashMap<Arc<str>, Option<Arc<str>>, FxBuild>,
    lists: HashTable<(u64, List, Option<List>)>,
}

fn interned() -> std::sync::MutexGuard<'static, Interned> {
    static INTERNED: OnceLock<Mutex<Interned>> = OnceLock::new();
    lock(INTERNED.get_or_init(Mutex::default))
}

/// The one shared copy of `text`.
pub fn text(text: &str) -> Arc<str> {
    let mut all = interned();
    if let Some((t, _)) = all.texts.get_key_value(text) {
        return Arc::clone(t);
    }
    let t: Arc<str> = Arc::from(text);
    all.texts.insert(Arc::clone(&t), None);
    t
}

/// The one shared copy of `text` lowercased.
pub fn lowercase(text: &str) -> Arc<str> {
    if let Some(Some(lower)) = interned().texts.get(text) {
        return Arc::clone(lower);
    }
    let lower = self::text(&text.to_lowercase());
    let mut all = interned();
    if let Some(slot) = all.texts.get_mut(text) {
        *slot = Some(Arc::clone(&lower));
    } else {
        all.texts.insert(Arc::from(text), Some(Arc::clone(&lower)));
    }
    lower
}

/// A list of texts, shared.
pub type List = Arc<[Box<str>]>;

/// The one shared copy of the list `items`.
pub fn list<'a, I>(items: I) -> List
where
    I: IntoIterator<Item = &'a str>,
    I::IntoIter: Clone,
{
    let items = items.into_iter();
    let hash = list_hash(items.clone());
    let mut all = interned();
    if let Some((_, l, _)) = all.lists.find(hash, |e| same(&e.1, items.clone())) {
        return Arc::clone(l);
    }
    let l: List = items.map(Box::from).collect();
    all.lists
        .insert_unique(hash, (hash, Arc::clone(&l), None), |e| e.0);
    l
}

/// The one shared copy of the list `items`, each lowercased.
pub fn list_lowercase<'a, I>(items: I) -> List
where
    I: IntoIterator<Item = &'a str>,
    I::IntoIter: Clone,
{
    let items = items.into_iter();
    let hash = list_hash(items.clone());
    if let Some((_, _, Some(lower))) = interned().lists.find(hash, |e| same(&e.1, items.clone())) {
        return Arc::clone(lower);
    }
    let lowered: Vec<String> = items.clone().map(str::to_lowercase).collect();
    let lower = list(lowered.iter().map(String::as_str));
    // The list as written keeps its lowercase form for the next ask.
    let mut all = interned();
    match all.lists.find_mut(hash, |e| same(&e.1, items.clone())) {
        Some(entry) => entry.2 = Some(Arc::clone(&lower)),
        None => {
            let written: List = items.map(Box::from).collect();
            let entry = (hash, written, Some(Arc::clone(&lower)));
            all.lists.insert_unique(hash, entry, |e| e.0);
        }
    }
    lower
}

fn list_hash<'a>(items: impl Iterator<Item = &'a str>) -> u64 {
    items.fold(0x9e37_79b9_7f4a_7c15, |h, item| {
        (h.rotate_left(5) ^ bytes_hash(item.as_bytes())).wrapping_mul(0x517c_c1b7_2722_0a95)
    })
}

fn same<'a>(list: &List, mut items: impl Iterator<Item = &'a str>) -> bool {
    list.iter().all(|l| items.next() == Some(&**l)) && items.next().is_none()
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
        assert!(!Arc::ptr_eq(&x, &list(["m1"])), "a prefix is another list");
        assert!(!Arc::ptr_eq(&x, &list(["m1", "m2", ""])));
    }

    #[test]
    fn lowercase_forms_are_shared_and_their_own_entries() {
        let a = lowercase("/Home/U/Proj");
        assert_eq!(&*a, "/home/u/proj");
        assert!(Arc::ptr_eq(&a, &lowercase("/Home/U/Proj")));
        assert!(Arc::ptr_eq(&a, &text("/home/u/proj")));
        assert!(Arc::ptr_eq(&a, &lowercase("/home/u/proj")));
        assert_eq!(&*text("/Home/U/Proj"), "/Home/U/Proj");
        let l = list_lowercase(["GPT-5", "Claude"]);
        assert_eq!(&*l, &[Box::from("gpt-5"), Box::from("claude")]);
        assert!(Arc::ptr_eq(&l, &list_lowercase(vec!["GPT-5", "Claude"])));
        assert!(Arc::ptr_eq(&l, &list(["gpt-5", "claude"])));
        assert_eq!(&*list(["GPT-5", "Claude"])[0], "GPT-5");
        assert!(list_lowercase([]).is_empty());
    }
}
