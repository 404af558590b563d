//! Answering the picker's body terms from the index.
//!
//! Per term (see `arbor_search` for the language):
//! * a word of 3+ characters matches a body when it is a substring of it:
//!   the terms containing it are found in each segment's dictionary with one
//!   `memmem` scan, and their posting lists give the sessions, exactly (no
//!   text is read; only the matching posting lists are read from disk);
//! * a phrase without spaces is the same; a phrase `w1 w2 … wn` needs a term
//!   ending in `w1`, the terms `w2 … wn-1`, and a term starting with `wn`:
//!   the sessions having all of them are candidates, and each candidate's
//!   stored text is then searched for the phrase (so the answer is exact);
//! * `re:` runs the regex over the stored text of the candidate sessions:
//!   those of `within` when given, narrowed by the regex's literal prefixes
//!   when it has any (`re:fail\w+` only reads sessions with a word containing
//!   `fail`). A regex without a usable literal reads the text of every
//!   candidate: its cost grows with the store (the text is about 7 % of the
//!   session files' bytes).
//!
//! The partial last line of a file being written (rare) is not in the word
//! index; its text is kept beside the row and searched directly.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use memchr::memmem;
use rusqlite::{Connection, MAIN_DB};

use super::codec::FxBuild;
use super::db::{key_path, text_path, text_state, Keys, TextState};
use super::matched::{IdCounts, Matched, Narrowed, KEEP_BYTES};
use super::refresh::{pair_segment, TEXT_SEGMENT};
use super::refresh::{FolderRanges, SharedFolders};
use super::termfile::{self, TermFileError};
use super::terms::{decode_postings, pair_side_word, Match, Segment};
use super::IndexError;
use arbor_search::hits::PartMatcher;
use arbor_search::literals::{parse_case_insensitive, regex_literals};
use arbor_search::{Parts, Tiers};
use arbor_search::{Query, Term};
use arbor_util::memo::Memo;

pub use arbor_search::BodyHits;

/// A set of file row ids: a bitmap (row ids are small and dense; a
/// posting list of a common word names most sessions), with a side set for
/// any id too large for it.
#[derive(Default, Clone)]
struct IdSet {
    words: Vec<u64>,
    large: HashSet<u32, FxBuild>,
}

/// Ids below this live in the bitmap (at most 512 KiB).
const BITMAP_IDS: u32 = 1 << 22;

impl IdSet {
    fn insert(&mut self, id: u32) {
        if id >= BITMAP_IDS {
            self.large.insert(id);
            return;
        }
        let w = (id >> 6) as usize;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
        }
        self.words[w] |= 1 << (id & 63);
    }

    fn contains(&self, id: &u32) -> bool {
        if *id >= BITMAP_IDS {
            return self.large.contains(id);
        }
        self.words
            .get((*id >> 6) as usize)
            .is_some_and(|w| w & (1 << (id & 63)) != 0)
    }

    fn is_empty(&self) -> bool {
        self.large.is_empty() && self.words.iter().all(|&w| w == 0)
    }

    /// About what it holds on the heap (the bitmap and the side set).
    fn heap_bytes(&self) -> usize {
        self.words.capacity() * 8 + self.large.capacity() * 8
    }

    /// Whether every id of `other` is in this set.
    fn covers(&self, other: &IdSet) -> bool {
        other
            .words
            .iter()
            .enumerate()
            .all(|(i, &w)| w == 0 || self.words.get(i).is_some_and(|&mine| w & !mine == 0))
            && other.large.iter().all(|id| self.large.contains(id))
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words
            .iter()
            .enumerate()
            .flat_map(|(i, &w)| {
                let mut w = w;
                std::iter::from_fn(move || {
                    if w == 0 {
                        return None;
                    }
                    let b = w.trailing_zeros();
                    w &= w - 1;
                    Some((i as u32) << 6 | b)
                })
            })
            .chain(self.large.iter().copied())
    }

    /// Drops the ids in `other`.
    fn subtract(&mut self, other: &IdSet) {
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            *w &= !o;
        }
        self.large.retain(|id| !other.large.contains(id));
    }

    /// Whether it holds at most `n` ids.
    fn len_at_most(&self, n: usize) -> bool {
        let mut count = self.large.len();
        for w in &self.words {
            count += w.count_ones() as usize;
            if count > n {
                return false;
            }
        }
        count <= n
    }

    /// Adds the ids of `ids` that are also in `live` and, when there is
    /// one, in `allowed`: a word at a time (an id at a time, through a
    /// table of paths, was ~25 % of a keystroke's lookups when a word is in
    /// most sessions).
    fn add_kept(&mut self, ids: &IdSet, live: &IdSet, allowed: Option<&IdSet>) {
        let n = ids.words.len().min(live.words.len());
        if self.words.len() < n {
            self.words.resize(n, 0);
        }
        for (i, w) in self.words[..n].iter_mut().enumerate() {
            let mut add = ids.words[i] & live.words[i];
            if let Some(a) = allowed {
                add &= a.words.get(i).copied().unwrap_or(0);
            }
            *w |= add;
        }
        for id in &ids.large {
            if live.large.contains(id) && allowed.is_none_or(|a| a.contains(id)) {
                self.large.insert(*id);
            }
        }
    }

    /// Keeps the ids also in `other`.
    fn intersect(&mut self, other: &IdSet) {
        for (i, w) in self.words.iter_mut().enumerate() {
            *w &= other.words.get(i).copied().unwrap_or(0);
        }
        self.large.retain(|id| other.large.contains(id));
    }
}

impl Extend<u32> for IdSet {
    fn extend<I: IntoIterator<Item = u32>>(&mut self, iter: I) {
        for id in iter {
            self.insert(id);
        }
    }
}

impl FromIterator<u32> for IdSet {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        let mut s = IdSet::default();
        s.extend(iter);
        s
    }
}

pub use arbor_search::PathsById;

/// A path keyed by its bytes (the index's key), for sets looked up with a
/// key.
#[derive(PartialEq, Eq)]
struct KeyBytes(Arc<OsStr>);

impl std::hash::Hash for KeyBytes {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // As `[u8]` does, so that `Borrow<[u8]>` lookups find it.
        self.0.as_encoded_bytes().hash(h)
    }
}

impl std::borrow::Borrow<[u8]> for KeyBytes {
    fn borrow(&self) -> &[u8] {
        self.0.as_encoded_bytes()
    }
}

struct Files {
    /// For the sessions (not the problem rows). One allocation per path,
    /// made once: the key, the path answers name and the coverage check's
    /// set were three copies of every path (~50 MB at 100,000 sessions).
    keys: Arc<PathsById>,
    /// The same ids as a set: a lookup that has found them all stops.
    live: IdSet,
    /// Files whose partial last line has text (not in the word index).
    tails: Vec<(u32, String)>,
}

/// The sessions' ids and paths, all or those under `folders`.
fn load_files(conn: &Connection, folders: Option<&FolderRanges>) -> rusqlite::Result<Files> {
    // Both served by partial indexes, without reading the rows. The planner
    // left alone picks `files_recent` and reads every row (with its state)
    // for the path: 226 ms at 100,000 sessions, 13 ms from this index.
    let all = [(Vec::new(), Vec::new())];
    let (sql, ranges) = match folders {
        Some(f) => (
            "SELECT id, path FROM files INDEXED BY files_sessions
             WHERE problem IS NULL AND path >= ?1 AND path < ?2",
            f,
        ),
        None => (
            "SELECT id, path FROM files INDEXED BY files_sessions
             WHERE problem IS NULL AND ?1 = ?2",
            &all[..],
        ),
    };
    let mut st = conn.prepare(sql)?;
    let mut keys = PathsById::default();
    for (from, to) in ranges {
        let mut rows = st.query((from, to))?;
        while let Some(r) = rows.next()? {
            let Ok(id) = u32::try_from(r.get::<_, i64>(0)?) else {
                continue;
            };
            // On every platform the key's bytes are the path's encoded
            // bytes (elsewhere than Unix the key is the path as UTF-8).
            let path: Arc<OsStr> = Arc::from(key_path(r.get_ref(1)?.as_blob()?).as_os_str());
            keys.insert(id, path);
        }
    }
    let mut st = conn.prepare("SELECT id, tail_text FROM files WHERE tail_text IS NOT NULL")?;
    let tails = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
        .filter_map(|r| r.ok())
        .filter_map(|(id, t)| Some((u32::try_from(id).ok()?, t)))
        .filter(|(id, _)| keys.contains_key(id))
        .collect();
    let mut live = IdSet::default();
    for &id in keys.keys() {
        live.insert(id);
    }
    Ok(Files {
        keys: Arc::new(keys),
        live,
        tails,
    })
}

