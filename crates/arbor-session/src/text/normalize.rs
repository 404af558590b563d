//! The normal form of searchable text: lowercased, whitespace runs
//! collapsed to one space. The list rows' text is gathered in it, the index
//! stores it, and the search compares in it; the preview maps a match in it
//! back onto the original text.

use std::ops::Range;

/// Lowercases and collapses whitespace runs to single spaces (leading
/// whitespace is dropped when `out` is empty or ends in a space).
pub fn normalize(s: &str, out: &mut String) {
    let in_space = out.ends_with(' ') || out.is_empty();
    normalize_after(s, out, in_space);
}

/// Appends [`normalized`]`(s)` to `out` (no string of its own).
pub fn push_normalized(s: &str, out: &mut String) {
    let start = out.len();
    normalize_after(s, out, true);
    if out.len() > start && out.ends_with(' ') {
        out.pop();
    }
}

/// [`normalize`], as after a space when `in_space`.
fn normalize_after(s: &str, out: &mut String, mut in_space: bool) {
    out.reserve(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // A run of ASCII the normal form keeps as it is but for case (single
        // spaces between words included) is copied whole and lowercased in
        // place: pushing it a character at a time was a quarter of a query's
        // time without the index.
        let mut j = i;
        let mut space = in_space;
        while j < b.len() {
            let c = b[j];
            if c >= 0x80 || matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r') || (c == b' ' && space)
            {
                break;
            }
            space = c == b' ';
            j += 1;
        }
        if j > i {
            let start = out.len();
            out.push_str(&s[i..j]);
            out[start..].make_ascii_lowercase();
            in_space = space;
            i = j;
            continue;
        }
        let c = b[i];
        if c < 0x80 {
            // ASCII whitespace the run stopped at.
            if !in_space {
                out.push(' ');
                in_space = true;
            }
            i += 1;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        i += ch.len_utf8();
        if ch.is_whitespace() {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            for l in ch.to_lowercase() {
                out.push(l);
            }
            in_space = false;
        }
    }
}

/// Where a match found in `normalize(s)` (into an empty string) lies in
/// `s`: the byte range from the first to the last original character that
/// produced `norm`'s bytes. Lowercasing changes lengths (`K` U+212A and `Å`
/// U+212B get shorter, `İ` longer) and a collapsed whitespace run is one
/// space, so offsets in the normalized text are not offsets in `s`.
/// `None` when `norm` is empty or past the end.
pub fn original_range(s: &str, norm: Range<usize>) -> Option<Range<usize>> {
    if norm.is_empty() {
        return None;
    }
    let mut pos = 0;
    let mut in_space = true;
    let mut start = None;
    for (i, ch) in s.char_indices() {
        // The bytes this character adds to the normalized text, as `normalize`.
        let made = if ch.is_whitespace() {
            let n = usize::from(!in_space);
            in_space = true;
            n
        } else {
            in_space = false;
            ch.to_lowercase().map(char::len_utf8).sum()
        };
        if made == 0 {
            continue;
        }
        let end = pos + made;
        if start.is_none() && norm.start < end {
            start = Some(i);
        }
        if norm.end <= end {
            return start.map(|st| st..i + ch.len_utf8());
        }
        pos = end;
    }
    None
}

/// The normalized form of one searchable part (no leading or trailing space).
pub fn normalized(s: &str) -> String {
    let mut out = String::new();
    push_normalized(s, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::{normalize, normalized, original_range};

    /// The original text behind the first match of `needle` in the normalized text.
    fn behind(s: &str, needle: &str) -> Option<String> {
        let mut norm = String::new();
        normalize(s, &mut norm);
        let at = norm.find(needle)?;
        original_range(s, at..at + needle.len()).map(|r| s[r].to_string())
    }

    #[test]
    fn matches_map_back_onto_the_original_text() {
        // Lowercasing shortens Å (U+212B, 3 bytes → å, 2) and K (U+212A).
        assert_eq!(
            behind("\u{212b}ngstr\u{f6}m UNITS", "units").as_deref(),
            Some("UNITS")
        );
        assert_eq!(
            behind("the \u{212a}elvin scale", "kelvin").as_deref(),
            Some("\u{212a}elvin")
        );
        // İ lengthens (2 bytes → i + U+0307, 3).
        assert_eq!(
            behind("\u{130}stanbul trip Notes", "notes").as_deref(),
            Some("Notes")
        );
        assert_eq!(
            behind("\u{130}stanbul", "i\u{307}stanbul").as_deref(),
            Some("\u{130}stanbul")
        );
        // Whitespace runs, newlines included, are one space.
        assert_eq!(
            behind("  fix the\n\n  flaky\ttest", "the flaky test").as_deref(),
            Some("the\n\n  flaky\ttest")
        );
        assert_eq!(original_range("abc", 1..1), None);
        assert_eq!(original_range("abc", 2..9), None);
    }

    #[test]
    fn original_range_follows_normalize_byte_for_byte() {
        for s in [
            "Hello   World\n\tX",
            "  lead",
            "\u{130}\u{212b}\u{212a} x\u{2003}y",
            "a\u{b}b",
            "\u{df}SS",
        ] {
            let n = normalized(s);
            for (i, c) in n.char_indices() {
                let r = original_range(s, i..i + c.len_utf8()).expect("every byte maps back");
                let back = normalized(&s[r.clone()]);
                assert!(back.contains(c) || c == ' ', "{s:?} {i} {r:?} {back:?}");
            }
        }
    }

    /// The normal form a character at a time, as defined.
    fn slow(s: &str, out: &mut String) {
        let mut in_space = out.ends_with(' ') || out.is_empty();
        for c in s.chars() {
            if c.is_whitespace() {
                if !in_space {
                    out.push(' ');
                    in_space = true;
                }
            } else {
                out.extend(c.to_lowercase());
                in_space = false;
            }
        }
    }

    #[test]
    fn ascii_and_unicode_paths_agree() {
        for s in ["Hello   World\n\tX", "  lead", "Ünïcödé  TEXT", "a\u{b}b"] {
            let mut fast = String::new();
            normalize(s, &mut fast);
            let mut want = String::new();
            slow(s, &mut want);
            assert_eq!(fast, want, "{s:?}");
        }
    }

    #[test]
    fn random_text_normalizes_as_defined() {
        // Runs of every kind the copied runs stop at or carry: single and
        // repeated spaces, other whitespace (ASCII and not), controls,
        // capitals, letters that lowercase longer or shorter.
        const PIECES: [&str; 16] = [
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\u{b}",
            "\u{c}",
            "\u{1}",
            "\u{2003}",
            "\u{a0}",
            "Ab",
            "xyz",
            "QQ",
            "\u{130}",
            "\u{212a}é",
            "\u{1F600}",
        ];
        let mut next = crate::testgen::xorshift(0x9e37_79b9_7f4a_7c15);
        for round in 0..4000 {
            let mut s = String::new();
            for _ in 0..(round % 23) {
                s.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            }
            for before in ["", "x", "x "] {
                let mut fast = before.to_string();
                normalize(&s, &mut fast);
                let mut want = before.to_string();
                slow(&s, &mut want);
                assert_eq!(fast, want, "{before:?} + {s:?}");
            }
        }
    }
}
