//! What searches keep loaded between them: the files' paths and row ids,
//! the segments' dictionaries, where each file's text lies, and the memo of
//! answered terms.

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use memchr::memmem;
use rusqlite::Connection;

use crate::codec::FxBuild;
use crate::db::key_path;
use crate::matched::Matched;
use crate::refresh::{FolderRanges, SharedFolders};
use crate::termfile::{self, TermFileError};
use crate::terms::{Match, Segment};
use crate::{Error, Result};
use arbor_util::memo::Memo;

use arbor_search::PathsById;

use super::idset::IdSet;
use super::postings::{lookup_until, narrowed_by_counts, postings_bytes, COUNT_BYTES, COUNT_FROM};
use super::text::Stored;

/// A path keyed by its bytes (the index's key), for sets looked up with a
/// key.
#[derive(PartialEq, Eq)]
pub(super) struct KeyBytes(pub(super) Arc<OsStr>);

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

pub(super) struct Files {
    /// For the sessions (not the problem rows). One allocation per path,
    /// made once: the key, the path answers name and the coverage check's
    /// set were three copies of every path (~50 MB at 100,000 sessions).
    pub(super) keys: Arc<PathsById>,
    /// The same ids as a set: a lookup that has found them all stops.
    pub(super) live: IdSet,
    /// Files whose partial last line has text (not in the word index).
    pub(super) tails: Vec<(u32, String)>,
}

/// The sessions' ids and paths, all or those under `folders`.
fn load_files(conn: &Connection, folders: Option<&FolderRanges>) -> Result<Files> {
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
            let key = r.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
            let path: Arc<OsStr> = Arc::from(key_path(key).as_os_str());
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
pub(super) type Dict = (i64, Segment);

/// The dictionaries of the segments of one kind ([`TEXT_SEGMENT`] for the
/// stored text's words, a part's code, or [`pair_segment`] of either).
fn load_dictionaries(
    conn: &Connection,
    db_path: &std::path::Path,
    kind: i64,
) -> Result<Vec<Dict>, Error> {
    let mut st = conn
        .prepare("SELECT id, terms_len, terms_sum, starts, docs FROM segments WHERE part = ?1")?;
    let mut rows = st.query([kind])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let len = usize::try_from(r.get::<_, i64>(1)?).unwrap_or(usize::MAX);
        let terms = match termfile::load(db_path, id, len, r.get(2)?) {
            Ok(t) => t,
            Err(TermFileError::Gone) => return Err(Error::Changed),
            Err(TermFileError::Damaged) => {
                // The next refresh starts the index again (see
                // `refresh::check_text_file`).
                termfile::remove(db_path, &[id]);
                return Err(Error::Corrupt(db_path.to_path_buf()));
            }
            Err(TermFileError::Io(source)) => {
                return Err(Error::Io {
                    path: db_path.to_path_buf(),
                    source,
                })
            }
        };
        let starts = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
        let docs = usize::try_from(r.get::<_, i64>(4)?).unwrap_or(0);
        match Segment::dictionary_in(terms, starts) {
            Some(s) => out.push((id, s.with_docs(docs))),
            None => return Err(Error::Corrupt(PathBuf::new())),
        }
    }
    Ok(out)
}

/// One chunk of a file's stored text: where it lies, and its checksum.
pub(super) struct Span {
    pub(super) off: u64,
    pub(super) len: usize,
    pub(super) sum: i64,
    /// Its bytes in a map were found to match `sum` (a map is checked once
    /// per snapshot; text read from the file is checked every time).
    pub(super) checked: AtomicBool,
}

/// Where each file's text lies in the text file, in order.
pub(super) type Spans = HashMap<u32, Vec<Span>, FxBuild>;

/// Where the stored text of each session lies, of all or of those under
/// `folders` (through the files' index of paths and the chunks' of files:
/// every session's spans were ~40 ms of a one-folder search at 100,000).
pub(super) fn load_spans(conn: &Connection, folders: Option<&FolderRanges>) -> Result<Spans> {
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

fn add_spans(spans: &mut Spans, rows: &mut rusqlite::Rows) -> Result<()> {
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
pub(super) fn mark_damaged(conn: &Connection, ids: &[u32]) {
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
    pub(super) files: Files,
    /// Dictionaries by kind of segment, each loaded when first asked (a
    /// word never reads the pairs' dictionaries).
    pub(super) segs: HashMap<i64, Vec<Dict>, FxBuild>,
    /// Where texts lie, with their file opened; loaded once per cache.
    pub(super) stored: Option<Stored>,
    /// The files' keys as a set, built when first asked (coverage checks).
    pub(super) key_set: Option<HashSet<KeyBytes, FxBuild>>,
    /// Term key → the sessions whose bodies match it.
    pub(super) memo: Memo<String, Arc<[IdSet; 3]>>,
    /// Dictionary lookups of phrase words → the sessions having such a term.
    lookups: Memo<(String, Match, i64), Arc<IdSet>>,
    /// Per kind of lookup and of segment, the terms the last lookup
    /// matched (the next key's lookup looks only at those when it can).
    matched: HashMap<(Match, i64), Matched>,
    /// Lookups keep their terms in `matched`: for a searcher that searches
    /// again as a word is typed. A one-shot search does not copy them (up
    /// to 16 MB of terms per kind of segment: `arbor list --query ses` at
    /// 100,000 sessions peaked at 341 MB).
    pub(super) remember: bool,
    /// The folders whose sessions `files` holds (all when `None`).
    pub(super) folders: Option<SharedFolders>,
}

/// The folders a search answers for (`Index::set_folders_only`).
pub type Folders<'a> = Option<&'a SharedFolders>;

/// Answers of at most this many distinct terms are kept,
const MEMO_TERMS: usize = 256;
/// in at most this many bytes each of the two memos (a term's sets are a
/// bit per session, ~40 KB at 100,000 sessions: every prefix typed is a
/// term, and a long session of typing kept them all).
const MEMO_BYTES: usize = 8 << 20;

pub(super) fn data_version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

impl SearchCache {
    /// The cache in `slot`, reloaded when the index changed since.
    pub(super) fn current<'c>(
        conn: &Connection,
        db_path: &std::path::Path,
        slot: &'c mut Option<SearchCache>,
        folders: Folders,
    ) -> Result<&'c mut SearchCache, Error> {
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

    pub(super) fn segs(&mut self, conn: &Connection, kind: i64) -> Result<&[Dict], Error> {
        Ok(match self.segs.entry(kind) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(load_dictionaries(conn, &self.db_path, kind)?)
            }
        })
    }

    /// Loads the stored text unless it is loaded. True when the
    /// generation's file was not found (see [`Stored::gone`]).
    pub(super) fn load_stored(
        &mut self,
        conn: &Connection,
        db_path: &std::path::Path,
        map: bool,
    ) -> Result<bool, Error> {
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
    pub(super) fn lookup(
        &mut self,
        conn: &Connection,
        needle: &str,
        how: Match,
        part: i64,
    ) -> Result<Arc<IdSet>, Error> {
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

    pub(super) fn in_tails(&self, needle: &str) -> impl Iterator<Item = u32> + '_ {
        let f = memmem::Finder::new(needle.as_bytes()).into_owned();
        self.files
            .tails
            .iter()
            .filter(move |(_, t)| f.find(t.as_bytes()).is_some())
            .map(|(id, _)| *id)
    }
}
