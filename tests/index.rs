//! The persistent index: invalidation, incremental reads, crash safety,
//! recovery, and equality with reading the files directly.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{arbor, conformance_corpus, gen_corpus, run_ok};
use arbor_index::{Index, RefreshStats};
use arbor_search::{rank, rank_with_index, Query};
use arbor_session::SessionInfo;
use arbor_store::listing::read_rows;
use arbor_store::Agent;
use arbor_store::{list_session_files, Scope, SessionFile, StoreConfig, StoreKind};

const SID: &str = "0199aaaa-0000-7000-8000-00000000000";

fn header(n: u32) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{SID}{n}","timestamp":"2026-01-0{n}T10:00:00.000Z","cwd":"/home/u/proj"}}"#
    )
}

fn message(id: &str, parent: Option<&str>, role: &str, text: &str, ms: u64) -> String {
    let parent = parent.map_or("null".to_string(), |p| format!("\"{p}\""));
    let text = serde_json::to_string(text).unwrap();
    format!(
        r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T10:00:00.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":{text}}}],"timestamp":{ms}}}}}"#
    )
}

fn name_line(id: &str, parent: &str, name: &str) -> String {
    format!(
        r#"{{"type":"session_info","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T11:00:00.000Z","name":"{name}"}}"#
    )
}

struct Store {
    _dir: tempfile::TempDir,
    root: PathBuf,
    cache: PathBuf,
}

impl Store {
    fn new() -> Store {
        Store::in_dir(tempfile::tempdir().unwrap())
    }

    fn in_dir(dir: tempfile::TempDir) -> Store {
        let root = dir.path().join("sessions");
        std::fs::create_dir_all(root.join("--home-u-proj--")).unwrap();
        let cache = dir.path().join("cache");
        Store {
            _dir: dir,
            root,
            cache,
        }
    }

    fn path(&self, n: u32) -> PathBuf {
        self.root
            .join("--home-u-proj--")
            .join(format!("2026-01-0{n}T10-00-00-000Z_{SID}{n}.jsonl"))
    }

    fn write(&self, n: u32, lines: &[String]) -> PathBuf {
        let p = self.path(n);
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&p, text).unwrap();
        p
    }

    fn append(&self, p: &Path, text: &str) -> u64 {
        let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        f.write_all(text.as_bytes()).unwrap();
        text.len() as u64
    }

    fn files(&self) -> Vec<SessionFile> {
        let config = StoreConfig::single(&self.root, StoreKind::PerProject);
        list_session_files(&config, &Scope::All).0
    }

    fn index(&self) -> Index {
        Index::open(&self.cache.join("index.sqlite")).unwrap()
    }
}

/// The index's text files, by generation (oldest first).
fn text_files(cache: &Path) -> Vec<(u64, PathBuf)> {
    numbered_files(cache, "index.sqlite-text.")
}

/// The files in `cache` named `prefix` and a number, by number.
fn numbered_files(cache: &Path, prefix: &str) -> Vec<(u64, PathBuf)> {
    let mut v: Vec<(u64, PathBuf)> = std::fs::read_dir(cache)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            let n = name.strip_prefix(prefix)?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    v.sort();
    v
}

/// The current generation's text file (the only one once readers are done).
fn text_file(cache: &Path) -> PathBuf {
    let files = text_files(cache);
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].1.clone()
}

fn by_path(mut rows: Vec<SessionInfo>) -> Vec<SessionInfo> {
    rows.sort_by(|a, b| a.path.cmp(&b.path));
    rows
}

/// Rows as a listing gets them: a row read from the index leaves its
/// labels and usage out unless asked for (`Index::set_extras`).
fn listed(mut rows: Vec<SessionInfo>) -> Vec<SessionInfo> {
    for r in &mut rows {
        r.labels.clear();
        r.usage = Default::default();
    }
    by_path(rows)
}

/// A file of an Atomic store, as the watcher hands it on.
fn atomic(p: &Path) -> SessionFile {
    SessionFile {
        path: p.to_path_buf(),
        agent: Agent::Atomic,
    }
}

/// Refreshes and checks that every row equals a direct read of its file,
/// and that searches answer as searching the files would.
fn refresh_checked(index: &mut Index, files: &[SessionFile]) -> RefreshStats {
    let mut rows = Vec::new();
    let stats = index.refresh(files, &mut |b| rows.extend(b)).unwrap();
    assert!(stats.write_error.is_none(), "{:?}", stats.write_error);
    let (full, _) = read_rows(files);
    let mut expect = full.clone();
    for e in &mut expect {
        e.all_text.clear();
    }
    assert_eq!(listed(rows.clone()), listed(expect.clone()));
    // Asked for, the stored labels and usage are a direct read's too
    // (after appends continued from a stored state as well).
    index.set_extras(true);
    let mut again = Vec::new();
    index.refresh(files, &mut |b| again.extend(b)).unwrap();
    index.set_extras(false);
    assert_eq!(by_path(again), by_path(expect));
    for q in [
        "hello",
        "world",
        "\"brown fox\"",
        "\"fox jumps over\"",
        "re:ju?mps",
        "zebra",
        "\"x\"",
        "o",
    ] {
        let query = Query::parse(q);
        let hits = index.search(&query).unwrap();
        // A long-lived searcher reads the text through a map: same answer.
        let mapped = Index::open(index.path()).unwrap();
        mapped.warm_search().unwrap();
        let mapped_hits = mapped.search(&query).unwrap();
        let bits = |h: &Option<arbor_search::BodyHits>| {
            let mut v: Vec<(PathBuf, Option<u32>)> = rows
                .iter()
                .map(|r| {
                    (
                        r.path.to_path_buf(),
                        h.as_ref().and_then(|h| h.get(&r.path)),
                    )
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(bits(&mapped_hits), bits(&hits), "query {q}");
        let ours: Vec<PathBuf> = rank_with_index(&query, by_path(rows.clone()), hits.as_ref())
            .into_iter()
            .map(|r| r.path.into())
            .collect();
        let theirs: Vec<PathBuf> = rank(&query, by_path(full.clone()))
            .into_iter()
            .map(|r| r.path.into())
            .collect();
        assert_eq!(ours, theirs, "query {q}");
    }
    stats
}

fn first_lines(n: u32) -> Vec<String> {
    vec![
        header(n),
        message(
            "a1",
            None,
            "user",
            "hello there, the quick brown",
            1767261600000,
        ),
        message(
            "a2",
            Some("a1"),
            "assistant",
            "fox jumps\nover the lazy dog",
            1767261601000,
        ),
    ]
}

#[test]
fn grown_file_is_read_from_its_offset_only() {
    let s = Store::new();
    let p = s.write(1, &first_lines(1));
    s.write(2, &first_lines(2));
    let mut index = s.index();
    let files = s.files();
    let st = refresh_checked(&mut index, &files);
    assert_eq!((st.reparsed, st.cached, st.appended), (2, 0, 0));
    let st = refresh_checked(&mut index, &files);
    assert_eq!((st.reparsed, st.cached, st.bytes_parsed), (0, 2, 0));

    let added = s.append(
        &p,
        &format!(
            "{}\n",
            message("a3", Some("a2"), "user", "a whole new world", 1767261602000)
        ),
    );
    let st = refresh_checked(&mut index, &files);
    assert_eq!((st.appended, st.reparsed, st.cached), (1, 0, 1));
    assert_eq!(st.bytes_parsed, added, "only the appended bytes are parsed");

    // A phrase spanning the old text and the appended text is found.
    let q = Query::parse("\"lazy dog a whole\"");
    let hits = index.search(&q).unwrap().unwrap();
    assert_eq!(hits.get(&p), Some(1));
    // Two words (answered by the word pairs, which do not span chunks) and
    // a regex whose literal spans them: the joined text is read for such files.
    for q in ["\"dog a\"", "re:dog\\s+a", "\"og a wh\""] {
        let hits = index.search(&Query::parse(q)).unwrap().unwrap();
        assert_eq!(hits.get(&p), Some(1), "{q}");
    }
    let hits = index.search(&Query::parse("\"dog whole\"")).unwrap();
    assert!(hits.is_none_or(|h| h.get(&p).is_none()));

    // A rename appended by a live agent, through the watcher's path.
    s.append(&p, &format!("{}\n", name_line("a4", "a3", "Named")));
    let row = index.update_file(&atomic(&p)).unwrap().unwrap();
    assert_eq!(row.display_name(), Some("Named"));
    assert_eq!(row.message_count, 3);
    let st = refresh_checked(&mut index, &files);
    assert_eq!((st.cached, st.bytes_parsed), (2, 0));
}

#[test]
fn partial_last_line_is_read_again_when_completed() {
    let s = Store::new();
    let p = s.write(1, &first_lines(1));
    let mut index = s.index();
    let files = s.files();
    refresh_checked(&mut index, &files);
    let line = message(
        "a3",
        Some("a2"),
        "user",
        "unfinished business",
        1767261602000,
    );
    let (head, tail) = line.split_at(40);
    // A writer mid-append: the row says so, and nothing is lost.
    s.append(&p, head);
    let st = refresh_checked(&mut index, &files);
    assert_eq!(st.appended, 1);
    let row = index.update_file(&atomic(&p)).unwrap().unwrap();
    assert!(row.diagnostics.partial_tail);
    s.append(&p, &format!("{tail}\n"));
    let st = refresh_checked(&mut index, &files);
    assert_eq!(st.appended, 1);
    assert_eq!(st.bytes_parsed, line.len() as u64 + 1);
    // A last line without a newline that parses counts (and is searchable).
    s.append(
        &p,
        &message("a4", Some("a3"), "user", "no newline yet", 1767261603000),
    );
    refresh_checked(&mut index, &files);
    let q = Query::parse("\"newline yet\"");
    assert!(index.search(&q).unwrap().unwrap().contains_key(&p));
    s.append(&p, "\n");
    let st = refresh_checked(&mut index, &files);
    assert_eq!(st.appended, 1);
}

#[test]
fn truncated_replaced_deleted_and_renamed_files() {
    let s = Store::new();
    let p1 = s.write(1, &first_lines(1));
    let p2 = s.write(2, &first_lines(2));
    let mut extra = first_lines(3);
    extra.push(message(
        "a3",
        Some("a2"),
        "user",
        "zebra crossing",
        1767261609000,
    ));
    let p3 = s.write(3, &extra);
    let mut index = s.index();
    refresh_checked(&mut index, &s.files());

    // Truncated: a prefix of what was indexed.
    let text = std::fs::read_to_string(&p3).unwrap();
    let cut: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&p3, cut.join("\n") + "\n").unwrap();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!((st.reparsed, st.appended), (1, 0));
    let q = Query::parse("zebra");
    assert!(!index.search(&q).unwrap().unwrap().contains_key(&p3));

    // Replaced by another file of the same size (a new inode).
    let old = std::fs::read_to_string(&p2).unwrap();
    let new = old.replace("quick brown", "quick zebra");
    assert_eq!(old.len(), new.len());
    let tmp = p2.with_extension("tmp");
    std::fs::write(&tmp, &new).unwrap();
    std::fs::rename(&tmp, &p2).unwrap();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!(st.reparsed, 1);
    assert!(index.search(&q).unwrap().unwrap().contains_key(&p2));

    // Rewritten in place with the same size (same inode, new mtime).
    std::thread::sleep(Duration::from_millis(20));
    std::fs::write(&p2, &old).unwrap();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!(st.reparsed, 1);
    assert!(!index.search(&q).unwrap().unwrap().contains_key(&p2));

    // Rewritten in place and grown: the fingerprints catch it.
    let grown = new.clone() + &message("a9", Some("a2"), "user", "more", 1767261609000) + "\n";
    std::fs::write(&p2, &grown).unwrap();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!((st.reparsed, st.appended), (1, 0));
    assert!(index.search(&q).unwrap().unwrap().contains_key(&p2));

    // Deleted.
    std::fs::remove_file(&p1).unwrap();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!(st.removed, 1);
    assert!(index.update_file(&atomic(&p1)).unwrap().is_none());

    // Renamed: the old row goes, the new path is read.
    let renamed = s.path(7);
    std::fs::rename(&p2, &renamed).unwrap();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!((st.removed, st.reparsed), (1, 1));
    let hits = index.search(&q).unwrap().unwrap();
    assert!(hits.contains_key(&renamed) && !hits.contains_key(&p2));
    assert_eq!(index.stats().unwrap().sessions, 2);
}

/// A refresh of one project's listing reads and updates only the stored
/// rows of its folder: a file deleted there is dropped, the other folders'
/// changes (a deleted file, a whole folder gone, an append) wait for a
/// refresh of the whole store, which then finds all of them.
#[test]
fn a_project_refresh_looks_only_at_its_folder() {
    let s = Store::new();
    let ours: Vec<PathBuf> = (1..=3).map(|n| s.write(n, &first_lines(n))).collect();
    let other = |folder: &str, n: u32| {
        let dir = s.root.join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("2026-01-0{n}T10-00-00-000Z_{SID}{n}.jsonl"));
        std::fs::write(&p, first_lines(n).join("\n") + "\n").unwrap();
        p
    };
    // Folders whose names sort right beside ours.
    let beside: Vec<PathBuf> = (4..=5).map(|n| other("--home-u-proj-b--", n)).collect();
    let gone_folder = other("--home-u-proj--x", 6);
    let mut index = s.index();
    refresh_checked(&mut index, &s.files());

    std::fs::remove_file(&ours[0]).unwrap();
    std::fs::remove_file(&beside[0]).unwrap();
    s.append(
        &beside[1],
        &(message("b9", Some("a2"), "user", "zebra", 1767261609000) + "\n"),
    );
    std::fs::remove_dir_all(gone_folder.parent().unwrap()).unwrap();

    let config = StoreConfig::single(&s.root, StoreKind::PerProject);
    let (project, _) = list_session_files(&config, &Scope::Project("/home/u/proj".into()));
    assert_eq!(project.len(), 2);
    index.set_folders_only(true);
    let mut rows = Vec::new();
    let st = index.refresh(&project, &mut |b| rows.extend(b)).unwrap();
    assert_eq!(
        (st.cached, st.removed, st.reparsed, st.appended),
        (2, 1, 0, 0)
    );
    let mut expect = read_rows(&project).0;
    expect.iter_mut().for_each(|r| r.all_text.clear());
    assert_eq!(listed(rows), listed(expect));

    index.set_folders_only(false);
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!((st.cached, st.removed, st.appended), (2, 2, 1));
    assert_eq!(index.stats().unwrap().sessions, 3);
}

#[test]
fn dead_text_is_compacted_away() {
    let s = Store::new();
    for n in 1..=6 {
        let mut lines = first_lines(n);
        lines.push(message(
            "a3",
            Some("a2"),
            "user",
            &format!("unique{n} {}", "filler ".repeat(200)),
            1767261605000,
        ));
        s.write(n, &lines);
    }
    let mut index = s.index();
    refresh_checked(&mut index, &s.files());
    let text = text_file(&s.cache);
    let before = std::fs::metadata(&text).unwrap().len();
    for n in 1..=4 {
        std::fs::remove_file(s.path(n)).unwrap();
    }
    refresh_checked(&mut index, &s.files());
    assert!(index.compact(0).unwrap());
    // The next generation, and only it.
    let compacted = text_file(&s.cache);
    assert_ne!(compacted, text);
    let after = std::fs::metadata(&compacted).unwrap().len();
    assert!(after * 2 < before, "{after} vs {before}");
    refresh_checked(&mut index, &s.files());
    for n in [5, 6] {
        let hits = index
            .search(&Query::parse(&format!("unique{n}")))
            .unwrap()
            .unwrap();
        assert_eq!(hits.len(), 1);
        let q = Query::parse(&format!("\"unique{n} filler\""));
        assert_eq!(index.search(&q).unwrap().unwrap().len(), 1);
    }
    assert!(!index.compact(0).unwrap(), "nothing left to compact");
}

#[test]
fn not_a_session_is_remembered_and_rechecked_when_it_changes() {
    let s = Store::new();
    let p = s.path(5);
    std::fs::write(&p, "").unwrap();
    let mut index = s.index();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!(st.problems.len(), 1);
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!((st.problems.len(), st.cached, st.reparsed), (1, 0, 0));
    // The header arrives: now it is a session.
    s.append(&p, &format!("{}\n", header(5)));
    let st = refresh_checked(&mut index, &s.files());
    assert!(st.problems.is_empty());
    assert_eq!(st.reparsed, 1);
}

fn list(root: &Path, cache: &Path, extra: &[&str]) -> (String, String) {
    list_scoped(root, cache, &["--all"], extra)
}

/// `arbor list --json` of `scope` (`--all`, or `--cwd DIR`).
fn list_scoped(root: &Path, cache: &Path, scope: &[&str], extra: &[&str]) -> (String, String) {
    let out = arbor()
        .env("ARBOR_CACHE_DIR", cache)
        .arg("--store")
        .arg(root)
        .args(["list", "--json"])
        .args(scope)
        .args(extra)
        .output()
        .unwrap();
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

#[test]
fn list_is_identical_with_and_without_the_index_on_the_conformance_corpus() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let cache = dir.path().join("cache");
    for extra in [&[][..], &["--include-internal"][..]] {
        let (plain, plain_err) = list(&root, &cache, &[&["--no-index"][..], extra].concat());
        let (cold, cold_err) = list(&root, &cache, extra);
        let (warm, warm_err) = list(&root, &cache, extra);
        // An empty query lists the decoded rows, filtered and sorted by
        // the store's own functions.
        let (decoded, _) = list(&root, &cache, &[extra, &["--query", ""][..]].concat());
        assert_eq!(plain, decoded, "the decoded rows");
        assert!(plain.lines().count() > 80);
        assert_eq!(plain, cold, "first run with the index");
        assert_eq!(plain, warm, "second run with the index");
        assert_eq!(plain_err, cold_err);
        assert_eq!(plain_err, warm_err);
    }
    // One project's rows (read in place from the index, filtered by their
    // stored folder), as JSON and as text, against the decoded rows an
    // empty query lists (filtered and sorted by the store's own functions).
    let (all, _) = list(&root, &cache, &[]);
    // The folder with the most sessions.
    let mut by_cwd: std::collections::BTreeMap<String, usize> = Default::default();
    for l in all.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        *by_cwd
            .entry(v["cwd"].as_str().unwrap().to_owned())
            .or_default() += 1;
    }
    let (cwd, _) = by_cwd.into_iter().max_by_key(|(_, n)| *n).expect("a row");
    for json in [true, false] {
        let run = |decoded: bool| {
            let mut c = arbor();
            c.env("ARBOR_CACHE_DIR", &cache)
                .arg("--store")
                .arg(&root)
                .args(["list", "--cwd", &cwd]);
            if json {
                c.arg("--json");
            }
            if decoded {
                c.args(["--query", ""]);
            }
            let out = c.output().unwrap();
            assert!(out.status.success());
            (
                String::from_utf8(out.stdout).unwrap(),
                String::from_utf8(out.stderr).unwrap(),
            )
        };
        let (plain, plain_err) = run(true);
        let (indexed, indexed_err) = run(false);
        assert!(!plain.is_empty() && plain.lines().count() < all.lines().count());
        assert_eq!(plain, indexed, "{cwd}, json {json}");
        assert_eq!(plain_err, indexed_err);
    }
    for q in [
        "session",
        "fix test",
        "\"the quick\"",
        "re:err\\w+",
        "re:ERR\\w+",
        "re:[^a-z ]{3}",
        "re:T[A-Z]st\\s+\\S",
        "re:([",
        "dir:proj session",
        "is:named",
        "is:fork after:2000-01-01",
        "before:1d fix",
        "label:check",
        "label:修复",
        "label:\"very last\" session",
        "colour:red",
        "ab",
        "\"ok\"",
        "\"é\"",
        "日本",
        "x y z",
    ] {
        let plain = arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .args(["list", "--all", "--json", "--no-index", "--query", q])
            .output()
            .unwrap();
        let indexed = arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .args(["list", "--all", "--json", "--query", q])
            .output()
            .unwrap();
        assert_eq!(plain.status.success(), indexed.status.success(), "{q}");
        assert_eq!(
            String::from_utf8_lossy(&plain.stdout),
            String::from_utf8_lossy(&indexed.stdout),
            "query {q}"
        );
    }
}

