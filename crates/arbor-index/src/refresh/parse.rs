//! Reading a session file (or only its appended bytes): its row, its
//! scanner state and the words of its searchable text.

use std::fs::File;
use std::io::{Seek, SeekFrom};
use std::path::Path;

use crate::codec::{self};
use crate::terms::{pair_left, pair_right, PairSet, Sides, TermSet, EMPTY_SIDE};
use arbor_session::info::{mtime_ms, read_lines, with_read_buffer, InfoScanner, SessionInfo};
use arbor_session::line_skim::{skim_line, LineSpans};
use arbor_session::searchable::{
    may_have_other_parts, part_words_of, parts_of_line, skim_part_words, Part, Parts, SeenPieces,
};
use arbor_session::words::str_words;
use arbor_session::Error as SessionError;
use arbor_store::scan::{ScanProblem, SessionFile};

use super::detect::{fingerprints, Stat};
use super::rows::Cached;

/// The outcome of parsing one file (or its new bytes).
pub struct Parsed {
    pub file: SessionFile,
    /// `Some((id, parsed))`: only the bytes after `parsed` were read and the
    /// stored row `id` is continued; `None`: the file was read from the start.
    pub continued: Option<(i64, u64)>,
    pub stat: Stat,
    pub parsed: u64,
    pub head_fp: i64,
    pub tail_fp: i64,
    /// The resumable state at `parsed`, or why this is not a session.
    pub state: Result<Option<SessionInfo>, String>,
    /// The row to show (state plus a partial last line).
    pub row: Option<SessionInfo>,
    /// The row differs from `state` (a partial last line was applied).
    pub row_differs: bool,
    /// Normalized new text of complete lines, and of the partial last line.
    pub text: String,
    /// The distinct terms and adjacent word pairs of `text` (see
    /// `terms::distinct_pair_ranges`; found on the worker thread, so that the
    /// single writer only merges them).
    pub text_words: Option<PartText>,
    /// The words of the parts not kept as text (tool calls and output,
    /// thinking, custom messages and summaries) of the new complete lines:
    /// per part, their normalized text and its distinct terms.
    pub part_words: Vec<PartText>,
    /// The pair sides that `text_words`' and `part_words`' pairs name.
    pub sides: Sides,
    pub tail_text: Option<String>,
    pub bytes_parsed: u64,
}

/// One part's distinct terms (byte ranges of `text`, which holds them one
/// after another) and its distinct adjacent word pairs (a pair never spans
/// two of the part's pieces, e.g. two tool outputs).
pub struct PartText {
    pub part: Part,
    pub text: String,
    pub terms: Vec<(u32, u32)>,
    /// The pairs' keys (`terms::pair_key`) in the numbering of the file's
    /// [`Parsed::sides`], each once: the writer renumbers the sides once
    /// per file instead of hashing each pair's bytes.
    pub pairs: Vec<u64>,
}

/// The words of the parts the index keeps no text for, gathered line by
/// line: per part, a set of its distinct words and one of its distinct
/// pairs of adjacent words (never across two pieces of it).
///
/// A pair is kept as the numbers of its two sides (`terms::pair_left` of
/// the first word, `pair_right` of the second), found once per distinct
/// word: each occurrence then costs two array reads and an append, and the
/// pair's bytes are written once per distinct pair of sides at the end.
struct PartWords {
    sets: PartSets,
    scratch: Vec<u8>,
    /// The long pieces skimmed so far in this file (see [`SeenPieces`]).
    seen: SeenPieces,
    wanted: Parts,
}

const NO_WORD: u32 = u32::MAX;

impl Default for PartWords {
    fn default() -> Self {
        PartWords {
            sets: PartSets {
                words: Default::default(),
                word_sides: Default::default(),
                sides: TermSet::default(),
                pairs: Default::default(),
                prev: [NO_WORD; 6],
            },
            scratch: Vec::new(),
            seen: SeenPieces::default(),
            wanted: Part::ALL
                .into_iter()
                .filter(|p| !p.is_text())
                .fold(Parts::NONE, |ps, p| ps.union(Parts::one(p))),
        }
    }
}

