//! Atomic's /tree flattening (docs/spec.md §6), independent of any terminal:
//! filters, folds, search, connectors and the active-path marker.

mod filter;
mod row_text;
mod search;

pub use filter::{bit, next_bit, passes_filter, Filter, FilterBits};
pub use row_text::{label_part, row_line, row_prefix};
pub use search::{matches_search, search_haystack, search_text};

use std::collections::HashSet;

use filter::bits_where;

use crate::entry::Entry;
use crate::tree::SessionTree;

/// One visible row of the flattened tree, with Atomic's layout facts
/// (`tree-selector-model.ts`): its indent, whether it draws a connector, and
/// a link to the ancestor rows whose connectors continue as gutters.
/// Compact (24 bytes): a million-entry session flattens again on every
/// filter and fold key, and writing the rows is most of that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    entry: u32,
    /// Atomic's indent level (before the shift for several roots).
    pub level: u32,
    /// Row of the nearest ancestor that draws a connector (its gutter runs
    /// down past this row); `NONE` for none.
    gutter_up: u32,
    /// Visible parent's row; `NONE` for none.
    parent_row: u32,
    /// Number of visible children.
    pub visible_children: u32,
    /// [`Row`] flags.
    flags: u8,
}

/// The flags of a [`TreeRow`].
struct Row;

impl Row {
    /// Draws a connector (`├`/`└`) in the last prefix level.
    const CONNECTOR: u8 = 1;
    /// The last of its visible siblings (`└` rather than `├`).
    const LAST: u8 = 2;
    /// A root or a segment start with visible children: Ctrl+← folds it.
    const FOLDABLE: u8 = 4;
    const FOLDED: u8 = 8;
    const ACTIVE: u8 = 16;
    /// Its visible parent has several visible children (its own children
    /// go one level in).
    const JUST_BRANCHED: u8 = 32;
    /// Several roots: every prefix is a level narrower than the indent.
    const SHIFTED: u8 = 64;
}

impl TreeRow {
    /// The entry the row shows.
    pub fn entry(&self) -> usize {
        self.entry as usize
    }

    /// Prefix width in levels of 3 columns.
    pub fn display_indent(&self) -> u32 {
        self.level
            .saturating_sub(u32::from(self.flags & Row::SHIFTED != 0))
    }

    pub fn connector(&self) -> bool {
        self.flags & Row::CONNECTOR != 0
    }

    pub fn is_last(&self) -> bool {
        self.flags & Row::LAST != 0
    }

    pub fn foldable(&self) -> bool {
        self.flags & Row::FOLDABLE != 0
    }

    pub fn folded(&self) -> bool {
        self.flags & Row::FOLDED != 0
    }

    pub fn on_active_path(&self) -> bool {
        self.flags & Row::ACTIVE != 0
    }

    fn just_branched(&self) -> bool {
        self.flags & Row::JUST_BRANCHED != 0
    }

    /// Row of the nearest ancestor that draws a connector.
    pub fn gutter_up(&self) -> Option<usize> {
        (self.gutter_up != NONE).then_some(self.gutter_up as usize)
    }

    /// The visible parent's row.
    pub fn parent_row(&self) -> Option<usize> {
        (self.parent_row != NONE).then_some(self.parent_row as usize)
    }

    /// The visible parent's entry.
    pub fn visible_parent(&self, rows: &[TreeRow]) -> Option<usize> {
        self.parent_row().map(|p| rows[p].entry())
    }
}

const NONE: u32 = u32::MAX;

/// The whole tree in the order Atomic's /tree walks it (depth first, the
/// child holding the active leaf first, roots in file order with the
/// active one first), computed once per load. The rows under any filter
/// and folds are this order with the hidden entries and the folded
/// subtrees left out (a hidden entry's children hang from its nearest
/// shown ancestor, so they keep their place), which is what makes a
/// flattening one pass over flat arrays.
#[derive(Debug, Clone, Default)]
pub struct Preorder {
    /// The entries, in walk order.
    pub order: Vec<u32>,
    /// One past the last position of each position's subtree.
    pub end: Vec<u32>,
    /// Each entry's position (`u32::MAX` for an entry outside the tree).
    pub pos: Vec<u32>,
    /// A bit per position: the entry is on the active path.
    pub active: Vec<u64>,
}