/// One segment's dictionary, with the row id that holds its postings.
type Dict = (i64, Segment);

/// The dictionaries of the segments of one kind ([`TEXT_SEGMENT`] for the
/// stored text's words, a part's code, or [`pair_segment`] of either).
fn load_dictionaries(
    conn: &Connection,
    db_path: &std::path::Path,
    kind: i64,
) -> Result<Vec<Dict>, IndexError> {
    let mut st = conn
        .prepare("SELECT id, terms_len, terms_sum, starts, docs FROM segments WHERE part = ?1")?;
    let mut rows = st.query([kind])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let len = usize::try_from(r.get::<_, i64>(1)?).unwrap_or(usize::MAX);
        let terms = match termfile::load(db_path, id, len, r.get(2)?) {
            Ok(t) => t,
            Err(TermFileError::Gone) => return Err(IndexError::Changed),
            Err(TermFileError::Damaged) => {
                // The next refresh starts the index again (see
                // `refresh::check_text_file`).
                termfile::remove(db_path, &[id]);
                return Err(IndexError::Corrupt(db_path.to_path_buf()));
            }
            Err(TermFileError::Io(source)) => {
                return Err(IndexError::Io {
                    path: db_path.to_path_buf(),
                    source,
                })
            }
        };
        let starts = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
        let docs = usize::try_from(r.get::<_, i64>(4)?).unwrap_or(0);
        match Segment::dictionary_in(terms, starts) {
            Some(s) => out.push((id, s.with_docs(docs))),
            None => return Err(IndexError::Corrupt(PathBuf::new())),
        }
    }
    Ok(out)
}

/// One chunk of a file's stored text: where it lies, and its checksum.
struct Span {
    off: u64,
    len: usize,
    sum: i64,
    /// Its bytes in a map were found to match `sum` (a map is checked once
    /// per snapshot; text read from the file is checked every time).
    checked: AtomicBool,
}

/// Where each file's text lies in the text file, in order.
type Spans = HashMap<u32, Vec<Span>, FxBuild>;

/// Where the stored text of each session lies, of all or of those under
/// `folders` (through the files' index of paths and the chunks' of files:
/// every session's spans were ~40 ms of a one-folder search at 100,000).
fn load_spans(conn: &Connection, folders: Option<&FolderRanges>) -> rusqlite::Result<Spans> {
    let mut spans = Spans::default();
    let all = [(Vec::new(), Vec::new())];
    let (sql, ranges) = match folders {
        Some(f) => (
            "SELECT file_id, off, len, sum FROM chunks WHERE file_id IN
             (SELECT id FROM files WHERE problem IS NULL AND path >= ?1 AND path < ?2)
             ORDER BY id",
            f,
        ),
        None => (
            "SELECT file_id, off, len, sum FROM chunks WHERE ?1 = ?2 ORDER BY id",
            &all[..],
        ),
    };
    let mut st = conn.prepare(sql)?;
    for (from, to) in ranges {
        let mut rows = st.query((from, to))?;
        add_spans(&mut spans, &mut rows)?;
    }
    // A list's first push makes room for four: 96 bytes more per file
    // than the one span most have (~10 MB at 100,000 sessions, kept for
    // as long as the picker's searcher lives).
    spans.values_mut().for_each(Vec::shrink_to_fit);
    Ok(spans)
}

fn add_spans(spans: &mut Spans, rows: &mut rusqlite::Rows) -> rusqlite::Result<()> {
    while let Some(r) = rows.next()? {
        let Ok(id) = u32::try_from(r.get::<_, i64>(0)?) else {
            continue;
        };
        let (off, len): (i64, i64) = (r.get(1)?, r.get(2)?);
        let (Ok(off), Ok(len)) = (u64::try_from(off), usize::try_from(len)) else {
            continue;
        };
        spans.entry(id).or_default().push(Span {
            off,
            len,
            sum: r.get(3)?,
            checked: AtomicBool::new(false),
        });
    }
    Ok(())
}

/// Marks files whose stored text failed its checksum so the next refresh
/// reads them again from the start (no file has size -1). Best effort: the
/// answer was already right (their own files gave it).
fn mark_damaged(conn: &Connection, ids: &[u32]) {
    for id in ids {
        let _ = conn.execute("UPDATE files SET size = -1 WHERE id = ?1", [id]);
    }
}

/// What searches read from the index, loaded once and kept while the
/// index is unchanged, with the answers of recent terms: typing a query
/// re-asks the same terms key after key (all but the last word), and a
/// keystroke must cost only what changed.
pub struct SearchCache {
    /// `PRAGMA data_version` when loaded: another connection's commit
    /// changes it. The owner drops the cache after its own writes.
    version: i64,
    /// The database's path (the dictionaries' files are beside it).
    db_path: PathBuf,
    files: Files,
    /// Dictionaries by kind of segment, each loaded when first asked (a
    /// word never reads the pairs' dictionaries).
    segs: HashMap<i64, Vec<Dict>, FxBuild>,
    /// Where texts lie, with their file opened; loaded once per cache.
    stored: Option<Stored>,
    /// The files' keys as a set, built when first asked (coverage checks).
    key_set: Option<HashSet<KeyBytes, FxBuild>>,
    /// Term key → the sessions whose bodies match it.
    memo: Memo<String, Arc<[IdSet; 3]>>,
    /// Dictionary lookups of phrase words → the sessions having such a term.
    lookups: Memo<(String, Match, i64), Arc<IdSet>>,
    /// Per kind of lookup and of segment, the terms the last lookup
    /// matched (the next key's lookup looks only at those when it can).
    matched: HashMap<(Match, i64), Matched>,
    /// Lookups keep their terms in `matched`: for a searcher that searches
    /// again as a word is typed. A one-shot search does not copy them (up
    /// to 16 MB of terms per kind of segment: `arbor list --query ses` at
    /// 100,000 sessions peaked at 341 MB).
    remember: bool,
    /// The folders whose sessions `files` holds (all when `None`).
    folders: Option<SharedFolders>,
}

/// The folders a search answers for (`Index::set_folders_only`).
pub type Folders<'a> = Option<&'a SharedFolders>;

/// Answers of at most this many distinct terms are kept,
const MEMO_TERMS: usize = 256;
/// in at most this many bytes each of the two memos (a term's sets are a
/// bit per session, ~40 KB at 100,000 sessions: every prefix typed is a
/// term, and a long session of typing kept them all).
const MEMO_BYTES: usize = 8 << 20;

fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |r| r.get(0))
}

