//! A word's fuzzy match in a short field (name, summary, first message,
//! cwd, id), kept only when compact, and what makes it fast: windows
//! scanned before nucleo scores them, and scores remembered per window.

use nucleo_matcher::pattern::Atom;
use nucleo_matcher::{Config, Matcher, Utf32Str};

use crate::doc::Field;
use arbor_util::hash::FxBuild;
use std::collections::HashMap;

/// What a word could still match in a session as it grows, for a search
/// typed key by key: a lower bound on the shortest span (in characters) of
/// the word as a subsequence of one of the session's short fields, or
/// [`Span::ANY`] when a longer word could match another way (a non-ASCII
/// field, which nucleo matches whole; the word as a substring of the short
/// texts or the body).
///
/// A word of `n` characters matches a field only within
/// [`compact_limit`]`(n)` characters, and the shortest span grows by at
/// least one with each character added, so a session whose bound is `b`
/// cannot match the word one character longer unless `b + 1` is within
/// that word's limit: the scorer skips it, and its bound for the longer
/// word is `b + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span(pub u8);

impl Span {
    /// Could match however it is spanned.
    pub const ANY: Span = Span(0);
    /// No subsequence at all (and so none of a longer word either).
    pub const NONE: Span = Span(u8::MAX);

    /// Whether the word one character longer, of `n` characters, could
    /// match.
    pub fn admits(self, n: usize) -> bool {
        self == Span::ANY || (self.0 as usize) < compact_limit(n)
    }

    /// The bound for the word one character longer (not looked at).
    pub fn grown(self) -> Span {
        Span(self.0.saturating_add(1))
    }
}

/// How many characters a compact match of an `n`-character word may span
/// (see [`compact_fuzzy`]).
pub fn compact_limit(n: usize) -> usize {
    (2 * n).max(n + 2)
}

/// A fuzzy match of an `n`-character word that stays compact: a subsequence
/// scattered over a long first message is noise, so the matched characters
/// must lie within about twice the word's length (typos and a skipped
/// letter or two still match).
pub(super) fn compact_fuzzy(
    atom: &Atom,
    lower: &str,
    field: Field,
    n: usize,
    fz: &mut Fuzzy,
) -> (Option<u16>, Span) {
    let limit = compact_limit(n);
    if !(lower.is_ascii() && field.ascii) {
        // An ASCII word in a field nucleo sees as Unicode: nucleo matches it
        // whole, but only where the folded characters hold a compact
        // subsequence of the word (most such fields, on a longer word, do
        // not), and their shortest one bounds a longer word's as in ASCII.
        if let (true, Some(folded)) = (lower.is_ascii(), field.folded) {
            let mut compact = false;
            let span = compact_windows(folded, lower.as_bytes(), limit, limit + 2, &mut |_| {
                compact = true
            });
            let span = Span(span.clamp(1, Span::NONE.0 as usize - 1) as u8);
            if !compact {
                return (None, span);
            }
            return (compact_fuzzy_full(atom, field.utf32(), limit, fz), span);
        }
        return (
            compact_fuzzy_full(atom, field.utf32(), limit, fz),
            Span::ANY,
        );
    }
    if n == 1 {
        if let Some(got) = one_char(atom, lower.as_bytes()[0], field.text.as_bytes(), fz) {
            return got;
        }
    }
    compact_windows_scored(atom, lower, field, limit, fz)
}

