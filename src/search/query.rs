use memchr::memmem;
use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use regex::Regex;

use super::doc::{normalize, SearchDoc};
use crate::session::info::SessionInfo;

/// One search term.
#[derive(Debug, Clone)]
pub enum Term {
    /// Fuzzy on short fields, or substring of the bodies.
    Word {
        atom: Atom,
        lower: String,
    },
    /// Case-insensitive substring, whitespace collapsed.
    Phrase(String),
    Regex(Regex),
}

#[derive(Debug, Clone, Default)]
pub struct Query {
    pub raw: String,
    pub terms: Vec<Term>,
    error: Option<String>,
}

/// Score bonus of a field match over a body match, so names and first
/// messages outrank a word buried in a transcript.
const BODY_SCORE: u32 = 20;
const PHRASE_SCORE: u32 = 60;
const REGEX_SCORE: u32 = 40;

impl Query {
    pub fn parse(raw: &str) -> Query {
        let mut terms = Vec::new();
        let mut error = None;
        let mut rest = raw.trim();
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('"') {
                let (phrase, tail) = match after.find('"') {
                    Some(end) => (&after[..end], &after[end + 1..]),
                    None => (after, ""),
                };
                let mut norm = String::new();
                normalize(phrase, &mut norm);
                let norm = norm.trim().to_string();
                if !norm.is_empty() {
                    terms.push(Term::Phrase(norm));
                }
                rest = tail.trim_start();
                continue;
            }
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let word = &rest[..end];
            rest = rest[end..].trim_start();
            if let Some(pat) = word.strip_prefix("re:") {
                if pat.is_empty() {
                    continue;
                }
                match regex::RegexBuilder::new(pat)
                    .case_insensitive(true)
                    .size_limit(1 << 22)
                    .build()
                {
                    Ok(r) => terms.push(Term::Regex(r)),
                    Err(e) => {
                        error = Some(first_line(&e.to_string()));
                    }
                }
                continue;
            }
            terms.push(Term::Word {
                atom: Atom::new(
                    word,
                    CaseMatching::Ignore,
                    Normalization::Smart,
                    AtomKind::Fuzzy,
                    false,
                ),
                lower: word.to_lowercase(),
            });
        }
        Query {
            raw: raw.to_string(),
            terms,
            error,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.error.is_none()
    }

    /// Why the query matches nothing (an invalid regex).
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The relevance of a document, or `None` when a term does not match.
    pub fn score(
        &self,
        doc: &SearchDoc,
        matcher: &mut Matcher,
        buf: &mut Vec<char>,
    ) -> Option<u32> {
        let idx = &mut Vec::new();
        if self.error.is_some() {
            return None;
        }
        let mut total = 0u32;
        for t in &self.terms {
            let s = match t {
                Term::Word { atom, lower } => {
                    let n = lower.chars().count();
                    let field = doc
                        .fields
                        .iter()
                        .filter_map(|f| compact_fuzzy(atom, f, n, matcher, buf, idx))
                        .max()
                        .map(|s| s as u32 + BODY_SCORE);
                    field.or_else(|| {
                        memmem::find(doc.text.as_bytes(), lower.as_bytes()).map(|_| BODY_SCORE)
                    })
                }
                Term::Phrase(p) => {
                    memmem::find(doc.text.as_bytes(), p.as_bytes()).map(|_| PHRASE_SCORE)
                }
                Term::Regex(r) => r.is_match(&doc.text).then_some(REGEX_SCORE),
            }?;
            total = total.saturating_add(s);
        }
        Some(total)
    }

