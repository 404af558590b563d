//! Width-aware text helpers: session text is untrusted and may be wide (CJK,
//! emoji) or carry combining marks; columns are measured in cells.

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_width::UnicodeWidthChar;

pub use crate::session::render::{sanitize_block, sanitize_line};

/// Display width in terminal cells.
pub fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Cuts `s` to at most `max` cells, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > max - 1 {
            break;
        }
        out.push(c);
        w += cw;
    }
    out.push('…');
    out
}

/// Cuts `s` to at most `max` cells keeping its end, starting with `…` when cut
/// (paths: the tail is the informative part).
pub fn truncate_left(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut tail: Vec<char> = Vec::new();
    let mut w = 0;
    for c in s.chars().rev() {
        let cw = c.width().unwrap_or(0);
        if w + cw > max - 1 {
            break;
        }
        tail.push(c);
        w += cw;
    }
    let mut out = String::from("…");
    out.extend(tail.into_iter().rev());
    out
}

/// Pads with spaces to exactly `w` cells (truncating first).
pub fn fit(s: &str, w: usize) -> String {
    let t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    format!("{t}{}", " ".repeat(pad))
}

/// Spans of `text` (already sanitized and truncated) with the characters at
/// `positions` in `hl` style.
pub fn highlighted<'a>(text: &str, positions: &[usize], base: Style, hl: Style) -> Vec<Span<'a>> {
    if positions.is_empty() {
        return vec![Span::styled(text.to_string(), base)];
    }
    let mut spans = Vec::new();
    let mut cur = String::new();
    let mut cur_hl = false;
    let mut p = positions.iter().peekable();
    for (i, c) in text.chars().enumerate() {
        while p.peek().is_some_and(|&&x| x < i) {
            p.next();
        }
        let is_hl = p.peek() == Some(&&i);
        if is_hl != cur_hl && !cur.is_empty() {
            spans.push(Span::styled(
                std::mem::take(&mut cur),
                if cur_hl { base.patch(hl) } else { base },
            ));
        }
        cur_hl = is_hl;
        cur.push(c);
    }
    if !cur.is_empty() {
        spans.push(Span::styled(
            cur,
            if cur_hl { base.patch(hl) } else { base },
        ));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_characters_are_measured_in_cells() {
        assert_eq!(width("日本"), 4);
        assert_eq!(truncate("日本語テキスト", 7), "日本語…");
        assert_eq!(width(&fit("é", 3)), 3);
        assert_eq!(width(&fit("e\u{301}x", 3)), 3);
    }
}