/// Every part's sets of words and pairs (see [`PartWords`]).
struct PartSets {
    /// Per part (by code), its distinct words so far.
    words: [TermSet; 6],
    /// Per part, per word number: the numbers (in `sides`) of its left and
    /// right sides, `EMPTY_SIDE` where that side is empty.
    word_sides: [Vec<(u32, u32)>; 6],
    /// The distinct sides of every part's words.
    sides: TermSet,
    /// Per part, its distinct pairs so far, as side numbers.
    pairs: [PairSet; 6],
    /// Per part, the left side of the word before in the current piece
    /// (`NO_WORD`: a piece starts).
    prev: [u32; 6],
}

/// Adds one word of `part` (an empty one: a new piece starts).
#[inline]
fn add_word(sets: &mut PartSets, part: Part, w: &[u8]) {
    let code = usize::from(part.code());
    let Some(n) = sets.words[code].index_of(w) else {
        sets.prev[code] = NO_WORD;
        return;
    };
    let word_sides = &mut sets.word_sides[code];
    if n as usize == word_sides.len() {
        let left = sets.sides.index_of(pair_left(w)).unwrap_or(EMPTY_SIDE);
        let right = sets.sides.index_of(pair_right(w)).unwrap_or(EMPTY_SIDE);
        word_sides.push((left, right));
    }
    let Some(&(left, right)) = word_sides.get(n as usize) else {
        sets.prev[code] = NO_WORD;
        return;
    };
    let prev = sets.prev[code];
    if prev != NO_WORD && (prev != EMPTY_SIDE || right != EMPTY_SIDE) {
        sets.pairs[code].insert(prev, right);
    }
    sets.prev[code] = left;
}

impl PartWords {
    fn line(&mut self, line: &[u8]) {
        self.words(line, None);
    }

    /// [`PartWords::line`] for a line already skimmed (`spans`).
    fn skimmed(&mut self, line: &[u8], spans: &LineSpans) {
        self.words(line, Some(spans));
    }

    /// The words of `line`, skimmed (from its `spans` when it was skimmed
    /// already, else from the bytes); an unusual line is decoded (same
    /// words).
    fn words(&mut self, line: &[u8], spans: Option<&LineSpans>) {
        let sets = &mut self.sets;
        let mut add = |part: Part, w: &[u8]| add_word(sets, part, w);
        let (wanted, scratch, seen) = (self.wanted, &mut self.scratch, &mut self.seen);
        let skimmed = match spans {
            None => skim_part_words(line, wanted, scratch, seen, &mut add),
            Some(spans) => part_words_of(spans, wanted, scratch, seen, &mut add),
        };
        if !skimmed {
            self.decoded(line);
        }
    }

    /// The words of a line the skim refused, decoded.
    fn decoded(&mut self, line: &[u8]) {
        if !may_have_other_parts(line) {
            return;
        }
        let sets = &mut self.sets;
        let mut add = |part: Part, w: &[u8]| add_word(sets, part, w);
        let (wanted, scratch) = (self.wanted, &mut self.scratch);
        parts_of_line(line, &mut |part, t| {
            if wanted.contains(part) {
                // Each text handed out is a piece.
                add(part, b"");
                str_words(t, scratch, &mut |w| add(part, w));
            }
        });
    }

    /// This thread's spare sets, emptied, or new ones: their tables keep
    /// their size from the file before (see `terms::reset_table`).
    fn pooled() -> PartWords {
        SPARE_WORDS
            .with(|s| s.borrow_mut().take())
            .unwrap_or_default()
    }

    /// Empties the sets and keeps them for this thread's next file.
    fn recycle(mut self) {
        let sets = &mut self.sets;
        for pairs in &mut sets.pairs {
            pairs.clear();
        }
        for s in &mut sets.word_sides {
            s.clear();
        }
        if !sets.sides.is_empty() {
            sets.sides.take_parts();
        }
        // The words' tables were emptied by `finish`, when it ran.
        for words in &mut sets.words {
            if !words.is_empty() {
                words.take_parts();
            }
        }
        sets.prev = [NO_WORD; 6];
        self.seen.clear();
        SPARE_WORDS.with(|s| *s.borrow_mut() = Some(self));
    }

