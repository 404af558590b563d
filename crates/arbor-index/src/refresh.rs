//! Bringing the index up to date with the files: what changed, parsing only
//! what is new, and writing it back transactionally.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rayon::prelude::*;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior, MAIN_DB};

use super::behind::{self, BuildLock, Deferred};
use super::codec::{self, fingerprint, FxBuild};
use super::db::{key_path, path_key, set_meta, text_path, text_state, write_at, Keys, TextState};
use super::stored::{StoredRows, Unchanged};
use super::termfile;
use super::terms::{
    merge_to_files, pair_key, pair_left, pair_right, pair_sides, Merged, PairSet, Segment,
    SegmentBuilder, Sides, TermSet, EMPTY_SIDE,
};
use super::{IndexError, RefreshStats};
use arbor_session::info::{mtime_ms, read_lines, with_read_buffer, InfoScanner, SessionInfo};
use arbor_session::line_skim::{skim_line, LineSpans};
use arbor_session::reader::ReadError;
use arbor_session::searchable::{
    may_have_other_parts, part_words_of, parts_of_line, skim_part_words, Part, Parts, SeenPieces,
};
use arbor_session::words::str_words;
use arbor_store::scan::{ScanProblem, SessionFile};
use arbor_util::hash::bytes_hash;
use arbor_util::shared_path::SharedPath;

/// What identifies a version of a file without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
}

impl Stat {
    pub fn of(meta: &std::fs::Metadata) -> Stat {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stat {
                dev: meta.dev(),
                ino: meta.ino(),
                size: meta.size(),
                mtime_ns: meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            Stat {
                dev: 0,
                ino: 0,
                size: meta.len(),
                mtime_ns,
            }
        }
    }
}

/// Stats every file, on all cores.
#[cfg(not(target_os = "linux"))]
fn stat_all(files: &[SessionFile]) -> Vec<std::io::Result<Stat>> {
    files
        .par_iter()
        .map(|f| std::fs::metadata(&f.path).map(|m| Stat::of(&m)))
        .collect()
}

/// Stats every file, on all cores, relative to its folder: a warm list of
/// 10,000 sessions is mostly these calls, and a full path lookup per file
/// costs the kernel several times a lookup of one name. Files of a folder
/// are listed together, so each worker opens a folder once per run of them.
#[cfg(target_os = "linux")]
fn stat_all(files: &[SessionFile]) -> Vec<std::io::Result<Stat>> {
    files
        .par_iter()
        .map_init(
            || None::<(PathBuf, std::io::Result<linux::Dir>)>,
            |dir, f| {
                let Some((parent, name)) = arbor_util::dir_and_name(&f.path) else {
                    return std::fs::metadata(&f.path).map(|m| Stat::of(&m));
                };
                if dir.as_ref().is_none_or(|(p, _)| p != parent) {
                    *dir = Some((parent.to_path_buf(), linux::Dir::open(parent)));
                }
                match dir.as_ref().map(|(_, d)| d) {
                    Some(Ok(d)) => d.stat(name),
                    _ => std::fs::metadata(&f.path).map(|m| Stat::of(&m)),
                }
            },
        )
        .collect()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsStr;
    use std::io;
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, Mode, OFlags};

    use super::Stat;

    /// A folder opened only to look names up in it.
    pub struct Dir(OwnedFd);

    impl Dir {
        pub fn open(path: &Path) -> io::Result<Dir> {
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
            Ok(Dir(rustix::fs::open(path, flags, Mode::empty())?))
        }

        /// Like `std::fs::metadata` (symlinks followed) of `name` in here.
        pub fn stat(&self, name: &OsStr) -> io::Result<Stat> {
            let st = rustix::fs::statat(&self.0, name, AtFlags::empty())?;
            // The field types vary with the architecture.
            Ok(Stat {
                dev: st.st_dev as u64,
                ino: st.st_ino as u64,
                size: st.st_size as u64,
                mtime_ns: (st.st_mtime as i64).saturating_mul(1_000_000_000)
                    + st.st_mtime_nsec as i64,
            })
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn same_stat_as_std() {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("a.jsonl");
            std::fs::write(&p, b"{}\n").unwrap();
            let ours = super::Dir::open(dir.path())
                .unwrap()
                .stat(p.file_name().unwrap())
                .unwrap();
            let std = super::Stat::of(&std::fs::metadata(&p).unwrap());
            assert_eq!(ours, std);
            let missing = super::Dir::open(dir.path()).unwrap().stat("nope".as_ref());
            assert_eq!(missing.unwrap_err().kind(), std::io::ErrorKind::NotFound);
        }
    }
}

/// A row as stored.
#[derive(Clone, Debug)]
pub struct Cached {
    pub id: i64,
    pub stat: Stat,
    pub parsed: u64,
    pub head_fp: i64,
    pub tail_fp: i64,
    pub state: Option<Vec<u8>>,
    pub row: Option<Vec<u8>>,
    pub problem: Option<String>,
}

impl Cached {
    /// The list row this cached entry stands for.
    pub fn info(&self, file: &SessionFile) -> Option<SessionInfo> {
        match (&self.row, &self.state) {
            (Some(row), _) => finish_info(codec::decode(row)?, true, file),
            (None, Some(state)) => finish_info(codec::decode(state)?, false, file),
            (None, None) => None,
        }
    }
}

const SELECT_CACHED: &str =
    "SELECT id, path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp, state, row, problem FROM files";

/// [`SELECT_CACHED`] of the rows whose paths are in `?1..?2`, through the
/// index of paths (see [`folder_ranges`]).
const SELECT_CACHED_IN: &str =
    "SELECT id, path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp, state, row, problem
     FROM files WHERE path >= ?1 AND path < ?2";

/// Ranges of stored paths, `from..to` (see [`folder_ranges`]).
pub type FolderRanges = [(Vec<u8>, Vec<u8>)];

/// [`FolderRanges`] as an index keeps them for the searches after a
/// refresh (`Index::set_folders_only`).
pub type SharedFolders = std::sync::Arc<Vec<(Vec<u8>, Vec<u8>)>>;

/// The ranges of stored paths (keys) under the folders of `keys`, in
/// order, none inside another: a folder `f` is `f/` up to `f0` (the byte
/// after the separator), so what lies in a folder below it is in its range.
pub(crate) fn folder_ranges(keys: &[Cow<[u8]>]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let is_sep = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    let mut folders: Vec<&[u8]> = Vec::new();
    for key in keys {
        let Some(i) = key.iter().rposition(is_sep) else {
            continue;
        };
        let folder = &key[..=i];
        // Listed files come folder by folder.
        if folders.last() != Some(&folder) {
            folders.push(folder);
        }
    }
    ranges_of(folders)
}

/// [`folder_ranges`] of these folders themselves.
pub(crate) fn dir_ranges(dirs: &[std::path::PathBuf]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut k = Keys::new();
    let sep = std::path::MAIN_SEPARATOR as u8;
    let keys: Vec<Vec<u8>> = dirs
        .iter()
        .map(|d| {
            let mut key = k.key(d).into_owned();
            while key.last() == Some(&sep) {
                key.pop();
            }
            key.push(sep);
            key
        })
        .collect();
    ranges_of(keys.iter().map(Vec::as_slice).collect())
}

/// Folders' keys, each ending with its separator, as ranges.
fn ranges_of(mut folders: Vec<&[u8]>) -> Vec<(Vec<u8>, Vec<u8>)> {
    folders.sort_unstable();
    folders.dedup();
    let mut ranges: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for folder in folders {
        if ranges
            .last()
            .is_some_and(|(from, _)| folder.starts_with(from))
        {
            continue;
        }
        let mut to = folder.to_vec();
        if let Some(sep) = to.last_mut() {
            *sep += 1;
        }
        ranges.push((folder.to_vec(), to));
    }
    ranges
}

/// [`SELECT_CACHED`] in the table's order, for [`stored_rows`] (which
/// binds a limit it does not use here).
const SELECT_CACHED_ALL: &str =
    "SELECT id, path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp, state, row, problem
     FROM files NOT INDEXED WHERE ?1 = ?1";

/// Every stored row's fingerprint as the read of the stored rows found
/// them ([`stored_rows`] with a look), matched to the listed files, for the
/// refresh after it ([`UnchangedRows::Looked`]): at 100,000 sessions
/// reading the table a second time for them was ~230 ms of the picker's
/// load, and matching them to the files again another ~50.
#[derive(Default)]
pub struct StoredLook {
    /// Per listed file, its stored row.
    found: Vec<Option<Found>>,
    /// Keys of stored files not among those listed.
    unlisted: Vec<Vec<u8>>,
}

/// The keys of `files` (see [`Keys::key`]), borrowed where they can be.
pub fn file_keys(files: &[SessionFile]) -> Vec<Cow<'_, [u8]>> {
    let mut k = Keys::new();
    files.iter().map(|f| k.key(&f.path)).collect()
}

/// Listed files by their keys, to match stored rows with as they are read.
pub struct ListedKeys<'f> {
    files: &'f [SessionFile],
    keys: &'f [Cow<'f, [u8]>],
    /// Positions in `files`, placed by their keys' hashes: made on all
    /// cores first, so the table's one thread only places them (~20 ms of
    /// a load's critical path at 100,000 files).
    by_key: hashbrown::HashTable<u32>,
    /// Positions of files listed again later (rare: overlapping roots),
    /// which a key never stands for.
    shadowed: HashSet<u32>,
}

