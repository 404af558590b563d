use std::ops::Range;

use crate::session::info::SessionInfo;

/// What a query is matched against, prepared once per session.
#[derive(Debug, Clone, Default)]
pub struct SearchDoc {
    /// Short fields, original case (fuzzy matching ignores case itself).
    pub fields: Vec<String>,
    /// The searchable parts, each normalized (lowercased, whitespace runs
    /// collapsed to one space) and separated by `\n` (which a normalized
    /// part never contains, so no match spans two parts): id, name,
    /// summary, cwd, then the message bodies from `body_start` on.
    pub text: String,
    /// Where the bodies start in `text`.
    pub body_start: usize,
    /// What the query's filters (`dir:`, `after:`, …) look at.
    pub facts: RowFacts,
}

/// The facts of a row the query's filters test (see `super::query::Filter`).
#[derive(Debug, Clone, Default)]
pub struct RowFacts {
    /// The cwd, lowercased.
    pub cwd: String,
    pub modified_ms: i64,
    /// The models used, lowercased.
    pub models: Vec<String>,
    pub named: bool,
    pub fork: bool,
    pub agent: crate::session::agent::Agent,
}

impl RowFacts {
    pub fn of(info: &SessionInfo) -> RowFacts {
        RowFacts {
            cwd: info.cwd.to_lowercase(),
            modified_ms: info.modified_ms,
            models: info.models.iter().map(|m| m.to_lowercase()).collect(),
            named: info.display_name().is_some(),
            fork: info.parent_session_path.is_some(),
            agent: info.agent,
        }
    }
}

/// Lowercases and collapses whitespace runs to single spaces (leading
/// whitespace is dropped when `out` is empty or ends in a space).
pub fn normalize(s: &str, out: &mut String) {
    let mut in_space = out.ends_with(' ') || out.is_empty();
    out.reserve(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            // ASCII: the same as the general case below, without decoding.
            if matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
                if !in_space {
                    out.push(' ');
                    in_space = true;
                }
            } else {
                out.push(c.to_ascii_lowercase() as char);
                in_space = false;
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
    normalize(s, &mut out);
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

impl SearchDoc {
    pub fn from_info(info: &SessionInfo) -> SearchDoc {
        let mut fields = Vec::with_capacity(5);
        if let Some(n) = info.display_name() {
            fields.push(n.to_string());
        }
        if let Some(s) = info.summary() {
            fields.push(s.to_string());
        }
        let first = info.first_message_text();
        let cut = first
            .char_indices()
            .nth(500)
            .map_or(first.len(), |(i, _)| i);
        fields.push(first[..cut].to_string());
        fields.push(info.cwd.clone());
        fields.push(info.id.clone());
        let mut text = String::with_capacity(info.all_text.len() + 256);
        for f in [
            info.id.as_str(),
            info.display_name().unwrap_or(""),
            info.summary().unwrap_or(""),
            info.cwd.as_str(),
        ] {
            text.push_str(&normalized(f));
            text.push('\n');
        }
        let body_start = text.len();
        text.push_str(&normalized(&info.all_text));
        SearchDoc {
            fields,
            text,
            body_start,
            facts: RowFacts::of(info),
        }
    }

    /// The short fields' part of `text`.
    pub fn fields_text(&self) -> &str {
        &self.text[..self.body_start]
    }

    /// The bodies' part of `text` (empty for rows from the index).
    pub fn body_text(&self) -> &str {
        &self.text[self.body_start..]
    }
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

    #[test]
    fn ascii_and_unicode_paths_agree() {
        for s in ["Hello   World\n\tX", "  lead", "Ünïcödé  TEXT", "a\u{b}b"] {
            let mut fast = String::new();
            normalize(s, &mut fast);
            let mut slow = String::new();
            let mut in_space = true;
            for c in s.chars() {
                if c.is_whitespace() {
                    if !in_space {
                        slow.push(' ');
                        in_space = true;
                    }
                } else {
                    slow.extend(c.to_lowercase());
                    in_space = false;
                }
            }
            assert_eq!(fast, slow, "{s:?}");
        }
    }
}
