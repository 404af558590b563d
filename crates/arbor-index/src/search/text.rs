//! Reading stored text: where each session's text lies in the text file,
//! reading it through a map or by reads, and running a phrase or regex over
//! it.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::PathBuf;

use memchr::memmem;
use rusqlite::Connection;

use crate::codec::FxBuild;
use crate::db::{text_path, text_state, TextState};
use crate::refresh::FolderRanges;
use crate::refresh::TEXT_SEGMENT;
use crate::terms::Match;
use crate::Error;
use arbor_search::Term;

use arbor_search::PathsById;

use super::cache::{load_spans, SearchCache, Span, Spans};
use super::idset::IdSet;
use super::narrow::{narrow, regex_prefixes, Check};
use super::postings::COUNT_FROM;
use super::Cancel;

/// Posting lists closer than this are read together.
pub(super) const READ_GAP: usize = 16 << 10;

/// The index's text file, as searches read it.
pub(super) enum Text {
    /// Read in place, for a long-lived searcher (the picker): copying each
    /// session's text out of the file cost as much as searching it. The map
    /// is kept with the cache (faulting its pages in again for every search
    /// cost ~20 ms a keystroke here) and dropped when the index changes; its
    /// pages are the page cache's, but they count in arbor's resident set.
    /// Only where a file cut short under the map is caught (see
    /// [`crate::mapguard`]); elsewhere a long-lived searcher reads too.
    #[cfg(target_os = "linux")]
    Mapped(crate::mapguard::GuardedMap),
    /// Read span by span (with the committed length): one-shot searches
    /// (`arbor list --query`), and where a map is not guarded.
    Read(std::fs::File, u64),
    /// Nothing usable: no text was ever stored (then no chunk refers to
    /// it), or the file is gone or shorter than committed (someone else cut
    /// or deleted it). Texts are then read from the session files.
    Missing,
}

/// The stored text as one snapshot of the index describes it: where each
/// file's text lies, and the file of that generation, opened at once. A
/// compaction never changes a committed generation's file, so these stay
/// consistent with each other for as long as they are kept, whatever the
/// index commits meanwhile.
pub struct Stored {
    spans: Spans,
    /// Files whose text is in more than one chunk (their text was appended to).
    multi: Vec<u32>,
    text: Text,
    /// Files whose stored text failed its checksum in a search.
    pub(super) damaged: std::sync::Mutex<Vec<u32>>,
    /// The generation's file was not found. It is deleted only once a
    /// newer generation is committed (see `db::remove_generations_before`),
    /// so a new snapshot names a file that exists (unless someone else
    /// deleted it: then the text is [`Text::Missing`]).
    pub(super) gone: bool,
    /// The spans in text file order (offset, file id, index in its list),
    /// made when [`Stored::check_some`] is first asked, and how many of
    /// them it went through.
    to_check: Vec<(u64, u32, u32)>,
    checked_upto: usize,
    /// Bytes of map pages read through (see [`map_bytes`]) since they were
    /// last released (see [`Stored::read_through_map`]).
    mapped_read: usize,
}

/// At most about this much of the text file is kept resident through its
/// map, whatever the searches read (a regex reading all of it made the
/// picker's resident set grow by the text file's size: +230 MB at 10,000
/// sessions). Below it, the text that keystrokes read again and again
/// stays mapped between them.
const MAP_RESIDENT: usize = 8 << 20;

/// Text reads are split into batches of about this many bytes, so
/// that a search reading more than [`MAP_RESIDENT`] releases the map's
/// pages as it goes rather than at the end.
const TEXT_BATCH: usize = 2 << 20;

/// A read through a file map faults in the pages around the one it needs
/// (the kernel's fault-around, 64 KB aligned), so what a read of many
/// short texts adds to the resident set is counted in these windows, not
/// in the bytes read: a regex over 100,000 sessions' texts of a few
/// hundred bytes each made 2 MB of reads map ~100 MB.
const FAULT_WINDOW: u64 = 64 << 10;

/// The bytes of the fault-around windows the texts of `ids` lie in,
/// counting a window once when consecutive texts share it (`last`: the
/// window counted last, carried from one call to the next).
fn map_bytes(ids: &[u32], spans: &Spans, last: &mut Option<u64>) -> usize {
    ids.iter()
        .filter_map(|id| spans.get(id))
        .map(|v| window_bytes(v, last))
        .sum()
}