/// A one-character word in an ASCII field: its score is the best of its
/// occurrences', and one occurrence's score depends only on the character
/// (its case) and the kind of character before it (the word-boundary
/// bonus), so nucleo scores each pair once per [`Fuzzy`] rather than once
/// per occurrence (a one-letter first key is in nearly every session, many
/// times). `None` when a character before has no stand-in (the general
/// path then answers).
fn one_char(atom: &Atom, c: u8, hay: &[u8], fz: &mut Fuzzy) -> Option<(Option<u16>, Span)> {
    if fz.one_char.0 != c {
        fz.one_char = (c, [0; ONE_CHAR_KEYS]);
    }
    let mut best: Option<u16> = None;
    let mut found = false;
    let ceiling = one_char_ceiling(atom, c);
    for p in memchr::memchr2_iter(c, c.to_ascii_uppercase(), hay) {
        // No later occurrence can score more (a letter at a word's start
        // early in a first message ends the scan of its other ~30).
        if found && best.is_some() && best == ceiling {
            break;
        }
        found = true;
        let before = match p.checked_sub(1) {
            None => None,
            Some(b) => Some(stand_in(hay[b], &[c])?),
        };
        let key = before.map_or(128, usize::from) * 2 + usize::from(hay[p] != c);
        let score = match fz.one_char.1[key] {
            0 => {
                let win = [before.unwrap_or(0), hay[p]];
                let text = if before.is_some() {
                    &win[..]
                } else {
                    &win[1..]
                };
                let s = atom.score(Utf32Str::Ascii(text), &mut fz.matcher);
                fz.one_char.1[key] = s.map_or(1, |s| u32::from(s) + 2);
                s
            }
            1 => None,
            k => Some((k - 2) as u16),
        };
        best = best.max(score);
    }
    let span = if found { Span(1) } else { Span::NONE };
    Some((best, span))
}

/// The best score a one-character word `c` reaches anywhere: nucleo's
/// score of the character in either case after each ASCII character or
/// after none, the most of them; made once per character.
fn one_char_ceiling(atom: &Atom, c: u8) -> Option<u16> {
    static CEILINGS: [std::sync::OnceLock<Option<u16>>; 128] =
        [const { std::sync::OnceLock::new() }; 128];
    let slot = CEILINGS.get(usize::from(c))?;
    *slot.get_or_init(|| {
        let mut matcher = new_matcher();
        let mut best = None;
        for hay in [c.to_ascii_lowercase(), c.to_ascii_uppercase()] {
            best = best.max(atom.score(Utf32Str::Ascii(&[hay]), &mut matcher));
            for before in 0..128u8 {
                best = best.max(atom.score(Utf32Str::Ascii(&[before, hay]), &mut matcher));
            }
        }
        best
    })
}

/// Keys of [`one_char`]'s scores: the character before (an ASCII stand-in,
/// or none: 128) and whether the occurrence is in the other case.
const ONE_CHAR_KEYS: usize = 129 * 2;

/// [`compact_fuzzy`] on an ASCII field, by windows.
fn compact_windows_scored(
    atom: &Atom,
    lower: &str,
    field: Field,
    limit: usize,
    fz: &mut Fuzzy,
) -> (Option<u16>, Span) {
    let utf32 = field.utf32();
    let field = field.text;
    // ASCII: nucleo runs only on the short windows where a compact match
    // starts (found by a cheap scan), never over a whole 500-character
    // first message. Each window keeps the character before it, which
    // decides the word-boundary bonus, so an alignment scores as it would
    // in the whole field.
    let mut best: Option<u16> = None;
    let mut whole = false;
    let hay = field.as_bytes();
    // Spans a little past the limit are measured too, for the next key.
    let reach = limit + 2;
    let span = compact_windows(hay, lower.as_bytes(), limit, reach, &mut |p| {
        let to = (p + limit).min(hay.len());
        let mut win = [0u8; WINDOW_MAX];
        let len = to - p + 1;
        // The character before the window decides the first one's bonus;
        // a stand-in of its kind that the word cannot match replaces it.
        let before = match p.checked_sub(1) {
            None => None,
            Some(b) => match stand_in(hay[b], lower.as_bytes()) {
                Some(c) => Some(c),
                None => {
                    whole = true;
                    return;
                }
            },
        };
        if len > WINDOW_MAX {
            whole = true;
            return;
        }
        let text = match before {
            Some(c) => {
                win[0] = c;
                win[1..len].copy_from_slice(&hay[p..to]);
                &win[..len]
            }
            None => &hay[p..to],
        };
        if let Some(s) = fz.window_score(atom, lower, text) {
            best = best.max(Some(s));
        }
    });
    // A long word's span is kept as at most 254: still a lower bound.
    let span = Span(span.clamp(1, Span::NONE.0 as usize - 1) as u8);
    if whole {
        return (compact_fuzzy_full(atom, utf32, limit, fz), span);
    }
    (best, span)
}

