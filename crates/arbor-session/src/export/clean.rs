//! Session text made safe to show and print: terminal escapes removed,
//! unsafe characters dropped, one-line forms for headings.

use std::borrow::Cow;

use crate::escapes::strip_escapes;
use crate::render::is_unsafe;

/// Text with terminal escape sequences removed and the other characters the
/// terminal sanitizer refuses (controls but newlines and tabs, bidi
/// overrides, embeddings, isolates and marks) dropped; CR and CRLF become
/// newlines. So the document reads as what it contains, and can be printed.
pub(crate) fn clean_text(s: &str) -> Cow<'_, str> {
    let needs = s.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c));
    if !needs {
        return Cow::Borrowed(s);
    }
    let s = strip_escapes(s);
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => {
                if it.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            c if is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One line of text (for headings and summaries): whitespace runs become one
/// space.
pub(super) fn one_line(s: &str) -> String {
    clean_text(s)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn first_chars(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_drops_escapes_and_controls() {
        let s = "a\x1b[31mred\x1b[0m b\x1b]0;title\x07c\r\nd\re\u{202e}f\u{9b}2Jg\x00h";
        assert_eq!(clean_text(s), "ared bc\nd\nefgh");
        let s = "x\x1bP1$r\x1b\\y\u{9f}apc\u{9c}z\x1b_k\x07\u{85}!";
        assert_eq!(clean_text(s), "xyz!");
        assert!(matches!(clean_text("plain\ttext\n"), Cow::Borrowed(_)));
    }
}