/// [`map_bytes`] of one session's texts.
fn window_bytes(texts: &[Span], last: &mut Option<u64>) -> usize {
    let mut windows = 0;
    for span in texts.iter().filter(|s| s.len > 0) {
        let first = span.off / FAULT_WINDOW;
        let end = (span.off + span.len as u64 - 1) / FAULT_WINDOW;
        let from = match *last {
            Some(l) if l >= first => l + 1,
            _ => first,
        };
        windows += (end + 1).saturating_sub(from);
        *last = Some(last.map_or(end, |l| l.max(end)));
    }
    (windows * FAULT_WINDOW) as usize
}

/// Where `ids` splits into batches of about [`TEXT_BATCH`] of text, or
/// of [`MAP_RESIDENT`] of map pages, whichever comes first: the first and
/// last ids' indexes included (`[0, …, ids.len()]`).
fn text_batches(ids: &[u32], spans: &Spans) -> Vec<usize> {
    let mut cuts = vec![0];
    let (mut bytes, mut mapped, mut last) = (0, 0, None);
    for (i, id) in ids.iter().enumerate() {
        let texts = spans.get(id).map_or(&[][..], Vec::as_slice);
        bytes += texts.iter().map(|s| s.len).sum::<usize>();
        mapped += window_bytes(texts, &mut last);
        if (bytes >= TEXT_BATCH || mapped >= MAP_RESIDENT) && i + 1 < ids.len() {
            cuts.push(i + 1);
            (bytes, mapped) = (0, 0);
        }
    }
    cuts.push(ids.len());
    cuts
}

impl Stored {
    /// In the caller's snapshot: the generation and the offsets must come
    /// from the same one.
    pub(super) fn load(
        conn: &Connection,
        db_path: &std::path::Path,
        map: bool,
        folders: Option<&FolderRanges>,
    ) -> Result<Stored, Error> {
        let state = text_state(conn)?;
        let (text, gone) = match Text::open(db_path, state, map) {
            Ok(text) => (text, false),
            Err(e) => (Text::Missing, e.kind() == std::io::ErrorKind::NotFound),
        };
        let spans = load_spans(conn, folders)?;
        let multi = spans
            .iter()
            .filter(|(_, s)| s.len() > 1)
            .map(|(id, _)| *id)
            .collect();
        Ok(Stored {
            spans,
            multi,
            text,
            damaged: Default::default(),
            gone,
            to_check: Vec::new(),
            checked_upto: 0,
            mapped_read: 0,
        })
    }

    /// Checks the checksums of about `budget` bytes of the map's spans not
    /// checked yet, so that a search reads them without summing them (a
    /// one-letter phrase, which stops at its first match, otherwise summed
    /// all the text: ~60 ms at 10,000 sessions). The bytes are read with
    /// `pread`, not through the map, so that they do not join the resident
    /// set. A span that does not match stays unchecked: the search that
    /// reads it finds it damaged. True while some spans remain.
    pub(super) fn check_some(&mut self, budget: usize) -> bool {
        #[cfg(target_os = "linux")]
        if let Text::Mapped(m) = &self.text {
            use std::os::unix::fs::FileExt;
            use std::sync::atomic::Ordering::Relaxed;
            if self.checked_upto == 0 && self.to_check.is_empty() {
                self.to_check = self
                    .spans
                    .iter()
                    .flat_map(|(&id, v)| {
                        let each = v.iter().enumerate();
                        each.map(move |(i, span)| (span.off, id, i as u32))
                    })
                    .collect();
                self.to_check.sort_unstable();
            }
            let mut buf = Vec::new();
            let mut done = 0;
            while done < budget {
                let Some(&(off, id, i)) = self.to_check.get(self.checked_upto) else {
                    break;
                };
                self.checked_upto += 1;
                let Some(span) = self.spans.get(&id).and_then(|v| v.get(i as usize)) else {
                    continue;
                };
                if span.checked.load(Relaxed) {
                    continue;
                }
                buf.resize(span.len, 0);
                // Cut short by someone else: the searches find out.
                if m.file().read_exact_at(&mut buf, off).is_err() {
                    self.checked_upto = self.to_check.len();
                    break;
                }
                if crate::db::text_sum(&buf) == span.sum {
                    span.checked.store(true, Relaxed);
                }
                done += span.len.max(1);
            }
            if self.checked_upto >= self.to_check.len() {
                self.to_check = Vec::new();
                return false;
            }
            return true;
        }
        let _ = budget;
        false
    }