impl SearchCache {
    /// The cache in `slot`, reloaded when the index changed since.
    fn current<'c>(
        conn: &Connection,
        db_path: &std::path::Path,
        slot: &'c mut Option<SearchCache>,
        folders: Folders,
    ) -> Result<&'c mut SearchCache, IndexError> {
        let version = data_version(conn)?;
        let cache = match slot.take() {
            Some(cache) if cache.version == version && cache.folders.as_ref() == folders => cache,
            _ => SearchCache {
                version,
                db_path: db_path.to_path_buf(),
                files: load_files(conn, folders.map(|f| f.as_slice()))?,
                folders: folders.cloned(),
                segs: HashMap::default(),
                stored: None,
                key_set: None,
                memo: Memo::new(MEMO_TERMS, MEMO_BYTES),
                lookups: Memo::new(MEMO_TERMS, MEMO_BYTES),
                matched: HashMap::new(),
                remember: false,
            },
        };
        Ok(slot.insert(cache))
    }

    fn segs(&mut self, conn: &Connection, kind: i64) -> Result<&[Dict], IndexError> {
        Ok(match self.segs.entry(kind) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(load_dictionaries(conn, &self.db_path, kind)?)
            }
        })
    }

    /// Loads the stored text unless it is loaded. True when the
    /// generation's file was not found (see [`Stored::gone`]).
    fn load_stored(
        &mut self,
        conn: &Connection,
        db_path: &std::path::Path,
        map: bool,
    ) -> Result<bool, IndexError> {
        if self.stored.is_none() {
            let folders = self.folders.as_deref().map(Vec::as_slice);
            self.stored = Some(Stored::load(conn, db_path, map, folders)?);
        }
        Ok(self.stored.as_ref().is_some_and(|s| s.gone))
    }

    /// The sessions having a term of the segments of kind `part` that
    /// matches `needle` as `how` says (remembered). It stops once it holds
    /// every live session: what more it would read names only files that
    /// are gone, which every answer leaves out (a letter or two is in
    /// nearly every session, and reading every posting list of every term
    /// holding it was 77 ms of a keystroke, `"t`, at 10,000 sessions). When
    /// the last lookup of the kind was of a needle this one extends (the
    /// word being typed), only the terms it matched are looked at (see
    /// [`Matched`]; at 100,000 sessions a scan of the dictionaries is
    /// ~100 ms), and a word's answer is counted (see [`narrowed_by_counts`]).
    fn lookup(
        &mut self,
        conn: &Connection,
        needle: &str,
        how: Match,
        part: i64,
    ) -> Result<Arc<IdSet>, IndexError> {
        let key = (needle.to_string(), how, part);
        if let Some(hit) = self.lookups.get(&key) {
            return Ok(hit.clone());
        }
        let live = self.files.live.clone();
        let remember = self.remember;
        let prior = self
            .matched
            .remove(&(how, part))
            .filter(|m| m.narrows_to(needle, how));
        let segs = self.segs(conn, part)?;
        let prior = prior.filter(|m| m.terms.len() == segs.len());
        let (hit, kept) = match prior {
            Some(prior)
                if needle.len() >= COUNT_FROM
                    && (prior.counts.is_some() || prior.post_bytes <= COUNT_BYTES) =>
            {
                let (hit, m) = narrowed_by_counts(conn, segs, needle, how, prior)?;
                (hit, Some(m))
            }
            prior => {
                let narrowed = prior.map(|m| m.narrow(needle, how).kept);
                let among = narrowed.as_ref().map(|m| m.terms.as_slice());
                let (hit, matched) = lookup_until(
                    conn,
                    segs,
                    needle,
                    how,
                    &|_| true,
                    Some(&live),
                    among,
                    remember,
                )?;
                // With `among`, the terms matched are those narrowed.
                let kept = match (matched, narrowed) {
                    (Some((terms, text)), None) => {
                        let refs: Vec<&Segment> = segs.iter().map(|(_, s)| s).collect();
                        Matched::of_text(needle, &refs, terms, text)
                    }
                    (_, narrowed) => narrowed.map(|mut m| {
                        m.post_bytes = postings_bytes(segs, &m.terms);
                        m
                    }),
                };
                (hit, kept)
            }
        };
        let hit = Arc::new(hit);
        if let Some(m) = kept {
            self.matched.insert((how, part), m);
        }
        let bytes = hit.heap_bytes();
        self.lookups.insert(key, hit.clone(), bytes);
        Ok(hit)
    }

    /// Drops the opened text file, so the next search opens it again (the
    /// way a long-lived searcher reads it).
    pub fn forget_text(&mut self) {
        self.stored = None;
    }

    /// See [`Stored::check_some`]: true while some stored text is left to
    /// check.
    pub fn check_text(&mut self, budget: usize) -> bool {
        self.stored.as_mut().is_some_and(|s| s.check_some(budget))
    }

    fn in_tails(&self, needle: &str) -> impl Iterator<Item = u32> + '_ {
        let f = memmem::Finder::new(needle.as_bytes()).into_owned();
        self.files
            .tails
            .iter()
            .filter(move |(_, t)| f.find(t.as_bytes()).is_some())
            .map(|(id, _)| *id)
    }
}

/// The sessions having a term that matches `needle` as `how` says and
/// that `keep` accepts (stopping once they are every live session).
fn lookup_where(
    conn: &Connection,
    segs: &[Dict],
    needle: &str,
    how: Match,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
    live: &IdSet,
) -> Result<IdSet, IndexError> {
    Ok(lookup_until(conn, segs, needle, how, keep, Some(live), None, false)?.0)
}

/// The sessions having a term of `segs` that matches `needle` as `how`
/// says and that `keep` accepts, stopping once the answer holds every id
/// of `live` (when there is one).
///
/// `among`: per segment, the terms that match (those a shorter needle
/// matched, narrowed: see [`Matched::narrow`]) instead of a search of the
/// whole dictionary. With
/// `remember`, also returns the terms this lookup matched per segment,
/// when it found them all, and their bytes (each followed by `\n`, up to
/// [`KEEP_BYTES`]) copied as the search found them: read again
/// afterwards, their pages (released behind the search) were read from
/// the file a second time.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn lookup_until(
    conn: &Connection,
    segs: &[Dict],
    needle: &str,
    how: Match,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
    live: Option<&IdSet>,
    among: Option<&[Vec<u32>]>,
    remember: bool,
) -> Result<(IdSet, Option<(Vec<Vec<u32>>, Vec<u8>)>), IndexError> {
    let full = |out: &IdSet| live.is_some_and(|l| !l.is_empty() && out.covers(l));
    let mut out = IdSet::default();
    let mut buf = Vec::new();
    let mut all_matched: Option<Vec<Vec<u32>>> = remember.then(|| Vec::with_capacity(segs.len()));
    let mut text: Vec<u8> = Vec::new();
    for (k, (rowid, s)) in segs.iter().enumerate() {
        let mut reader = Postings {
            conn,
            rowid: *rowid,
            seg: s,
            blob: None,
            batch: Vec::new(),
        };
        let mut result = Ok(false);
        let mut add = |reader: &mut Postings, out: &mut IdSet, r: (usize, usize)| {
            if reader.must_flush(r) {
                result = reader.flush(&mut buf, out, &full);
                if !matches!(result, Ok(false)) {
                    return false;
                }
            }
            reader.batch.push(r);
            true
        };
        let among = among.and_then(|a| a.get(k));
        if among.is_some() || (live.is_some() && s.docs() > 0) {
            // The matching terms, found once; their longest lists first.
            // Term numbers as `u32`: a dictionary's offsets are.
            let mut matched: Vec<u32> = Vec::new();
            match among {
                Some(terms) => {
                    let mut behind = s.behind();
                    matched.extend(terms.iter().copied().filter(|&t| {
                        behind.at(t as usize);
                        (t as usize) < s.len() && keep(s.term(t as usize))
                    }))
                }
                None => find_terms(
                    s,
                    needle,
                    how,
                    keep,
                    &mut matched,
                    all_matched.is_some().then_some(&mut text),
                ),
            }
            if let Some(m) = all_matched.as_mut() {
                m.push(matched.clone());
            }
            // Each list's place, looked up once (a third letter matches
            // a quarter of a million terms of the biggest dictionary).
            let ranges: Vec<(usize, usize)> = matched
                .iter()
                .map(|&t| s.postings_range(t as usize))
                .collect();
            let biggest = match s.docs() {
                0 => Biggest::NotDone,
                _ => biggest_lists_first(&mut reader, &ranges, &mut out, &full)?,
            };
            match biggest {
                Biggest::Full => return Ok((out, None)),
                Biggest::SegmentDone => continue,
                Biggest::NotDone => {}
            }
            for r in ranges {
                if !add(&mut reader, &mut out, r) {
                    break;
                }
            }
        } else {
            all_matched = None;
            // Terms come in dictionary order, and so do their posting
            // lists: a short word matches thousands of neighbours, read
            // together a batch at a time, so that the lookup stops (at the
            // next batch) once the answer is full rather than after finding
            // every term.
            s.find_while(needle.as_bytes(), how, &mut |t| {
                !keep(s.term(t)) || add(&mut reader, &mut out, s.postings_range(t))
            });
        }
        if matches!(result, Ok(false)) {
            result = reader.flush(&mut buf, &mut out, &full);
        }
        if result? {
            return Ok((out, None));
        }
    }
    Ok((out, all_matched.map(|m| (m, text))))
}

