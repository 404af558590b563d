//! arbor against hostile input: every path of the generated conformance
//! corpus's `--adversarial--` folder (empty and garbage files, truncated and
//! huge lines, cycles, duplicate ids, bad encodings, wrong field types, a
//! directory / FIFO / symlink loops named `*.jsonl`, terminal escapes, ...).
//!
//! Every command runs under a deadline (a hang fails the test), must not
//! panic, and must either succeed or fail cleanly (`arbor: ` on stderr, empty
//! stdout). On top of that, the SPEC semantics that apply to particular
//! files are checked against expectations derived here from the file bytes,
//! not from arbor's own output.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common::{arbor, gen_corpus, run_timeout, terminal_controls, Timed};

/// Generous for a debug build on a loaded 2-core machine; a hang is forever.
const LIMIT: Duration = Duration::from_secs(30);

struct Corpus {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Corpus {
    fn adv(&self) -> PathBuf {
        self.root.join("--adversarial--")
    }
    fn file(&self, prefix: &str) -> PathBuf {
        let adv = self.adv();
        let name = std::fs::read_dir(&adv)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}* in the corpus"));
        adv.join(name)
    }
}

fn corpus(small: bool) -> Corpus {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("corpus");
    let mut args = vec!["--profile", "conformance", "--seed", "1", "--with-fifo"];
    if small {
        args.push("--small");
    }
    gen_corpus(&root, &args);
    Corpus { _dir: dir, root }
}

/// Every name in the adversarial folder (dot files, links, FIFO included).
fn adversarial_names(c: &Corpus) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(c.adv())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn list(root: &Path, json: bool) -> Timed {
    let mut cmd = arbor();
    cmd.arg("--store")
        .arg(root)
        .args(["list", "--all", "--include-internal"]);
    if json {
        cmd.arg("--json");
    }
    let t = run_timeout(&mut cmd, LIMIT);
    assert_eq!(
        t.status.code(),
        Some(0),
        "arbor list failed: {}",
        t.stderr_text()
    );
    t
}

/// `arbor: skipped <path>: <reason>` lines → path → reason.
fn skipped(stderr: &str) -> HashMap<PathBuf, String> {
    let mut out = HashMap::new();
    for line in stderr.lines() {
        let rest = line
            .strip_prefix("arbor: skipped ")
            .unwrap_or_else(|| panic!("unexpected stderr line from list: {line:?}"));
        // Paths in this corpus contain no ": ", so the first one ends the path.
        let (path, reason) = rest
            .split_once(": ")
            .unwrap_or_else(|| panic!("skip line without a reason: {line:?}"));
        assert!(!reason.trim().is_empty(), "empty reason: {line:?}");
        // The path is said once, not again in the reason.
        assert!(!reason.contains(path), "{line:?}");
        out.insert(PathBuf::from(path), reason.to_string());
    }
    out
}

fn rows(stdout: &str) -> HashMap<PathBuf, Value> {
    stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            (PathBuf::from(v["path"].as_str().unwrap()), v)
        })
        .collect()
}

/// Asserts the outcome of one read-only command: a clean success or a clean
/// failure, never a panic.
fn check_outcome(what: &str, t: &Timed) -> bool {
    let err = t.stderr_text();
    assert!(
        !err.contains("panicked"),
        "{what}: panicked after {:?}:\n{err}",
        t.elapsed
    );
    match t.status.code() {
        Some(0) => {
            assert!(!t.stdout.is_empty(), "{what}: success with no output");
            true
        }
        Some(1) => {
            assert!(
                err.starts_with("arbor: "),
                "{what}: failure without an `arbor: ` message: {err:?}"
            );
            assert!(
                t.stdout.is_empty(),
                "{what}: failure but stdout has {} bytes",
                t.stdout.len()
            );
            false
        }
        other => panic!("{what}: exit {other:?} (killed or panicked)\n{err}"),
    }
}

fn show(path: &Path, json: bool) -> Timed {
    let mut cmd = arbor();
    // Every entry Atomic's tree can show (the default filter hides some).
    cmd.arg("show").arg("--filter").arg("all").arg(path);
    if json {
        cmd.arg("--json");
    }
    run_timeout(&mut cmd, LIMIT)
}

fn context(path: &Path, flavor: &str) -> Timed {
    run_timeout(
        arbor()
            .arg("context")
            .arg(path)
            .args(["--json", "--flavor", flavor]),
        LIMIT,
    )
}