    /// Notes that the texts of `ids` were read, through the map when it is
    /// one; past [`MAP_RESIDENT`] bytes read since the last release, the
    /// map's pages are dropped from the resident set (see
    /// [`crate::mapguard::GuardedMap::release`]).
    fn read_through_map(&mut self, ids: &[u32]) {
        #[cfg(target_os = "linux")]
        if let Text::Mapped(m) = &self.text {
            self.mapped_read += map_bytes(ids, &self.spans, &mut None);
            if self.mapped_read > MAP_RESIDENT {
                m.release();
                self.mapped_read = 0;
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = ids;
    }

    /// Before a search reads text: a map of a file that someone else has
    /// cut short since is dropped, before any of it is read.
    fn check(&mut self) {
        #[cfg(target_os = "linux")]
        if let Text::Mapped(m) = &self.text {
            if !m.intact() {
                self.text = Text::Missing;
            }
        }
    }

    /// After reading text: false when the file was cut short while it was
    /// read (what was read is then not to be trusted, and the map is gone).
    fn still_intact(&mut self) -> bool {
        #[cfg(target_os = "linux")]
        if let Text::Mapped(m) = &self.text {
            if !m.intact() {
                self.text = Text::Missing;
                return false;
            }
        }
        true
    }
}

impl Text {
    fn open(db_path: &std::path::Path, state: TextState, map: bool) -> std::io::Result<Text> {
        if state.len == 0 {
            return Ok(Text::Missing);
        }
        let f = std::fs::File::open(text_path(db_path, state.gen))?;
        if f.metadata()?.len() < state.len {
            return Ok(Text::Missing);
        }
        #[cfg(target_os = "linux")]
        if map {
            if let Some(m) = crate::mapguard::GuardedMap::new(f.try_clone()?, state.len) {
                return Ok(Text::Mapped(m));
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = map;
        Ok(Text::Read(f, state.len))
    }
}

/// The body text of a session read from its own file, as the index would
/// have stored it: for text the text file cannot give.
fn body_from_file<'t>(path: &OsStr, buf: &'t mut Vec<u8>) -> &'t [u8] {
    buf.clear();
    // Only the text is used, and it does not depend on the agent.
    let file = arbor_store::scan::SessionFile {
        path: PathBuf::from(path),
        agent: arbor_session::Agent::Atomic,
    };
    // A file gone or no longer a session matches nothing.
    if let Ok(p) = crate::refresh::parse_file(&file, None) {
        buf.extend_from_slice(p.text.as_bytes());
        if let Some(t) = p.tail_text {
            if !buf.is_empty() {
                buf.push(b' ');
            }
            buf.extend_from_slice(t.as_bytes());
        }
    }
    buf
}

/// Why [`body`] could not give a file's text from the text file.
pub(super) enum NoText {
    /// The text file is gone or cut short (by someone else).
    Missing,
    /// A chunk's bytes do not match its checksum (overwritten in place).
    Damaged,
}

/// The body text of a file: its chunks joined by a space, then the partial
/// last line's text. Borrowed from the map when it is one chunk (most
/// files), else gathered into `buf`. An error when the text file cannot
/// give it: the caller then reads the session's own file. Every chunk is
/// checked against its checksum: never an answer from damaged text.
pub(super) fn body<'t>(
    spans: &[Span],
    text: &'t Text,
    tail: Option<&'t str>,
    buf: &'t mut Vec<u8>,
) -> Result<&'t [u8], NoText> {
    use std::sync::atomic::Ordering::Relaxed;
    let verify = |span: &Span, bytes: &[u8], always: bool| -> Result<(), NoText> {
        if !always && span.checked.load(Relaxed) {
            return Ok(());
        }
        if crate::db::text_sum(bytes) != span.sum {
            return Err(NoText::Damaged);
        }
        span.checked.store(true, Relaxed);
        Ok(())
    };
    #[cfg(target_os = "linux")]
    let in_map = |m: &'t crate::mapguard::GuardedMap, span: &Span| -> Result<&'t [u8], NoText> {
        let off = usize::try_from(span.off).map_err(|_| NoText::Missing)?;
        let end = off.checked_add(span.len).ok_or(NoText::Missing)?;
        let bytes = m.bytes().get(off..end).ok_or(NoText::Missing)?;
        verify(span, bytes, false)?;
        Ok(bytes)
    };
    match (spans, tail, text) {
        ([], None, _) => return Ok(&[]),
        ([], Some(t), _) => return Ok(t.as_bytes()),
        #[cfg(target_os = "linux")]
        ([one], None, Text::Mapped(m)) => return in_map(m, one),
        _ => {}
    }
    buf.clear();
    for span in spans {
        if !buf.is_empty() {
            buf.push(b' ');
        }
        match text {
            #[cfg(target_os = "linux")]
            Text::Mapped(m) => buf.extend_from_slice(in_map(m, span)?),
            Text::Read(f, file_len) => {
                // A damaged length must be an error, not a huge allocation.
                let end = span.off.checked_add(span.len as u64);
                if end.is_none_or(|e| e > *file_len) {
                    return Err(NoText::Missing);
                }
                let at = buf.len();
                buf.resize(at + span.len, 0);
                crate::db::read_exact_at(f, &mut buf[at..], span.off)
                    .map_err(|_| NoText::Missing)?;
                verify(span, &buf[at..], true)?;
            }
            Text::Missing => return Err(NoText::Missing),
        }
    }
    if let Some(t) = tail {
        if !buf.is_empty() {
            buf.push(b' ');
        }
        buf.extend_from_slice(t.as_bytes());
    }
    Ok(buf)
}

