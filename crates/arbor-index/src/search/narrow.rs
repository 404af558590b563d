//! Narrowing a phrase or regex to the sessions that can match it, by the
//! words and word pairs it needs, before any text is read.

use memchr::memmem;
use rusqlite::Connection;

use crate::refresh::pair_segment;
use crate::terms::{pair_side_word, Match};
use crate::Error;
use arbor_search::literals::{parse_case_insensitive, regex_literals};
use arbor_search::Term;

use super::cache::SearchCache;
use super::idset::IdSet;

/// Literals one of which every match of `r` starts with (lowercased, as
/// the stored text is), when there is such a finite set of non-empty,
/// space-free literals. A necessary condition used to skip sessions.
pub(super) fn regex_prefixes(r: &regex::Regex) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let hir = parse_case_insensitive(r.as_str())?;
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let lits = seq.literals()?;
    let mut out: Vec<String> = Vec::new();
    for l in lits {
        let s = std::str::from_utf8(l.as_bytes()).ok()?;
        if s.is_empty() || s.chars().any(char::is_whitespace) {
            return None;
        }
        let s = s.to_lowercase();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then_some(out)
}

/// `pattern`, case-insensitive, compiled for the stored text, which is
/// lowercased: no `A`–`Z` can occur in it, so removing them from every
/// class of the case-folded pattern changes no match, and turns `[Ff]` back
/// into the literal `f` that the regex engine can search for at memchr
/// speed (a case-insensitive `fn\s+m` ran at ~0.85 GB/s here, this at ~8).
pub(super) fn regex_for_lowercased(pattern: &str) -> Option<regex::bytes::Regex> {
    use regex_syntax::hir::{Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange};
    use regex_syntax::hir::{Hir, HirKind};
    fn strip(h: Hir) -> Hir {
        match h.into_kind() {
            HirKind::Class(Class::Unicode(mut c)) => {
                c.difference(&ClassUnicode::new([ClassUnicodeRange::new('A', 'Z')]));
                Hir::class(Class::Unicode(c))
            }
            HirKind::Class(Class::Bytes(mut c)) => {
                c.difference(&ClassBytes::new([ClassBytesRange::new(b'A', b'Z')]));
                Hir::class(Class::Bytes(c))
            }
            HirKind::Repetition(mut r) => {
                r.sub = Box::new(strip(*r.sub));
                Hir::repetition(r)
            }
            HirKind::Capture(mut c) => {
                c.sub = Box::new(strip(*c.sub));
                Hir::capture(c)
            }
            HirKind::Concat(v) => Hir::concat(v.into_iter().map(strip).collect()),
            HirKind::Alternation(v) => Hir::alternation(v.into_iter().map(strip).collect()),
            HirKind::Literal(l) => Hir::literal(l.0),
            HirKind::Look(l) => Hir::look(l),
            HirKind::Empty => Hir::empty(),
        }
    }
    let hir = parse_case_insensitive(pattern)?;
    regex::bytes::RegexBuilder::new(&strip(hir).to_string())
        .size_limit(1 << 22)
        .build()
        .ok()
}

/// Whether no match of `pattern` (run on normalized text, where the only
/// whitespace is a single space between terms) can contain a space or
/// depend on the text's start or end: then every match lies inside one
/// term, and the sessions having a term the regex matches are exactly the
/// sessions whose text it matches — the dictionary answers, no text is read.
pub(super) fn within_a_term(pattern: &str) -> bool {
    use regex_syntax::hir::{Class, HirKind, Look};
    fn ok(h: &regex_syntax::hir::Hir) -> bool {
        match h.kind() {
            HirKind::Empty => true,
            HirKind::Literal(l) => !l.0.contains(&b' '),
            HirKind::Class(Class::Unicode(c)) => !c
                .ranges()
                .iter()
                .any(|r| r.start() <= ' ' && ' ' <= r.end()),
            HirKind::Class(Class::Bytes(c)) => !c
                .ranges()
                .iter()
                .any(|r| r.start() <= b' ' && b' ' <= r.end()),
            HirKind::Look(l) => !matches!(
                l,
                Look::Start
                    | Look::End
                    | Look::StartLF
                    | Look::EndLF
                    | Look::StartCRLF
                    | Look::EndCRLF
            ),
            HirKind::Repetition(r) => ok(&r.sub),
            HirKind::Capture(c) => ok(&c.sub),
            HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().all(ok),
        }
    }
    parse_case_insensitive(pattern).is_some_and(|h| ok(&h))
}