impl<'f> ListedKeys<'f> {
    /// `keys` are those of `files` ([`file_keys`]).
    pub fn new(files: &'f [SessionFile], keys: &'f [Cow<'f, [u8]>]) -> ListedKeys<'f> {
        let hashes: Vec<u64> = keys.par_iter().map(|k| bytes_hash(k)).collect();
        Self::with_hashes(files, keys, hashes)
    }

    /// [`ListedKeys::new`] on this thread alone: beside the stats, which
    /// hold every thread of rayon's pool, the keys' hashes waited for them
    /// (a warm `list` at 100,000 sessions, 0.48 -> 0.53 s).
    fn new_here(files: &'f [SessionFile], keys: &'f [Cow<'f, [u8]>]) -> ListedKeys<'f> {
        let hashes: Vec<u64> = keys.iter().map(|k| bytes_hash(k)).collect();
        Self::with_hashes(files, keys, hashes)
    }

    fn with_hashes(
        files: &'f [SessionFile],
        keys: &'f [Cow<'f, [u8]>],
        hashes: Vec<u64>,
    ) -> ListedKeys<'f> {
        let mut by_key = hashbrown::HashTable::with_capacity(keys.len());
        let mut shadowed = HashSet::new();
        for (i, &hash) in hashes.iter().enumerate() {
            // A file listed twice is matched as its last listing (as a map
            // of the keys would).
            let same = |&j: &u32| keys[j as usize] == keys[i];
            match by_key.find_mut(hash, same) {
                Some(at) => {
                    shadowed.insert(*at);
                    *at = i as u32;
                }
                None => {
                    by_key.insert_unique(hash, i as u32, |&j| hashes[j as usize]);
                }
            }
        }
        ListedKeys {
            files,
            keys,
            by_key,
            shadowed,
        }
    }

    /// [`ListedKeys::get`], trying first the files after the last few
    /// found: the listing is in the paths' order (see
    /// `store::scan::list_store`), and so are the rows of an index built in
    /// one go (see [`read_order`]; a run per parse worker, interleaved) or
    /// of sessions added one after another in a folder, so most rows are
    /// the file after one found just before. At 100,000 sessions, hashing
    /// each stored row's path, looking it up and comparing the paths was
    /// 5-10 % of the picker's load (perf).
    fn get_after(&self, key: &[u8], next: &mut Cursors) -> Option<u32> {
        // Rows in no order (an index built before it read files in their
        // paths' order) try only the last one's next: each try there is a
        // cache miss or two.
        let tries = match next.misses > 2 * next.hits + 64 {
            true => 1,
            false => next.at.len(),
        };
        let hit = next.at[..tries].iter().position(|&at| {
            self.keys
                .get(at as usize)
                .is_some_and(|k| k.as_ref() == key && !self.shadowed.contains(&at))
        });
        let (slot, i) = match hit {
            Some(slot) => {
                next.hits += 1;
                (slot, next.at[slot])
            }
            // The oldest cursor makes room.
            None => {
                next.misses += 1;
                (next.at.len() - 1, self.get(key)?)
            }
        };
        // Most recently used first.
        next.at.copy_within(0..slot, 1);
        next.at[0] = i + 1;
        Some(i)
    }

    /// Which listed file the stored row of `key` is.
    fn get(&self, key: &[u8]) -> Option<u32> {
        let keys = self.keys;
        self.by_key
            .find(bytes_hash(key), |&i| keys[i as usize].as_ref() == key)
            .copied()
    }

    /// Which listed file `path` is.
    pub fn find(&self, path: &Path) -> Option<usize> {
        let key = Keys::new().key(path);
        self.get(&key).map(|i| i as usize)
    }
}

/// Where [`ListedKeys::get_after`] looks first: after the files it found
/// last, one per run of rows in order (as many as the parse workers that
/// may have written them).
#[derive(Default)]
struct Cursors {
    at: [u32; 4],
    hits: u32,
    misses: u32,
}

/// A stored row found for a listed file, decoded as it was read (no copy
/// of the blobs is kept: at 100,000 sessions an arena of them and the
/// pages it faulted in were most of a warm listing's time and memory).
struct Found {
    /// A changed file's state is read again ([`fill_states`]).
    cached: Seen,
    /// Where in [`Looked::rows`] the list row it stands for is (without
    /// its path and agent); `None` when not decoded (not asked for, or
    /// damaged).
    info: Option<u32>,
    /// It has a `state` or a `row`.
    has_blob: bool,
}

/// A [`Cached`] without its blobs, as [`look`] keeps one per listed file
/// (88 bytes, not 136: ~5 MB at 100,000 files, held while the picker
/// loads and while the labels screen reads its rows).
struct Seen {
    id: i64,
    stat: Stat,
    parsed: u64,
    head_fp: i64,
    tail_fp: i64,
    problem: Option<Box<str>>,
}

// One per listed file: growing it grows the picker's load at 100,000.
const _: () = assert!(std::mem::size_of::<Option<Found>>() <= 96);

impl Seen {
    fn read(r: &rusqlite::Row) -> rusqlite::Result<Seen> {
        let c = cached_from_row_lite(r)?;
        Ok(Seen {
            id: c.id,
            stat: c.stat,
            parsed: c.parsed,
            head_fp: c.head_fp,
            tail_fp: c.tail_fp,
            problem: c.problem.map(String::into_boxed_str),
        })
    }

    /// The stored row to read a changed file from (its state read later).
    fn into_cached(self) -> Cached {
        Cached {
            id: self.id,
            stat: self.stat,
            parsed: self.parsed,
            head_fp: self.head_fp,
            tail_fp: self.tail_fp,
            state: None,
            row: None,
            problem: self.problem.map(String::from),
        }
    }
}

/// `state` (a scanner before `finish`) or `row` (finished) → the list row.
fn finish_info(info: SessionInfo, is_row: bool, file: &SessionFile) -> Option<SessionInfo> {
    let mut info = finished(info, is_row)?;
    info.path = file.path.as_path().into();
    info.agent = file.agent;
    Some(info)
}

/// The list row of a decoded `state` or `row`, without its path and agent.
fn finished(info: SessionInfo, is_row: bool) -> Option<SessionInfo> {
    if is_row {
        Some(info)
    } else {
        InfoScanner::resume(info).finish().ok()
    }
}

/// The parent folder of a path key (everything before the last separator).
fn parent_bytes(key: &[u8]) -> Option<&[u8]> {
    let sep = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    let i = key.iter().rposition(sep)?;
    Some(&key[..i.max(1)])
}

/// Like `cached_from_row` without reading the `state` and `row` blobs.
fn cached_from_row_lite(r: &rusqlite::Row) -> rusqlite::Result<Cached> {
    Ok(Cached {
        id: r.get(0)?,
        stat: Stat {
            dev: r.get::<_, i64>(2)? as u64,
            ino: r.get::<_, i64>(3)? as u64,
            size: r.get::<_, i64>(4)? as u64,
            mtime_ns: r.get(5)?,
        },
        parsed: r.get::<_, i64>(6)? as u64,
        head_fp: r.get(7)?,
        tail_fp: r.get(8)?,
        state: None,
        row: None,
        problem: r.get(11)?,
    })
}

fn cached_from_row(r: &rusqlite::Row) -> rusqlite::Result<(Vec<u8>, Cached)> {
    let mut c = cached_from_row_lite(r)?;
    c.state = r.get(9)?;
    c.row = r.get(10)?;
    Ok((r.get(1)?, c))
}

pub fn load_one(conn: &Connection, path: &Path) -> rusqlite::Result<Option<Cached>> {
    let sql = format!("{SELECT_CACHED} WHERE path = ?1");
    conn.query_row(&sql, [path_key(path)], |r| cached_from_row(r).map(|c| c.1))
        .optional()
}

/// How much of the file a fingerprint covers.
const FP_BYTES: u64 = 4096;

fn read_range(f: &mut File, off: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut v = vec![0u8; len as usize];
    f.seek(SeekFrom::Start(off))?;
    f.read_exact(&mut v)?;
    Ok(v)
}

/// Fingerprints of the first and the last (up to) 4 KiB before `end`.
fn fingerprints(f: &mut File, end: u64) -> std::io::Result<(i64, i64)> {
    let head = read_range(f, 0, end.min(FP_BYTES))?;
    let tail = read_range(f, end.saturating_sub(FP_BYTES), end.min(FP_BYTES))?;
    Ok((fingerprint(&head), fingerprint(&tail)))
}

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
        let sets = &mut self.sets;
        let mut add = |part: Part, w: &[u8]| add_word(sets, part, w);
        // Skimmed from the bytes; an unusual line is decoded (same words).
        if !skim_part_words(
            line,
            self.wanted,
            &mut self.scratch,
            &mut self.seen,
            &mut add,
        ) {
            self.decoded(line);
        }
    }