/// At most this many sessions left to decide in a part are read rather
/// than looked up (see `term_hits`).
pub(super) const FEW_LEFT: usize = 32;

/// A phrase or a regex asked of at most this many sessions reads their
/// text (~4 KB each at 100,000 realistic sessions) and nothing else.
pub(super) const FEW_TO_READ: usize = 4096;

/// Whether looking `t` up reads a letter or two's posting lists: a phrase
/// of one or two characters, or a regex that starts so.
pub(super) fn short_needle(t: &Term) -> bool {
    match t {
        Term::Phrase(p) => !p.contains(' ') && p.len() < COUNT_FROM,
        Term::Regex(r) => {
            regex_prefixes(r).is_some_and(|lits| lits.iter().any(|l| l.len() < COUNT_FROM))
        }
        Term::Word { .. } => false,
    }
}

/// The sessions (among `allowed`, or all) whose stored (user and
/// assistant) text matches one term.
pub(super) fn text_hits(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    cache: &mut SearchCache,
    t: &Term,
    allowed: Option<&IdSet>,
    cancel: Cancel,
) -> Result<IdSet, Error> {
    let keep = |keys: &PathsById, id: &u32| -> bool {
        keys.contains_key(id) && allowed.is_none_or(|a| a.contains(id))
    };
    // Sessions the pairs' dictionary answers for (no text read).
    let mut sure = IdSet::default();
    // Whether every segment knows how many ids it holds: then a lookup of
    // a letter or two reads a few of the longest lists (see
    // `biggest_lists_first`).
    let short = matches!(t, Term::Phrase(p) if !p.contains(' ') && p.len() < 3);
    let docs_known = short
        && cache
            .segs(conn, TEXT_SEGMENT)?
            .iter()
            .all(|(_, s)| s.docs() > 0);
    // A few sessions asked about (the newest, for the first screen):
    // their text is read, rather than a dictionary that answers for all.
    let few = allowed.filter(|a| a.len_at_most(FEW_TO_READ));
    let (check, cands): (Check, Option<IdSet>) = match t {
        Term::Phrase(_) | Term::Regex(_) if few.is_some() => match Check::of(t) {
            Some(check) => (check, few.cloned()),
            None => return Ok(IdSet::default()),
        },
        // A one- or two-character phrase is in nearly every term: without
        // the segments' counts the dictionary would hand back nearly every
        // posting list, while the text has it within its first bytes. Read
        // the text, stopping at the first match.
        Term::Phrase(needle) if short && !docs_known => (
            Check::Phrase(Box::new(memmem::Finder::new(needle.as_bytes()))),
            None,
        ),
        Term::Word { lower: needle, .. } | Term::Phrase(needle) if !needle.contains(' ') => {
            let found = cache.lookup(conn, needle, Match::Contains, TEXT_SEGMENT)?;
            let tails: IdSet = cache.in_tails(needle).collect();
            let mut hit = IdSet::default();
            hit.add_kept(&found, &cache.files.live, allowed);
            hit.add_kept(&tails, &cache.files.live, allowed);
            return Ok(hit);
        }
        Term::Word { .. } => return Ok(IdSet::default()),
        Term::Phrase(_) | Term::Regex(_) => {
            let Some(check) = Check::of(t) else {
                return Ok(IdSet::default());
            };
            match narrow(conn, cache, t, TEXT_SEGMENT)? {
                None => (check, None),
                Some(n) => {
                    sure = n.sure;
                    (check, Some(n.maybe))
                }
            }
        }
    };
    // Taken out of the cache while it is read (and put back after).
    let mut stored = match cache.stored.take() {
        Some(s) => s,
        None => Stored::load(
            conn,
            db_path,
            map_text,
            cache.folders.as_deref().map(Vec::as_slice),
        )?,
    };
    stored.check();
    let keys = &cache.files.keys;
    let mut to_read = texts_to_read(cands, cache, &stored, &sure, &keep);
    // Text file order, so reads go forward.
    to_read.sort_unstable();
    let tail_of: HashMap<u32, &str, FxBuild> = cache
        .files
        .tails
        .iter()
        .map(|(id, t)| (*id, t.as_str()))
        .collect();
    use rayon::prelude::*;
    let batches = text_batches(&to_read, &stored.spans);
    'again: loop {
        let mut found = Vec::new();
        for batch in batches.windows(2) {
            let ids = &to_read[batch[0]..batch[1]];
            let batch_found: Result<Vec<u32>, Error> = ids
                .par_iter()
                .map_init(
                    || (Vec::new(), Vec::new()),
                    |bufs, &id| {
                        if cancel() {
                            return Err(Error::Cancelled);
                        }
                        let tail = tail_of.get(&id).copied();
                        Ok(text_matches(&stored, keys, tail, &check, id, bufs).then_some(id))
                    },
                )
                .filter_map(Result::transpose)
                .collect();
            // Cut short while it was read: read it all again from the files.
            if !stored.still_intact() {
                continue 'again;
            }
            match batch_found {
                Ok(f) => found.extend(f),
                Err(e) => {
                    cache.stored = Some(stored);
                    return Err(e);
                }
            }
            stored.read_through_map(ids);
        }
        cache.stored = Some(stored);
        let mut found: IdSet = found.into_iter().collect();
        found.extend(sure.iter().filter(|id| keep(keys, id)));
        return Ok(found);
    }
}

