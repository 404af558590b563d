//! Parsing a typed query into its terms, filters and `in:` scopes.

use memchr::memmem;
use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};

use super::filter::{filter_key, parse_filter, unknown_key};
use super::{Filter, Query, Term, FILTER_KEYS, MAX_TERMS, SCOPE_NAMES};
use arbor_session::normalize::{normalize, normalized};
use arbor_session::searchable::{Parts, Scope};

impl Query {
    /// Parses with the system clock for relative dates (`after:2d`); the
    /// picker and tests use [`Query::parse_at`] with their own clock.
    pub fn parse(raw: &str) -> Query {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        Query::parse_at(raw, now)
    }

    /// Parses `raw`; relative dates count back from `now_ms`. Matching
    /// never reads a clock: the filters hold absolute times.
    pub fn parse_at(raw: &str, now_ms: i64) -> Query {
        let mut p = Parser {
            raw,
            now_ms,
            terms: Vec::new(),
            filters: Vec::new(),
            error: None,
            parts: Parts::NONE,
            filter_spans: Vec::new(),
        };
        let mut rest = raw.trim();
        while !rest.is_empty() && p.terms.len() < MAX_TERMS {
            rest = if let Some((key, after_colon)) = filter_key(rest) {
                p.filter(rest, key, after_colon)
            } else if let Some(key) = unknown_key(rest) {
                p.error = Some(format!("unknown filter \"{key}:\" (known: {FILTER_KEYS})"));
                split_word(rest).1
            } else if let Some(after) = rest.strip_prefix('"') {
                p.phrase(after)
            } else {
                let (word, tail) = split_word(rest);
                p.word(word);
                tail
            };
        }
        p.into_query()
    }
}

/// What parsing has gathered so far from the text typed.
struct Parser<'r> {
    raw: &'r str,
    now_ms: i64,
    terms: Vec<Term>,
    filters: Vec<Filter>,
    error: Option<String>,
    parts: Parts,
    filter_spans: Vec<std::ops::Range<usize>>,
}

impl<'r> Parser<'r> {
    /// Where `s` (a part of `raw`) starts in `raw`, in bytes.
    fn offset(&self, s: &str) -> usize {
        s.as_ptr() as usize - self.raw.as_ptr() as usize
    }

    /// The filter `key:` at the start of `rest` (`after_colon` the text
    /// after its colon); returns what follows it.
    fn filter(&mut self, rest: &'r str, key: &str, after_colon: &'r str) -> &'r str {
        let start = self.offset(rest);
        let (value, tail) = filter_value(after_colon);
        if key != "in" {
            let end = self.offset(tail);
            self.filter_spans.push(start..end);
        }
        let rest = tail.trim_start();
        // A key just typed, its value still to come, filters nothing.
        if value.trim().is_empty() {
            return rest;
        }
        if key == "in" {
            self.scopes(value);
            return rest;
        }
        match parse_filter(key, value.trim(), self.now_ms) {
            Ok(f) => self.filters.push(f),
            Err(e) => self.error = Some(e),
        }
        rest
    }

    /// `in:tools,thinking` or several `in:`: their union.
    fn scopes(&mut self, value: &str) {
        for v in value.split(',').filter(|v| !v.trim().is_empty()) {
            match Scope::parse(v.trim()) {
                Some(s) => self.parts = self.parts.union(Parts::of_scope(s)),
                None => {
                    self.error = Some(format!(
                        "in: takes {}, not \"{}\"",
                        SCOPE_NAMES.replace(' ', ", "),
                        v.trim()
                    ))
                }
            }
        }
    }

    /// The phrase after an opening quote (`after`), to the closing one or
    /// the end; returns what follows it.
    fn phrase(&mut self, after: &'r str) -> &'r str {
        let (phrase, tail) = match after.find('"') {
            Some(end) => (&after[..end], &after[end + 1..]),
            None => (after, ""),
        };
        let mut norm = String::new();
        normalize(phrase, &mut norm);
        let norm = norm.trim().to_string();
        if !norm.is_empty() {
            self.terms.push(Term::Phrase(norm));
        }
        tail.trim_start()
    }

    /// A word: `re:pattern` or a plain word.
    fn word(&mut self, word: &str) {
        let Some(pat) = word.strip_prefix("re:") else {
            self.terms.push(word_term(word));
            return;
        };
        if pat.is_empty() {
            return;
        }
        match regex::RegexBuilder::new(pat)
            .case_insensitive(true)
            .size_limit(1 << 22)
            .build()
        {
            Ok(r) => self.terms.push(Term::Regex(r)),
            Err(e) => {
                self.error = Some(format!("invalid regex: {}", first_line(&e.to_string())));
            }
        }
    }

    fn into_query(self) -> Query {
        Query {
            raw: self.raw.to_string(),
            terms: self.terms,
            filters: self.filters,
            parts: if self.parts.is_empty() {
                Parts::ALL
            } else {
                self.parts
            },
            error: self.error,
            filter_spans: self.filter_spans,
        }
    }
}

/// `rest`'s first word and what follows it (leading whitespace trimmed).
fn split_word(rest: &str) -> (&str, &str) {
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    (&rest[..end], rest[end..].trim_start())
}

/// A filter's value (`"a value"` or `value`, from `after_colon`) and the
/// text after it.
fn filter_value(after_colon: &str) -> (&str, &str) {
    match after_colon.strip_prefix('"') {
        Some(q) => match q.find('"') {
            Some(end) => (&q[..end], &q[end + 1..]),
            // The tail stays a part of `raw` (its offset is taken).
            None => (q, &q[q.len()..]),
        },
        None => {
            let end = after_colon
                .find(char::is_whitespace)
                .unwrap_or(after_colon.len());
            (&after_colon[..end], &after_colon[end..])
        }
    }
}

/// A plain word's term: fuzzy on the short fields, a substring elsewhere.
fn word_term(word: &str) -> Term {
    Term::Word {
        atom: Atom::new(
            word,
            CaseMatching::Ignore,
            Normalization::Smart,
            AtomKind::Fuzzy,
            false,
        ),
        finder: Box::new(memmem::Finder::new(normalized(word).as_bytes()).into_owned()),
        lower: normalized(word),
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
        .to_string()
}
