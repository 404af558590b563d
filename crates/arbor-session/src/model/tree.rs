//! The entry tree of one session: roots, ordered children, leaf, labels, name.
//!
//! Every walk here is bounded: parent links are checked for cycles once, at
//! build time, and nodes caught in a cycle become roots (Atomic loops forever).

use std::borrow::Cow;
use std::collections::HashMap;

use crate::entry::{parse_iso_ms, Entry};
use crate::reader::Session;
use crate::{Error, Result};

pub use super::id_index::{Children, IdIndex, Parents};

/// A label on an entry, with the time it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub text: String,
    pub timestamp: Option<String>,
}

#[derive(Debug, Clone)]
pub struct SessionTree {
    /// Parent of each entry (index into `Session::entries`), cycles broken.
    pub parent: Parents,
    /// Children of each entry, by timestamp then file order.
    pub children: Children,
    pub roots: Vec<usize>,
    /// Entry id → position; with duplicate ids the last one wins (as in
    /// Atomic).
    pub by_id: IdIndex,
    /// The active leaf: the last entry in file order.
    pub leaf: Option<usize>,
    /// Labels by target entry id.
    pub labels: HashMap<String, Label>,
    /// The session name: `Some("")` after a clear, `None` when never named.
    pub name: Option<String>,
    /// Whether each entry is on the root → leaf path.
    pub on_active_path: Vec<bool>,
    /// Depth of each entry (roots are 0).
    pub depth: Vec<u32>,
}

impl SessionTree {
    pub fn build(session: &Session) -> SessionTree {
        Self::from_entries(&session.entries)
    }

    pub fn from_entries(entries: &[Entry]) -> SessionTree {
        let n = entries.len();
        let by_id = IdIndex::of(entries.iter().map(|e| e.id.as_str()));
        let mut parent: Vec<Option<usize>> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.parent_id
                    .as_ref()
                    .and_then(|p| by_id.get(p))
                    .filter(|&p| p != i)
            })
            .collect();
        break_cycles(&mut parent);

        // Milliseconds, `None` for a time that does not parse.
        let ts: Vec<Option<i64>> = {
            use rayon::prelude::*;
            entries
                .par_iter()
                .map(|e| e.timestamp().and_then(parse_iso_ms))
                .collect()
        };
        let mut children = Children::of(&parent);
        // Roots stay in file order and siblings are sorted by time, as
        // Atomic's session manager leaves and sorts them.
        let roots: Vec<usize> = (0..n).filter(|&i| parent[i].is_none()).collect();
        children.sort_each_by_time(|i| ts[i as usize]);
        drop(ts);

        let mut depth = vec![0u32; n];
        // Parents can come after children in the file, so walk from the roots.
        let mut stack: Vec<usize> = roots.clone();
        while let Some(i) = stack.pop() {
            for c in children.of_entry(i) {
                depth[c] = depth[i] + 1;
                stack.push(c);
            }
        }

        let leaf = n.checked_sub(1);
        let mut on_active_path = vec![false; n];
        let mut cur = leaf;
        while let Some(i) = cur {
            on_active_path[i] = true;
            cur = parent[i];
        }

        let mut labels = HashMap::new();
        let mut name = None;
        for e in entries {
            match e.entry_type() {
                "label" => {
                    let Some(target) = e.str_field("targetId") else {
                        continue;
                    };
                    match e.label_text().filter(|l| !l.is_empty()) {
                        Some(l) => {
                            labels.insert(
                                target.to_string(),
                                Label {
                                    text: l.to_string(),
                                    timestamp: e.timestamp().map(str::to_string),
                                },
                            );
                        }
                        None => {
                            labels.remove(target);
                        }
                    }
                }
                "session_info" => {
                    if let Some(n) = e.str_field("name") {
                        name = Some(n.trim().to_string());
                    }
                }
                _ => {}
            }
        }

        SessionTree {
            parent: Parents::from(&parent[..]),
            children,
            roots,
            by_id,
            leaf,
            labels,
            name,
            on_active_path,
            depth,
        }
    }

    pub fn len(&self) -> usize {
        self.parent.len()
    }

    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Entries from a root down to `i`, inclusive.
    pub fn path_to(&self, i: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut cur = Some(i);
        while let Some(c) = cur {
            path.push(c);
            cur = self.parent.of(c);
            if path.len() > self.parent.len() {
                break; // unreachable after break_cycles; a guard, not a path
            }
        }
        path.reverse();
        path
    }

    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id)
    }

    /// The entry an id typed by a person names: that id exactly, else the
    /// one id it begins (a unique prefix, as git takes commit ids).
    pub fn resolve_id(&self, given: &str) -> Result<usize> {
        if let Some(i) = self.index_of(given) {
            return Ok(i);
        }
        let mut found: Vec<(Cow<'_, str>, usize)> = if given.is_empty() {
            Vec::new()
        } else {
            self.by_id
                .iter()
                .filter(|(id, _)| id.starts_with(given))
                .collect()
        };
        match found.len() {
            0 => Err(Error::UnknownEntryId(given.into())),
            1 => Ok(found[0].1),
            count => {
                found.sort_unstable();
                Err(Error::AmbiguousEntryId {
                    given: given.into(),
                    count,
                    examples: found
                        .iter()
                        .take(3)
                        .map(|(id, _)| &**id)
                        .collect::<Vec<_>>()
                        .join(", "),
                })
            }
        }
    }

    /// The session name when it is set and not cleared.
    pub fn display_name(&self) -> Option<&str> {
        self.name.as_deref().filter(|n| !n.is_empty())
    }

    /// Children of `i` with the one holding the active leaf first (Atomic's /tree order).
    pub fn children_active_first(&self, i: usize) -> Vec<usize> {
        let mut c: Vec<usize> = self.children.of_entry(i).collect();
        if let Some(pos) = c.iter().position(|&x| self.on_active_path[x]) {
            let a = c.remove(pos);
            c.insert(0, a);
        }
        c
    }

    /// [`SessionTree::children_active_first`], without allocating.
    pub fn children_in_order(&self, i: usize) -> impl DoubleEndedIterator<Item = usize> + '_ {
        let c = &self.children[i];
        // One child is first anyway (most entries: a chain).
        let active = match c.len() {
            0 | 1 => None,
            _ => c.iter().position(|&x| self.on_active_path[x as usize]),
        };
        active.map(|p| c[p] as usize).into_iter().chain(
            c.iter()
                .enumerate()
                .filter(move |&(k, _)| Some(k) != active)
                .map(|(_, &x)| x as usize),
        )
    }

    pub fn roots_active_first(&self) -> Vec<usize> {
        let mut r = self.roots.clone();
        if let Some(pos) = r.iter().position(|&x| self.on_active_path[x]) {
            let a = r.remove(pos);
            r.insert(0, a);
        }
        r
    }
}

