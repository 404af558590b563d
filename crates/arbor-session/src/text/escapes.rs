//! Terminal escape sequences in session text, removed whole.
//!
//! Tool output is full of colour codes and titles. A terminal running the
//! agent hides them (Atomic writes them as they are, so its /tree shows
//! `✓ 42 passed` for `ESC[32m✓ESC[39m 42 passed`); arbor must never let
//! one through, and replacing only the ESC byte leaves `[32m` on screen.
//! So every sequence a terminal would consume goes, from its introducer to
//! its final byte or terminator (ECMA-48): CSI (`ESC [` or U+009B, then
//! parameter and intermediate bytes, then one final byte), the control
//! strings OSC, DCS, SOS, PM and APC (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`,
//! `ESC _` or their 8-bit forms U+009D, U+0090, U+0098, U+009E, U+009F, up
//! to BEL, `ESC \` or U+009C), and two-byte escapes (`ESC 7`, `ESC ( B`).
//! What is left of a control (a lone ESC or C1, BEL, NUL) is for the
//! caller's control-character rule (`render::sanitize_line` draws it as a
//! space).

use std::borrow::Cow;
use std::ops::Range;

const ESC: char = '\u{1b}';
const BEL: char = '\u{7}';
/// The 8-bit String Terminator.
const ST: char = '\u{9c}';
/// The 8-bit Control Sequence Introducer.
const CSI: char = '\u{9b}';