    /// [`PartWords::line`] for a line already skimmed (`spans`).
    fn skimmed(&mut self, line: &[u8], spans: &LineSpans) {
        let sets = &mut self.sets;
        let mut add = |part: Part, w: &[u8]| add_word(sets, part, w);
        if !part_words_of(
            spans,
            self.wanted,
            &mut self.scratch,
            &mut self.seen,
            &mut add,
        ) {
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
    ReadError::NotASession {
        path: path.to_path_buf(),
        reason,
    }
    .to_string()
}

/// Parses `file`, continuing `cached` when the file only grew.
pub fn parse_file(file: &SessionFile, cached: Option<&Cached>) -> Result<Parsed, ScanProblem> {
    let path = &file.path;
    let problem = |e: ReadError| ScanProblem {
        path: path.clone(),
        reason: e.to_string(),
    };
    let io = |source| {
        problem(ReadError::Io {
            path: path.clone(),
            source,
        })
    };
    let (mut f, meta) = arbor_session::open::open_session_file(path).map_err(problem)?;
    let stat = Stat::of(&meta);
    if file.agent.is_foreign() {
        return parse_foreign(file, &mut f, &meta, stat);
    }
    let mut start = 0u64;
    let mut scanner = None;
    let mut continued = None;
    if let Some(c) = cached {
        let grew = c.stat.dev == stat.dev && c.stat.ino == stat.ino && stat.size > c.stat.size;
        if let (true, Some(state)) = (grew && c.parsed > 0, c.state.as_deref()) {
            if fingerprints(&mut f, c.parsed).map_err(io)? == (c.head_fp, c.tail_fp) {
                if let Some(info) = codec::decode(state) {
                    start = c.parsed;
                    scanner = Some(InfoScanner::resume(info));
                    continued = Some((c.id, c.parsed));
                }
            }
        }
    }
    let mut s = scanner
        .unwrap_or_else(|| InfoScanner::new(path, mtime_ms(&meta)))
        .with_normalized_text();
    s.set_file_mtime(mtime_ms(&meta));
    f.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut complete_end = start;
    let mut tail: Option<Vec<u8>> = None;
    let mut words = PartWords::pooled();
    let read = with_read_buffer(|buf| {
        read_lines(&mut f, buf, |line, complete, end| {
            if complete {
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
    })
    .map_err(io)?;
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
        reason: ReadError::Io {
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

/// How many bytes of parse results may wait for the writer. While it
/// commits they pile up to this, beside its builders at their fullest: at
/// 64 MB a first run at 100,000 sessions peaked at 336–346 MB, at 32 MB at
/// 272–300 MB (alternated runs), no slower.
const IN_FLIGHT_BYTES: usize = 32 << 20;

/// Bytes that may be in flight between threads: taking waits while others
/// hold them (one taker alone may exceed the limit, so a result bigger
/// than it still goes).
struct Budget {
    /// The bytes held, and whether the budget is closed.
    held: std::sync::Mutex<(usize, bool)>,
    freed: std::sync::Condvar,
    limit: usize,
}

impl Budget {
    fn new(limit: usize) -> Budget {
        Budget {
            held: std::sync::Mutex::new((0, false)),
            freed: std::sync::Condvar::new(),
            limit,
        }
    }

    fn take(&self, n: usize) {
        let Ok(mut held) = self.held.lock() else {
            return;
        };
        while !held.1 && held.0 > 0 && held.0 + n > self.limit {
            held = match self.freed.wait(held) {
                Ok(h) => h,
                Err(_) => return,
            };
        }
        held.0 += n;
    }

    fn give(&self, n: usize) {
        if let Ok(mut held) = self.held.lock() {
            held.0 = held.0.saturating_sub(n);
            self.freed.notify_all();
        }
    }

    /// Lets every taker go from now on: the one giving bytes back has
    /// stopped (had it panicked, the takers would wait forever).
    fn close(&self) {
        if let Ok(mut held) = self.held.lock() {
            held.1 = true;
            self.freed.notify_all();
        }
    }
}

/// Closes a [`Budget`] when dropped, however its scope is left.
struct CloseOnDrop<'b>(&'b Budget);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

impl Parsed {
    /// Roughly the bytes this result holds.
    fn weight(&self) -> usize {
        let words = |w: &PartText| w.text.len() + w.terms.len() * 8 + w.pairs.len() * 8;
        self.text.len()
            + self.text_words.as_ref().map_or(0, words)
            + self.part_words.iter().map(words).sum::<usize>()
            + self.sides.bytes()
            + 1024
    }
}

/// Writes parse results; one open transaction at a time.
pub struct Writer<'c> {
    conn: &'c Connection,
    /// The database (text files are named after it).
    db_path: PathBuf,
    in_tx: bool,
    /// The text file, the committed length and the end of what this
    /// transaction appended.
    text: Option<(File, u64, u64)>,
    /// One per kind of segment: [`TEXT_SEGMENT`]'s first, then per part.
    builders: Vec<(i64, SegmentBuilder)>,
    /// The pair sides of the files put since the last commit, numbered
    /// across them: the pair builders key pairs by these numbers
    /// ([`SegmentBuilder::add_pairs`]), so the numbering is dropped only
    /// once the commit has emptied them.
    sides: TermSet,
    /// Per side number of the file being put, its number in `sides`.
    side_numbers: Vec<u32>,
    /// The file's pairs renumbered (reused).
    pair_keys: Vec<u64>,
    pub wrote: bool,
}

/// The `part` of the segments of the stored text's words.
pub const TEXT_SEGMENT: i64 = -1;

/// The `part` of the segments holding the adjacent word pairs (`"t1 t2"`)
/// of the text whose words segments of `kind` hold ([`TEXT_SEGMENT`] or a
/// part's code).
pub const fn pair_segment(kind: i64) -> i64 {
    kind + PAIRS
}

/// Added to a kind of segment for its pairs' segments.
const PAIRS: i64 = 16;

fn text_file_broken() -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
        Some("the index's text file is shorter than recorded".into()),
    )
}

/// The committed text file is shorter than committed (or gone).
fn text_file_short(conn: &Connection, db_path: &Path) -> rusqlite::Result<bool> {
    let TextState {
        gen,
        len: committed,
    } = text_state(conn)?;
    let len = std::fs::metadata(text_path(db_path, gen)).map_or(0, |m| m.len());
    Ok(len < committed)
}

/// Makes sure the text file holds at least what the database says was
/// committed. When someone else cut it short or deleted it, its text is
/// lost: everything is dropped (under a new, empty generation) and the
/// refresh reads every file again. In this database rather than a new one:
/// connections open elsewhere (a picker's search) see the change and
/// reload, where a new database file would leave them on the deleted one.
/// Files of older generations left by a crash (or kept by a reader on
/// Windows) are deleted on the way.
pub fn check_text_file(conn: &Connection, db_path: &Path) -> rusqlite::Result<()> {
    // A dictionary file gone or cut short loses the words of its segment
    // the same way.
    let broken = |c: &Connection| -> rusqlite::Result<bool> {
        Ok(text_file_short(c, db_path)? || !termfile::all_present(c, db_path)?)
    };
    if broken(conn)? {
        let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
        // Again under the write lock: another process may have done it.
        if broken(&tx)? {
            let gen = text_state(&tx)?.gen + 1;
            // Row ids are never reused (AUTOINCREMENT), so an id a reader
            // still holds cannot name a file read from now on.
            tx.execute_batch("DELETE FROM chunks; DELETE FROM segments; DELETE FROM files;")?;
            set_meta(&tx, "text_gen", &gen.to_string())?;
            set_meta(&tx, "text_len", "0")?;
            tx.commit()?;
        }
    }
    super::db::remove_generations_before(db_path, text_state(conn)?.gen);
    termfile::sweep(conn, db_path)
}

fn io_err(e: std::io::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}

impl<'c> Writer<'c> {
    pub fn new(conn: &'c Connection, db_path: PathBuf) -> Writer<'c> {
        Writer {
            conn,
            db_path,
            in_tx: false,
            text: None,
            builders: vec![(TEXT_SEGMENT, SegmentBuilder::default())],
            sides: TermSet::default(),
            side_numbers: Vec::new(),
            pair_keys: Vec::new(),
            wrote: false,
        }
    }

    fn begin(&mut self) -> rusqlite::Result<()> {
        if !self.in_tx {
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            self.in_tx = true;
        }
        Ok(())
    }

    /// The text file, opened in the write transaction: bytes beyond the
    /// committed length were appended by a writer that never committed
    /// (killed); new text is written over them. They are not cut off: a
    /// search may have the file mapped, and shrinking a mapped file under
    /// its reader is a crash (SIGBUS), not an error. A shorter file means a
    /// broken index. The generation is read in the write transaction: no
    /// compaction can start a new one until this transaction ends.
    fn text_file(&mut self) -> rusqlite::Result<&mut (File, u64, u64)> {
        let text = match self.text.take() {
            Some(text) => text,
            None => {
                let TextState {
                    gen,
                    len: committed,
                } = text_state(self.conn)?;
                let path = text_path(&self.db_path, gen);
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&path)
                    .map_err(io_err)?;
                let len = f.metadata().map_err(io_err)?.len();
                if len < committed {
                    return Err(text_file_broken());
                }
                if len == 0 {
                    // Possibly just created: its name must last as long as
                    // the offsets committed into it.
                    if let Some(dir) = path.parent() {
                        super::db::sync_dir(dir);
                    }
                }
                (f, committed, committed)
            }
        };
        Ok(self.text.insert(text))
    }

    pub fn builder_full(&self) -> bool {
        self.builders.iter().any(|(_, b)| b.full())
    }

    fn builder(&mut self, part: i64) -> &mut SegmentBuilder {
        let at = self.builder_at(part);
        &mut self.builders[at].1
    }

    /// Where the builder of segments of `part` is (added when new).
    fn builder_at(&mut self, part: i64) -> usize {
        match self.builders.iter().position(|(p, _)| *p == part) {
            Some(at) => at,
            None => {
                self.builders.push((part, SegmentBuilder::default()));
                self.builders.len() - 1
            }
        }
    }

    /// Stores one result. Returns false when another process changed the
    /// row meanwhile (then this result is not stored; it is still valid).
    pub fn put(&mut self, p: &Parsed) -> rusqlite::Result<bool> {
        self.begin()?;
        let key = path_key(&p.file.path);
        let (state, row, problem) = match &p.state {
            Ok(state) => (
                state.as_ref().map(codec::encode),
                p.row.as_ref().filter(|_| p.row_differs).map(codec::encode),
                None,
            ),
            Err(problem) => (None, None, Some(problem.as_str())),
        };
        // The file's columns, as both statements below write them.
        let (dev, ino, size) = (p.stat.dev as i64, p.stat.ino as i64, p.stat.size as i64);
        let (parsed_to, text_bytes) = (p.parsed as i64, p.text.len() as i64);
        let columns: [(&str, &dyn rusqlite::ToSql); 12] = [
            (":dev", &dev),
            (":ino", &ino),
            (":size", &size),
            (":mtime_ns", &p.stat.mtime_ns),
            (":parsed", &parsed_to),
            (":head_fp", &p.head_fp),
            (":tail_fp", &p.tail_fp),
            (":state", &state),
            (":row", &row),
            (":tail_text", &p.tail_text),
            (":problem", &problem),
            (":text_bytes", &text_bytes),
        ];
        let id = match p.continued {
            Some((id, parsed)) => {
                let was = parsed as i64;
                let mut args = columns.to_vec();
                args.extend([(":id", &id as &dyn rusqlite::ToSql), (":was", &was)]);
                let n = self.conn.execute(
                    "UPDATE files SET dev=:dev, ino=:ino, size=:size, mtime_ns=:mtime_ns,
                         parsed=:parsed, head_fp=:head_fp, tail_fp=:tail_fp, state=:state,
                         row=:row, tail_text=:tail_text, problem=:problem,
                         text_bytes = text_bytes + :text_bytes
                     WHERE id=:id AND parsed=:was",
                    args.as_slice(),
                )?;
                if n == 0 {
                    return Ok(false);
                }
                id
            }
            None => {
                if let Some(old) = self
                    .conn
                    .query_row("SELECT id FROM files WHERE path=?1", [&key], |r| {
                        r.get::<_, i64>(0)
                    })
                    .optional()?
                {
                    self.delete_id(old)?;
                }
                let mut args = columns.to_vec();
                args.push((":path", &key));
                self.conn.execute(
                    "INSERT INTO files(path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp,
                         state, row, tail_text, problem, text_bytes)
                     VALUES (:path, :dev, :ino, :size, :mtime_ns, :parsed, :head_fp, :tail_fp,
                         :state, :row, :tail_text, :problem, :text_bytes)",
                    args.as_slice(),
                )?;
                self.conn.last_insert_rowid()
            }
        };
        if !p.text.is_empty() {
            let (f, _, end) = self.text_file()?;
            let off = *end;
            write_at(f, off, p.text.as_bytes()).map_err(io_err)?;
            *end += p.text.len() as u64;
            self.conn.execute(
                "INSERT INTO chunks(file_id, off, len, sum) VALUES (?1, ?2, ?3, ?4)",
                params![
                    id,
                    off as i64,
                    p.text.len() as i64,
                    super::db::text_sum(p.text.as_bytes())
                ],
            )?;
        }
        if let Ok(id) = u32::try_from(id) {
            self.number_sides(&p.sides);
            if let Some(w) = p.text_words.as_ref().filter(|_| !p.text.is_empty()) {
                self.add_words(TEXT_SEGMENT, id, w);
            }
            for w in &p.part_words {
                self.add_words(i64::from(w.part.code()), id, w);
            }
        }
        self.wrote = true;
        Ok(true)
    }

    /// Numbers a file's pair sides among those since the last commit.
    fn number_sides(&mut self, sides: &Sides) {
        self.side_numbers.clear();
        self.side_numbers.extend(
            (0..sides.len() as u32)
                .map(|n| self.sides.index_of(sides.get(n)).unwrap_or(EMPTY_SIDE)),
        );
    }

    /// Adds one text's terms to the segment of `kind`, and its word pairs
    /// (their sides numbered by [`Writer::number_sides`]) to that kind's
    /// pair segment ([`pair_segment`]).
    fn add_words(&mut self, kind: i64, id: u32, w: &PartText) {
        let b = w.text.as_bytes();
        let slice = |&(s, n): &(u32, u32)| &b[s as usize..(s + n) as usize];
        self.builder(kind).add(id, w.terms.iter().map(slice));
        if w.pairs.is_empty() {
            return;
        }
        let numbers = &self.side_numbers;
        let renumber = |n: u32| match n {
            EMPTY_SIDE => EMPTY_SIDE,
            n => numbers.get(n as usize).copied().unwrap_or(EMPTY_SIDE),
        };
        let mut keys = std::mem::take(&mut self.pair_keys);
        keys.clear();
        keys.extend(w.pairs.iter().map(|&k| {
            let (left, right) = pair_sides(k);
            pair_key(renumber(left), renumber(right))
        }));
        let at = self.builder_at(pair_segment(kind));
        let sides = &self.sides;
        let side = |n: u32| match n {
            EMPTY_SIDE => &[][..],
            n => sides.term(n),
        };
        self.builders[at].1.add_pairs(id, &keys, side);
        self.pair_keys = keys;
    }

    fn delete_id(&mut self, id: i64) -> rusqlite::Result<()> {
        self.conn
            .execute("DELETE FROM chunks WHERE file_id=?1", [id])?;
        self.conn.execute("DELETE FROM files WHERE id=?1", [id])?;
        Ok(())
    }

    pub fn delete_path(&mut self, path: &Path) -> rusqlite::Result<bool> {
        self.begin()?;
        let id = self
            .conn
            .query_row(
                "SELECT id FROM files WHERE path=?1",
                [path_key(path)],
                |r| r.get::<_, i64>(0),
            )
            .optional()?;
        if let Some(id) = id {
            self.delete_id(id)?;
            self.wrote = true;
        }
        Ok(id.is_some())
    }

    /// Writes gathered postings as a segment and commits.
    pub fn commit(&mut self) -> rusqlite::Result<()> {
        if !self.in_tx {
            return Ok(());
        }
        if arbor_util::log::enabled() {
            let held: Vec<String> = self
                .builders
                .iter()
                .map(|(part, b)| format!("{part}:{}", b.heap_bytes() >> 20))
                .collect();
            arbor_util::log::line(format!(
                "index: committing; builders hold (part:MB) {}, pair sides {} MB",
                held.join(" "),
                self.sides.heap_bytes() >> 20
            ));
        }
        // The biggest builder is encoded on a thread of its own while this
        // one encodes and stores the others: a commit held the parse
        // workers back (their results in flight are bounded) for ~520 ms
        // of every ~1.9 s at 100,000 sessions, two fifths of it the tool
        // output's words alone. One at a time beside this thread, so that
        // at most two encoded segments are held at once.
        let biggest = self
            .builders
            .iter()
            .enumerate()
            .filter(|(_, (_, b))| !b.is_empty())
            .max_by_key(|(_, (_, b))| b.heap_bytes())
            .map(|(i, _)| i);
        let (conn, db_path) = (self.conn, &self.db_path);
        let store = |part: i64, e: &super::terms::Encoded| {
            if arbor_util::log::enabled() {
                arbor_util::log::line(format!(
                    "index: segment of part {part}: {} MB of terms, {} MB in all",
                    e.terms.len() >> 20,
                    e.bytes() >> 20
                ));
            }
            store_segment(conn, db_path, part, e)
        };
        std::thread::scope(|s| -> rusqlite::Result<()> {
            let mut big = None;
            for (i, (part, b)) in self.builders.iter_mut().enumerate() {
                if Some(i) == biggest {
                    let part = *part;
                    big = Some(s.spawn(move || (part, b.take())));
                } else if !b.is_empty() {
                    store(*part, &b.take())?;
                }
            }
            if let Some(h) = big {
                let (part, e) = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                store(part, &e)?;
            }
            Ok(())
        })?;
        // The pair builders are empty: their side numbers can start again.
        if !self.sides.is_empty() {
            self.sides.take_parts();
        }
        if let Some((f, committed, end)) = &self.text {
            if end > committed {
                // On disk before the length that vouches for them: after a
                // power loss, a committed span never covers bytes that did
                // not reach the disk (the commit itself may be lost, then
                // the bytes are only an uncommitted tail).
                f.sync_data().map_err(io_err)?;
            }
            set_meta(self.conn, "text_len", &end.to_string())?;
        }
        if self.wrote {
            set_meta(
                self.conn,
                "last_update",
                &arbor_session::entry::format_iso_ms(chrono::Utc::now().timestamp_millis()),
            )?;
        }
        self.conn.execute_batch("COMMIT")?;
        self.in_tx = false;
        // The next transaction re-reads the committed length.
        self.text = None;
        Ok(())
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        if self.in_tx {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

/// Inserts a segment's row and writes its dictionary file (in the
/// caller's transaction, before it commits).
fn store_segment(
    conn: &Connection,
    db_path: &Path,
    part: i64,
    e: &super::terms::Encoded,
) -> rusqlite::Result<()> {
    let sum = super::db::text_sum(&e.terms);
    let facts = (e.docs, e.terms.len(), sum);
    let id = insert_segment(
        conn,
        None,
        part,
        facts,
        &e.starts,
        Postings::Bytes(&e.postings),
    )?;
    termfile::write(db_path, id, &e.terms).map_err(io_err)
}

/// Inserts a segment's row (as `id`, or the next one) whose dictionary is
/// `(docs, terms_len, terms_sum)`; returns its id.
fn insert_segment(
    conn: &Connection,
    id: Option<i64>,
    part: i64,
    (docs, terms_len, terms_sum): (usize, usize, i64),
    starts: &[u8],
    postings: Postings<'_>,
) -> rusqlite::Result<i64> {
    let postings_len = match &postings {
        Postings::Bytes(b) => b.len(),
        Postings::Read(_, len) => *len,
    };
    // The postings go in through a blob handle, into a zero-filled blob
    // (the last column, which SQLite leaves unmaterialized): bound as a
    // parameter they were copied twice, once bound and once into the
    // record, and a merge's 256 MB were a peak of twice that.
    conn.execute(
        "INSERT INTO segments(id, part, docs, bytes, terms_len, terms_sum, starts, postings)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, zeroblob(?8))",
        params![
            id,
            part,
            docs as i64,
            (terms_len + starts.len() + postings_len) as i64,
            terms_len as i64,
            terms_sum,
            starts,
            postings_len as i64,
        ],
    )?;
    let id = conn.last_insert_rowid();
    if postings_len > 0 {
        let mut blob = conn.blob_open(MAIN_DB, "segments", "postings", id, false)?;
        match postings {
            Postings::Bytes(b) => blob.write_at(b, 0)?,
            Postings::Read(from, len) => {
                // A megabyte at a time: the file's length is the blob's.
                let mut at = 0;
                while at < len {
                    let chunk = from.fill_buf().map_err(io_err)?;
                    if chunk.is_empty() {
                        let short = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
                        return Err(io_err(short));
                    }
                    let n = chunk.len().min(len - at);
                    blob.write_at(&chunk[..n], at)?;
                    from.consume(n);
                    at += n;
                }
            }
        }
    }
    Ok(id)
}

/// A segment's posting lists: in memory, or read from a file of this length.
enum Postings<'a> {
    Bytes(&'a [u8]),
    Read(&'a mut dyn std::io::BufRead, usize),
}

/// A connection that only reads the index at `db_path` (a merge's worker).
fn open_reader(db_path: &Path) -> rusqlite::Result<Connection> {
    use rusqlite::OpenFlags;
    let conn = Connection::open_with_flags(
        db_path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_secs(10))?;
    Ok(conn)
}

/// Merges one plan's segments (`ids`, their dictionaries `loaded`) into
/// the segment `id`: its dictionary written to its file, its posting lists
/// read from `conn` and written to a file that has no name (unlinked once
/// opened: nothing is left of it if the process dies).
fn merge_plan(
    conn: &Connection,
    db_path: &Path,
    ids: &[i64],
    loaded: &[Segment],
    live: &dyn Fn(u32) -> bool,
    id: i64,
) -> std::io::Result<Merged> {
    let sql = |e: rusqlite::Error| std::io::Error::other(e.to_string());
    // One snapshot for all of the plan's blobs.
    let tx = conn.unchecked_transaction().map_err(sql)?;
    let mut readers = Vec::with_capacity(ids.len());
    for (&seg, dictionary) in ids.iter().zip(loaded) {
        let blob = tx
            .blob_open(MAIN_DB, "segments", "postings", seg, true)
            .map_err(sql)?;
        if blob.len() != dictionary.postings_len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "a segment's postings are not as long as its dictionary says",
            ));
        }
        readers.push(std::io::BufReader::with_capacity(256 << 10, blob));
    }
    let mut readers: Vec<&mut dyn std::io::Read> = readers
        .iter_mut()
        .map(|r| r as &mut dyn std::io::Read)
        .collect();
    let terms = termfile::create(db_path, id)?;
    let scratch = [
        termfile::scratch(db_path, id, 0)?,
        termfile::scratch(db_path, id, 1)?,
    ];
    merge_to_files(loaded, &mut readers, live, terms, scratch)
}

/// Rewrites the text file without the text of files that are gone or were
/// read again, when that is more than half of it (and over `min_dead`
/// bytes). In one write transaction: the live chunks are copied to the next
/// generation's file, which is synced, then the new offsets are committed
/// with the new generation number. The old file is left as it is until
/// then, so a reader still holding the old offsets reads the old file; it
/// is deleted after the commit (see [`super::db::remove_generations_before`]).
/// A crash before the commit leaves the old generation current and an
/// unused newer file, which the next compaction writes over.
pub fn maybe_compact_text(
    conn: &Connection,
    db_path: &Path,
    min_dead: u64,
) -> rusqlite::Result<bool> {
    let dead = |conn: &Connection| -> rusqlite::Result<(TextState, bool)> {
        let state = text_state(conn)?;
        let live: i64 =
            conn.query_row("SELECT coalesce(sum(len), 0) FROM chunks", [], |r| r.get(0))?;
        let dead = state.len.saturating_sub(live as u64);
        Ok((state, dead >= min_dead && dead * 2 >= state.len && dead > 0))
    };
    if !dead(conn)?.1 {
        return Ok(false);
    }
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    // Again under the write lock: another process may have compacted.
    let (state, worth) = dead(&tx)?;
    if !worth {
        return Ok(false);
    }
    let chunks: Vec<(i64, i64, i64)> = tx
        .prepare("SELECT id, off, len FROM chunks ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let old = File::open(text_path(db_path, state.gen)).map_err(io_err)?;
    let gen = state.gen + 1;
    let new_path = text_path(db_path, gen);
    // Truncated: a file of this generation can only be a crashed
    // compaction's, which no committed offset refers to.
    let new = File::create(&new_path).map_err(io_err)?;
    let mut end = 0u64;
    {
        let mut st = tx.prepare("UPDATE chunks SET off=?2 WHERE id=?1")?;
        for (id, off, len) in chunks {
            let bytes = super::db::read_at(&old, off as u64, len as usize).map_err(io_err)?;
            write_at(&new, end, &bytes).map_err(io_err)?;
            st.execute(params![id, end as i64])?;
            end += len as u64;
        }
    }
    new.sync_all().map_err(io_err)?;
    if let Some(dir) = new_path.parent() {
        super::db::sync_dir(dir);
    }
    set_meta(&tx, "text_gen", &gen.to_string())?;
    set_meta(&tx, "text_len", &end.to_string())?;
    tx.commit()?;
    super::db::remove_generations_before(db_path, gen);
    Ok(true)
}

/// Keeps the number of segments small: merges the smallest ones of each
/// part (dropping postings of files that are gone) when it has more than
/// `MAX_SEGMENTS`. At the end of a first run every part has many: their
/// merges (seconds of CPU at 10,000 sessions) run on all cores, while this
/// thread loads the next part's segments and stores the merged ones, all
/// in one write transaction.
pub fn maybe_merge(conn: &Connection, db_path: &Path) -> rusqlite::Result<()> {
    const MAX_SEGMENTS: usize = 8;
    let mut segs: Vec<(i64, i64, i64)> = conn
        .prepare("SELECT part, id, bytes FROM segments")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    segs.sort_unstable();
    // Per part with too many: the ids of all but its biggest few.
    let mut plans: Vec<(i64, Vec<i64>, i64)> = Vec::new();
    for group in segs.chunk_by(|a, b| a.0 == b.0) {
        if group.len() <= MAX_SEGMENTS {
            continue;
        }
        let mut by_size: Vec<(i64, i64)> = group.iter().map(|s| (s.2, s.1)).collect();
        by_size.sort_unstable();
        let mut victims = &by_size[..by_size.len() - MAX_SEGMENTS / 2];
        // SQLite refuses a blob over 1 GB: the smallest ones, up to a size
        // whose merged starts and postings stay below it (the biggest stay
        // as they are).
        let mut total = 0;
        let fit = victims
            .iter()
            .take_while(|v| {
                total += v.0;
                total <= MERGE_MAX
            })
            .count();
        victims = &victims[..fit];
        if victims.len() < 2 {
            continue;
        }
        // Oldest first: row ids grow with time, so each term's lists then
        // mostly follow each other and need no sort when merged (in order
        // of size, sorting them was a sixth of a first run's last merges).
        let mut ids: Vec<i64> = victims.iter().map(|v| v.1).collect();
        ids.sort_unstable();
        plans.push((group[0].0, ids, victims.iter().map(|v| v.0).sum()));
    }
    if plans.is_empty() {
        return Ok(());
    }
    let _purge = arbor_util::memory::PurgeAtOnce::start();
    // The biggest merges first, so that no big one is left alone at the end.
    plans.sort_by_key(|p| std::cmp::Reverse(p.2));
    // A merge reads whole segments once: through SQLite's memory map their
    // pages would stay in the resident set beside the copies merged (the
    // first run's peak was its merges).
    let map: i64 = conn.query_row("PRAGMA mmap_size", [], |r| r.get(0))?;
    if map > 0 {
        super::db::set_mmap(conn, false)?;
    }
    if arbor_util::log::enabled() {
        let mb: i64 = plans.iter().map(|p| p.2).sum::<i64>() >> 20;
        arbor_util::log::line(format!("index: merging {} parts, {mb} MB", plans.len()));
    }
    let merged = merge_parts(conn, db_path, &plans);
    if map > 0 {
        super::db::set_mmap(conn, true)?;
    }
    merged?;
    // The merged segments' pages are free now: the file gives them back
    // (a no-op for an index made before auto-vacuum was set). The pragma
    // frees one page per row it steps through.
    let mut vacuum = conn.prepare("PRAGMA incremental_vacuum")?;
    let mut freed = vacuum.query([])?;
    while freed.next()?.is_some() {}
    Ok(())
}

/// The most bytes of segments merged into one. A merge holds only its
/// terms' starts (see `merge_plan`), so this bounds the blobs it writes
/// (under SQLite's 1 GB), not its memory; at 256 MB the tool output's words
/// at 100,000 sessions stayed in 16 segments, each term written in many of
/// them, and a word typed scanned all their dictionaries.
const MERGE_MAX: i64 = 768 << 20;

/// A merge of more than this many bytes of segments runs alone (their
/// starts: two big merges at once would hold twice); smaller ones run
/// beside any other, so that the tool output's big merge at the end of a
/// first run does not leave the other cores idle.
const MERGE_AT_ONCE: i64 = 256 << 20;

/// Above this many bytes of segments, a merge drops the postings of files
/// that are gone (see [`merge_parts`]).
const BIG_MERGE: i64 = 4 << 20;

/// The row ids of the sessions, asked once per id of every posting list
/// a big merge reads: a bit per id while the ids are dense enough (a
/// table's lookups, each a cache miss, were a sixth of a first run's last
/// merges at 100,000 sessions), else a table.
enum LiveIds {
    Bits(Vec<u64>),
    Table(HashSet<u32, FxBuild>),
}

impl LiveIds {
    fn of(ids: Vec<u32>) -> LiveIds {
        let max = ids.iter().copied().max().unwrap_or(0) as usize;
        // Up to 256 bits an id (the ids of files read again grow past
        // their count), else the table.
        if max / 64 > 4 * ids.len().max(1) {
            return LiveIds::Table(ids.into_iter().collect());
        }
        let mut bits = vec![0u64; max / 64 + 1];
        for id in ids {
            bits[id as usize / 64] |= 1 << (id % 64);
        }
        LiveIds::Bits(bits)
    }

    fn contains(&self, id: u32) -> bool {
        match self {
            LiveIds::Bits(b) => b
                .get(id as usize / 64)
                .is_some_and(|w| w & (1 << (id % 64)) != 0),
            LiveIds::Table(t) => t.contains(&id),
        }
    }
}

/// Merges the planned parts' segments (part, victims, their bytes) in one
/// transaction: loaded and stored here, merged on worker threads; a part
/// is loaded only when a worker is free, so no more parts are held than
/// there are workers.
fn merge_parts(
    conn: &Connection,
    db_path: &Path,
    plans: &[(i64, Vec<i64>, i64)],
) -> rusqlite::Result<()> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    // Postings of files that are gone are dropped when merging big segments;
    // small merges (after a few appends) keep them: queries ignore them, and
    // reading every row id would cost more than the merge.
    let live: Option<LiveIds> = if plans.iter().any(|p| p.2 > BIG_MERGE) {
        let ids: Vec<u32> = tx
            .prepare("SELECT id FROM files WHERE problem IS NULL")?
            .query_map([], |r| r.get::<_, i64>(0))?
            .filter_map(|r| r.ok().and_then(|id| u32::try_from(id).ok()))
            .collect();
        Some(LiveIds::of(ids))
    } else {
        None
    };
    // Each plan's merged segment gets its id now, so that its dictionary
    // is written straight to its file (the next ids: no committed row
    // names them, and this transaction is the only writer).
    let base: i64 = tx.query_row(
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'segments'), 0),
                    coalesce((SELECT max(id) FROM segments), 0)) + 1",
        [],
        |r| r.get(0),
    )?;
    let id_of = |k: usize| base + k as i64;
    let workers = rayon::current_num_threads().clamp(1, plans.len());
    // Jobs: a plan's index and its segments, loaded; results: the index
    // and the merged segment.
    let (job_tx, job_rx) = mpsc::sync_channel::<(usize, Vec<Segment>)>(workers);
    let job_rx = std::sync::Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, std::io::Result<Merged>)>();
    let result: rusqlite::Result<()> = std::thread::scope(|scope| {
        for _ in 0..workers {
            let (job_rx, done_tx, live) = (&job_rx, done_tx.clone(), &live);
            scope.spawn(move || {
                // The posting lists are read on this thread as the merge goes,
                // through a connection of its own: the victims are committed,
                // and WAL lets it read them beside the write transaction.
                let reader = open_reader(db_path);
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((k, loaded)) = job else {
                        return;
                    };
                    let drop_gone = plans[k].2 > BIG_MERGE;
                    let keep = |id| !drop_gone || live.as_ref().is_none_or(|l| l.contains(id));
                    let merged = match &reader {
                        Ok(conn) => {
                            merge_plan(conn, db_path, &plans[k].1, &loaded, &keep, id_of(k))
                        }
                        Err(e) => Err(std::io::Error::other(e.to_string())),
                    };
                    drop(loaded);
                    if done_tx.send((k, merged)).is_err() {
                        return;
                    }
                    // What the storing thread freed of this one's earlier
                    // results (see `util::memory`).
                    arbor_util::memory::give_back();
                }
            });
        }
        drop(done_tx);
        let store = |(k, merged): (usize, std::io::Result<Merged>)| {
            let merged = merged.map_err(io_err)?;
            let (part, victims, _) = &plans[k];
            for id in victims {
                tx.execute("DELETE FROM segments WHERE id=?1", [id])?;
            }
            let facts = (merged.docs, merged.terms_len, merged.terms_sum);
            let mut postings = std::io::BufReader::with_capacity(1 << 20, merged.postings);
            let listed = Postings::Read(&mut postings, merged.postings_len);
            insert_segment(&tx, Some(id_of(k)), *part, facts, &merged.starts, listed)?;
            drop((merged.starts, postings));
            // What the merging threads freed of the segments loaded here.
            arbor_util::memory::give_back();
            Ok(())
        };
        let sent: rusqlite::Result<()> = (|| {
            // Merges under way, and the bytes of the small ones among them.
            let (mut in_flight, mut small_bytes) = (0usize, 0i64);
            let big = |b: i64| b > MERGE_AT_ONCE;
            for (k, (_, victims, bytes)) in plans.iter().enumerate() {
                // A part is loaded only once a worker is free for it: a big
                // one once no other merge is under way, a small one while
                // the small ones under way hold less than `MERGE_AT_ONCE`
                // (whether or not a big one is).
                while in_flight >= workers
                    || (big(*bytes) && in_flight > 0)
                    || (!big(*bytes) && small_bytes > 0 && small_bytes + bytes > MERGE_AT_ONCE)
                {
                    let Ok(done) = done_rx.recv() else {
                        return Ok(());
                    };
                    in_flight -= 1;
                    let b = plans[done.0].2;
                    if !big(b) {
                        small_bytes -= b;
                    }
                    store(done)?;
                }
                let Some(loaded) = load_segments(&tx, db_path, victims)? else {
                    // Another process merged them already.
                    continue;
                };
                if job_tx.send((k, loaded)).is_err() {
                    break;
                }
                in_flight += 1;
                if !big(*bytes) {
                    small_bytes += bytes;
                }
            }
            Ok(())
        })();
        // The workers end once the jobs do, whatever happened here.
        drop(job_tx);
        let mut stored = sent;
        for done in done_rx {
            if stored.is_ok() {
                stored = store(done);
            }
        }
        stored
    });
    let written: Vec<i64> = (0..plans.len()).map(id_of).collect();
    termfile::remove_scratch(db_path, &written);
    if let Err(e) = result {
        // Nothing of this transaction is kept: nor are the files written.
        termfile::remove(db_path, &written);
        return Err(e);
    }
    tx.commit()?;
    // No committed row names the merged ones' files now (a reader of an
    // older snapshot has them mapped, or finds them gone and looks again).
    let merged: Vec<i64> = plans.iter().flat_map(|p| p.1.iter().copied()).collect();
    termfile::remove(db_path, &merged);
    Ok(())
}