/// A dictionary this big is scanned on two threads, half of its terms
/// each: a word's third letter scans every dictionary, and at 100,000
/// sessions the tool output's biggest (6 million terms) took ~55 ms of
/// the ~200 of such a key, while the other core waited.
const SPLIT_SCAN_BYTES: usize = if cfg!(test) { 4096 } else { 32 << 20 };

/// The terms of `s` that match `needle` as `how` says and that `keep`
/// accepts, into `matched` in order; with `text`, their bytes too (each
/// followed by `\n`, up to about [`KEEP_BYTES`]).
fn find_terms(
    s: &Segment,
    needle: &str,
    how: Match,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
    matched: &mut Vec<u32>,
    mut text: Option<&mut Vec<u8>>,
) {
    let copy = text.is_some();
    let scan = |among: std::ops::Range<usize>, matched: &mut Vec<u32>, text: &mut Vec<u8>| {
        s.find_in(needle.as_bytes(), how, among, &mut |t| {
            let term = s.term(t);
            if keep(term) {
                matched.push(t as u32);
                if copy && text.len() <= KEEP_BYTES {
                    text.extend_from_slice(term);
                    text.push(b'\n');
                }
            }
            true
        })
    };
    let mut first_text = Vec::new();
    let first_text = text.as_deref_mut().unwrap_or(&mut first_text);
    if s.terms_bytes() < SPLIT_SCAN_BYTES {
        return scan(0..s.len(), matched, first_text);
    }
    let half = s.len() / 2;
    let (mut later, mut later_text) = (Vec::new(), Vec::new());
    rayon::join(
        || scan(0..half, matched, first_text),
        || scan(half..s.len(), &mut later, &mut later_text),
    );
    matched.extend(later);
    if let Some(text) = text {
        // As one scan would have copied them: while under the bound.
        for term in later_text.split_inclusive(|&b| b == b'\n') {
            if text.len() > KEEP_BYTES {
                break;
            }
            text.extend_from_slice(term);
        }
    }
}

/// Needles this long or longer are answered by counting (see
/// [`narrowed_by_counts`]): words, which the picker asks of the index from
/// their third character. A shorter one is usually in nearly every session,
/// and its lookup stops as soon as it knows that.
const COUNT_FROM: usize = 3;

/// A needle's lists are counted afresh only up to this size: past it, the
/// word is likely in nearly every session, and a lookup that stops once it
/// holds them all reads less (`the`).
const COUNT_BYTES: usize = 8 << 20;

/// The lookup of a needle that extends the last one of its kind (the word
/// being typed: `sess` → `sessi`), from the terms that one matched (see
/// [`Matched`]). The answer is the union of the posting lists of the terms
/// the needle still matches: rather than read them all again, the lists of
/// the terms it no longer matches (few, as a word grows) are taken away
/// from how many times each session was counted. The first such lookup
/// counts the lists it keeps, and so does one that would take away more
/// than it keeps.
fn narrowed_by_counts(
    conn: &Connection,
    segs: &[Dict],
    needle: &str,
    how: Match,
    prior: Matched,
) -> Result<(IdSet, Matched), IndexError> {
    let Narrowed { mut kept, dropped } = prior.narrow(needle, how);
    let dropped_bytes = postings_bytes(segs, &dropped);
    kept.post_bytes = prior.post_bytes.saturating_sub(dropped_bytes);
    let counts = match prior.counts {
        Some(mut counts) if dropped_bytes <= kept.post_bytes => {
            for ((rowid, s), terms) in segs.iter().zip(&dropped) {
                read_lists(conn, *rowid, s, terms, &mut |id| counts.remove(id))?;
            }
            counts
        }
        _ => {
            let mut counts = IdCounts::default();
            for ((rowid, s), terms) in segs.iter().zip(&kept.terms) {
                read_lists(conn, *rowid, s, terms, &mut |id| counts.add(id))?;
            }
            counts
        }
    };
    let mut hit = IdSet::default();
    counts.for_each_id(&mut |id| hit.insert(id));
    kept.counts = Some(counts);
    Ok((hit, kept))
}

/// The size of the posting lists of `terms` (per segment of `segs`).
fn postings_bytes(segs: &[Dict], terms: &[Vec<u32>]) -> usize {
    segs.iter()
        .zip(terms)
        .flat_map(|((_, s), ts)| ts.iter().map(|&t| s.postings_range(t as usize)))
        .map(|(a, b)| b - a)
        .sum()
}

/// Every id in the posting lists of `terms` (in dictionary order) of one
/// segment, read a batch at a time.
fn read_lists(
    conn: &Connection,
    rowid: i64,
    seg: &Segment,
    terms: &[u32],
    f: &mut dyn FnMut(u32),
) -> Result<(), IndexError> {
    let mut reader = Postings {
        conn,
        rowid,
        seg,
        blob: None,
        batch: Vec::new(),
    };
    let mut buf = Vec::new();
    for &t in terms {
        let r = seg.postings_range(t as usize);
        if reader.must_flush(r) {
            reader.drain(&mut buf, f)?;
        }
        reader.batch.push(r);
    }
    reader.drain(&mut buf, f)
}

/// What [`biggest_lists_first`] got to.
enum Biggest {
    /// The answer holds every live id.
    Full,
    /// It holds every id of the segment.
    SegmentDone,
    /// Neither: the segment's lists are to be read in full.
    NotDone,
}

/// How many of a segment's biggest matching lists are read before the rest.
const BIGGEST_LISTS: usize = 64;

/// A letter or two is in thousands of terms, and in nearly every file:
/// the longest posting lists among them (the commonest terms) usually hold
/// every id of the segment, which is known once as many distinct ids as
/// its `docs` were seen. Reads those lists of `matched` (terms of the
/// reader's segment), biggest first, into `out`; the caller reads the rest
/// only when they did not suffice.
fn biggest_lists_first(
    reader: &mut Postings,
    ranges: &[(usize, usize)],
    out: &mut IdSet,
    full: &dyn Fn(&IdSet) -> bool,
) -> Result<Biggest, IndexError> {
    use std::cmp::Reverse;
    let s = reader.seg;
    // The longest lists, kept in a small heap (a letter matches millions
    // of terms at 100,000 sessions: no copy of them all).
    let mut heap = std::collections::BinaryHeap::with_capacity(BIGGEST_LISTS + 1);
    for &(a, b) in ranges {
        // Most lists are no longer than the heap's shortest: not pushed.
        if heap.len() == BIGGEST_LISTS
            && heap
                .peek()
                .is_some_and(|Reverse(least): &Reverse<(usize, usize)>| (b - a, a) <= *least)
        {
            continue;
        }
        heap.push(Reverse((b - a, a)));
        if heap.len() > BIGGEST_LISTS {
            heap.pop();
        }
    }
    let mut biggest: Vec<(usize, usize)> = heap.into_iter().map(|Reverse(x)| x).collect();
    biggest.sort_unstable_by(|a, b| b.cmp(a));
    let (mut seen, mut distinct) = (IdSet::default(), 0usize);
    let mut buf = Vec::new();
    for (len, a) in biggest {
        buf.resize(len, 0);
        reader.blob()?.read_at_exact(&mut buf, a)?;
        decode_postings(&buf, &mut |id| {
            out.insert(id);
            if !seen.contains(&id) {
                seen.insert(id);
                distinct += 1;
            }
        });
        if full(out) {
            return Ok(Biggest::Full);
        }
        if distinct >= s.docs() {
            return Ok(Biggest::SegmentDone);
        }
    }
    Ok(Biggest::NotDone)
}