    /// Character positions in `text` to highlight.
    pub fn highlight(&self, text: &str, matcher: &mut Matcher) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        let mut buf = Vec::new();
        let lower_chars: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
        let same_len = lower_chars.len() == text.chars().count();
        for t in &self.terms {
            match t {
                Term::Word { atom, .. } => {
                    let mut idx = Vec::new();
                    if atom
                        .indices(Utf32Str::new(text, &mut buf), matcher, &mut idx)
                        .is_some()
                    {
                        out.extend(idx.into_iter().map(|i| i as usize));
                    }
                }
                Term::Phrase(p) if same_len => {
                    let needle: Vec<char> = p.chars().collect();
                    if let Some(pos) = find_chars(&lower_chars, &needle) {
                        out.extend(pos..pos + needle.len());
                    }
                }
                Term::Regex(r) => {
                    if let Some(m) = r.find(text) {
                        let start = text[..m.start()].chars().count();
                        let len = text[m.start()..m.end()].chars().count();
                        out.extend(start..start + len);
                    }
                }
                _ => {}
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// A fuzzy match of an `n`-character word that stays compact: a subsequence
/// scattered over a long first message is noise, so the matched characters
/// must lie within about twice the word's length (typos and a skipped
/// letter or two still match).
fn compact_fuzzy(
    atom: &Atom,
    field: &str,
    n: usize,
    matcher: &mut Matcher,
    buf: &mut Vec<char>,
    idx: &mut Vec<u32>,
) -> Option<u16> {
    idx.clear();
    let score = atom.indices(Utf32Str::new(field, buf), matcher, idx)?;
    let (first, last) = (*idx.iter().min()?, *idx.iter().max()?);
    let span = (last - first + 1) as usize;
    (span <= (2 * n).max(n + 2)).then_some(score)
}

fn find_chars(hay: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

fn first_line(s: &str) -> String {
    s.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
        .to_string()
}

pub fn new_matcher() -> Matcher {
    Matcher::new(Config::DEFAULT)
}

/// Keeps the rows that match, best first, ties newest first.
pub fn rank(query: &Query, rows: Vec<SessionInfo>) -> Vec<SessionInfo> {
    if query.terms.is_empty() && query.error().is_none() {
        return rows;
    }
    let mut matcher = new_matcher();
    let mut buf = Vec::new();
    let mut scored: Vec<(u32, SessionInfo)> = rows
        .into_iter()
        .filter_map(|r| {
            let doc = SearchDoc::from_info(&r);
            query.score(&doc, &mut matcher, &mut buf).map(|s| (s, r))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.modified_ms.cmp(&a.1.modified_ms)));
    scored.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, body: &str) -> SearchDoc {
        let info = SessionInfo {
            id: "0199aaaa-bbbb".into(),
            name: Some(name.into()),
            has_name: true,
            cwd: "/home/dev/app".into(),
            all_text: body.into(),
            ..Default::default()
        };
        SearchDoc::from_info(&info)
    }

    fn matches(q: &str, d: &SearchDoc) -> bool {
        Query::parse(q)
            .score(d, &mut new_matcher(), &mut Vec::new())
            .is_some()
    }

    #[test]
    fn words_are_anded_and_fuzzy_on_fields() {
        let d = doc("Fix flaky auth test", "we changed the token refresh");
        assert!(matches("flky auth", &d));
        assert!(matches("token", &d));
        assert!(!matches("auth zebra", &d));
    }

    #[test]
    fn scattered_subsequences_do_not_match_long_fields() {
        let d = doc("x", "");
        let long = SearchDoc {
            fields: vec!["a quick utility that handles everything".into()],
            text: String::new(),
        };
        assert!(!matches("auth", &long));
        assert!(matches("quik", &long));
        assert!(!matches("zzz", &d));
    }

    #[test]
    fn body_words_are_substrings_not_subsequences() {
        let d = doc("x", "alpha beta gamma delta");
        assert!(matches("gamma", &d));
        assert!(!matches("agmd", &d));
    }

    #[test]
    fn phrases_collapse_whitespace_and_ignore_case() {
        let d = doc("x", "Refresh   the\nTOKEN now");
        assert!(matches("\"refresh the token\"", &d));
        assert!(!matches("\"token refresh\"", &d));
    }

    #[test]
    fn regex_and_invalid_regex() {
        let d = doc("x", "error code 404 returned");
        assert!(matches("re:code\\s+4\\d\\d", &d));
        let q = Query::parse("re:([");
        assert!(q.error().is_some());
        assert!(q.score(&d, &mut new_matcher(), &mut Vec::new()).is_none());
    }
}
