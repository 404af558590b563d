//! The literals a regex's matches start with, over normalized text
//! (lowercase, one space between words): what the index narrows a regex
//! by, and what a raw session line must hold before it is parsed.

/// Literals of a regex run on normalized text, one of which every match
/// starts with (lowercased; a literal may hold spaces, which then separate
/// words of the text), and whether the regex matches a text exactly when
/// the text contains one of them.
pub struct RegexLiterals {
    pub literals: Vec<String>,
    pub exact: bool,
}

/// [`RegexLiterals`] of `pattern` (case-insensitive). Normalized text is
/// lowercase and its only whitespace is one space between terms, so before
/// the literals are taken the pattern is rewritten to what it can match
/// there: `A`–`Z` leave its classes (as the index does to run a regex on lowercased text), a
/// class of whitespace holding the space becomes the space, and a
/// repetition of the space at least once is one space (`fn\s+main` → `fn
/// main`). `None` when some match need not start with a non-empty literal.
pub fn regex_literals(pattern: &str) -> Option<RegexLiterals> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Repetition};
    let space_class = || -> Option<ClassUnicode> {
        let h = regex_syntax::parse(r"\s").ok()?;
        match h.into_kind() {
            HirKind::Class(Class::Unicode(c)) => Some(c),
            _ => None,
        }
    };
    let ws = space_class()?;
    let is_space = |h: &Hir| matches!(h.kind(), HirKind::Literal(l) if &*l.0 == b" ");
    // `looks`: the pattern has an assertion, which the literals ignore.
    fn rewrite(
        h: Hir,
        ws: &ClassUnicode,
        looks: &mut bool,
        is_space: &dyn Fn(&Hir) -> bool,
    ) -> Hir {
        match h.into_kind() {
            HirKind::Class(Class::Unicode(mut c)) => {
                c.difference(&ClassUnicode::new([ClassUnicodeRange::new('A', 'Z')]));
                let mut outside = c.clone();
                outside.difference(ws);
                let has_space = c
                    .ranges()
                    .iter()
                    .any(|r| r.start() <= ' ' && ' ' <= r.end());
                if has_space && outside.ranges().is_empty() {
                    Hir::literal(*b" ")
                } else {
                    Hir::class(Class::Unicode(c))
                }
            }
            HirKind::Class(c) => Hir::class(c),
            HirKind::Repetition(mut r) => {
                let sub = rewrite(*r.sub, ws, looks, is_space);
                if is_space(&sub) && r.min <= 1 {
                    // No two spaces are adjacent in normalized text.
                    if r.min == 1 {
                        return sub;
                    }
                    return Hir::repetition(Repetition {
                        min: 0,
                        max: Some(1),
                        greedy: r.greedy,
                        sub: Box::new(sub),
                    });
                }
                r.sub = Box::new(sub);
                Hir::repetition(r)
            }
            HirKind::Capture(mut c) => {
                c.sub = Box::new(rewrite(*c.sub, ws, looks, is_space));
                Hir::capture(c)
            }
            HirKind::Concat(v) => Hir::concat(
                v.into_iter()
                    .map(|h| rewrite(h, ws, looks, is_space))
                    .collect(),
            ),
            HirKind::Alternation(v) => Hir::alternation(
                v.into_iter()
                    .map(|h| rewrite(h, ws, looks, is_space))
                    .collect(),
            ),
            HirKind::Literal(l) => Hir::literal(l.0),
            HirKind::Look(l) => {
                *looks = true;
                Hir::look(l)
            }
            HirKind::Empty => Hir::empty(),
        }
    }
    let hir = parse_case_insensitive(pattern)?;
    let mut looks = false;
    let hir = rewrite(hir, &ws, &mut looks, &is_space);
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(&hir);
    let lits = seq.literals()?;
    let exact = seq.is_exact() && !looks;
    let mut literals: Vec<String> = Vec::new();
    for l in lits {
        let s = std::str::from_utf8(l.as_bytes()).ok()?;
        // Lowercased text holds only characters that are their own
        // lowercase (a test checks it of every character): a literal that
        // is not its own lowercase (`K`, the Kelvin sign's variant of `k`)
        // is never in it.
        if s.to_lowercase() != s {
            continue;
        }
        if s.trim_matches(' ').is_empty() {
            return None;
        }
        // A space at an end stays: `fn ` is a term ending in `fn` with
        // another after it, which the word pairs answer (and a match never
        // spans two pieces of text, so the space is always between terms).
        if !literals.iter().any(|x| x == s) {
            literals.push(s.to_string());
        }
    }
    (!literals.is_empty()).then_some(RegexLiterals { literals, exact })
}

/// A query's regex as the matcher reads it (`re:` terms are
/// case-insensitive), for the rewrites and literal extractions.
pub fn parse_case_insensitive(pattern: &str) -> Option<regex_syntax::hir::Hir> {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .build()
        .parse(pattern)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::regex_literals;

    fn literals(p: &str) -> Option<(Vec<String>, bool)> {
        regex_literals(p).map(|mut l| {
            l.literals.sort();
            (l.literals, l.exact)
        })
    }

    #[test]
    fn literals_of_regexes_over_normalized_text() {
        let v = |l: &[&str], exact| Some((l.iter().map(|s| s.to_string()).collect(), exact));
        assert_eq!(literals(r"fn\s+main"), v(&["fn main"], true));
        assert_eq!(literals(r"FN\s*Main"), v(&["fn main", "fnmain"], true));
        assert_eq!(literals(r"fn\s+main\w*"), v(&["fn main"], false));
        assert_eq!(literals(r"\bfn main"), v(&["fn main"], false));
        assert_eq!(literals(r"fn\s{2}main"), v(&["fn  main"], true));
        assert_eq!(literals(r"(?:a|b)\sc"), v(&["a c", "b c"], true));
        // A space at an end stays (the pairs answer it).
        assert_eq!(literals(r"fn\s"), v(&["fn "], true));
        assert_eq!(literals(r"\sfn"), v(&[" fn"], true));
        // The Kelvin sign's variant of `k` is never in lowercased text.
        assert_eq!(literals("key"), v(&["key"], true));
        assert_eq!(literals(r"\w+ main"), None);
        assert_eq!(literals(r"\s"), None);
        // `[\s,]` is not only whitespace: a class (too big to expand), not a space.
        assert_eq!(literals(r"a[\s,]b"), v(&["a"], false));
    }

    /// What [`regex_literals`] relies on: lowercased text holds only
    /// characters that are their own lowercase.
    #[test]
    fn lowercasing_is_idempotent() {
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            for l in c.to_lowercase() {
                assert!(
                    l.to_lowercase().eq(std::iter::once(l)),
                    "{c:?} lowercases to {l:?}"
                );
            }
        }
    }
}