#[test]
fn queries_agree_with_and_without_the_index_on_a_realistic_store() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &[
            "--profile",
            "realistic",
            "--sessions",
            "30",
            "--seed",
            "5",
            "--max-mb",
            "1",
        ],
    );
    let cache = dir.path().join("cache");
    let (plain, _) = list(&root, &cache, &["--no-index"]);
    let (indexed, _) = list(&root, &cache, &[]);
    assert_eq!(plain, indexed);
    // Words and phrases taken from the sessions themselves.
    let rows: Vec<serde_json::Value> = plain
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut queries = vec![
        "re:\\d{3}".to_string(),
        "test".to_string(),
        "\"the\"".to_string(),
        // Parts beyond the text, read from the files' skimmed lines.
        "in:tools test".to_string(),
        "re:\\d{3}\\s in:tools".to_string(),
        "\"the\" in:thinking,other".to_string(),
        "in:user,tools \"the\"".to_string(),
    ];
    for r in rows.iter().take(6) {
        let first = r["firstMessage"].as_str().unwrap_or("");
        let words: Vec<&str> = first.split_whitespace().collect();
        if words.len() >= 3 {
            queries.push(format!("\"{} {}\"", words[1], words[2]));
            queries.push(words[2].to_string());
        }
    }
    for q in &queries {
        let (a, _) = list(&root, &cache, &["--no-index", "--query", q]);
        let (b, _) = list(&root, &cache, &["--query", q]);
        assert_eq!(a, b, "query {q}");
    }
}

fn stats_json(root: &Path, cache: &Path) -> serde_json::Value {
    let out = run_ok(
        arbor()
            .env("ARBOR_CACHE_DIR", cache)
            .arg("--store")
            .arg(root)
            .args(["index", "--stats", "--json"]),
    );
    serde_json::from_str(&out).unwrap()
}

#[test]
fn killed_during_a_rebuild_then_correct() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &[
            "--profile",
            "stress",
            "--sessions",
            "300",
            "--seed",
            "2",
            "--median-kb",
            "60",
            "--max-mb",
            "2",
            "--jobs",
            "2",
        ],
    );
    let cache = dir.path().join("cache");
    let (expected, _) = list(&root, &cache, &["--no-index", "--include-internal"]);
    for delay_ms in [150u64, 600, 1500] {
        let mut child = arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .args(["index", "--rebuild"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t = Instant::now();
        while t.elapsed() < Duration::from_millis(delay_ms) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        // SIGKILL: no chance to clean up.
        let _ = child.kill();
        let _ = child.wait();
        let (got, err) = list(&root, &cache, &["--include-internal"]);
        assert_eq!(got, expected, "after a kill at {delay_ms} ms");
        assert!(err.is_empty(), "{err}");
    }
    let s = stats_json(&root, &cache);
    assert_eq!(s["sessions"], 300);
    // Searches (which read the stored text) agree too.
    for q in ["\"two words\"", "error", "re:fail\\w+", "\"the session\""] {
        let (a, _) = list(
            &root,
            &cache,
            &["--no-index", "--include-internal", "--query", q],
        );
        let (b, _) = list(&root, &cache, &["--include-internal", "--query", q]);
        assert_eq!(a, b, "query {q}");
    }
}

#[test]
fn a_lost_or_cut_text_file_means_a_rebuild() {
    let s = Store::new();
    s.write(1, &first_lines(1));
    s.write(2, &first_lines(2));
    let (expected, _) = list(
        &s.root,
        &s.cache,
        &["--no-index", "--query", "\"brown fox\""],
    );
    let (first, _) = list(&s.root, &s.cache, &["--query", "\"brown fox\""]);
    assert_eq!(first, expected);
    assert_eq!(expected.lines().count(), 2);
    let text = text_file(&s.cache);
    let len = std::fs::metadata(&text).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&text)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let (got, err) = list(&s.root, &s.cache, &["--query", "\"brown fox\""]);
    assert_eq!(got, expected, "{err}");
    std::fs::remove_file(text_file(&s.cache)).unwrap();
    let (got, _) = list(&s.root, &s.cache, &["--query", "\"brown fox\""]);
    assert_eq!(got, expected);
    assert_eq!(stats_json(&s.root, &s.cache)["sessions"], 2);
}

#[test]
fn a_corrupt_index_is_rebuilt_transparently() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let cache = dir.path().join("cache");
    let (expected, expected_err) = list(&root, &cache, &["--no-index"]);
    let (first, _) = list(&root, &cache, &[]);
    assert_eq!(first, expected);
    let db = cache.join("index.sqlite");
    for garbage in [
        b"this is not a database at all, just some garbage bytes".repeat(200),
        {
            // A real header with garbage after it.
            let mut b = std::fs::read(&db).unwrap();
            for x in b.iter_mut().skip(100) {
                *x = x.wrapping_mul(31).wrapping_add(7);
            }
            b
        },
    ] {
        let _ = std::fs::remove_file(cache.join("index.sqlite-wal"));
        let _ = std::fs::remove_file(cache.join("index.sqlite-shm"));
        std::fs::write(&db, garbage).unwrap();
        let (got, err) = list(&root, &cache, &[]);
        assert_eq!(got, expected);
        assert_eq!(err, expected_err);
        let (again, _) = list(&root, &cache, &[]);
        assert_eq!(again, expected);
    }
    assert!(stats_json(&root, &cache)["sessions"].as_u64().unwrap() > 80);
}

#[test]
fn an_index_from_another_version_is_rebuilt() {
    let s = Store::new();
    s.write(1, &first_lines(1));
    let (expected, _) = list(&s.root, &s.cache, &["--no-index"]);
    list(&s.root, &s.cache, &[]);
    let db = s.cache.join("index.sqlite");
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute(
            "UPDATE meta SET value='arbor-index-0/0.0.1' WHERE key='format'",
            [],
        )
        .unwrap();
        // And a row the old version would have got wrong.
        conn.execute("UPDATE files SET state=x'00'", []).unwrap();
    }
    let (got, _) = list(&s.root, &s.cache, &[]);
    assert_eq!(got, expected);
    assert_eq!(stats_json(&s.root, &s.cache)["format"], arbor_index::FORMAT);
}