/// `arbor show --json`: the session's structure, written straight out (a
/// JSON value per entry cost several times the file's size in memory):
/// `{"id","leafId","name","labels":{id: text},"entries":[{"id","parentId",
/// "type","role"?,"label"?,"depth","onActivePath"}]}`, keys in that order,
/// strings escaped as `serde_json` escapes them.
pub fn write_json(session: &Session, tree: &SessionTree, out: &mut Vec<u8>) {
    let mut whole = Vec::new();
    let _ = write_json_pieces(session, tree, |piece| {
        whole.append(piece);
        Ok(())
    });
    out.append(&mut whole);
}

/// [`write_json`] a piece at a time: `emit` is called with about a
/// megabyte of the text (whole entries: a piece never cuts a character)
/// and may take it; the text is never held whole (at a million entries it
/// is ~150 MB).
pub fn write_json_pieces(
    session: &Session,
    tree: &SessionTree,
    mut emit: impl FnMut(&mut Vec<u8>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    const PIECE: usize = 1 << 20;
    let mut out = Vec::with_capacity(PIECE + (64 << 10));
    let out = &mut out;
    fn string(out: &mut Vec<u8>, s: &str) {
        // Writing to memory cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
    fn opt(out: &mut Vec<u8>, s: Option<&str>) {
        match s {
            Some(s) => string(out, s),
            None => out.extend_from_slice(b"null"),
        }
    }
    let entries = &session.entries;
    out.extend_from_slice(b"{\"id\":");
    string(out, session.id());
    out.extend_from_slice(b",\"leafId\":");
    opt(out, tree.leaf.map(|l| entries[l].id.as_str()));
    out.extend_from_slice(b",\"name\":");
    opt(out, tree.display_name());
    out.extend_from_slice(b",\"labels\":{");
    // One key per labeled id, at its first entry (as a JSON object keeps it).
    let mut seen = std::collections::HashSet::new();
    let mut first = true;
    for e in entries {
        if let Some(l) = tree.labels.get(e.id.as_str()) {
            if seen.insert(e.id.as_str()) {
                if !first {
                    out.push(b',');
                }
                first = false;
                string(out, &e.id);
                out.push(b':');
                string(out, &l.text);
            }
        }
    }
    out.extend_from_slice(b"},\"entries\":[");
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"id\":");
        string(out, &e.id);
        out.extend_from_slice(b",\"parentId\":");
        opt(out, e.parent_id.as_deref());
        out.extend_from_slice(b",\"type\":");
        string(out, e.entry_type());
        if let Some(r) = e.role() {
            out.extend_from_slice(b",\"role\":");
            string(out, r);
        }
        if let Some(l) = tree.labels.get(e.id.as_str()) {
            out.extend_from_slice(b",\"label\":");
            string(out, &l.text);
        }
        out.extend_from_slice(b",\"depth\":");
        out.extend_from_slice(tree.depth[i].to_string().as_bytes());
        out.extend_from_slice(if tree.on_active_path[i] {
            b",\"onActivePath\":true}"
        } else {
            b",\"onActivePath\":false}"
        });
        if out.len() >= PIECE {
            emit(out)?;
            out.clear();
        }
    }
    out.extend_from_slice(b"]}");
    emit(out)
}

