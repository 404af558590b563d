//! Atomic's /tree flattening (SPEC §6), independent of any terminal:
//! filters, folds, search, connectors and the active-path marker.

use std::collections::HashSet;

use serde_json::Value;

use super::entry::content_text;
use super::entry::{Entry, StopKind, TextKind};
use super::render::{entry_text, has_text_content, ToolCalls};
use super::tree::SessionTree;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    Default,
    NoTools,
    UserOnly,
    LabeledOnly,
    All,
}

impl Filter {
    pub const CYCLE: [Filter; 5] = [
        Filter::Default,
        Filter::NoTools,
        Filter::UserOnly,
        Filter::LabeledOnly,
        Filter::All,
    ];

    /// The status-line tag, as Atomic words it (`None` for the default filter).
    pub fn tag(self) -> Option<&'static str> {
        match self {
            Filter::Default => None,
            Filter::NoTools => Some("no-tools"),
            Filter::UserOnly => Some("user"),
            Filter::LabeledOnly => Some("labeled"),
            Filter::All => Some("all"),
        }
    }

    /// The name `arbor show --filter` takes.
    pub fn from_name(name: &str) -> Option<Filter> {
        Some(match name {
            "default" => Filter::Default,
            "no-tools" => Filter::NoTools,
            "user-only" => Filter::UserOnly,
            "labeled-only" => Filter::LabeledOnly,
            "all" => Filter::All,
            _ => return None,
        })
    }

    pub fn next(self) -> Filter {
        let i = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        Self::CYCLE[(i + 1) % Self::CYCLE.len()]
    }

    pub fn prev(self) -> Filter {
        let i = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        Self::CYCLE[(i + Self::CYCLE.len() - 1) % Self::CYCLE.len()]
    }
}

/// One visible row of the flattened tree, with Atomic's layout facts
/// (`tree-selector-model.ts`): its indent, whether it draws a connector, and
/// a link to the ancestor rows whose connectors continue as gutters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    pub entry: usize,
    /// Atomic's indent level (before the shift for several roots).
    pub level: usize,
    /// Prefix width in levels of 3 columns.
    pub display_indent: usize,
    /// Draws a connector (`├`/`└`) in the last prefix level.
    pub connector: bool,
    /// The last of its visible siblings (`└` rather than `├`).
    pub is_last: bool,
    /// Row of the nearest ancestor that draws a connector (its gutter runs
    /// down past this row).
    pub gutter_up: Option<usize>,
    /// A root or a segment start with visible children: Ctrl+← folds it.
    pub foldable: bool,
    pub folded: bool,
    pub on_active_path: bool,
    /// Visible parent row's entry.
    pub visible_parent: Option<usize>,
    /// Visible parent's row.
    pub parent_row: Option<usize>,
    /// Number of visible children.
    pub visible_children: usize,
}

/// A `stopReason` that JavaScript reads as truthy and is neither `stop`
/// nor `toolUse`.
pub fn unusual_stop(stop: StopKind) -> bool {
    match stop {
        StopKind::Missing
        | StopKind::Null
        | StopKind::False
        | StopKind::Zero
        | StopKind::EmptyString
        | StopKind::Stop
        | StopKind::ToolUse => false,
        StopKind::True
        | StopKind::NonZero
        | StopKind::Compound
        | StopKind::Error
        | StopKind::Aborted
        | StopKind::Length
        | StopKind::OtherString => true,
    }
}

/// Whether an entry is shown under `filter` (before search).
pub fn passes_filter(e: &Entry, is_leaf: bool, labeled: bool, filter: Filter) -> bool {
    let ty = e.entry_type();
    // A second header in the file is not an entry (Atomic leaves it out).
    if ty == "session" {
        return false;
    }
    let role = e.role();
    if role == Some("assistant") && !is_leaf {
        // An assistant message with only tool calls is hidden in every
        // filter, unless it ended other than normally (error, aborted…).
        let has_text = match e.assistant_text() {
            TextKind::Text => true,
            TextKind::Blank => false,
            TextKind::Unsure => e.with_raw(|raw| {
                has_text_content(raw.get("message").and_then(|m| m.get("content")))
            }),
        };
        if !has_text && !unusual_stop(e.assistant_stop()) {
            return false;
        }
    }
    match filter {
        Filter::All => true,
        Filter::UserOnly => role == Some("user"),
        Filter::LabeledOnly => labeled,
        Filter::Default | Filter::NoTools => {
            if matches!(
                ty,
                "label" | "custom" | "model_change" | "thinking_level_change" | "session_info"
            ) {
                return false;
            }
            !(filter == Filter::NoTools && role == Some("toolResult"))
        }
    }
}

