//! The index database: location, schema, version check, recovery.
//!
//! One SQLite file in WAL mode. Every write is a transaction, so a crash or
//! Ctrl+C mid-update leaves the last committed state. A file that is not a
//! database, is corrupt, or was written by another arbor version is deleted
//! and rebuilt: the index only ever caches what the session files say.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, ErrorCode, OptionalExtension};

use crate::{Error, Result};

/// Changes whenever the schema or the meaning of stored data changes; the
/// arbor version is part of it, so another arbor version rebuilds.
pub const FORMAT: &str = concat!("arbor-index-20/", env!("CARGO_PKG_VERSION"));

const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- One row per session file (path is the raw OS path).
CREATE TABLE files(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    path BLOB NOT NULL UNIQUE,
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    -- Bytes parsed into `state`: the end of the last complete line.
    parsed INTEGER NOT NULL,
    -- Fingerprints of the first and of the last (up to) 4 KiB before `parsed`.
    head_fp INTEGER NOT NULL,
    tail_fp INTEGER NOT NULL,
    -- The resumable scanner state at `parsed` (NULL: parse from the start).
    state BLOB,
    -- The row, when a partial last line makes it differ from `state`.
    row BLOB,
    -- Normalized searchable text of that partial last line.
    tail_text TEXT,
    -- Why the file is not a session (then state and row are NULL).
    problem TEXT,
    text_bytes INTEGER NOT NULL DEFAULT 0,
    -- `rowsum::row_sum` of the columns a read serves (`rowsum::CHECKED`).
    sum INTEGER NOT NULL DEFAULT 0
);
-- Normalized searchable text (user/assistant messages), one chunk per parse:
-- `len` bytes at `off` in the text file of generation meta `text_gen`
-- beside the database (append-only; meta `text_len` is its committed length),
-- whose `text_sum` is `sum`.
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    off INTEGER NOT NULL,
    len INTEGER NOT NULL,
    sum INTEGER NOT NULL
);
CREATE INDEX chunks_file ON chunks(file_id);
-- Searches list the sessions and the partial last lines without reading rows.
CREATE INDEX files_sessions ON files(path) WHERE problem IS NULL;
CREATE INDEX files_tails ON files(id) WHERE tail_text IS NOT NULL;
-- The picker's first screen: the most recently written sessions.
CREATE INDEX files_recent ON files(mtime_ns) WHERE problem IS NULL;
-- The word index: immutable segments of sorted terms with posting lists.
-- `part`: -1 for the stored (user and assistant) text, else the code of the
-- part whose words it holds (`session::searchable::Part`; no text is kept
-- for those); that plus 16 for the segments of the same text's adjacent word
-- pairs (`t1 t2`, never across two pieces of text: see `terms::distinct_pair_ranges`).
-- A segment's dictionary (its sorted terms, `terms_len` bytes whose
-- `text_sum` is `terms_sum`) is the file `terms_path(id)` beside the
-- database, written before the row is committed and never changed: a
-- reader maps it rather than copying it. Ids are never reused, so a file
-- name always means the same bytes.
CREATE TABLE segments(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    part INTEGER NOT NULL,
    docs INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    terms_len INTEGER NOT NULL,
    terms_sum INTEGER NOT NULL,
    starts BLOB NOT NULL,
    postings BLOB NOT NULL,
    -- `rowsum::segment_sum` of the columns above (but `id` and `bytes`).
    sum INTEGER NOT NULL DEFAULT 0
);
";

/// Where the index lives: `$ARBOR_CACHE_DIR`, else `$XDG_CACHE_HOME/arbor`,
/// else the platform cache dir (`~/.cache/arbor`, `~/Library/Caches/arbor`, …).
pub fn default_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("ARBOR_CACHE_DIR").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        let d = PathBuf::from(d);
        if d.is_absolute() {
            return Some(d.join("arbor"));
        }
    }
    dirs::cache_dir().map(|d| d.join("arbor"))
}

pub const FILE_NAME: &str = "index.sqlite";

/// The checksum of a chunk of stored text. The text file is outside
/// SQLite's care: bytes overwritten there (at the same size, which no
/// length check sees) would silently change search answers, so each chunk
/// is checked against this where it is read. Four independent lanes of
/// FxHash's step (each a bijection of its state for a given word, so a
/// changed word always changes its lane), combined at the end: a regex
/// reads all stored text, and one serial lane ran at ~1.2 GB/s here.
pub fn text_sum(bytes: &[u8]) -> i64 {
    text_sum_in_steps(bytes, &mut |_| ())
}