    /// The distinct terms and pairs of the stored (normalized) text, in
    /// the slot of the first text part, which the skim never fills (text
    /// parts are not `wanted`): its tokens go through the same sets as a
    /// part's words, so each occurrence costs one probe and an append.
    fn text_words(&mut self, text: &str) -> Option<PartText> {
        const SLOT: Part = Part::User;
        add_word(&mut self.sets, SLOT, b"");
        for t in text.as_bytes().split(|&b| b == b' ') {
            if !t.is_empty() {
                add_word(&mut self.sets, SLOT, t);
            }
        }
        self.finish_part(SLOT)
    }

    fn finish(&mut self) -> Vec<PartText> {
        Part::ALL
            .into_iter()
            .filter_map(|part| self.finish_part(part))
            .collect()
    }

    /// One part's words and pairs, taken out of its sets (`None`: it has
    /// none).
    fn finish_part(&mut self, part: Part) -> Option<PartText> {
        let code = usize::from(part.code());
        let sets = &mut self.sets;
        let (words, pairs) = (&mut sets.words[code], &mut sets.pairs[code]);
        if words.is_empty() {
            return None;
        }
        let (arena, terms) = words.take_parts();
        Some(PartText {
            part,
            // Words cut from UTF-8 text at character boundaries.
            text: String::from_utf8(arena).unwrap_or_default(),
            terms,
            pairs: pairs.take_keys(),
        })
    }

    /// The sides the pairs taken so far name (the next file numbers its
    /// own).
    fn take_sides(&mut self) -> Sides {
        Sides::new(self.sets.sides.take_parts())
    }
}

thread_local! {
    /// A parse worker's [`PartWords`] between files.
    static SPARE_WORDS: std::cell::RefCell<Option<PartWords>> =
        const { std::cell::RefCell::new(None) };
}

/// Normalized text without its possible trailing space.
fn trimmed(mut s: String) -> String {
    if s.ends_with(' ') {
        s.pop();
    }
    s
}

fn not_a_session(path: &Path, reason: &'static str) -> String {
    SessionError::NotASession {
        path: path.to_path_buf(),
        reason,
    }
    .to_string()
}

/// Where a read resumes: the offset, the scanner resumed there, and what
/// `Parsed::continued` records.
type Resume = (u64, InfoScanner, (i64, u64));

/// Where the stored state `cached` lets a read of `f` continue: the file
/// only grew (same device and inode, larger) and its fingerprints up to the
/// parsed offset are unchanged. Gives the offset, the scanner resumed from
/// the stored state and what `Parsed::continued` records.
fn resume_point(
    f: &mut File,
    cached: Option<&Cached>,
    stat: &Stat,
) -> std::io::Result<Option<Resume>> {
    if let Some(c) = cached {
        let grew = c.stat.dev == stat.dev && c.stat.ino == stat.ino && stat.size > c.stat.size;
        if let (true, Some(state)) = (grew && c.parsed > 0, c.state.as_deref()) {
            if fingerprints(f, c.parsed)? == (c.head_fp, c.tail_fp) {
                if let Some(info) = codec::decode(state) {
                    return Ok(Some((
                        c.parsed,
                        InfoScanner::resume(info),
                        (c.id, c.parsed),
                    )));
                }
            }
        }
    }
    Ok(None)
}

/// Reads `f` from `start` (where it is positioned), feeding each complete
/// line to the scanner `s` and its words to `words`, until the scanner
/// fails. Gives the bytes read, the end of the last complete line and the
/// partial last line, if any.
/// Bytes of a file parsed between two looks for a command to stop for
/// (a few milliseconds of parsing).
const PAUSE_EVERY: usize = 4 << 20;