/// Posting lists of one segment read a batch at a time (see
/// [`lookup_until`]).
struct Postings<'c, 's> {
    conn: &'c Connection,
    rowid: i64,
    seg: &'s Segment,
    blob: Option<rusqlite::blob::Blob<'c>>,
    /// Ranges in the postings blob, each starting at or after the end of
    /// the one before, within [`READ_GAP`] of it.
    batch: Vec<(usize, usize)>,
}

/// A batch of posting lists is read once it spans this much.
const BATCH_BYTES: usize = 256 << 10;

impl<'c> Postings<'c, '_> {
    /// Whether `r` cannot join the batch (it is out of order, far from it,
    /// or the batch is big enough to read).
    fn must_flush(&self, r: (usize, usize)) -> bool {
        match (self.batch.first(), self.batch.last()) {
            (Some(&(start, _)), Some(&(_, end))) => {
                r.0 < end || r.0 > end + READ_GAP || end - start > BATCH_BYTES
            }
            _ => false,
        }
    }

    /// The segment's postings blob, opened when first read.
    fn blob(&mut self) -> Result<&rusqlite::blob::Blob<'c>, IndexError> {
        if self.blob.is_none() {
            let blob = self
                .conn
                .blob_open(MAIN_DB, c"segments", c"postings", self.rowid, true)?;
            if blob.len() != self.seg.postings_len() {
                return Err(IndexError::Corrupt(PathBuf::new()));
            }
            self.blob = Some(blob);
        }
        self.blob
            .as_ref()
            .ok_or(IndexError::Corrupt(PathBuf::new()))
    }

    /// Reads the batch's lists, handing `f` each id.
    fn drain(&mut self, buf: &mut Vec<u8>, f: &mut dyn FnMut(u32)) -> Result<(), IndexError> {
        let (Some(&(start, _)), Some(&(_, end))) = (self.batch.first(), self.batch.last()) else {
            return Ok(());
        };
        buf.resize(end - start, 0);
        self.blob()?.read_at_exact(buf, start)?;
        for &(a, b) in &self.batch {
            decode_postings(&buf[a - start..b - start], f);
        }
        self.batch.clear();
        Ok(())
    }

    /// Reads the batch's lists into `out`; true once `full` says it is.
    fn flush(
        &mut self,
        buf: &mut Vec<u8>,
        out: &mut IdSet,
        full: &dyn Fn(&IdSet) -> bool,
    ) -> Result<bool, IndexError> {
        let (Some(&(start, _)), Some(&(_, end))) = (self.batch.first(), self.batch.last()) else {
            return Ok(false);
        };
        buf.resize(end - start, 0);
        self.blob()?.read_at_exact(buf, start)?;
        for (n, &(a, b)) in self.batch.iter().enumerate() {
            decode_postings(&buf[a - start..b - start], &mut |id| out.insert(id));
            if n % 64 == 63 && full(out) {
                return Ok(true);
            }
        }
        self.batch.clear();
        Ok(full(out))
    }
}

/// Posting lists closer than this are read together.
const READ_GAP: usize = 16 << 10;