/// [`text_sum`], calling `step` with the end of each 8 MiB summed so far
/// (the owner of a map drops the pages behind it).
pub fn text_sum_in_steps(bytes: &[u8], step: &mut dyn FnMut(usize)) -> i64 {
    // A multiple of the 32-byte block: only the last step has a remainder.
    const STEP: usize = 8 << 20;
    let mut sum = TextSum::default();
    let mut end = 0;
    for chunk in bytes.chunks(STEP) {
        sum.update(chunk);
        end += chunk.len();
        step(end);
    }
    sum.finish()
}

/// [`text_sum`] of bytes given a piece at a time (a merge writes a
/// dictionary to its file as it goes, never whole in memory).
#[derive(Clone)]
pub struct TextSum {
    lanes: [u64; 4],
    /// The bytes of a block not yet complete.
    pending: [u8; 32],
    pending_len: usize,
    total: u64,
}

const TEXT_SUM_K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Default for TextSum {
    fn default() -> TextSum {
        let k = TEXT_SUM_K;
        TextSum {
            lanes: [k, k.rotate_left(16), k.rotate_left(32), k.rotate_left(48)],
            pending: [0; 32],
            pending_len: 0,
            total: 0,
        }
    }
}

impl TextSum {
    pub fn update(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.pending_len > 0 {
            let take = (32 - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < 32 {
                return;
            }
            let block = self.pending;
            self.blocks(&block);
            self.pending_len = 0;
        }
        let whole = bytes.len() / 32 * 32;
        self.blocks(&bytes[..whole]);
        let rest = &bytes[whole..];
        self.pending[..rest.len()].copy_from_slice(rest);
        self.pending_len = rest.len();
    }

    /// Whole 32-byte blocks.
    fn blocks(&mut self, bytes: &[u8]) {
        for b in bytes.chunks_exact(32) {
            for (lane, w) in self.lanes.iter_mut().zip(b.chunks_exact(8)) {
                let mut word = [0u8; 8];
                word.copy_from_slice(w);
                *lane = (lane.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(TEXT_SUM_K);
            }
        }
    }

    pub fn finish(&self) -> i64 {
        use std::hash::Hasher;
        let mut h = arbor_util::hash::FxHasher::default();
        for lane in self.lanes {
            h.write_u64(lane);
        }
        h.write(&self.pending[..self.pending_len]);
        h.write_u64(self.total);
        h.finish() as i64
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_os_string();
    p.push(suffix);
    PathBuf::from(p)
}

/// The append-only file of searchable text of generation `gen`, beside the
/// database. A compaction writes the live text to the next generation's
/// file and commits the new offsets with the new generation number, so a
/// reader always pairs offsets with the file they were written for: it
/// reads the generation and the offsets in one snapshot and opens that
/// generation's file, which is never renamed over or changed below its
/// committed length.
pub fn text_path(path: &Path, gen: u64) -> PathBuf {
    with_suffix(path, &format!("-text.{gen}"))
}

/// The dictionary file of segment `id` (see the `segments` table).
pub fn terms_path(path: &Path, id: i64) -> PathBuf {
    with_suffix(path, &format!("-terms.{id}"))
}

/// Where a merge into segment `id` writes one of its streams (`which`), a
/// file that is unlinked as soon as it is open.
pub fn merge_scratch_path(path: &Path, id: i64, which: u8) -> PathBuf {
    with_suffix(path, &format!("-merging.{id}.{which}"))
}

/// The segments' dictionary files present beside the database, by id.
pub fn terms_files(path: &Path) -> Vec<(u64, PathBuf)> {
    numbered_files(path, "-terms.")
}

/// The committed text file: its generation and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextState {
    pub gen: u64,
    pub len: u64,
}

/// Read in the caller's transaction (or snapshot) with the offsets it
/// goes with. A new index starts at generation 1.
pub fn text_state(conn: &Connection) -> Result<TextState> {
    let num = |k| -> Result<Option<u64>> { Ok(get_meta(conn, k)?.and_then(|v| v.parse().ok())) };
    Ok(TextState {
        gen: num("text_gen")?.unwrap_or(1),
        len: num("text_len")?.unwrap_or(0),
    })
}

/// The text files of every generation present beside the database.
pub fn text_generations(path: &Path) -> Vec<(u64, PathBuf)> {
    numbered_files(path, "-text.")
}

/// The files beside the database named after it, `suffix` and a number.
fn numbered_files(path: &Path, suffix: &str) -> Vec<(u64, PathBuf)> {
    let (Some(name), dir) = (path.file_name(), path.parent()) else {
        return Vec::new();
    };
    let dir = dir
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut prefix = name.to_os_string();
    prefix.push(suffix);
    let prefix = prefix.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name();
            let gen = name.to_str()?.strip_prefix(&prefix)?;
            if gen.is_empty() || !gen.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            Some((gen.parse().ok()?, dir.join(&name)))
        })
        .collect()
}

