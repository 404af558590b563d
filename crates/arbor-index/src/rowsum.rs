//! The checksums of stored rows: a `files` row, and a word segment.
//!
//! SQLite checks its pages' structure, not their values: a bit flipped in
//! a row's blob or in one of its numbers reads back as another, valid
//! value, and a listing served it ("run$leaf" for "run leaf", a changed
//! time, a dropped row). So every row carries the sum of the columns a
//! read serves ([`CHECKED`]), written with the row and checked wherever a
//! row is read; a row that fails is treated as not indexed: its file is
//! read again, as a changed file is, and the refresh that reads it writes
//! the row again.

use rusqlite::types::ValueRef;

use crate::db::TextSum;

/// The columns a read of a row selects, in this order, starting at some
/// column of the statement: those the sum covers, then the sum (a macro,
/// for `concat!` into statements).
macro_rules! checked_columns {
    () => {
        "id, path, dev, ino, size, mtime_ns, parsed, head_fp, tail_fp, state, row, problem, tail_text, sum"
    };
}
pub(crate) use checked_columns;

/// How many columns the sum covers (all of [`CHECKED`] but the sum).
pub const COVERED: usize = 13;

/// Column positions in [`CHECKED`].
pub mod col {
    pub const ID: usize = 0;
    pub const PATH: usize = 1;
    pub const STATE: usize = 9;
    pub const ROW: usize = 10;
    pub const TAIL_TEXT: usize = 12;
}

/// The sum of a row's covered columns, given as SQLite holds them (the
/// type of each value is part of the sum).
pub fn row_sum<'a>(values: impl IntoIterator<Item = ValueRef<'a>>) -> i64 {
    let mut sum = TextSum::default();
    for v in values {
        let mut head = [0u8; 9];
        let bytes: &[u8] = match v {
            ValueRef::Null => &[],
            ValueRef::Integer(i) => {
                head[1..].copy_from_slice(&i.to_le_bytes());
                head[0] = 1;
                sum.update(&head);
                continue;
            }
            ValueRef::Real(f) => {
                head[1..].copy_from_slice(&f.to_bits().to_le_bytes());
                head[0] = 2;
                sum.update(&head);
                continue;
            }
            ValueRef::Text(t) => {
                head[0] = 3;
                t
            }
            ValueRef::Blob(b) => {
                head[0] = 4;
                b
            }
        };
        // The length before the bytes: no two rows read the same.
        head[1..].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        sum.update(&head);
        sum.update(bytes);
    }
    sum.finish()
}

/// Whether the row read at `at` ([`CHECKED`]'s columns from there) is as
/// it was written. A value of an unexpected type is an error of the
/// caller's reading it, not a mismatch (a schema changed under arbor:
/// `db::is_broken` has it rebuilt).
pub fn intact(r: &rusqlite::Row, at: usize) -> rusqlite::Result<bool> {
    let stored: i64 = r.get(at + COVERED)?;
    let ok = sum_read(r, at)? == stored;
    if !ok && arbor_util::log::enabled() {
        let id = r.get_ref(at + col::ID)?.as_i64().unwrap_or(-1);
        arbor_util::log::line(format!("index: row {id} failed its checksum: read again"));
    }
    Ok(ok)
}

/// The sum of the covered columns read at `at` (see [`intact`]).
pub fn sum_read(r: &rusqlite::Row, at: usize) -> rusqlite::Result<i64> {
    let mut values = [ValueRef::Null; COVERED];
    for (i, v) in values.iter_mut().enumerate() {
        *v = r.get_ref(at + i)?;
    }
    Ok(row_sum(values))
}

/// Writes the sum of row `id` as it is stored now (read back, so the sum
/// is of the values and types SQLite holds). In the writer's transaction.
pub fn seal(conn: &rusqlite::Connection, id: i64) -> rusqlite::Result<()> {
    let sum = conn.query_row(
        concat!("SELECT ", checked_columns!(), " FROM files WHERE id = ?1"),
        [id],
        |r| sum_read(r, 0),
    )?;
    conn.execute("UPDATE files SET sum = ?1 WHERE id = ?2", [sum, id])?;
    Ok(())
}