/// The dictionaries of the segments of these ids (their posting lists are
/// read as they are merged: see `merge_plan`); `None` when one is gone
/// (merged by another process).
fn load_segments(
    conn: &Connection,
    db_path: &Path,
    ids: &[i64],
) -> rusqlite::Result<Option<Vec<Segment>>> {
    let mut st = conn.prepare("SELECT terms_len, terms_sum, starts FROM segments WHERE id=?1")?;
    let mut loaded = Vec::with_capacity(ids.len());
    for &id in ids {
        let seg = st
            .query_row([id], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            })
            .optional()?;
        let Some((len, sum, s)) = seg else {
            return Ok(None);
        };
        let len = usize::try_from(len).map_err(|_| rusqlite::Error::InvalidQuery)?;
        // Mapped where it can be: the merge drops the pages behind it.
        let terms = match termfile::load(db_path, id, len, sum) {
            Ok(t) => t,
            Err(e) => {
                // Gone or damaged: the next refresh starts the index again
                // (see `check_text_file`), which a damaged file of the
                // right length would not make it do.
                termfile::remove(db_path, &[id]);
                return Err(io_err(std::io::Error::other(e)));
            }
        };
        // The posting lists are read by the merge as it goes.
        match Segment::dictionary_in(terms, &s) {
            Some(seg) => loaded.push(seg),
            None => return Err(rusqlite::Error::InvalidQuery),
        }
    }
    Ok(Some(loaded))
}