/// What fuzzy matching reuses from one document to the next: nucleo's
/// matcher and a buffer for a match's positions.
pub struct Fuzzy {
    matcher: Matcher,
    idx: Vec<u32>,
    /// The scores of the windows of [`compact_windows_scored`] (the word
    /// it was asked for, and per window's bytes up to [`WINDOW_KEY`] long,
    /// nucleo's score): prose and paths repeat the same few windows around
    /// a word's letters thousands of times over 100,000 sessions, and
    /// nucleo's scoring of each was most of a short word's pass.
    windows: Vec<(String, WindowScores)>,
    /// A one-character word and its scores (see [`one_char`]): 0 unknown,
    /// 1 no match, else the score plus 2.
    one_char: (u8, [u32; ONE_CHAR_KEYS]),
}

impl Default for Fuzzy {
    fn default() -> Fuzzy {
        Fuzzy {
            matcher: new_matcher(),
            idx: Vec::new(),
            windows: Default::default(),
            one_char: (0, [0; ONE_CHAR_KEYS]),
        }
    }
}

impl Fuzzy {
    pub fn new() -> Fuzzy {
        Fuzzy::default()
    }

    /// nucleo's score of `atom` (the word `word`) on the window `text`,
    /// remembered per window (see `windows`).
    fn window_score(&mut self, atom: &Atom, word: &str, text: &[u8]) -> Option<u16> {
        if text.len() > WINDOW_KEY {
            return atom.score(Utf32Str::Ascii(text), &mut self.matcher);
        }
        // A query's words are scored in turn on each session (a listing), or
        // each over all sessions (the picker): a few are kept.
        let at = match self.windows.iter().position(|(w, _)| w == word) {
            Some(at) => at,
            None => {
                if self.windows.len() >= WORDS_KEPT {
                    self.windows.remove(0);
                }
                self.windows
                    .push((word.to_string(), WindowScores::default()));
                self.windows.len() - 1
            }
        };
        let scores = &mut self.windows[at].1;
        if scores.len() >= WINDOWS_KEPT {
            scores.clear();
        }
        let mut key = [0u8; WINDOW_KEY];
        key[..text.len()].copy_from_slice(text);
        let matcher = &mut self.matcher;
        *scores
            .entry((key, text.len() as u8))
            .or_insert_with(|| atom.score(Utf32Str::Ascii(text), matcher))
    }
}

/// Windows this long or shorter (a word of up to 7 characters, with the
/// stand-in before it) have their scores remembered,
const WINDOW_KEY: usize = 16;
/// up to this many of them for a word (then they start again),
const WINDOWS_KEPT: usize = 1 << 16;
/// for this many words.
const WORDS_KEPT: usize = 4;

/// A word's scores per window: its bytes (zero-padded) and its length.
type WindowScores = HashMap<([u8; WINDOW_KEY], u8), Option<u16>, FxBuild>;

/// Longest window (with its leading stand-in) matched on the stack.
const WINDOW_MAX: usize = 80;

/// A character of the same kind as `c` for nucleo's bonuses (lowercase,
/// uppercase, digit, whitespace, delimiter, other) that `needle` (ASCII,
/// lowercase) does not contain, so it cannot take part in a match.
fn stand_in(c: u8, needle: &[u8]) -> Option<u8> {
    let free = |set: &[u8]| {
        set.iter()
            .copied()
            .find(|x| !needle.contains(&x.to_ascii_lowercase()))
    };
    match c {
        b'a'..=b'z' => free(b"qxzjkvwyfgbpmhdlucnrstoiea"),
        b'A'..=b'Z' => free(b"QXZJKVWYFGBPMHDLUCNRSTOIEA"),
        b'0'..=b'9' => free(b"0123456789"),
        c if c.is_ascii_whitespace() => Some(c),
        b'/' | b',' | b':' | b';' | b'|' => free(b"|;:,/"),
        _ => free(b"#$%&*+=?@^~!"),
    }
}