fn read_lines_from(
    f: &mut File,
    start: u64,
    s: &mut InfoScanner,
    words: &mut PartWords,
) -> std::io::Result<(u64, u64, Option<Vec<u8>>)> {
    let mut complete_end = start;
    let mut tail: Option<Vec<u8>> = None;
    let mut unpaused = 0usize;
    let read = with_read_buffer(|buf| {
        read_lines(f, buf, |line, complete, end| {
            if complete {
                // A big file holds a core for seconds: a build behind
                // commands stops within it too (see `behind`).
                unpaused += line.len();
                if unpaused > PAUSE_EVERY {
                    unpaused = 0;
                    crate::behind::pause_while_busy();
                }
                let at = start + end - line.len() as u64 - 1;
                // The header (the first line read from the start) has no
                // parts; the other lines are skimmed once for the row and
                // the words.
                let spans = (start > 0 || complete_end > 0)
                    .then(|| skim_line(line))
                    .flatten();
                match spans {
                    Some(spans) => {
                        words.skimmed(line, &spans);
                        if !s.feed_skimmed_at(&spans, at) {
                            s.feed_at(line, true, at);
                        }
                    }
                    None => {
                        // Refused by the skim: decoded (the words' own skim
                        // is the same one, and would refuse it too).
                        if start > 0 || complete_end > 0 {
                            words.decoded(line);
                        }
                        s.feed_at(line, true, at);
                    }
                }
                complete_end = start + end;
                s.failed().is_none()
            } else {
                tail = Some(line.to_vec());
                true
            }
        })
    })?;
    Ok((read, complete_end, tail))
}

/// Parses `file`, continuing `cached` when the file only grew.
pub fn parse_file(file: &SessionFile, cached: Option<&Cached>) -> Result<Parsed, ScanProblem> {
    let path = &file.path;
    let problem = |e: SessionError| ScanProblem {
        path: path.clone(),
        reason: e.to_string(),
    };
    let io = |source| {
        problem(SessionError::Read {
            path: path.clone(),
            source,
        })
    };
    let (mut f, meta) = arbor_session::open::open_session_file(path).map_err(problem)?;
    let stat = Stat::of(&meta);
    if file.agent.is_foreign() {
        return parse_foreign(file, &mut f, &meta, stat);
    }
    let (start, scanner, continued) = match resume_point(&mut f, cached, &stat).map_err(io)? {
        Some((start, scanner, continued)) => (start, Some(scanner), Some(continued)),
        None => (0u64, None, None),
    };
    let mut s = scanner
        .unwrap_or_else(|| InfoScanner::new(path, mtime_ms(&meta)))
        .with_normalized_text();
    s.set_file_mtime(mtime_ms(&meta));
    f.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut words = PartWords::pooled();
    let (read, complete_end, tail) =
        read_lines_from(&mut f, start, &mut s, &mut words).map_err(io)?;
    // What was read is what the row describes (the file may grow meanwhile);
    // a file abandoned early (not a session) keeps its stat size.
    let size = if s.failed().is_some() {
        stat.size
    } else {
        start + read
    };
    let stat = Stat { size, ..stat };
    let (head_fp, tail_fp) = fingerprints(&mut f, complete_end).map_err(io)?;
    let text = trimmed(s.take_text());
    let mut out = Parsed {
        file: file.clone(),
        continued,
        stat,
        parsed: complete_end,
        head_fp,
        tail_fp,
        state: Ok(None),
        row: None,
        row_differs: false,
        text,
        text_words: None,
        part_words: Vec::new(),
        sides: Sides::default(),
        tail_text: None,
        bytes_parsed: read,
    };
    if let Some(reason) = s.failed() {
        out.state = Err(not_a_session(path, reason));
        out.text.clear();
        words.recycle();
        return Ok(out);
    }
    // Labels' entry texts: a few lines read again (see `session::extras`);
    // without them the row is still right.
    let _ = s.resolve_labels(&mut f);
    let state = s.info().cloned();
    let finished = match tail {
        Some(t) => {
            let mut s2 = s.clone();
            s2.feed(&t, false);
            let _ = s2.resolve_labels(&mut f);
            let tt = trimmed(s2.take_text());
            if !tt.is_empty() {
                out.tail_text = Some(tt);
            }
            out.row_differs = true;
            s2.finish()
        }
        None => s.finish(),
    };
    match finished {
        Ok(mut row) => {
            // A resumed state has no path (rows are stored without it).
            row.path = file.path.as_path().into();
            row.agent = file.agent;
            out.row = Some(row);
            // No header among the complete lines yet (only in the partial
            // one): nothing to resume from; the next change re-reads it all.
            out.state = Ok(state);
            if out.state.as_ref().is_ok_and(Option::is_none) {
                out.parsed = 0;
                out.text.clear();
            }
            out.text_words = words.text_words(&out.text);
            if !out.text.is_empty() || out.parsed > 0 {
                out.part_words = words.finish();
            }
            out.sides = words.take_sides();
        }
        Err(reason) => {
            out.state = Err(not_a_session(path, reason));
            out.parsed = 0;
            out.text.clear();
            out.tail_text = None;
        }
    }
    words.recycle();
    Ok(out)
}