#[test]
fn index_command_reports_and_rebuilds() {
    let s = Store::new();
    s.write(1, &first_lines(1));
    s.write(2, &first_lines(2));
    let out = run_ok(
        arbor()
            .env("ARBOR_CACHE_DIR", &s.cache)
            .arg("--store")
            .arg(&s.root)
            .arg("index"),
    );
    assert!(out.contains("sessions:  2"), "{out}");
    let out = run_ok(
        arbor()
            .env("ARBOR_CACHE_DIR", &s.cache)
            .arg("--store")
            .arg(&s.root)
            .args(["index", "--rebuild", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["update"]["reparsed"], 2);
    assert_eq!(v["sessions"], 2);
    assert!(v["sizeBytes"].as_u64().unwrap() > 0);
    assert!(v["lastUpdate"].is_string());
    // A bad flag combination is an error on stderr only.
    let out = arbor()
        .env("ARBOR_CACHE_DIR", &s.cache)
        .args(["index", "--rebuild", "--stats"])
        .output()
        .unwrap();
    assert!(!out.status.success() && out.stdout.is_empty());
}

/// The size `arbor index` prints after a build is what the index keeps on
/// disk once it is closed: not its write-ahead log as well (which closing
/// folds into the database file).
#[test]
fn the_size_reported_after_a_build_is_what_stays_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &["--profile", "realistic", "--sessions", "150", "--seed", "4"],
    );
    let cache = dir.path().join("cache");
    let out = run_ok(
        arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .args(["index", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let reported = v["sizeBytes"].as_u64().unwrap();
    let on_disk: u64 = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    // The shared-memory file (32 KiB) goes when the index is closed.
    assert!(
        reported <= on_disk + (64 << 10),
        "reported {reported} bytes, {on_disk} on disk"
    );
    assert!(
        reported >= on_disk,
        "reported {reported}, {on_disk} on disk"
    );
}

#[test]
fn rows_from_the_pi_store_are_marked() {
    let s = Store::new();
    let p = s.write(1, &first_lines(1));
    let mut index = s.index();
    let files = vec![SessionFile {
        path: p.clone(),
        agent: Agent::Pi,
    }];
    for _ in 0..2 {
        let mut rows = Vec::new();
        index.refresh(&files, &mut |b| rows.extend(b)).unwrap();
        assert_eq!(rows[0].agent, Agent::Pi);
    }
    // The watcher's path, after the file changed (a rename by a live agent):
    // the row is read again and stays a pi row.
    s.append(&p, &format!("{}\n", name_line("a9", "a2", "Renamed")));
    let row = index.update_file(&files[0]).unwrap().unwrap();
    assert_eq!(
        (row.agent, row.display_name()),
        (Agent::Pi, Some("Renamed"))
    );
    let row = index.update_file(&files[0]).unwrap().unwrap();
    assert_eq!(row.agent, Agent::Pi, "unchanged: from the stored row");
    let mut rows = Vec::new();
    index.refresh(&files, &mut |b| rows.extend(b)).unwrap();
    assert_eq!(rows[0].agent, Agent::Pi);
    let roots = [arbor_store::StoreRoot {
        path: p.parent().unwrap().parent().unwrap().to_path_buf(),
        kind: StoreKind::PerProject,
        agent: Agent::Pi,
        host: None,
    }];
    let rows = index.stored_rows(&roots, None).unwrap();
    assert_eq!(rows[0].agent, Agent::Pi);
}

#[test]
fn a_relative_store_path_works_with_the_index() {
    let s = Store::new();
    s.write(1, &first_lines(1));
    s.write(2, &first_lines(2));
    let base = s.root.parent().unwrap();
    let run = |args: &[&str]| {
        run_ok(
            arbor()
                .current_dir(base)
                .env("ARBOR_CACHE_DIR", &s.cache)
                .args(["--store", "sessions", "list", "--all", "--json"])
                .args(args),
        )
    };
    for q in [
        &[][..],
        &["--query", "\"brown fox\""][..],
        &["--query", "re:jump"][..],
    ] {
        let plain = run(&[&["--no-index"][..], q].concat());
        assert_eq!(run(q), plain, "{q:?}");
        assert_eq!(run(q), plain, "{q:?}");
        // The contract: `path` is absolute even when `--store` is not.
        let want = format!("\"path\":\"{}/", s.root.display());
        assert!(plain.contains(&want), "{plain}");
        assert!(!plain.contains("\"path\":\"sessions/"), "{plain}");
    }
    // The same files under their absolute paths share the rows.
    let mut index = s.index();
    let st = refresh_checked(&mut index, &s.files());
    assert_eq!(st.cached, 2);
}

/// The picker's start: stored rows without looking at the files, then a
/// refresh that brings only the changes.
#[test]
fn stored_rows_then_only_the_changes() {
    let s = Store::new();
    let kept = s.write(1, &first_lines(1));
    let grown = s.write(2, &first_lines(2));
    let gone = s.write(3, &first_lines(3));
    let mut index = s.index();
    refresh_checked(&mut index, &s.files());
    let config = StoreConfig::single(&s.root, StoreKind::PerProject);

    // Stored rows equal the rows read from the files, with the listing's paths.
    let stored = by_path(index.stored_rows(&config.roots, None).unwrap());
    let (direct, _) = read_rows(&s.files());
    let mut direct = listed(direct);
    for r in &mut direct {
        r.all_text.clear();
    }
    assert_eq!(stored, direct);
    // A root spelled with a trailing separator finds the same rows.
    let mut slash = s.root.clone().into_os_string();
    slash.push("/");
    let slash_config = StoreConfig::single(Path::new(&slash), StoreKind::PerProject);
    let mut listed: Vec<PathBuf> = list_session_files(&slash_config, &Scope::All)
        .0
        .into_iter()
        .map(|f| f.path)
        .collect();
    listed.sort();
    let from_index: Vec<PathBuf> = by_path(index.stored_rows(&slash_config.roots, None).unwrap())
        .into_iter()
        .map(|r| r.path.into())
        .collect();
    assert_eq!(from_index.len(), 3);
    assert_eq!(from_index, listed);
    // The first screen: the most recently written file first.
    let now = std::time::SystemTime::now();
    let set_mtime = |p: &Path, secs: u64| {
        let f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
        f.set_modified(now - Duration::from_secs(secs)).unwrap();
    };
    set_mtime(&kept, 30);
    set_mtime(&gone, 20);
    set_mtime(&grown, 10);
    refresh_checked(&mut index, &s.files());
    let newest = index.stored_rows(&config.roots, Some(1)).unwrap();
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].path, grown);

    // Changes on disk: one grows, one goes, one is new.
    s.append(
        &grown,
        &format!("{}\n", message("g1", Some("m4"), "user", "more", 9)),
    );
    std::fs::remove_file(&gone).unwrap();
    let new = s.write(4, &first_lines(4));
    let mut got = Vec::new();
    let stats = index
        .refresh_changes(&s.files(), &mut |rows| got.extend(rows))
        .unwrap();
    let mut changed: Vec<PathBuf> = got.iter().map(|r| r.path.to_path_buf()).collect();
    changed.sort();
    assert_eq!(changed, vec![grown.clone(), new.clone()]);
    assert_eq!(stats.cached, 1, "the unchanged file is counted, not sent");
    let (direct, _) = read_rows(&s.files());
    for r in &got {
        let d = direct.iter().find(|d| d.path == r.path).unwrap();
        assert_eq!(r.message_count, d.message_count);
    }
    // And the stored rows now match the disk (the deleted one is gone).
    let stored: Vec<PathBuf> = by_path(index.stored_rows(&config.roots, None).unwrap())
        .into_iter()
        .map(|r| r.path.into())
        .collect();
    assert_eq!(stored, vec![kept, grown, new]);
}

/// Stored rows have the paths a listing finds, for a root configured as a
/// relative path too (made absolute: `--json` paths are absolute).
#[test]
fn stored_rows_use_the_roots_own_paths() {
    // Under the working directory, so that the root has a plain relative
    // spelling (the directory itself is not changed: tests run in threads).
    let here = std::env::current_dir().unwrap();
    let s = Store::in_dir(tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap());
    s.write(1, &first_lines(1));
    let mut index = s.index();
    refresh_checked(&mut index, &s.files());
    let rel = s.root.strip_prefix(&here).unwrap().to_path_buf();
    let config = StoreConfig::single(&rel, StoreKind::PerProject);
    let stored = index.stored_rows(&config.roots, None);
    let listed = list_session_files(&config, &Scope::All).0;
    let stored: Vec<PathBuf> = stored.unwrap().into_iter().map(|r| r.path.into()).collect();
    let listed: Vec<PathBuf> = listed.into_iter().map(|f| f.path).collect();
    assert_eq!(stored, listed);
    assert_eq!(stored[0].parent().unwrap().parent().unwrap(), s.root);
}

/// A search for a query the user has already typed past gives up while it
/// reads stored text, and leaves nothing half-done behind.
#[test]
fn a_stale_search_gives_up_and_leaves_no_trace() {
    let s = Store::new();
    let p = s.write(1, &first_lines(1));
    let mut index = s.index();
    refresh_checked(&mut index, &s.files());
    // Not asked before: not remembered. (`re:qu?ick` alone is answered by
    // the dictionaries; the assertion makes its candidates be read.)
    let regex = Query::parse("re:qu?ick\\b");
    assert!(matches!(
        index.search_cancellable(&regex, &|| true),
        Err(arbor_index::Error::Cancelled)
    ));
    // Words are answered from the dictionary alone: nothing to give up.
    let word = Query::parse("quick");
    assert!(index
        .search_cancellable(&word, &|| true)
        .unwrap()
        .unwrap()
        .contains_key(&p));
    // The cancelled term was not remembered as "no match".
    assert!(index.search(&regex).unwrap().unwrap().contains_key(&p));
}

/// Sessions whose text searches read (phrases, regexes), `kb` KiB each.
fn text_heavy_store(sessions: u32, kb: usize) -> Store {
    let s = Store::new();
    for n in 1..=sessions {
        let mut lines = first_lines(n % 9 + 1);
        lines[0] = lines[0].replace(&format!("{SID}{}", n % 9 + 1), &format!("{SID}{n}"));
        let filler: String = (0..kb * 1024 / 16)
            .map(|i| format!("w{} filler ", (i * 7 + n as usize) % 1000))
            .collect();
        lines.push(message(
            "a3",
            Some("a2"),
            "user",
            &format!("unique{n} marker{} {filler}", n % 3),
            1767261605000,
        ));
        let p = s
            .root
            .join("--home-u-proj--")
            .join(format!("2026-01-01T10-00-{n:02}-000Z_{SID}{n}.jsonl"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    }
    s
}

/// Queries answered by reading stored text.
const TEXT_QUERIES: [&str; 6] = [
    "\"brown fox\"",
    "\"unique3 marker0\"",
    "re:unique(2|5|7)\\b",
    "\"x\"",
    "re:marker1 w",
    "\"lazy dog\" unique1",
];

/// Others, not asked before (a searcher remembers answers).
const MORE_TEXT_QUERIES: [&str; 4] = [
    "\"quick brown\"",
    "re:unique[13]\\b",
    "\"marker2 w\"",
    "\"jumps over\"",
];

/// What reading the files answers for `queries` (paths in rank order).
fn text_queries(files: &[SessionFile]) -> Vec<(Query, Vec<PathBuf>)> {
    expected(files, &TEXT_QUERIES)
}

fn expected(files: &[SessionFile], queries: &[&str]) -> Vec<(Query, Vec<PathBuf>)> {
    let (full, _) = read_rows(files);
    queries
        .iter()
        .map(|q| {
            let query = Query::parse(q);
            let expect: Vec<PathBuf> = rank(&query, by_path(full.clone()))
                .into_iter()
                .map(|r| r.path.into())
                .collect();
            (query, expect)
        })
        .collect()
}

fn answer(index: &Index, query: &Query, rows: &[SessionInfo]) -> Vec<PathBuf> {
    let hits = index
        .search(query)
        .unwrap_or_else(|e| panic!("{}: {e}", query.raw));
    rank_with_index(query, by_path(rows.to_vec()), hits.as_ref())
        .into_iter()
        .map(|r| r.path.into())
        .collect()
}

/// Rewrites a session with the same bytes and mtime under a new inode: the
/// index reads it again, and its old text becomes dead (compactable), while
/// every answer stays the same.
fn new_inode(p: &Path) {
    let bytes = std::fs::read(p).unwrap();
    let mtime = std::fs::metadata(p).unwrap().modified().unwrap();
    let tmp = p.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&tmp)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    std::fs::rename(&tmp, p).unwrap();
}

/// Readers search while another connection compacts the text file again
/// and again: a long-lived searcher (text mapped) and one-shot ones (a new
/// `Index` per search, text read span by span). Every answer equals what
/// reading the files gives, and each compaction leaves only its own
/// generation's file behind.
#[test]
fn compaction_racing_readers_answer_as_the_files_do() {
    let s = text_heavy_store(10, 24);
    let files = s.files();
    let queries = text_queries(&files);
    let mut writer = s.index();
    let mut rows = Vec::new();
    writer.refresh(&files, &mut |b| rows.extend(b)).unwrap();
    let db = s.cache.join("index.sqlite");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let searches = std::thread::scope(|scope| {
        let readers: Vec<_> = [true, false]
            .into_iter()
            .map(|long_lived| {
                let (db, rows, queries, stop) = (&db, &rows, &queries, &stop);
                scope.spawn(move || {
                    let long = Index::open(db).unwrap();
                    long.warm_search().unwrap();
                    let mut n = 0;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        for (q, expect) in queries {
                            let one_shot;
                            let index = if long_lived {
                                &long
                            } else {
                                one_shot = Index::open(db).unwrap();
                                &one_shot
                            };
                            assert_eq!(&answer(index, q, rows), expect, "{} ({n})", q.raw);
                            n += 1;
                        }
                    }
                    n
                })
            })
            .collect();
        for round in 0..40 {
            for f in &files {
                new_inode(&f.path);
            }
            let st = writer.refresh(&files, &mut |_| {}).unwrap();
            assert_eq!(st.reparsed, files.len());
            assert!(st.write_error.is_none(), "{:?}", st.write_error);
            assert!(writer.compact(0).unwrap(), "round {round}");
            let left = text_files(&s.cache);
            assert_eq!(left.len(), 1, "round {round}: {left:?}");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        readers
            .into_iter()
            .map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    assert!(searches.iter().all(|&n| n > 0), "{searches:?}");
}

/// A reader keeps answering from the generation it opened until it sees
/// the newer one committed; the older file is gone as soon as that is
/// committed, and leftovers of crashes go at the next refresh.
#[test]
fn old_text_generations_are_removed_and_their_readers_move_on() {
    let s = text_heavy_store(6, 4);
    let files = s.files();
    let queries = text_queries(&files);
    let mut writer = s.index();
    let mut rows = Vec::new();
    writer.refresh(&files, &mut |b| rows.extend(b)).unwrap();
    let reader = s.index();
    reader.warm_search().unwrap();
    let one_shot = s.index();
    for (q, expect) in &queries {
        assert_eq!(&answer(&reader, q, &rows), expect);
        assert_eq!(&answer(&one_shot, q, &rows), expect);
    }
    let (first, _) = text_files(&s.cache)[0].clone();
    for f in &files {
        new_inode(&f.path);
    }
    writer.refresh(&files, &mut |_| {}).unwrap();
    assert!(writer.compact(0).unwrap());
    let now = text_files(&s.cache);
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].0, first + 1);
    for (q, expect) in &queries {
        assert_eq!(&answer(&reader, q, &rows), expect);
        assert_eq!(&answer(&one_shot, q, &rows), expect);
    }
    // A crash after a compaction's commit leaves the older file; one during
    // a compaction leaves a newer, unused one (here with garbage).
    let older = s.cache.join(format!("index.sqlite-text.{}", first));
    let newer = s.cache.join(format!("index.sqlite-text.{}", first + 2));
    std::fs::write(&older, b"old").unwrap();
    std::fs::write(&newer, vec![b'#'; 1 << 16]).unwrap();
    writer.refresh(&files, &mut |_| {}).unwrap();
    assert!(!older.exists());
    for (q, expect) in &queries {
        assert_eq!(&answer(&reader, q, &rows), expect);
    }
    // The next compaction writes over the unused one.
    for f in &files {
        new_inode(&f.path);
    }
    writer.refresh(&files, &mut |_| {}).unwrap();
    assert!(writer.compact(0).unwrap());
    assert_eq!(text_files(&s.cache), vec![(first + 2, newer)]);
    for (q, expect) in &queries {
        assert_eq!(&answer(&reader, q, &rows), expect);
        assert_eq!(&answer(&one_shot, q, &rows), expect);
    }
}

/// Someone else cuts the text file short while a long-lived searcher (the
/// picker's) has it mapped: no SIGBUS; the searcher answers from the
/// session files, and the next refresh reads everything again into the
/// same database, which the searcher then uses.
#[test]
fn a_text_file_cut_short_under_a_long_lived_searcher() {
    let s = text_heavy_store(8, 16);
    let files = s.files();
    let queries = text_queries(&files);
    let mut writer = s.index();
    let mut rows = Vec::new();
    writer.refresh(&files, &mut |b| rows.extend(b)).unwrap();
    let reader = s.index();
    reader.warm_search().unwrap();
    for (q, expect) in &queries {
        assert_eq!(&answer(&reader, q, &rows), expect);
    }
    let text = text_file(&s.cache);
    let len = std::fs::metadata(&text).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&text)
        .unwrap()
        .set_len(len / 3)
        .unwrap();
    for (q, expect) in &expected(&files, &MORE_TEXT_QUERIES) {
        assert_eq!(&answer(&reader, q, &rows), expect, "after the cut");
    }
    let st = writer.refresh(&files, &mut |_| {}).unwrap();
    assert_eq!(st.reparsed, files.len(), "everything read again");
    assert_ne!(text_file(&s.cache), text);
    // The searcher is back on the index: a session deleted now is still
    // found in its stored text (reading the files could not find it).
    let gone = s
        .root
        .join("--home-u-proj--")
        .join(format!("2026-01-01T10-00-01-000Z_{SID}1.jsonl"));
    let unique = Query::parse("\"unique1 marker1\"");
    std::fs::remove_file(&gone).unwrap();
    let hits = reader.search(&unique).unwrap().unwrap();
    assert!(hits.contains_key(&gone), "{hits:?}");
}

/// The cut can also come while a search reads the map: whenever it lands,
/// the search finishes with the files' answer.
#[test]
fn a_text_file_cut_short_while_a_search_reads_it() {
    let s = text_heavy_store(12, 256);
    let files = s.files();
    let queries = text_queries(&files);
    let (regex, expect) = &queries[2];
    let mut writer = s.index();
    let mut rows = Vec::new();
    writer.refresh(&files, &mut |b| rows.extend(b)).unwrap();
    let text = text_file(&s.cache);
    let bytes = std::fs::read(&text).unwrap();
    let cut_to = bytes.len() as u64 / 4;
    for round in 0..24u64 {
        // The text back as it was (in place: the index is unchanged).
        std::fs::write(&text, &bytes).unwrap();
        let reader = s.index();
        reader.warm_search().unwrap();
        let cut = std::thread::spawn({
            let text = text.clone();
            move || {
                std::thread::sleep(Duration::from_micros(round * round * 40));
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(&text)
                    .unwrap()
                    .set_len(cut_to)
                    .unwrap();
            }
        });
        assert_eq!(&answer(&reader, regex, &rows), expect, "round {round}");
        cut.join().unwrap();
    }
}

/// A store of `n` sessions with about 2 KB of message text each; every
/// third one mentions a needle.
fn needle_store(n: u32) -> Store {
    let filler = "the quick brown fox jumps over the lazy dog while the compiler \
                  reports nothing unusual about the build of this module ";
    store_of_bodies(n, |i| {
        let mut body = filler.repeat(14);
        if i % 3 == 0 {
            body.push_str(&format!(" found a needle in a haystack, needles{i}"));
        }
        body
    })
}

/// A store of `n` sessions, each a user message and a reply (`body(i)`).
fn store_of_bodies(n: u32, body: impl Fn(u32) -> String) -> Store {
    store_of_bodies_and_output(n, body, |_| None)
}

/// As [`store_of_bodies`], with a tool output after the reply where
/// `output(i)` gives one.
fn store_of_bodies_and_output(
    n: u32,
    body: impl Fn(u32) -> String,
    output: impl Fn(u32) -> Option<String>,
) -> Store {
    let s = Store::new();
    for i in 0..n {
        let id = format!("0199bbbb-0000-7000-8000-{i:012}");
        let mut lines = vec![
            format!(
                r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/home/u/proj"}}"#
            ),
            message("a1", None, "user", &format!("task {i}"), 1767261600000),
            message("a2", Some("a1"), "assistant", &body(i), 1767261601000),
        ];
        if let Some(out) = output(i) {
            lines.push(message("a3", Some("a2"), "toolResult", &out, 1767261602000));
        }
        let p = s
            .root
            .join("--home-u-proj--")
            .join(format!("2026-01-01T10-00-00-000Z_{id}.jsonl"));
        std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    }
    s
}

/// `arbor list` with every file it writes limited to `bytes`
/// (`RLIMIT_FSIZE`: a write past it fails with EFBIG, as a full disk fails
/// with ENOSPC), so the index can only be written in part.
#[cfg(unix)]
fn list_on_a_full_disk(s: &Store, bytes: u64, extra: &[&str]) -> std::process::Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = arbor();
    cmd.env("ARBOR_CACHE_DIR", &s.cache)
        .arg("--store")
        .arg(&s.root)
        .args(["list", "--all", "--json"])
        .args(extra);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes as libc::rlim_t,
                rlim_max: bytes as libc::rlim_t,
            };
            // An ignored SIGXFSZ makes the write fail instead of killing.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    // Pipes, not files: the limit must not cut arbor's own output.
    cmd.output().unwrap()
}

