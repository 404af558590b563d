//! Atomic's relevance order (its session selector's search, and
//! `fuzzyMatch` of `@earendil-works/pi-tui`), over what arbor keeps of a
//! session: the order of the sessions a query matches (docs/search.md,
//! "Matching and ranking").
//!
//! Atomic searches one text per session, `id name messages cwd` (the user
//! and assistant text joined by spaces), and scores each term by where it
//! is in it, lower first: a phrase by its position in that text lowercased
//! with whitespace collapsed (a tenth a character), a fuzzy word by the
//! characters it takes, leftmost first (a tenth per character's position,
//! two per character skipped, less for a run of characters and a word's
//! start); ties newest first. So a session named by the phrase (the name
//! comes right after the id) ranks above one that says the words in a
//! reply.
//!
//! arbor keeps of a session its id, name and first message (the start of
//! the messages' text), not every message: a term whose match is there is
//! scored exactly as Atomic scores it; a term matched only further on (a
//! later message, the summary, the cwd, tool calls and output, thinking,
//! which Atomic does not search) ranks after every one found there, and
//! such sessions are then in arbor's order (conversation text,
//! then tool calls, then tool output and thinking), then newest first. The
//! same with the index or without it: the index gives no positions.

use super::{Query, Term};
use crate::doc::SearchDoc;
use arbor_session::normalize::normalize;

/// What Atomic's search text starts with, as kept: `id name first`,
/// as typed (for words) and normalized (for phrases and regexes).
struct Lead {
    /// Lowercased, in UTF-16 units (Atomic's string positions).
    raw: Vec<u16>,
    norm: String,
}

impl Lead {
    /// `words`: the query has a word (`raw` is made); `texts`: a phrase
    /// or a regex (`norm` is made). Each is made only when asked: this
    /// runs for every session a query matches, on every keystroke.
    fn of(doc: &SearchDoc, words: bool, texts: bool) -> Lead {
        let (id, name, first) = doc.atomic_lead();
        let raw = if words {
            format!("{id} {} {first}", name.unwrap_or(""))
                .to_lowercase()
                .encode_utf16()
                .collect()
        } else {
            Vec::new()
        };
        let mut norm = String::new();
        if !texts {
            return Lead { raw, norm };
        }
        norm.reserve(id.len() + first.len() + 16);
        for (i, t) in [id, name.unwrap_or(""), first].into_iter().enumerate() {
            if i > 0 && !norm.ends_with(' ') {
                norm.push(' ');
            }
            normalize(t, &mut norm);
        }
        if norm.ends_with(' ') {
            norm.pop();
        }
        Lead { raw, norm }
    }
}

/// The query's score in Atomic's order (lower first): how many of its
/// terms are found only past the session's id, name and first message,
/// and the sum of the others' scores there, in tenths.
pub fn atomic_score(query: &Query, doc: &SearchDoc) -> (u32, i64) {
    if query.terms.is_empty() {
        return (0, 0);
    }
    let words = query.terms.iter().any(|t| t.word().is_some());
    let texts = query.terms.iter().any(|t| t.word().is_none());
    let lead = Lead::of(doc, words, texts);
    let mut further = 0u32;
    let mut sum = 0i64;
    for t in &query.terms {
        match term_score(t, &lead) {
            Some(s) => sum = sum.saturating_add(s),
            None => further += 1,
        }
    }
    (further, sum)
}

/// The relevance a session is listed by, highest first: Atomic's score
/// ([`atomic_score`]: fewer terms found only further on, then the lower
/// sum), then arbor's `score` of the match (a term found further on
/// scores by the rank of the part it is in: conversation text, tool
/// calls, tool output and thinking), packed in 32 bits: 6 for the terms
/// found further on, 18 for the sum (±13,107 characters' worth), 8 for
/// arbor's score.
pub fn relevance(atomic: (u32, i64), score: u32) -> u32 {
    const SUM_BITS: u32 = 18;
    const HALF: i64 = 1 << (SUM_BITS - 1);
    let (further, sum) = atomic;
    let found = 32u32.saturating_sub(further.min(32));
    let sum = (sum.clamp(-HALF, HALF - 1) + HALF) as u32;
    let lower_first = (1u32 << SUM_BITS) - 1 - sum;
    found << 26 | lower_first << 8 | score.min(255)
}

fn term_score(t: &Term, lead: &Lead) -> Option<i64> {
    match t {
        Term::Word { lower, .. } => {
            let word: Vec<u16> = lower.encode_utf16().collect();
            fuzzy_score(&word, &lead.raw)
        }
        Term::Phrase(p) => {
            let at = lead.norm.find(p.as_str())?;
            Some(utf16_len(&lead.norm[..at]))
        }
        Term::Regex(r) => {
            let m = r.find(&lead.norm)?;
            Some(utf16_len(&lead.norm[..m.start()]))
        }
    }
}