/// Parses another agent's file (`session::foreign`): always whole, since a
/// translated line depends on the lines before it; the stored row then has
/// no resumable state, so the next change reads the file again.
fn parse_foreign(
    file: &SessionFile,
    f: &mut File,
    meta: &std::fs::Metadata,
    stat: Stat,
) -> Result<Parsed, ScanProblem> {
    let path = &file.path;
    let io = |source| ScanProblem {
        path: path.clone(),
        reason: SessionError::Read {
            path: path.clone(),
            source,
        }
        .to_string(),
    };
    let not_foreign = |f: &mut File| -> Result<Parsed, ScanProblem> {
        let (head_fp, tail_fp) = fingerprints(f, stat.size).map_err(io)?;
        Ok(Parsed {
            file: file.clone(),
            continued: None,
            stat,
            parsed: 0,
            head_fp,
            tail_fp,
            state: Err(not_a_session(
                path,
                "not a session of any agent arbor reads",
            )),
            row: None,
            row_differs: false,
            text: String::new(),
            text_words: None,
            part_words: Vec::new(),
            sides: Sides::default(),
            tail_text: None,
            bytes_parsed: 0,
        })
    };
    let Some(agent) = arbor_session::foreign::detect_path(path) else {
        return not_foreign(f);
    };
    let Some(mut t) = arbor_session::foreign::Translator::new(agent, path) else {
        return not_foreign(f);
    };
    // Translated as it is read, line by line (bounded memory): the row,
    // the text and every part's words (tool calls and output, thinking, …)
    // as for an Atomic file.
    let mut s = InfoScanner::new(path, mtime_ms(meta)).with_normalized_text();
    let mut words = PartWords::pooled();
    let mut header = true;
    let mut feed = |l: &[u8], c: bool| {
        // The header has no parts.
        if c && !std::mem::take(&mut header) {
            words.line(l);
        }
        s.feed(l, c);
    };
    f.seek(SeekFrom::Start(0)).map_err(io)?;
    let size = with_read_buffer(|buf| {
        read_lines(f, buf, |line, complete, _| {
            t.feed_lines(line, complete, &mut feed);
            true
        })
    })
    .map_err(io)?;
    let branch = t.git_branch().map(str::to_string);
    t.finish_lines(&mut feed);
    let (head_fp, tail_fp) = fingerprints(f, size).map_err(io)?;
    let mut out = Parsed {
        file: file.clone(),
        continued: None,
        stat: Stat { size, ..stat },
        parsed: 0,
        head_fp,
        tail_fp,
        state: Ok(None),
        row: None,
        row_differs: false,
        text: String::new(),
        text_words: None,
        part_words: Vec::new(),
        sides: Sides::default(),
        tail_text: None,
        bytes_parsed: size,
    };
    out.text = trimmed(s.take_text());
    match s.finish() {
        Ok(mut row) => {
            row.path = file.path.as_path().into();
            row.agent = file.agent;
            row.git_branch = branch;
            out.row = Some(row);
            // Stored as a finished row (there is no state to resume): without
            // it the file counted as not indexed, and every warm listing read
            // every foreign file again (10 s instead of 0.4 s for 6,666 of
            // them among 10,000 sessions).
            out.row_differs = true;
            out.text_words = words.text_words(&out.text);
            out.part_words = words.finish();
            out.sides = words.take_sides();
        }
        Err(reason) => {
            out.state = Err(not_a_session(path, reason));
            out.text.clear();
        }
    }
    words.recycle();
    Ok(out)
}