/// Issue #11.2: with a cache disk that fills up while the index is written,
/// `arbor list --query` printed only the sessions the index had taken
/// before the disk was full (58 of 347 rows; a regex 0 of 177), with a note
/// on stderr. A search never presents an incomplete answer as complete: the
/// rows are complete, and the bodies are searched in the files themselves.
#[cfg(unix)]
#[test]
fn a_full_cache_disk_gives_the_answer_of_the_files() {
    let s = needle_store(300);
    let queries = [
        "needle",
        "\"in a haystack\"",
        "re:needles\\d+",
        "haystack compiler",
    ];
    for round in 0..2 {
        for q in queries {
            let out = list_on_a_full_disk(&s, 256 << 10, &["--query", q]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{q}: {err}");
            assert!(
                err.contains("index"),
                "the cache writes must have failed (round {round}, {q}): {err}"
            );
            let (plain, _) = list(&s.root, &s.cache, &["--no-index", "--query", q]);
            let got = String::from_utf8_lossy(&out.stdout);
            assert!(plain.lines().count() >= 100, "{q}");
            assert_eq!(
                got.lines().count(),
                plain.lines().count(),
                "{q} (round {round}): rows; stderr {err}"
            );
            assert!(got == plain, "{q} (round {round}): the same rows");
        }
    }
    let out = list_on_a_full_disk(&s, 256 << 10, &[]);
    let (plain, _) = list(&s.root, &s.cache, &["--no-index"]);
    assert!(
        String::from_utf8_lossy(&out.stdout) == plain,
        "list without a query"
    );
}

/// Issue #11.2, the picker: the search worker's body search
/// (`search_bodies`) says when the index could not answer for every row
/// without its own text — a failed search, an index that could not be
/// written — instead of "no body hits"; sessions the index does not hold
/// yet (a first run's build under way) are read from their files (#15).
#[test]
fn the_picker_search_says_when_it_is_incomplete() {
    use arbor::app::searcher::search_bodies;

    // Rows as the picker has them from the index: no text of their own.
    let (s, files, full, docs) = needle_picker(6);
    let query = Query::parse("needle");
    let never = || false;
    let want: Vec<&std::path::Path> = full
        .iter()
        .filter(|r| r.all_text.contains("needle"))
        .map(|r| r.path.as_path())
        .collect();
    assert_eq!(want.len(), 2);
    let complete = |b: arbor::app::searcher::BodySearch| {
        assert_eq!(b.incomplete, None);
        let hits = b.hits.unwrap();
        assert_eq!(hits.len(), 2);
        assert!(want.iter().all(|p| hits.contains_key(p)));
    };

    // None of them in the index, then half of them: the files of the
    // others answer for them.
    let mut index = s.index();
    complete(search_bodies(Some(&index), &query, &docs, None, &never).unwrap());
    index.refresh(&files[..3], &mut |_| {}).unwrap();
    complete(search_bodies(Some(&index), &query, &docs, None, &never).unwrap());
    // The files' own answer, and none once a newer query is typed.
    let tiers = arbor::app::bodies::tiers_from_files(&files, &query, &never).unwrap();
    let found: Vec<&std::path::Path> = files
        .iter()
        .zip(&tiers)
        .filter(|(_, t)| t.is_some_and(|t| t[0] != 0))
        .map(|(f, _)| f.path.as_path())
        .collect();
    assert_eq!(found.len(), 2);
    assert!(want.iter().all(|p| found.contains(p)));
    assert!(arbor::app::bodies::tiers_from_files(&files, &query, &|| true).is_none());

    // All of them: complete, with the right hits.
    index.refresh(&files, &mut |_| {}).unwrap();
    complete(search_bodies(Some(&index), &query, &docs, None, &never).unwrap());

    // The loader could not write the index: whatever it holds may be old.
    let b = search_bodies(Some(&index), &query, &docs, Some("disk full"), &never).unwrap();
    assert!(b.incomplete.unwrap().contains("disk full"));

    // A query that does not look at bodies is complete without the index.
    let b = search_bodies(Some(&index), &Query::parse("ta"), &docs, None, &never).unwrap();
    assert_eq!(b.incomplete, None);

    // The search itself fails: a dictionary file gone.
    let index = s.index();
    for (_, p) in numbered_files(&s.cache, "index.sqlite-terms.") {
        std::fs::remove_file(p).unwrap();
    }
    let b = search_bodies(Some(&index), &query, &docs, None, &never).unwrap();
    let why = b.incomplete.expect("a failed search is no answer");
    assert!(why.contains("could not be searched"), "{why}");

    // The index damaged under an open handle (a table dropped): the files
    // answer for every row, whole.
    let mut index = s.index();
    index.refresh(&files, &mut |_| {}).unwrap();
    let conn = rusqlite::Connection::open(index.path()).unwrap();
    conn.execute("DROP TABLE segments", []).unwrap();
    drop(conn);
    complete(search_bodies(Some(&index), &query, &docs, None, &never).unwrap());
}

/// A store of `n` sessions, its files, their rows and the picker's docs of
/// them ([`picker_docs`]).
fn needle_picker(
    n: u32,
) -> (
    Store,
    Vec<SessionFile>,
    Vec<SessionInfo>,
    std::sync::Arc<arbor_search::Docs>,
) {
    let s = needle_store(n);
    let files = s.files();
    let (full, _) = read_rows(&files);
    let docs = picker_docs(&full);
    (s, files, full, docs)
}

/// The rows as the picker scores them when they come from the index
/// (without their own text: their bodies are the index's answer).
fn picker_docs(rows: &[SessionInfo]) -> std::sync::Arc<arbor_search::Docs> {
    use arbor_search::{Docs, SearchDoc};
    use std::sync::Arc;
    Arc::new(Docs(
        rows.iter()
            .map(|r| {
                let mut r = r.clone();
                r.all_text.clear();
                (r.path.clone(), Arc::new(SearchDoc::from_info(&r)))
            })
            .collect(),
    ))
}

/// Issue #15: the picker's long-lived searcher remembers which sessions
/// of a snapshot the index lacks (asked once, not per key, and found
/// while it idles after the snapshot's first search, ahead of the first
/// key that asks the index) and reads their files: while many are
/// missing, the index's own answer comes first, said to be incomplete;
/// another process indexing the rest changes that at once, and every
/// answer is complete and a fresh searcher's.
#[test]
fn the_searchers_memory_of_unindexed_sessions_follows_the_index() {
    use arbor::app::searcher::{Searcher, Stage};

    let (s, files, _, docs) = needle_picker(40);
    let never = || false;
    s.index().refresh(&files[..10], &mut |_| {}).unwrap();
    let mut searcher = Searcher::new(Some(s.index()));
    searcher.warm(None);
    let fresh = |q: &Query| {
        Searcher::new(Some(s.index()))
            .search(q, &docs, None, &never)
            .unwrap()
    };
    let matched = |a: &arbor::app::searcher::Answer| a.scores.iter().flatten().count();
    // A key that asks no bodies; the sessions missing are found while idle.
    let first = searcher
        .search(&Query::parse("n"), &docs, None, &never)
        .unwrap();
    assert_eq!(first.incomplete, None);
    while searcher.idle() {}
    for (round, typed) in ["nee", "need", "needl", "needle"].iter().enumerate() {
        if round == 2 {
            // Another connection (the loader) indexes the rest.
            s.index().refresh(&files, &mut |_| {}).unwrap();
        }
        let q = Query::parse(typed);
        let mut early = Vec::new();
        let got = searcher
            .search_first(&q, &docs, None, &never, None, &mut |a| early.push(a))
            .unwrap();
        assert_eq!(got, fresh(&q), "{typed}");
        assert_eq!(
            (got.stage, &got.incomplete),
            (Stage::Whole, &None),
            "{typed}"
        );
        match round {
            0 | 1 => {
                let [interim] = <[_; 1]>::try_from(early).expect("one interim answer");
                assert_eq!(interim.stage, Stage::Interim { reading: 30 }, "{typed}");
                let why = interim.incomplete.clone().expect("said to be incomplete");
                assert!(why.contains("30 sessions"), "{why}");
                // What the index holds: a part of the whole answer.
                assert!(matched(&interim) < matched(&got), "{typed}");
                for (i, w) in interim.scores.iter().zip(&got.scores) {
                    assert!(i.is_none() || w.is_some(), "{typed}");
                }
            }
            _ => assert!(early.is_empty(), "{typed}"),
        }
        while searcher.idle() {}
    }
    // The needle is in every third session's reply.
    assert_eq!(matched(&fresh(&Query::parse("needle"))), 14);
}

/// Issue #15, the picker during a first run's build: a query typed gets
/// the index's answer at once, said to be incomplete (by the header, not
/// as an error), then the whole answer, the files of the sessions the
/// index lacks read, with its best row selected, unless the selection
/// was moved in between.
#[test]
fn a_first_runs_search_is_completed_from_the_files() {
    use arbor::app::searcher::{Searcher, Stage};
    use arbor::ui::picker::Row;
    use arbor::ui::{App, AppEvent};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    let (s, files, full, _) = needle_picker(40);
    // The last ten: the best of the whole answer (ties list by path) is
    // not among them.
    s.index().refresh(&files[30..], &mut |_| {}).unwrap();
    let key = |c: KeyCode| AppEvent::Key(KeyEvent::new(c, KeyModifiers::NONE));
    // The screen's second line: its notes.
    let header = |app: &App| {
        let backend = ratatui::backend::TestBackend::new(app.width, app.height);
        let mut t = ratatui::Terminal::new(backend).unwrap();
        let theme = arbor::ui::theme::Theme::plain();
        t.draw(|f| arbor::ui::picker::render(f, app, &theme))
            .unwrap();
        let text = common::buffer_text(t.backend().buffer());
        text.lines().nth(1).unwrap_or_default().to_string()
    };
    // Between the two answers: nothing (during a build, or while none is
    // known: the status line then says nothing either, and no first rows
    // are placed from the part of the index there is), a move, a question
    // about the selected row (rename), End.
    for (building, between) in [
        (true, ""),
        (false, ""),
        (false, "down"),
        (false, "rename"),
        (false, "end"),
    ] {
        let mut app = App::new("/home/u/proj".into(), 1_795_953_600_000);
        (app.width, app.height) = (100, 24);
        let rows = full
            .iter()
            .map(|r| {
                let mut r = r.clone();
                r.all_text.clear();
                Row::new(r)
            })
            .collect();
        app.update(AppEvent::Rows(rows));
        app.update(AppEvent::LoadFinished { problems: vec![] });
        if building {
            app.update(AppEvent::Indexing(Some((10, 40))));
        }
        let mut searcher = Searcher::new(Some(s.index()));
        let answers = common::type_query(&mut app, &mut searcher, "needle");
        let [interim, whole] = <[AppEvent; 2]>::try_from(answers).expect("two answers");
        assert!(matches!(
            interim,
            AppEvent::SearchDone {
                stage: Stage::Interim { reading: 30 },
                ..
            }
        ));
        assert!(matches!(
            whole,
            AppEvent::SearchDone {
                stage: Stage::Whole,
                incomplete: None,
                ..
            }
        ));
        app.update(interim);
        assert!(header(&app).contains("Search incomplete: reading 30 files"));
        let p = &app.picker;
        assert!(p.search.incomplete.is_some());
        assert!(
            p.flash.status.is_none(),
            "{:?}",
            p.flash.status.as_ref().map(|s| &s.text)
        );
        let in_interim = p.list.visible.len();
        match between {
            "down" => drop(app.update(key(KeyCode::Down))),
            "end" => drop(app.update(key(KeyCode::End))),
            "rename" => drop(app.update(AppEvent::Key(KeyEvent::new(
                KeyCode::Char('r'),
                KeyModifiers::CONTROL,
            )))),
            _ => {}
        }
        let chosen = app.picker.selection.selected.clone();
        app.update(whole);
        assert!(!header(&app).contains("incomplete"), "{}", header(&app));
        let p = &app.picker;
        assert_eq!(p.search.incomplete, None);
        assert_eq!((in_interim, p.list.visible.len()), (4, 14));
        let path = |v: Option<&arbor::ui::picker::VisibleRow>| {
            v.map(|v| p.list.rows[v.idx].info.path.to_path_buf())
        };
        let (top, last) = (path(p.list.visible.first()), path(p.list.visible.last()));
        assert_ne!(
            chosen, top,
            "{between}: the interim's choice is not the best"
        );
        match between {
            "down" | "rename" => assert_eq!(p.selection.selected, chosen, "{between}"),
            "end" => assert_eq!(p.selection.selected, last, "{between}"),
            _ => assert_eq!(p.selection.selected, top, "{between}"),
        }
    }
}

/// A long-lived searcher looks only at the terms the previous key's word
/// matched when the new word extends it (`sess` → `sessi`), and takes the
/// posting lists of the terms it no longer matches away from its count of
/// each session; typing, erasing and starting another word must answer as
/// a fresh searcher does.
#[test]
fn words_typed_and_erased_answer_as_fresh_searches() {
    use arbor::app::searcher::Searcher;

    let (s, files, _, docs) = needle_picker(30);
    let never = || false;
    s.index().refresh(&files, &mut |_| {}).unwrap();
    let mut searcher = Searcher::new(Some(s.index()));
    searcher.warm(Some(&docs));
    let fresh = |q: &Query| {
        Searcher::new(Some(s.index()))
            .search(q, &docs, None, &never)
            .unwrap()
    };
    let typed = [
        "n",
        "ne",
        "nee",
        "needle",
        "needles1",
        "needles12",
        "needles1",
        "needl",
        "ne",
        "hay",
        "hays",
        "hayst",
        "haysta",
        "haystack",
        "ays",
        "aysta",
        "qu",
        "quick",
        "k",
        "needles3",
        "s",
        "st",
        "\"t\"",
        "\"ta\"",
        "ta",
    ];
    // The fresh answers first: opening another connection between keys
    // would make the searcher load everything again.
    let want: Vec<_> = typed.iter().map(|t| fresh(&Query::parse(t))).collect();
    let mut matched = 0;
    for (i, (t, want)) in typed.iter().zip(want).enumerate() {
        // Between some keys the worker is idle, and learns where the
        // index's paths are among the rows (`Scorer::learn_paths`).
        if i % 2 == 1 {
            while searcher.idle() {}
        }
        let got = searcher
            .search(&Query::parse(t), &docs, None, &never)
            .unwrap();
        assert_eq!(got, want, "{t}");
        matched += usize::from(got.scores.iter().any(Option::is_some));
    }
    assert!(matched > 15, "most of them match something: {matched}");
}

/// The index's searcher names sessions by the rows' own allocations of
/// their paths once it has learnt where they are (one copy of each path
/// at 100,000 sessions, not two), and keeps its own for a path the rows
/// lack.
#[test]
fn the_searcher_shares_the_rows_paths() {
    use arbor_search::Scorer;
    use std::sync::Arc;

    let (s, files, _, docs) = needle_picker(4);
    s.index().refresh(&files, &mut |_| {}).unwrap();
    // One row fewer than the index has.
    let fewer = Arc::new(arbor_search::Docs(docs.0[1..].to_vec()));
    let index = s.index();
    index.warm_search().unwrap();
    let mut scorer = Scorer::new();
    scorer.learn_paths(&fewer, |f| Some(index.share_paths(f).unwrap()));
    let (mut shared, mut own) = (0, 0);
    index
        .share_paths(&mut |p| match fewer
            .0
            .iter()
            .find(|(row, _)| row.as_os_str() == p.as_ref())
        {
            Some((row, _)) => {
                assert!(Arc::ptr_eq(row.as_os_arc(), p), "{p:?}");
                shared += 1;
            }
            None => {
                assert_eq!(p.as_ref(), docs.0[0].0.as_os_str());
                own += 1;
            }
        })
        .unwrap();
    assert_eq!((shared, own), (3, 1));
}

/// Opening the index writes nothing: the picker's loader takes a change
/// of `data_version` between reading its stored rows and its refresh for
/// another process's commit, and sends every row again. Its search worker
/// opens a second connection meanwhile, and that once set `auto_vacuum`,
/// which counts as a commit (10,000 rows sent twice, ~80 ms, on two starts
/// of three).
#[test]
fn opening_the_index_again_changes_nothing_another_connection_sees() {
    let s = needle_store(3);
    s.index().refresh(&s.files(), &mut |_| {}).unwrap();
    let loader = s.index();
    let before = loader.data_version().unwrap();
    let worker = s.index();
    worker.warm_search().unwrap();
    assert_eq!(loader.data_version().unwrap(), before);
    // A commit by the other connection is still seen.
    let mut writer = s.index();
    let files = s.files();
    std::fs::write(&files[0].path, "not a session\n").unwrap();
    writer.refresh(&files, &mut |_| {}).unwrap();
    assert_ne!(loader.data_version().unwrap(), before);
}

/// A letter or two is looked up only in the parts where a session could
/// still rank better: the few sessions without it in their conversation
/// are read for the tool output instead. The answers (and their ranks)
/// are those of a full scan, for sessions that have it in both, in one,
/// or nowhere.
#[test]
fn a_letter_in_nearly_every_session_answers_as_a_full_scan() {
    let s = store_of_bodies_and_output(
        40,
        |i| match i {
            0..30 => format!("a zebra crossed the road {i}"),
            _ => format!("nothing to see {i}"),
        },
        |i| match i {
            0..10 | 30..34 => Some(format!("zig zag output {i}")),
            34..37 => Some(format!("plain output {i}")),
            _ => None,
        },
    );
    s.index().refresh(&s.files(), &mut |_| {}).unwrap();
    let queries = [
        ("\"z\"", 34),
        ("\"zi\"", 14),
        ("\"ze\"", 30),
        ("\"q\"", 0),
        ("re:z", 34),
        ("re:zi\\w+", 14),
        ("re:ou", 17),
        ("in:tools \"z\"", 14),
    ];
    // The sessions' files are the reference: without the index, every
    // part is searched in them.
    for (q, n) in queries {
        let (plain, _) = list(&s.root, &s.cache, &["--no-index", "--query", q]);
        let (indexed, _) = list(&s.root, &s.cache, &["--query", q]);
        assert_eq!(
            plain.lines().count(),
            n,
            "arbor list --no-index --query {q}"
        );
        assert!(plain == indexed, "arbor list --query {q}: {indexed}");
    }
}

/// A word typed on takes the posting lists of the terms it no longer
/// matches away from its count of each session: `quartz` alone is in a
/// few sessions that `quartzite` is not in, and they must leave the answer
/// at `quartzi` (and come back when the word is erased to `quartz`).
#[test]
fn a_typed_word_drops_the_sessions_of_the_terms_it_leaves() {
    use arbor::app::searcher::Searcher;

    // Five sessions have neither, so that no lookup holds every session
    // (one that does stops early, and counts nothing).
    let s = store_of_bodies(40, |i| {
        let word = match i {
            0..30 => "quartzite",
            30..35 => "quartz",
            _ => "granite",
        };
        format!("the sample is {word} and the rest is sand, gravel {i}")
    });
    let files = s.files();
    let (full, _) = read_rows(&files);
    let docs = picker_docs(&full);
    let never = || false;
    s.index().refresh(&files, &mut |_| {}).unwrap();
    let typed = [
        "qua", "quar", "quart", "quartz", "quartzi", "quartzit", "quartz", "rtz", "rtzi",
    ];
    let want: Vec<_> = typed
        .iter()
        .map(|t| {
            Searcher::new(Some(s.index()))
                .search(&Query::parse(t), &docs, None, &never)
                .unwrap()
        })
        .collect();
    let mut searcher = Searcher::new(Some(s.index()));
    searcher.warm(None);
    for (t, want) in typed.iter().zip(want) {
        let got = searcher
            .search(&Query::parse(t), &docs, None, &never)
            .unwrap();
        let n = got.scores.iter().filter(|s| s.is_some()).count();
        let expect = if t.ends_with('i') || t.ends_with("it") {
            30
        } else {
            35
        };
        assert_eq!(n, expect, "{t}");
        assert_eq!(got, want, "{t}");
    }
}

/// Issue #11.7: the index's stored text overwritten in place at the same
/// size (no length check can see it) gave wrong answers to the queries that
/// read it. Each stored span carries a checksum: damage is seen where the
/// text is read, the sessions' own files answer instead, and the next
/// refresh reads the damaged sessions again.
#[test]
fn stored_text_overwritten_in_place_never_gives_a_wrong_answer() {
    let s = needle_store(30);
    let files = s.files();
    let (full, _) = read_rows(&files);
    let mut index = s.index();
    index.refresh(&files, &mut |_| {}).unwrap();
    // Every letter moved one on (`haystack` → `ibztubdl`): same size, still
    // UTF-8, and each query below would now miss or wrongly match.
    let shifted = |c: u8| {
        if c.is_ascii_lowercase() {
            b'a' + (c - b'a' + 1) % 26
        } else {
            c
        }
    };
    for (_, p) in text_files(&s.cache) {
        let mut bytes = std::fs::read(&p).unwrap();
        assert!(!bytes.is_empty());
        bytes.iter_mut().for_each(|b| *b = shifted(*b));
        // In place: the same file, written from its start, not truncated.
        let mut f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
        f.write_all(&bytes).unwrap();
    }
    let queries = [
        "\"in a haystack\"",
        "\"jo b ibztubdl\"",
        "re:needles\\d+",
        "re:offemft\\d+",
        "\"quick brown fox\"",
        "needle",
    ];
    let check = |index: &Index, what: &str| {
        for (query, want) in expected(&files, &queries) {
            let got = answer(index, &query, &full_rows(&full));
            assert_eq!(got, want, "{what}: {}", query.raw);
        }
    };
    // A one-shot searcher (reads span by span) and a long-lived one (map).
    check(&s.index(), "one-shot");
    let mapped = s.index();
    mapped.warm_search().unwrap();
    // The picker's idle work checks the text ahead of the searches: a
    // damaged span must stay unchecked, so that reading it finds it out.
    while mapped.check_text(64) {}
    check(&mapped, "mapped");
    check(&mapped, "mapped, again");
    // The damaged sessions are read again by the next refresh.
    let mut index = s.index();
    let stats = index.refresh(&files, &mut |_| {}).unwrap();
    assert!(stats.reparsed >= 10, "{stats:?}");
    check(&index, "after the refresh");
    // And through the command line.
    for q in queries {
        let (plain, _) = list(&s.root, &s.cache, &["--no-index", "--query", q]);
        let (indexed, _) = list(&s.root, &s.cache, &["--query", q]);
        assert!(plain == indexed, "arbor list --query {q}");
    }
}

/// The index's dictionary files (one per word segment), by segment id.
fn terms_files(cache: &Path) -> Vec<(u64, PathBuf)> {
    numbered_files(cache, "index.sqlite-terms.")
}

/// The word segments' dictionaries live in files of their own beside the
/// index, one per segment and none left over after merges; one lost, or
/// overwritten in place at the same size, is never a wrong answer: the
/// search that finds it damaged fails (it says the index could not be
/// searched), and the next refresh starts the index again.
#[test]
fn a_lost_or_damaged_dictionary_file_means_a_rebuild_never_a_wrong_answer() {
    let s = needle_store(30);
    let files = s.files();
    let (full, _) = read_rows(&files);
    let mut index = s.index();
    index.refresh(&files, &mut |_| {}).unwrap();
    // More segments than merges keep: appends in several refreshes.
    for round in 0..12u32 {
        let body = format!("appended words round{round} needle{round}");
        let path = &files[round as usize % files.len()].path;
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        let line = message(
            &format!("zz{round}"),
            None,
            "user",
            &body,
            9_000 + u64::from(round),
        );
        f.write_all(format!("{line}\n").as_bytes()).unwrap();
        index.refresh(&files, &mut |_| {}).unwrap();
    }
    let segments = stats_json(&s.root, &s.cache)["segments"].as_u64().unwrap();
    let on_disk = terms_files(&s.cache);
    assert_eq!(on_disk.len() as u64, segments, "{on_disk:?}");
    let (full_now, _) = read_rows(&files);
    let queries = [
        "needle",
        "haystack",
        "\"in a haystack\"",
        "round1",
        "re:needles\\d+",
    ];
    let check = |index: &Index, what: &str| {
        for (query, want) in expected(&files, &queries) {
            assert_eq!(
                answer(index, &query, &full_rows(&full_now)),
                want,
                "{what}: {}",
                query.raw
            );
        }
    };
    check(&s.index(), "as built");
    drop(full);
    // Overwritten in place: every letter moved one on, same length.
    for (_, p) in &on_disk {
        let mut bytes = std::fs::read(p).unwrap();
        bytes
            .iter_mut()
            .filter(|b| b.is_ascii_lowercase())
            .for_each(|b| *b = b'a' + (*b - b'a' + 1) % 26);
        std::fs::OpenOptions::new()
            .write(true)
            .open(p)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
    }
    // A one-shot searcher, then a long-lived one (maps), after it.
    let needle = Query::parse("needle");
    assert!(
        s.index().search(&needle).is_err(),
        "a damaged dictionary answered"
    );
    let mapped = s.index();
    let warmed = mapped.warm_search();
    assert!(warmed.is_err() || mapped.search(&needle).is_err());
    let mut index = s.index();
    index.refresh(&files, &mut |_| {}).unwrap();
    check(&index, "after the refresh");
    // Lost: one file deleted.
    let on_disk = terms_files(&s.cache);
    std::fs::remove_file(&on_disk[on_disk.len() / 2].1).unwrap();
    let mut index = s.index();
    index.refresh(&files, &mut |_| {}).unwrap();
    check(&index, "after a lost file");
    for q in queries {
        let (plain, _) = list(&s.root, &s.cache, &["--no-index", "--query", q]);
        let (indexed, _) = list(&s.root, &s.cache, &["--query", q]);
        assert!(plain == indexed, "arbor list --query {q}");
    }
    let segments = stats_json(&s.root, &s.cache)["segments"].as_u64().unwrap();
    assert_eq!(terms_files(&s.cache).len() as u64, segments);
}

/// Rows as the index hands them out (no text of their own).
fn full_rows(full: &[SessionInfo]) -> Vec<SessionInfo> {
    full.iter()
        .map(|r| {
            let mut r = r.clone();
            r.all_text.clear();
            r
        })
        .collect()
}

/// `list --query` applies the query's filters, and an unknown `key:` is an
/// error (exit status 1), not a word that silently matches nothing.
#[test]
fn list_query_filters_and_unknown_keys() {
    let dir = common::demo_store();
    let root = dir.path().join("sessions");
    let cache = tempfile::tempdir().unwrap();
    let ids = |q: &str| -> Vec<String> {
        let out = run_ok(
            arbor()
                .env("ARBOR_CACHE_DIR", cache.path())
                .arg("--store")
                .arg(&root)
                .args(["list", "--all", "--json", "--query", q]),
        );
        out.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                format!("{} {}", v["cwd"].as_str().unwrap(), v["hasName"])
            })
            .collect()
    };
    let all = ids("after:1970-01-01");
    let webapp = ids("dir:WEBAPP");
    assert!(!webapp.is_empty() && webapp.len() < all.len());
    assert!(webapp.iter().all(|r| r.to_lowercase().contains("webapp")));
    let named = ids("is:named");
    assert!(!named.is_empty() && named.iter().all(|r| r.ends_with("true")));
    assert!(ids("before:1970-01-02").is_empty());
    let out = arbor()
        .env("ARBOR_CACHE_DIR", cache.path())
        .arg("--store")
        .arg(&root)
        .args(["list", "--all", "--query", "fix colour:red"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown filter \"colour:\""), "{err}");
    // URL-like words stay words.
    run_ok(
        arbor()
            .env("ARBOR_CACHE_DIR", cache.path())
            .arg("--store")
            .arg(&root)
            .args(["list", "--all", "--query", "http://example.com"]),
    );
}

