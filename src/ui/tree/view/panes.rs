//! The panes beside or instead of the rows: the selected entry's detail,
//! the context the model sees when resuming at it, and the comparison of
//! two entries' branches.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use super::list_area;
use crate::ui::theme::Theme;
use crate::ui::tree::state::{CompareView, TreeState};
use arbor_session::render::sanitize_line;

pub fn render_detail(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    let block = Block::default()
        .borders(Borders::LEFT)
        .border_style(theme.dim());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(i) = t.selected_entry() else { return };
    let e = &t.loaded.session.entries[i];
    let label = t
        .loaded
        .tree
        .labels
        .get(e.id.as_str())
        .map(|l| l.text.as_str());
    let lines = crate::ui::tree::detail::detail_lines(e, label, &t.query, theme);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((t.detail_scroll, 0)),
        Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        },
    );
}

pub fn render_context(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    let (Some(i), Some(ctx)) = (t.selected_entry(), t.context.as_ref()) else {
        f.render_widget(Paragraph::new("No entry selected"), area);
        return;
    };
    let mut lines: Vec<Line> = Vec::new();
    let model = ctx
        .model
        .as_ref()
        .map(|(p, m)| {
            format!(
                "{}/{}",
                p.as_str().unwrap_or("?"),
                m.as_str().unwrap_or("?")
            )
        })
        .unwrap_or_else(|| "(none)".into());
    lines.push(Line::from(Span::styled(
        sanitize_line(&format!(
            "What the model sees when resuming at {} · {} · ~{} tokens · model {} · thinking {}",
            t.entry_id(i),
            match ctx.messages.len() {
                1 => "1 message".to_string(),
                n => format!("{n} messages"),
            },
            ctx.estimated_tokens(),
            model,
            ctx.thinking_level.as_str().unwrap_or("?"),
        )),
        theme.dim(),
    )));
    lines.push(Line::from(""));
    for (k, m) in ctx.messages.iter().enumerate() {
        if Some(k) == ctx.boundary {
            lines.push(Line::from(Span::styled(
                format!("──── compaction boundary ({}): earlier entries reach the model only as this summary ────", m.entry_id),
                theme.warning(),
            )));
        }
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", m.role), theme.accent()),
            Span::styled(format!("({})", m.entry_id), theme.dim()),
        ]));
        for l in crate::ui::text::sanitize_block(&m.text).lines().take(40) {
            lines.push(Line::from(format!("  {l}")));
        }
        if Some(k) == ctx.boundary {
            lines.push(Line::from(Span::styled(
                "──── end of compaction summary ────",
                theme.warning(),
            )));
        }
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((t.context_scroll, 0)),
        area,
    );
}

/// The compare view's rows on a `width` × `height` screen, and the first
/// one shown: its scroll, held back when a resize left fewer rows below.
pub fn compare_rows(
    c: &CompareView,
    width: u16,
    height: u16,
) -> (Vec<arbor_session::compare::Row>, usize) {
    let rows = arbor_session::compare::layout(&c.cmp, width as usize);
    let shown = list_area(width, height).height as usize;
    let first = c.scroll.min(rows.len().saturating_sub(shown));
    (rows, first)
}

/// The compare view: the comparison's rows for this width, from its
/// scroll (the rows are sanitized by the layout).
pub fn render_compare(f: &mut Frame, c: &CompareView, theme: &Theme, area: Rect, screen: Rect) {
    use arbor_session::compare::{Kind, Row, Tone};
    let style = |tone: Tone| match tone {
        Tone::Title => theme.title(),
        Tone::Heading | Tone::SideName => theme.accent(),
        Tone::Item(Kind::User) => theme.accent(),
        Tone::Item(Kind::Assistant) => Style::default(),
        Tone::Item(Kind::Summary) => theme.label(),
        Tone::Item(Kind::Tool | Kind::Other) | Tone::Dim => theme.dim(),
        Tone::Note => theme.warning(),
    };
    let width = area.width as usize;
    let col = width.saturating_sub(3) / 2;
    let (rows, first) = compare_rows(c, screen.width, screen.height);
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(first)
        .take(area.height as usize)
        .map(|row| match row {
            Row::Full(tone, text) => Line::from(Span::styled(text, style(tone))),
            Row::Pair { a, b, same } => {
                let pad = col.saturating_sub(crate::ui::text::width(&a.1));
                Line::from(vec![
                    Span::styled(a.1, style(a.0)),
                    Span::raw(" ".repeat(pad)),
                    Span::styled(if same { " = " } else { " │ " }, theme.dim()),
                    Span::styled(b.1, style(b.0)),
                ])
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}