/// What the dictionaries say about a phrase or a regex in one kind of text.
pub(super) struct Narrow {
    /// Sessions whose text surely matches (nothing to read).
    pub(super) sure: IdSet,
    /// Sessions whose text may match: to be read.
    pub(super) maybe: IdSet,
}

/// The sessions whose text of `kind` ([`TEXT_SEGMENT`] or a part's code)
/// may match a phrase or a regex, from the words' and the word pairs'
/// dictionaries; `None` when they cannot narrow it (a one- or two-character
/// phrase, a regex without literals): every session is to be read.
pub(super) fn narrow(
    conn: &Connection,
    cache: &mut SearchCache,
    t: &Term,
    kind: i64,
) -> Result<Option<Narrow>, Error> {
    match t {
        Term::Phrase(p) if p.contains(' ') => phrase_pairs(conn, cache, p, kind).map(Some),
        // One word: the terms holding it, exactly (for one or two
        // characters that is nearly every posting list of the part, still
        // far less than reading every session file).
        Term::Phrase(p) if !p.is_empty() => {
            let ids = (*cache.lookup(conn, p, Match::Contains, kind)?).clone();
            Ok(Some(Narrow {
                sure: ids,
                maybe: IdSet::default(),
            }))
        }
        Term::Phrase(_) | Term::Word { .. } => Ok(None),
        Term::Regex(r) => {
            let Some(lits) = regex_literals(r.as_str()) else {
                return Ok(None);
            };
            let mut out = Narrow {
                sure: IdSet::default(),
                maybe: IdSet::default(),
            };
            for l in &lits.literals {
                let n = if l.contains(' ') {
                    phrase_pairs(conn, cache, l, kind)?
                } else {
                    Narrow {
                        sure: (*cache.lookup(conn, l, Match::Contains, kind)?).clone(),
                        maybe: IdSet::default(),
                    }
                };
                if lits.exact {
                    out.sure.extend(n.sure.iter());
                } else {
                    out.maybe.extend(n.sure.iter());
                }
                out.maybe.extend(n.maybe.iter());
            }
            Ok(Some(out))
        }
    }
}