impl Preorder {
    pub fn new(tree: &SessionTree) -> Preorder {
        let n = tree.len();
        let mut order: Vec<u32> = Vec::with_capacity(n);
        let mut pos = vec![NONE; n];
        let mut stack: Vec<usize> = roots_in_order(tree).into_iter().rev().collect();
        while let Some(i) = stack.pop() {
            if i >= n || pos[i] != NONE {
                continue;
            }
            pos[i] = order.len() as u32;
            order.push(i as u32);
            stack.extend(tree.children_in_order(i).rev());
        }
        // Subtree sizes, children before parents (a parent comes first).
        let mut end = vec![1u32; order.len()];
        for p in (0..order.len()).rev() {
            if let Some(par) = tree.parent.of(order[p] as usize) {
                let pp = pos[par];
                if pp != NONE && (pp as usize) < p {
                    end[pp as usize] += end[p];
                }
            }
        }
        for (p, e) in end.iter_mut().enumerate() {
            *e += p as u32;
        }
        let active = bits_where(order.len(), |p| {
            tree.on_active_path
                .get(order[p] as usize)
                .copied()
                .unwrap_or(false)
        });
        Preorder {
            order,
            end,
            pos,
            active,
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The positions of `folded` entries, sorted (what [`flatten_pre`] takes).
    pub fn fold_positions(&self, folded: impl IntoIterator<Item = usize>) -> Vec<u32> {
        let mut v: Vec<u32> = folded
            .into_iter()
            .filter_map(|i| self.pos.get(i).copied())
            .filter(|&p| p != NONE)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The row of entry `i`, else of its nearest ancestor with a row (a
    /// filter hides it, or a fold); `None` when none has. `rows` must be
    /// a flattening of this order: rows are in walk order, so the last row
    /// at or before `i`'s position has that ancestor among its own.
    pub fn row_of_nearest(&self, rows: &[TreeRow], i: usize) -> Option<usize> {
        let a = *self.pos.get(i).filter(|&&p| p != NONE)?;
        let k = rows.partition_point(|r| self.pos[r.entry()] <= a);
        let mut cur = k.checked_sub(1);
        while let Some(r) = cur {
            let p = self.pos[rows[r].entry()];
            if p <= a && a < self.end[p as usize] {
                return Some(r);
            }
            cur = rows[r].parent_row();
        }
        None
    }
}

/// Flattens the visible tree exactly as Atomic's tree selector does
/// (`flattenTree` + `recalculateVisualStructure`): depth first, the child
/// holding the active leaf first; a hidden entry's children hang from its
/// nearest visible ancestor; the descendants of a folded entry are left out.
/// Indent: a fork's children go one level in, and so does the first
/// generation after a branch (except at the top level); single-child chains
/// stay put. Several visible roots hang from a virtual root that draws no
/// connector.
pub fn flatten(
    entries: &[Entry],
    tree: &SessionTree,
    visible: &dyn Fn(usize) -> bool,
    folded: &HashSet<usize>,
) -> Vec<TreeRow> {
    let pre = Preorder::new(tree);
    let n = entries.len();
    let folds = pre.fold_positions(folded.iter().copied().filter(|&i| i < n));
    let mut rows = Vec::new();
    let bits = bits_where(pre.len(), |p| {
        let e = pre.order[p] as usize;
        e < n && visible(e)
    });
    flatten_pre(&mut rows, &mut Vec::new(), &pre, &bits, &folds);
    rows
}

/// [`flatten`] over a [`Preorder`] of the tree: `visible` has a bit per
/// walk-order position (as [`FilterBits`]); `folds`: the folded entries'
/// positions, sorted. Two passes over flat arrays: the rows with their
/// visible parents, children counts and last siblings, visiting only the
/// visible positions (a search that shows few entries costs few steps);
/// then the layout, each row from its parent's. `stack` is working memory
/// kept by the caller.
pub fn flatten_pre(
    rows: &mut Vec<TreeRow>,
    stack: &mut Vec<(u32, u32, u32)>,
    pre: &Preorder,
    visible: &[u64],
    folds: &[u32],
) {
    rows.clear();
    stack.clear();
    // Room for every visible position (no more rows than that), made once:
    // grown by doubling, a million rows held room for 1,048,576 and, while
    // growing, the half as many before them too (37 MB for 18).
    let most: usize = visible.iter().map(|w| w.count_ones() as usize).sum();
    if rows.capacity() < most {
        // The old room let go first (a reserve would copy it over).
        *rows = Vec::new();
        rows.reserve_exact(most);
    }
    let root_count = visible_rows(rows, stack, pre, visible, folds);
    lay_out(rows, root_count > 1);
}

/// The first pass of [`flatten_pre`]: the visible rows in walk order, each
/// with its visible parent, children count and last-sibling flag; returns
/// how many are roots.
fn visible_rows(
    rows: &mut Vec<TreeRow>,
    stack: &mut Vec<(u32, u32, u32)>,
    pre: &Preorder,
    visible: &[u64],
    folds: &[u32],
) -> usize {
    let n = pre.order.len();
    let (order, end) = (&pre.order[..], &pre.end[..]);
    // The open visible ancestors: (end of subtree, row, last child row).
    let mut top_last = NONE;
    let mut top_count = 0usize;
    let mut fk = 0;
    // Positions before `hidden_to` lie in a folded subtree.
    let mut hidden_to = 0usize;
    let mut at = next_bit(visible, 0, n);
    while let Some(p) = at {
        while fk < folds.len() && (folds[fk] as usize) < p {
            hidden_to = hidden_to.max(end[folds[fk] as usize] as usize);
            fk += 1;
        }
        if p < hidden_to {
            at = next_bit(visible, hidden_to, n);
            continue;
        }
        // Folding hides every descendant, whatever the filter shows.
        let is_folded = fk < folds.len() && folds[fk] as usize == p;
        let e = order[p] as usize;
        while stack.last().is_some_and(|s| s.0 as usize <= p) {
            stack.pop();
        }
        let row = rows.len() as u32;
        let parent_row = match stack.last_mut() {
            Some(s) => {
                if s.2 != NONE {
                    rows[s.2 as usize].flags &= !Row::LAST;
                }
                s.2 = row;
                rows[s.1 as usize].visible_children += 1;
                s.1
            }
            None => {
                if top_last != NONE {
                    rows[top_last as usize].flags &= !Row::LAST;
                }
                top_last = row;
                top_count += 1;
                NONE
            }
        };
        let mut flags = Row::LAST;
        if is_folded {
            flags |= Row::FOLDED;
        }
        if bit(&pre.active, p) {
            flags |= Row::ACTIVE;
        }
        rows.push(TreeRow {
            entry: e as u32,
            level: 0,
            gutter_up: NONE,
            parent_row,
            visible_children: 0,
            flags,
        });
        at = if is_folded {
            next_bit(visible, end[p] as usize, n)
        } else {
            // An ancestor whose subtree ends with this one's gets no more
            // children: it leaves the stack now rather than when both end
            // (a long line of single children kept all of its entries
            // there: 12 MB at a million).
            if stack.last().is_some_and(|s| s.0 == end[p]) {
                stack.pop();
            }
            stack.push((end[p], row, NONE));
            next_bit(visible, p + 1, n)
        };
    }
    top_count
}

/// The second pass of [`flatten_pre`]: each row's level, connector flags and
/// gutter, from its parent's (a parent's row comes before its children's).
fn lay_out(rows: &mut [TreeRow], multiple_roots: bool) {
    let shifted = if multiple_roots { Row::SHIFTED } else { 0 };
    for r in 0..rows.len() {
        let has_children = rows[r].visible_children > 0;
        let (level, flags, gutter_up) = match rows[r].parent_row() {
            None => {
                let mut f = shifted;
                if multiple_roots {
                    f |= Row::JUST_BRANCHED;
                }
                if has_children {
                    f |= Row::FOLDABLE;
                }
                (u32::from(multiple_roots), f, NONE)
            }
            Some(pr) => {
                let par = &rows[pr];
                let multiple = par.visible_children > 1;
                let level = if multiple || (par.just_branched() && par.level > 0) {
                    par.level + 1
                } else {
                    par.level
                };
                let gutter = if par.connector() {
                    pr as u32
                } else {
                    par.gutter_up
                };
                let mut f = shifted;
                if multiple {
                    f |= Row::JUST_BRANCHED | Row::CONNECTOR;
                    if has_children {
                        f |= Row::FOLDABLE;
                    }
                }
                (level, f, gutter)
            }
        };
        let row = &mut rows[r];
        row.level = level;
        row.flags = (row.flags & (Row::LAST | Row::FOLDED | Row::ACTIVE)) | flags;
        row.gutter_up = gutter_up;
    }
}

/// Roots in file order, the one holding the active leaf first (Atomic keeps
/// roots in file order; only children are sorted by time).
fn roots_in_order(tree: &SessionTree) -> Vec<usize> {
    let mut r = tree.roots.clone();
    r.sort_unstable();
    if let Some(pos) = r
        .iter()
        .position(|&x| tree.on_active_path.get(x).copied().unwrap_or(false))
    {
        let a = r.remove(pos);
        r.insert(0, a);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// The flattening as it was before [`Preorder`] (two walks over linked
    /// lists built per call): the reference the one-pass flattening must
    /// give row for row.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct RefRow {
        entry: usize,
        level: usize,
        display_indent: usize,
        connector: bool,
        is_last: bool,
        gutter_up: Option<usize>,
        foldable: bool,
        folded: bool,
        on_active_path: bool,
        visible_parent: Option<usize>,
        parent_row: Option<usize>,
        visible_children: usize,
    }

    fn as_ref_rows(rows: &[TreeRow]) -> Vec<RefRow> {
        rows.iter()
            .map(|r| RefRow {
                entry: r.entry(),
                level: r.level as usize,
                display_indent: r.display_indent() as usize,
                connector: r.connector(),
                is_last: r.is_last(),
                gutter_up: r.gutter_up(),
                foldable: r.foldable(),
                folded: r.folded(),
                on_active_path: r.on_active_path(),
                visible_parent: r.visible_parent(rows),
                parent_row: r.parent_row(),
                visible_children: r.visible_children as usize,
            })
            .collect()
    }

    /// The visible tree as first-child / next-sibling links and children
    /// counts (index `n` = the virtual top), children in Atomic's order.
    fn visible_links(
        n: usize,
        tree: &SessionTree,
        visible: &dyn Fn(usize) -> bool,
        is_folded: &dyn Fn(usize) -> bool,
    ) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let (mut first, mut last, mut next, mut count, mut stack) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (v, len, fill) in [
            (&mut first, n + 1, NONE),
            (&mut last, n + 1, NONE),
            (&mut next, n, NONE),
            (&mut count, n + 1, 0),
        ] {
            v.clear();
            v.resize(len, fill);
        }
        let top = n;
        stack.clear();
        stack.extend(roots_in_order(tree).into_iter().rev().map(|r| (r, top)));
        while let Some((i, anc)) = stack.pop() {
            if i >= n {
                continue;
            }
            let next_anc = if visible(i) {
                if last[anc] == NONE {
                    first[anc] = i as u32;
                } else {
                    next[last[anc] as usize] = i as u32;
                }
                last[anc] = i as u32;
                count[anc] += 1;
                i
            } else {
                anc
            };
            // Folding hides every descendant, whatever the filter shows.
            if is_folded(i) {
                continue;
            }
            for c in tree.children_in_order(i).rev() {
                stack.push((c, next_anc));
            }
        }
        (first, next, count)
    }

    fn flatten_reference(
        rows: &mut Vec<RefRow>,
        entries: &[Entry],
        tree: &SessionTree,
        visible: &dyn Fn(usize) -> bool,
        folded: &HashSet<usize>,
    ) {
        rows.clear();
        let is_folded = |i: usize| !folded.is_empty() && folded.contains(&i);
        let n = entries.len().min(tree.len());
        let (first, next, count) = visible_links(n, tree, visible, &is_folded);
        let top = n;
        let kids = |p: usize, v: &mut Vec<usize>| {
            v.clear();
            let mut c = first[p];
            while c != NONE {
                v.push(c as usize);
                c = next[c as usize];
            }
        };
        let mut ks: Vec<usize> = Vec::new();

        let multiple_roots = count[top] > 1;
        rows.reserve(n);
        struct Item {
            node: usize,
            indent: usize,
            just_branched: bool,
            show_connector: bool,
            is_last: bool,
            gutter_up: Option<usize>,
            virtual_root_child: bool,
            parent_row: Option<usize>,
        }
        let mut work: Vec<Item> = Vec::new();
        kids(top, &mut ks);
        let nt = ks.len();
        for (k, &r) in ks.iter().enumerate().rev() {
            work.push(Item {
                node: r,
                indent: usize::from(multiple_roots),
                just_branched: multiple_roots,
                show_connector: multiple_roots,
                is_last: k + 1 == nt,
                gutter_up: None,
                virtual_root_child: multiple_roots,
                parent_row: None,
            });
        }
        while let Some(it) = work.pop() {
            let pos = rows.len();
            let nk = count[it.node] as usize;
            let connector = it.show_connector && !it.virtual_root_child;
            let display_indent = if multiple_roots {
                it.indent.saturating_sub(1)
            } else {
                it.indent
            };
            let visible_parent = it.parent_row.map(|p| rows[p].entry);
            // Foldable: has visible children, and is a root or a segment start.
            let foldable = nk > 0 && it.parent_row.is_none_or(|p| rows[p].visible_children > 1);
            rows.push(RefRow {
                entry: it.node,
                level: it.indent,
                display_indent,
                connector,
                is_last: it.is_last,
                gutter_up: it.gutter_up,
                foldable,
                folded: is_folded(it.node),
                on_active_path: tree.on_active_path.get(it.node).copied().unwrap_or(false),
                visible_parent,
                parent_row: it.parent_row,
                visible_children: nk,
            });
            let multiple = nk > 1;
            let child_indent = if multiple || (it.just_branched && it.indent > 0) {
                it.indent + 1
            } else {
                it.indent
            };
            let child_gutter = if connector { Some(pos) } else { it.gutter_up };
            kids(it.node, &mut ks);
            for (k, &c) in ks.iter().enumerate().rev() {
                work.push(Item {
                    node: c,
                    indent: child_indent,
                    just_branched: multiple,
                    show_connector: multiple,
                    is_last: k + 1 == nk,
                    gutter_up: child_gutter,
                    virtual_root_child: false,
                    parent_row: Some(pos),
                });
            }
        }
    }

    /// A random session: parents earlier, later, missing, themselves or on
    /// a cycle; timestamps tied, out of order or missing; every kind of
    /// entry the filters tell apart.
    fn random_entries(spec: &[(u8, u8, u8, u8)]) -> Vec<Entry> {
        let n = spec.len();
        spec.iter()
            .enumerate()
            .map(|(i, &(par, ts, kind, extra))| {
                let parent = match par % 8 {
                    0 => None,
                    1 => Some("missing".to_string()),
                    // Mostly earlier entries: long chains and forks.
                    2..=5 if i > 0 => Some(format!("e{}", i - 1 - (extra as usize % i.min(4)))),
                    _ => Some(format!("e{}", par as usize % n)),
                };
                let mut v = match kind % 10 {
                    0 | 1 => json!({"type":"message","message":{"role":"user","content":"hi"}}),
                    2 => json!({"type":"message","message":{"role":"assistant",
                        "content":[{"type":"text","text":"ok"}],"stopReason":"stop"}}),
                    3 => json!({"type":"message","message":{"role":"assistant",
                        "content":[{"type":"toolCall","id":"c","name":"bash","arguments":{}}],
                        "stopReason":"toolUse"}}),
                    4 => json!({"type":"message","message":{"role":"toolResult",
                        "toolCallId":"c","content":[{"type":"text","text":"out"}]}}),
                    5 => json!({"type":"label","targetId":format!("e{}", extra as usize % n),
                        "label":"L"}),
                    6 => json!({"type":"model_change","modelId":"m"}),
                    7 => json!({"type":"branch_summary","summary":"s"}),
                    8 => json!({"type":"compaction","summary":"c"}),
                    _ => json!({"type":"custom","customType":"x"}),
                };
                let o = v.as_object_mut().unwrap();
                // A few duplicate ids (the last one wins).
                let id = if extra % 29 == 0 && i > 0 {
                    format!("e{}", i - 1)
                } else {
                    format!("e{i}")
                };
                o.insert("id".into(), json!(id));
                o.insert("parentId".into(), json!(parent));
                if ts % 5 != 0 {
                    o.insert(
                        "timestamp".into(),
                        json!(format!("2025-01-01T00:00:{:02}.000Z", ts % 7)),
                    );
                }
                Entry::new(i + 1, o.clone())
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        /// The one-pass flattening gives exactly the rows of the reference,
        /// under random visibility, every filter and random folds.
        #[test]
        fn one_pass_flatten_is_the_reference(
            spec in prop::collection::vec((0u8..255, 0u8..255, 0u8..255, 0u8..255), 1..70),
            vis in prop::collection::vec(0u8..10, 70),
            folds in prop::collection::vec(0usize..70, 0..6),
        ) {
            let entries = random_entries(&spec);
            let tree = SessionTree::from_entries(&entries);
            let n = entries.len();
            let folded: HashSet<usize> = folds.iter().map(|f| f % n).collect();
            let pre = Preorder::new(&tree);
            prop_assert_eq!(pre.len(), n);
            let leaf = tree.leaf;
            let labeled: Vec<bool> =
                entries.iter().map(|e| tree.labels.contains_key(e.id.as_str())).collect();
            let mut visibles: Vec<Box<dyn Fn(usize) -> bool>> = vec![
                Box::new(|i| vis[i % vis.len()] < 7),
                Box::new(|i| vis[i % vis.len()] < 2),
                Box::new(|_| true),
            ];
            for f in Filter::CYCLE {
                let (entries, labeled) = (&entries, &labeled);
                visibles.push(Box::new(move |i| {
                    passes_filter(&entries[i], Some(i) == leaf, labeled[i], f)
                }));
            }
            let mut rows = Vec::new();
            let mut stack = Vec::new();
            for visible in &visibles {
                for folded in [HashSet::new(), folded.clone()] {
                    let mut want = Vec::new();
                    flatten_reference(&mut want, &entries, &tree, &**visible, &folded);
                    let got = flatten(&entries, &tree, &**visible, &folded);
                    prop_assert_eq!(&as_ref_rows(&got), &want);
                    // With the order and folds kept apart, memory reused.
                    let fp = pre.fold_positions(folded.iter().copied());
                    let bits = bits_where(n, |p| visible(pre.order[p] as usize));
                    flatten_pre(&mut rows, &mut stack, &pre, &bits, &fp);
                    prop_assert_eq!(&rows, &got);
                    // Every entry's nearest row is the reference's walk up.
                    for i in 0..n {
                        let mut cur = Some(i);
                        let mut expect = None;
                        while let Some(c) = cur {
                            if let Some(r) = want.iter().position(|r| r.entry == c) {
                                expect = Some(r);
                                break;
                            }
                            cur = tree.parent.of(c);
                        }
                        prop_assert_eq!(pre.row_of_nearest(&rows, i), expect, "entry {}", i);
                    }
                }
            }
        }
    }
}