/// Stored rows of the sessions under `roots` (most recently written files
/// first, at most `limit` of them), without looking at the files: what
/// the picker paints before it has looked at the disk. Paths are given as
/// a listing of those roots would give them. Only the files a listing
/// could find are included (a per-project root's folders, a flat root).
/// The rows come in the batches they were decoded in, in order.
/// With `within`, only the newest `limit` of each of those folders
/// (through the index of paths: a folder's rows at most, whatever the
/// store's size, where the index of times would pass every newer row of
/// the other folders).
pub fn stored_rows<R: Send>(
    conn: &Connection,
    roots: &[arbor_store::StoreRoot],
    (limit, within): (Option<usize>, Option<&FolderRanges>),
    f: &(dyn Fn(StoredRow<'_>) -> Option<R> + Sync),
    look: Option<(&mut StoredLook, &ListedKeys)>,
) -> Result<Vec<Vec<R>>, IndexError> {
    let mut k = Keys::new();
    let is_sep = |b: u8| b == b'/' || (cfg!(windows) && b == b'\\');
    // A root given with a trailing separator keys like the same root
    // without it (a file's key never has two separators in a row).
    let root_keys: Vec<(Vec<u8>, &arbor_store::StoreRoot)> = roots
        .iter()
        .map(|r| {
            let mut key = k.key(&r.path).into_owned();
            while key.len() > 1 && key.last().is_some_and(|&b| is_sep(b)) {
                key.pop();
            }
            (key, r)
        })
        .collect();
    // Columns of the path, the state and the row.
    let (sql, cols) = match (limit, &look) {
        // Every row, with what a refresh compares.
        (None, Some(_)) => (SELECT_CACHED_ALL, [1, 9, 10]),
        (_, None) if within.is_some() => (
            "SELECT path, state, row FROM files WHERE id IN
             (SELECT id FROM files INDEXED BY files_sessions
              WHERE problem IS NULL AND path >= ?2 AND path < ?3
              ORDER BY mtime_ns DESC LIMIT ?1)",
            [0, 1, 2],
        ),
        (Some(_), _) => (
            "SELECT path, state, row FROM files WHERE problem IS NULL
             ORDER BY mtime_ns DESC LIMIT ?1",
            [0, 1, 2],
        ),
        // In the table's order: through the index of times (which SQLite
        // picks for the `WHERE`), each row was a seek to a page of its own,
        // 460 ms for 100,000 rows where the table's pages in order take 50.
        (None, None) => (
            "SELECT path, state, row FROM files NOT INDEXED
             WHERE problem IS NULL AND ?1 = ?1",
            [0, 1, 2],
        ),
    };
    // All of them read, not mapped (see `look`).
    if limit.is_none() {
        super::db::set_mmap(conn, false)?;
    }
    let files = look.as_ref().map_or(&[][..], |(_, listed)| listed.files);
    let decode = |(file, bytes, is_row): &(RowFile, Vec<u8>, bool)| {
        let (file, listed) = match file {
            RowFile::Found(file) => (file, None),
            RowFile::Listed(i) => (&files[*i as usize], Some(*i)),
        };
        f(StoredRow {
            file,
            listed,
            bytes,
            is_row: *is_row,
        })
    };
    // The rows are decoded on the other cores as SQLite reads them (read
    // first and decoded after, 10,000 rows reached the picker ~30 ms later).
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(RowFile, Vec<u8>, bool)>>(4);
    std::thread::scope(|s| {
        let decoder = s.spawn(move || {
            // A batch's rows collected on their own, and left so: extending
            // one vector as batches came copied every row each time it grew
            // (~95 ms of 100,000 rows' CPU), and moving them into one at
            // the end was a copy the caller's own pass can make.
            let mut batches: Vec<Vec<R>> = Vec::new();
            for batch in rx {
                batches.push(batch.par_iter().filter_map(decode).collect());
            }
            batches
        });
        let read_all = limit.is_none();
        let limit = limit.map_or(-1, |l| l as i64);
        let read = match within.filter(|_| look.is_none()) {
            Some(ranges) => {
                let read = ranges.iter().try_for_each(|(from, to)| {
                    let tx = tx.clone();
                    read_stored(
                        conn,
                        (sql, cols),
                        (limit, from, to),
                        &root_keys,
                        is_sep,
                        tx,
                        None,
                    )
                });
                drop(tx);
                read
            }
            None => read_stored(conn, (sql, cols), [limit], &root_keys, is_sep, tx, look),
        };
        if read_all {
            super::db::set_mmap(conn, true)?;
        }
        read?;
        Ok(decoder
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })
}

/// One stored row as [`stored_rows`] reads it, not decoded yet: the
/// caller decodes it ([`StoredRow::info`]) or makes what it keeps straight
/// from the bytes ([`StoredRow::view`]: the picker's rows, for which a
/// decoded row was a dozen strings made and dropped per session).
pub struct StoredRow<'a> {
    file: &'a SessionFile,
    /// Which of the listed files it is (read with a look).
    listed: Option<u32>,
    bytes: &'a [u8],
    /// A finished row (`row`), not a scanner's state (`state`).
    is_row: bool,
}

impl<'a> StoredRow<'a> {
    /// The file the row is of (under the store root a listing finds it).
    pub fn file(&self) -> &'a SessionFile {
        self.file
    }

    /// Which of the files listed it is, when read with them
    /// ([`super::Index::stored_rows_looked`]).
    pub fn listed(&self) -> Option<usize> {
        self.listed.map(|i| i as usize)
    }

    /// The row decoded, at `path` (the file's); `None` when the bytes do
    /// not read as a row.
    pub fn info(&self, path: SharedPath) -> Option<SessionInfo> {
        let mut info = finished(codec::decode_with(self.bytes, false)?, self.is_row)?;
        info.path = path;
        info.agent = self.file.agent;
        Some(info)
    }

    /// The row read in place: what [`StoredRow::info`] decodes, field for
    /// field (its path and agent are the file's).
    pub fn view(&self) -> Option<codec::RowView<'a>> {
        let mut view = codec::view(self.bytes)?;
        if !self.is_row {
            view.finish_state();
        }
        Some(view)
    }
}