impl Parsed {
    /// Roughly the bytes this result holds.
    pub(super) fn weight(&self) -> usize {
        let words = |w: &PartText| w.text.len() + w.terms.len() * 8 + w.pairs.len() * 8;
        self.text.len()
            + self.text_words.as_ref().map_or(0, words)
            + self.part_words.iter().map(words).sum::<usize>()
            + self.sides.bytes()
            + 1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairs found by side numbers are the pairs the text path finds
    /// (`terms::distinct_pair_ranges`) in the same words, and a pair never
    /// joins two tool outputs.
    #[test]
    fn part_pairs_are_the_texts_pairs() {
        let outputs = [
            "Error: cannot borrow `x` as mutable at src/main.rs:42:7 because it is also borrowed",
            "thumbnail thumbnails ÉTÉ été 12 a/b ab cd ab cd averyveryverylongwordbeyondsixteen x",
        ];
        let line = |id: usize, text: &str| {
            serde_json::json!({"type":"message","id":format!("e{id}"),"parentId":null,
                "timestamp":"2026-01-01T00:00:00Z",
                "message":{"role":"toolResult","toolCallId":"c","toolName":"bash",
                    "content":[{"type":"text","text":text}],"isError":false,"timestamp":1}})
            .to_string()
        };
        let mut words = PartWords::default();
        for (i, t) in outputs.iter().enumerate() {
            words.line(line(i, t).as_bytes());
        }
        let parts = words.finish();
        let sides = words.take_sides();
        let out = parts
            .iter()
            .find(|p| p.part == Part::ToolOutput)
            .expect("tool output words");
        let slice = |&(s, n): &(u32, u32)| out.text[s as usize..(s + n) as usize].to_string();
        let pair = |&k: &u64| String::from_utf8(sides.pair(k)).unwrap();
        let mut got: Vec<String> = out.pairs.iter().map(pair).collect();
        got.sort();
        let mut want: Vec<String> = Vec::new();
        for t in outputs {
            let n = arbor_session::normalize::normalized(t);
            let b = n.as_bytes();
            for (s, l) in crate::terms::distinct_pair_ranges(&n, &[]) {
                let p = String::from_utf8(b[s as usize..(s + l) as usize].to_vec()).unwrap();
                if !want.contains(&p) {
                    want.push(p);
                }
            }
        }
        want.sort();
        assert_eq!(got, want);
        assert!(!got.iter().any(|p| p == "borrowed thumbnail"));
        let mut terms: Vec<String> = out.terms.iter().map(slice).collect();
        terms.sort();
        assert!(terms.contains(&"averyveryverylongwordbeyondsixteen".to_string()));
        assert!(terms.contains(&"été".to_string()));
    }

    /// The stored text's terms and pairs, gathered through the part sets,
    /// are the text's distinct tokens and `terms::distinct_pair_ranges`,
    /// and the sets are reused clean for the next file.
    #[test]
    fn text_words_are_the_texts_tokens_and_pairs() {
        use crate::terms::{distinct_pair_ranges, distinct_tokens};
        let texts = [
            "error: cannot borrow `x` at src/main.rs:42:7 because 42 of été été x",
            "a b a b averyveryverylongwordbeyondsixteen averyveryverylongwordbeyondsixteen fn main",
            "one",
            "",
        ];
        let mut words = PartWords::default();
        for text in texts {
            let got = words.text_words(text);
            let Some(got) = got else {
                assert!(text.is_empty());
                continue;
            };
            let slice = |&(s, n): &(u32, u32)| got.text[s as usize..(s + n) as usize].to_string();
            let mut terms: Vec<String> = got.terms.iter().map(slice).collect();
            let mut want: Vec<String> = distinct_tokens(text)
                .into_iter()
                .map(|t| String::from_utf8(t.to_vec()).unwrap())
                .collect();
            terms.sort();
            want.sort();
            assert_eq!(terms, want, "{text}");
            let sides = words.take_sides();
            let pair = |&k: &u64| String::from_utf8(sides.pair(k)).unwrap();
            let mut pairs: Vec<String> = got.pairs.iter().map(pair).collect();
            let b = text.as_bytes();
            let mut want: Vec<String> = distinct_pair_ranges(text, &[])
                .into_iter()
                .map(|(s, n)| String::from_utf8(b[s as usize..(s + n) as usize].to_vec()).unwrap())
                .collect();
            pairs.sort();
            want.sort();
            assert_eq!(pairs, want, "{text}");
            assert!(words.finish().is_empty(), "the text's slot is emptied");
            let spare = std::mem::take(&mut words);
            spare.recycle();
            words = PartWords::pooled();
        }
    }
}