/// Entry lines of a clean file (every line a JSON object), parsed here
/// without arbor.
fn raw_entries(path: &Path) -> Vec<serde_json::Map<String, Value>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(header["type"], "session");
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| match serde_json::from_str(l).unwrap() {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

#[test]
fn every_path_is_listed_or_skipped_with_a_reason() {
    let c = corpus(true);
    let t = list(&c.root, true);
    let rows = rows(&t.stdout_text());
    let skipped = skipped(&t.stderr_text());
    let names = adversarial_names(&c);
    assert!(names.len() > 40, "corpus too small: {names:?}");

    // The generator's manifest and the folder agree, so no case is missed.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(c.root.join("MANIFEST.json")).unwrap())
            .unwrap();
    for f in manifest["files"].as_array().unwrap() {
        let p = f["path"].as_str().unwrap();
        if let Some(name) = p.strip_prefix("--adversarial--/") {
            assert!(names.iter().any(|n| n == name), "{name} missing on disk");
        }
    }

    let mut listed = 0;
    for name in &names {
        let path = c.adv().join(name);
        let in_rows = rows.contains_key(&path);
        let in_skipped = skipped.contains_key(&path);
        if !name.ends_with(".jsonl") {
            // a27_self_loop.d: a directory link, not a session candidate.
            assert!(!in_rows && !in_skipped, "{name} should be ignored");
            continue;
        }
        assert!(
            in_rows ^ in_skipped,
            "{name}: must be exactly one of listed ({in_rows}) / skipped ({in_skipped})"
        );
        listed += usize::from(in_rows);
    }
    assert!(listed > 25, "only {listed} adversarial rows");

    let reason = |prefix: &str| -> String {
        let p = c.file(prefix);
        skipped
            .get(&p)
            .unwrap_or_else(|| panic!("{prefix} should be skipped"))
            .clone()
    };
    let row = |prefix: &str| -> &Value {
        rows.get(&c.file(prefix))
            .unwrap_or_else(|| panic!("{prefix} should be listed"))
    };

    // Not sessions (docs/spec.md §1, §2), each with its reason.
    assert!(reason("a01_").contains("no session header"));
    assert!(reason("a05_").contains("not a session header"));
    assert!(reason("a19_").contains("string id"));
    assert!(reason("a23_").contains("directory"));
    assert!(reason("a24_symlink_loop_a").contains("symbolic links"));
    assert!(reason("a24_symlink_loop_b").contains("symbolic links"));
    assert!(reason("a25_").contains("No such file"));
    assert!(reason("a44_").contains("not a regular file"));
    assert!(reason("a38_").contains("no session header"));

    // docs/spec.md §2: a last line without `\n` that does not parse is a writer
    // mid-append — reported, not called corrupt, and not counted.
    let a06 = row("a06_");
    assert_eq!(a06["diagnostics"]["partialTail"], true, "{a06}");
    let a06_complete = std::fs::read_to_string(c.file("a06_"))
        .unwrap()
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok())
        .filter(|l| l.contains(r#""type":"message""#))
        .count();
    assert_eq!(a06["messageCount"], a06_complete);

    // A last line without `\n` that parses is an entry like any other.
    let a07 = row("a07_");
    assert!(a07.get("diagnostics").is_none(), "{a07}");
    let a07_messages = raw_entries(&c.file("a07_"))
        .iter()
        .filter(|e| e["type"] == "message")
        .count();
    assert_eq!(a07["messageCount"], a07_messages);

    // Blank lines are skipped silently; a `null` line is counted as skipped.
    assert!(row("a08_").get("diagnostics").is_none());
    assert_eq!(row("a21_")["diagnostics"]["skippedLines"], 1);
    // Invalid UTF-8 is read lossily and said so.
    assert!(row("a09_")["diagnostics"]["lossyLines"].as_u64().unwrap() >= 1);
    // A BOM before the header does not hide the session.
    assert_eq!(row("a28_")["id"].as_str().unwrap().len(), 36);
}

#[test]
fn every_path_survives_show_and_context() {
    let c = corpus(true);
    let t = list(&c.root, true);
    let listed: HashSet<PathBuf> = rows(&t.stdout_text()).into_keys().collect();

    let mut opened = 0;
    for name in adversarial_names(&c) {
        let path = c.adv().join(&name);
        let text = show(&path, false);
        let ok = check_outcome(&format!("show {name}"), &text);
        if ok {
            opened += 1;
            let out = text.stdout_text();
            let bad = terminal_controls(&out);
            assert!(bad.is_empty(), "show {name}: control characters {bad:?}");
        }
        let json = show(&path, true);
        assert_eq!(
            check_outcome(&format!("show --json {name}"), &json),
            ok,
            "show and show --json disagree on {name}"
        );
        if ok {
            let v: Value = serde_json::from_slice(&json.stdout).unwrap();
            assert!(v["entries"].is_array(), "{name}: {v}");
        }
        for flavor in ["atomic", "pi"] {
            let ctx = context(&path, flavor);
            assert_eq!(
                check_outcome(&format!("context {flavor} {name}"), &ctx),
                ok,
                "show and context disagree on {name}"
            );
            if ok {
                let v: Value = serde_json::from_slice(&ctx.stdout).unwrap();
                assert!(v["messages"].is_array(), "{name}: {v}");
            }
        }
        // The listing and the reader agree on what is a session.
        assert_eq!(
            listed.contains(&path),
            ok,
            "{name}: listed {} but opens {ok}",
            listed.contains(&path)
        );
    }
    assert!(opened > 25, "only {opened} files opened");
}

/// The tree docs/spec.md §3 describes, computed here independently of arbor: the
/// last entry with an id wins, a missing/self parent makes a root, and every
/// node on a parent cycle becomes a root.
struct ExpectedTree {
    parent: Vec<Option<usize>>,
}

impl ExpectedTree {
    fn new(entries: &[serde_json::Map<String, Value>]) -> ExpectedTree {
        let ids: Vec<String> = entries
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
        let mut by_id = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            by_id.insert(id.clone(), i); // last wins
        }
        let mut parent: Vec<Option<usize>> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.get("parentId")
                    .and_then(Value::as_str)
                    .and_then(|p| by_id.get(p).copied())
                    .filter(|&p| p != i)
            })
            .collect();
        let n = parent.len();
        // i is on a cycle iff walking up from i comes back to i.
        let on_cycle: Vec<bool> = (0..n)
            .map(|i| {
                let mut cur = parent[i];
                for _ in 0..n {
                    match cur {
                        Some(c) if c == i => return true,
                        Some(c) => cur = parent[c],
                        None => return false,
                    }
                }
                false
            })
            .collect();
        for i in 0..n {
            if on_cycle[i] {
                parent[i] = None;
            }
        }
        ExpectedTree { parent }
    }

    fn path_to(&self, i: usize) -> Vec<usize> {
        let mut p = vec![i];
        while let Some(x) = self.parent[*p.last().unwrap()] {
            p.push(x);
        }
        p.reverse();
        p
    }
}