/// The match itself: nucleo's best alignment, kept when it spans at most
/// `limit` characters.
fn compact_fuzzy_full(atom: &Atom, field: Utf32Str, limit: usize, fz: &mut Fuzzy) -> Option<u16> {
    let Fuzzy { matcher, idx, .. } = fz;
    idx.clear();
    let score = atom.indices(field, matcher, idx)?;
    let (first, last) = (*idx.iter().min()?, *idx.iter().max()?);
    let span = (last - first + 1) as usize;
    (span <= limit).then_some(score)
}

/// Calls `f` with each position of `hay` where `needle` (ASCII, lowercase)
/// starts a case-insensitive subsequence that ends within `limit` bytes:
/// the starts of the compact matches. From a given start, the greedy
/// match ends as early as any match can. Returns the shortest span of a
/// match when it is at most `reach` (≥ `limit`) bytes, else `reach + 1`.
fn compact_windows(
    hay: &[u8],
    needle: &[u8],
    limit: usize,
    reach: usize,
    f: &mut dyn FnMut(usize),
) -> usize {
    let mut shortest = reach + 1;
    let Some((&first, rest)) = needle.split_first() else {
        return shortest;
    };
    for p in memchr::memchr2_iter(first, first.to_ascii_uppercase(), hay) {
        if p + needle.len() > hay.len() {
            break;
        }
        if rest.is_empty() {
            f(p);
            shortest = 1;
            continue;
        }
        let window = &hay[p + 1..(p + reach).min(hay.len())];
        let mut k = 0;
        for (i, &c) in window.iter().enumerate() {
            if c.to_ascii_lowercase() == rest[k] {
                k += 1;
                if k == rest.len() {
                    let span = i + 2;
                    shortest = shortest.min(span);
                    if span <= limit {
                        f(p);
                    }
                    break;
                }
            }
        }
    }
    shortest
}

