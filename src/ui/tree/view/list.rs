//! The tree's rows: each entry's prefix, marks, label and text, the
//! search's matches marked, panned left together when the selected row's
//! content would start too far right (Atomic's viewport).

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::ui::text::width;
use crate::ui::theme::Theme;
use crate::ui::tree::state::TreeState;
use arbor_session::render::sanitize_line;
use arbor_session::view::{label_part, row_prefix};

/// Columns of the selection gutter (`› `), which never pans.
const GUTTER: usize = 2;

/// Atomic's horizontal viewport (`tree-selector-viewport.ts`): rows pan left
/// together, only when the selected row's content would start too far right
/// to show a useful part of it; it then starts a little in from the left.
/// `rows` = (body width, anchor column) of the rows on screen; returns the
/// columns to skip.
pub fn pan_offset(rows: &[(usize, usize)], selected: Option<usize>, view_width: usize) -> usize {
    let max_body = rows.iter().map(|r| r.0).max().unwrap_or(0);
    let max_scroll = max_body.saturating_sub(view_width);
    let Some(anchor) = selected.and_then(|i| rows.get(i)).map(|r| r.1) else {
        return 0;
    };
    if max_scroll == 0 {
        return 0;
    }
    let min_visible = (view_width / 3).clamp(4, 20);
    if anchor + min_visible <= view_width {
        return 0;
    }
    let context = (view_width / 4).clamp(2, 12);
    max_scroll.min(anchor.saturating_sub(context))
}

/// The part of `spans` between columns `from` and `from + width`; a wide
/// character cut by either edge becomes a space.
fn slice_spans(spans: Vec<Span<'static>>, from: usize, width: usize) -> Vec<Span<'static>> {
    use unicode_width::UnicodeWidthChar;
    let end = from + width;
    let mut out = Vec::new();
    let mut col = 0;
    for sp in spans {
        let mut text = String::new();
        for c in sp.content.chars() {
            let w = c.width().unwrap_or(0);
            let (start, stop) = (col, col + w);
            col = stop;
            if stop <= from || start >= end {
                if w == 0 && start >= from && start < end {
                    text.push(c);
                }
                continue;
            }
            if start < from || stop > end {
                text.push_str(&" ".repeat(stop.min(end) - start.max(from)));
            } else {
                text.push(c);
            }
        }
        if !text.is_empty() {
            out.push(Span::styled(text, sp.style));
        }
    }
    out
}

pub fn render_list(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    if t.rows.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled("  No entries found", theme.dim())),
            area,
        );
        return;
    }
    let calls = t.calls_ref();
    let tree = &t.loaded.tree;
    let fmt = |ts: &str| t.label_time(ts);
    let lt: Option<&dyn Fn(&str) -> String> = if t.label_times { Some(&fmt) } else { None };
    // Each visible row's body (everything after the selection gutter) and
    // where its own content starts, as Atomic builds them.
    let mut bodies: Vec<(usize, Vec<Span<'static>>, usize)> = Vec::new();
    for (pos, r) in t
        .rows
        .iter()
        .enumerate()
        .skip(t.scroll)
        .take(area.height as usize)
    {
        let e = &t.loaded.session.entries[r.entry()];
        let mut spans = vec![Span::styled(row_prefix(&t.rows, pos), theme.dim())];
        if r.folded() && !r.connector() {
            spans.push(Span::styled("⊞ ", theme.accent()));
        }
        // The entry marked to compare (`arbor.tree.mark`).
        if t.mark.as_deref() == Some(e.id.as_str()) {
            spans.push(Span::styled("◆ ", theme.warning()));
        }
        if r.on_active_path() {
            spans.push(Span::styled("• ", theme.active_path()));
        }
        let anchor: usize = spans.iter().map(|s| width(&s.content)).sum();
        let label = label_part(e, tree, lt);
        let text = sanitize_line(&arbor_session::render::entry_text(e, calls));
        let style = match e.role() {
            Some("user") => theme.accent(),
            Some("assistant") => Style::default(),
            _ => theme.dim(),
        };
        // What matched the search is marked in the label and the text.
        for (part, st) in [(label, theme.label()), (text, style)] {
            if part.is_empty() {
                continue;
            }
            let marks = crate::ui::tree::detail::query_marks(&part, &t.query);
            spans.extend(crate::ui::text::highlighted(
                &part,
                &marks,
                st,
                theme.highlight(),
            ));
        }
        bodies.push((pos, spans, anchor));
    }
    let view_width = (area.width as usize).saturating_sub(GUTTER);
    let geometry: Vec<(usize, usize)> = bodies
        .iter()
        .map(|(_, sp, a)| (sp.iter().map(|s| width(&s.content)).sum(), *a))
        .collect();
    let sel_idx = bodies.iter().position(|b| Some(b.0) == t.selected);
    let pan = pan_offset(&geometry, sel_idx, view_width);
    let mut lines = Vec::new();
    for (pos, spans, _) in bodies {
        let sel = t.selected == Some(pos);
        // Panned: `«` in the gutter says the rows are shifted left.
        let gutter = match (sel, pan > 0) {
            (true, false) => "› ",
            (true, true) => "›«",
            (false, false) => "  ",
            (false, true) => " «",
        };
        let mut line_spans = vec![Span::styled(gutter, theme.cursor())];
        line_spans.extend(slice_spans(spans, pan, view_width));
        let mut line = Line::from(line_spans);
        if sel {
            line = line.patch_style(theme.selected());
        }
        lines.push(line);
    }
    f.render_widget(Paragraph::new(lines), area);
}