/// Every `*.jsonl` file of a per-project store, sorted.
fn store_files(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|d| d.unwrap().path())
        .filter(|d| d.is_dir())
        .flat_map(|d| std::fs::read_dir(d).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    v.sort();
    v
}

/// Random appends (whole lines and a partial one), truncations (at a line
/// end and inside a line), deletions and new files, round after round on a
/// generated store: `arbor list` through the index prints exactly what
/// reading every file prints, its rows and its phrase and regex answers,
/// of one project (which looks only at its folder's stored rows: first,
/// while the other folders' changes are not in the index yet) and of the
/// whole store; and the picker's plan (stored rows first, then the
/// changes) ends with the rows of a direct read.
#[test]
fn random_changes_answer_as_a_full_scan() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &[
            "--profile",
            "realistic",
            "--sessions",
            "40",
            "--seed",
            "7",
            "--median-kb",
            "20",
            "--max-mb",
            "1",
        ],
    );
    let cache = dir.path().join("cache");
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut rand = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let words = [
        "token", "refresh", "failing", "parser", "session", "the", "cache", "42817",
    ];
    // Phrases and regexes spanning words are narrowed by the word pairs
    // (two words: answered by them), per part; appended text is a new
    // chunk, whose first pair with the chunk before is not in them.
    let queries = [
        "\"token refresh\"",
        "\"the session\"",
        "re:fail\\w+",
        "re:\\d{5}",
        "parser",
        "refresh token",
        "\"refresh the session\"",
        "\"the cache 42817\" in:tools",
        "\"token refresh\" in:user",
        "\"parser session\" in:assistant",
        "\"ken refre\"",
        "re:token\\s+refresh",
        "re:cache\\s*42817 in:tools",
        "re:the\\s+(cache|session)\\b",
        "re:fail\\w*\\s+the in:user,assistant",
        "\"ch\" in:tools",
        "\"4\" in:thinking,user",
    ];
    let config = StoreConfig::single(&root, StoreKind::PerProject);
    let (files, _) = list_session_files(&config, &Scope::All);
    let mut projects: Vec<String> = read_rows(&files).0.into_iter().map(|r| r.cwd).collect();
    projects.sort();
    projects.dedup();
    assert!(projects.len() >= 3, "{projects:?}");
    let scoped_hits = std::cell::Cell::new(0);
    let compare = |round: usize| {
        // One project, then another, each on an index that has not seen
        // this round's changes in their folders (nor in the others).
        for cwd in projects.iter().step_by(projects.len() / 3).take(3) {
            let scope = ["--cwd", cwd.as_str()];
            let (indexed, indexed_err) = list_scoped(&root, &cache, &scope, &[]);
            let (plain, plain_err) = list_scoped(&root, &cache, &scope, &["--no-index"]);
            // Later rounds may have cut or deleted all of a project's.
            assert!(round > 0 || !plain.is_empty(), "{cwd} lists no session");
            assert_eq!(plain, indexed, "round {round}, {cwd}");
            assert_eq!(plain_err, indexed_err, "round {round}, {cwd}");
            // Searched in that folder's sessions alone (their paths and
            // where their text lies).
            for q in ["\"token refresh\"", "re:fail\\w+", "refresh token"] {
                let q = ["--query", q];
                let (indexed, _) = list_scoped(&root, &cache, &scope, &q);
                let no_index = [&q[..], &["--no-index"]].concat();
                let (plain, _) = list_scoped(&root, &cache, &scope, &no_index);
                assert_eq!(plain, indexed, "round {round}, {cwd}, {q:?}");
                scoped_hits.set(scoped_hits.get() + plain.lines().count());
            }
        }
        // The picker's plan, on the index as the last round and the
        // projects' listings left it (the listings below bring it up to
        // date): its stored rows, then the changes found on disk, must be
        // the files' rows.
        let index = Index::open(&cache.join(arbor_index::FILE_NAME));
        let mut shown: std::collections::HashMap<PathBuf, SessionInfo> = Default::default();
        arbor::app::load::load_screen(&config, Some(index), &arbor::app::load::Plain, &mut |ev| {
            match ev {
                arbor::app::load::LoadEvent::Rows(rows) => {
                    shown.extend(rows.into_iter().map(|r| (r.path.to_path_buf(), r)))
                }
                arbor::app::load::LoadEvent::Gone(p) => {
                    shown.remove(&p);
                }
                _ => {}
            }
        });
        let (files, _) = list_session_files(&config, &Scope::All);
        let (mut full, _) = read_rows(&files);
        for r in &mut full {
            r.all_text.clear();
        }
        assert_eq!(
            listed(shown.into_values().collect()),
            listed(full),
            "round {round}: the picker's rows"
        );
        let (plain, plain_err) = list(&root, &cache, &["--no-index"]);
        let (indexed, indexed_err) = list(&root, &cache, &[]);
        assert_eq!(plain, indexed, "round {round}");
        assert_eq!(plain_err, indexed_err, "round {round}");
        for q in queries {
            let (a, _) = list(&root, &cache, &["--no-index", "--query", q]);
            let (b, _) = list(&root, &cache, &["--query", q]);
            assert_eq!(a, b, "round {round}, query {q}");
        }
    };
    compare(0);
    let mut fresh = 0u32;
    for round in 1..=4 {
        for p in store_files(&root) {
            let len = std::fs::metadata(&p).unwrap().len();
            match rand(12) {
                0 | 1 => {
                    let mut text = String::new();
                    for k in 0..=rand(3) {
                        let said: Vec<&str> = (0..6)
                            .map(|_| words[rand(words.len() as u64) as usize])
                            .collect();
                        text.push_str(&message(
                            &format!("r{round}k{k}"),
                            None,
                            ["user", "assistant", "toolResult"][k as usize % 3],
                            &said.join(" "),
                            1_790_000_000_000 + u64::from(round as u32) * 1000 + k,
                        ));
                        text.push('\n');
                    }
                    if rand(3) == 0 {
                        // A writer mid-line.
                        text.push_str(r#"{"type":"message","id":"half"#);
                    }
                    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
                    f.write_all(text.as_bytes()).unwrap();
                }
                2 => {
                    // Back to the end of a line in the first half.
                    let bytes = std::fs::read(&p).unwrap();
                    let cut = rand(len / 2 + 1) as usize;
                    let end = bytes[..cut]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    std::fs::write(&p, &bytes[..end]).unwrap();
                }
                3 => {
                    // Inside a line.
                    let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
                    f.set_len(rand(len.max(1))).unwrap();
                }
                4 => std::fs::remove_file(&p).unwrap(),
                5 => {
                    fresh += 1;
                    let id = format!("0199bbbb-0000-7000-8000-{fresh:012}");
                    let new = p
                        .parent()
                        .unwrap()
                        .join(format!("2026-06-01T10-00-00-000Z_{id}.jsonl"));
                    let said: Vec<&str> = (0..8)
                        .map(|_| words[rand(words.len() as u64) as usize])
                        .collect();
                    let lines = [
                        format!(
                            r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-06-01T10:00:00.000Z","cwd":"/home/u/new"}}"#
                        ),
                        message("n1", None, "user", &said.join(" "), 1_790_000_000_000),
                    ];
                    std::fs::write(&new, lines.join("\n") + "\n").unwrap();
                }
                _ => {}
            }
        }
        compare(round);
    }
    assert!(scoped_hits.get() > 20, "{}", scoped_hits.get());
}

