//! The header's three lines: the title and toggles, the notes, the query.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crate::ui::picker::keys::{Action, KEYS};
use crate::ui::picker::state::{Dialog, PickerState, Scope};
use crate::ui::text::{clip, sanitize_line, truncate, width};
use crate::ui::theme::Theme;

pub fn render_header(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    let row = |i: u16| Rect {
        y: area.y + i,
        height: 1,
        ..area
    };
    f.render_widget(
        Paragraph::new(title_line(p, theme, area.width as usize)),
        row(0),
    );
    f.render_widget(Paragraph::new(notes_line(p, theme)), row(1));
    // The field's text is clean by construction (see `ui::input::clean`).
    let (shown, col) = p.search.query.view((area.width as usize).saturating_sub(2));
    let mut q = vec![
        Span::styled("> ", theme.accent()),
        Span::raw(shown.to_string()),
    ];
    if let Some(err) = p.search.parsed.error() {
        // Cut with an ellipsis: an error cut at the edge reads as whole.
        let room = (area.width as usize).saturating_sub(2 + width(shown) + 2);
        q.push(Span::styled(
            format!("  {}", truncate(&sanitize_line(err), room)),
            theme.error(),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(q)), row(2));
    // The terminal's own cursor, where typing goes (and where an input
    // method composes); none while a question or the help is up.
    if p.dialog.open == Dialog::None {
        f.set_cursor_position((area.x + 2 + col as u16, area.y + 2));
    }
}

/// Atomic's title line: the title on the left; scope (or the loading
/// progress in its place), name filter and sort on the right.
fn title_line(p: &PickerState, theme: &Theme, w: usize) -> Line<'static> {
    let title = match p.settings.scope {
        Scope::Current => "Resume Session (Current Folder)",
        Scope::All => "Resume Session (All)",
    };
    let right = clip_spans(toggles(p, theme), w);
    let right_w: usize = right.iter().map(|s| width(&s.content)).sum();
    // Cut without an ellipsis, as Atomic cuts the title.
    let left = clip(title, w.saturating_sub(right_w + 1));
    let pad = w.saturating_sub(width(&left) + right_w);
    let mut line = vec![
        Span::styled(left, theme.title()),
        Span::raw(" ".repeat(pad)),
    ];
    line.extend(right);
    Line::from(line)
}

/// The title line's right-hand part: scope, name filter, sort (their
/// labels in Atomic's `muted`, the choices in `accent`).
fn toggles(p: &PickerState, theme: &Theme) -> Vec<Span<'static>> {
    let mut right: Vec<Span> = Vec::new();
    if let Some((done, total)) = p.progress.loading {
        // Before the store is listed the count is unknown.
        let progress = if total == 0 {
            "Loading…".to_string()
        } else {
            format!("Loading {done}/{total}")
        };
        right.push(Span::styled("○ Current Folder | ", theme.muted()));
        right.push(Span::styled(progress, theme.accent()));
    } else {
        let on = |yes: bool| if yes { theme.accent() } else { theme.muted() };
        let (cur, all) = match p.settings.scope {
            Scope::Current => ("◉ Current Folder", "○ All"),
            Scope::All => ("○ Current Folder", "◉ All"),
        };
        right.push(Span::styled(cur, on(p.settings.scope == Scope::Current)));
        right.push(Span::styled(" | ", theme.muted()));
        right.push(Span::styled(all, on(p.settings.scope == Scope::All)));
    }
    right.push(Span::styled("  Name: ", theme.muted()));
    right.push(Span::styled(
        if p.settings.named_only {
            "Named"
        } else {
            "All"
        },
        theme.accent(),
    ));
    right.push(Span::styled("  Sort: ", theme.muted()));
    right.push(Span::styled(p.settings.sort.label(), theme.accent()));
    right
}

/// Where Atomic leaves a blank line: what arbor adds (the marks, the
/// index being built, the demo store note, internal sessions shown).
fn notes_line(p: &PickerState, theme: &Theme) -> Line<'static> {
    let mut notes: Vec<Span> = Vec::new();
    if !p.selection.marked.is_empty() {
        // Marks the list does not show (another query, scope or filter)
        // are still in the batch: said, so that it holds no surprise.
        let hidden = p.selection.marked.len() - p.marked_listed();
        let mut text = format!("✓ {} marked", p.selection.marked.len());
        if hidden > 0 {
            text.push_str(&format!(" ({hidden} not listed)"));
        }
        notes.push(Span::styled(text, theme.success()));
        notes.push(Span::styled(
            format!(
                "{} · {}",
                KEYS.hint(&[Action::Delete], "delete them"),
                KEYS.hint(&[Action::Unmark], "clear")
            ),
            theme.muted(),
        ));
    }
    if let Some((done, total)) = p.progress.indexing {
        notes.push(Span::styled(
            format!("Indexing {done}/{total}"),
            theme.muted(),
        ));
    }
    // Never an incomplete answer shown as complete (see `search_bodies`).
    if p.query_active() && p.search.incomplete.is_some() {
        let text = match p.search.reading {
            Some(n) => format!("Search incomplete: reading {n} files"),
            None => "Search incomplete".to_string(),
        };
        notes.push(Span::styled(text, theme.warning()));
    }
    if let Some(n) = &p.flash.note {
        notes.push(Span::styled(sanitize_line(n), theme.muted()));
    }
    if p.settings.show_internal {
        notes.push(Span::styled("Internal: shown", theme.warning()));
    }
    let mut spans = Vec::new();
    for (i, n) in notes.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.muted()));
        }
        spans.push(n);
    }
    Line::from(spans)
}

/// Spans cut to `max` cells in all.
fn clip_spans(spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    let mut left = max;
    let mut out = Vec::new();
    for s in spans {
        let t = clip(&s.content, left);
        left -= width(&t);
        let done = t.len() < s.content.len();
        out.push(Span::styled(t, s.style));
        if done {
            break;
        }
    }
    out
}