/// The text searched by type-to-search: what Atomic searches (label, role,
/// message text, command, type words), with the whole message text rather
/// than its first 200 characters, and the row text as shown.
pub fn search_haystack(e: &Entry, tree: &SessionTree, calls: &ToolCalls) -> String {
    let text = search_text(e, calls);
    match tree.labels.get(&e.id) {
        // Lowercasing the label and the rest apart is lowercasing them
        // joined by a space: a space never makes a final sigma.
        Some(l) => format!("{} {text}", l.text.to_lowercase()),
        None => text,
    }
}

/// [`search_haystack`] without the label (labels change while the text of
/// an entry does not): lowercased. A word of a query never holds a space,
/// so it is in the haystack exactly when it is in the label or in this.
pub fn search_text(e: &Entry, calls: &ToolCalls) -> String {
    search_parts(e, calls).to_lowercase()
}

/// The parts of [`search_text`] joined by spaces, before lowercasing.
fn search_parts(e: &Entry, calls: &ToolCalls) -> String {
    let e = &*e.parsed();
    let mut parts: Vec<String> = Vec::new();
    let field = |k: &str| {
        e.raw
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match e.entry_type() {
        "message" => {
            if let Some(m) = e.message() {
                if let Some(r) = m.get("role").and_then(Value::as_str) {
                    parts.push(r.to_string());
                }
                parts.push(content_text(m.get("content"), " "));
                if let Some(c) = m.get("command").and_then(Value::as_str) {
                    parts.push(c.to_string());
                }
            }
        }
        "custom_message" => {
            parts.push(field("customType"));
            parts.push(content_text(e.raw.get("content"), ""));
        }
        "compaction" => parts.push("compaction".into()),
        ty => {
            // Atomic's type word, then the field that says what it is.
            let words = match ty {
                "branch_summary" => Some(("branch summary", "summary")),
                "session_info" => Some(("title", "name")),
                "model_change" => Some(("model", "modelId")),
                "thinking_level_change" => Some(("thinking", "thinkingLevel")),
                "custom" => Some(("custom", "customType")),
                "label" => Some(("label", "label")),
                _ => None,
            };
            if let Some((word, key)) = words {
                parts.push(word.into());
                parts.push(field(key));
            }
        }
    }
    parts.push(entry_text(e, calls));
    parts.join(" ")
}

/// Every word of `query` is a case-insensitive substring of `hay` (lowercased).
pub fn matches_search(hay: &str, query: &str) -> bool {
    query
        .split_whitespace()
        .all(|w| hay.contains(&w.to_lowercase()))
}

const NONE: u32 = u32::MAX;

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
    let mut rows = Vec::new();
    flatten_into(&mut rows, entries, tree, visible, folded);
    rows
}

/// [`flatten`] into `rows` (cleared first), reusing its memory: the tree
/// screen flattens again on every filter, fold and search key.
pub fn flatten_into(
    rows: &mut Vec<TreeRow>,
    entries: &[Entry],
    tree: &SessionTree,
    visible: &dyn Fn(usize) -> bool,
    folded: &HashSet<usize>,
) {
    let mut scratch = FlattenScratch::default();
    flatten_with(rows, &mut scratch, entries, tree, visible, folded);
}

/// The working memory of [`flatten_with`], kept between calls: on a big
/// session, fresh arrays cost more in page faults than the walk itself.
#[derive(Debug, Default)]
pub struct FlattenScratch {
    first: Vec<u32>,
    last: Vec<u32>,
    next: Vec<u32>,
    count: Vec<u32>,
    stack: Vec<(usize, usize)>,
}