/// `label:` finds the sessions with a label in effect containing its text,
/// the same with the index (cold, warm, after appends) as without it.
#[test]
fn label_filter_agrees_with_and_without_the_index() {
    let dir = common::demo_store();
    let root = dir.path().join("sessions");
    let cache = tempfile::tempdir().unwrap();
    let ids = |q: &str, no_index: bool| -> Vec<String> {
        let mut c = arbor();
        c.env("ARBOR_CACHE_DIR", cache.path())
            .arg("--store")
            .arg(&root)
            .args(["list", "--all", "--json", "--query", q]);
        if no_index {
            c.arg("--no-index");
        }
        run_ok(&mut c)
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["id"].as_str().unwrap()[..8].to_string()
            })
            .collect()
    };
    // The answer, checked the same three ways: without the index, then
    // building it, then from it.
    let agree = |q: &str| -> Vec<String> {
        let plain = ids(q, true);
        assert_eq!(plain, ids(q, false), "{q}: cold index");
        assert_eq!(plain, ids(q, false), "{q}: warm index");
        plain
    };
    assert_eq!(agree("label:checkpoint"), ["01a1fd62"]);
    assert_eq!(agree("label:CHECK"), ["01a1fd62"]);
    // `wip` was set, then cleared: not a label in effect.
    assert!(agree("label:wip").is_empty());
    assert!(agree("label:nothing").is_empty());
    // With a word and a date (an ISO date: no clock involved).
    assert_eq!(agree("label:checkpoint auth"), ["01a1fd62"]);
    assert!(agree("label:checkpoint after:2026-11-22").is_empty());
    assert_eq!(
        agree("label:checkpoint after:2026-11-21 before:2026-11-22"),
        ["01a1fd62"]
    );
    // A label appended to another session (the index reads the appended
    // bytes only), then cleared.
    let tidy = "01a20947";
    let file = root
        .join("--home-demo-projects-tidy-csv--")
        .join("2026-11-23T16-40-12-305Z_01a20947-8711-79a8-aefc-6b48e8fafc36.jsonl");
    let entry = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "message")
        .and_then(|v| v["id"].as_str().map(str::to_string))
        .unwrap();
    let label = |text: &[&str]| {
        run_ok(
            arbor()
                .arg("--store")
                .arg(&root)
                .args(["label", tidy, &entry])
                .args(text),
        );
    };
    label(&["Release checkpoint"]);
    assert_eq!(agree("label:checkpoint"), [tidy, "01a1fd62"]);
    assert_eq!(agree("label:release"), [tidy]);
    label(&["--clear"]);
    assert_eq!(agree("label:checkpoint"), ["01a1fd62"]);
    // A label on an entry the file lacks shows nowhere.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    writeln!(
        f,
        r#"{{"type":"label","id":"ffff0001","parentId":null,"timestamp":"2026-11-23T17:00:00.000Z","targetId":"no-such-entry","label":"ghost"}}"#
    )
    .unwrap();
    assert!(agree("label:ghost").is_empty());
}