/// `s` with every terminal escape sequence removed whole (see the module
/// comment); borrowed when it holds no ESC and no C1 introducer.
pub fn strip_escapes(s: &str) -> Cow<'_, str> {
    if !s.chars().any(starts_sequence) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        match sequence_len(rest) {
            Some(n) => rest = &rest[n..],
            None => {
                out.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    Cow::Owned(out)
}

/// [`strip_escapes`] of `s`, and where the byte range `r` of `s` lies in
/// the result (for a highlighted match in a snippet: cutting the text
/// around the match first could split a sequence and leave `[32m` behind).
/// A range inside a removed sequence becomes empty.
pub fn strip_escapes_keeping(s: &str, r: Range<usize>) -> (Cow<'_, str>, Range<usize>) {
    if !s.chars().any(starts_sequence) {
        return (Cow::Borrowed(s), r);
    }
    let mut out = String::with_capacity(s.len());
    let (mut start, mut end) = (None, None);
    let mut at = 0;
    while at < s.len() {
        let rest = &s[at..];
        let (n, kept) = match sequence_len(rest) {
            Some(n) => (n, false),
            None => (rest.chars().next().map_or(1, char::len_utf8), true),
        };
        let before = out.len();
        if kept {
            out.push_str(&rest[..n]);
        }
        // Ranges are on character boundaries: one can fall inside a
        // removed sequence only, whose text is none.
        if start.is_none() && r.start < at + n {
            start = Some(before);
        }
        if end.is_none() && r.end <= at + n {
            end = Some(if r.end == at + n { out.len() } else { before });
        }
        at += n;
    }
    let end = end.unwrap_or(out.len());
    let start = start.unwrap_or(end).min(end);
    (Cow::Owned(out), start..end)
}

/// Whether `c` may open a sequence: ESC, or an 8-bit introducer.
fn starts_sequence(c: char) -> bool {
    c == ESC || c == CSI || is_string_introducer(c)
}

/// The 8-bit introducers of control strings: DCS, SOS, OSC, PM, APC.
fn is_string_introducer(c: char) -> bool {
    matches!(c, '\u{90}' | '\u{98}' | '\u{9d}' | '\u{9e}' | '\u{9f}')
}

/// The length in bytes of the escape sequence `s` starts with, or `None`
/// when it starts with none (a lone ESC stays, for the caller to replace).
fn sequence_len(s: &str) -> Option<usize> {
    let mut it = s.char_indices();
    let (_, c) = it.next()?;
    match c {
        CSI => Some(c.len_utf8() + control_sequence_len(&s[c.len_utf8()..])),
        c if is_string_introducer(c) => Some(c.len_utf8() + control_string_len(&s[c.len_utf8()..])),
        ESC => {
            let (_, next) = it.next()?;
            // Every arm that reads on has an ASCII `next`.
            let body = &s[1 + next.len_utf8()..];
            match next {
                '[' => Some(2 + control_sequence_len(body)),
                ']' | 'P' | 'X' | '^' | '_' => Some(2 + control_string_len(body)),
                // Intermediates, then one final byte (`ESC ( B`); a
                // sequence cut short ends where it stops.
                ' '..='/' => {
                    let k = body
                        .find(|c: char| !(' '..='/').contains(&c))
                        .unwrap_or(body.len());
                    let fin = body[k..]
                        .chars()
                        .next()
                        .filter(|c| ('0'..='~').contains(c))
                        .map_or(0, char::len_utf8);
                    Some(2 + k + fin)
                }
                // A two-byte escape: `ESC 7`, `ESC =`, `ESC c`.
                '0'..='~' => Some(2),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The length of a control sequence's body after its introducer: parameter
/// and intermediate bytes, then the final byte. Anything else (a control,
/// a non-ASCII character, the end of the text) ends it unfinished, and is
/// not part of it.
fn control_sequence_len(body: &str) -> usize {
    for (i, c) in body.char_indices() {
        match c {
            ' '..='?' => {}
            '@'..='~' => return i + 1,
            _ => return i,
        }
    }
    body.len()
}

/// The length of a control string's body after its introducer, its
/// terminator (BEL, `ESC \` or ST) included. A string never terminated
/// ends at the end of its line: a terminal would swallow everything up to a
/// terminator, but one unfinished title must not hide the rest of a tool's
/// output from the reader (and the newline is no part of any sequence).
fn control_string_len(body: &str) -> usize {
    let mut it = body.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        match c {
            BEL | ST => return i + c.len_utf8(),
            ESC if it.peek().map(|p| p.1) == Some('\\') => return i + 2,
            '\n' => return i,
            _ => {}
        }
    }
    body.len()
}

#[cfg(test)]
mod tests {
    use super::strip_escapes;

    #[test]
    fn whole_sequences_go() {
        let cases = [
            ("\x1b[32m✓\x1b[39m 42 passed", "✓ 42 passed"),
            ("\x1b[1;33mwarning\x1b[0m: x", "warning: x"),
            ("\x1b]0;window title\x07done", "done"),
            ("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"),
            ("a\x1bPq#0;2;0;0;0#0~~\x1b\\b", "ab"),
            ("a\x1b_Gf=100;AAAA\x1b\\b", "ab"),
            ("a\x1b^pm\x1b\\b\x1bXsos\u{9c}c", "abc"),
            ("\x1b[2J\x1b[Hscreen", "screen"),
            ("a\x1b7b\x1b(Bc\x1b=d", "abcd"),
            (
                "a\u{9b}31mb\u{9d}0;t\u{9c}c\u{90}dcs\x07d\u{9f}apc\u{9c}e",
                "abcde",
            ),
            ("\x1b[?1049h\x1b[38;2;1;2;3mx", "x"),
        ];
        for (raw, want) in cases {
            assert_eq!(strip_escapes(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn lone_and_unfinished_sequences() {
        // A lone ESC or C1 stays for the control rule; a sequence cut short
        // by a character that cannot be in it ends there.
        assert_eq!(strip_escapes("a\x1b"), "a\x1b");
        assert_eq!(strip_escapes("a\x1b\u{e9}"), "a\x1b\u{e9}");
        assert_eq!(strip_escapes("a\u{85}b"), "a\u{85}b");
        assert_eq!(strip_escapes("x\x1b[31修复"), "x修复");
        assert_eq!(strip_escapes("x\x1b[31"), "x");
        // An unterminated title ends at its line's end.
        assert_eq!(strip_escapes("a\x1b]0;title\nnext"), "a\nnext");
        assert!(matches!(
            strip_escapes("plain ✓ text"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_range_follows_its_text() {
        use super::strip_escapes_keeping as keep;
        let s = "\x1b[32m✓\x1b[39m 42 passed";
        let at = s.find("42").unwrap();
        let (t, r) = keep(s, at..at + 2);
        assert_eq!((&*t, &t[r]), ("✓ 42 passed", "42"));
        let (t, r) = keep(s, 0..s.len());
        assert_eq!(&t[r], "✓ 42 passed");
        // A match inside a sequence (a search for `32m`) shows as nothing.
        let (t, r) = keep(s, 2..5);
        assert_eq!((&*t, r.is_empty()), ("✓ 42 passed", true));
        let (t, r) = keep("plain", 1..3);
        assert_eq!(&t[r], "la");
    }
}