/// Deletes the text files of generations before `current` (best effort:
/// what cannot be deleted now is tried again later).
///
/// This is safe without a lock whenever it runs, because generation
/// `current` is committed: no writer appends to an older file again (a
/// writer opens the generation it reads inside its write transaction, and a
/// compaction holds that transaction until its generation is committed),
/// and a reader still using an older one either has it open already (an
/// open or mapped file outlives its name on unix; Windows refuses to delete
/// it, so it stays until a later try) or, finding it gone, reads the
/// committed state again and gets the newer generation (see
/// `search::Stored::gone`). Newer files than `current` are left alone: one
/// may be a compaction's, still being written under its write lock (a crash
/// leaves at most one such file, which the next compaction writes over).
pub fn remove_generations_before(path: &Path, current: u64) {
    for (gen, p) in text_generations(path) {
        if gen < current {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Makes a new name in `dir` durable (a file created or renamed there).
pub fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

fn sidecars(path: &Path) -> Vec<PathBuf> {
    let mut v = vec![
        with_suffix(path, "-wal"),
        with_suffix(path, "-shm"),
        with_suffix(path, "-journal"),
        // The single text file of index formats before 7, and its
        // compaction's temporary file.
        with_suffix(path, "-text"),
        with_suffix(path, "-text.compact"),
    ];
    v.extend(text_generations(path).into_iter().map(|(_, p)| p));
    v.extend(terms_files(path).into_iter().map(|(_, p)| p));
    v
}

/// Deletes the database, its WAL files and its text files.
pub fn delete(path: &Path) -> std::io::Result<()> {
    for p in std::iter::once(path.to_path_buf()).chain(sidecars(path)) {
        match std::fs::remove_file(&p) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// Bytes on disk (database, WAL and text files).
pub fn disk_bytes(path: &Path) -> u64 {
    std::iter::once(path.to_path_buf())
        .chain(sidecars(path))
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// True for errors that mean "this file is not a usable index": SQLite
/// said the file is not a database or is corrupt, a value read back is not
/// of the type the schema gives it, or a table or column is missing (a
/// schema changed under arbor), or a stored value failed its check
/// ([`Error::Corrupt`]). Each is mended by starting the index again; an
/// error that is not about the file (a full disk, a lock) is not.
pub fn is_broken(e: &Error) -> bool {
    use rusqlite::Error as E;
    match e {
        Error::Corrupt(_) => true,
        Error::Sqlite(e) => match e {
            E::FromSqlConversionFailure(..)
            | E::InvalidColumnType(..)
            | E::InvalidColumnIndex(_)
            | E::InvalidColumnName(_)
            | E::IntegralValueOutOfRange(..) => true,
            E::SqliteFailure(f, msg) => {
                matches!(f.code, ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt)
                    || (f.code == ErrorCode::Unknown
                        && msg.as_deref().is_some_and(|m| {
                            m.starts_with("no such column") || m.starts_with("no such table")
                        }))
            }
            _ => false,
        },
        _ => false,
    }
}

/// The file of `conn`'s database (for a message naming it; empty for an
/// in-memory one).
pub fn file_of(conn: &Connection) -> PathBuf {
    PathBuf::from(conn.path().unwrap_or_default())
}

enum Opened {
    Ready(Connection),
    /// Another arbor version (or a half-created schema): rebuild.
    Stale,
}

/// How long a statement waits for another process's write lock.
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // Before WAL mode fixes it: big pages make the bulk text cheaper to
    // write and the 10,000 rows fewer pages to read (no effect on an
    // existing database).
    conn.execute_batch("PRAGMA page_size=16384")?;
    // Also before the first table: the pages a merge of segments frees
    // (hundreds of MB after a first run at 100,000 sessions) can be given
    // back to the file system (`incremental_vacuum` after merges). Only
    // when it is not set already: setting it, even to the value it has,
    // changes every other connection's `data_version` as a commit does,
    // and a picker opening its search connection then took its own loader
    // for another process writing and sent every row again.
    let auto_vacuum: i64 = conn.query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
    if auto_vacuum != 2 {
        conn.execute_batch("PRAGMA auto_vacuum=INCREMENTAL")?;
    }
    // journal_mode returns a row; WAL lets readers (a picker) run beside a writer.
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    conn.execute_batch(
        "PRAGMA synchronous=NORMAL;
         PRAGMA journal_size_limit=67108864;
         PRAGMA cache_size=-2048;
         PRAGMA temp_store=MEMORY;",
    )?;
    // Reading through a memory map is cheaper than read() copies: a warm
    // list of 10,000 sessions went from ~150 to ~120 ms with it.
    set_mmap(conn, true)
}

/// Copies the write-ahead log's pages into the database file and empties
/// the log, when no reader holds a snapshot of it (else as much as can be
/// copied, which is no error).
pub fn checkpoint(conn: &Connection) -> Result<()> {
    Ok(conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?)
}

/// Whether SQLite reads this connection's pages through a memory map.
/// Every page read through it counts in the process's resident set, so a
/// read of the whole `files` table goes without (see `refresh::look`).
pub fn set_mmap(conn: &Connection, on: bool) -> Result<()> {
    let sql = if on {
        "PRAGMA mmap_size=268435456"
    } else {
        "PRAGMA mmap_size=0"
    };
    conn.query_row(sql, [], |_| Ok(())).optional()?;
    Ok(())
}

fn try_open(path: &Path) -> Result<Opened> {
    let conn = Connection::open(path)?;
    configure(&conn)?;
    let has_meta: bool = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='meta'",
        [],
        |r| r.get::<_, i64>(0).map(|n| n > 0),
    )?;
    if !has_meta {
        // A brand-new file: create the schema, unless another process just did.
        let tx =
            rusqlite::Transaction::new_unchecked(&conn, rusqlite::TransactionBehavior::Immediate)?;
        let tables: i64 = tx.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))?;
        if tables == 0 {
            tx.execute_batch(SCHEMA)?;
            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('format', ?1)",
                [FORMAT],
            )?;
            let schema = schema_sum(&tx)?;
            tx.execute(
                "INSERT INTO meta(key, value) VALUES ('schema', ?1)",
                [schema],
            )?;
            tx.commit()?;
            return Ok(Opened::Ready(conn));
        }
        drop(tx);
    }
    let format: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key='format'", [], |r| {
            r.get(0)
        })
        .optional()
        .unwrap_or(None);
    // A schema changed under arbor (a column's type, a column or table
    // gone) is a rebuild, not an error on every run: one read of the
    // schema's dozen rows.
    if format.as_deref() == Some(FORMAT)
        && get_meta(&conn, "schema")?.as_deref() == Some(&schema_sum(&conn)?)
    {
        Ok(Opened::Ready(conn))
    } else {
        Ok(Opened::Stale)
    }
}

