//! Hits per entry: which entries of a session match a query's body terms,
//! where, and how well. The picker's preview, the tree opened at a hit and
//! `arbor search` all ask [`entry_hits`]; the index asks
//! [`PartMatcher`] for the parts it does not keep as text.

use std::ops::Range;

use serde_json::{Map, Value};

use super::query::{Query, Term, Tiers};
use super::rawline::{may_spell_letters, LineNeeds};
use arbor_session::entry::Entry;
use arbor_session::normalize::{normalize, original_range};
use std::path::Path;

use super::blocks::find_in_long;
use super::entry_bits::{set_in_block, EntryTermBits, BLOCK};
use arbor_session::info::{read_lines, read_lines_capped, with_read_buffer, Piece};
use arbor_session::lifted::{FileLine, LIFT_LINE};
use arbor_session::line_skim::{skim_line, LineSpans};
use arbor_session::searchable::{
    may_have_other_parts, part_words_of, parts_of_entry, parts_of_line, Part, Parts, SeenPieces,
};

/// One entry that matches at least one of the query's body terms.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryHit {
    pub entry_id: String,
    /// 1-based position among the file's entries (see [`Entry::index`]).
    pub index: usize,
    /// The message's role, or the entry's type when it is not a message.
    pub role: String,
    pub timestamp: Option<String>,
    /// The best-ranked part the terms matched in (the snippet's).
    pub part: Part,
    /// Bit `i`: term `i` matched somewhere in this entry (in scope).
    pub terms: u32,
    /// The entry's relevance: the sum of its terms' scores, each in the
    /// best-ranked part it matched.
    pub score: u32,
    /// The original text around the first match in that part (whitespace
    /// runs shown as one space, at most about [`SNIPPET_CHARS`] characters).
    pub snippet: String,
    /// Where the match lies in `snippet`, in bytes.
    pub highlight: Range<usize>,
}

/// About how many characters a snippet shows.
pub const SNIPPET_CHARS: usize = 120;

/// Matches one part's text against a query's body terms, keeping per rank
/// which terms matched: the same test per part wherever it runs.
pub struct PartMatcher<'q> {
    /// What a raw line needs for the term to match in it: a line without
    /// it is not parsed (see [`PartMatcher::line`]).
    needs: LineNeeds,
    lower: Vec<u8>,
    terms: &'q [Term],
    /// The terms to test (bit `i`: `terms[i]`).
    mask: u32,
    parts: Parts,
    norm: String,
    /// A piece's words joined (its normal form), and the words' scratch.
    piece: Vec<u8>,
    scratch: Vec<u8>,
    /// The long pieces of this file already fed: a repeat matches as the
    /// first did.
    seen: SeenPieces,
    /// What matched so far, per rank.
    pub tiers: Tiers,
}