/// Every write adds segments; once a part has more than a few they are
/// merged, the merged pages are given back to the file system (incremental
/// auto-vacuum), and every word written along the way is still found.
#[test]
fn merges_keep_segments_few_and_give_their_pages_back() {
    let s = Store::new();
    let p = s.write(1, &first_lines(1));
    let mut index = s.index();
    refresh_checked(&mut index, &s.files());
    let mut parent = "a2".to_string();
    for i in 0..14u64 {
        let id = format!("m{i}");
        // The same words each time (a merged segment holds them once, so
        // it is far smaller than the ones it replaces), and some new ones.
        let mut words: Vec<String> = (0..4000).map(|k| format!("common{k}")).collect();
        words.extend((0..400).map(|k| format!("word{i}x{k}")));
        s.append(
            &p,
            &format!(
                "{}\n",
                message(
                    &id,
                    Some(&parent),
                    "user",
                    &words.join(" "),
                    1767261602000 + i
                )
            ),
        );
        index.update_file(&atomic(&p)).unwrap().unwrap();
        parent = id;
    }
    let conn = rusqlite::Connection::open(s.cache.join("index.sqlite")).unwrap();
    let most: i64 = conn
        .query_row(
            "SELECT max(n) FROM (SELECT count(*) AS n FROM segments GROUP BY part)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(most <= 8, "{most} segments in a part");
    let free: i64 = conn
        .query_row("PRAGMA freelist_count", [], |r| r.get(0))
        .unwrap();
    assert_eq!(free, 0, "pages left free after the merges");
    for w in [
        "word0x0",
        "word7x399",
        "word13x123",
        "common3999",
        "\"word3x5 word3x6\"",
    ] {
        let hits = index.search(&Query::parse(w)).unwrap().unwrap();
        assert_eq!(hits.get(&p), Some(1), "{w}");
    }
}

/// Issue #15: the stored rows are decoded while SQLite reads them, a
/// batch at a time on other threads; past several batches they are the
/// rows the refresh gave, every one, in the table's order.
#[test]
fn stored_rows_read_in_batches_are_the_refreshed_rows() {
    let s = Store::new();
    for n in 1..=1300 {
        s.write(n, &first_lines(n));
    }
    let files = s.files();
    let mut index = s.index();
    let mut refreshed = Vec::new();
    index.refresh(&files, &mut |b| refreshed.extend(b)).unwrap();
    let roots = [arbor_store::StoreRoot {
        path: s.root.clone(),
        kind: StoreKind::PerProject,
        agent: Agent::Atomic,
        host: None,
    }];
    let stored = index.stored_rows(&roots, None).unwrap();
    assert_eq!(stored.len(), 1300);
    // The stored rows leave out the usage figures (`stats` reads them).
    let by_path = |mut v: Vec<SessionInfo>| {
        v.sort_by(|a, b| a.path.cmp(&b.path));
        for r in &mut v {
            r.usage = Default::default();
        }
        v
    };
    assert_eq!(by_path(stored.clone()), by_path(refreshed));
    // The table's order: as one read of its paths gives them.
    let order: Vec<PathBuf> = stored.iter().map(|r| r.path.to_path_buf()).collect();
    let again: Vec<PathBuf> = index
        .stored_rows(&roots, None)
        .unwrap()
        .into_iter()
        .map(|r| r.path.into())
        .collect();
    assert_eq!(order, again);
}

/// The picker makes its rows straight from the stored bytes: each is the
/// row made from the same bytes decoded, field for field (search document,
/// links resolved, what the preview keeps), on the edge cases' corpus and a
/// realistic one, a partial last line's stored row included; and a stored
/// row reads in place exactly when it decodes.
#[test]
fn picker_rows_from_stored_bytes_are_those_of_the_decoded_rows() {
    use arbor::ui::picker::{Folders, Row};
    use arbor_util::shared_path::SharedPath;
    let corpus = conformance_corpus();
    let realistic = tempfile::tempdir().unwrap();
    gen_corpus(
        realistic.path(),
        &["--profile", "realistic", "--sessions", "120", "--seed", "9"],
    );
    for root in [corpus.path().join("corpus"), realistic.path().to_path_buf()] {
        let config = StoreConfig::single(&root, StoreKind::PerProject);
        let (files, _) = list_session_files(&config, &Scope::All);
        // A partial last line: that file's stored row is its `row`, not
        // its scanner's state.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&files[0].path)
            .unwrap();
        f.write_all(b"{\"type\":\"message\",\"id\":\"tail\"")
            .unwrap();
        drop(f);
        let cache = tempfile::tempdir().unwrap();
        let mut index = Index::open(&cache.path().join("index.sqlite")).unwrap();
        index.refresh(&files, &mut |_| {}).unwrap();
        let dirs = Folders::default();
        let pairs = index
            .stored_rows_map(&config.roots, (None, None), &|row| {
                let path: SharedPath = row.file().path.as_path().into();
                let decoded = row
                    .info(path.clone())
                    .map(|i| format!("{:?}", Row::with_dirs(i, &dirs)));
                let viewed = row
                    .view()
                    .map(|v| format!("{:?}", Row::of_view(&v, path, row.file().agent, &dirs)));
                Some((decoded, viewed))
            })
            .unwrap();
        assert!(
            pairs.len() >= 20,
            "{} rows in {}",
            pairs.len(),
            root.display()
        );
        for (decoded, viewed) in pairs {
            assert!(decoded.is_some());
            assert_eq!(decoded, viewed);
        }
    }
}

/// Issue #15: the picker asks the index for the conversation text and tool
/// calls first (beside the fields pass), then for the rest (tool output,
/// thinking) starting from that answer. The whole answer is a fresh
/// search's, and the rows the first answer places are exactly the whole
/// answer's best: every session scoring at least the least of them.
#[test]
fn the_best_ranks_first_then_the_rest_answer_as_one_search() {
    use arbor::app::searcher::Searcher;

    let dir = tempfile::tempdir().unwrap();
    gen_corpus(
        &dir.path().join("sessions"),
        &["--profile", "realistic", "--sessions", "40", "--seed", "11"],
    );
    let s = Store::in_dir(dir);
    let files = s.files();
    s.index().refresh(&files, &mut |_| {}).unwrap();
    let (full, _) = read_rows(&files);
    let docs = picker_docs(&full);
    let never = || false;
    let mut queries: Vec<String> = [
        "test",
        "ses",
        "err",
        "file",
        "\"the\"",
        "\"to",
        "re:\\d{3}",
        "fix test",
    ]
    .map(str::to_string)
    .to_vec();
    for r in full.iter().take(8) {
        let words: Vec<&str> = r.all_text.split_whitespace().collect();
        if words.len() >= 3 {
            queries.push(format!("\"{} {}\"", words[1], words[2]));
            queries.push(words[2].to_lowercase());
        }
    }
    let mut searcher = Searcher::new(Some(s.index()));
    // More rows than the store has: never found from the fields alone.
    let first = all_rows_first(&docs, 1000);
    let mut placed = 0;
    for typed in &queries {
        let q = Query::parse(typed);
        let mut early = Vec::new();
        let got = searcher
            .search_first(&q, &docs, None, &never, Some(&first), &mut |a| {
                early.push(a)
            })
            .unwrap();
        let fresh = Searcher::new(Some(s.index()))
            .search(&q, &docs, None, &never)
            .unwrap();
        assert_eq!(got, fresh, "{typed}");
        for a in early {
            assert_eq!(a.stage, arbor::app::searcher::Stage::FirstRows, "{typed}");
            let least = a.scores.iter().flatten().min().copied().expect("rows");
            for (d, (e, f)) in a.scores.iter().zip(&fresh.scores).enumerate() {
                match e {
                    Some(e) => assert_eq!(Some(*e), *f, "{typed}: row {d}"),
                    None => assert!(f.is_none_or(|f| f < least), "{typed}: row {d}"),
                }
            }
            placed += 1;
        }
    }
    assert!(placed >= 3, "only {placed} queries placed rows first");
}

/// Every row in scope, for `want` rows first.
fn all_rows_first(docs: &arbor_search::Docs, want: usize) -> arbor::app::searcher::FirstRows {
    arbor::app::searcher::FirstRows {
        want,
        scoped: docs
            .0
            .iter()
            .enumerate()
            .map(|(i, (_, d))| (d.facts.modified_ms, i as u32))
            .collect(),
    }
}

/// A session that matches a word in its fields and the other only in its
/// tool output outscores one that has both in its conversation text: the
/// first answer (text and tool calls) must not place the second above it.
/// Only the session with both words in its fields is placed.
#[test]
fn a_row_placed_first_is_never_outranked_by_the_tool_output() {
    use arbor::app::searcher::Searcher;

    let s = Store::new();
    let sessions: [(&str, &str, Option<&str>); 3] = [
        ("alpha report", "ok", Some("beta")),
        ("task", "alpha beta", None),
        ("alpha beta now", "done", None),
    ];
    for (n, (user, reply, output)) in sessions.iter().enumerate() {
        let n = n as u32 + 1;
        let mut lines = vec![
            header(n),
            message("a1", None, "user", user, 1767261600000),
            message("a2", Some("a1"), "assistant", reply, 1767261601000),
        ];
        if let Some(out) = output {
            lines.push(message("a3", Some("a2"), "toolResult", out, 1767261602000));
        }
        s.write(n, &lines);
    }
    let files = s.files();
    s.index().refresh(&files, &mut |_| {}).unwrap();
    let (full, _) = read_rows(&files);
    let docs = picker_docs(&full);
    let at = |n: u32| {
        docs.0
            .iter()
            .position(|(p, _)| p.as_path() == s.path(n))
            .unwrap()
    };
    let q = Query::parse("alpha beta");
    let mut early = Vec::new();
    let first = all_rows_first(&docs, 10);
    let whole = Searcher::new(Some(s.index()))
        .search_first(&q, &docs, None, &|| false, Some(&first), &mut |a| {
            early.push(a)
        })
        .unwrap();
    let score = |n: u32| whole.scores[at(n)].unwrap();
    assert!(
        score(3) > score(1) && score(1) > score(2),
        "{:?}",
        whole.scores
    );
    let [first] = &early[..] else {
        panic!("one answer first: {early:?}");
    };
    let placed: Vec<usize> = (0..docs.0.len())
        .filter(|&d| first.scores[d].is_some())
        .collect();
    assert_eq!(placed, vec![at(3)]);
}

/// A listing's refresh that reads more changed files than it holds lets
/// their rows go and reads them back from the index (a first run at
/// 100,000 sessions otherwise held every whole row while it built): on a
/// first run and after appends to more files than it holds, its JSON
/// lines are those of the files read directly.
#[test]
fn a_listing_that_lets_read_rows_go_reads_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &["--profile", "realistic", "--sessions", "30", "--seed", "3"],
    );
    let config = StoreConfig::single(&root, StoreKind::PerProject);
    let db = dir.path().join("cache").join(arbor_index::FILE_NAME);
    // Each row's `arbor list --json` line, sorted.
    fn lines<R>(rows: impl Iterator<Item = R>, write: impl Fn(&R, &mut Vec<u8>)) -> Vec<String> {
        let mut lines: Vec<String> = rows
            .map(|r| {
                let mut out = Vec::new();
                write(&r, &mut out);
                String::from_utf8(out).unwrap()
            })
            .collect();
        lines.sort();
        lines
    }
    let lines_of = |listing: &arbor_index::stored::Listing| {
        let rows = listing.keys().into_iter().filter_map(|k| listing.row(k));
        lines(rows, |r, out| r.write_json_line(out))
    };
    let direct = || {
        let (files, _) = list_session_files(&config, &Scope::All);
        let (rows, _) = read_rows(&files);
        lines(rows.iter(), |r, out| r.write_json_line(out))
    };
    let (files, _) = list_session_files(&config, &Scope::All);
    assert!(files.len() > 20, "{} files", files.len());
    for round in 0..2 {
        if round == 1 {
            // Appends to more files than are held.
            for f in files.iter().take(12) {
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&f.path)
                    .unwrap();
                writeln!(
                    file,
                    r#"{{"type":"session_info","id":"n{round}","parentId":null,"timestamp":"2026-03-01T00:00:00.000Z","name":"renamed {round}"}}"#
                )
                .unwrap();
            }
        }
        let (listing, problems, index) = arbor::app::load::load_listing_stored_holding(
            &config,
            &Scope::All,
            Some(Index::open(&db)),
            None,
            &mut |_| {},
            5,
        );
        assert!(index.is_some(), "round {round}: answered through the index");
        assert!(problems.is_empty(), "round {round}: {problems:?}");
        // Every row was read back in place, none held.
        assert!(
            listing.read.is_empty(),
            "round {round}: {} held",
            listing.read.len()
        );
        assert_eq!(lines_of(&listing), direct(), "round {round}");
    }
}