/// The checksum of the schema's statements as SQLite keeps them (its own
/// tables, made as they are needed, left out).
fn schema_sum(conn: &Connection) -> Result<String> {
    let mut st = conn.prepare(
        "SELECT type, name, coalesce(sql, '') FROM sqlite_master
         WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name",
    )?;
    let mut sum = TextSum::default();
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        for i in 0..3 {
            let text = r.get_ref(i)?.as_str().map_err(rusqlite::Error::from)?;
            sum.update(&(text.len() as u64).to_le_bytes());
            sum.update(text.as_bytes());
        }
    }
    Ok(format!("{:016x}", sum.finish() as u64))
}

/// Opens (creating, or rebuilding a broken or foreign one) the index at `path`.
pub fn open(path: &Path) -> Result<Connection, Error> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let mut last = None;
    for _attempt in 0..2 {
        match try_open(path) {
            Ok(Opened::Ready(c)) => return Ok(c),
            Ok(Opened::Stale) => last = None,
            Err(e) if is_broken(&e) => last = Some(e),
            Err(e) => return Err(e),
        }
        delete(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Err(match last {
        Some(e) => e,
        None => Error::Corrupt(path.to_path_buf()),
    })
}

pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )?;
    Ok(())
}

pub fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key=?1", [key], |r| r.get(0))
        .optional()?)
}

/// Reads `len` bytes at `off`.
pub fn read_at(f: &std::fs::File, off: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let mut v = vec![0u8; len];
    read_exact_at(f, &mut v, off)?;
    Ok(v)
}