/// A word segment's sum, before its postings: its facts and `starts`
/// (the postings are added as they are written or read, then
/// [`TextSum::finish`]). Its dictionary has a sum of its own
/// (`terms_sum`, covered here).
pub fn segment_sum(
    (part, docs): (i64, i64),
    (terms_len, terms_sum): (i64, i64),
    starts: &[u8],
    postings_len: u64,
) -> TextSum {
    let mut sum = TextSum::default();
    for v in [
        part,
        docs,
        terms_len,
        terms_sum,
        starts.len() as i64,
        postings_len as i64,
    ] {
        sum.update(&v.to_le_bytes());
    }
    sum.update(starts);
    sum
}

/// What a segment read back is checked against: its sum up to the
/// postings (see [`segment_sum`]) and the sum stored. Checked once per
/// load of the segment, when its postings are first read (a search) or as
/// a merge reads them all.
pub struct SegmentCheck {
    pub before_postings: TextSum,
    pub stored: i64,
    pub done: std::sync::atomic::AtomicBool,
}

impl SegmentCheck {
    /// Reads all of `blob` (a segment's postings) a megabyte at a time and
    /// compares the sum; true when it is the one stored.
    pub fn postings_match(&self, blob: &rusqlite::blob::Blob<'_>) -> rusqlite::Result<bool> {
        use std::sync::atomic::Ordering;
        if self.done.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let mut sum = self.before_postings.clone();
        let mut buf = vec![0u8; (1 << 20).min(blob.len())];
        let mut at = 0;
        while at < blob.len() {
            let n = buf.len().min(blob.len() - at);
            blob.read_at_exact(&mut buf[..n], at)?;
            sum.update(&buf[..n]);
            at += n;
        }
        let ok = sum.finish() == self.stored;
        self.done.store(ok, Ordering::Relaxed);
        Ok(ok)
    }
}

/// Marks the index to be started again by the next process that opens it
/// (its format no longer matches): a damaged segment was found by a reader,
/// which answers from the files meanwhile. Best effort.
pub fn mark_broken(conn: &rusqlite::Connection) {
    // Never a wait on another process's write (a picker's search).
    let _ = conn.busy_timeout(std::time::Duration::ZERO);
    let _ = conn.execute("UPDATE meta SET value = 'damaged' WHERE key = 'format'", []);
    let _ = conn.busy_timeout(crate::db::BUSY_TIMEOUT);
}

/// Whether every word segment's postings are as summed when written (all
/// of them read: `arbor index`'s check).
pub fn segments_intact(conn: &rusqlite::Connection) -> rusqlite::Result<bool> {
    let mut st = conn.prepare(
        "SELECT id, part, docs, terms_len, terms_sum, starts, length(postings), sum FROM segments",
    )?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let check = SegmentCheck {
            before_postings: segment_sum(
                (r.get(1)?, r.get(2)?),
                (r.get(3)?, r.get(4)?),
                r.get_ref(5)?.as_blob()?,
                r.get::<_, i64>(6)? as u64,
            ),
            stored: r.get(7)?,
            done: Default::default(),
        };
        let blob = conn.blob_open(rusqlite::MAIN_DB, "segments", "postings", r.get(0)?, true)?;
        if !check.postings_match(&blob)? {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::row_sum;
    use rusqlite::types::ValueRef;

    #[test]
    fn every_change_of_a_value_or_its_type_changes_the_sum() {
        let base = [
            ValueRef::Integer(7),
            ValueRef::Blob(b"/a/b.jsonl"),
            ValueRef::Null,
            ValueRef::Text(b"run leaf"),
        ];
        let sum = row_sum(base);
        let changed = [
            [ValueRef::Integer(6), base[1], base[2], base[3]],
            [base[0], ValueRef::Blob(b"/a/c.jsonl"), base[2], base[3]],
            [base[0], base[1], ValueRef::Blob(b""), base[3]],
            [base[0], base[1], base[2], ValueRef::Text(b"run$leaf")],
            [base[0], base[1], base[2], ValueRef::Blob(b"run leaf")],
            // Bytes moved from one value to the next.
            [
                base[0],
                ValueRef::Blob(b"/a/b.jsonlrun"),
                base[2],
                ValueRef::Text(b" leaf"),
            ],
        ];
        for c in changed {
            assert_ne!(row_sum(c), sum, "{c:?}");
        }
        assert_eq!(row_sum(base), sum);
    }
}