/// The sessions whose text of `kind` has the words of `phrase` (normalized,
/// with a space) adjacent, from the pairs' dictionaries: a pair whose first
/// side ends in the first word and whose second side is the second word (or,
/// for two words, starts with it), the middle words' pairs exactly, and a
/// last pair whose second side starts with the last word. Pairs keep only
/// the sides of their terms without digits or `/` (see
/// `terms::pair_left`): they answer for words that are such sides
/// ([`pair_side_word`]), and the pairs of the other words are looked up as
/// the two words' sessions instead (few: such words are rare). With two
/// side words the sessions found are exactly those whose text holds the
/// phrase (`sure`); otherwise they are candidates (`maybe`).
fn phrase_pairs(
    conn: &Connection,
    cache: &mut SearchCache,
    phrase: &str,
    kind: i64,
) -> Result<Narrow, Error> {
    let words: Vec<&str> = phrase.split(' ').filter(|w| !w.is_empty()).collect();
    let pairs = pair_segment(kind);
    let n = words.len();
    let mut out = Narrow {
        sure: IdSet::default(),
        maybe: IdSet::default(),
    };
    if n < 2 {
        if let Some(w) = words.first() {
            match word_beside_space(phrase, w) {
                // A word ending before a space (`re:fn\s`), or starting
                // after one: a pair, whole or half, whose first side ends in
                // it (`w `), or whose second side starts with it (` w`).
                // The sides keep such a word whole, so that is exact;
                // reading every session holding the word was seconds for a
                // regex half typed in the picker.
                Some((before, after)) => {
                    let mut ids: Option<IdSet> = None;
                    for (on, key) in [(before, format!(" {w}")), (after, format!("{w} "))] {
                        if !on {
                            continue;
                        }
                        let found = cache.lookup(conn, &key, Match::Contains, pairs)?;
                        match ids.as_mut() {
                            None => ids = Some((*found).clone()),
                            Some(ids) => ids.intersect(&found),
                        }
                    }
                    let ids = ids.unwrap_or_default();
                    // With a space on both sides, the two may be different
                    // occurrences: candidates.
                    match before && after {
                        true => out.maybe = ids,
                        false => out.sure = ids,
                    }
                }
                None => out.maybe = (*cache.lookup(conn, w, Match::Contains, kind)?).clone(),
            }
        }
        return Ok(out);
    }
    let mut c: Option<IdSet> = None;
    for k in 0..n - 1 {
        let (a, b) = (words[k], words[k + 1]);
        let left = if k == 0 {
            Match::EndsWith
        } else {
            Match::Exact
        };
        let right = if k == n - 2 {
            Match::StartsWith
        } else {
            Match::Exact
        };
        let ids = if pair_side_word(a.as_bytes()) && pair_side_word(b.as_bytes()) {
            let how = match (left, right) {
                (Match::EndsWith, Match::StartsWith) => Match::Contains,
                (Match::EndsWith, _) => Match::EndsWith,
                (_, Match::StartsWith) => Match::StartsWith,
                _ => Match::Exact,
            };
            (*cache.lookup(conn, &format!("{a} {b}"), how, pairs)?).clone()
        } else {
            let mut both = (*cache.lookup(conn, a, left, kind)?).clone();
            if !both.is_empty() {
                let other = cache.lookup(conn, b, right, kind)?;
                both.intersect(&other);
            }
            both
        };
        match c.as_mut() {
            None => c = Some(ids),
            Some(c) => c.intersect(&ids),
        }
        if c.as_ref().is_some_and(IdSet::is_empty) {
            break;
        }
    }
    let found = c.unwrap_or_default();
    let exact =
        n == 2 && words.join(" ") == phrase && words.iter().all(|w| pair_side_word(w.as_bytes()));
    match exact {
        true => out.sure = found,
        false => out.maybe = found,
    }
    Ok(out)
}

/// For a phrase that is one word with a space before it, after it or
/// both (`" w"`, `"w "`, `" w "`), and a word the pairs keep whole
/// ([`pair_side_word`]): whether the space is before and whether after.
fn word_beside_space(phrase: &str, w: &str) -> Option<(bool, bool)> {
    let before = phrase.starts_with(' ');
    let after = phrase.ends_with(' ');
    let shape = phrase.len() == w.len() + usize::from(before) + usize::from(after);
    (shape && (before || after) && pair_side_word(w.as_bytes())).then_some((before, after))
}

