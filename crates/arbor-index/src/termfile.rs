//! The segments' dictionary files beside the index (see the `segments`
//! table in `db`): written once, before the row naming them is committed;
//! read back whole for a merge or a one-shot search; mapped by a searcher
//! that lives long (the picker), so that its dictionaries are the page
//! cache's pages and not its own heap; deleted once no committed row names
//! them.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::db::{merge_scratch_path, terms_files, terms_path, text_sum};
use super::terms::TermBytes;
use crate::Result;

/// Why a dictionary file could not be used. It never leaves the crate:
/// its readers, who know the index's path, answer with [`crate::Error`]
/// (`Changed`, `Corrupt` or `Io`; a merge's failure keeps these words).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TermFileError {
    /// Not there: deleted after a merge that this reader's snapshot
    /// predates (a newer snapshot does not name it), or by someone else.
    #[error("a dictionary file is gone")]
    Gone,
    /// Not the bytes written (cut short or overwritten in place).
    #[error("a dictionary file is damaged")]
    Damaged,
    #[error("a dictionary file cannot be read: {0}")]
    Io(#[from] std::io::Error),
}

/// Writes segment `id`'s dictionary. Truncated first: a file of an id
/// that no committed row names can only be a crashed writer's.
///
/// Not synced: a first run commits hundreds of segments, and a sync per
/// file made the first run at 10,000 sessions 5 times slower (23 -> 115 s)
/// on this machine. A file that a power loss leaves short, empty or gone
/// under a committed row is caught by its length or checksum wherever it
/// is read, and the index is then started again (`refresh::check_text_file`):
/// a cache rebuilt, never a wrong answer.
pub fn write(db_path: &Path, id: i64, terms: &[u8]) -> std::io::Result<()> {
    std::fs::write(terms_path(db_path, id), terms)
}

/// Segment `id`'s dictionary file, created or truncated (as
/// [`write`]), for a merge to write as it goes.
pub fn create(db_path: &Path, id: i64) -> std::io::Result<std::fs::File> {
    std::fs::File::create(terms_path(db_path, id))
}

/// A file for a merge into segment `id` to write a stream (`which`) to and
/// read it back: unlinked as soon as it is open, so nothing is left of it
/// whatever happens to the process (where an open file cannot be unlinked,
/// [`remove_scratch`] deletes it once the merge is over).
pub fn scratch(db_path: &Path, id: i64, which: u8) -> std::io::Result<std::fs::File> {
    let path = merge_scratch_path(db_path, id, which);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)?;
    let _ = std::fs::remove_file(&path);
    Ok(file)
}

/// Deletes what is left of the merges' scratch files into these segments
/// (nothing, where a file open could be unlinked).
pub fn remove_scratch(db_path: &Path, ids: &[i64]) {
    for &id in ids {
        for which in 0..2 {
            let _ = std::fs::remove_file(merge_scratch_path(db_path, id, which));
        }
    }
}

fn open(db_path: &Path, id: i64) -> Result<std::fs::File, TermFileError> {
    std::fs::File::open(terms_path(db_path, id)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => TermFileError::Gone,
        _ => TermFileError::Io(e),
    })
}

/// Segment `id`'s dictionary read into memory, checked.
pub fn read(db_path: &Path, id: i64, len: usize, sum: i64) -> Result<Vec<u8>, TermFileError> {
    use std::io::Read;
    let f = open(db_path, id)?;
    // Checked first: a damaged length must not size the allocation.
    if f.metadata()?.len() != len as u64 {
        return Err(TermFileError::Damaged);
    }
    let mut bytes = Vec::with_capacity(len);
    // One byte more than expected tells a longer file.
    f.take(len as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() != len || text_sum(&bytes) != sum {
        return Err(TermFileError::Damaged);
    }
    Ok(bytes)
}

/// Segment `id`'s dictionary, mapped where a map can be guarded (see
/// `mapguard`), else read; checked either way. The check reads the map
/// and drops its pages behind it: what stays resident is what lookups read.
pub fn load(db_path: &Path, id: i64, len: usize, sum: i64) -> Result<TermBytes, TermFileError> {
    #[cfg(target_os = "linux")]
    {
        let f = open(db_path, id)?;
        if f.metadata()?.len() != len as u64 {
            return Err(TermFileError::Damaged);
        }
        if let Some(m) = super::mapguard::GuardedMap::new(f, len as u64) {
            let mut released = 0;
            let got = super::db::text_sum_in_steps(m.bytes(), &mut |end| {
                m.release_range(released, end - released);
                released = end;
            });
            if got != sum || !m.intact() {
                return Err(TermFileError::Damaged);
            }
            return Ok(TermBytes::Mapped(std::sync::Arc::new(m)));
        }
    }
    read(db_path, id, len, sum).map(TermBytes::Owned)
}

/// Every segment's dictionary file is there, as long as recorded (in the
/// caller's snapshot or transaction).
pub fn all_present(conn: &Connection, db_path: &Path) -> Result<bool> {
    let mut st = conn.prepare("SELECT id, terms_len FROM segments")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        let (id, len): (i64, i64) = (r.get(0)?, r.get(1)?);
        let ok = std::fs::metadata(terms_path(db_path, id)).is_ok_and(|m| m.len() == len as u64);
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Deletes the dictionary files of these (deleted and committed) segments.
pub fn remove(db_path: &Path, ids: &[i64]) {
    for &id in ids {
        let _ = std::fs::remove_file(terms_path(db_path, id));
    }
}

/// Deletes the dictionary files that no committed segment names (left by
/// a crash, or by a merge whose own deletion failed). Files of ids above
/// the last one committed are left alone: a writer may be writing them.
/// A reader whose older snapshot still names one either has it mapped
/// already (a mapped file outlives its name on unix) or finds it gone and
/// takes a new snapshot.
pub fn sweep(conn: &Connection, db_path: &Path) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    let last: i64 = tx
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'segments'",
            [],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0);
    let live: std::collections::HashSet<i64> = tx
        .prepare("SELECT id FROM segments")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    drop(tx);
    for (id, path) in terms_files(db_path) {
        let Ok(id) = i64::try_from(id) else { continue };
        if id <= last && !live.contains(&id) {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(())
}