#[test]
fn cycles_and_duplicate_ids_show_every_entry_exactly_once() {
    let c = corpus(true);
    for (case, expected_context) in [
        // a13: a → c → b → a including the leaf: all three become roots, so
        // the context at the leaf is the leaf alone.
        ("a13_", vec!["c"]),
        // a14: the leaf is its own parent: a root of its own.
        ("a14_", vec!["I am my own parent"]),
        // a15: a 2-cycle off the active path does not disturb the path.
        (
            "a15_",
            vec!["root", "reply", "leaf is fine; a 2-cycle exists elsewhere"],
        ),
        // a12: the later duplicate wins the id, which makes it and "second"
        // a 2-cycle; both become roots and the leaf hangs from the later one.
        (
            "a12_",
            vec![
                "duplicate id, later line",
                "third (child of the duplicated id)",
            ],
        ),
    ] {
        let file = c.file(case);
        let entries = raw_entries(&file);
        let n = entries.len();
        let tree = ExpectedTree::new(&entries);
        let leaf = n - 1;
        let active: HashSet<usize> = tree.path_to(leaf).into_iter().collect();

        let json = show(&file, true);
        assert!(check_outcome(case, &json));
        let v: Value = serde_json::from_slice(&json.stdout).unwrap();
        let shown = v["entries"].as_array().unwrap();
        assert_eq!(shown.len(), n, "{case}: one JSON entry per line");
        for (i, (s, e)) in shown.iter().zip(&entries).enumerate() {
            assert_eq!(s["id"], e["id"], "{case}: entry {i} out of order");
            assert_eq!(
                s["onActivePath"].as_bool().unwrap(),
                active.contains(&i),
                "{case}: onActivePath of entry {i}"
            );
            assert_eq!(
                s["depth"].as_u64().unwrap() as usize,
                tree.path_to(i).len() - 1,
                "{case}: depth of entry {i}"
            );
        }
        assert_eq!(v["leafId"], entries[leaf]["id"], "{case}: leaf = last line");

        // Text: one row per entry, each entry's text exactly once.
        let text = show(&file, false);
        assert!(check_outcome(case, &text));
        let out = text.stdout_text();
        let rows: Vec<&str> = out.lines().skip(1).collect();
        assert_eq!(rows.len(), n, "{case}: rows\n{out}");
        let needles: Vec<String> = entries
            .iter()
            .map(|e| match e["type"].as_str().unwrap() {
                "message" => {
                    let m = &e["message"];
                    let body = match &m["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(b) => b[0]["text"].as_str().unwrap().to_string(),
                        other => panic!("{other}"),
                    };
                    format!("{}: {body}", m["role"].as_str().unwrap())
                }
                "custom" => format!("[custom: {}]", e["customType"].as_str().unwrap()),
                other => panic!("unexpected type {other}"),
            })
            .collect();
        for needle in &needles {
            let expected = needles.iter().filter(|x| *x == needle).count();
            let found = rows.iter().filter(|r| r.ends_with(needle.as_str())).count();
            assert_eq!(found, expected, "{case}: {needle:?} in\n{out}");
        }
        let marked = rows.iter().filter(|r| r.contains("• ")).count();
        assert_eq!(marked, active.len(), "{case}: active markers\n{out}");

        // The context walk terminates and follows the same path.
        for flavor in ["atomic", "pi"] {
            let ctx = context(&file, flavor);
            assert!(check_outcome(case, &ctx));
            let v: Value = serde_json::from_slice(&ctx.stdout).unwrap();
            let texts: Vec<&str> = v["messages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["text"].as_str().unwrap())
                .collect();
            assert_eq!(texts, expected_context, "{case} ({flavor})");
        }
    }
}

#[test]
fn terminal_injection_never_reaches_the_terminal() {
    let c = corpus(true);
    let file = c.file("a41_");
    let entries = raw_entries(&file);
    let raw_name = entries
        .iter()
        .find(|e| e["type"] == "session_info")
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(raw_name.contains('\u{1b}') && raw_name.contains('\u{7}'));

    let text = show(&file, false);
    assert!(check_outcome("show a41", &text));
    let out = text.stdout_text();
    assert!(
        terminal_controls(&out).is_empty(),
        "show: {:?}",
        terminal_controls(&out)
    );
    assert!(!out.bytes().any(|b| b == 0x1b || b == 0x07));
    // Still readable: the text survives with the controls blanked.
    assert!(out.contains("line1 line2"), "{out}");
    assert!(out.contains("[label with newline "), "{out}");

    let listing = list(&c.root, false);
    let out = listing.stdout_text();
    assert!(
        terminal_controls(&out).is_empty(),
        "list: {:?}",
        terminal_controls(&out)
    );
    assert!(out.contains("line1 line2"), "{out}");

    // JSON output keeps the exact name (escaped, so still no raw ESC/BEL).
    let json = list(&c.root, true);
    let rows = rows(&json.stdout_text());
    assert_eq!(rows[&file]["name"], raw_name.trim());
    assert!(!json.stdout.iter().any(|&b| b == 0x1b || b == 0x07));
}

#[test]
fn huge_line_at_full_size() {
    // The full-size corpus (a 20 MB line) takes ~5 s to generate; the
    // huge-line file must list, show and build its context quickly.
    let started = std::time::Instant::now();
    let c = corpus(false);
    eprintln!(
        "full conformance corpus generated in {:?}",
        started.elapsed()
    );
    let file = c.file("a11_");
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 20_000_000, "a11 is only {size} bytes");

    let t = list(&c.root, true);
    eprintln!("list --all over the full corpus: {:?}", t.elapsed);
    assert!(
        t.elapsed < Duration::from_secs(20),
        "list took {:?}",
        t.elapsed
    );
    let rows = rows(&t.stdout_text());
    let entries = raw_entries(&file);
    let messages = entries.iter().filter(|e| e["type"] == "message").count();
    assert_eq!(rows[&file]["messageCount"], messages);
    assert!(rows[&file].get("diagnostics").is_none());

    let s = show(&file, false);
    assert!(check_outcome("show a11", &s));
    // Every entry but the tool-call-only assistant message (hidden in every filter).
    assert_eq!(s.stdout_text().lines().count(), entries.len());
    let ctx = context(&file, "atomic");
    assert!(check_outcome("context a11", &ctx));
    eprintln!("show {:?}, context {:?}", s.elapsed, ctx.elapsed);
    let v: Value = serde_json::from_slice(&ctx.stdout).unwrap();
    let longest = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().len())
        .max()
        .unwrap();
    assert!(
        longest > 20_000_000,
        "the huge tool output survives: {longest}"
    );
}

