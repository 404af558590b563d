//! Writing parsed files: rows, text and word segments, one transaction per
//! batch.

use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior, MAIN_DB};

use crate::codec::{self};
use crate::db::{path_key, set_meta, text_path, text_state, write_at, TextState};
use crate::termfile;
use crate::terms::{pair_key, pair_sides, SegmentBuilder, Sides, TermSet, EMPTY_SIDE};

use super::merge::Postings;
use super::parse::{Parsed, PartText};
use crate::Result;

/// Writes parse results; one open transaction at a time.
pub struct Writer<'c> {
    conn: &'c Connection,
    /// The database (text files are named after it).
    db_path: PathBuf,
    pub(super) in_tx: bool,
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
fn text_file_short(conn: &Connection, db_path: &Path) -> Result<bool> {
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
pub fn check_text_file(conn: &Connection, db_path: &Path) -> Result<()> {
    // A dictionary file gone or cut short loses the words of its segment
    // the same way.
    let broken = |c: &Connection| -> Result<bool> {
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
    crate::db::remove_generations_before(db_path, text_state(conn)?.gen);
    termfile::sweep(conn, db_path)
}

pub(super) fn io_err(e: std::io::Error) -> rusqlite::Error {
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

    fn begin(&mut self) -> Result<()> {
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
    fn text_file(&mut self) -> Result<&mut (File, u64, u64)> {
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
                    return Err(text_file_broken().into());
                }
                if len == 0 {
                    // Possibly just created: its name must last as long as
                    // the offsets committed into it.
                    if let Some(dir) = path.parent() {
                        crate::db::sync_dir(dir);
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
    pub fn put(&mut self, p: &Parsed) -> Result<bool> {
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
                    crate::db::text_sum(p.text.as_bytes())
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

    fn delete_id(&mut self, id: i64) -> Result<()> {
        self.conn
            .execute("DELETE FROM chunks WHERE file_id=?1", [id])?;
        self.conn.execute("DELETE FROM files WHERE id=?1", [id])?;
        Ok(())
    }

    pub fn delete_path(&mut self, path: &Path) -> Result<bool> {
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
    pub fn commit(&mut self) -> Result<()> {
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
        let store = |part: i64, e: &crate::terms::Encoded| {
            if arbor_util::log::enabled() {
                arbor_util::log::line(format!(
                    "index: segment of part {part}: {} MB of terms, {} MB in all",
                    e.terms.len() >> 20,
                    e.bytes() >> 20
                ));
            }
            store_segment(conn, db_path, part, e)
        };
        std::thread::scope(|s| -> Result<()> {
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
    e: &crate::terms::Encoded,
) -> Result<()> {
    let sum = crate::db::text_sum(&e.terms);
    let facts = (e.docs, e.terms.len(), sum);
    let id = insert_segment(
        conn,
        None,
        part,
        facts,
        &e.starts,
        Postings::Bytes(&e.postings),
    )?;
    Ok(termfile::write(db_path, id, &e.terms).map_err(io_err)?)
}

/// Inserts a segment's row (as `id`, or the next one) whose dictionary is
/// `(docs, terms_len, terms_sum)`; returns its id.
pub(super) fn insert_segment(
    conn: &Connection,
    id: Option<i64>,
    part: i64,
    (docs, terms_len, terms_sum): (usize, usize, i64),
    starts: &[u8],
    postings: Postings<'_>,
) -> Result<i64> {
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
                        return Err(io_err(short).into());
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
