//! What a raw session line must hold for a term to match its text,
//! checked on the bytes: most lines of a long tool output are never
//! parsed. Every check here is a necessary condition (a line that fails it
//! cannot match), never a sufficient one.

use memchr::memmem::Finder;

use super::literals::{parse_case_insensitive, regex_literals};
use super::query::Term;

/// The literals and word runs a match of one term needs in the line.
#[derive(Default)]
pub struct LineNeeds {
    /// One literal of each list, lowercase ASCII.
    literals: Vec<Vec<Finder<'static>>>,
    /// For each group, one of its runs: words that follow each other with
    /// nothing but whitespace between them in the text (a phrase's words,
    /// a regex's literal that spans words).
    runs: Vec<Vec<Vec<Vec<u8>>>>,
}

impl LineNeeds {
    /// What `t` needs: a word's text, a phrase's words (adjacent), a
    /// regex's literal prefixes and suffixes and the words its matches
    /// start with. Only what is ASCII and written as itself in JSON is
    /// checked; nothing for the rest.
    pub fn of(t: &Term) -> LineNeeds {
        let mut needs = LineNeeds::default();
        match t {
            Term::Word { lower, .. } if usable(lower) => {
                needs.literals.push(vec![finder(lower)]);
            }
            Term::Phrase(p) => {
                let words: Vec<&str> = p.split(' ').filter(|w| !w.is_empty()).collect();
                for w in words.iter().filter(|w| usable(w)) {
                    needs.literals.push(vec![finder(w)]);
                }
                // Runs of checkable words next to each other.
                for run in words.split(|w| !usable(w)).filter(|r| r.len() > 1) {
                    needs
                        .runs
                        .push(vec![run.iter().map(|w| w.as_bytes().to_vec()).collect()]);
                }
            }
            Term::Regex(r) => {
                needs.literals = regex_ends(r.as_str());
                if let Some(lits) = regex_literals(r.as_str()) {
                    let group: Option<Vec<Vec<Vec<u8>>>> = lits
                        .literals
                        .iter()
                        .map(|l| {
                            let words: Vec<Vec<u8>> = l
                                .split(' ')
                                .filter(|w| !w.is_empty())
                                .map(|w| usable(w).then(|| w.as_bytes().to_vec()))
                                .collect::<Option<_>>()?;
                            (!words.is_empty()).then_some(words)
                        })
                        .collect();
                    // A group only helps when some literal spans words
                    // (else the literals above say as much).
                    if let Some(group) = group.filter(|g| g.iter().any(|r| r.len() > 1)) {
                        needs.runs.push(group);
                    }
                }
            }
            _ => {}
        }
        needs
    }

    /// Nothing is checked: every line may match.
    pub fn is_empty(&self) -> bool {
        self.literals.is_empty() && self.runs.is_empty()
    }

    /// Whether the line, lowercased (ASCII only), may hold a match.
    pub fn held_by(&self, lower: &[u8]) -> bool {
        self.literals
            .iter()
            .all(|any| any.iter().any(|f| f.find(lower).is_some()))
            && self
                .runs
                .iter()
                .all(|group| group.iter().any(|run| run_in(lower, run)))
    }
}

/// Lines longer than this are lowercased a block at a time by
/// [`LineNeeds::held_by_line`].
const LOWER_BLOCK: usize = 1 << 20;

impl LineNeeds {
    /// [`LineNeeds::held_by`] of `line` lowercased, into `scratch`; a long
    /// line a block at a time (each block with the bytes after it that a
    /// literal starting in it may reach), never copied whole (a search
    /// held a lowercase copy of a line of 200 MB). On a long line a run of
    /// words, which whitespace may stretch to any length, is not looked
    /// for: it counts as held (the filter may only say "no match" when it
    /// is sure).
    pub fn held_by_line(&self, line: &[u8], scratch: &mut Vec<u8>) -> bool {
        scratch.clear();
        if line.len() <= LOWER_BLOCK {
            scratch.extend(line.iter().map(u8::to_ascii_lowercase));
            return self.held_by(scratch);
        }
        let reach = self
            .literals
            .iter()
            .flatten()
            .map(|f| f.needle().len())
            .max()
            .unwrap_or(0);
        let mut found = vec![false; self.literals.len()];
        let mut start = 0;
        while start < line.len() && found.iter().any(|f| !f) {
            let end = (start + LOWER_BLOCK + reach).min(line.len());
            scratch.clear();
            scratch.extend(line[start..end].iter().map(u8::to_ascii_lowercase));
            for (any, f) in self.literals.iter().zip(found.iter_mut()) {
                *f = *f || any.iter().any(|x| x.find(scratch).is_some());
            }
            start += LOWER_BLOCK;
        }
        found.iter().all(|f| *f)
    }
}