fn utf16_len(s: &str) -> i64 {
    s.encode_utf16().count() as i64
}

/// pi-tui's `fuzzyMatch` score of `word` in `text` (both lowercase, in
/// UTF-16 units), in tenths; `None` when the word is not a subsequence.
/// Each character of the word is taken at its first place after the one
/// before: a tenth per unit of its position, two per unit skipped since
/// the last one taken, five less per character of a run so far (the
/// second of a run 5, the third 10, …) and ten less at a word's start.
/// (Its swap of a word's letters and digits, tried only where the word
/// itself matches nowhere in the text, never applies to a session arbor
/// matched, and its bonus for a text that is the word whole never to a
/// text that starts with an id.)
fn fuzzy_score(word: &[u16], text: &[u16]) -> Option<i64> {
    if word.is_empty() {
        return Some(0);
    }
    let mut k = 0;
    let mut score = 0i64;
    let mut last: Option<usize> = None;
    let mut run = 0i64;
    for (i, &c) in text.iter().enumerate() {
        if c != word[k] {
            continue;
        }
        if last.is_some_and(|l| l + 1 == i) {
            run += 1;
            score -= run * 50;
        } else {
            run = 0;
            if let Some(l) = last {
                score += (i - l - 1) as i64 * 20;
            }
        }
        let boundary = i == 0 || is_separator(text[i - 1]);
        if boundary {
            score -= 100;
        }
        score += i as i64;
        last = Some(i);
        k += 1;
        if k == word.len() {
            return Some(score);
        }
    }
    None
}

/// The characters before a word's start for pi-tui (`[\s\-_./:]`).
fn is_separator(c: u16) -> bool {
    matches!(c, 0x2d | 0x5f | 0x2e | 0x2f | 0x3a)
        || char::from_u32(u32::from(c)).is_some_and(char::is_whitespace)
        || c == 0xfeff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    /// Scores worked out by hand from pi-tui's rules.
    #[test]
    fn fuzzy_scores_follow_pi_tuis_rules() {
        // `ab` at 0 and 1: a word's start (-10), position 0; a run (-5),
        // position 0.1: -14.9.
        assert_eq!(fuzzy_score(&units("ab"), &units("ab")), Some(-149));
        // `ab` in `a-xb`: a at 0 (-10 + 0); b at 3 after a gap of 2 (+4)
        // and position 0.3: -5.7.
        assert_eq!(fuzzy_score(&units("ab"), &units("a-xb")), Some(-57));
        // `b` after a separator: -10 + 0.2.
        assert_eq!(fuzzy_score(&units("b"), &units("a b")), Some(-98));
        assert_eq!(fuzzy_score(&units("ba"), &units("ab")), None);
        // Leftmost: the first `a`, however scattered.
        assert_eq!(
            fuzzy_score(&units("ac"), &units("xa c ac")),
            Some(1 + 20 + 3 - 100)
        );
    }

    #[test]
    fn phrases_score_by_their_place_in_the_normalized_lead() {
        let info = arbor_session::info::SessionInfo {
            id: "abc".into(),
            name: Some("Fix  The Parser".into()),
            has_name: true,
            first_message: Some("please fix the parser now".into()),
            ..Default::default()
        };
        let doc = SearchDoc::from_info(&info);
        // `abc fix the parser please fix the parser now`.
        assert_eq!(atomic_score(&Query::parse("\"fix the\""), &doc), (0, 4));
        assert_eq!(atomic_score(&Query::parse("\"please\""), &doc), (0, 19));
        assert_eq!(atomic_score(&Query::parse("\"absent\""), &doc), (1, 0));
        assert_eq!(atomic_score(&Query::parse("re:pars\\w+"), &doc), (0, 12));
        // The short document of the row scores phrases alike.
        let short = SearchDoc::of_row_short(
            crate::doc::RowText::of(&info),
            crate::doc::RowFacts::of(&info),
        );
        for q in ["\"fix the\"", "\"please\"", "\"absent\"", "re:pars\\w+"] {
            let q = Query::parse(q);
            assert_eq!(atomic_score(&q, &short), atomic_score(&q, &doc));
        }
    }

    /// Fewer terms found further on first, then the lower sum, then
    /// arbor's score.
    #[test]
    fn relevance_orders_by_atomic_then_arbor() {
        assert!(relevance((0, 500), 5) > relevance((1, -900), 60));
        assert!(relevance((0, -20), 5) > relevance((0, 40), 60));
        assert!(relevance((1, 0), 20) > relevance((1, 0), 10));
        assert!(relevance((0, i64::MIN), 0) > relevance((0, i64::MAX), 255));
    }
}
