//! Pieces both screens draw the same way.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::keymap::{bind, key, HelpRow, Keymap, Scroll};
use super::text::{fit, width, wrap_styled};
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

/// A titled box of `lines` (wrapped) over the middle of `area`, `width`
/// wide at the most.
pub fn text_box(
    f: &mut Frame,
    theme: &Theme,
    area: Rect,
    title: &str,
    lines: Vec<Line<'_>>,
    width: u16,
) {
    let r = centered(area, width, lines.len() as u16 + 2);
    clear_box(f, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!(" {title} "), theme.title()))
        .border_style(theme.accent());
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(ratatui::widgets::Wrap { trim: false }),
        r,
    );
}

/// The help overlay's own keys: it scrolls when taller than the screen;
/// any other key closes it.
pub const HELP_KEYS: Keymap<Scroll> = Keymap(&[bind(
    &[
        (key(KeyCode::Up), Scroll::Up),
        (key(KeyCode::Down), Scroll::Down),
        (key(KeyCode::PageUp), Scroll::PageUp),
        (key(KeyCode::PageDown), Scroll::PageDown),
        (key(KeyCode::Home), Scroll::Top),
        (key(KeyCode::End), Scroll::Bottom),
    ],
    "scroll (said on the help's last line when it is taller than the screen)",
)]);

/// A key pressed over the help: its new scroll offset, or `None` when
/// the key closes it.
pub fn help_key(
    k: &KeyEvent,
    rows: &[HelpRow],
    box_width: u16,
    area: Rect,
    scroll: usize,
) -> Option<usize> {
    let (lines, shown, _) = help_geometry(rows, box_width, area);
    let max = lines.saturating_sub(shown);
    Some(
        HELP_KEYS
            .action(k, true)?
            .apply(scroll.min(max), shown, max),
    )
}

/// The tallest the help box gets: a row clear above and below it (as
/// [`centered`] leaves a column either side), so that the screen it is
/// about still shows around it; on a small screen, every row.
fn help_max_height(area: Rect) -> u16 {
    if area.height >= 16 {
        area.height - 2
    } else {
        area.height
    }
}

/// The help's body lines at `box_width` over `area`, how many of them
/// the box shows at once, and its closing lines (how to scroll and close).
fn help_geometry(rows: &[HelpRow], box_width: u16, area: Rect) -> (usize, usize, Vec<String>) {
    let r = centered(area, box_width, help_max_height(area));
    let inner = r.width.saturating_sub(2);
    let lines = help_lines(rows, inner, &Theme::plain()).len();
    let room = r.height.saturating_sub(2) as usize;
    if lines < room {
        return (lines, lines, vec![" any key closes".into()]);
    }
    let closing: Vec<String> = wrap_styled(
        &[vec![(
            format!(
                "{} scroll · any other key closes",
                HELP_KEYS.rows()[0].label()
            ),
            Style::default(),
        )]],
        (inner as usize).saturating_sub(1),
    )
    .into_iter()
    .map(|l| {
        let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        format!(" {text}")
    })
    .collect();
    (
        lines,
        room.saturating_sub(closing.len()).min(lines),
        closing,
    )
}

/// The help's rows laid out `inner` cells wide: keys in a column of
/// their own, descriptions beside them, each wrapped at spaces; a row
/// without keys is a heading. The key column takes the width that needs
/// the fewest lines (a long list of keys wraps rather than pushing every
/// description into a narrow column).
fn help_lines(rows: &[HelpRow], inner: u16, theme: &Theme) -> Vec<Line<'static>> {
    let inner = inner as usize;
    let plain = |s: &str, w: usize| -> Vec<String> {
        wrap_styled(&[vec![(s.to_string(), Style::default())]], w.max(1))
            .into_iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    };
    let layout = |key_w: usize| -> Vec<(Vec<String>, Vec<String>)> {
        let text_w = inner.saturating_sub(key_w + 2).max(1);
        rows.iter()
            .map(|r| {
                if r.keys.is_empty() {
                    (Vec::new(), vec![r.text.clone()])
                } else {
                    (plain(&r.keys, key_w), plain(&r.text, text_w))
                }
            })
            .collect()
    };
    let height = |l: &[(Vec<String>, Vec<String>)]| -> usize {
        l.iter().map(|(k, t)| k.len().max(t.len())).sum()
    };
    let widest = rows.iter().map(|r| width(&r.keys)).max().unwrap_or(0);
    // Keys break between names, never inside one.
    let longest_name = rows
        .iter()
        .flat_map(|r| r.keys.split(' '))
        .map(width)
        .max()
        .unwrap_or(1);
    let key_w = (longest_name..=widest.min(inner / 2).max(longest_name))
        .rev()
        .min_by_key(|&w| height(&layout(w)))
        .unwrap_or(1);
    let mut out = Vec::new();
    for (r, (keys, text)) in rows.iter().zip(layout(key_w)) {
        if r.keys.is_empty() {
            out.push(Line::from(Span::styled(
                format!(" {}", r.text),
                theme.title(),
            )));
            continue;
        }
        for i in 0..keys.len().max(text.len()) {
            let k = keys.get(i).map_or("", String::as_str);
            let t = text.get(i).map_or("", String::as_str);
            out.push(Line::from(vec![
                Span::styled(format!(" {} ", fit(k, key_w)), theme.accent()),
                Span::raw(t.to_string()),
            ]));
        }
    }
    out
}