impl<'q> PartMatcher<'q> {
    /// Looks at the parts in the query's scope and in `parts`.
    pub fn new(query: &'q Query, parts: Parts) -> PartMatcher<'q> {
        PartMatcher {
            needs: LineNeeds::default(),
            lower: Vec::new(),
            terms: &query.terms,
            mask: body_mask(query),
            parts: query.parts.intersect(parts),
            norm: String::new(),
            piece: Vec::new(),
            scratch: Vec::new(),
            seen: SeenPieces::default(),
            tiers: Tiers::default(),
        }
    }

    /// One term alone (its bit is bit 0), in `parts`.
    pub fn one(term: &'q Term, parts: Parts) -> PartMatcher<'q> {
        PartMatcher {
            needs: LineNeeds::of(term),
            lower: Vec::new(),
            terms: std::slice::from_ref(term),
            mask: u32::from(term.searches_body()),
            parts,
            norm: String::new(),
            piece: Vec::new(),
            scratch: Vec::new(),
            seen: SeenPieces::default(),
            tiers: Tiers::default(),
        }
    }

    /// Whether every term has matched in the best rank these parts have:
    /// nothing more to learn from this session.
    pub fn complete(&self) -> bool {
        let best = self.parts.iter().map(Part::tier).min().unwrap_or(0);
        self.mask & !self.tiers[best] == 0
    }

    /// Tests one part; returns the bits of the terms that matched it.
    pub fn feed(&mut self, part: Part, text: &str) -> u32 {
        if !self.parts.contains(part) {
            return 0;
        }
        let bits = match find_in_long(self.terms, self.mask, text) {
            // A long text: matched a block at a time, never copied whole.
            Some(found) => found
                .iter()
                .enumerate()
                .filter(|(_, r)| r.is_some())
                .fold(0, |b, (i, _)| b | 1 << i),
            None => {
                if !part_normal_form(text, &mut self.norm) {
                    return 0;
                }
                term_bits(self.terms, self.mask, &self.norm)
            }
        };
        self.tiers[part.tier()] |= bits;
        bits
    }

    /// Feeds every part of one line of a session file.
    pub fn line(&mut self, line: &[u8]) {
        if self.may_match(line) {
            self.words(line, skim_line(line).as_ref());
        }
    }

    /// [`PartMatcher::line`] for a line skimmed already (`None`: the skim
    /// refused it).
    pub fn skimmed(&mut self, line: &[u8], spans: Option<&LineSpans>) {
        if self.may_match(line) {
            self.words(line, spans);
        }
    }

    /// False when the line certainly holds no match: no part looked at, or
    /// not the letters the terms need.
    fn may_match(&mut self, line: &[u8]) -> bool {
        // Without user or assistant text to look at, most lines need no
        // parsing at all.
        if !self.parts.contains(Part::User)
            && !self.parts.contains(Part::Assistant)
            && !may_have_other_parts(line)
        {
            return false;
        }
        if !self.needs.is_empty()
            && !may_spell_letters(line)
            && !self.needs.held_by_line(line, &mut self.lower)
        {
            return false;
        }
        true
    }

    /// Feeds the parts of a line: the words the index cuts from the line's
    /// bytes, joined again per piece (its normal form), without decoding
    /// the line or normalizing its text (half of a query's time without the
    /// index); an unusual line decoded.
    fn words(&mut self, line: &[u8], spans: Option<&LineSpans>) {
        let (terms, mask, tiers) = (self.terms, self.mask, &mut self.tiers);
        let piece = &mut self.piece;
        let mut current = None;
        // A long piece is matched as it grows, a block at a time, keeping
        // what a match across the border may start in (see `blocks`):
        // the words of a tool's output of 200 MB were held joined.
        let window = literal_window(terms, mask);
        let mut early = 0u32;
        let mut flush = |part: Option<Part>, piece: &mut Vec<u8>, early: &mut u32| {
            if let Some(part) = part.filter(|_| !piece.is_empty()) {
                // Words are cut from valid UTF-8 at character boundaries.
                if let Ok(norm) = std::str::from_utf8(piece) {
                    tiers[Part::tier(part)] |= term_bits(terms, mask, norm) | *early;
                }
            }
            *early = 0;
            piece.clear();
        };
        piece.clear();
        let cut = spans.is_some_and(|spans| {
            part_words_of(
                spans,
                self.parts,
                &mut self.scratch,
                &mut self.seen,
                &mut |part, w| {
                    if w.is_empty() {
                        flush(current.replace(part), piece, &mut early);
                        return;
                    }
                    if !piece.is_empty() {
                        piece.push(b' ');
                    }
                    piece.extend_from_slice(w);
                    if let Some(keep) = window.filter(|_| piece.len() > PIECE_BLOCK) {
                        if let Ok(norm) = std::str::from_utf8(piece) {
                            early |= term_bits(terms, mask, norm);
                        }
                        // Words are whole characters: any cut after a word
                        // boundary is one; keep at least `keep` bytes.
                        let mut cut = piece.len().saturating_sub(keep + 1);
                        while cut > 0 && piece[cut] & 0xc0 == 0x80 {
                            cut -= 1;
                        }
                        piece.drain(..cut);
                    }
                },
            )
        });
        flush(current, piece, &mut early);
        if !cut {
            parts_of_line(line, &mut |p, t| {
                self.feed(p, t);
            });
        }
    }

    /// Feeds the lines of a session file until [`PartMatcher::complete`].
    /// A file that cannot be read matches nothing more.
    pub fn file(&mut self, path: &Path) {
        // Another agent's file: its lines translated as they are read.
        if let Some(agent) = arbor_session::foreign::detect_path(path) {
            self.foreign_file(agent, path);
            return;
        }
        let Ok((mut f, _)) = arbor_session::open::open_session_file(path) else {
            return;
        };
        // A line too long to hold is parsed from the file a block at a
        // time (see `arbor_session::lifted`), through a second handle.
        let again = f.try_clone().ok();
        let _ = with_read_buffer(|buf| {
            read_lines_capped(&mut f, buf, LIFT_LINE, |piece| {
                match piece {
                    Piece::Line(line, complete, _) => {
                        if complete {
                            self.line(line);
                        }
                    }
                    Piece::Long(start, end, complete) => {
                        let file = again.as_ref().filter(|_| complete);
                        if let Some(obj) =
                            file.and_then(|file| FileLine { file, start, end }.parse())
                        {
                            parts_of_entry(&obj, &mut |p, t| {
                                self.feed(p, t);
                            });
                        }
                    }
                }
                !self.complete()
            })
        });
    }
}

impl PartMatcher<'_> {
    fn foreign_file(&mut self, agent: arbor_session::Agent, path: &Path) {
        let Ok((mut f, _)) = arbor_session::open::open_session_file(path) else {
            return;
        };
        let Some(mut t) = arbor_session::foreign::Translator::new(agent, path) else {
            return;
        };
        let mut header = true;
        let _ = with_read_buffer(|buf| {
            read_lines(&mut f, buf, |line, complete, _| {
                t.feed_lines(line, complete, &mut |l, c| {
                    if c && !std::mem::take(&mut header) {
                        self.line(l);
                    }
                });
                !self.complete()
            })
        });
        if !self.complete() {
            t.finish_lines(&mut |l, c| {
                if c && !std::mem::take(&mut header) {
                    self.line(l);
                }
            });
        }
    }
}

/// Lines longer than this are checked by [`LineFilter`] a block at a time.
const LONG_LINE: usize = 1 << 20;

/// How long a piece of words grows before it is matched and cut.
const PIECE_BLOCK: usize = 1 << 20;

/// For a query whose body terms are all words and phrases, how many bytes
/// of a piece a match across a cut may start in (the longest term's);
/// `None` with a regex, which is matched on the whole piece.
fn literal_window(terms: &[Term], mask: u32) -> Option<usize> {
    terms
        .iter()
        .enumerate()
        .take(32)
        .filter(|&(i, _)| mask & (1 << i) != 0)
        .try_fold(0, |longest, (_, t)| match t {
            Term::Word { lower, .. } => Some(longest.max(lower.len())),
            Term::Phrase(p) => Some(longest.max(p.len())),
            Term::Regex(_) => None,
        })
}

/// `text`'s normal form as one part's (no space before or after: the
/// words of a piece joined, as the matcher reads a line, and as the row's
/// own text is trimmed) into `out`; false when it is empty (a part without
/// text is not matched, whatever a regex could match in nothing).
fn part_normal_form(text: &str, out: &mut String) -> bool {
    out.clear();
    arbor_session::normalize::push_normalized(text, out);
    !out.is_empty()
}

/// The bits of the terms in `mask` that `norm` (normalized text) holds.
fn term_bits(terms: &[Term], mask: u32, norm: &str) -> u32 {
    let mut bits = 0u32;
    for (i, t) in terms.iter().enumerate().take(32) {
        if mask & (1 << i) != 0 && t.find_in(norm).is_some() {
            bits |= 1 << i;
        }
    }
    bits
}

/// The parts a row's own text (its `all_text`: the user and assistant
/// text together) does not answer for `query`: what reading the files
/// must add. Empty when the query looks at no bodies.
pub fn parts_beyond_text(query: &Query) -> Parts {
    if query.error().is_some() || body_mask(query) == 0 {
        return Parts::NONE;
    }
    let p = query.parts;
    p.iter()
        .filter(|x| !(x.is_text() && p.covers_text()))
        .fold(Parts::NONE, |a, x| a.union(Parts::one(x)))
}

/// For rows read without the index (which carry their user and assistant
/// text): the body matches in the other parts, read from the session files
/// (on all cores). `None` when the query needs nothing beyond the rows' text.
pub fn file_hits(query: &Query, paths: &[std::path::PathBuf]) -> Option<super::BodyHits> {
    let parts = parts_beyond_text(query);
    if parts.is_empty() {
        return None;
    }
    Some(hits_of(paths, |p| {
        let mut m = PartMatcher::new(query, parts);
        m.file(p);
        m.tiers
    }))
}

/// The tiers `tiers_of` finds in each of `paths`, on all cores.
fn hits_of(
    paths: &[std::path::PathBuf],
    tiers_of: impl Fn(&Path) -> Tiers + Sync,
) -> super::BodyHits {
    use rayon::prelude::*;
    let found: Vec<(&std::path::PathBuf, Tiers)> = paths
        .par_iter()
        .filter_map(|p| {
            let tiers = tiers_of(p);
            (tiers != Tiers::default()).then_some((p, tiers))
        })
        .collect();
    let mut out = super::BodyHits::default();
    for (p, t) in found {
        out.insert_shared(std::sync::Arc::from(p.as_os_str()), t);
    }
    out
}

/// The body terms of `query` that `body` (a row's `all_text`) matches, as
/// bits: the test a row's own text gets when it is ranked (a query answered
/// from the files matches each file's text so, then lets it go:
/// `index::bodies`).
pub fn text_bits(query: &Query, body: &str) -> u32 {
    let none = super::doc::RowText {
        name: None,
        summary: None,
        first_message: "",
        cwd: "",
        id: "",
    };
    let doc = super::SearchDoc::of_row(none, body, Default::default());
    let mut fz = super::query::Fuzzy::new();
    let mask = body_mask(query);
    query
        .terms
        .iter()
        .enumerate()
        .take(32)
        .filter(|&(i, t)| mask & 1 << i != 0 && t.local_score(&doc, query.parts, &mut fz).is_some())
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// The terms that are matched against bodies, as bits.
pub fn body_mask(q: &Query) -> u32 {
    q.terms
        .iter()
        .enumerate()
        .take(32)
        .filter(|(_, t)| t.searches_body())
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// Whether `query` looks at entries at all: it parses and has a term
/// matched against bodies (words of 3+ characters, phrases, regexes).
pub fn looks_at_entries(query: &Query) -> bool {
    query.error().is_none() && body_mask(query) != 0
}

/// The entries of one session (in file order) that match at least one of
/// `query`'s body terms in the parts its `in:` scopes name, in file order.
/// Filters and short fields are the session's business (the caller has
/// decided the session matches); this says where in it.
pub fn entry_hits(entries: &[Entry], query: &Query) -> Vec<EntryHit> {
    if !looks_at_entries(query) {
        return Vec::new();
    }
    let mut norm = String::new();
    // Most lines of a long session hold none of the terms: their bytes say
    // so without parsing them.
    let mut filter = LineFilter::new(query);
    entries
        .iter()
        .filter(|e| e.raw.unparsed_line().is_none_or(|l| filter.may_match(&l)))
        // Read through `with`: a pass over every entry keeps no parsed objects.
        .filter_map(|e| e.raw.with(|raw| entry_hit(e, raw, query, &mut norm)))
        .collect()
}

/// What one entry's parts (in scope) hold of a query's body terms.
struct Matched {
    /// Bit `i`: term `i` matched.
    terms: u32,
    /// The best rank each term matched in.
    best_tier: [usize; 32],
    /// The first match in the best-ranked part: the part, the snippet
    /// around it and where the match is in the snippet (made as it is
    /// found: the part's text, of any length, is not kept).
    first: Option<(Part, String, Range<usize>)>,
}

/// The one test of an entry against a query's body terms: every hit the
/// preview lists, the tree steps through and `arbor search` prints comes
/// from here.
fn match_entry(raw: &Map<String, Value>, query: &Query, norm: &mut String) -> Matched {
    let mut m = Matched {
        terms: 0,
        best_tier: [usize::MAX; 32],
        first: None,
    };
    let mask = body_mask(query);
    parts_of_entry(raw, &mut |part, text| {
        if !query.parts.contains(part) {
            return;
        }
        // A long text is matched a block at a time, never copied whole.
        let found = match find_in_long(&query.terms, mask, text) {
            Some(found) => found,
            None => {
                if !part_normal_form(text, norm) {
                    return;
                }
                query
                    .terms
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        (i < 32 && mask & (1 << i) != 0)
                            .then(|| t.find_in(norm))
                            .flatten()
                    })
                    .collect()
            }
        };
        let mut at: Option<Range<usize>> = None;
        for (i, r) in found.into_iter().enumerate().take(32) {
            if let Some(r) = r {
                m.terms |= 1 << i;
                m.best_tier[i] = m.best_tier[i].min(part.tier());
                if at.as_ref().is_none_or(|a| r.start < a.start) {
                    at = Some(r);
                }
            }
        }
        if let Some(r) = at {
            let better = m
                .first
                .as_ref()
                .is_none_or(|(p, _, _)| part.tier() < p.tier());
            if better {
                if let Some(orig) = original_range(text, r) {
                    let (snip, highlight) = snippet(text, orig);
                    m.first = Some((part, snip, highlight));
                }
            }
        }
    });
    m
}

/// `e`'s hit (its object is `raw`), when it has one.
fn entry_hit(
    e: &Entry,
    raw: &Map<String, Value>,
    query: &Query,
    norm: &mut String,
) -> Option<EntryHit> {
    let Matched {
        terms,
        best_tier,
        first,
    } = match_entry(raw, query, norm);
    let (part, snippet, highlight) = first?;
    let score = query
        .terms
        .iter()
        .enumerate()
        .take(32)
        .filter(|(i, _)| terms & (1 << i) != 0)
        .filter_map(|(i, t)| t.body_score(best_tier[i]))
        .sum();
    Some(EntryHit {
        entry_id: e.id.to_string(),
        index: e.index,
        role: e
            .role()
            .map(str::to_string)
            .unwrap_or_else(|| e.entry_type().to_string()),
        timestamp: e.timestamp().map(str::to_string),
        part,
        terms,
        score,
        snippet,
        highlight,
    })
}

/// Tells from a line's bytes, without parsing it, that no body term of a
/// query can match in it (so that most lines of a long session are never
/// parsed): each term's [`LineNeeds`], and the parts in scope.
pub struct LineFilter {
    /// Per body term: what a line needs for it to match there.
    needs: Vec<LineNeeds>,
    /// The scope has user or assistant text (on most lines).
    text_parts: bool,
    lower: Vec<u8>,
}

impl LineFilter {
    pub fn new(query: &Query) -> LineFilter {
        let mask = body_mask(query);
        LineFilter {
            needs: query
                .terms
                .iter()
                .enumerate()
                .take(32)
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, t)| LineNeeds::of(t))
                .collect(),
            text_parts: query.parts.contains(Part::User) || query.parts.contains(Part::Assistant),
            lower: Vec::new(),
        }
    }

    /// False when no body term can match in this line.
    pub fn may_match(&mut self, line: &[u8]) -> bool {
        if self.needs.is_empty() || (!self.text_parts && !may_have_other_parts(line)) {
            return false;
        }
        if self.needs.iter().any(LineNeeds::is_empty) || may_spell_letters(line) {
            return true;
        }
        if line.len() > LONG_LINE {
            // Lowercased a block at a time, never copied whole.
            let lower = &mut self.lower;
            return self.needs.iter().any(|n| n.held_by_line(line, lower));
        }
        self.lower.clear();
        self.lower.extend(line.iter().map(u8::to_ascii_lowercase));
        let lower = &self.lower;
        self.needs.iter().any(|n| n.held_by(lower))
    }
}