/// The sessions whose text is read for a term: the candidates (`None`:
/// every session) that `keep` keeps, but for those `sure` answers already.
fn texts_to_read(
    cands: Option<IdSet>,
    cache: &SearchCache,
    stored: &Stored,
    sure: &IdSet,
    keep: &dyn Fn(&PathsById, &u32) -> bool,
) -> Vec<u32> {
    let keys = &cache.files.keys;
    match cands {
        Some(mut c) => {
            // The pairs know nothing of the partial last line (not in the
            // word index), nor of the pair where two chunks of a file's
            // text meet (the text is searched as one, chunks joined by a
            // space): such files are read.
            c.extend(cache.files.tails.iter().map(|(id, _)| *id));
            c.extend(stored.multi.iter().copied());
            c.iter()
                .filter(|id| keep(keys, id) && !sure.contains(id))
                .collect()
        }
        None => keys.keys().copied().filter(|id| keep(keys, id)).collect(),
    }
}

/// Whether the text of session `id` (its stored text and partial last
/// line `tail`) matches `check`; read from its own file when the text file
/// cannot give it.
fn text_matches(
    stored: &Stored,
    keys: &PathsById,
    tail: Option<&str>,
    check: &Check,
    id: u32,
    (buf, from_file): &mut (Vec<u8>, Vec<u8>),
) -> bool {
    let b = match body(
        stored.spans.get(&id).map_or(&[][..], Vec::as_slice),
        &stored.text,
        tail,
        buf,
    ) {
        Ok(b) => b,
        // The text file cannot give it: the session's own
        // file can (a refresh then rebuilds the index, or
        // reads the damaged session again).
        Err(why) => {
            if let NoText::Damaged = why {
                if let Ok(mut d) = stored.damaged.lock() {
                    d.push(id);
                }
            }
            match keys.get(&id) {
                Some(path) => body_from_file(path, from_file),
                None => &[],
            }
        }
    };
    check.matches(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of stored text of `ids`.
    fn text_bytes(ids: &[u32], spans: &Spans) -> usize {
        ids.iter()
            .filter_map(|id| spans.get(id))
            .flatten()
            .map(|s| s.len)
            .sum()
    }

    /// Short texts far apart in the file: each maps a window of pages, so
    /// batches are cut by the pages their reads map, not by their bytes
    /// (which would have let one batch map 2 MB / 100 B windows).
    #[test]
    fn text_reads_are_cut_by_the_pages_they_map() {
        let span = |off, len| Span {
            off,
            len,
            sum: 0,
            checked: Default::default(),
        };
        let mut spans = Spans::default();
        for id in 0..1_000u32 {
            spans.insert(id, vec![span(u64::from(id) << 20, 100)]);
        }
        let ids: Vec<u32> = (0..1_000).collect();
        let cuts = text_batches(&ids, &spans);
        let per_batch = MAP_RESIDENT / FAULT_WINDOW as usize;
        assert_eq!(cuts.len(), 1_000 / per_batch + 2);
        for w in cuts.windows(2) {
            let b = &ids[w[0]..w[1]];
            assert!(map_bytes(b, &spans, &mut None) <= MAP_RESIDENT);
            assert!(text_bytes(b, &spans) < TEXT_BATCH);
        }
        // Texts sharing a window count it once; one across two counts both.
        let mut near = Spans::default();
        near.insert(0, vec![span(10, 100), span(200, 100)]);
        near.insert(1, vec![span(FAULT_WINDOW - 50, 100)]);
        near.insert(2, vec![span(5 * FAULT_WINDOW, 0)]);
        let w = FAULT_WINDOW as usize;
        assert_eq!(map_bytes(&[0], &near, &mut None), w);
        assert_eq!(map_bytes(&[0, 1], &near, &mut None), 2 * w);
        assert_eq!(map_bytes(&[1], &near, &mut None), 2 * w);
        assert_eq!(map_bytes(&[2], &near, &mut None), 0);
        let mut last = None;
        assert_eq!(map_bytes(&[1], &near, &mut last), 2 * w);
        assert_eq!(map_bytes(&[1], &near, &mut last), 0);
    }

    /// Batches cover the ids once, in order, and each but the last holds
    /// at least a batch of text and no more than it needs to.
    #[test]
    fn text_reads_are_cut_into_batches_of_about_a_batch_of_text() {
        let mut spans = Spans::default();
        let mut ids = Vec::new();
        for id in 0..400u32 {
            // Sizes from 0 to ~5 batches (a few texts bigger than a batch).
            let len = match id % 50 {
                0 => TEXT_BATCH * 2 + 7,
                7 => 0,
                n => (n as usize * 7919) % (TEXT_BATCH / 16),
            };
            let span = |len| Span {
                off: 0,
                len,
                sum: 0,
                checked: Default::default(),
            };
            spans.insert(id, vec![span(len), span(id as usize)]);
            ids.push(id);
        }
        ids.push(9999); // No text at all.
        for n in [0, 1, 2, 57, ids.len()] {
            let ids = &ids[..n];
            let cuts = text_batches(ids, &spans);
            assert_eq!(cuts.first(), Some(&0));
            assert_eq!(cuts.last(), Some(&ids.len()));
            assert!(cuts.windows(2).all(|w| w[0] < w[1] || ids.is_empty()));
            let batches: Vec<&[u32]> = cuts.windows(2).map(|w| &ids[w[0]..w[1]]).collect();
            for (i, b) in batches.iter().enumerate() {
                if i + 1 < batches.len() {
                    assert!(text_bytes(b, &spans) >= TEXT_BATCH);
                    assert!(text_bytes(&b[..b.len() - 1], &spans) < TEXT_BATCH);
                }
            }
            assert_eq!(batches.concat(), ids);
        }
    }
}