/// Issue #11.3: a `*.jsonl` that is rename-swapped between a regular file
/// and a FIFO while arbor reads the store. Opening a FIFO waits for a writer
/// forever, so a scan that had seen a regular file in the listing used to
/// hang when the swap came between the listing and the open (10 % of runs).
/// Every reader now opens without blocking and checks the opened handle.
/// 200 runs of `list --no-index`, `list`, `index` and `show`, each under a
/// deadline, while a thread swaps the file as fast as it can.
#[cfg(unix)]
#[test]
fn a_file_swapped_with_a_fifo_never_hangs() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("sessions");
    let project = store.join("--tmp-swap--");
    std::fs::create_dir_all(&project).unwrap();
    let session = |id: &str| {
        format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"{id}\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/tmp/swap\"}}\n\
             {{\"type\":\"message\",\"id\":\"a1b2c3d4\",\"parentId\":null,\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hello {id}\"}}}}\n"
        )
    };
    for i in 0..20 {
        let id = format!("0199a000-0000-7000-8000-{i:012}");
        std::fs::write(
            project.join(format!("2025-01-01T00-00-00-000Z_{id}.jsonl")),
            session(&id),
        )
        .unwrap();
    }
    let swap_id = "0199a000-0000-7000-8000-99999999aaaa";
    let target = project.join(format!("2025-01-02T00-00-00-000Z_{swap_id}.jsonl"));
    let reg = project.join("swap.reg");
    let fifo = project.join("swap.fifo");
    let tmp = project.join("swap.tmp");
    std::fs::write(&reg, session(swap_id)).unwrap();
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::fs::hard_link(&reg, &target).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps, target) = (stop.clone(), swaps.clone(), target.clone());
        std::thread::spawn(move || {
            // The target always exists: a new link to the other kind is
            // renamed over it.
            while !stop.load(Ordering::Relaxed) {
                for src in [&fifo, &reg] {
                    let _ = std::fs::remove_file(&tmp);
                    if std::fs::hard_link(src, &tmp).is_ok()
                        && std::fs::rename(&tmp, &target).is_ok()
                    {
                        swaps.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        })
    };

    let cache = dir.path().join("cache");
    let mut outcomes: HashMap<&str, (usize, usize)> = HashMap::new();
    for run in 0..200 {
        let mut cmd = arbor();
        cmd.env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&store);
        let what = match run % 4 {
            0 => {
                cmd.args(["list", "--all", "--json", "--no-index"]);
                "list --no-index"
            }
            1 => {
                cmd.args(["list", "--all", "--json"]);
                "list"
            }
            2 => {
                cmd.arg("index");
                "index"
            }
            _ => {
                cmd.arg("show").arg(&target);
                "show"
            }
        };
        let t = run_timeout(&mut cmd, LIMIT);
        let err = t.stderr_text();
        assert!(!err.contains("panicked"), "{what}: {err}");
        let ok = match what {
            "show" => check_outcome(what, &t),
            _ => {
                assert_eq!(t.status.code(), Some(0), "{what}: {err}");
                // The swapped file is a row or a skipped path with a reason,
                // never a silent gap.
                let name = target.file_name().unwrap().to_str().unwrap();
                let listed = t.stdout_text().contains(name);
                assert!(
                    what == "index" || listed || err.contains(name),
                    "{what}: the swapped file vanished silently: {err}"
                );
                what == "index" || listed
            }
        };
        let o = outcomes.entry(what).or_default();
        if ok {
            o.0 += 1;
        } else {
            o.1 += 1;
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    assert!(swaps.load(Ordering::Relaxed) > 100, "the file was swapped");
    eprintln!("outcomes (read, refused): {outcomes:?}");
}

/// A session whose message lines nest `depths[i]` deep (the line's own
/// object included), in a field the list row ignores or in `content`.
fn deep_session(dir: &Path, depths: &[(usize, bool)]) -> PathBuf {
    let project = dir.join("--tmp-deep--");
    std::fs::create_dir_all(&project).unwrap();
    let id = "0199a000-0000-7000-8000-00000000dee9";
    let mut lines = vec![format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/deep"}}"#
    )];
    let mut parent = "null".to_string();
    for (i, &(depth, in_content)) in depths.iter().enumerate() {
        let eid = format!("e{i:07}");
        let message = if in_content {
            // message (2) → content array (3) → …
            let k = depth - 2;
            format!(
                r#"{{"role":"user","content":{}"deep"{}}}"#,
                "[".repeat(k),
                "]".repeat(k)
            )
        } else {
            // message (2) → details (3) → …
            let k = depth - 2;
            format!(
                r#"{{"role":"user","content":"line {i}","details":{}{}}}"#,
                "[".repeat(k),
                "]".repeat(k)
            )
        };
        lines.push(format!(
            r#"{{"type":"message","id":"{eid}","parentId":{parent},"timestamp":"2025-01-01T00:00:0{}.000Z","message":{message}}}"#,
            i % 10
        ));
        parent = format!("\"{eid}\"");
    }
    let path = project.join(format!("2025-01-01T00-00-00-000Z_{id}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// Issue #11.7: `list` counted a message on a line nested deeper than
/// arbor reads (the list-row scanner skipped the deep part without a
/// limit) that `show` skips as unreadable. One depth rule for both: at the
/// limit both read the line, one deeper both skip it.
#[test]
fn list_and_show_agree_on_deeply_nested_lines() {
    use arbor_session::reader::MAX_DEPTH;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("sessions");
    let cases = [
        (3, false),
        (MAX_DEPTH, false),
        (MAX_DEPTH + 1, false),
        (MAX_DEPTH, true),
        (MAX_DEPTH + 1, true),
        (MAX_DEPTH * 3, false),
    ];
    let path = deep_session(&store, &cases);
    let readable = cases.iter().filter(|(d, _)| *d <= MAX_DEPTH).count();

    let shown = show(&path, true);
    assert!(check_outcome("show", &shown));
    let v: Value = serde_json::from_slice(&shown.stdout).unwrap();
    let entries = v["entries"].as_array().unwrap().len();
    assert_eq!(entries, readable, "show reads the lines within the limit");
    let plain = show(&path, false);
    assert!(
        plain.stderr_text().contains(&format!(
            "{} unreadable lines skipped",
            cases.len() - readable
        )),
        "{}",
        plain.stderr_text()
    );
    let cache = dir.path().join("cache");
    for extra in [&["--no-index"][..], &[], &[]] {
        let t = run_timeout(
            arbor()
                .env("ARBOR_CACHE_DIR", &cache)
                .arg("--store")
                .arg(&store)
                .args(["list", "--all", "--json"])
                .args(extra),
            LIMIT,
        );
        let row: Value = serde_json::from_slice(&t.stdout).unwrap();
        assert_eq!(
            row["messageCount"].as_u64(),
            Some(readable as u64),
            "list {extra:?} counts what show reads"
        );
    }
}

/// Issue #11.7: a file whose only problem is invalid UTF-8 said
/// "(0 unreadable lines skipped)". It says what it is.
#[test]
fn invalid_utf8_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("--tmp-lossy--");
    std::fs::create_dir_all(&project).unwrap();
    let path = project.join("2025-01-01T00-00-00-000Z_0199a000-0000-7000-8000-0000000000ff.jsonl");
    let mut bytes = br#"{"type":"session","version":3,"id":"0199a000-0000-7000-8000-0000000000ff","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/lossy"}"#.to_vec();
    bytes.extend_from_slice(b"\n");
    bytes.extend_from_slice(br#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"caf"#);
    bytes.extend_from_slice(b"\xe9 au lait\"}}\n");
    std::fs::write(&path, &bytes).unwrap();
    let t = show(&path, false);
    assert!(check_outcome("show", &t));
    let err = t.stderr_text();
    assert!(!err.contains("0 unreadable"), "{err}");
    assert_eq!(
        err.trim(),
        "(1 line not valid UTF-8 (invalid bytes shown as \u{fffd}))"
    );
    assert!(t.stdout_text().contains("caf\u{fffd} au lait"));
}