/// Makes every node that lies on a parent cycle a root.
fn break_cycles(parent: &mut [Option<usize>]) {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let n = parent.len();
    let mut state = vec![NEW; n];
    let mut stack = Vec::new();
    for start in 0..n {
        if state[start] != NEW {
            continue;
        }
        let mut cur = Some(start);
        while let Some(c) = cur {
            match state[c] {
                NEW => {
                    state[c] = OPEN;
                    stack.push(c);
                    cur = parent[c];
                }
                OPEN => {
                    // `c` is on the current walk: everything from it onward is a cycle.
                    let pos = stack.iter().rposition(|&x| x == c).unwrap_or(0);
                    for &x in &stack[pos..] {
                        parent[x] = None;
                    }
                    break;
                }
                _ => break,
            }
        }
        for x in stack.drain(..) {
            state[x] = DONE;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(i: usize, id: &str, parent: Option<&str>, ts: &str) -> Entry {
        let v = json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,
            "message":{"role":"user","content":"x"}});
        Entry::new(i, v.as_object().unwrap().clone())
    }

    #[test]
    fn cycle_nodes_become_roots_and_walks_terminate() {
        let es = vec![
            entry(1, "a", Some("c"), "2025-01-01T00:00:00.000Z"),
            entry(2, "b", Some("a"), "2025-01-01T00:00:01.000Z"),
            entry(3, "c", Some("b"), "2025-01-01T00:00:02.000Z"),
            entry(4, "d", Some("c"), "2025-01-01T00:00:03.000Z"),
        ];
        let t = SessionTree::from_entries(&es);
        assert_eq!(t.roots, vec![0, 1, 2]);
        assert_eq!(t.path_to(3), vec![2, 3]);
        assert_eq!(t.leaf, Some(3));
    }

    #[test]
    fn self_parent_and_missing_parent_are_roots() {
        let es = vec![
            entry(1, "a", Some("a"), "2025-01-01T00:00:00.000Z"),
            entry(2, "b", Some("zzz"), "2025-01-01T00:00:01.000Z"),
            entry(3, "c", None, "2025-01-01T00:00:02.000Z"),
        ];
        let t = SessionTree::from_entries(&es);
        assert_eq!(t.roots, vec![0, 1, 2]);
    }

    /// Atomic leaves roots in file order and sorts only children, with a
    /// time that does not parse left where JavaScript's sort leaves it.
    #[test]
    fn roots_in_file_order_and_an_unreadable_time_where_atomic_puts_it() {
        let es = vec![
            entry(1, "late", None, "2025-01-01T00:00:09.000Z"),
            entry(2, "early", None, "2025-01-01T00:00:01.000Z"),
            entry(3, "c3", Some("late"), "2025-01-01T00:00:13.000Z"),
            entry(4, "bad", Some("late"), "not a time"),
            entry(5, "c1", Some("late"), "2025-01-01T00:00:11.000Z"),
        ];
        let t = SessionTree::from_entries(&es);
        assert_eq!(t.roots, vec![0, 1]);
        // Node: [13, NaN, 11] sorted by difference stays as it is.
        assert_eq!(&t.children[0], &[2, 3, 4]);
    }

    #[test]
    fn children_sorted_by_timestamp_and_active_first() {
        let es = vec![
            entry(1, "r", None, "2025-01-01T00:00:00.000Z"),
            entry(2, "late", Some("r"), "2025-01-01T00:00:09.000Z"),
            entry(3, "early", Some("r"), "2025-01-01T00:00:01.000Z"),
            entry(4, "x", Some("late"), "2025-01-01T00:00:10.000Z"),
            entry(5, "y", Some("early"), "2025-01-01T00:00:11.000Z"),
        ];
        let t = SessionTree::from_entries(&es);
        assert_eq!(&t.children[0], &[2, 1]);
        assert_eq!(t.children_active_first(0), vec![2, 1]);
        assert_eq!(t.depth[4], 2);
        assert!(t.on_active_path[2] && !t.on_active_path[1]);
    }

    /// The allocation-free order is the allocating one, forwards and back.
    #[test]
    fn children_in_order_is_children_active_first() {
        let mut es = vec![entry(1, "r", None, "2025-01-01T00:00:00.000Z")];
        for k in 0..6 {
            es.push(entry(
                k + 2,
                &format!("c{k}"),
                Some("r"),
                "2025-01-01T00:00:05.000Z",
            ));
        }
        es.push(entry(8, "g", Some("c3"), "2025-01-01T00:00:06.000Z"));
        es.push(entry(9, "h", Some("c0"), "2025-01-01T00:00:07.000Z"));
        for leaf_first in [false, true] {
            let mut es = es.clone();
            if leaf_first {
                es.swap(7, 8);
            }
            let t = SessionTree::from_entries(&es);
            for i in 0..t.len() {
                let want = t.children_active_first(i);
                assert_eq!(t.children_in_order(i).collect::<Vec<_>>(), want);
                let mut back: Vec<usize> = t.children_in_order(i).rev().collect();
                back.reverse();
                assert_eq!(back, want);
            }
        }
    }
}