/// The help overlay: a titled box of `keys  description` rows, from
/// `scroll` on when it is taller than the screen.
pub fn help_overlay(
    f: &mut Frame,
    theme: &Theme,
    area: Rect,
    title: &str,
    rows: &[HelpRow],
    box_width: u16,
    scroll: usize,
) {
    let (total, shown, closing) = help_geometry(rows, box_width, area);
    let r = centered(area, box_width, (shown + closing.len()) as u16 + 2);
    let lines = help_lines(rows, r.width.saturating_sub(2), theme);
    let scroll = scroll.min(total - shown);
    clear_box(f, r);
    // Where the box is in a help taller than the screen.
    let title = if total > shown {
        format!(" {title} · {}–{} of {total} ", scroll + 1, scroll + shown)
    } else {
        format!(" {title} ")
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, theme.title()))
        .border_style(theme.accent());
    let mut body: Vec<Line> = lines.into_iter().skip(scroll).take(shown).collect();
    body.extend(
        closing
            .into_iter()
            .map(|l| Line::from(Span::styled(l, theme.dim()))),
    );
    f.render_widget(Paragraph::new(body).block(block), r);
}

/// Hint items (`key what`) flowed into at most `lines` lines of `cols`,
/// joined by ` · ` and broken only between items, as Atomic's tree help
/// wraps. When they do not all fit, the items at the indices in `spare`
/// are left out, in that order, until the rest do.
pub fn flow_hints(items: &[String], spare: &[usize], lines: usize, cols: usize) -> Vec<String> {
    let flow = |left_out: &[usize]| {
        let mut out: Vec<String> = Vec::new();
        let mut line = String::new();
        for (i, item) in items.iter().enumerate() {
            if left_out.contains(&i) {
                continue;
            }
            if line.is_empty() {
                line.push_str(item);
            } else if width(&line) + 3 + width(item) <= cols {
                line.push_str(" · ");
                line.push_str(item);
            } else {
                out.push(std::mem::replace(&mut line, item.clone()));
            }
        }
        if !line.is_empty() {
            out.push(line);
        }
        out
    };
    let mut n = 0;
    loop {
        let out = flow(&spare[..n]);
        if out.len() <= lines || n == spare.len() {
            return out.into_iter().take(lines).collect();
        }
        n += 1;
    }
}

/// How long a status message stays (Atomic clears its own after 2–4 s).
pub const STATUS_MS: i64 = 4_000;

/// When the status message on screen appeared, so that it can go after
/// [`STATUS_MS`]. Keyed by its text: a message put up anywhere, even
/// without [`StatusTimer::start`], gets its full time from the first tick
/// that sees it.
#[derive(Debug, Default, Clone)]
pub struct StatusTimer {
    /// The message and when it appeared (`None`: held).
    seen: Option<(String, Option<i64>)>,
}

impl StatusTimer {
    /// A message was put up at `now`.
    pub fn start(&mut self, text: &str, now: i64) {
        self.seen = Some((text.to_string(), Some(now)));
    }

    /// A message that stays until another replaces it: work under way
    /// (`Forking…`), whose result then says how it went.
    pub fn hold(&mut self, text: &str) {
        self.seen = Some((text.to_string(), None));
    }

    /// Whether `current` (the message on screen) has had its time by `now`.
    pub fn expired(&mut self, current: Option<&str>, now: i64) -> bool {
        match (current, &self.seen) {
            (None, _) => {
                self.seen = None;
                false
            }
            (Some(t), Some((s, at))) if s == t => at.is_some_and(|at| now - at >= STATUS_MS),
            (Some(t), _) => {
                self.seen = Some((t.to_string(), Some(now)));
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