/// [`flatten_into`] with working memory kept by the caller.
pub fn flatten_with(
    rows: &mut Vec<TreeRow>,
    scratch: &mut FlattenScratch,
    entries: &[Entry],
    tree: &SessionTree,
    visible: &dyn Fn(usize) -> bool,
    folded: &HashSet<usize>,
) {
    rows.clear();
    let is_folded = |i: usize| !folded.is_empty() && folded.contains(&i);
    let n = entries.len().min(tree.len());
    // The visible tree as first-child / next-sibling links (index n = the
    // virtual top), children in Atomic's order.
    let FlattenScratch {
        first,
        last,
        next,
        count,
        stack,
    } = scratch;
    for (v, len, fill) in [
        (&mut *first, n + 1, NONE),
        (&mut *last, n + 1, NONE),
        (&mut *next, n, NONE),
        (&mut *count, n + 1, 0),
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
        rows.push(TreeRow {
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

/// The gutters and connector before a row, e.g. `│     ├⊟ `: each level is
/// 3 columns; an ancestor's connector continues as `│` (or blank after the
/// last sibling); the row's own connector carries its fold state (`⊟`
/// foldable, `⊞` folded, `─` otherwise).
pub fn row_prefix(rows: &[TreeRow], pos: usize) -> String {
    let r = &rows[pos];
    let width = r.display_indent;
    // The gutter at each level: walking outwards, an outer ancestor's
    // overwrites an inner one's (the outermost at a level wins). One pass,
    // not a search per level: rows thousands of levels deep exist.
    let mut gutters: Vec<Option<bool>> = vec![None; width];
    let mut up = r.gutter_up;
    while let Some(a) = up {
        let ar = &rows[a];
        if let Some(g) = gutters.get_mut(ar.display_indent.saturating_sub(1)) {
            *g = Some(!ar.is_last);
        }
        up = ar.gutter_up;
    }
    let mut s = String::with_capacity(width * 3);
    for (level, gutter) in gutters.iter().enumerate() {
        if let Some(show) = *gutter {
            s.push_str(if show { "│  " } else { "   " });
        } else if r.connector && level + 1 == width {
            s.push(if r.is_last { '└' } else { '├' });
            s.push(if r.folded {
                '⊞'
            } else if r.foldable {
                '⊟'
            } else {
                '─'
            });
            s.push(' ');
        } else {
            s.push_str("   ");
        }
    }
    s
}

/// Everything before the label and text: prefix, the fold marker of a
/// folded row without a connector (`⊞ `), the active-path marker (`• `).
/// Its width is where the row's own content starts (the pan anchor).
pub fn row_head(rows: &[TreeRow], pos: usize) -> String {
    let mut s = row_prefix(rows, pos);
    let r = &rows[pos];
    if r.folded && !r.connector {
        s.push_str("⊞ ");
    }
    if r.on_active_path {
        s.push_str("• ");
    }
    s
}

/// `[label] ` and, with label times on, `HH:MM ` after it, as Atomic draws them.
pub fn label_part(
    e: &Entry,
    tree: &SessionTree,
    label_time: Option<&dyn Fn(&str) -> String>,
) -> String {
    let Some(l) = tree.labels.get(&e.id) else {
        return String::new();
    };
    let mut s = format!("[{}] ", super::render::sanitize_line(&l.text));
    if let (Some(fmt), Some(ts)) = (label_time, l.timestamp.as_deref()) {
        let t = fmt(ts);
        if !t.is_empty() {
            s.push_str(&t);
            s.push(' ');
        }
    }
    s
}

/// Renders a row as plain text, as Atomic's tree draws it without the
/// selection gutter: `prefix ⊞ • [label] text`.
pub fn row_line(
    rows: &[TreeRow],
    pos: usize,
    e: &Entry,
    tree: &SessionTree,
    calls: &ToolCalls,
    label_time: Option<&dyn Fn(&str) -> String>,
) -> String {
    let mut s = row_head(rows, pos);
    s.push_str(&label_part(e, tree, label_time));
    s.push_str(&super::render::sanitize_line(&entry_text(e, calls)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The haystack as it was built (label first, all parts joined, then
    /// lowercased) is the label and the search text lowercased apart,
    /// Greek final sigma included.
    #[test]
    fn haystack_is_label_then_search_text() {
        let lines = [
            json!({"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",
                "message":{"role":"user","content":"ΣΑΣ ΟΔΟΣ. σοφός Σ"}}),
            json!({"type":"label","id":"b","parentId":"a","targetId":"a","label":"ΟΔΟΣ","timestamp":"2025-01-01T00:00:01.000Z"}),
            json!({"type":"label","id":"c","parentId":"b","targetId":"b","label":"Σ.","timestamp":"2025-01-01T00:00:02.000Z"}),
            json!({"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:03.000Z",
                "message":{"role":"bashExecution","command":"ΣΗΜΑ","output":""}}),
            json!({"type":"label","id":"e","parentId":"d","targetId":"d","label":"'Σ'","timestamp":"2025-01-01T00:00:04.000Z"}),
        ];
        let entries: Vec<Entry> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| Entry::new(i + 1, l.as_object().unwrap().clone()))
            .collect();
        let tree = SessionTree::from_entries(&entries);
        let calls = ToolCalls::default();
        for e in &entries {
            let mut parts: Vec<String> = Vec::new();
            if let Some(l) = tree.labels.get(&e.id) {
                parts.push(l.text.clone());
            }
            parts.push(search_parts(e, &calls));
            let old = parts.join(" ").to_lowercase();
            assert_eq!(search_haystack(e, &tree, &calls), old, "{}", e.id);
        }
    }
}