/// The file of a stored row read: found under a store root by its key, or
/// the listed file it was matched with.
enum RowFile {
    Found(SessionFile),
    Listed(u32),
}

/// Reads the stored rows `sql` selects (see [`stored_rows`]) and sends
/// them to `tx` a batch at a time, undecoded. With a look, only the rows
/// of listed files are sent.
fn read_stored(
    conn: &Connection,
    (sql, [path_col, state_col, row_col]): (&str, [usize; 3]),
    params: impl rusqlite::Params,
    root_keys: &[(Vec<u8>, &arbor_store::StoreRoot)],
    is_sep: impl Fn(u8) -> bool,
    tx: std::sync::mpsc::SyncSender<Vec<(RowFile, Vec<u8>, bool)>>,
    mut look: Option<(&mut StoredLook, &ListedKeys)>,
) -> Result<(), IndexError> {
    /// Rows per batch sent to be decoded.
    const BATCH: usize = 512;
    let mut st = conn.prepare(sql)?;
    let mut rows = st.query(params)?;
    let mut raw: Vec<(RowFile, Vec<u8>, bool)> = Vec::with_capacity(BATCH);
    if let Some((look, listed)) = look.as_mut() {
        look.found = (0..listed.files.len()).map(|_| None).collect();
    }
    let mut next = Cursors::default();
    while let Some(r) = rows.next()? {
        let key = r
            .get_ref(path_col)?
            .as_blob()
            .map_err(rusqlite::Error::from)?;
        let blob_at =
            |i: usize| -> rusqlite::Result<Option<&[u8]>> { Ok(r.get_ref(i)?.as_blob_or_null()?) };
        let (state, row) = (blob_at(state_col)?, blob_at(row_col)?);
        let file = match look.as_mut() {
            Some((look, listed)) => {
                let Some(i) = listed.get_after(key, &mut next) else {
                    look.unlisted.push(key.to_vec());
                    continue;
                };
                let cached = Seen::read(r)?;
                let problem = cached.problem.is_some();
                look.found[i as usize] = Some(Found {
                    cached,
                    info: None,
                    has_blob: state.is_some() || row.is_some(),
                });
                if problem {
                    continue;
                }
                RowFile::Listed(i)
            }
            None => match found_under_root(key, root_keys, &is_sep) {
                Some(file) => RowFile::Found(file),
                None => continue,
            },
        };
        let (blob, is_row) = match (row, state) {
            (Some(row), _) => (row.to_vec(), true),
            (None, Some(state)) => (state.to_vec(), false),
            (None, None) => continue,
        };
        raw.push((file, blob, is_row));
        if raw.len() == BATCH {
            // The decoder is gone only when it panicked (the join says so).
            if tx
                .send(std::mem::replace(&mut raw, Vec::with_capacity(BATCH)))
                .is_err()
            {
                return Ok(());
            }
        }
    }
    if !raw.is_empty() {
        let _ = tx.send(raw);
    }
    Ok(())
}

/// The file of a stored row's key, under the store root a listing would
/// find it in; `None` when no root holds it.
fn found_under_root(
    key: &[u8],
    root_keys: &[(Vec<u8>, &arbor_store::StoreRoot)],
    is_sep: impl Fn(u8) -> bool,
) -> Option<SessionFile> {
    use arbor_store::StoreKind;
    // The root a listing would find the file under (nested roots: the
    // one whose layout fits the file's depth).
    let (rel, root) = root_keys.iter().find_map(|(rk, root)| {
        let rest = key.strip_prefix(rk.as_slice())?;
        let (&sep, rel) = rest.split_first()?;
        let depth = rel.iter().filter(|&&b| is_sep(b)).count();
        let fits = match root.kind {
            StoreKind::Flat => depth == 0,
            StoreKind::PerProject => depth == 1,
            StoreKind::Dated => depth == 0 || depth == 3,
        } || (root.agent == arbor_session::Agent::Claude && depth == 3);
        (is_sep(sep) && fits).then_some((rel, *root))
    })?;
    Some(SessionFile {
        path: root.path.join(key_path(rel)),
        agent: root.agent,
    })
}

/// Refreshes the index for `files`; see [`super::Index::refresh`].
/// With `folders` (the files are those folders' listing: one project's),
/// only the stored rows under them are read, and only those can be found
/// gone; else the whole table is read, in its order, and the rows of
/// vanished folders are dropped too.
pub fn refresh(
    conn: &Connection,
    db_path: &Path,
    files: &[SessionFile],
    folders: Option<&FolderRanges>,
    mut unchanged: UnchangedRows,
    (wanted, build): (Wanted, Build),
    on_rows: &mut OnRows,
) -> Result<RefreshStats, IndexError> {
    let t0 = Instant::now();
    let lap = |what: &str| {
        if arbor_util::log::enabled() {
            arbor_util::log::line(format!("index {what}"));
        }
    };
    let mut stats = RefreshStats {
        files: files.len(),
        ..Default::default()
    };
    check_text_file(conn, db_path)?;
    let pre = match &mut unchanged {
        UnchangedRows::Looked(look) => Some(std::mem::take(look)),
        _ => None,
    };
    let mut looked = look(conn, files, folders, &unchanged, wanted, pre)?;
    lap("rows loaded");
    let unlisted = std::mem::take(&mut looked.unlisted);
    let on_unchanged = on_rows
        .unchanged
        .as_mut()
        .map(|f| &mut **f as &mut dyn FnMut(Vec<SessionInfo>));
    let mut jobs = sort_out(files, looked, unchanged, &mut stats, on_unchanged);
    fill_states(conn, &mut jobs);
    lap("files checked");
    let _lock = match build.plan(db_path, &jobs) {
        Plan::Here(lock) => lock,
        Plan::Behind(deferred) => {
            let to = match on_rows.behind.as_mut() {
                Some(behind) => &mut **behind,
                None => &mut *on_rows.read,
            };
            read_plain(jobs, wanted, &mut stats, to);
            lap("read behind");
            stats.deferred = Some(deferred);
            stats.elapsed = t0.elapsed();
            return Ok(stats);
        }
    };
    let mut writer = Writer::new(conn, db_path.to_path_buf());
    remove_gone(&mut writer, files, &unlisted, &mut stats)?;
    lap("removals");
    let result = read_changed(&mut writer, jobs, wanted, &mut stats, on_rows.read);
    lap("parsed");
    // Segments and dead text only grow when a refresh writes: one that
    // wrote nothing (a warm run) has nothing to merge or compact.
    let wrote = writer.in_tx;
    let result = result.and_then(|_| writer.commit());
    drop(writer);
    lap("committed");
    let result = result.and_then(|_| match wrote {
        true => maybe_merge(conn, db_path)
            .and_then(|_| maybe_compact_text(conn, db_path, 64 << 20).map(|_| ())),
        false => Ok(()),
    });
    if let Err(e) = result {
        // The rows were delivered; only the cache could not be updated.
        stats.write_error = Some(e.to_string());
    }
    lap("merged");
    stats.elapsed = t0.elapsed();
    Ok(stats)
}

/// Who builds what a refresh finds the index lacks (see [`super::behind`]).
#[derive(Clone, Copy, Default)]
pub struct Build {
    /// Bytes past which it is left to a build behind (`None`: built here).
    pub behind: Option<u64>,
    /// This process holds the build lock already.
    pub holding: bool,
}

enum Plan {
    /// Indexed here, holding the build lock when it could be had.
    Here(Option<BuildLock>),
    Behind(Deferred),
}

impl Build {
    fn plan(self, db_path: &Path, jobs: &[Job]) -> Plan {
        if jobs.is_empty() || self.holding {
            return Plan::Here(None);
        }
        // A file continued from its stored state costs what it grew by.
        let bytes: u64 = jobs
            .iter()
            .map(|(_, c, size)| match c {
                Some(c) if c.state.is_some() => size.saturating_sub(c.parsed),
                _ => *size,
            })
            .sum();
        let deferred = |builder| {
            Plan::Behind(Deferred {
                files: jobs.len(),
                bytes,
                builder,
            })
        };
        match self.behind {
            Some(over) => match behind::builder(db_path) {
                Some(pid) => deferred(Some(pid)),
                None if bytes > over => deferred(None),
                None => Plan::Here(None),
            },
            // A build: others that can wait for it do (the lock may be
            // held by one: then both build, as before there was a lock).
            None if bytes > behind::threshold() => {
                Plan::Here(BuildLock::try_take(db_path).ok().flatten())
            }
            None => Plan::Here(None),
        }
    }
}

/// The rows of `jobs` read from their files, as a listing without the
/// index reads them (the same rows, the same problems); nothing written.
fn read_plain(
    jobs: Vec<Job>,
    wanted: Wanted,
    stats: &mut RefreshStats,
    on_rows: &mut dyn FnMut(Vec<SessionInfo>),
) {
    let (tx, rx) = mpsc::channel();
    std::thread::scope(|scope| {
        let jobs = &jobs;
        scope.spawn(move || {
            jobs.par_iter().for_each_with(tx, |tx, (f, _, _)| {
                let _ =
                    tx.send(
                        arbor_store::listing::scan_file(f, false).map_err(|e| ScanProblem {
                            path: f.path.clone(),
                            reason: e.to_string(),
                        }),
                    );
            });
        });
        let mut batch = Vec::new();
        for read in rx {
            match read {
                Ok(mut row) => {
                    stats.reparsed += 1;
                    if !wanted.usage {
                        row.usage = Default::default();
                    }
                    if wanted.sends(&row) {
                        batch.push(row);
                    }
                }
                Err(problem) => stats.problems.push(problem),
            }
            if batch.len() >= 512 {
                on_rows(std::mem::take(&mut batch));
            }
        }
        if !batch.is_empty() {
            on_rows(batch);
        }
    });
}

