//! A damaged index is never served: bits flipped in the database file, a
//! stored row's bytes rewritten, a column's type changed under arbor. Each
//! answer equals the one read from the files (`--no-index`).

use std::path::{Path, PathBuf};

use crate::common::{arbor, gen_corpus};

/// A small realistic store and an index built for it.
fn store_and_index(dir: &Path) -> (PathBuf, PathBuf) {
    let root = dir.join("store");
    gen_corpus(
        &root,
        &[
            "--profile",
            "realistic",
            "--sessions",
            "24",
            "--seed",
            "11",
            "--max-mb",
            "1",
        ],
    );
    let cache = dir.join("cache");
    let (_, _, ok) = run(&root, &cache, &["index"]);
    assert!(ok);
    (root, cache)
}

/// stdout, stderr and success of `arbor --store ROOT ARGS…` on `cache`.
fn run(root: &Path, cache: &Path, args: &[&str]) -> (String, String, bool) {
    let out = arbor()
        .env("ARBOR_CACHE_DIR", cache)
        .arg("--store")
        .arg(root)
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.success(),
    )
}

/// Queries whose answers come from every kind of stored data: the rows'
/// fields, the stored text, the words of the other parts.
const QUERIES: [&str; 4] = ["test", "\"the\"", "re:\\d{3}", "in:tools error"];

/// The answers a test compares: the listing and each query's search.
fn answers(root: &Path, cache: &Path, extra: &[&str]) -> Vec<String> {
    let mut out = vec![
        run(
            root,
            cache,
            &[&["list", "--all", "--json"][..], extra].concat(),
        )
        .0,
    ];
    for q in QUERIES {
        let args = [
            &["search", q, "--json", "--all", "--limit", "1000"][..],
            extra,
        ]
        .concat();
        out.push(run(root, cache, &args).0);
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// A small seeded generator (xorshift), so a failure can be replayed.
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_bit_flips_in_the_database_are_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let (root, built) = store_and_index(dir.path());
    let want = answers(&root, &built, &["--no-index"]);
    assert_eq!(answers(&root, &built, &[]), want, "the intact index");
    for seed in 1..=6u64 {
        let cache = dir.path().join(format!("cache-{seed}"));
        copy_dir(&built, &cache);
        let db = cache.join("index.sqlite");
        let mut bytes = std::fs::read(&db).unwrap();
        let mut bits = Bits(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut flipped = Vec::new();
        for _ in 0..10 {
            let at = (bits.next() % bytes.len() as u64) as usize;
            let bit = bits.next() % 8;
            bytes[at] ^= 1 << bit;
            flipped.push((at, bit));
        }
        std::fs::write(&db, &bytes).unwrap();
        assert_eq!(
            answers(&root, &cache, &[]),
            want,
            "seed {seed}: bits flipped at {flipped:?}"
        );
        // And after `arbor index` has mended what it found.
        let (_, err, ok) = run(&root, &cache, &["index"]);
        assert!(ok, "seed {seed}: {err}");
        assert_eq!(answers(&root, &cache, &[]), want, "seed {seed}, mended");
    }
}

#[test]
fn rewritten_row_bytes_are_not_served_and_index_mends_them() {
    let dir = tempfile::tempdir().unwrap();
    let (root, cache) = store_and_index(dir.path());
    let want = answers(&root, &cache, &["--no-index"]);
    let db = cache.join("index.sqlite");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        let rows: Vec<(i64, String, Vec<u8>)> = conn
            .prepare(
                "SELECT id, CASE WHEN row IS NULL THEN 'state' ELSE 'row' END,
                        coalesce(row, state) FROM files WHERE coalesce(row, state) IS NOT NULL",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(rows.len() >= 20);
        // A byte of each row's blob, at places spread over the blob.
        for (n, (id, col, mut blob)) in rows.into_iter().enumerate() {
            let at = blob.len() * (n % 7 + 1) / 8;
            blob[at] ^= 0x04;
            conn.execute(
                &format!("UPDATE files SET {col} = ?1 WHERE id = ?2"),
                rusqlite::params![blob, id],
            )
            .unwrap();
        }
        // And a number and a partial line's text.
        conn.execute(
            "UPDATE files SET mtime_ns = mtime_ns + 1000000000 WHERE id = (SELECT min(id) FROM files)",
            [],
        )
        .unwrap();
    }
    assert_eq!(answers(&root, &cache, &[]), want);
    let (_, err, ok) = run(&root, &cache, &["index"]);
    assert!(ok, "{err}");
    assert_eq!(answers(&root, &cache, &[]), want);
}

#[test]
fn a_changed_column_type_means_a_rebuild_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let (root, cache) = store_and_index(dir.path());
    let want = answers(&root, &cache, &["--no-index"]);
    let db = cache.join("index.sqlite");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "ALTER TABLE files RENAME COLUMN size TO old_size;
             ALTER TABLE files ADD COLUMN size TEXT;
             UPDATE files SET size = 'x' || old_size;",
        )
        .unwrap();
    }
    let (_, err, ok) = run(&root, &cache, &["index"]);
    assert!(ok, "{err}");
    assert!(!err.contains("Invalid type: Invalid"), "{err}");
    // Rebuilt: every run after it is served by the index, silently.
    for _ in 0..2 {
        let (out, err, ok) = run(&root, &cache, &["list", "--all", "--json"]);
        assert!(ok && err.is_empty(), "{err}");
        assert_eq!(out, want[0]);
    }
    assert_eq!(answers(&root, &cache, &[]), want);
}

#[test]
fn rewritten_postings_are_not_served_and_index_rebuilds() {
    let dir = tempfile::tempdir().unwrap();
    let (root, cache) = store_and_index(dir.path());
    let want = answers(&root, &cache, &["--no-index"]);
    {
        let conn = rusqlite::Connection::open(cache.join("index.sqlite")).unwrap();
        let segs: Vec<(i64, Vec<u8>)> = conn
            .prepare("SELECT id, postings FROM segments WHERE length(postings) > 0")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(!segs.is_empty());
        // Ids in every segment's lists turned into others.
        for (id, mut postings) in segs {
            for b in postings.iter_mut().step_by(7) {
                *b ^= 0x01;
            }
            conn.execute(
                "UPDATE segments SET postings = ?1 WHERE id = ?2",
                rusqlite::params![postings, id],
            )
            .unwrap();
        }
    }
    assert_eq!(answers(&root, &cache, &[]), want);
    let (_, err, ok) = run(&root, &cache, &["index"]);
    assert!(ok, "{err}");
    assert_eq!(answers(&root, &cache, &[]), want);
}
