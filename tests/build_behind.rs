//! The index built behind a command's answer: a command that finds more
//! than `ARBOR_BUILD_BEHIND_BYTES` the index lacks (a query: when the index
//! holds under half the files) answers from the files and starts `arbor
//! index --behind`; while any process builds, the others read what the
//! index lacks and write nothing; `arbor index` waits.

use crate::common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{arbor, conformance_corpus};
use arbor_index::behind::BuildLock;

fn list(root: &Path, cache: &Path, behind: Option<&str>, extra: &[&str]) -> (String, String) {
    list_scoped(root, cache, behind, &["--all"], extra)
}

/// `arbor list --json` in `scope` (`--all`, `--cwd DIR`), with `extra`
/// arguments and the build-behind threshold `behind`: its output and
/// its messages.
fn list_scoped(
    root: &Path,
    cache: &Path,
    behind: Option<&str>,
    scope: &[&str],
    extra: &[&str],
) -> (String, String) {
    let mut c = arbor();
    c.env("ARBOR_CACHE_DIR", cache)
        .arg("--store")
        .arg(root)
        .args(["list", "--json"])
        .args(scope)
        .args(extra);
    if let Some(bytes) = behind {
        c.env("ARBOR_BUILD_BEHIND_BYTES", bytes);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn sessions_indexed(root: &Path, cache: &Path) -> (u64, serde_json::Value) {
    let out = common::run_ok(
        arbor()
            .env("ARBOR_CACHE_DIR", cache)
            .arg("--store")
            .arg(root)
            .args(["index", "--stats", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    (v["sessions"].as_u64().unwrap(), v["building"].clone())
}

/// The stderr lines that are not about the build behind.
fn without_behind(err: &str) -> String {
    err.lines()
        .filter(|l| !l.contains("from their files"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The process named in "(process N" of `err`.
fn process_named(err: &str) -> u32 {
    let at = err.find("(process ").expect("a process named") + "(process ".len();
    let digits: String = err[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap()
}

/// A first run's answer, `first`: `plain`'s (the files'), read from the
/// files with the build started behind it, whose end is waited for.
fn read_from_files_with_build_behind(plain: (&str, &str), first: &(String, String)) {
    assert_eq!(plain.0, first.0, "the first run's answer is the files'");
    assert_eq!(plain.1, without_behind(&first.1));
    assert!(
        first
            .1
            .contains("were read from their files; indexing them in the background"),
        "{}",
        first.1
    );
    wait_gone(process_named(&first.1));
}

/// Waits for `pid` (not a child of this process) to end.
fn wait_gone(pid: u32) {
    let t = Instant::now();
    loop {
        if common::process_ended(pid) {
            return;
        }
        assert!(t.elapsed() < Duration::from_secs(120), "{pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_first_run_answers_from_the_files_and_indexes_behind_it() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let cache = dir.path().join("cache");
    let (plain, plain_err) = list(&root, &cache, None, &["--no-index"]);
    assert!(plain.lines().count() > 10, "{plain}");
    let first = list(&root, &cache, Some("0"), &[]);
    read_from_files_with_build_behind((&plain, &plain_err), &first);
    let (indexed, building) = sessions_indexed(&root, &cache);
    assert!(indexed >= plain.lines().count() as u64, "{indexed}");
    assert!(building.is_null());
    // Nothing lacking now: the index answers, and says nothing more.
    let (warm, warm_err) = list(&root, &cache, Some("0"), &[]);
    assert_eq!(plain, warm);
    assert_eq!(plain_err, warm_err);

    // A first query reads the files too (each once, rows and bodies
    // together), and the index is built behind it; the next query is
    // answered from the index.
    let cache = dir.path().join("cache-query");
    let query = ["--query", "the"];
    let (plain, plain_err) = list(&root, &cache, None, &[&["--no-index"][..], &query].concat());
    assert!(plain.lines().count() > 10, "{plain}");
    let first = list(&root, &cache, Some("0"), &query);
    read_from_files_with_build_behind((&plain, &plain_err), &first);
    assert!(sessions_indexed(&root, &cache).0 > 10);
    let (warm, warm_err) = list(&root, &cache, Some("0"), &query);
    assert_eq!((&plain, &plain_err), (&warm, &warm_err));

    // Under the threshold a first query builds the index, then answers.
    let cache = dir.path().join("cache-query-here");
    let (first, first_err) = list(&root, &cache, None, &query);
    assert_eq!((&plain, &plain_err), (&first, &first_err));
    assert!(sessions_indexed(&root, &cache).0 > 10);

    // Under the threshold the first run builds the index itself.
    let cache = dir.path().join("cache-here");
    let (_, err) = list(&root, &cache, None, &[]);
    assert!(!err.contains("from their files"), "{err}");
    assert!(sessions_indexed(&root, &cache).0 > 10);
}

#[test]
fn while_a_build_runs_others_read_the_files_and_index_waits() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    let db = cache.join(arbor_index::FILE_NAME);
    let lock = BuildLock::try_take(&db).unwrap().expect("no builder yet");
    let me = std::process::id();

    let (plain, plain_err) = list(&root, &cache, None, &["--no-index"]);
    // Whatever the threshold, a listing reads beside a build.
    let (beside, err) = list(&root, &cache, None, &[]);
    assert_eq!(plain, beside);
    assert_eq!(plain_err, without_behind(&err));
    assert!(
        err.contains(&format!("the index is being built (process {me})")),
        "{err}"
    );
    let (indexed, building) = sessions_indexed(&root, &cache);
    assert_eq!(indexed, 0, "nothing written beside the build");
    assert_eq!(building, serde_json::json!(me));

    // A build behind finds the lock held: it leaves at once.
    let t = Instant::now();
    common::run_ok(
        arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .args(["index", "--behind"]),
    );
    assert!(t.elapsed() < Duration::from_secs(20));
    assert_eq!(sessions_indexed(&root, &cache).0, 0);

    // A query over more than the threshold, with the index not half built,
    // reads the files rather than wait.
    let (query_plain, query_plain_err) =
        list(&root, &cache, None, &["--no-index", "--query", "the"]);
    let (beside, err) = list(&root, &cache, Some("0"), &["--query", "the"]);
    assert_eq!(beside, query_plain);
    assert_eq!(query_plain_err, without_behind(&err));
    assert!(
        err.contains(&format!("the index is being built (process {me})")),
        "{err}"
    );
    assert_eq!(sessions_indexed(&root, &cache).0, 0);

    // A query under the threshold does not wait for the build: what the
    // index lacks is read from the files.
    let (beside, err) = list(&root, &cache, None, &["--query", "the"]);
    assert_eq!(
        (&beside, &without_behind(&err)),
        (&query_plain, &query_plain_err)
    );
    assert_eq!(sessions_indexed(&root, &cache).0, 0);

    // `arbor index` waits for the build, then brings the index up to date.
    let waiting = |args: &[&str]| {
        arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut index = waiting(&["index"]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(index.try_wait().unwrap().is_none(), "it waits");
    drop(lock);
    let waited = format!("waiting for the index build in process {me}");
    let out = index.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&waited), "{err}");
    assert!(sessions_indexed(&root, &cache).0 > 10);
    let (warm, warm_err) = list(&root, &cache, None, &["--query", "the"]);
    assert_eq!((&warm, &warm_err), (&query_plain, &query_plain_err));
    let (warm, warm_err) = list(&root, &cache, None, &[]);
    assert_eq!((plain, plain_err), (warm, warm_err));
}

/// A first query in a project the index lacks reads that project's files
/// and builds behind, though the index holds another project's sessions:
/// what it holds in the listed folders counts, not what it holds in all.
#[test]
fn a_query_in_a_project_the_index_lacks_reads_its_files() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let cache = dir.path().join("cache");
    let (big, small) = ("/home/dev/src/atomic", "/home/dev/my-app");
    let (rows, _) = list_scoped(&root, &cache, None, &["--cwd", big], &[]);
    let indexed = sessions_indexed(&root, &cache).0;
    assert!(
        indexed >= rows.lines().count() as u64 && indexed > 10,
        "{indexed}"
    );
    let query = ["--query", "header"];
    let (plain, plain_err) = list_scoped(
        &root,
        &cache,
        None,
        &["--cwd", small],
        &[&["--no-index"][..], &query].concat(),
    );
    assert!(!plain.is_empty());
    let first = list_scoped(&root, &cache, Some("0"), &["--cwd", small], &query);
    read_from_files_with_build_behind((&plain, &plain_err), &first);
    assert!(sessions_indexed(&root, &cache).0 > indexed);
    let (warm, warm_err) = list_scoped(&root, &cache, Some("0"), &["--cwd", small], &query);
    assert_eq!((&plain, &plain_err), (&warm, &warm_err));
}

/// `arbor list --json` with `args`, given at most two minutes: a command
/// that waited for the paused build below would never end.
fn list_in_time(root: &Path, cache: &Path, args: &[&str]) -> (String, String) {
    let child = arbor()
        .env("ARBOR_CACHE_DIR", cache)
        .arg("--store")
        .arg(root)
        .args(["list", "--json", "--all"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, out) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    let Ok(out) = out.recv_timeout(Duration::from_secs(120)) else {
        let _ = std::process::Command::new("kill")
            .arg(pid.to_string())
            .status();
        panic!("`list {args:?}` waited for the build in progress");
    };
    let out = out.unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    (String::from_utf8(out.stdout).unwrap(), err)
}

/// Queries run while a real build is in progress (the builder a first run
/// started, held by its test hook after writing most files) answer from
/// what it has written and the files it has not, at once, and give the
/// same answers as `--no-index`; so do they once it has finished.
#[test]
fn queries_during_a_build_in_progress_answer_as_without_the_index() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let cache = dir.path().join("cache");
    let paused = dir.path().join("build-paused");
    let queries: [&[&str]; 6] = [
        &[],
        &["--query", "the"],
        &["--query", "\"the file\""],
        &["--query", "header re:err\\w+"],
        &["--query", "in:tools \"src/\" file"],
        &["--query", "in:thinking the"],
    ];
    let plain: Vec<(String, String)> = queries
        .iter()
        .map(|q| list_in_time(&root, &cache, &[&["--no-index"][..], q].concat()))
        .collect();
    let total = plain[0].0.lines().count();
    assert!(total > 10, "{}", plain[0].0);
    for (q, (out, _)) in queries.iter().zip(&plain).skip(1) {
        assert!(!out.is_empty(), "{q:?} finds sessions");
    }

    // A first run starts the build behind it; its hook holds it after
    // two thirds of the files, committed.
    let mut first = arbor();
    first
        .env("ARBOR_CACHE_DIR", &cache)
        .env("ARBOR_BUILD_BEHIND_BYTES", "0")
        .env("ARBOR_TEST_PAUSE_BUILD_AFTER", (total * 2 / 3).to_string())
        .env("ARBOR_TEST_BUILD_PAUSED", &paused)
        .arg("--store")
        .arg(&root)
        .args(["list", "--all", "--json"]);
    let first_err = String::from_utf8(first.output().unwrap().stderr).unwrap();
    let builder = process_named(&first_err);
    let t = Instant::now();
    while !paused.exists() {
        assert!(!common::process_ended(builder), "the build ended unpaused");
        assert!(t.elapsed() < Duration::from_secs(120), "never paused");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (indexed, building) = sessions_indexed(&root, &cache);
    assert!(
        indexed > total as u64 / 2 && indexed < total as u64,
        "{indexed} of {total}"
    );
    assert_eq!(building, serde_json::json!(builder));

    for (q, (out, err)) in queries.iter().zip(&plain) {
        let (during, during_err) = list_in_time(&root, &cache, q);
        assert_eq!(&during, out, "{q:?} during the build");
        assert_eq!(err, &without_behind(&during_err), "{q:?}");
        assert!(
            during_err.contains(&format!("the index is being built (process {builder})")),
            "{q:?}: {during_err}"
        );
    }
    assert_eq!(
        sessions_indexed(&root, &cache).0,
        indexed,
        "nothing written"
    );

    std::fs::remove_file(&paused).unwrap();
    wait_gone(builder);
    assert!(sessions_indexed(&root, &cache).0 >= total as u64);
    for (q, (out, err)) in queries.iter().zip(&plain) {
        assert_eq!(
            &list_in_time(&root, &cache, q),
            &(out.clone(), err.clone()),
            "{q:?} warm"
        );
    }
}