/// The hit of one line of a session file (its entry is the `index`th),
/// when `filter` lets it through and it matches.
pub fn line_hit(
    index: usize,
    line: &[u8],
    query: &Query,
    filter: &mut LineFilter,
    norm: &mut String,
) -> Option<EntryHit> {
    if !filter.may_match(line) {
        return None;
    }
    let map = arbor_session::reader::parse_object(line, &mut false)?;
    let e = Entry::new(index, map);
    e.raw.with(|raw| entry_hit(&e, raw, query, norm))
}

/// The entries of the session file at `path` that match `query`, as
/// [`entry_hits`] finds them in the read session, but streamed: the file
/// is read a cache-sized chunk at a time and only the lines a term may be
/// in are parsed (a match is most often in a few of a long session's
/// lines). Files whose entries the reader makes up (versions 1 and 2, whose
/// ids it assigns; other agents' files, which it translates) are read
/// whole.
pub fn file_entry_hits(path: &Path, query: &Query) -> Result<Vec<EntryHit>, arbor_session::Error> {
    file_entry_hits_until(path, query, &|| false)
}

/// [`file_entry_hits`], stopping early (with the hits found so far) once
/// `stop` says the answer is no longer wanted; it is asked every few
/// hundred lines.
pub fn file_entry_hits_until(
    path: &Path,
    query: &Query,
    stop: &dyn Fn() -> bool,
) -> Result<Vec<EntryHit>, arbor_session::Error> {
    if !looks_at_entries(query) {
        return Ok(Vec::new());
    }
    let whole = || arbor_session::read_session(path).map(|s| entry_hits(&s.entries, query));
    if arbor_session::foreign::detect_path(path).is_some() {
        return whole();
    }
    let (mut f, _) = arbor_session::open::open_session_file(path)?;
    let mut filter = LineFilter::new(query);
    let mut norm = String::new();
    let mut hits = Vec::new();
    // Entries are numbered from the header's line on; `None` until the
    // first object, which must be a version 3 header.
    let mut index: Option<usize> = None;
    let mut read_whole = false;
    // A line too long to hold is parsed from the file a block at a time
    // (see `arbor_session::lifted`), through a second handle.
    let again = f.try_clone().ok();
    with_read_buffer(|buf| {
        read_lines_capped(&mut f, buf, LIFT_LINE, |piece| {
            let line = match piece {
                Piece::Line(line, _, _) => line,
                Piece::Long(start, end, _) => {
                    let Some(i) = index else {
                        // A header no reader would hold: read as before.
                        read_whole = true;
                        return false;
                    };
                    let obj = again
                        .as_ref()
                        .and_then(|file| FileLine { file, start, end }.parse());
                    let e = obj.map(|obj| Entry::new(i, obj));
                    if let Some(h) =
                        e.and_then(|e| e.raw.with(|raw| entry_hit(&e, raw, query, &mut norm)))
                    {
                        hits.push(h);
                    }
                    index = Some(i + 1);
                    return !(i % 256 == 255 && stop());
                }
            };
            match index {
                Some(i) => {
                    if let Some(h) = line_hit(i, line, query, &mut filter, &mut norm) {
                        hits.push(h);
                    }
                    index = Some(i + 1);
                    if i % 256 == 255 && stop() {
                        return false;
                    }
                }
                None => {
                    if let Some(obj) = arbor_session::reader::parse_object(line, &mut false) {
                        match arbor_session::Header::from_object(obj) {
                            Some(h) if h.version >= 3 => index = Some(0),
                            _ => {
                                read_whole = true;
                                return false;
                            }
                        }
                    }
                }
            }
            true
        })
    })
    .map_err(|source| arbor_session::Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if read_whole || index.is_none() {
        return whole();
    }
    Ok(hits)
}

/// Per entry of `session` (in its order): which of `query`'s body terms
/// match in it (see [`entry_hits`]), read on all cores, a block of lines
/// at a time, most lines never parsed (see [`LineFilter`]). `None` when
/// `stale` said the answer is no longer wanted.
pub fn session_term_bits(
    session: &arbor_session::Session,
    query: &Query,
    stale: &(dyn Fn() -> bool + Sync),
) -> Option<EntryTermBits> {
    use rayon::prelude::*;
    let n = session.entries.len();
    if !looks_at_entries(query) {
        return Some(EntryTermBits::new(n, 0));
    }
    // Written in place, a block of entries per task: a bit per term per
    // entry (a `u32` an entry was 4 MB at a million entries).
    let mut out = EntryTermBits::new(n, query.terms.len());
    let done = out
        .par_blocks_mut()
        .zip(session.entries.par_chunks(BLOCK))
        .all(|(out, chunk)| {
            if stale() {
                return false;
            }
            let mut filter = LineFilter::new(query);
            let mut norm = String::new();
            let mut k = 0;
            session.for_each_line(chunk, |e, line| {
                let bits = match line {
                    Some(l) if !filter.may_match(l) => 0,
                    Some(l) => arbor_session::reader::parse_object(l, &mut false)
                        .map_or(0, |raw| match_entry(&raw, query, &mut norm).terms),
                    None => e.raw.with(|raw| match_entry(raw, query, &mut norm).terms),
                };
                set_in_block(out, k, bits);
                k += 1;
            });
            true
        });
    done.then_some(out)
}

/// Where each term of `query` occurs in `text` (shown text: a row, a line
/// of the detail pane, a snippet), as sorted byte ranges of `text`. Words
/// of any length are looked for here (the tree matches short words in what
/// it shows); phrases and regexes are matched on the normalized text, as
/// the search matches them, and mapped back.
pub fn match_ranges(query: &Query, text: &str) -> Vec<Range<usize>> {
    if query.terms.is_empty() || text.is_empty() {
        return Vec::new();
    }
    // The normalized text, and for each of its bytes the original
    // character that made it.
    let mut norm = String::with_capacity(text.len());
    let mut from: Vec<(usize, usize)> = Vec::with_capacity(text.len());
    let mut in_space = true;
    for (i, ch) in text.char_indices() {
        let orig = (i, i + ch.len_utf8());
        if ch.is_whitespace() {
            if !in_space {
                norm.push(' ');
                from.push(orig);
                in_space = true;
            }
        } else {
            for l in ch.to_lowercase() {
                norm.push(l);
                from.extend(std::iter::repeat_n(orig, l.len_utf8()));
            }
            in_space = false;
        }
    }
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut push = |r: Range<usize>| {
        if r.is_empty() || r.end > from.len() {
            return;
        }
        out.push(from[r.start].0..from[r.end - 1].1);
    };
    for t in &query.terms {
        match t {
            Term::Word { lower, .. } => {
                for at in memchr::memmem::find_iter(norm.as_bytes(), lower.as_bytes()) {
                    push(at..at + lower.len());
                }
            }
            Term::Phrase(p) => {
                for at in memchr::memmem::find_iter(norm.as_bytes(), p.as_bytes()) {
                    push(at..at + p.len());
                }
            }
            Term::Regex(r) => {
                for m in r.find_iter(&norm).take(10_000) {
                    push(m.range());
                }
            }
        }
    }
    out.sort_by_key(|r| (r.start, r.end));
    out
}

/// A term's first match in one part's original text, as a byte range of
/// it (for highlighting the match where the text is shown whole).
pub fn find_in_original(t: &Term, text: &str) -> Option<Range<usize>> {
    let mut norm = String::new();
    normalize(text, &mut norm);
    original_range(text, t.find_in(&norm)?)
}

/// About [`SNIPPET_CHARS`] characters of `text` around `m`, whitespace
/// runs as one space, with `…` where it was cut; and where `m` is in it.
pub fn snippet(text: &str, m: Range<usize>) -> (String, Range<usize>) {
    const BEFORE: usize = 40;
    // Escape sequences go whole before the text is cut: a cut through one
    // would leave `[32m` that no sanitizer can tell from text.
    let (text, m) = arbor_session::escapes::strip_escapes_keeping(text, m);
    let text = &*text;
    // Start a few characters before the match, at a character boundary.
    let start = text[..m.start]
        .char_indices()
        .rev()
        .take(BEFORE)
        .last()
        .map_or(m.start, |(i, _)| i);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let (mut hl_start, mut hl_end) = (None, None);
    let mut chars = 0;
    let mut in_space = true;
    let mut cut = false;
    for (i, c) in text[start..].char_indices() {
        let at = start + i;
        if at >= m.end && hl_end.is_none() {
            hl_end = Some(out.len());
        }
        if at >= m.end && chars >= SNIPPET_CHARS {
            cut = true;
            break;
        }
        if at >= m.start && hl_start.is_none() {
            hl_start = Some(out.len());
        }
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                in_space = true;
                chars += 1;
            }
        } else {
            out.push(c);
            in_space = false;
            chars += 1;
        }
    }
    let kept = out.trim_end().len();
    out.truncate(kept);
    let end = hl_end.unwrap_or(kept).min(kept);
    let hl = hl_start.unwrap_or(end).min(end)..end;
    if cut {
        out.push('…');
    }
    (out, hl)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

    fn entries(lines: &[&str]) -> Vec<Entry> {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let m: Map<String, Value> = serde_json::from_str(l).unwrap();
                Entry::new(i + 1, m)
            })
            .collect()
    }

    fn session() -> Vec<Entry> {
        entries(&[
            r#"{"type":"message","id":"u1","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"Why does the Parser panic?"}}"#,
            r#"{"type":"message","id":"a1","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Check the parser's stack trace first."},{"type":"text","text":"Let me run the tests."},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"cargo test parser"}}]}}"#,
            r#"{"type":"message","id":"r1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"thread 'main' panicked at src/parser.rs:42:\n  index   out of bounds"}]}}"#,
            r#"{"type":"branch_summary","id":"b1","timestamp":"2026-01-01T00:00:03.000Z","fromId":"r1","summary":"Tried the parser fix."}"#,
            r#"{"type":"custom_message","id":"c2","timestamp":"2026-01-01T00:00:04.000Z","customType":"x","content":"an extension's note about bounds"}"#,
        ])
    }

    fn ids(q: &str) -> Vec<String> {
        entry_hits(&session(), &Query::parse(q))
            .into_iter()
            .map(|h| h.entry_id)
            .collect()
    }

    #[test]
    fn hits_are_the_entries_that_contain_the_match_in_file_order() {
        assert_eq!(ids("parser"), ["u1", "a1", "r1", "b1"]);
        assert_eq!(ids("panicked"), ["r1"]);
        assert_eq!(ids("\"index out of bounds\""), ["r1"]);
        assert_eq!(ids("re:src/\\w+\\.rs:\\d+"), ["r1"]);
        assert_eq!(ids("bounds"), ["r1", "c2"]);
        assert!(ids("zebra").is_empty());
        // Words of 1–2 (Latin) characters never look at bodies.
        assert!(ids("rs").is_empty());
    }

    #[test]
    fn scopes_narrow_the_parts() {
        assert_eq!(ids("parser in:user"), ["u1"]);
        assert_eq!(ids("parser in:thinking"), ["a1"]);
        assert_eq!(ids("parser in:tools"), ["a1", "r1"]);
        assert_eq!(ids("parser in:other"), ["b1"]);
        assert_eq!(ids("bounds in:other"), ["c2"]);
        assert_eq!(ids("parser in:user,other"), ["u1", "b1"]);
        assert_eq!(ids("parser in:user in:other"), ["u1", "b1"]);
        assert!(ids("tests in:user").is_empty());
        assert_eq!(ids("tests in:assistant"), ["a1"]);
        let q = Query::parse("parser in:nowhere");
        assert!(q.error().is_some_and(|e| e.contains("in: takes")));
        assert!(entry_hits(&session(), &q).is_empty());
    }

    #[test]
    fn each_hit_says_where_with_a_snippet() {
        let hits = entry_hits(&session(), &Query::parse("\"index out of bounds\""));
        let h = &hits[0];
        assert_eq!(h.role, "toolResult");
        assert_eq!(h.part, Part::ToolOutput);
        assert_eq!(h.timestamp.as_deref(), Some("2026-01-01T00:00:02.000Z"));
        // The original text (case kept, whitespace runs one space).
        assert_eq!(&h.snippet[h.highlight.clone()], "index out of bounds");
        assert!(h.snippet.contains("panicked at src/parser.rs:42:"));
        let b = &entry_hits(&session(), &Query::parse("tried"))[0];
        assert_eq!((b.role.as_str(), b.part), ("branch_summary", Part::Other));
        assert_eq!(&b.snippet[b.highlight.clone()], "Tried");
    }

    #[test]
    fn conversation_text_outranks_tool_calls_outranking_output() {
        let hits = entry_hits(&session(), &Query::parse("parser"));
        let score = |id: &str| hits.iter().find(|h| h.entry_id == id).unwrap().score;
        // a1 has it in thinking and in a tool call: the call's rank counts.
        assert_eq!(hits[1].part, Part::ToolCall);
        assert!(score("u1") > score("a1") && score("a1") > score("r1"));
        assert_eq!(score("u1"), score("b1"));
    }

    #[test]
    fn snippets_cut_long_text_around_the_match() {
        let text = format!("{} needle {}", "a ".repeat(200), "b ".repeat(200));
        let at = text.find("needle").unwrap();
        let (s, h) = snippet(&text, at..at + 6);
        assert_eq!(&s[h.clone()], "needle");
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.chars().count() <= SNIPPET_CHARS + 50, "{s}");
        let (s, h) = snippet("Short  END", 7..10);
        assert_eq!((s.as_str(), &s[h]), ("Short END", "END"));
        let (s, h) = snippet("ÉCOLE x", 0..6);
        assert_eq!(&s[h], "ÉCOLE");
    }

    #[test]
    fn snippets_hold_no_part_of_an_escape_sequence() {
        // The window starts 40 characters before the match: here inside
        // the colour code, which must go whole all the same.
        let text = format!("x\x1b[32m{}\x1b[39m needle", "✓".repeat(39));
        let at = text.find("needle").unwrap();
        let (s, h) = snippet(&text, at..at + 6);
        assert_eq!(&s[h], "needle");
        assert!(!s.contains("[3") && !s.contains('\x1b'), "{s:?}");
    }

    #[test]
    fn the_part_matcher_agrees_with_entry_hits() {
        let q = Query::parse("parser \"out of bounds\" zebra");
        let mut m = PartMatcher::new(&q, Parts::ALL);
        for e in session() {
            parts_of_entry(&e.raw, &mut |p, t| {
                m.feed(p, t);
            });
        }
        assert_eq!(m.tiers, [0b01, 0b01, 0b11]);
        assert!(!m.complete());
        let mut only_tools = PartMatcher::new(&q, Parts::of_scope(crate::Scope::Tools));
        for e in session() {
            parts_of_entry(&e.raw, &mut |p, t| {
                only_tools.feed(p, t);
            });
        }
        assert_eq!(only_tools.tiers, [0, 0b01, 0b11]);
    }

    #[test]
    fn lines_match_as_their_decoded_parts_do() {
        // Cut from the lines' bytes (escapes, blocks joined, whitespace
        // runs, a repeated long output skipped, a line the skim refuses)
        // and matched per piece: the same tiers as each decoded part.
        let long = "x".repeat(300);
        let lines = [
            r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#.to_string(),
            r#"{"type":"message","id":"u1","message":{"role":"user","content":"Why does the \u0050arser  PANIC?\nout\tof"}}"#.to_string(),
            r#"{"type":"message","id":"a1","message":{"role":"assistant","content":[{"type":"thinking","thinking":"Check the stack"},{"type":"text","text":"Hello"},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"cargo  test","n":[42,{"deep":"Zebra"}]}},{"type":"text","text":"there"}]}}"#.to_string(),
            format!(r#"{{"type":"message","id":"r1","message":{{"role":"toolResult","content":[{{"type":"text","text":"index out of\n bounds {long}"}}]}}}}"#),
            format!(r#"{{"type":"message","id":"r2","message":{{"role":"toolResult","content":[{{"type":"text","text":"index out of\n bounds {long}"}}]}}}}"#),
            r#"{"type":"message","id":"r3","message":{"role":"bashExecution","command":"make","output":"caf\u00e9 ok"}}"#.to_string(),
            // An escaped key: the skim hands the line to the decoder.
            r#"{"t\u0079pe":"message","id":"u2","message":{"role":"user","content":"escaped key stack"}}"#.to_string(),
            r#"{"type":"branch_summary","id":"b1","summary":"Tried   the fix."}"#.to_string(),
            r#"{"type":"custom_message","id":"c2","customType":"x","content":[{"type":"text","text":"a note"},{"type":"text","text":"about bounds"}]}"#.to_string(),
            // Output ending in whitespace; a command without output.
            r#"{"type":"message","id":"r4","message":{"role":"toolResult","content":"build failed \n"}}"#.to_string(),
            r#"{"type":"message","id":"r5","message":{"role":"bashExecution","command":"true"}}"#.to_string(),
        ];
        for q in [
            "parser panic",
            "\"the parser panic\"",
            "\"panic? out of\"",
            "\"hello there\"",
            "\"cargo test 42 zebra\"",
            "\"out of bounds xxx\"",
            "\"café ok\"",
            "\"tried the fix\"",
            "\"note about\"",
            "\"escaped key\"",
            r"re:test\s42",
            r"re:^index",
            r"re:bounds x+$",
            "stack in:thinking",
            "zebra in:tools",
            r"re:failed$ in:tools",
            r"re:^true$",
        ] {
            let (by_line, by_part) = tiers_both_ways(q, &lines);
            assert_eq!(by_line, by_part, "{q}");
            assert_ne!(by_part, Tiers::default(), "{q} matches");
        }
        // A part's normal form has no space at its end, and a part without
        // text is not matched: both ways agree on that too.
        for q in [r"re:failed\s", r"re:^$ in:tools"] {
            let none = (Tiers::default(), Tiers::default());
            assert_eq!(tiers_both_ways(q, &lines), none, "{q}");
        }
    }

    /// The tiers `q` finds in `lines` read as lines (their words), and
    /// through their decoded parts.
    fn tiers_both_ways(q: &str, lines: &[String]) -> (Tiers, Tiers) {
        let q = Query::parse(q);
        let mut by_line = PartMatcher::new(&q, Parts::ALL);
        let mut by_part = PartMatcher::new(&q, Parts::ALL);
        for l in lines {
            by_line.line(l.as_bytes());
            parts_of_line(l.as_bytes(), &mut |p, t| {
                by_part.feed(p, t);
            });
        }
        (by_line.tiers, by_part.tiers)
    }
}