/// The index's text file, as searches read it.
enum Text {
    /// Read in place, for a long-lived searcher (the picker): copying each
    /// session's text out of the file cost as much as searching it. The map
    /// is kept with the cache (faulting its pages in again for every search
    /// cost ~20 ms a keystroke here) and dropped when the index changes; its
    /// pages are the page cache's, but they count in arbor's resident set.
    /// Only where a file cut short under the map is caught (see
    /// [`super::mapguard`]); elsewhere a long-lived searcher reads too.
    #[cfg(target_os = "linux")]
    Mapped(super::mapguard::GuardedMap),
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
    damaged: std::sync::Mutex<Vec<u32>>,
    /// The generation's file was not found. It is deleted only once a
    /// newer generation is committed (see `db::remove_generations_before`),
    /// so a new snapshot names a file that exists (unless someone else
    /// deleted it: then the text is [`Text::Missing`]).
    gone: bool,
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
    fn load(
        conn: &Connection,
        db_path: &std::path::Path,
        map: bool,
        folders: Option<&FolderRanges>,
    ) -> Result<Stored, IndexError> {
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
    fn check_some(&mut self, budget: usize) -> bool {
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
                if super::db::text_sum(&buf) == span.sum {
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
    /// [`super::mapguard::GuardedMap::release`]).
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
            if let Some(m) = super::mapguard::GuardedMap::new(f.try_clone()?, state.len) {
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
    if let Ok(p) = super::refresh::parse_file(&file, None) {
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
enum NoText {
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
fn body<'t>(
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
        if super::db::text_sum(bytes) != span.sum {
            return Err(NoText::Damaged);
        }
        span.checked.store(true, Relaxed);
        Ok(())
    };
    #[cfg(target_os = "linux")]
    let in_map = |m: &'t super::mapguard::GuardedMap, span: &Span| -> Result<&'t [u8], NoText> {
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
                super::db::read_exact_at(f, &mut buf[at..], span.off)
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

/// Literals one of which every match of `r` starts with (lowercased, as
/// the stored text is), when there is such a finite set of non-empty,
/// space-free literals. A necessary condition used to skip sessions.
fn regex_prefixes(r: &regex::Regex) -> Option<Vec<String>> {
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
fn regex_for_lowercased(pattern: &str) -> Option<regex::bytes::Regex> {
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
fn within_a_term(pattern: &str) -> bool {
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
struct Narrow {
    /// Sessions whose text surely matches (nothing to read).
    sure: IdSet,
    /// Sessions whose text may match: to be read.
    maybe: IdSet,
}

/// The sessions whose text of `kind` ([`TEXT_SEGMENT`] or a part's code)
/// may match a phrase or a regex, from the words' and the word pairs'
/// dictionaries; `None` when they cannot narrow it (a one- or two-character
/// phrase, a regex without literals): every session is to be read.
fn narrow(
    conn: &Connection,
    cache: &mut SearchCache,
    t: &Term,
    kind: i64,
) -> Result<Option<Narrow>, IndexError> {
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
) -> Result<Narrow, IndexError> {
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

enum Check<'q> {
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
    fn of(t: &'q Term) -> Option<Check<'q>> {
        Some(match t {
            Term::Phrase(p) => Check::Phrase(Box::new(memmem::Finder::new(p.as_bytes()))),
            Term::Regex(r) => match regex_for_lowercased(r.as_str()) {
                Some(bytes) => Check::Regex(bytes),
                None => Check::TextRegex(r),
            },
            Term::Word { .. } => return None,
        })
    }

    fn matches(&self, text: &[u8]) -> bool {
        match self {
            Check::Phrase(f) => f.find(text).is_some(),
            Check::Regex(r) => r.is_match(text),
            Check::TextRegex(r) => std::str::from_utf8(text).is_ok_and(|t| r.is_match(t)),
        }
    }
}

/// Loads what searches read (the dictionaries, where texts lie, the text
/// file) ahead of the first query.
pub fn warm(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    slot: &mut Option<SearchCache>,
    folders: Folders,
) -> Result<(), IndexError> {
    for may_retry in [true, false] {
        let snapshot = conn.unchecked_transaction()?;
        let c = SearchCache::current(&snapshot, db_path, slot, folders)?;
        // The words' dictionaries (the pairs' are loaded when a phrase or
        // a regex spanning words first asks).
        let kinds = std::iter::once(TEXT_SEGMENT)
            .chain(arbor_session::searchable::Part::ALL.map(|p| i64::from(p.code())));
        match kinds
            .into_iter()
            .try_for_each(|kind| c.segs(&snapshot, kind).map(|_| ()))
        {
            Err(IndexError::Changed) if may_retry => {
                *slot = None;
                continue;
            }
            other => other?,
        }
        if c.load_stored(&snapshot, db_path, map_text)? && may_retry {
            *slot = None;
            continue;
        }
        break;
    }
    Ok(())
}

/// Whether answering `t` reads stored text (else the word index answers).
fn reads_text(t: &Term) -> bool {
    match t {
        Term::Phrase(p) => p.contains(' ') || p.len() < 3,
        Term::Regex(_) => true,
        Term::Word { .. } => false,
    }
}

/// Which of `paths` (their places in the iteration) the index has no
/// text for (not indexed, or not a session to it): a body search cannot
/// have looked at them.
pub fn unindexed(
    conn: &Connection,
    db_path: &std::path::Path,
    cache: &mut Option<SearchCache>,
    folders: Folders,
    paths: &mut dyn Iterator<Item = (u32, &std::path::Path)>,
) -> Result<Vec<u32>, IndexError> {
    let cache = SearchCache::current(conn, db_path, cache, folders)?;
    let files = &cache.files;
    let set = cache
        .key_set
        .get_or_insert_with(|| files.keys.values().cloned().map(KeyBytes).collect());
    let mut keys = Keys::new();
    Ok(paths
        .filter(|(_, p)| !set.contains(keys.key(p).as_ref()))
        .map(|(i, _)| i)
        .collect())
}

/// Every session's path as the answers name it, handed to `f` to look at
/// or to replace by the caller's own allocation of the same path: the
/// picker's rows hold every path already, and a copy here was ~17 MB at
/// 100,000 sessions. A word's answer names nearly every session, and
/// mapping their paths to rows then was ~40 ms of the first such key at
/// 100,000 sessions, so the caller also learns them here.
pub fn share_paths(
    conn: &Connection,
    db_path: &std::path::Path,
    cache: &mut Option<SearchCache>,
    folders: Folders,
    f: &mut dyn FnMut(&mut Arc<std::ffi::OsStr>),
) -> Result<Arc<PathsById>, IndexError> {
    let cache = SearchCache::current(conn, db_path, cache, folders)?;
    // Shared with answers given before: those keep the table they name.
    for p in Arc::make_mut(&mut cache.files.keys).values_mut() {
        let before = Arc::clone(p);
        f(p);
        if p.as_encoded_bytes() != before.as_encoded_bytes() {
            // Another path would name another file: keep the index's.
            *p = before;
        }
    }
    // Its keys were clones of the paths replaced; made again when asked.
    cache.key_set = None;
    Ok(Arc::clone(&cache.files.keys))
}

/// Whether the answer to every body term of `query` is remembered in
/// `slot` (the next search of it reads nothing; the index may have
/// changed since, which that search then finds).
pub fn remembers(slot: &Option<SearchCache>, query: &Query) -> bool {
    slot.as_ref().is_some_and(|cache| {
        query
            .terms
            .iter()
            .take(32)
            .filter(|t| t.searches_body())
            .all(|t| {
                cache
                    .memo
                    .get(&format!("{}\n{}", query.parts.bits(), t.key()))
                    .is_some()
            })
    })
}

/// Asked between sessions while stored text is read: true when the answer
/// is no longer wanted (a newer query was typed).
pub type Cancel<'a> = &'a (dyn Fn() -> bool + Sync);

/// The sessions a search answers for, when not all of them: by path (the
/// rows on screen), or by the index's row ids (the ids its answers name).
#[derive(Clone, Copy)]
pub enum Within<'a> {
    Paths(&'a [&'a std::path::Path]),
    Ids(&'a [u32]),
}

/// `map_text`: the caller will search many times (see [`Text::Mapped`]).
#[allow(clippy::too_many_arguments)]
pub fn search(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    slot: &mut Option<SearchCache>,
    folders: Folders,
    query: &Query,
    within: Option<Within>,
    cancel: Cancel,
) -> Result<Option<BodyHits>, IndexError> {
    let body_terms: Vec<(usize, &Term)> = query
        .terms
        .iter()
        .enumerate()
        .filter(|(i, t)| *i < 32 && t.searches_body())
        .collect();
    if body_terms.is_empty() || query.error().is_some() {
        return Ok(None);
    }
    arbor_util::log::line("search start");
    let needs_text = query.parts.covers_text() && body_terms.iter().any(|(_, t)| reads_text(t));
    let mut may_retry = true;
    loop {
        // One snapshot for the whole answer: the cache's parts (loaded
        // now or in an earlier snapshot of the same `data_version`), the
        // posting lists and the text file agree with each other, whatever
        // another process commits meanwhile (a refresh giving files new
        // ids, a merge of segments, a compaction).
        let snapshot = conn.unchecked_transaction()?;
        let cache = SearchCache::current(&snapshot, db_path, slot, folders)?;
        cache.remember = map_text;
        if needs_text && cache.load_stored(&snapshot, db_path, map_text)? && may_retry {
            *slot = None;
            may_retry = false;
            continue;
        }
        let result = answer(
            &snapshot,
            db_path,
            map_text,
            &body_terms,
            query.parts,
            cache,
            within,
            cancel,
        );
        let damaged = cache
            .stored
            .as_mut()
            .map(|s| std::mem::take(s.damaged.get_mut().unwrap_or_else(|e| e.into_inner())))
            .unwrap_or_default();
        drop(snapshot);
        // What the lookups read of the dictionaries' maps leaves the
        // resident set (a word's first letters read nearly every term:
        // +390 MB at 100,000 sessions); the next key's lookups map again
        // the pages they read.
        for segs in cache.segs.values() {
            segs.iter().for_each(|(_, s)| s.release());
        }
        if matches!(result, Err(IndexError::Changed)) && may_retry {
            *slot = None;
            may_retry = false;
            continue;
        }
        if !damaged.is_empty() {
            mark_damaged(conn, &damaged);
            // This connection's own write: the cache is reloaded.
            *slot = None;
        }
        return result;
    }
}

/// `search` in one snapshot, with the stored text loaded when needed.
#[allow(clippy::too_many_arguments)]
fn answer(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    body_terms: &[(usize, &Term)],
    parts: Parts,
    cache: &mut SearchCache,
    within: Option<Within>,
    cancel: Cancel,
) -> Result<Option<BodyHits>, IndexError> {
    // `within` as row ids (the index keys absolute paths). Only texts to
    // read need it: word hits outside it are harmless to the caller, and a
    // query of words alone is answered from the word indexes.
    let reads = body_terms
        .iter()
        .any(|(_, t)| !matches!(t, Term::Word { .. }));
    let allowed: Option<IdSet> = within.filter(|_| reads).and_then(|w| match w {
        Within::Ids(ids) => Some(ids.iter().copied().collect()),
        // As many paths as the index has sessions (a listing of the whole
        // store): reading every session's text reads no more than theirs,
        // and mapping 100,000 paths to ids cost ~40 ms. Not for a cache of
        // some folders' sessions, which are few to map, and which, when
        // few, are read rather than looked up (see `FEW_TO_READ`).
        Within::Paths(w) if w.len() >= cache.files.keys.len() && cache.folders.is_none() => None,
        Within::Paths(w) => {
            let by_key: HashMap<&[u8], u32, FxBuild> = cache
                .files
                .keys
                .iter()
                .map(|(id, k)| (k.as_encoded_bytes(), *id))
                .collect();
            let mut keys = Keys::new();
            Some(
                w.iter()
                    .filter_map(|p| by_key.get(keys.key(p).as_ref()).copied())
                    .collect(),
            )
        }
    });
    arbor_util::log::line("search files loaded");

    let mut bits = TierBits::new(cache.files.keys.len());
    // The parts of the best ranks, when a search of them alone answered
    // this term already (the picker asks them first: see
    // `Searcher::search_first`): only the rest is looked up.
    let best = parts.ranked_above(2);
    for (i, t) in body_terms {
        let key = format!("{}\n{}", parts.bits(), t.key());
        let hits = match cache.memo.get(&key) {
            Some(h) if allowed.is_none() => h.clone(),
            _ => {
                let known = (allowed.is_none() && best != parts && !best.is_empty())
                    .then(|| {
                        cache
                            .memo
                            .get(&format!("{}\n{}", best.bits(), t.key()))
                            .cloned()
                    })
                    .flatten();
                let h = Arc::new(term_hits(
                    conn,
                    db_path,
                    map_text,
                    cache,
                    t,
                    parts,
                    allowed.as_ref(),
                    cancel,
                    known.as_deref().map(|k| (k, best)),
                )?);
                if allowed.is_none() {
                    let bytes = h.iter().map(IdSet::heap_bytes).sum();
                    cache.memo.insert(key, h.clone(), bytes);
                }
                h
            }
        };
        for (tier, set) in hits.iter().enumerate() {
            for id in set.iter() {
                bits.add(id, tier, 1u32 << i);
            }
        }
    }
    arbor_util::log::line("search terms answered");

    // By row id, with the table of their paths: no path is copied or
    // looked up per answer (the picker maps ids to its rows once).
    let ids = bits.of_live(&cache.files.live);
    Ok(Some(BodyHits::of_ids(ids, Arc::clone(&cache.files.keys))))
}

/// Per row id, the terms that matched it per rank ([`Tiers`]): in an
/// array by id while ids are dense (a table keyed by id was ~40 % of a
/// keystroke's answer when a word is in most sessions), in a table past
/// that.
struct TierBits {
    dense: Vec<Tiers>,
    sparse: HashMap<u32, Tiers, FxBuild>,
    /// Ids below this go to the array.
    limit: usize,
}

impl TierBits {
    /// For an index of `sessions` sessions (ids grow past their count as
    /// files are read again: a few per session stay in the array).
    fn new(sessions: usize) -> TierBits {
        TierBits {
            dense: Vec::new(),
            sparse: HashMap::default(),
            limit: (4 * sessions + (1 << 16)).min(BITMAP_IDS as usize),
        }
    }

    fn add(&mut self, id: u32, tier: usize, bit: u32) {
        let i = id as usize;
        if i >= self.limit {
            self.sparse.entry(id).or_default()[tier] |= bit;
            return;
        }
        if i >= self.dense.len() {
            // Ids come in increasing order per set: grown by doubling.
            let len = (i + 1).max(2 * self.dense.len()).min(self.limit);
            self.dense.resize(len, Tiers::default());
        }
        self.dense[i][tier] |= bit;
    }

    /// The ids with a bit, among `live`.
    fn of_live(self, live: &IdSet) -> Vec<(u32, Tiers)> {
        let none = Tiers::default();
        let dense = self
            .dense
            .into_iter()
            .enumerate()
            .filter(|(_, t)| *t != none)
            .map(|(id, t)| (id as u32, t));
        dense
            .chain(self.sparse)
            .filter(|(id, _)| live.contains(id))
            .collect()
    }
}

/// The sessions (among `allowed`, or all) whose parts in `parts` match one
/// term, per rank of the part (see [`Part::tier`]). The user and assistant
/// text together is answered from the stored text; every other part from
/// its own word index: exactly for a word, else as candidates whose session
/// files are then read to confirm (they are in the page cache).
#[allow(clippy::too_many_arguments)]
fn term_hits(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    cache: &mut SearchCache,
    t: &Term,
    parts: Parts,
    allowed: Option<&IdSet>,
    cancel: Cancel,
    known: Option<(&[IdSet; 3], Parts)>,
) -> Result<[IdSet; 3], IndexError> {
    // `known`: the answer of some of `parts` (looked up alone before).
    let (mut out, done) = match known {
        Some((k, done)) => (k.clone(), done),
        None => (Default::default(), Parts::NONE),
    };
    if parts.covers_text() && !done.covers_text() {
        out[0] = text_hits(conn, db_path, map_text, cache, t, allowed, cancel)?;
    }
    // What the stored text did not answer: the other parts, and the user's
    // or the assistant's text alone (the stored text holds both together).
    let rest = parts
        .iter()
        .filter(|p| !(done.contains(*p) || p.is_text() && parts.covers_text()))
        .fold(Parts::NONE, |a, p| a.union(Parts::one(p)));
    if rest.is_empty() {
        return Ok(out);
    }
    let keep = |keys: &PathsById, id: &u32| -> bool {
        keys.contains_key(id) && allowed.is_none_or(|a| a.contains(id))
    };
    let word = match t {
        Term::Word { lower, .. } => Some(lower.as_str()),
        Term::Phrase(p) if !p.contains(' ') && p.len() >= 3 => Some(p.as_str()),
        _ => None,
    };
    // Sessions to read (`None`: all of them) and the parts to read there.
    let mut cands: Option<IdSet> = Some(IdSet::default());
    let mut to_confirm = Parts::NONE;
    let short = short_needle(t);
    for part in rest.iter() {
        let kind = if part.is_text() {
            TEXT_SEGMENT
        } else {
            i64::from(part.code())
        };
        // Only the best part a session matches in ranks it (`tier_score`).
        // A letter or two is in millions of terms, and proving that a
        // session lacks it reads every posting list holding it (`"t` in the
        // tool output: 585 ms at 100,000 sessions); but nearly every session
        // has it in a better part already, and the few left are read.
        if short && !part.is_text() && part.tier() > 0 {
            if let Some(c) = cands.as_mut() {
                let mut left = cache.files.live.clone();
                for better in &out[..part.tier()] {
                    left.subtract(better);
                }
                if let Some(a) = allowed {
                    left.intersect(a);
                }
                if left.len_at_most(FEW_LEFT) {
                    to_confirm = to_confirm.union(Parts::one(part));
                    c.extend(left.iter());
                    continue;
                }
            }
        }
        // A regex whose matches stay inside one term: the terms answer.
        if let (Term::Regex(r), false) = (t, part.is_text()) {
            if let (true, Some(lits), Some(bytes)) = (
                within_a_term(r.as_str()),
                regex_prefixes(r),
                regex_for_lowercased(r.as_str()),
            ) {
                let live = cache.files.live.clone();
                for l in &lits {
                    let ids = lookup_where(
                        conn,
                        cache.segs(conn, kind)?,
                        l,
                        Match::Contains,
                        &|term| bytes.is_match(term),
                        &live,
                    )?;
                    out[part.tier()].add_kept(&ids, &cache.files.live, allowed);
                }
                continue;
            }
        }
        if let Some(w) = word {
            let ids = cache.lookup(conn, w, Match::Contains, kind)?;
            if part.is_text() {
                // Only candidates: which of the two it is in, the file says.
                to_confirm = to_confirm.union(Parts::one(part));
                if let Some(c) = cands.as_mut() {
                    c.extend(ids.iter());
                    c.extend(cache.in_tails(w));
                }
            } else {
                out[part.tier()].add_kept(&ids, &cache.files.live, allowed);
            }
            continue;
        }
        let found: Option<IdSet> = match t {
            Term::Word { .. } => Some(IdSet::default()),
            Term::Phrase(_) | Term::Regex(_) => match narrow(conn, cache, t, kind)? {
                // A regex without literals: every session is read.
                None => None,
                // Only candidates: which of the two it is in, the file says.
                Some(n) if part.is_text() => {
                    let mut c = n.maybe;
                    c.extend(n.sure.iter());
                    Some(c)
                }
                Some(n) => {
                    // What the dictionaries answer needs no reading.
                    out[part.tier()].add_kept(&n.sure, &cache.files.live, allowed);
                    if n.maybe.is_empty() {
                        continue;
                    }
                    Some(n.maybe)
                }
            },
        };
        to_confirm = to_confirm.union(Parts::one(part));
        match (found, cands.as_mut()) {
            (Some(f), Some(c)) => {
                c.extend(f.iter());
                if part.is_text() {
                    // A partial last line is not in the word index.
                    c.extend(cache.files.tails.iter().map(|(id, _)| *id));
                }
            }
            (None, _) => cands = None,
            (Some(_), None) => {}
        }
    }
    if to_confirm.is_empty() {
        return Ok(out);
    }
    let keys = &cache.files.keys;
    // Only the best part a session matches ranks it (`tier_score`): a
    // session already found in a part as good as the best left to
    // confirm gains nothing from its file being read (`re:token\s+\w+` at
    // 10,000 sessions read 8,900 files, 24 s, for sessions its text had
    // already found).
    let best_left = to_confirm
        .iter()
        .map(arbor_session::searchable::Part::tier)
        .min()
        .unwrap_or(0);
    let settled = |id: &u32| out[..=best_left].iter().any(|found| found.contains(id));
    let mut to_read: Vec<u32> = match cands {
        Some(c) => c
            .iter()
            .filter(|id| keep(keys, id) && !settled(id))
            .collect(),
        None => keys
            .keys()
            .copied()
            .filter(|id| keep(keys, id) && !settled(id))
            .collect(),
    };
    to_read.sort_unstable();
    arbor_util::log::line(format!("search: reading {} session files", to_read.len()));
    use rayon::prelude::*;
    let found: Vec<(u32, Tiers)> = to_read
        .par_iter()
        .map(|&id| {
            if cancel() {
                return Err(IndexError::Cancelled);
            }
            let mut m = PartMatcher::one(t, to_confirm);
            if let Some(path) = keys.get(&id) {
                m.file(std::path::Path::new(path));
            }
            Ok((id, m.tiers))
        })
        .collect::<Result<_, _>>()?;
    for (id, tiers) in found {
        for (tier, b) in tiers.iter().enumerate() {
            if b & 1 != 0 {
                out[tier].insert(id);
            }
        }
    }
    Ok(out)
}

/// At most this many sessions left to decide in a part are read rather
/// than looked up (see `term_hits`).
const FEW_LEFT: usize = 32;

/// A phrase or a regex asked of at most this many sessions reads their
/// text (~4 KB each at 100,000 realistic sessions) and nothing else.
const FEW_TO_READ: usize = 4096;

/// Whether looking `t` up reads a letter or two's posting lists: a phrase
/// of one or two characters, or a regex that starts so.
fn short_needle(t: &Term) -> bool {
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
fn text_hits(
    conn: &Connection,
    db_path: &std::path::Path,
    map_text: bool,
    cache: &mut SearchCache,
    t: &Term,
    allowed: Option<&IdSet>,
    cancel: Cancel,
) -> Result<IdSet, IndexError> {
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
    let mut to_read: Vec<u32> = match cands {
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
    };
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
            let batch_found: Result<Vec<u32>, IndexError> = ids
                .par_iter()
                .map_init(
                    || (Vec::new(), Vec::new()),
                    |(buf, from_file), &id| {
                        if cancel() {
                            return Err(IndexError::Cancelled);
                        }
                        let b = match body(
                            stored.spans.get(&id).map_or(&[][..], Vec::as_slice),
                            &stored.text,
                            tail_of.get(&id).copied(),
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
                        Ok(check.matches(b).then_some(id))
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

#[cfg(test)]
mod tests {
    use super::{map_bytes, text_batches, Span, Spans, FAULT_WINDOW};
    use super::{regex_for_lowercased, regex_prefixes, within_a_term, IdSet, BITMAP_IDS};
    use super::{MAP_RESIDENT, TEXT_BATCH};

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

    #[test]
    fn a_set_covers_another_when_it_holds_all_its_ids() {
        let set = |ids: &[u32]| {
            let mut s = IdSet::default();
            for &id in ids {
                s.insert(id);
            }
            s
        };
        let big = BITMAP_IDS + 5;
        let live = set(&[1, 64, 200, big]);
        assert!(set(&[0, 1, 64, 200, 300, big]).covers(&live));
        assert!(!set(&[1, 64, 200]).covers(&live));
        assert!(!set(&[1, 64, big]).covers(&live));
        // Shorter bitmaps: a word beyond the other's end must be empty.
        assert!(!set(&[1]).covers(&set(&[1, 4000])));
        assert!(set(&[1, 4000]).covers(&set(&[1])));
        assert!(set(&[]).covers(&set(&[])));
    }

    /// Each id's bits per rank, whether it is kept in the array (below
    /// the limit) or the table (past it, and past the bitmap), and only
    /// the live ones.
    #[test]
    fn tier_bits_by_id_dense_or_not() {
        let mut bits = super::TierBits::new(10);
        let far = BITMAP_IDS + 3;
        let over = bits.limit as u32 + 7;
        for (id, tier, bit) in [
            (3, 0, 1),
            (3, 2, 2),
            (9, 1, 4),
            (over, 0, 8),
            (far, 2, 1),
            (5, 0, 0),
        ] {
            bits.add(id, tier, bit);
        }
        let live: IdSet = [3, 5, over, far].into_iter().collect();
        let mut got = bits.of_live(&live);
        got.sort_unstable();
        assert_eq!(
            got,
            vec![(3, [1, 0, 2]), (over, [8, 0, 0]), (far, [0, 0, 1])]
        );
    }

    proptest::proptest! {
        /// Adding a set's ids kept by `live` (and `allowed`) a word at a
        /// time adds exactly the ids an id-by-id filter keeps, whatever
        /// the sets' lengths, and ids past the bitmap included.
        #[test]
        fn ids_kept_a_word_at_a_time_are_those_kept_one_by_one(
            before in proptest::collection::vec(0u32..700, 0..40),
            ids in proptest::collection::vec(0u32..900, 0..200),
            live in proptest::collection::vec(0u32..800, 0..200),
            allowed in proptest::option::of(proptest::collection::vec(0u32..600, 0..200)),
            large in proptest::collection::vec(0u32..4, 0..4),
        ) {
            let set = |v: &[u32], big: &[u32]| -> IdSet {
                v.iter().copied().chain(big.iter().map(|b| BITMAP_IDS + b)).collect()
            };
            let ids_set = set(&ids, &large);
            let live_set = set(&live, &large[..large.len() / 2]);
            let allowed_set = allowed.as_ref().map(|a| set(a, &large[..large.len().min(1)]));
            let mut got = set(&before, &[]);
            got.add_kept(&ids_set, &live_set, allowed_set.as_ref());
            let mut want = set(&before, &[]);
            want.extend(ids_set.iter().filter(|id| {
                live_set.contains(id) && allowed_set.as_ref().is_none_or(|a| a.contains(id))
            }));
            let sorted = |s: &IdSet| {
                let mut v: Vec<u32> = s.iter().collect();
                v.sort_unstable();
                v
            };
            proptest::prop_assert_eq!(sorted(&got), sorted(&want));
        }
    }

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

    /// A big dictionary, scanned on two threads, gives the terms one scan
    /// finds, in order, with their bytes, for every kind of match.
    #[test]
    fn a_split_scan_finds_what_one_scan_finds() {
        use super::super::terms::{distinct_tokens, Match, Segment, SegmentBuilder};
        let text: String = (0..3000u32)
            .map(|i| format!("w{}{} ", "xy".repeat((i % 11) as usize), i * 7919 % 100_003))
            .collect();
        let mut b = SegmentBuilder::default();
        b.add(1, distinct_tokens(&text));
        let e = b.take();
        let s = Segment::dictionary_only(e.terms.clone(), &e.starts).unwrap();
        assert!(s.terms_bytes() > 4 * super::SPLIT_SCAN_BYTES);
        let keep = |t: &[u8]| !t.ends_with(b"7");
        for needle in ["xy", "w", "9", "yx1", "nowhere"] {
            for how in [
                Match::Contains,
                Match::StartsWith,
                Match::EndsWith,
                Match::Exact,
            ] {
                let (mut want, mut want_text) = (Vec::new(), Vec::new());
                s.find(needle.as_bytes(), how, &mut |t| {
                    if keep(s.term(t)) {
                        want.push(t as u32);
                        want_text.extend_from_slice(s.term(t));
                        want_text.push(b'\n');
                    }
                });
                let (mut got, mut got_text) = (Vec::new(), Vec::new());
                super::find_terms(&s, needle, how, &keep, &mut got, Some(&mut got_text));
                assert_eq!(got, want, "{needle:?} {how:?}");
                assert_eq!(got_text, want_text, "{needle:?} {how:?}");
                let mut alone = Vec::new();
                super::find_terms(&s, needle, how, &keep, &mut alone, None);
                assert_eq!(alone, want, "{needle:?} {how:?}");
            }
        }
    }
}