pub(super) enum Check<'q> {
    Phrase(Box<memmem::Finder<'q>>),
    /// The term's regex, compiled to run on bytes: stored text is UTF-8
    /// already, and checking that again would read every byte once more.
    Regex(regex::bytes::Regex),
    /// The term's own regex, should the bytes one not compile (it does
    /// whenever the term's did).
    TextRegex(&'q regex::Regex),
}

impl<'q> Check<'q> {
    /// The check of a phrase or a regex (`None` for a word).
    pub(super) fn of(t: &'q Term) -> Option<Check<'q>> {
        Some(match t {
            Term::Phrase(p) => Check::Phrase(Box::new(memmem::Finder::new(p.as_bytes()))),
            Term::Regex(r) => match regex_for_lowercased(r.as_str()) {
                Some(bytes) => Check::Regex(bytes),
                None => Check::TextRegex(r),
            },
            Term::Word { .. } => return None,
        })
    }

    pub(super) fn matches(&self, text: &[u8]) -> bool {
        match self {
            Check::Phrase(f) => f.find(text).is_some(),
            Check::Regex(r) => r.is_match(text),
            Check::TextRegex(r) => std::str::from_utf8(text).is_ok_and(|t| r.is_match(t)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regexes_within_a_term() {
        for p in [
            r"fail\w+",
            r"err\d{3}",
            r"src/\S+\.rs",
            r"\bfoo\b",
            r"[a-z]+ing",
        ] {
            assert!(within_a_term(p), "{p}");
        }
        for p in [
            r"fn\s+main",
            r"a.b",
            r"x[^a-z]y",
            r"^fail",
            r"fail$",
            "a b",
            r"(?s)a.b",
        ] {
            assert!(!within_a_term(p), "{p}");
        }
    }

    /// On lowercased text, the stripped pattern finds exactly what the
    /// case-insensitive one finds, where it finds it.
    #[test]
    fn lowercased_regex_is_the_case_insensitive_one() {
        let texts = [
            "fn main() { println!(\"hello\") } fn  m",
            "Straße ÉCOLE école İstanbul ǅ σς Σ ΣΑΣ 日本語 x_y-z 42 a1b2",
            "token refresh failed: Err(Timeout) at src/Lib.rs:10",
            "",
            "ABC abc AbC \t tab\nnewline",
        ];
        let patterns = [
            r"fn\s+m",
            r"FN\s+M",
            r"[A-Z]+",
            r"[^a-z ]+",
            r"\S+",
            r"\W",
            r"\w+\d",
            r"(?-i:X)",
            r"(?-i:x)y",
            r"\p{Lu}",
            r"\bERR\b",
            r"^fn",
            r"m$",
            r"(?m)^abc",
            r"é|É",
            r"straSSe|ß",
            r"[[:upper:]]",
            r"\p{Greek}+",
            r"σ",
            r"(a|B)+c",
            r".",
            r"a{2,}",
            r"(?s).+",
            r"[^\s]+",
        ];
        for p in patterns {
            let ci = regex::bytes::RegexBuilder::new(p)
                .case_insensitive(true)
                .build()
                .unwrap();
            let ours = regex_for_lowercased(p).unwrap();
            for t in texts {
                let t = t.to_lowercase();
                let spans = |r: &regex::bytes::Regex| {
                    r.find_iter(t.as_bytes())
                        .map(|m| m.range())
                        .collect::<Vec<_>>()
                };
                assert_eq!(spans(&ours), spans(&ci), "{p} on {t:?}");
            }
        }
    }

    fn prefixes(p: &str) -> Option<Vec<String>> {
        let r = regex::RegexBuilder::new(p)
            .case_insensitive(true)
            .build()
            .unwrap();
        regex_prefixes(&r).map(|mut v| {
            v.sort();
            v
        })
    }

    #[test]
    fn literal_prefixes() {
        assert_eq!(prefixes("Fail\\w+"), Some(vec!["fail".into()]));
        assert_eq!(
            prefixes("(abc|xyz)d"),
            Some(vec!["abcd".into(), "xyzd".into()])
        );
        assert_eq!(prefixes("\\w+fail"), None);
        assert_eq!(prefixes("a b"), None);
        assert_eq!(prefixes("x?y"), Some(vec!["xy".into(), "y".into()]));
        // 's' also matches the long s 'ſ' case-insensitively: both kept.
        let s = prefixes("sun").unwrap();
        assert!(s.contains(&"sun".to_string()) && s.contains(&"ſun".to_string()));
    }
}