/// Whether a raw line has an escape that could spell a letter (`\u…`,
/// `\/`) or a character whose lowercase is ASCII (the Kelvin sign, `İ`):
/// its bytes then say nothing about the text's normal form.
pub fn may_spell_letters(line: &[u8]) -> bool {
    use memchr::memmem::find;
    find(line, b"\\u").is_some()
        || find(line, b"\\/").is_some()
        || find(line, "\u{212a}".as_bytes()).is_some()
        || find(line, "\u{130}".as_bytes()).is_some()
}

fn finder(s: &str) -> Finder<'static> {
    Finder::new(s.as_bytes()).into_owned()
}

/// A literal the line shows as itself: ASCII, and nothing JSON escapes
/// (a quote, a backslash, a control character) or writes otherwise
/// (whitespace may be `\n` or a run).
fn usable(s: &str) -> bool {
    !s.is_empty()
        && s.is_ascii()
        && !s.contains(|c: char| c.is_whitespace() || c.is_control() || c == '"' || c == '\\')
}

/// The regex's literal prefixes and suffixes (case-insensitive), as
/// lists of which a match holds one.
fn regex_ends(pattern: &str) -> Vec<Vec<Finder<'static>>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let Some(hir) = parse_case_insensitive(pattern) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for kind in [ExtractKind::Prefix, ExtractKind::Suffix] {
        let seq = Extractor::new().kind(kind).extract(&hir);
        let Some(lits) = seq.literals() else { continue };
        let words: Option<Vec<String>> = lits
            .iter()
            .map(|l| {
                let s = std::str::from_utf8(l.as_bytes()).ok()?.to_lowercase();
                usable(&s).then_some(s)
            })
            .collect();
        if let Some(words) = words.filter(|w| !w.is_empty()) {
            out.push(words.iter().map(|w| finder(w)).collect());
        }
    }
    out
}

/// Whether `words` may follow each other in the text of `lower` (a raw
/// line lowercased) with whitespace between them: each occurrence of the
/// first word is followed by whitespace as JSON writes it (bytes, `\n`,
/// `\t`, `\r`, `\f`, or any non-ASCII byte, which may be a wide space)
/// and the next word, and so on. Where the whitespace ends at the end of
/// a JSON token (a quote, `,`, `:`, `}`, `]`), the text may go on in
/// another string (blocks and arguments are joined by spaces), so the
/// line may match.
fn run_in(lower: &[u8], words: &[Vec<u8>]) -> bool {
    let Some((first, rest)) = words.split_first() else {
        return true;
    };
    let f = Finder::new(first);
    let mut from = 0;
    // Overlapping occurrences: `aa b` is in `aaa b` only at the second `a`.
    while let Some(at) = f.find(&lower[from..]) {
        let start = from + at;
        if follows(lower, start + first.len(), rest) {
            return true;
        }
        from = start + 1;
    }
    false
}

