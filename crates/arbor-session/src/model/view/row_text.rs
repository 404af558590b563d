//! A flattened row as text: its gutters and connector, its label, and the
//! entry's one line.

use crate::entry::Entry;
use crate::render::{entry_text, ToolCalls};
use crate::tree::SessionTree;

use super::TreeRow;

/// The gutters and connector before a row, e.g. `│     ├⊟ `: each level is
/// 3 columns; an ancestor's connector continues as `│` (or blank after the
/// last sibling); the row's own connector carries its fold state (`⊟`
/// foldable, `⊞` folded, `─` otherwise).
pub fn row_prefix(rows: &[TreeRow], pos: usize) -> String {
    let r = &rows[pos];
    let width = r.display_indent() as usize;
    // The gutter at each level: walking outwards, an outer ancestor's
    // overwrites an inner one's (the outermost at a level wins). One pass,
    // not a search per level: rows thousands of levels deep exist.
    let mut gutters: Vec<Option<bool>> = vec![None; width];
    let mut up = r.gutter_up();
    while let Some(a) = up {
        let ar = &rows[a];
        if let Some(g) = gutters.get_mut((ar.display_indent() as usize).saturating_sub(1)) {
            *g = Some(!ar.is_last());
        }
        up = ar.gutter_up();
    }
    let mut s = String::with_capacity(width * 3);
    for (level, gutter) in gutters.iter().enumerate() {
        if let Some(show) = *gutter {
            s.push_str(if show { "│  " } else { "   " });
        } else if r.connector() && level + 1 == width {
            s.push(if r.is_last() { '└' } else { '├' });
            s.push(if r.folded() {
                '⊞'
            } else if r.foldable() {
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
pub(crate) fn row_head(rows: &[TreeRow], pos: usize) -> String {
    let mut s = row_prefix(rows, pos);
    let r = &rows[pos];
    if r.folded() && !r.connector() {
        s.push_str("⊞ ");
    }
    if r.on_active_path() {
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
    let Some(l) = tree.labels.get(e.id.as_str()) else {
        return String::new();
    };
    let mut s = format!("[{}] ", crate::render::sanitize_line(&l.text));
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
    s.push_str(&crate::render::sanitize_line(&entry_text(e, calls)));
    s
}
