//! The preview's list of matching entries: each entry's role (and the
//! part of it that matched), its time, and a snippet with the match
//! highlighted, around the match picked with Alt+N / Alt+P.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

use super::preview::PreviewHits;
use crate::ui::text::{sanitize_line, truncate};
use crate::ui::theme::Theme;
use arbor_search::hits::EntryHit;
use arbor_session::searchable::Part;

/// Lines of snippet under each entry.
const SNIPPET_LINES: usize = 2;
/// Columns the snippet lines are indented by (under the marker).
const INDENT: usize = 2;

/// The entry's role, and the part that matched when the role does not
/// say it (a tool call in an assistant message, its thinking).
pub fn hit_label(h: &EntryHit) -> String {
    let role = sanitize_line(&h.role);
    match h.part {
        Part::ToolCall => format!("{role} · tool call"),
        Part::Thinking => format!("{role} · thinking"),
        _ => role,
    }
}

/// `2026-11-29T10:00:02.000Z` → `11-29 10:00` (UTC, as the pane's dates).
fn hit_time(h: &EntryHit) -> String {
    h.timestamp
        .as_deref()
        .and_then(arbor_session::entry::parse_iso_ms)
        .and_then(chrono::DateTime::from_timestamp_millis)
        .map(|d| d.format("%m-%d %H:%M").to_string())
        .unwrap_or_default()
}

/// The heading of the list: `Matches · 3 of 12` and the keys.
pub fn heading(hits: &PreviewHits, pos: usize, keys: &str, theme: &Theme) -> Line<'static> {
    let n = hits.hits.len();
    let count = if hits.total > n {
        format!("{} of the first {n} ({} in all)", pos + 1, hits.total)
    } else {
        format!("{} of {n}", pos + 1)
    };
    Line::from(vec![
        Span::styled("Matches · ", theme.dim()),
        Span::styled(count, theme.accent()),
        Span::styled(format!(" · {keys}"), theme.dim()),
    ])
}

/// The list's lines, at most `budget` of them, `width` cells wide: the
/// entries around the picked one (`pos`), which is always shown.
pub fn lines(
    hits: &PreviewHits,
    pos: usize,
    width: usize,
    budget: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let per = 1 + SNIPPET_LINES;
    let fits = (budget / per).max(1);
    let start = pos.saturating_sub(fits - 1);
    let mut out = Vec::new();
    for (i, h) in hits.hits.iter().enumerate().skip(start) {
        let snippet = snippet_lines(h, width.saturating_sub(INDENT), SNIPPET_LINES, theme);
        if out.len() + 1 + snippet.len() > budget && i > pos {
            break;
        }
        let picked = i == pos;
        let head = format!("{} · {}", hit_label(h), hit_time(h));
        let mut line = Line::from(vec![
            Span::styled(if picked { "› " } else { "  " }, theme.cursor()),
            Span::styled(
                truncate(&head, width.saturating_sub(INDENT)),
                theme.accent(),
            ),
        ]);
        if picked {
            line = line.patch_style(theme.selected());
        }
        out.push(line);
        for mut l in snippet {
            l.spans.insert(0, Span::raw(" ".repeat(INDENT)));
            out.push(l);
        }
    }
    out.truncate(budget.max(1 + SNIPPET_LINES));
    out
}

/// The snippet of `h` in at most `rows` lines of `width` cells, the match
/// in view and highlighted: text before it is cut first (to a third of
/// the room when the text after it needs the rest), with `…` where cut.
/// Session text is untrusted: each piece is sanitized before it is
/// measured.
pub fn snippet_lines(h: &EntryHit, width: usize, rows: usize, theme: &Theme) -> Vec<Line<'static>> {
    let s = &h.snippet;
    let hl = h.highlight.start.min(s.len())..h.highlight.end.min(s.len());
    let piece = |r: std::ops::Range<usize>| sanitize_line(s.get(r).unwrap_or(""));
    let (before, matched, after) = (
        piece(0..hl.start),
        piece(hl.clone()),
        piece(hl.end..s.len()),
    );
    let cells = |t: &str| crate::ui::text::width(t);
    let room = (width * rows).max(1);
    // The match first (cut when longer than the room), then context.
    let matched = truncate(&matched, room);
    let left = room - cells(&matched);
    let before_w = cells(&before).min((left / 3).max(left.saturating_sub(cells(&after))));
    let before = if cells(&before) > before_w {
        crate::ui::text::truncate_left(&before, before_w)
    } else {
        before
    };
    let after = truncate(&after, left - cells(&before).min(left));
    // Characters with whether each is the match, broken into lines by cells.
    let chars = before
        .chars()
        .map(|c| (c, false))
        .chain(matched.chars().map(|c| (c, true)))
        .chain(after.chars().map(|c| (c, false)));
    let mut lines: Vec<Vec<(char, bool)>> = vec![Vec::new()];
    let mut col = 0;
    for (c, m) in chars {
        let w = c.width().unwrap_or(0);
        if col + w > width && col > 0 {
            if lines.len() == rows {
                break;
            }
            lines.push(Vec::new());
            col = 0;
        }
        if let Some(l) = lines.last_mut() {
            l.push((c, m));
        }
        col += w;
    }
    lines
        .into_iter()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let text: String = l.iter().map(|(c, _)| c).collect();
            let marks: Vec<usize> = l
                .iter()
                .enumerate()
                .filter(|(_, (_, m))| *m)
                .map(|(i, _)| i)
                .collect();
            Line::from(crate::ui::text::highlighted(
                &text,
                &marks,
                Style::default(),
                theme.highlight(),
            ))
        })
        .collect()
}