pub fn new_matcher() -> Matcher {
    Matcher::new(Config::DEFAULT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{RowFacts, SearchDoc};
    use crate::query::{Query, Term};

    /// A word long enough that its compact limit passes what a span bound
    /// holds (254) still matches a field where it spans more than that.
    #[test]
    fn a_long_word_matches_across_a_long_span() {
        let word: String = (0..200).map(|i| (b'a' + (i % 7) as u8) as char).collect();
        let field = format!("{}{}{}", &word[..100], "-".repeat(60), &word[100..]);
        let d = SearchDoc::new([field.as_str()], [], "", RowFacts::default());
        assert!(Query::parse(&word).score(&d, &mut Fuzzy::new()).is_some());
    }

    proptest::proptest! {
        /// A one-character word scores a field as the windows do.
        #[test]
        fn one_character_scores_as_the_windows_do(
            field in "[a-dA-D0-9 _/:.-]{0,60}",
            word in "[a-dA-D0-9_.]",
        ) {
            let q = Query::parse(&word);
            let Some(Term::Word { atom, lower, .. }) = q.terms.first() else {
                return Ok(());
            };
            let doc = SearchDoc::new([field.as_str()], [], "", RowFacts::default());
            let f = doc.fields().next().unwrap();
            let mut fz = Fuzzy::new();
            // Twice: the second answers from the remembered scores.
            for _ in 0..2 {
                let fast = one_char(atom, lower.as_bytes()[0], field.as_bytes(), &mut fz);
                let windows = compact_windows_scored(atom, lower, f, compact_limit(1), &mut fz);
                proptest::prop_assert_eq!(fast.map(|f| f.0), Some(windows.0));
            }
        }
    }

    proptest::proptest! {
        /// On ASCII, the window search finds exactly the fields where a
        /// compact match exists, and scores it at least as nucleo's
        /// alignment over the whole field does whenever that one is
        /// compact.
        #[test]
        fn windows_find_compact_matches(
            field in "[a-dA-D _/-]{0,80}",
            word in "[a-dA-D]{1,6}",
        ) {
            let q = Query::parse(&word);
            let Term::Word { atom, lower, .. } = &q.terms[0] else { unreachable!() };
            let n = lower.chars().count();
            let limit = compact_limit(n);
            let mut fz = Fuzzy::new();
            let doc = SearchDoc::new([field.as_str()], [], "", RowFacts::default());
            let f = doc.fields().next().unwrap();
            let full = compact_fuzzy_full(atom, f.utf32(), limit, &mut fz);
            let (fast, _) = compact_fuzzy(atom, lower, f, n, &mut fz);
            // Again, after another word: from the remembered windows' scores.
            let other = Query::parse("ab");
            if let Term::Word { atom: a2, lower: l2, .. } = &other.terms[0] {
                compact_fuzzy(a2, l2, f, 2, &mut fz);
            }
            let (again, _) = compact_fuzzy(atom, lower, f, n, &mut fz);
            proptest::prop_assert_eq!(again, fast);
            // Brute force: some start from which the word is a subsequence
            // of the next `limit` characters.
            let f = field.to_ascii_lowercase().into_bytes();
            let exists = (0..f.len()).any(|p| {
                let mut k = 0;
                for &c in &f[p..(p + limit).min(f.len())] {
                    if k < lower.len() && c == lower.as_bytes()[k] {
                        if k == 0 && c != f[p] { break; }
                        k += 1;
                    }
                }
                k == lower.len() && f[p] == lower.as_bytes()[0]
            });
            proptest::prop_assert_eq!(fast.is_some(), exists);
            // Never below nucleo's alignment over the whole field; above
            // it where that one is not the best: nucleo aligns `cda` in
            // `/cCDAA` at 1, 3, 4 (67) where 2, 3, 4 scores 68, which
            // the window from 2 finds (nucleo finds it in `xcCDAA` too).
            if let Some(s) = full {
                proptest::prop_assert!(fast >= Some(s), "{fast:?} < {s}");
            }
        }
    }

    proptest::proptest! {
        /// An ASCII word in a field nucleo sees as Unicode (accented and
        /// capital letters, emoji, combining marks): the folded scan changes
        /// no answer, and the span it gives never keeps out a longer word
        /// that matches.
        #[test]
        fn unicode_fields_answer_as_nucleo_does(
            field in "([a-cA-C _/-]|é|É|à|ß|ﬁ|e\u{301}|👍|日){0,60}",
            word in "[a-ceA-C]{1,5}",
            next in "[a-ce]",
        ) {
            let doc = SearchDoc::new([field.as_str()], [], "", RowFacts::default());
            let f = doc.fields().next().unwrap();
            let mut fz = Fuzzy::new();
            let mut span = None;
            for w in [word.clone(), format!("{word}{next}")] {
                let q = Query::parse(&w);
                let Term::Word { atom, lower, .. } = &q.terms[0] else { unreachable!() };
                let n = lower.chars().count();
                let full = compact_fuzzy_full(atom, f.utf32(), compact_limit(n), &mut fz);
                let (fast, s) = compact_fuzzy(atom, lower, f, n, &mut fz);
                proptest::prop_assert_eq!(fast, full, "{} in {:?}", w, field);
                if let Some(shorter) = span {
                    // The shorter word's bound admits this one wherever it matches.
                    let b: Span = shorter;
                    proptest::prop_assert!(full.is_none() || b.admits(n), "{} in {:?}", w, field);
                }
                span = Some(s);
            }
        }
    }
}