/// Fills `buf` from `off` without moving a shared file position: searches
/// read one file from several threads.
pub fn read_exact_at(f: &std::fs::File, buf: &mut [u8], off: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        f.read_exact_at(buf, off)
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match f.seek_read(&mut buf[done..], off + done as u64)? {
                0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                n => done += n,
            }
        }
        Ok(())
    }
    #[cfg(not(any(unix, windows)))]
    {
        use std::io::{Read, Seek, SeekFrom};
        // No positioned read here: one reader at a time.
        static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        let mut f = f;
        f.seek(SeekFrom::Start(off))?;
        f.read_exact(buf)
    }
}

/// Writes all of `b` at `off`.
pub fn write_at(f: &std::fs::File, off: u64, b: &[u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;
        f.write_all_at(b, off)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = f;
        f.seek(SeekFrom::Start(off))?;
        f.write_all(b)
    }
}

/// A path made absolute (without resolving symlinks): rows are keyed by
/// absolute paths, whatever the caller's working directory.
pub fn absolute(p: &Path) -> std::borrow::Cow<'_, Path> {
    Keys::new().absolute(p)
}

/// Makes many paths absolute with one look-up of the working directory.
pub struct Keys {
    cwd: Option<PathBuf>,
}

impl Keys {
    pub fn new() -> Keys {
        Keys { cwd: None }
    }

    pub fn absolute<'p>(&mut self, p: &'p Path) -> std::borrow::Cow<'p, Path> {
        use std::borrow::Cow;
        if p.is_absolute() {
            return Cow::Borrowed(p);
        }
        if self.cwd.is_none() {
            self.cwd = std::env::current_dir().ok();
        }
        match &self.cwd {
            // Joined to an absolute path, `absolute` only normalizes.
            Some(cwd) => {
                Cow::Owned(std::path::absolute(cwd.join(p)).unwrap_or_else(|_| p.to_path_buf()))
            }
            None => Cow::Owned(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
        }
    }

    /// The key of a row (see [`path_key`]), borrowed when already absolute.
    pub fn key<'p>(&mut self, p: &'p Path) -> std::borrow::Cow<'p, [u8]> {
        use std::borrow::Cow;
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            match self.absolute(p) {
                Cow::Borrowed(a) => Cow::Borrowed(a.as_os_str().as_bytes()),
                Cow::Owned(a) => Cow::Owned(a.as_os_str().as_bytes().to_vec()),
            }
        }
        #[cfg(not(unix))]
        {
            Cow::Owned(self.absolute(p).to_string_lossy().into_owned().into_bytes())
        }
    }
}

impl Default for Keys {
    fn default() -> Self {
        Keys::new()
    }
}

/// Raw OS bytes of a path, made absolute (the key of a row).
#[cfg(unix)]
pub fn path_key(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    absolute(p).as_os_str().as_bytes().to_vec()
}

#[cfg(unix)]
pub fn key_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
pub fn path_key(p: &Path) -> Vec<u8> {
    absolute(p).to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
pub fn key_path(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

#[cfg(test)]
mod tests {
    use super::{text_sum, TextSum};

    /// Any one byte changed, in any lane or in the tail, changes the sum;
    /// so does a swap of two words and a change of length.
    #[test]
    fn text_sum_given_in_pieces_is_the_same() {
        let text: Vec<u8> = (0..1000u32).map(|i| (i * 31 % 251) as u8).collect();
        for len in [0, 1, 31, 32, 33, 95, 1000] {
            let want = text_sum(&text[..len]);
            for piece in [1, 3, 7, 32, 33, 100] {
                let mut sum = TextSum::default();
                for p in text[..len].chunks(piece) {
                    sum.update(p);
                }
                assert_eq!(sum.finish(), want, "{len} bytes in pieces of {piece}");
            }
        }
    }

    #[test]
    fn text_sum_sees_every_change() {
        let text: Vec<u8> = (0..203u32).map(|i| b'a' + (i * 7 % 26) as u8).collect();
        let sum = text_sum(&text);
        for i in 0..text.len() {
            let mut t = text.clone();
            t[i] ^= 0x20;
            assert_ne!(text_sum(&t), sum, "byte {i}");
        }
        let mut swapped = text.clone();
        swapped[..16].rotate_left(8);
        assert_ne!(text_sum(&swapped), sum);
        assert_ne!(text_sum(&text[..202]), sum);
        assert_eq!(text_sum(&text), sum);
    }
}
