//! One search term: a word, a phrase or a regex; what it matches in a
//! row's own text and what a body match reported by the index scores.

use memchr::memmem;
use nucleo_matcher::pattern::Atom;
use regex::Regex;

use super::fuzzy::{compact_fuzzy, Fuzzy, Span};
use super::MIN_BODY_WORD;
use crate::doc::SearchDoc;
use arbor_session::searchable::Parts;

/// One search term.
#[derive(Debug, Clone)]
pub enum Term {
    /// Fuzzy on short fields, or a substring of a field or (3+ characters)
    /// of the bodies. `lower` is the word normalized like the text.
    Word {
        atom: Atom,
        lower: String,
        /// Finds `lower` (built once per query, not once per session).
        finder: Box<memmem::Finder<'static>>,
    },
    /// Case-insensitive substring, whitespace collapsed.
    Phrase(String),
    Regex(Regex),
}

/// [`Term::key`] of the word `lower` (normalized).
pub fn word_key(lower: &str) -> String {
    format!("w\n{lower}")
}

impl Term {
    /// True when the term is matched against message bodies (then the
    /// index answers it; see the index's `Index::search`).
    pub fn searches_body(&self) -> bool {
        match self {
            Term::Word { lower, .. } => {
                lower.chars().count() >= MIN_BODY_WORD
                    || (!lower.is_empty() && lower.chars().all(is_cjk))
            }
            Term::Phrase(_) | Term::Regex(_) => true,
        }
    }

    /// The term's identity (kind and text), for caches of its answers.
    pub fn key(&self) -> String {
        match self {
            Term::Word { lower, .. } => word_key(lower),
            Term::Phrase(p) => format!("p\n{p}"),
            Term::Regex(r) => format!("r\n{}", r.as_str()),
        }
    }

    /// The score of a body match (reported by the index) in a part of
    /// rank `tier` (see [`arbor_session::searchable::Part::tier`]: tool
    /// calls score half, tool output and thinking a quarter of what
    /// conversation text scores), or `None` when the term is not matched
    /// against bodies.
    pub fn body_score(&self, tier: usize) -> Option<u32> {
        if !self.searches_body() {
            return None;
        }
        let base = match self {
            Term::Word { .. } => BODY_SCORE,
            Term::Phrase(_) => PHRASE_SCORE,
            Term::Regex(_) => REGEX_SCORE,
        };
        Some(base >> tier.min(2))
    }

    /// The first match of the term in `norm` (normalized text of one
    /// part), as a byte range; words shorter than [`MIN_BODY_WORD`] never
    /// match bodies, unless they are Chinese, Japanese or Korean ([`is_cjk`]).
    pub fn find_in(&self, norm: &str) -> Option<std::ops::Range<usize>> {
        match self {
            Term::Word { lower, finder, .. } => {
                if !self.searches_body() {
                    return None;
                }
                finder.find(norm.as_bytes()).map(|at| at..at + lower.len())
            }
            Term::Phrase(p) => {
                memmem::find(norm.as_bytes(), p.as_bytes()).map(|at| at..at + p.len())
            }
            Term::Regex(r) => r.find(norm).map(|m| m.range()),
        }
    }

    /// The term's score from what `doc` itself holds: its short fields and
    /// its own body text (empty for rows from the index, whose body matches
    /// come from [`Term::body_score`]). The body text is the user and
    /// assistant text together: it is only looked at when `parts` has both.
    pub fn local_score(&self, doc: &SearchDoc, parts: Parts, fz: &mut Fuzzy) -> Option<u32> {
        self.local_score_spanned(doc, parts, fz).0
    }

    /// [`Term::local_score`], and for an ASCII word what a word one
    /// character longer could match in `doc` (see [`Span`]).
    pub fn local_score_spanned(
        &self,
        doc: &SearchDoc,
        parts: Parts,
        fz: &mut Fuzzy,
    ) -> (Option<u32>, Span) {
        let fields = doc.fields_text();
        let body = if parts.covers_text() {
            doc.body_text()
        } else {
            ""
        };
        match self {
            Term::Word {
                atom,
                lower,
                finder,
            } => {
                let n = lower.chars().count();
                let mut span = Span::NONE;
                let field = doc
                    .fields()
                    .filter_map(|f| {
                        let (score, s) = compact_fuzzy(atom, lower, f, n, fz);
                        span = span.min(s);
                        score
                    })
                    .max()
                    .map(|s| s as u32 + BODY_SCORE);
                // A substring of the short texts or of the body: a longer
                // word may be one too, and is then matched whatever its
                // fuzzy span. (A field matched already admits the next key.)
                if !body.is_empty() {
                    span = Span::ANY;
                }
                let score = field.or_else(|| {
                    let in_fields = finder.find(fields.as_bytes()).is_some();
                    if in_fields {
                        span = Span::ANY;
                    }
                    let hit = in_fields
                        || (self.searches_body() && finder.find(body.as_bytes()).is_some());
                    hit.then_some(BODY_SCORE)
                });
                (score, span)
            }
            Term::Phrase(p) => {
                let hit = memmem::find(fields.as_bytes(), p.as_bytes()).is_some()
                    || memmem::find(body.as_bytes(), p.as_bytes()).is_some();
                (hit.then_some(PHRASE_SCORE), Span::ANY)
            }
            Term::Regex(r) => {
                let hit = fields.split('\n').any(|f| r.is_match(f))
                    || (!body.is_empty() && r.is_match(body));
                (hit.then_some(REGEX_SCORE), Span::ANY)
            }
        }
    }

    /// The word, for a word.
    pub fn word(&self) -> Option<&str> {
        match self {
            Term::Word { lower, .. } => Some(lower),
            _ => None,
        }
    }
}

/// Whether `c` is a Han character, kana or Hangul: in Chinese, Japanese
/// and Korean a word of one or two such characters is a whole word (`修复`,
/// `バグ`), not the letter or two of a Latin word that is in nearly every
/// transcript, so such words search the bodies too (docs/search.md).
pub fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11FF}'       // Hangul jamo
        | '\u{3040}'..='\u{30FF}'     // Hiragana, Katakana
        | '\u{3130}'..='\u{318F}'     // Hangul compatibility jamo
        | '\u{31F0}'..='\u{31FF}'     // Katakana extensions
        | '\u{3400}'..='\u{4DBF}'     // Han extension A
        | '\u{4E00}'..='\u{9FFF}'     // Han
        | '\u{AC00}'..='\u{D7AF}'     // Hangul syllables
        | '\u{F900}'..='\u{FAFF}'     // Han compatibility
        | '\u{FF66}'..='\u{FF9F}'     // halfwidth Katakana
        | '\u{20000}'..='\u{3134F}') // Han extensions B–G
}

/// Per rank of part (conversation text, tool calls, tool output and
/// thinking), bit `i` set when term `i` matched a part of that rank.
pub type Tiers = [u32; 3];

/// The score of term `i` from the ranks its body matches are in (the best).
pub fn tier_score(t: &Term, i: usize, tiers: &Tiers) -> Option<u32> {
    if i >= 32 {
        return None;
    }
    let tier = tiers.iter().position(|b| b & (1 << i) != 0)?;
    t.body_score(tier)
}

/// Score bonus of a field match over a body match, so names and first
/// messages outrank a word buried in a transcript.
const BODY_SCORE: u32 = 20;
const PHRASE_SCORE: u32 = 60;
const REGEX_SCORE: u32 = 40;
