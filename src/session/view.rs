//! Atomic's /tree flattening (SPEC §6), independent of any terminal:
//! filters, folds, search, connectors and the active-path marker.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::entry::Entry;
use super::render::{entry_text, ToolCalls};
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

    /// The status-line tag (`None` for the default filter).
    pub fn tag(self) -> Option<&'static str> {
        match self {
            Filter::Default => None,
            Filter::NoTools => Some("no-tools"),
            Filter::UserOnly => Some("user-only"),
            Filter::LabeledOnly => Some("labeled-only"),
            Filter::All => Some("all"),
        }
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

/// One visible row of the flattened tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeRow {
    pub entry: usize,
    /// Gutters and connector, e.g. `│  ├─ `.
    pub prefix: String,
    /// Has more than one visible child: can be folded.
    pub foldable: bool,
    pub folded: bool,
    pub on_active_path: bool,
    /// Indent level (number of forks above it).
    pub level: usize,
    /// Visible parent row's entry.
    pub visible_parent: Option<usize>,
    /// Number of visible children.
    pub visible_children: usize,
}

/// Whether an entry is shown under `filter` (before search).
pub fn passes_filter(e: &Entry, is_leaf: bool, labeled: bool, filter: Filter) -> bool {
    let ty = e.entry_type();
    let role = e.role();
    if role == Some("assistant") && !is_leaf {
        let m = e.message();
        let has_text = m
            .and_then(|m| m.get("content"))
            .map(|c| !super::entry::content_text(Some(c), "").trim().is_empty())
            .unwrap_or(false);
        let stop = m.and_then(|m| m.get("stopReason")).and_then(Value::as_str);
        if !has_text && !matches!(stop, Some("error") | Some("aborted") | Some("length")) {
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

/// The text searched by type-to-search: label, role, row text, command.
pub fn search_haystack(e: &Entry, tree: &SessionTree, calls: &ToolCalls) -> String {
    let mut s = entry_text(e, calls);
    if let Some(l) = tree.labels.get(&e.id) {
        s.push(' ');
        s.push_str(&l.text);
    }
    if let Some(r) = e.role() {
        s.push(' ');
        s.push_str(r);
    }
    s.to_lowercase()
}

/// Every word of `query` is a case-insensitive substring of `hay` (lowercased).
pub fn matches_search(hay: &str, query: &str) -> bool {
    query
        .split_whitespace()
        .all(|w| hay.contains(&w.to_lowercase()))
}

/// Flattens the visible tree.
pub fn flatten(
    entries: &[Entry],
    tree: &SessionTree,
    visible: &dyn Fn(usize) -> bool,
    folded: &HashSet<usize>,
) -> Vec<TreeRow> {
    // Visible children of each visible node (None = the virtual top), in
    // Atomic's order: active child first at every fork, then by time.
    let mut vchildren: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
    let mut stack: Vec<(usize, Option<usize>)> = tree
        .roots_active_first()
        .into_iter()
        .rev()
        .map(|r| (r, None))
        .collect();
    while let Some((i, vis_anc)) = stack.pop() {
        let next_anc = if visible(i) {
            vchildren.entry(vis_anc).or_default().push(i);
            Some(i)
        } else {
            vis_anc
        };
        for c in tree.children_active_first(i).into_iter().rev() {
            stack.push((c, next_anc));
        }
    }
    let _ = entries;

    let mut rows = Vec::new();
    let empty = Vec::new();
    let top = vchildren.get(&None).unwrap_or(&empty);
    // (node, line prefix, continuation prefix, level, visible parent)
    let mut work: Vec<(usize, String, String, usize, Option<usize>)> = Vec::new();
    push_children(&mut work, top, "", 0, None);
    while let Some((i, line_prefix, cont, level, vparent)) = work.pop() {
        let kids = vchildren.get(&Some(i)).unwrap_or(&empty);
        let foldable = kids.len() > 1;
        let is_folded = foldable && folded.contains(&i);
        rows.push(TreeRow {
            entry: i,
            prefix: line_prefix,
            foldable,
            folded: is_folded,
            on_active_path: tree.on_active_path[i],
            level,
            visible_parent: vparent,
            visible_children: kids.len(),
        });
        if is_folded {
            continue;
        }
        if kids.len() == 1 {
            work.push((kids[0], cont.clone(), cont, level, Some(i)));
        } else {
            push_children(&mut work, kids, &cont, level + 1, Some(i));
        }
    }
    rows
}

fn push_children(
    work: &mut Vec<(usize, String, String, usize, Option<usize>)>,
    kids: &[usize],
    cont: &str,
    level: usize,
    parent: Option<usize>,
) {
    if kids.len() == 1 {
        work.push((kids[0], cont.to_string(), cont.to_string(), level, parent));
        return;
    }
    let n = kids.len();
    for (k, &c) in kids.iter().enumerate().rev() {
        let last = k + 1 == n;
        let line = format!("{cont}{}", if last { "└─ " } else { "├─ " });
        let next = format!("{cont}{}", if last { "   " } else { "│  " });
        work.push((c, line, next, level, parent));
    }
}

/// Renders a row as plain text: `prefix ⊟ • [label] text`.
pub fn row_line(
    row: &TreeRow,
    e: &Entry,
    tree: &SessionTree,
    calls: &ToolCalls,
    label_time: Option<&dyn Fn(&str) -> String>,
) -> String {
    let mut s = row.prefix.clone();
    if row.foldable {
        s.push_str(if row.folded { "⊞ " } else { "⊟ " });
    }
    if row.on_active_path {
        s.push_str("• ");
    }
    if let Some(l) = tree.labels.get(&e.id) {
        s.push('[');
        s.push_str(&super::render::sanitize_line(&l.text));
        if let (Some(fmt), Some(ts)) = (label_time, l.timestamp.as_deref()) {
            s.push(' ');
            s.push_str(&fmt(ts));
        }
        s.push_str("] ");
    }
    s.push_str(&super::render::sanitize_line(&entry_text(e, calls)));
    s
}