/// Whether `rest` follows from `i` on, each word after whitespace (see
/// [`run_in`]).
fn follows(lower: &[u8], mut i: usize, rest: &[Vec<u8>]) -> bool {
    for w in rest {
        let gap_start = i;
        loop {
            match lower.get(i) {
                Some(b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') => i += 1,
                Some(b'\\') if matches!(lower.get(i + 1), Some(b'n' | b't' | b'r' | b'f')) => {
                    i += 2
                }
                Some(&c) if c >= 0x80 => i += 1,
                _ => break,
            }
        }
        match lower.get(i) {
            None | Some(b'"' | b',' | b':' | b'}' | b']') => return true,
            _ => {}
        }
        if i == gap_start || !lower[i..].starts_with(w) {
            return false;
        }
        i += w.len();
    }
    true
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_long_line_is_checked_a_block_at_a_time_across_its_borders() {
        let q = crate::query::Query::parse_at("needle", 0);
        let needs = LineNeeds::of(&q.terms[0]);
        let mut scratch = Vec::new();
        for at in [
            0,
            LOWER_BLOCK - 3,
            LOWER_BLOCK - 6,
            2 * LOWER_BLOCK + 1,
            3 * LOWER_BLOCK - 1,
        ] {
            let mut line = vec![b'x'; 3 * LOWER_BLOCK + 10];
            line[at..at + 6].copy_from_slice(b"NeEdLe");
            assert!(needs.held_by_line(&line, &mut scratch), "{at}");
            assert!(scratch.len() <= LOWER_BLOCK + 6, "{}", scratch.len());
        }
        let line = vec![b'n'; 3 * LOWER_BLOCK];
        assert!(!needs.held_by_line(&line, &mut scratch));
    }
    use super::*;
    use crate::Query;

    fn held(query: &str, line: &str) -> bool {
        let q = Query::parse(query);
        let lower = line.to_ascii_lowercase();
        q.terms
            .iter()
            .all(|t| LineNeeds::of(t).held_by(lower.as_bytes()))
    }

    #[test]
    fn phrase_words_must_be_adjacent() {
        assert!(held(
            r#""scroll render""#,
            r#"{"text":"a Scroll   render b"}"#
        ));
        assert!(held(
            r#""scroll render""#,
            r#"{"text":"a scroll\n\trender"}"#
        ));
        assert!(held(
            r#""scroll render""#,
            "{\"text\":\"scroll\u{3000}render\"}"
        ));
        assert!(!held(
            r#""scroll render""#,
            r#"{"text":"scroll the render"}"#
        ));
        assert!(!held(r#""scroll render""#, r#"{"text":"scrollrender"}"#));
        // An escaped quote between them is a character, not a gap.
        assert!(!held(
            r#""scroll render""#,
            r#"{"text":"scroll \" render"}"#
        ));
        // An escaped backslash and an `n` are not a newline.
        assert!(!held(r#""scroll render""#, r#"{"text":"scroll\\nrender"}"#));
        // Overlapping occurrences of the first word.
        assert!(held(r#""aa b""#, r#"{"text":"aaa b"}"#));
        // Substrings: the first word may end a term, the last begin one.
        assert!(held(r#""roll rend""#, r#"{"text":"scroll renderer"}"#));
        // Three words: each pair adjacent.
        assert!(held(r#""a big render""#, r#"{"text":"a big render"}"#));
        assert!(!held(r#""a big render""#, r#"{"text":"a big x render"}"#));
    }

    #[test]
    fn a_run_that_leaves_its_string_may_match() {
        // Text blocks and arguments are joined by spaces.
        assert!(held(
            r#""scroll render""#,
            r#"{"content":[{"type":"text","text":"scroll"},{"type":"text","text":"render"}]}"#
        ));
        assert!(held(
            r#""10 render""#,
            r#"{"arguments":{"n":10,"m":"render"}}"#
        ));
        assert!(held(
            r#""scroll render""#,
            r#"{"a":"render","text":"scroll "#
        ));
    }

    #[test]
    fn regexes_that_span_words_need_their_words_adjacent() {
        assert!(held(r"re:cache\s+leaf", r#"{"text":"the cache  leaf"}"#));
        assert!(!held(r"re:cache\s+leaf", r#"{"text":"cache of a leaf"}"#));
        assert!(held(r"re:(?:a|b)\sc", r#"{"text":"b c"}"#));
        assert!(!held(r"re:(?:a|b)\sc", r#"{"text":"a b"}"#));
        // No literal: nothing to check.
        assert!(LineNeeds::of(&Query::parse(r"re:\w+\s\d").terms[0]).is_empty());
    }
}
