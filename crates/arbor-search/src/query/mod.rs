//! The query language (docs/spec.md §5): parsing a typed query into terms (words,
//! phrases, regexes) and filters (`dir:`, `after:`, …), matching one row,
//! and ranking rows.
//!
//! - `parse`: the typed text into terms, filters and scopes;
//! - `term`: one term, what it matches and how much it scores;
//! - `filter`: the `key:value` conditions on a row;
//! - `fuzzy`: a word's compact fuzzy match in a short field;
//! - `rank`: the rows a query keeps, best first;
//! - `relevance`: Atomic's order of the sessions matched.

mod filter;
mod fuzzy;
mod parse;
mod rank;
mod relevance;
mod term;

pub use filter::Filter;
pub use fuzzy::{compact_limit, new_matcher, Fuzzy, Span};
pub use rank::{rank, rank_order, rank_order_visiting, rank_with_index};
pub use relevance::{atomic_score, relevance};
pub use term::{tier_score, word_key, Term, Tiers};

use nucleo_matcher::{Matcher, Utf32Str};

use super::doc::{RowFacts, SearchDoc};
use arbor_session::searchable::Parts;

/// The filter keys, as F1 and the errors list them.
pub const FILTER_KEYS: &str =
    "dir: after: before: model: label: is:named is:fork agent: host: in: re:";

/// The `in:` scopes, as F1 and the errors list them.
pub const SCOPE_NAMES: &str = "user assistant tools thinking other";

#[derive(Debug, Clone, Default)]
pub struct Query {
    pub raw: String,
    pub terms: Vec<Term>,
    /// Every filter must accept a row for it to match.
    pub filters: Vec<Filter>,
    /// The parts of the sessions the terms look at (`in:` scopes; all by
    /// default). The short fields are always looked at.
    pub parts: Parts,
    error: Option<String>,
    /// Where each filter (`dir:…`, not `in:`) is in `raw`, in bytes.
    filter_spans: Vec<std::ops::Range<usize>>,
}

/// A query is what was typed: its terms and filters are parsed from it.
impl PartialEq for Query {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}

/// At most this many terms are used (the index reports body matches as a
/// bit per term in a `u32`).
pub const MAX_TERMS: usize = 32;

/// Words shorter than this (in characters) are not looked up in message
/// bodies: as a substring they match nearly every transcript, so they would
/// filter nothing and cost a pass over the whole store. They still match the
/// short fields (fuzzily, or as a substring). A Chinese, Japanese or
/// Korean word is looked up whatever its length (see `term::is_cjk`).
pub const MIN_BODY_WORD: usize = 3;

impl Query {
    /// The query as typed less its filters (`dir:`, `after:`, …: they
    /// choose sessions): the terms and `in:` scopes, which say what to look
    /// for inside one (the tree opened at a hit searches for this).
    pub fn without_filters(&self) -> String {
        let mut out = String::new();
        let mut at = 0;
        for r in &self.filter_spans {
            out.push_str(&self.raw[at..r.start]);
            at = r.end;
        }
        out.push_str(&self.raw[at..]);
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.filters.is_empty() && self.error.is_none()
    }

    /// The same query over these parts of the sessions instead.
    pub fn with_parts(&self, parts: Parts) -> Query {
        Query {
            parts,
            ..self.clone()
        }
    }

    /// Something to search for: a term or a filter.
    pub fn has_conditions(&self) -> bool {
        !self.terms.is_empty() || !self.filters.is_empty()
    }

    /// Every filter accepts the row.
    pub fn accepts(&self, facts: &RowFacts) -> bool {
        self.filters.iter().all(|f| f.accepts(facts))
    }

    /// Why the query matches nothing (an invalid regex, an unknown filter
    /// key or a bad filter value), a whole sentence.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The relevance of a document, or `None` when a term does not match.
    pub fn score(&self, doc: &SearchDoc, fz: &mut Fuzzy) -> Option<u32> {
        self.score_with(doc, fz, None)
    }

    /// Like [`Query::score`]; `body_bits` (from the index, or from
    /// reading the parts the row's own text lacks: per rank, bit `i` set
    /// when term `i` matched a part of that rank) add to searching `doc`'s
    /// own body text.
    pub fn score_with(
        &self,
        doc: &SearchDoc,
        fz: &mut Fuzzy,
        body_bits: Option<Tiers>,
    ) -> Option<u32> {
        if self.error.is_some() || !self.accepts(&doc.facts) {
            return None;
        }
        let mut total = 0u32;
        for (i, t) in self.terms.iter().enumerate() {
            let s = t
                .local_score(doc, self.parts, fz)
                .or_else(|| body_bits.and_then(|b| tier_score(t, i, &b)))?;
            total = total.saturating_add(s);
        }
        Some(total)
    }