/// Which rows a refresh sends, and with what.
#[derive(Clone, Copy, Default)]
pub struct Wanted {
    /// With their usage by model and hour (`arbor stats`).
    pub usage: bool,
    /// Only those with labels (the others are counted, not sent).
    pub labelled_only: bool,
}

impl Wanted {
    fn sends(&self, row: &SessionInfo) -> bool {
        !self.labelled_only || !row.labels.is_empty()
    }
}

/// [`Found::info`] of an unchanged row that is not sent ([`Wanted`]).
const NOT_SENT: u32 = u32::MAX;

/// Where a refresh sends its rows: those of unchanged files (one batch,
/// before any file is read; none but with [`UnchangedRows::Send`]) and
/// those read from new or changed files.
pub struct OnRows<'a> {
    pub unchanged: Option<&'a mut dyn FnMut(Vec<SessionInfo>)>,
    pub read: &'a mut dyn FnMut(Vec<SessionInfo>),
    /// The rows of files left to a build behind (see [`Build`]), when not
    /// to `read`: the index will not have them to be read back.
    pub behind: Option<&'a mut dyn FnMut(Vec<SessionInfo>)>,
}

/// What a refresh does with the rows of the files it finds unchanged.
pub enum UnchangedRows<'u> {
    /// Decodes them and sends them first.
    Send,
    /// Only counts them: the caller has them.
    Skip,
    /// As `Skip`, the caller having read them with what the refresh
    /// compares ([`StoredLook`]), so the table is not read again.
    Looked(StoredLook),
    /// Keeps them as stored, to be read in place.
    Keep(&'u mut Unchanged),
}

impl UnchangedRows<'_> {
    /// The same choice again, for a second refresh; rows looked at before
    /// go to the first (a second one, after a rebuild, reads the table).
    pub fn again(&mut self) -> UnchangedRows<'_> {
        if let UnchangedRows::Looked(look) = self {
            let look = std::mem::take(look);
            *self = UnchangedRows::Skip;
            return UnchangedRows::Looked(look);
        }
        match self {
            UnchangedRows::Send => UnchangedRows::Send,
            UnchangedRows::Skip | UnchangedRows::Looked(_) => UnchangedRows::Skip,
            UnchangedRows::Keep(u) => UnchangedRows::Keep(u),
        }
    }
}

/// What the index has for the files given, found before any is opened.
struct Looked {
    /// Each file's stat.
    stats: Vec<std::io::Result<Stat>>,
    /// Each file's stored row.
    found: Vec<Option<Found>>,
    /// The decoded rows, in the order read: one array of rows, moved into
    /// the listing's order in place (a box per row, then a copy into the
    /// batch, held two of them at 100,000 sessions).
    rows: Vec<SessionInfo>,
    /// The rows kept as stored, instead ([`UnchangedRows::Keep`]).
    stored: StoredRows,
    /// Keys of stored files not among those given.
    unlisted: Vec<Vec<u8>>,
}

/// A stat per file (on all cores) while the stored rows are read, and
/// decoded or kept as they are when the caller wants the unchanged files'
/// rows.
#[allow(clippy::type_complexity)]
fn look(
    conn: &Connection,
    files: &[SessionFile],
    folders: Option<&FolderRanges>,
    unchanged: &UnchangedRows,
    wanted: Wanted,
    pre: Option<StoredLook>,
) -> Result<Looked, IndexError> {
    let decode = matches!(unchanged, UnchangedRows::Send);
    let keep = matches!(unchanged, UnchangedRows::Keep(_));
    let mut stored = StoredRows::default();
    let mut found: Vec<Option<Found>> = Vec::new();
    let mut unlisted: Vec<Vec<u8>> = Vec::new();
    let mut decoded: Vec<SessionInfo> = Vec::new();
    let mut k = Keys::new();
    let (stats, read) = std::thread::scope(|scope| {
        // The stats first: the files' keys and their table are made beside
        // them (~50 ms at 100,000 files).
        let stats = scope.spawn(|| {
            let v = stat_all(files);
            arbor_util::log::line("index stats done");
            v
        });
        // A look matched with these same files stands for the table.
        let pre = pre.filter(|p| p.found.len() == files.len());
        let keys: Vec<Cow<[u8]>> = match pre {
            Some(_) => Vec::new(),
            None => files.iter().map(|f| k.key(&f.path)).collect(),
        };
        let listed = ListedKeys::new_here(files, &keys);
        let mut next = Cursors::default();
        let read = (|| -> rusqlite::Result<()> {
            if let Some(pre) = pre {
                found = pre.found;
                unlisted = pre.unlisted;
                return Ok(());
            }
            found = (0..files.len()).map(|_| None).collect();
            // Read, not mapped: at 100,000 sessions the table's pages in the
            // map were 146 MB of the process's resident set, and reading
            // them cost no more time than faulting them in.
            super::db::set_mmap(conn, false)?;
            let mut each = |r: &rusqlite::Row| -> rusqlite::Result<()> {
                let key = r.get_ref(1)?.as_blob()?;
                let Some(i) = listed.get_after(key, &mut next).map(|i| i as usize) else {
                    unlisted.push(key.to_vec());
                    return Ok(());
                };
                let c = Seen::read(r)?;
                let state = r.get_ref(9)?.as_blob_or_null()?;
                let row = r.get_ref(10)?.as_blob_or_null()?;
                let blob = row.map(|b| (b, true)).or(state.map(|b| (b, false)));
                let info = match blob {
                    _ if c.problem.is_some() => None,
                    Some((b, is_row)) if keep => stored.keep(b, is_row),
                    Some((b, is_row)) if decode => codec::decode_with(b, wanted.usage)
                        .and_then(|i| finished(i, is_row))
                        .map(|info| {
                            if !wanted.sends(&info) {
                                return NOT_SENT;
                            }
                            if decoded.capacity() == 0 && !wanted.labelled_only {
                                decoded.reserve_exact(files.len());
                            }
                            decoded.push(info);
                            (decoded.len() - 1) as u32
                        }),
                    _ => None,
                };
                found[i] = Some(Found {
                    cached: c,
                    info,
                    has_blob: row.is_some() || state.is_some(),
                });
                Ok(())
            };
            match folders {
                // One project's folder of a store of many: at 100,000
                // sessions in ten folders, reading the whole table for one
                // folder's 10,000 rows was half of `arbor list`'s time.
                Some(ranges) => {
                    let mut st = conn.prepare(SELECT_CACHED_IN)?;
                    for (from, to) in ranges {
                        let mut rows = st.query((from, to))?;
                        while let Some(r) = rows.next()? {
                            each(r)?;
                        }
                    }
                }
                None => {
                    let mut st = conn.prepare(SELECT_CACHED)?;
                    let mut rows = st.query([])?;
                    while let Some(r) = rows.next()? {
                        each(r)?;
                    }
                }
            }
            arbor_util::log::line("index sql read");
            super::db::set_mmap(conn, true)
        })();
        // A panic on the stat thread is this thread's.
        let stats = stats
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        drop(listed);
        (stats, read)
    });
    read?;
    let looked = Looked {
        stats,
        found,
        rows: decoded,
        stored,
        unlisted,
    };
    Ok(looked)
}

/// Reads the resumable state of the changed files that have one (their
/// rows were read without it), when it is still the version looked at (a
/// writer elsewhere may have moved it on). A state that cannot be read
/// leaves the file to be read from the start, which is always right.
fn fill_states(conn: &Connection, jobs: &mut [Job]) {
    let sql = "SELECT state FROM files
               WHERE id = ?1 AND parsed = ?2 AND head_fp = ?3 AND tail_fp = ?4";
    let Ok(mut st) = conn.prepare(sql) else {
        for (_, c, _) in jobs.iter_mut() {
            *c = None;
        }
        return;
    };
    for (_, c, _) in jobs.iter_mut() {
        if let Some(c) = c {
            c.state = st
                .query_row(params![c.id, c.parsed as i64, c.head_fp, c.tail_fp], |r| {
                    r.get::<_, Option<Vec<u8>>>(0)
                })
                .ok()
                .flatten();
        }
    }
}

/// A file to read: its stored row when it has one, and its size.
type Job<'f> = (&'f SessionFile, Option<Cached>, u64);

/// Sorts the files out by what the index has: the rows of unchanged files
/// go to `on_rows` in one batch (decoded by [`look`]; only counted when
/// the caller has them already, `!emit_unchanged`), problems stored with
/// an unchanged file and files that cannot be looked at go to the stats,
/// and the files to read are returned (their states still to be read).
fn sort_out<'f>(
    files: &'f [SessionFile],
    looked: Looked,
    mut unchanged_rows: UnchangedRows,
    stats: &mut RefreshStats,
    on_rows: Option<&mut dyn FnMut(Vec<SessionInfo>)>,
) -> Vec<Job<'f>> {
    let Looked {
        stats: stat_result,
        found,
        rows: mut decoded,
        stored,
        ..
    } = looked;
    let unchanged = |st: &std::io::Result<Stat>, fd: Option<&Found>| match (st, fd) {
        (Ok(st), Some(fd)) => fd.cached.stat == *st && fd.cached.problem.is_none() && fd.has_blob,
        _ => false,
    };
    // Positions in `decoded` of the rows sent, in the files' order.
    let mut first: Vec<usize> = Vec::with_capacity(files.len());
    let mut kept = 0usize;
    let mut jobs: Vec<Job> = Vec::new();
    for (n, ((f, stat), mut fd)) in files.iter().zip(stat_result).zip(found).enumerate() {
        let same = unchanged(&stat, fd.as_ref());
        match &mut unchanged_rows {
            UnchangedRows::Skip | UnchangedRows::Looked(_) if same => {
                kept += 1;
                continue;
            }
            UnchangedRows::Send if same && fd.as_ref().and_then(|fd| fd.info) == Some(NOT_SENT) => {
                kept += 1;
                continue;
            }
            UnchangedRows::Keep(u) if same => {
                if let Some(k) = fd.as_mut().and_then(|fd| fd.info.take()) {
                    u.of_file.push((n as u32, k));
                    kept += 1;
                    continue;
                }
            }
            _ => {}
        }
        let (fd, info) = match fd {
            Some(mut fd) => {
                let info = fd.info.take().filter(|_| same).map(|k| {
                    let i = &mut decoded[k as usize];
                    i.path = f.path.as_path().into();
                    i.agent = f.agent;
                    k as usize
                });
                (Some(fd), info)
            }
            None => (None, None),
        };
        match (stat, fd, info) {
            (Ok(_), _, Some(info)) => first.push(info),
            (Ok(st), Some(fd), None) if fd.cached.stat == st && fd.cached.problem.is_some() => {
                stats.problems.push(ScanProblem {
                    path: f.path.clone(),
                    reason: fd.cached.problem.map(String::from).unwrap_or_default(),
                })
            }
            (Ok(st), fd, None) => jobs.push((f, fd.map(|fd| fd.cached.into_cached()), st.size)),
            (Err(source), _, _) => stats.problems.push(ScanProblem {
                path: f.path.clone(),
                reason: ReadError::Io {
                    path: f.path.clone(),
                    source,
                }
                .to_string(),
            }),
        }
    }
    stats.cached = first.len() + kept;
    if !first.is_empty() {
        // The rows sent first, in that order, the others after them
        // (then cut off): moved in place.
        let n = first.len();
        let mut used = vec![false; decoded.len()];
        for &k in &first {
            used[k] = true;
        }
        first.extend((0..decoded.len()).filter(|&k| !used[k]));
        drop(used);
        arbor_store::listing::apply_order(&mut decoded, first);
        decoded.truncate(n);
        if let Some(on_rows) = on_rows {
            on_rows(decoded);
        }
    }
    if let UnchangedRows::Keep(u) = unchanged_rows {
        u.rows = stored;
    }
    jobs
}