/// A generated realistic store of `sessions` (`seed`), the index file to
/// build for it, and its files (the dir holds both).
fn generated_store(
    sessions: usize,
    seed: u64,
) -> (tempfile::TempDir, StoreConfig, PathBuf, Vec<SessionFile>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &[
            "--profile",
            "realistic",
            "--sessions",
            &sessions.to_string(),
            "--seed",
            &seed.to_string(),
        ],
    );
    let config = StoreConfig::single(&root, StoreKind::PerProject);
    let db = dir.path().join("cache").join(arbor_index::FILE_NAME);
    let (files, _) = list_session_files(&config, &Scope::All);
    (dir, config, db, files)
}

/// Appends a label entry (`id`, `label`) to the session file at `path`.
fn append_label(path: &Path, id: &str, label: &str) {
    let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(
        file,
        r#"{{"type":"label","id":"{id}","parentId":null,"timestamp":"2026-03-01T00:00:00.000Z","targetId":"x","label":"{label}"}}"#
    )
    .unwrap();
}

/// `load_listing`'s rows (`arbor stats` and `labels` read them, with
/// their labels and usage) are let go past what is held and read back
/// from the index too: on a first run and after appends to more files
/// than it holds, they are the rows of the files read directly.
#[test]
fn a_full_listing_that_lets_rows_go_reads_them_back() {
    let (_dir, config, db, files) = generated_store(24, 5);
    for round in 0..2 {
        if round == 1 {
            for f in files.iter().take(10) {
                append_label(&f.path, "l1", "later");
            }
        }
        let mut index = Index::open(&db).unwrap();
        index.set_extras(true);
        let mut rows = Vec::new();
        let index = arbor::app::load::load_listing_holding(
            &config,
            &Scope::All,
            Some(Ok(index)),
            &mut |ev| {
                if let arbor::app::load::LoadEvent::Rows(r) = ev {
                    rows.extend(r)
                }
            },
            5,
        );
        assert!(index.is_some(), "round {round}: through the index");
        let (mut direct, _) = read_rows(&files);
        for r in &mut direct {
            r.all_text.clear();
        }
        assert_eq!(by_path(rows), by_path(direct), "round {round}");
    }
}

/// A refresh tells the rows of unchanged files (one batch, first) from
/// those it reads: all read on a first run, then only the changed ones.
#[test]
fn a_split_refresh_sends_unchanged_rows_apart_from_read_ones() {
    let (_dir, _, db, files) = generated_store(12, 7);
    let (direct, _) = read_rows(&files);
    let sessions = direct.len();
    for round in 0..2 {
        if round == 1 {
            for f in files.iter().take(3) {
                append_label(&f.path, "s1", "later");
            }
        }
        let mut index = Index::open(&db).unwrap();
        let (mut unchanged, mut read) = (Vec::new(), Vec::new());
        let calls = std::cell::RefCell::new(Vec::new());
        index
            .refresh_split(
                &files,
                &mut |r| {
                    calls.borrow_mut().push("unchanged");
                    unchanged.extend(r)
                },
                &mut |r| {
                    calls.borrow_mut().push("read");
                    read.extend(r)
                },
                None,
            )
            .unwrap();
        let changed = [sessions, 3][round];
        assert_eq!(read.len(), changed, "round {round}");
        assert_eq!(unchanged.len(), sessions - changed, "round {round}");
        let calls = calls.into_inner();
        assert_eq!(calls.iter().filter(|c| **c == "unchanged").count(), round);
        assert_eq!(calls.first(), Some(&["read", "unchanged"][round]));
        let mut paths: Vec<_> = unchanged
            .iter()
            .chain(&read)
            .map(|r| r.path.clone())
            .collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), sessions, "round {round}: every row once");
    }
}

/// With `set_labelled_only`, a refresh sends the rows with labels alone,
/// unchanged or read, and counts the others as it did: on a first run, and
/// after labels are added to some files, they are the labelled rows of the
/// files read directly.
#[test]
fn a_labelled_only_refresh_sends_the_labelled_rows() {
    let (_dir, _, db, files) = generated_store(30, 11);
    for round in 0..3 {
        if round == 1 {
            for f in files.iter().step_by(4) {
                append_label(&f.path, "lb1", "added");
            }
        }
        let mut index = Index::open(&db).unwrap();
        index.set_labelled_only(true);
        let mut rows = Vec::new();
        let stats = index.refresh(&files, &mut |b| rows.extend(b)).unwrap();
        let (direct, _) = read_rows(&files);
        assert_eq!(stats.files, files.len());
        if round == 2 {
            // The rows not sent are unchanged, not read again.
            assert_eq!((stats.reparsed, stats.appended), (0, 0));
            assert_eq!(stats.cached, files.len());
        }
        let mut want: Vec<SessionInfo> = direct
            .into_iter()
            .filter(|r| !r.labels.is_empty())
            .map(|mut r| {
                r.all_text.clear();
                r.usage = Default::default();
                r
            })
            .collect();
        for r in &mut rows {
            r.usage = Default::default();
        }
        assert!(
            round == 0 || want.len() >= files.len() / 4,
            "round {round}: {} labelled",
            want.len()
        );
        let got = by_path(rows);
        want = by_path(want);
        assert_eq!(got, want, "round {round}");
    }
}
