//! Merging small word segments into bigger ones and compacting the text
//! file, after a refresh wrote.

use std::collections::HashSet;
use std::fs::File;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior, MAIN_DB};

use crate::codec::FxBuild;
use crate::db::{set_meta, text_path, text_state, write_at, TextState};
use crate::termfile;
use crate::terms::{merge_to_files, Merged, Segment};

use super::write::{insert_segment, io_err};
use crate::Result;

/// A segment's posting lists: in memory, or read from a file of this length.
pub(super) enum Postings<'a> {
    Bytes(&'a [u8]),
    Read(&'a mut dyn std::io::BufRead, usize),
}

/// A connection that only reads the index at `db_path` (a merge's worker).
fn open_reader(db_path: &Path) -> Result<Connection> {
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
/// is deleted after the commit (see [`crate::db::remove_generations_before`]).
/// A crash before the commit leaves the old generation current and an
/// unused newer file, which the next compaction writes over.
pub fn maybe_compact_text(conn: &Connection, db_path: &Path, min_dead: u64) -> Result<bool> {
    let dead = |conn: &Connection| -> Result<(TextState, bool)> {
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
            let bytes = crate::db::read_at(&old, off as u64, len as usize).map_err(io_err)?;
            write_at(&new, end, &bytes).map_err(io_err)?;
            st.execute(params![id, end as i64])?;
            end += len as u64;
        }
    }
    new.sync_all().map_err(io_err)?;
    if let Some(dir) = new_path.parent() {
        crate::db::sync_dir(dir);
    }
    set_meta(&tx, "text_gen", &gen.to_string())?;
    set_meta(&tx, "text_len", &end.to_string())?;
    tx.commit()?;
    crate::db::remove_generations_before(db_path, gen);
    Ok(true)
}

/// Keeps the number of segments small: merges the smallest ones of each
/// part (dropping postings of files that are gone) when it has more than
/// `MAX_SEGMENTS`. At the end of a first run every part has many: their
/// merges (seconds of CPU at 10,000 sessions) run on all cores, while this
/// thread loads the next part's segments and stores the merged ones, all
/// in one write transaction.
pub fn maybe_merge(conn: &Connection, db_path: &Path) -> Result<()> {
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
        crate::db::set_mmap(conn, false)?;
    }
    if arbor_util::log::enabled() {
        let mb: i64 = plans.iter().map(|p| p.2).sum::<i64>() >> 20;
        arbor_util::log::line(format!("index: merging {} parts, {mb} MB", plans.len()));
    }
    let merged = merge_parts(conn, db_path, &plans);
    if map > 0 {
        crate::db::set_mmap(conn, true)?;
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

/// The ids of the files that are sessions, when a plan merges a big part
/// (`None` else). Postings of files that are gone are dropped when merging
/// big segments; small merges (after a few appends) keep them: queries
/// ignore them, and reading every row id would cost more than the merge.
fn live_ids_for(conn: &Connection, plans: &[(i64, Vec<i64>, i64)]) -> Result<Option<LiveIds>> {
    Ok(if plans.iter().any(|p| p.2 > BIG_MERGE) {
        let ids: Vec<u32> = conn
            .prepare("SELECT id FROM files WHERE problem IS NULL")?
            .query_map([], |r| r.get::<_, i64>(0))?
            .filter_map(|r| r.ok().and_then(|id| u32::try_from(id).ok()))
            .collect();
        Some(LiveIds::of(ids))
    } else {
        None
    })
}

/// The id the next segment gets: no committed row names it, and the
/// merging transaction is the only writer.
fn next_segment_id(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'segments'), 0),
                    coalesce((SELECT max(id) FROM segments), 0)) + 1",
        [],
        |r| r.get(0),
    )?)
}

/// One merging thread of [`merge_parts`]: merges the loaded parts it takes
/// from `jobs` until they end, sending each result to `done`.
fn merge_worker(
    db_path: &Path,
    plans: &[(i64, Vec<i64>, i64)],
    live: &Option<LiveIds>,
    id_of: &dyn Fn(usize) -> i64,
    jobs: &std::sync::Mutex<mpsc::Receiver<(usize, Vec<Segment>)>>,
    done: mpsc::Sender<(usize, std::io::Result<Merged>)>,
) {
    // The posting lists are read on this thread as the merge goes,
    // through a connection of its own: the victims are committed,
    // and WAL lets it read them beside the write transaction.
    let reader = open_reader(db_path);
    loop {
        let job = match jobs.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        let Ok((k, loaded)) = job else {
            return;
        };
        let drop_gone = plans[k].2 > BIG_MERGE;
        let keep = |id| !drop_gone || live.as_ref().is_none_or(|l| l.contains(id));
        let merged = match &reader {
            Ok(conn) => merge_plan(conn, db_path, &plans[k].1, &loaded, &keep, id_of(k)),
            Err(e) => Err(std::io::Error::other(e.plain_text())),
        };
        drop(loaded);
        if done.send((k, merged)).is_err() {
            return;
        }
        // What the storing thread freed of this one's earlier
        // results (see `util::memory`).
        arbor_util::memory::give_back();
    }
}

/// Merges the planned parts' segments (part, victims, their bytes) in one
/// transaction: loaded and stored here, merged on worker threads; a part
/// is loaded only when a worker is free, so no more parts are held than
/// there are workers.
fn merge_parts(conn: &Connection, db_path: &Path, plans: &[(i64, Vec<i64>, i64)]) -> Result<()> {
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let live = live_ids_for(&tx, plans)?;
    // Each plan's merged segment gets its id now, so that its dictionary
    // is written straight to its file.
    let base = next_segment_id(&tx)?;
    let id_of = |k: usize| base + k as i64;
    let workers = rayon::current_num_threads().clamp(1, plans.len());
    // Jobs: a plan's index and its segments, loaded; results: the index
    // and the merged segment.
    let (job_tx, job_rx) = mpsc::sync_channel::<(usize, Vec<Segment>)>(workers);
    let job_rx = std::sync::Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<(usize, std::io::Result<Merged>)>();
    let result: Result<()> = std::thread::scope(|scope| {
        for _ in 0..workers {
            let (job_rx, done_tx, live) = (&job_rx, done_tx.clone(), &live);
            scope.spawn(move || merge_worker(db_path, plans, live, &id_of, job_rx, done_tx));
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
        let sent: Result<()> = (|| {
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
fn load_segments(conn: &Connection, db_path: &Path, ids: &[i64]) -> Result<Option<Vec<Segment>>> {
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
                return Err(io_err(std::io::Error::other(e)).into());
            }
        };
        // The posting lists are read by the merge as it goes.
        match Segment::dictionary_in(terms, &s) {
            Some(seg) => loaded.push(seg),
            None => return Err(rusqlite::Error::InvalidQuery.into()),
        }
    }
    Ok(Some(loaded))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