/// Drops the rows of files that are gone: their folder was listed without
/// them (it holds one of `files`), or the folder itself is gone. Rows of
/// other stores are kept.
fn remove_gone(
    writer: &mut Writer,
    files: &[SessionFile],
    unlisted: &[Vec<u8>],
    stats: &mut RefreshStats,
) -> rusqlite::Result<()> {
    if unlisted.is_empty() {
        return Ok(());
    }
    let keys = file_keys(files);
    let dirs: HashSet<&[u8], FxBuild> = keys.iter().filter_map(|k| parent_bytes(k)).collect();
    let mut dir_exists: HashMap<Vec<u8>, bool, FxBuild> = HashMap::default();
    for key in unlisted {
        let Some(parent) = parent_bytes(key) else {
            continue;
        };
        let gone = dirs.contains(parent)
            || !*dir_exists
                .entry(parent.to_vec())
                .or_insert_with(|| key_path(parent).is_dir());
        if gone && writer.delete_path(&key_path(key))? {
            stats.removed += 1;
        }
    }
    Ok(())
}

/// Reads the files that changed on all cores (see [`read_order`]),
/// streams their rows to `on_rows` and writes them in batches. Returns how
/// the writing went: the rows are delivered either way.
fn read_changed(
    writer: &mut Writer,
    mut jobs: Vec<Job>,
    wanted: Wanted,
    stats: &mut RefreshStats,
    on_rows: &mut dyn FnMut(Vec<SessionInfo>),
) -> rusqlite::Result<()> {
    read_order(&mut jobs);
    // A build, not a few appends: its builders' memory goes back as soon
    // as it is freed (see `PurgeAtOnce`).
    let bytes: u64 = jobs.iter().map(|j| j.2).sum();
    let _purge = (bytes > IN_FLIGHT_BYTES as u64).then(arbor_util::memory::PurgeAtOnce::start);
    // Bounded by bytes, not by count: the parse workers go on while the
    // writer encodes and stores a batch's segments (a third of a second,
    // nine times in a build of 10,000 sessions), where 32 results of small
    // files had filled a bounded channel at once and left a core idle.
    let (tx, rx) = mpsc::channel::<(Result<Parsed, ScanProblem>, usize)>();
    let budget = Budget::new(IN_FLIGHT_BYTES);
    let mut result = Ok(());
    std::thread::scope(|scope| {
        let (jobs, budget) = (&jobs, &budget);
        scope.spawn(move || {
            jobs.par_iter().for_each_with(tx, |tx, (f, c, _)| {
                let parsed = parse_file(f, c.as_ref());
                let weight = parsed.as_ref().map_or(0, Parsed::weight);
                budget.take(weight);
                if tx.send((parsed, weight)).is_err() {
                    budget.give(weight);
                }
            });
        });
        let _close = CloseOnDrop(budget);
        let mut batch = Vec::new();
        let mut last_emit = Instant::now();
        let mut last_commit = Instant::now();
        for (msg, weight) in rx {
            // Given back at once: the result's memory is freed within this
            // turn of the loop.
            budget.give(weight);
            let p = match msg {
                Ok(p) => p,
                Err(problem) => {
                    stats.problems.push(problem);
                    continue;
                }
            };
            stats.bytes_parsed += p.bytes_parsed;
            if p.continued.is_some() {
                stats.appended += 1;
            } else {
                stats.reparsed += 1;
            }
            if result.is_ok() {
                result = writer.put(&p).map(|_| ());
            }
            match (p.row, p.state) {
                (Some(row), Ok(_)) if wanted.sends(&row) => batch.push(row),
                (Some(_), Ok(_)) => {}
                (_, Err(problem)) => stats.problems.push(ScanProblem {
                    path: p.file.path,
                    reason: problem,
                }),
                (None, Ok(_)) => {}
            }
            if batch.len() >= 512 || last_emit.elapsed() > Duration::from_millis(40) {
                on_rows(std::mem::take(&mut batch));
                last_emit = Instant::now();
            }
            if result.is_ok()
                && (writer.builder_full() || last_commit.elapsed() > Duration::from_secs(4))
            {
                result = writer.commit();
                last_commit = Instant::now();
            }
        }
        if !batch.is_empty() {
            on_rows(batch);
        }
    });
    result
}

/// The order files are read (and their rows written) in: the few big
/// enough that one of them left alone at the end would hold a core for a
/// while first, biggest first; the others by path, so that their rows
/// reach the path indexes in order. In the order of the listing (folders
/// in the file system's order) each row landed on a page of those indexes
/// that SQLite's small cache no longer held, and wrote it to the log
/// again: a first run at 100,000 sessions wrote 8.3 GB for an index of
/// 1.3 GB, and writes 4.0 GB now (system time 25 -> 22 s).
fn read_order(jobs: &mut [Job]) {
    let total: u64 = jobs.iter().map(|j| j.2).sum();
    let big = |j: &Job| j.2 >= total / 256;
    jobs.sort_by(|a, b| match (big(a), big(b)) {
        (true, true) => b.2.cmp(&a.2),
        (true, false) => std::cmp::Ordering::Less,
        (false, true) => std::cmp::Ordering::Greater,
        (false, false) => {
            let (a, b) = (a.0.path.as_os_str(), b.0.path.as_os_str());
            a.as_encoded_bytes().cmp(b.as_encoded_bytes())
        }
    });
}

#[cfg(test)]
mod tests {
    #[test]
    fn folder_ranges_cover_each_folder_once_and_nothing_beside_it() {
        let keys: Vec<std::borrow::Cow<[u8]>> = [
            "/s/b/x/3.jsonl",
            "/s/a/1.jsonl",
            "/s/a/2.jsonl",
            "/s/b/4.jsonl",
            "/s/ab/5.jsonl",
        ]
        .iter()
        .map(|k| std::borrow::Cow::Borrowed(k.as_bytes()))
        .collect();
        let ranges: Vec<(String, String)> = super::folder_ranges(&keys)
            .into_iter()
            .map(|(a, b)| (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap()))
            .collect();
        let want = [("/s/a/", "/s/a0"), ("/s/ab/", "/s/ab0"), ("/s/b/", "/s/b0")];
        assert_eq!(ranges, want.map(|(a, b)| (a.to_string(), b.to_string())));
        // A key is in a range exactly when it lies under that folder.
        for (key, inside) in [
            ("/s/a/9.jsonl", Some(0)),
            ("/s/a-b/9.jsonl", None),
            ("/s/a.b/9.jsonl", None),
            ("/s/ab/deep/9.jsonl", Some(1)),
            ("/s/b/x/y/9.jsonl", Some(2)),
            ("/s/ba/9.jsonl", None),
            ("/s/9.jsonl", None),
        ] {
            let found = ranges
                .iter()
                .position(|(from, to)| key >= from.as_str() && key < to.as_str());
            assert_eq!(found, inside, "{key}");
        }
    }

    use super::*;

    /// Looked up after the last few found or by hash, a key gives the file
    /// a plain lookup gives: rows in order, two runs interleaved, shuffled,
    /// keys not listed, and a file listed twice (its last listing).
    #[test]
    fn a_lookup_after_the_last_found_gives_what_a_plain_one_gives() {
        let file = |p: String| SessionFile {
            path: PathBuf::from(p),
            agent: arbor_session::agent::Agent::Atomic,
        };
        let mut files: Vec<SessionFile> = (0..40)
            .map(|i| file(format!("/s/p/{i:03}.jsonl")))
            .collect();
        files.push(file("/s/p/005.jsonl".into()));
        files.push(file("/s/p/041.jsonl".into()));
        let keys = file_keys(&files);
        let listed = ListedKeys::new(&files, &keys);
        let mut asked: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        asked.push(b"/s/p/999.jsonl".to_vec());
        let (a, b) = asked.split_at(21);
        let interleaved: Vec<Vec<u8>> = a
            .iter()
            .zip(b)
            .flat_map(|(x, y)| [x.clone(), y.clone()])
            .collect();
        let mut shuffled = asked.clone();
        shuffled.sort_by_key(|k| arbor_util::hash::bytes_hash(k));
        for order in [asked.clone(), interleaved, shuffled] {
            let mut next = Cursors::default();
            for k in &order {
                assert_eq!(listed.get_after(k, &mut next), listed.get(k), "{k:?}");
            }
        }
        let mut next = Cursors::default();
        assert_eq!(listed.get_after(&keys[5], &mut next), Some(40));
        assert_eq!(listed.get_after(b"/s/p/999.jsonl", &mut next), None);
    }

    /// Big files go first, biggest first; the others in their paths' order.
    #[test]
    fn files_are_read_big_first_then_by_path() {
        let file = |p: &str| SessionFile {
            path: PathBuf::from(p),
            agent: arbor_session::agent::Agent::Atomic,
        };
        let files = [
            file("/s/b/2.jsonl"),
            file("/s/a/9.jsonl"),
            file("/s/c/huge.jsonl"),
            file("/s/a/1.jsonl"),
            file("/s/b/big.jsonl"),
        ];
        let sizes = [10, 30, 100_000, 20, 5_000];
        let mut jobs: Vec<Job> = files.iter().zip(sizes).map(|(f, n)| (f, None, n)).collect();
        read_order(&mut jobs);
        let order: Vec<&str> = jobs.iter().map(|j| j.0.path.to_str().unwrap()).collect();
        assert_eq!(
            order,
            [
                "/s/c/huge.jsonl",
                "/s/b/big.jsonl",
                "/s/a/1.jsonl",
                "/s/a/9.jsonl",
                "/s/b/2.jsonl"
            ]
        );
    }

    /// The live ids answer as the set of them, dense (as bits) or sparse
    /// (as a table), at the edges of words and past the last id.
    #[test]
    fn live_ids_answer_as_their_set() {
        let dense: Vec<u32> = (0..1000)
            .filter(|i| i % 3 != 1)
            .chain([63, 64, 1023])
            .collect();
        let sparse: Vec<u32> = vec![5, 64, 4_000_000, u32::MAX];
        for ids in [dense, sparse, Vec::new()] {
            let set: HashSet<u32> = ids.iter().copied().collect();
            let live = LiveIds::of(ids.clone());
            assert_eq!(
                matches!(live, LiveIds::Bits(_)),
                ids.len() > 100 || ids.is_empty()
            );
            for id in (0..1100).chain([4_000_000, 4_000_001, u32::MAX - 1, u32::MAX]) {
                assert_eq!(live.contains(id), set.contains(&id), "{id}");
            }
        }
    }

    /// A taker waits while others hold the budget, and one taker alone may
    /// take more than the limit (a result bigger than it still goes).
    #[test]
    fn a_budget_holds_takers_until_bytes_are_given_back() {
        let budget = Budget::new(10);
        budget.take(100);
        budget.give(100);
        budget.take(8);
        let events = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                budget.take(5);
                events.lock().unwrap().push("taken");
            });
            // Time for the taker to reach its wait (were it not to wait,
            // it would be done before the bytes are given).
            std::thread::sleep(Duration::from_millis(50));
            events.lock().unwrap().push("given");
            budget.give(8);
        });
        assert_eq!(*events.lock().unwrap(), ["given", "taken"]);
        // Closed (the writer stopped), a waiting taker goes on.
        budget.give(5);
        budget.take(8);
        let (went, gone) = mpsc::channel();
        let shared = &budget;
        std::thread::scope(|s| {
            s.spawn(move || {
                shared.take(5);
                let _ = went.send(());
            });
            std::thread::sleep(Duration::from_millis(50));
            budget.close();
            // Not a timing goal: without `close` the taker would never go.
            let result = gone.recv_timeout(Duration::from_secs(30));
            if result.is_err() {
                budget.give(8);
            }
            assert!(result.is_ok(), "a closed budget lets its takers go");
        });
    }

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
