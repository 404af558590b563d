//! Pieces both screens draw the same way.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::theme::Theme;

/// A `w`×`h` rectangle centred in `area` (clipped to it).
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width.saturating_sub(2));
    let h = h.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height.saturating_sub(h)) / 2,
        width: w,
        height: h,
    }
}

/// Clears `r` for a box drawn over the screen. A wide character just left
/// of it (a CJK title under the box's left border) would be drawn by the
/// terminal over its second cell, the border, which the buffer diff then
/// skips as covered: it is blanked first.
pub fn clear_box(f: &mut Frame, r: Rect) {
    if r.x > 0 {
        let buf = f.buffer_mut();
        for y in r.y..r.y.saturating_add(r.height) {
            if !buf
                .area
                .contains(ratatui::layout::Position { x: r.x - 1, y })
            {
                continue;
            }
            let cell = &mut buf[(r.x - 1, y)];
            if super::text::width(cell.symbol()) > 1 {
                cell.set_symbol(" ");
            }
        }
    }
    f.render_widget(Clear, r);
}

/// The help overlay: a titled box of `key  description` rows.
pub fn help_overlay(
    f: &mut Frame,
    theme: &Theme,
    area: Rect,
    title: &str,
    keys: &[(&str, &str)],
    width: u16,
) {
    let key_w = keys
        .iter()
        .map(|(k, _)| super::text::width(k))
        .max()
        .unwrap_or(0)
        + 1;
    let r = centered(area, width, keys.len() as u16 + 3);
    clear_box(f, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!(" {title} "), theme.title()))
        .border_style(theme.accent());
    let mut lines: Vec<Line> = keys
        .iter()
        .map(|(k, d)| {
            Line::from(vec![
                Span::styled(format!(" {}", super::text::fit(k, key_w)), theme.accent()),
                Span::raw(*d),
            ])
        })
        .collect();
    lines.push(Line::from(Span::styled(" any key closes", theme.dim())));
    f.render_widget(Paragraph::new(lines).block(block), r);
}

/// How long a status message stays (Atomic clears its own after 2–4 s).
pub const STATUS_MS: i64 = 4_000;

/// When the status message on screen appeared, so that it can go after
/// [`STATUS_MS`]. Keyed by its text: a message put up anywhere, even
/// without [`StatusTimer::start`], gets its full time from the first tick
/// that sees it.
#[derive(Debug, Default, Clone)]
pub struct StatusTimer {
    seen: Option<(String, i64)>,
}

impl StatusTimer {
    /// A message was put up at `now`.
    pub fn start(&mut self, text: &str, now: i64) {
        self.seen = Some((text.to_string(), now));
    }

    /// Whether `current` (the message on screen) has had its time by `now`.
    pub fn expired(&mut self, current: Option<&str>, now: i64) -> bool {
        match (current, &self.seen) {
            (None, _) => {
                self.seen = None;
                false
            }
            (Some(t), Some((s, at))) if s == t => now - at >= STATUS_MS,
            (Some(t), _) => {
                self.seen = Some((t.to_string(), now));
                false
            }
        }
    }
}

/// The scroll offset that keeps row `pos` inside a window of `height` rows
/// over `len` rows.
pub fn scroll_for(pos: usize, scroll: usize, height: usize, len: usize) -> usize {
    if height == 0 {
        return scroll;
    }
    let s = if pos < scroll {
        pos
    } else if pos >= scroll + height {
        pos + 1 - height
    } else {
        scroll
    };
    s.min(len.saturating_sub(height))
}

#[cfg(test)]
mod tests {
    use super::scroll_for;

    #[test]
    fn scrolling_keeps_the_selection_visible() {
        assert_eq!(scroll_for(0, 5, 10, 100), 0);
        assert_eq!(scroll_for(20, 5, 10, 100), 11);
        assert_eq!(scroll_for(8, 5, 10, 100), 5);
        assert_eq!(scroll_for(99, 95, 10, 100), 90);
        assert_eq!(scroll_for(3, 0, 10, 5), 0);
    }
}