    /// What a session `doc` that the query matched with arbor's `score`
    /// ([`Query::score_with`], [`crate::Scorer::score`]) is listed by,
    /// highest first: Atomic's relevance order (see [`relevance`]).
    pub fn rank_score(&self, doc: &SearchDoc, score: u32) -> u32 {
        relevance(atomic_score(self, doc), score)
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

fn find_chars(hay: &[char], needle: &[char]) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len()).find(|&i| hay[i..i + needle.len()] == *needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_session::info::SessionInfo;

    pub(super) fn doc(name: &str, body: &str) -> SearchDoc {
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
        Query::parse(q).score(d, &mut Fuzzy::new()).is_some()
    }

    /// A query without words scores the short document of a row exactly
    /// as its whole one, body hits or not, filters or not; and the short
    /// one leaves out what words are fuzzy matched in.
    #[test]
    fn queries_without_words_score_short_documents_alike() {
        use crate::doc::{RowFacts, RowText};
        let texts = [
            (
                "0199aaaa-1111",
                Some("Token Refresh  fix"),
                None,
                "/home/dev/Token refresh",
                "the first prompt: token refresh",
            ),
            (
                "0199bbbb-2222",
                None,
                Some("fixed the parser"),
                "/srv/app",
                "parse symlink please",
            ),
            (
                "0199cccc-3333",
                Some("日本語 トークン"),
                Some("Ünïcödé  PARSE"),
                "/Users/bob/数据",
                "nothing",
            ),
            ("0199dddd-4444", None, None, "/tmp", "token"),
        ];
        let queries = [
            "\"token refresh\"",
            "\"parse\"",
            "re:tok\\w+",
            "re:^/home",
            "\"unïcödé parse\"",
            "\"0199bbbb\" dir:/srv",
            "re:. is:named",
            "after:2d",
            "\"token\" in:tools",
        ];
        // Of the scores compared: none, some.
        let mut seen = [0, 0];
        for (id, name, summary, cwd, first) in texts {
            let t = RowText {
                name,
                summary,
                first_message: first,
                cwd,
                id,
            };
            let facts = || RowFacts::new(t, 0, std::iter::empty(), false, Default::default(), &[]);
            let whole = SearchDoc::of_row(t, "", facts());
            let short = SearchDoc::of_row_short(t, facts());
            assert_eq!(short.fields().count(), 0);
            assert_eq!(short.fields_text(), whole.fields_text());
            for q in queries {
                let query = Query::parse(q);
                assert!(query.terms.iter().all(|t| t.word().is_none()), "{q}");
                for bits in [None, Some([0, 0, 0]), Some([1, 0, 0]), Some([0, 0, 3])] {
                    let score = query.score_with(&whole, &mut Fuzzy::new(), bits);
                    assert_eq!(
                        query.score_with(&short, &mut Fuzzy::new(), bits),
                        score,
                        "{q} on {id} with {bits:?}"
                    );
                    seen[usize::from(score.is_some())] += 1;
                }
            }
        }
        assert!(seen[0] > 20 && seen[1] > 20, "{seen:?}");
    }

    #[test]
    fn without_filters_keeps_the_terms_and_scopes() {
        let q = Query::parse(
            r#"fix dir:"my project" "token  refresh" after:2d re:a+b in:tools is:named"#,
        );
        assert_eq!(
            q.without_filters(),
            r#"fix "token refresh" re:a+b in:tools"#
        );
        assert_eq!(Query::parse("dir:\"open").without_filters(), "");
        assert_eq!(Query::parse("  parser  ").without_filters(), "parser");
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
        let long = SearchDoc::new(
            ["a quick utility that handles everything"],
            [],
            "",
            RowFacts::default(),
        );
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
    fn short_words_only_match_fields() {
        let d = doc("x", "an ox in the body");
        assert!(!matches("ox", &d));
        assert!(matches("\"ox\"", &d));
        assert!(matches("ox ", &doc("ox", "")));
        // A word of one or two CJK characters is a whole word: it looks at
        // the bodies, and the two characters apart do not match.
        let d = doc("x", "我已经修复了解析器 and バグ");
        assert!(matches("修复", &d));
        assert!(matches("修", &d));
        assert!(matches("バグ", &d));
        assert!(!matches("修析", &doc("x", "修 复 解析")));
    }

    #[test]
    fn no_match_spans_two_parts() {
        let d = doc("alpha", "beta gamma");
        assert!(!matches("\"alpha beta\"", &d));
        assert!(!matches("re:alpha.beta", &d));
        assert!(matches("re:^beta", &d));
        assert!(matches("re:^alpha$", &d));
    }

    #[test]
    fn body_bits_replace_the_body_text() {
        let info = SessionInfo {
            id: "0199aaaa-bbbb".into(),
            cwd: "/home/dev/app".into(),
            ..Default::default()
        };
        let d = SearchDoc::from_info(&info);
        let q = Query::parse("zebra \"two words\"");
        let mut m = Fuzzy::new();
        assert!(q.score_with(&d, &mut m, Some([0b11, 0, 0])).is_some());
        assert!(q.score_with(&d, &mut m, Some([0b01, 0, 0])).is_none());
        assert!(q.score_with(&d, &mut m, None).is_none());
    }

    #[test]
    fn regex_and_invalid_regex() {
        let d = doc("x", "error code 404 returned");
        assert!(matches("re:code\\s+4\\d\\d", &d));
        let q = Query::parse("re:([");
        assert!(q.error().is_some());
        assert!(q.score(&d, &mut Fuzzy::new()).is_none());
    }
}
