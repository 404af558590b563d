//! Width-aware text helpers: session text is untrusted and may be wide (CJK,
//! emoji) or carry combining marks; columns are measured in cells.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

pub use arbor_session::render::{sanitize_block, sanitize_line};

/// Display width in terminal cells.
pub fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// The characters of `chars` that fit in `max` cells, in order, and the
/// cells they take.
fn take_cells(chars: impl Iterator<Item = char>, max: usize) -> (Vec<char>, usize) {
    let mut out = Vec::new();
    let mut w = 0;
    for c in chars {
        let cw = c.width().unwrap_or(0);
        if w + cw > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    (out, w)
}

/// `s` cut to at most `max` cells, without an ellipsis.
pub fn clip(s: &str, max: usize) -> String {
    take_cells(s.chars(), max).0.into_iter().collect()
}

/// `s` when it fits in `max` cells; else `cut` of the cells left beside
/// an ellipsis (nothing at all when there are none).
fn shortened(s: &str, max: usize, cut: impl FnOnce(usize) -> String) -> String {
    if width(s) <= max {
        s.to_string()
    } else if max == 0 {
        String::new()
    } else {
        cut(max - 1)
    }
}

/// Cuts `s` to at most `max` cells, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    shortened(s, max, |room| format!("{}…", clip(s, room)))
}

/// Cuts `s` to at most `max` cells keeping its end, starting with `…` when cut
/// (paths: the tail is the informative part).
pub fn truncate_left(s: &str, max: usize) -> String {
    shortened(s, max, |room| {
        let (tail, _) = take_cells(s.chars().rev(), room);
        let mut out = String::from("…");
        out.extend(tail.into_iter().rev());
        out
    })
}

/// Cuts `s` to at most `max` cells keeping both ends, with `…` in the
/// middle when cut (a path's folder and file name both tell something).
pub fn truncate_middle(s: &str, max: usize) -> String {
    shortened(s, max, |room| {
        let (head, w) = take_cells(s.chars(), room - room / 2);
        // What the head could not use (a wide character at its end) goes
        // to the tail.
        let (tail, _) = take_cells(s.chars().rev(), room - w);
        let mut out: String = head.into_iter().collect();
        out.push('…');
        out.extend(tail.into_iter().rev());
        out
    })
}

/// Word-wraps paragraphs of styled text into lines of at most `max`
/// cells; each paragraph starts on a new line, and a word longer than a
/// line (a path) is broken where the line ends.
pub fn wrap_styled(paragraphs: &[Vec<(String, Style)>], max: usize) -> Vec<Line<'static>> {
    let max = max.max(1);
    let mut lines = Vec::new();
    for para in paragraphs {
        let mut line: Vec<Span<'static>> = Vec::new();
        let mut line_w = 0;
        for (text, style) in para {
            for word in text.split(' ').filter(|w| !w.is_empty()) {
                let ww = width(word);
                if line_w > 0 && line_w + 1 + ww <= max {
                    line.push(Span::styled(format!(" {word}"), *style));
                    line_w += 1 + ww;
                    continue;
                }
                if line_w == 0 && ww <= max {
                    line.push(Span::styled(word.to_string(), *style));
                    line_w = ww;
                    continue;
                }
                if ww <= max {
                    lines.push(Line::from(std::mem::take(&mut line)));
                    line.push(Span::styled(word.to_string(), *style));
                    line_w = ww;
                    continue;
                }
                // Longer than any line: start it on this one, break it by cells.
                let mut part = String::new();
                if line_w > 0 && line_w + 1 < max {
                    part.push(' ');
                    line_w += 1;
                } else if line_w > 0 {
                    lines.push(Line::from(std::mem::take(&mut line)));
                    line_w = 0;
                }
                for c in word.chars() {
                    let cw = c.width().unwrap_or(0);
                    if line_w + cw > max && line_w > 0 {
                        line.push(Span::styled(std::mem::take(&mut part), *style));
                        lines.push(Line::from(std::mem::take(&mut line)));
                        line_w = 0;
                    }
                    part.push(c);
                    line_w += cw;
                }
                line.push(Span::styled(part, *style));
            }
        }
        lines.push(Line::from(line));
    }
    lines
}

/// `path` with the home folder shown as `~`, compared by path components
/// (`/home/alx` is not under a home of `/home/al`). `home` is resolved once,
/// when arbor starts (drawing never reads the environment).
pub fn short_home_in(path: &str, home: Option<&std::path::Path>) -> String {
    let Some(home) = home.filter(|h| h.is_absolute() && h.parent().is_some()) else {
        return path.to_string();
    };
    match std::path::Path::new(path).strip_prefix(home) {
        Ok(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => path.to_string(),
    }
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

    #[test]
    fn home_is_shortened_by_whole_components() {
        use std::path::Path;
        let home = Some(Path::new("/home/al"));
        assert_eq!(short_home_in("/home/alx/p", home), "/home/alx/p");
        assert_eq!(short_home_in("/home/al/p", home), "~/p");
        assert_eq!(short_home_in("/home/al", home), "~");
        assert_eq!(
            short_home_in("/home/al/p", Some(Path::new("/home/al/"))),
            "~/p"
        );
        assert_eq!(
            short_home_in("/home/al/p", Some(Path::new("/"))),
            "/home/al/p"
        );
        assert_eq!(short_home_in("/home/al/p", None), "/home/al/p");
    }

    #[test]
    fn middle_truncation_keeps_both_ends() {
        assert_eq!(truncate_middle("abcdefghij", 10), "abcdefghij");
        assert_eq!(truncate_middle("abcdefghij", 7), "abc…hij");
        assert_eq!(truncate_middle("abcdefghij", 6), "abc…ij");
        assert_eq!(truncate_middle("日本語テキスト", 7), "日…スト");
        assert_eq!(truncate_middle("abc", 0), "");
    }

    #[test]
    fn wrapping_fits_every_line() {
        let wrap = |s: &str, max: usize| -> Vec<String> {
            wrap_styled(&[vec![(s.to_string(), Style::default())]], max)
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "ccc"]);
        assert_eq!(wrap("", 4), vec![""]);
        let long = "cannot create /a/very/long/path/that/does/not/fit: no";
        for l in wrap(long, 12) {
            assert!(width(&l) <= 12, "{l:?}");
        }
        assert_eq!(
            wrap(long, 12).concat().replace(' ', ""),
            long.replace(' ', "")
        );
        assert!(wrap("日本語 テキスト", 5).iter().all(|l| width(l) <= 5));
        let two = wrap_styled(
            &[
                vec![("a b".to_string(), Style::default())],
                vec![("c".to_string(), Style::default())],
            ],
            80,
        );
        assert_eq!(two.len(), 2, "each paragraph starts a line");
    }
}
