//! `arbor labels` and `arbor stats` against figures worked out by hand, on
//! the demo store and on small fixtures; through the index (cold, warm and
//! after appends) and with `--no-index`, which must agree.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{arbor, demo_store, find_session, run, run_ok};
use arbor_session::extras::{LabelText, LABEL_TEXT_CHARS};
use arbor_session::render::{collect_tool_calls, entry_text};
use arbor_session::{read_session, scan_info, SessionTree};

/// `arbor` with its own index in `cache` and the store `store`.
fn cmd(store: &Path, cache: &Path) -> Command {
    let mut c = arbor();
    c.env("ARBOR_CACHE_DIR", cache).arg("--store").arg(store);
    c
}

fn lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

// ------------------------------------------------------------------ labels

#[test]
fn labels_of_the_demo_store() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let cache = tempfile::tempdir().unwrap();
    let webapp = find_session(&store, "01a1fd62");
    // By hand, from the file: four label lines — `wip` on ece135bc (later
    // cleared by a label line without `label`), `checkpoint` on c856cfd2
    // at 09:21:20.860 and on 7ea66ad8 at 09:22:19.223. Newest first.
    let want = [
        serde_json::json!({
            "path": webapp.to_string_lossy(),
            "sessionId": "01a1fd62-68b4-7718-a139-873a95bd447e",
            "entryId": "7ea66ad8",
            "label": "checkpoint",
            "labelTime": "2026-11-21T09:22:19.223Z",
            "text": "assistant: Committed as `3f9c2a1` on `fix/flaky-auth-test` (2 files changed).",
            "host": null,
        }),
        serde_json::json!({
            "path": webapp.to_string_lossy(),
            "sessionId": "01a1fd62-68b4-7718-a139-873a95bd447e",
            "entryId": "c856cfd2",
            "label": "checkpoint",
            "labelTime": "2026-11-21T09:21:20.860Z",
            "text": "assistant: Fixed. Summary: - `src/auth/session.ts`: `SessionOptions.now?: () => number` (defaults to `Date.now`), used …",
            "host": null,
        }),
    ];
    let cold = run_ok(cmd(&store, cache.path()).args(["labels", "--all", "--json"]));
    assert_eq!(lines(&cold), want);
    let warm = run_ok(cmd(&store, cache.path()).args(["labels", "--all", "--json"]));
    assert_eq!(warm, cold);
    let plain = run_ok(cmd(&store, cache.path()).args(["--no-index", "labels", "--all", "--json"]));
    assert_eq!(plain, cold);
    // The table: one line per label, the same order.
    let table = run_ok(cmd(&store, cache.path()).args(["labels", "--all"]));
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert!(rows[0].starts_with("TIME (UTC)"));
    assert!(rows[1].starts_with(
        "2026-11-21 09:22  checkpoint  01a1fd62  7ea66ad8  Atomic  assistant: Committed"
    ));
    assert!(rows[2].starts_with(
        "2026-11-21 09:21  checkpoint  01a1fd62  c856cfd2  Atomic  assistant: Fixed."
    ));
    // Another project's folder: none.
    let none = run_ok(cmd(&store, cache.path()).args([
        "labels",
        "--json",
        "--cwd",
        "/home/demo/projects/pyledger",
    ]));
    assert_eq!(none, "");
}

/// Labels set, renamed and cleared after the index was built are read from
/// the appended bytes alone, and the labelled entries' text is found in
/// the part of the file read before (a tool result is named after its call).
#[test]
fn labels_follow_appends_through_the_index() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let cache = tempfile::tempdir().unwrap();
    let path = find_session(&store, "01a20947");
    let index_json = |args: &[&str]| run_ok(cmd(&store, cache.path()).args(args));
    assert_eq!(
        index_json(&["labels", "--all", "--json"]).lines().count(),
        2
    );
    // Entries of this session: its first user message and a tool result.
    let s = read_session(&path).unwrap();
    let user = s.entries.iter().find(|e| e.role() == Some("user")).unwrap();
    let result = s
        .entries
        .iter()
        .find(|e| e.role() == Some("toolResult"))
        .unwrap();
    let session = path.to_str().unwrap();
    for (entry, label) in [
        (user.id.as_str(), "start"),
        (result.id.as_str(), "the listing"),
        (user.id.as_str(), "start, renamed"),
    ] {
        run_ok(arbor().args(["label", session, entry, label]));
    }
    let after = index_json(&["labels", "--all", "--json"]);
    let plain = index_json(&["--no-index", "labels", "--all", "--json"]);
    assert_eq!(after, plain);
    let got = lines(&after);
    let mine: Vec<(&str, &str, &str)> = got
        .iter()
        .filter(|v| v["path"] == session)
        .map(|v| {
            (
                v["entryId"].as_str().unwrap(),
                v["label"].as_str().unwrap(),
                v["text"].as_str().unwrap(),
            )
        })
        .collect();
    let calls = collect_tool_calls(&s.entries);
    let text = |e| shorten(&entry_text(e, &calls));
    assert_eq!(mine.len(), 2, "{mine:?}");
    // Both set within the same second: same label time order is by entry.
    let by_entry = |id: &str| mine.iter().find(|m| m.0 == id).copied().unwrap();
    assert_eq!(by_entry(&result.id).1, "the listing");
    assert_eq!(by_entry(&result.id).2, text(result));
    assert!(by_entry(&result.id).2.starts_with("[read: "), "{mine:?}");
    assert_eq!(by_entry(&user.id).1, "start, renamed");
    assert_eq!(by_entry(&user.id).2, text(user));

    // Cleared: gone; a label on an entry the file lacks: shown nowhere.
    run_ok(arbor().args(["label", session, &result.id, "--clear"]));
    let text_now = std::fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text_now.lines().last().unwrap()).unwrap();
    let dangling = serde_json::json!({"type":"label","id":"dead0001","parentId":last["id"],
        "timestamp":"2026-12-01T00:00:00.000Z","targetId":"nosuchid","label":"lost"});
    std::fs::write(&path, format!("{text_now}{dangling}\n")).unwrap();
    let after = index_json(&["labels", "--all", "--json"]);
    assert_eq!(
        after,
        index_json(&["--no-index", "labels", "--all", "--json"])
    );
    let mine: Vec<String> = lines(&after)
        .iter()
        .filter(|v| v["path"] == session)
        .map(|v| v["label"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(mine, vec!["start, renamed"]);

    // Session text reaches the table sanitized; JSON keeps it exact.
    let text_now = std::fs::read_to_string(&path).unwrap();
    let evil = serde_json::json!({"type":"label","id":"dead0002","parentId":"dead0001",
        "timestamp":"2026-12-02T00:00:00.000Z","targetId":user.id,"label":"red\u{1b}[31m\u{9b}2J"});
    std::fs::write(&path, format!("{text_now}{evil}\n")).unwrap();
    let table = index_json(&["labels", "--all"]);
    assert!(common::terminal_controls(&table).is_empty(), "{table:?}");
    // Escape sequences go whole (docs/spec.md §6), as a terminal shows them.
    assert!(
        table.contains("  red  ") && !table.contains("[31m") && !table.contains("2J"),
        "{table}"
    );
    let json = index_json(&["labels", "--all", "--json"]);
    assert_eq!(lines(&json)[0]["label"], "red\u{1b}[31m\u{9b}2J");
}

/// On every file of the conformance corpus (labels renamed, cleared,
/// re-set, on labels, on missing targets, unicode, legacy files, duplicate
/// ids…) the scanner's labels are the tree's, with the /tree row text of
/// their entries.
#[test]
fn labels_are_the_trees_on_the_conformance_corpus() {
    let dir = common::conformance_corpus();
    let mut files = Vec::new();
    collect(&dir.path().join("corpus"), &mut files);
    let mut checked = 0;
    for f in &files {
        let (Ok(info), Ok(s)) = (scan_info(f), read_session(f)) else {
            continue;
        };
        let tree = SessionTree::build(&s);
        let calls = collect_tool_calls(&s.entries);
        let mut want: Vec<(String, String, Option<String>, String)> = tree
            .labels
            .iter()
            .filter_map(|(id, l)| {
                let e = &s.entries[tree.index_of(id)?];
                let t = shorten(&entry_text(e, &calls));
                Some((id.clone(), l.text.clone(), l.timestamp.clone(), t))
            })
            .collect();
        want.sort();
        let mut got: Vec<(String, String, Option<String>, String)> = info
            .labels
            .iter()
            .filter_map(|l| match &l.text {
                LabelText::Text(t) => Some((
                    l.entry_id.clone(),
                    l.label.clone(),
                    l.time.clone(),
                    t.clone(),
                )),
                LabelText::Missing => None,
                LabelText::Pending => panic!("{}: unresolved label", f.display()),
            })
            .collect();
        got.sort();
        assert_eq!(got, want, "{}", f.display());
        checked += want.len();
    }
    assert!(checked >= 10, "{checked}");
}

/// The row text as `arbor labels` gives it: one line, at most
/// `LABEL_TEXT_CHARS` characters.
fn shorten(t: &str) -> String {
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > LABEL_TEXT_CHARS {
        let mut c: String = t.chars().take(LABEL_TEXT_CHARS - 1).collect();
        c.push('…');
        c
    } else {
        t
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            collect(&e.path(), out);
        } else if ft.is_file() && e.path().extension().is_some_and(|x| x == "jsonl") {
            out.push(e.path());
        }
    }
}

// ------------------------------------------------------------------- stats

/// Two projects; round figures. Session A (/p/one): model m1 on
/// 2026-03-01 (two replies: 100/10/1000/5 tokens $0.50, then 200/20/0/0
/// $0.25), one reply of m2 on 2026-03-02 (1/2/3/4, $1) on an abandoned
/// branch, and a user message (not counted). Session B (/p/two, internal
/// workflow): m1 on 2026-03-09 (7/7/7/7, $2), and a reply without usage
/// or model at 2026-03-09.
fn stats_fixture(root: &Path) -> PathBuf {
    use serde_json::json;
    let usage = |i: u64, o: u64, r: u64, w: u64, c: f64| {
        json!({"input":i,"output":o,"cacheRead":r,"cacheWrite":w,"totalTokens":i+o+r+w,
               "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":c}})
    };
    let msg = |id: &str, parent: Option<&str>, ts: &str, m: serde_json::Value| json!({"type":"message","id":id,"parentId":parent,"timestamp":ts,"message":m});
    let a = vec![
        json!({"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-00000000000a",
               "timestamp":"2026-03-01T09:00:00.000Z","cwd":"/p/one"}),
        msg(
            "u1",
            None,
            "2026-03-01T09:00:01.000Z",
            json!({"role":"user","content":"hi","timestamp":1772355601000i64}),
        ),
        msg(
            "a1",
            Some("u1"),
            "2026-03-01T09:00:02.000Z",
            json!({"role":"assistant","model":"m1","content":[],"usage":usage(100,10,1000,5,0.5)}),
        ),
        msg(
            "a2",
            Some("a1"),
            "2026-03-01T23:59:59.000Z",
            json!({"role":"assistant","model":"m1","content":[],"usage":usage(200,20,0,0,0.25)}),
        ),
        msg(
            "a3",
            Some("u1"),
            "2026-03-02T00:00:00.000Z",
            json!({"role":"assistant","model":"m2","content":[],"usage":usage(1,2,3,4,1.0)}),
        ),
    ];
    let b = vec![
        json!({"type":"session","version":3,"id":"0199bbbb-0000-7000-8000-00000000000b",
               "timestamp":"2026-03-09T10:00:00.000Z","cwd":"/p/two","internal":true,
               "workflow":{"runId":"r","stageId":"s","stageName":"n"}}),
        msg(
            "b1",
            None,
            "2026-03-09T10:00:01.000Z",
            json!({"role":"assistant","model":"m1","content":[],"usage":usage(7,7,7,7,2.0)}),
        ),
        msg(
            "b2",
            Some("b1"),
            "2026-03-09T10:30:00.000Z",
            json!({"role":"assistant","content":[]}),
        ),
    ];
    let write = |folder: &str, name: &str, lines: &[serde_json::Value]| {
        let d = root.join(folder);
        std::fs::create_dir_all(&d).unwrap();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(d.join(name), text).unwrap();
    };
    write(
        "--p-one--",
        "2026-03-01T09-00-00-000Z_0199aaaa-0000-7000-8000-00000000000a.jsonl",
        &a,
    );
    write(
        "--p-two--",
        "2026-03-09T10-00-00-000Z_0199bbbb-0000-7000-8000-00000000000b.jsonl",
        &b,
    );
    root.to_path_buf()
}

fn stats_json(store: &Path, cache: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut c = cmd(store, cache);
    c.args(["stats", "--all", "--json"]).args(args);
    let out = lines(&run_ok(&mut c));
    let mut plain = cmd(store, cache);
    plain
        .args(["--no-index", "stats", "--all", "--json"])
        .args(args);
    assert_eq!(
        lines(&run_ok(&mut plain)),
        out,
        "--no-index agrees: {args:?}"
    );
    out
}

#[allow(clippy::too_many_arguments)]
fn row(
    group: &str,
    s: u64,
    m: u64,
    i: u64,
    o: u64,
    r: u64,
    w: u64,
    cost: f64,
) -> serde_json::Value {
    // A group's sessions are this machine's; the total names no host.
    if group == "total" {
        return serde_json::json!({"group":group,"sessions":s,"messages":m,"input":i,"output":o,
                       "cacheRead":r,"cacheWrite":w,"cost":cost});
    }
    serde_json::json!({"group":group,"host":null,"sessions":s,"messages":m,"input":i,"output":o,
                       "cacheRead":r,"cacheWrite":w,"cost":cost})
}

#[test]
fn stats_by_every_grouping_match_the_hand_sums() {
    let dir = tempfile::tempdir().unwrap();
    let store = stats_fixture(&dir.path().join("store"));
    let cache = tempfile::tempdir().unwrap();
    // Totals: 5 replies; input 100+200+1+7 = 308, output 10+20+2+7 = 39,
    // cache read 1000+3+7 = 1010, write 5+4+7 = 16, cost 0.5+0.25+1+2.
    let total = row("total", 2, 5, 308, 39, 1010, 16, 3.75);
    assert_eq!(
        stats_json(&store, cache.path(), &[]),
        vec![
            row("/p/two", 1, 2, 7, 7, 7, 7, 2.0),
            row("/p/one", 1, 3, 301, 32, 1003, 9, 1.75),
            total.clone(),
        ]
    );
    assert_eq!(
        stats_json(&store, cache.path(), &["--by", "model"]),
        vec![
            row("m1", 2, 3, 307, 37, 1007, 12, 2.75),
            row("m2", 1, 1, 1, 2, 3, 4, 1.0),
            row("(unknown)", 1, 1, 0, 0, 0, 0, 0.0),
            total.clone(),
        ]
    );
    assert_eq!(
        stats_json(&store, cache.path(), &["--by", "day"]),
        vec![
            row("2026-03-01", 1, 2, 300, 30, 1000, 5, 0.75),
            row("2026-03-02", 1, 1, 1, 2, 3, 4, 1.0),
            row("2026-03-09", 1, 2, 7, 7, 7, 7, 2.0),
            total.clone(),
        ]
    );
    // 2026-03-01 is a Sunday (ISO week 9), 03-02 a Monday (week 10).
    assert_eq!(
        stats_json(&store, cache.path(), &["--by", "week"]),
        vec![
            row("2026-W09", 1, 2, 300, 30, 1000, 5, 0.75),
            row("2026-W10", 1, 1, 1, 2, 3, 4, 1.0),
            row("2026-W11", 1, 2, 7, 7, 7, 7, 2.0),
            total.clone(),
        ]
    );
    assert_eq!(
        stats_json(&store, cache.path(), &["--by", "month"]),
        vec![row("2026-03", 2, 5, 308, 39, 1010, 16, 3.75), total.clone()]
    );
    // Since the second day: the first day's two replies are out.
    assert_eq!(
        stats_json(
            &store,
            cache.path(),
            &["--since", "2026-03-02", "--by", "model"]
        ),
        vec![
            row("m1", 1, 1, 7, 7, 7, 7, 2.0),
            row("m2", 1, 1, 1, 2, 3, 4, 1.0),
            row("(unknown)", 1, 1, 0, 0, 0, 0, 0.0),
            row("total", 2, 3, 8, 9, 10, 11, 3.0),
        ]
    );
    // To the hour: 23:59:59 is in the 23:00 hour, which ends after 23:30.
    assert_eq!(
        stats_json(
            &store,
            cache.path(),
            &["--since", "2026-03-01T23:30:00Z", "--by", "day"]
        )[0],
        row("2026-03-01", 1, 1, 200, 20, 0, 0, 0.25)
    );
    // One project (the current folder's, or --cwd).
    assert_eq!(
        run_ok(cmd(&store, cache.path()).args(["stats", "--json", "--cwd", "/p/one"])),
        format!(
            "{}\n{}\n",
            row("/p/one", 1, 3, 301, 32, 1003, 9, 1.75),
            row("total", 1, 3, 301, 32, 1003, 9, 1.75)
        )
    );
}

#[test]
fn stats_table_is_aligned_with_a_total_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = stats_fixture(&dir.path().join("store"));
    let cache = tempfile::tempdir().unwrap();
    let table = run_ok(cmd(&store, cache.path()).args(["stats", "--all", "--by", "model"]));
    assert_eq!(
        table,
        "\
model      agent   sessions  messages  input  output  cache read  cache write   cost
m1         Atomic         2         3    307      37       1,007           12  $2.75
m2         Atomic         1         1      1       2           3            4  $1.00
(unknown)  Atomic         1         1      0       0           0            0  $0.00
────────────────────────────────────────────────────────────────────────────────────
total      Atomic         2         5    308      39       1,010           16  $3.75
"
    );
    let e = run(cmd(&store, cache.path()).args(["stats", "--all", "--by", "year"]));
    assert!(!e.status.success());
    let e = run(cmd(&store, cache.path()).args(["stats", "--all", "--since", "soon"]));
    assert!(String::from_utf8_lossy(&e.stderr).contains("--since"));
}

/// Wide characters (a CJK project folder, a CJK first message) take two
/// cells: the tables of `stats`, `labels` and `list` line up in cells.
#[test]
fn tables_line_up_with_wide_characters() {
    use arbor::ui::text::width;
    let dir = tempfile::tempdir().unwrap();
    let store = stats_fixture(&dir.path().join("store"));
    let one =
        store.join("--p-one--/2026-03-01T09-00-00-000Z_0199aaaa-0000-7000-8000-00000000000a.jsonl");
    let text = std::fs::read_to_string(&one)
        .unwrap()
        .replace("/p/one", "/p/数据管道")
        .replace(r#""content":"hi""#, r#""content":"数据管道 hi""#);
    let label = r#"{"type":"label","id":"l1","parentId":"a3","timestamp":"2026-03-02T00:00:01.000Z","targetId":"a1","label":"检查点"}"#;
    std::fs::write(&one, format!("{text}{label}\n")).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let widths = |args: &[&str]| -> Vec<usize> {
        let out = run_ok(cmd(&store, cache.path()).args(args));
        out.lines()
            .filter(|l| !l.starts_with('─'))
            .map(width)
            .collect()
    };
    // Right-aligned last columns: every line as wide as the header.
    let stats = widths(&["stats", "--all"]);
    assert!(
        stats.len() >= 3 && stats.iter().all(|&w| w == stats[0]),
        "{stats:?}"
    );
    let out = run_ok(cmd(&store, cache.path()).args(["list", "--all", "--include-internal"]));
    assert!(out.contains("数据管道 hi"), "{out}");
    let at: Vec<usize> = out
        .lines()
        .map(|l| width(&l[..l.find("  0199").unwrap()]))
        .collect();
    assert!(at.len() == 2 && at[0] == at[1], "{at:?}\n{out}");
    let out = run_ok(cmd(&store, cache.path()).args(["labels", "--all"]));
    assert!(out.contains("检查点"), "{out}");
    let at: Vec<usize> = out
        .lines()
        .map(|l| width(&l[..l.find("SESSION").or_else(|| l.find("0199")).unwrap()]))
        .collect();
    assert!(at.len() == 2 && at[0] == at[1], "{at:?}\n{out}");
}

/// The demo store, summed by hand over every assistant message of its nine
/// files (abandoned branches included), each reply once: 84 replies,
/// 40,941 input, 14,654 output, 1,402,805 cache read, 126,436 cache write
/// tokens, $1.1692. (Its fork of the auth session holds 4 of that
/// session's replies, copied: 35/512/30,476/10,615 tokens, $0.0567.)
#[test]
fn stats_of_the_demo_store() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let cache = tempfile::tempdir().unwrap();
    let out = stats_json(&store, cache.path(), &["--by", "month"]);
    assert_eq!(out.len(), 2);
    let total = &out[1];
    assert_eq!(total["group"], "total");
    assert_eq!(
        (total["sessions"].as_u64(), total["messages"].as_u64()),
        (Some(9), Some(84))
    );
    assert_eq!(
        [
            &total["input"],
            &total["output"],
            &total["cacheRead"],
            &total["cacheWrite"]
        ],
        [40941, 14654, 1402805, 126436]
    );
    assert!((total["cost"].as_f64().unwrap() - 1.1691797).abs() < 1e-9);
    // The same money per session as the list row's total cost.
    let rows = lines(&run_ok(
        cmd(&store, cache.path()).args(["stats", "--all", "--json", "--by", "project"]),
    ));
    let sum: f64 = rows[..rows.len() - 1]
        .iter()
        .map(|r| r["cost"].as_f64().unwrap())
        .sum();
    assert!((sum - 1.1691797).abs() < 1e-9);
}

/// `arbor fork` copies the replies on the way to the fork point into a new
/// file; the money was spent once, so every grouping of `stats` is the same
/// after the fork as before it, through the index and without. Replies made
/// in the fork afterwards count; a fork whose parent is not counted (gone,
/// or outside the scope) counts its copies, once.
#[test]
fn stats_after_a_fork_equal_stats_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = stats_fixture(&dir.path().join("store"));
    let cache = tempfile::tempdir().unwrap();
    let groupings: [&[&str]; 5] = [
        &[],
        &["--by", "model"],
        &["--by", "day"],
        &["--by", "month"],
        &["--by", "project"],
    ];
    let before: Vec<_> = groupings
        .iter()
        .map(|g| stats_json(&store, cache.path(), g))
        .collect();
    // Only the fork's folder (its parent is in it too).
    let one = |cache: &Path| {
        lines(&run_ok(
            cmd(&store, cache).args(["stats", "--json", "--cwd", "/p/one"]),
        ))
    };
    let before_one = one(cache.path());
    let a = find_session(&store, "0199aaaa");
    // At a2: the path u1 → a1 → a2 is copied, two replies ($0.75).
    let out = run_ok(cmd(&store, cache.path()).arg("fork").arg(&a).arg("a2"));
    let fork = PathBuf::from(out.lines().next().unwrap().trim());
    assert!(fork.is_file(), "{out}");
    for (g, b) in groupings.iter().zip(&before) {
        assert_eq!(&stats_json(&store, cache.path(), g), b, "{g:?}");
    }
    assert_eq!(one(cache.path()), before_one);
    // The fork's parent gone: the fork's copies are the only ones left.
    std::fs::rename(&a, dir.path().join("moved.jsonl")).unwrap();
    let total = stats_json(&store, cache.path(), &[]);
    assert_eq!(total.last().unwrap()["cost"], 2.75, "{total:?}");
    // a1, a2 (copied), b1 and b2 (no usage, still a reply).
    assert_eq!(total.last().unwrap()["messages"], 4, "{total:?}");
    std::fs::rename(dir.path().join("moved.jsonl"), &a).unwrap();
    // A reply made in the fork after it was made counts.
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&fork)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let later =
        arbor_session::entry::parse_iso_ms(header["timestamp"].as_str().unwrap()).unwrap() + 1000;
    let reply = serde_json::json!({"type":"message","id":"f1","parentId":"a2",
        "timestamp": arbor_session::entry::format_iso_ms(later),
        "message":{"role":"assistant","model":"m1","content":[],"timestamp":later,
                   "usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,
                            "cost":{"total":0.125}}}});
    let mut text = std::fs::read_to_string(&fork).unwrap();
    text.push_str(&format!("{reply}\n"));
    std::fs::write(&fork, text).unwrap();
    let total = stats_json(&store, cache.path(), &[]);
    let was = before[0].last().unwrap();
    assert_eq!(
        total.last().unwrap()["messages"].as_u64(),
        was["messages"].as_u64().map(|m| m + 1)
    );
    assert_eq!(total.last().unwrap()["cost"], 3.875);
}

// ------------------------------------------------------------------ list

/// `arbor list` in a folder without sessions: nothing on stdout, status 0
/// as before, and a hint on stderr that `--all` lists the others.
#[test]
fn an_empty_list_says_that_all_lists_every_folder() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let cache = tempfile::tempdir().unwrap();
    let out = run(cmd(&store, cache.path()).args(["list", "--cwd", "/nowhere-arbor"]));
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err,
        "arbor: no sessions in /nowhere-arbor; --all lists every folder's\n"
    );
    // With a query: the same, said of the search.
    let out = run(cmd(&store, cache.path()).args([
        "list",
        "--cwd",
        "/nowhere-arbor",
        "--json",
        "--query",
        "auth",
    ]));
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("matches; --all searches every folder"),
        "{out:?}"
    );
    // `labels` and `stats` say it too (their output as before).
    for (cmd_name, what) in [
        ("labels", "--all lists every folder's labels"),
        ("stats", "--all counts every folder's"),
    ] {
        let out = run(cmd(&store, cache.path()).args([cmd_name, "--cwd", "/nowhere-arbor"]));
        assert!(out.status.success());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("arbor: no sessions in /nowhere-arbor; {what}\n")
        );
    }
    // `trash --older-than` too (nothing moved, status 0).
    let out = run(cmd(&store, cache.path()).args([
        "trash",
        "--older-than",
        "1d",
        "--dry-run",
        "--cwd",
        "/nowhere-arbor",
    ]));
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "No sessions match.\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "arbor: no sessions in /nowhere-arbor; --all looks in every folder\n"
    );
    // `search` too (status 1: nothing matched).
    let out = run(cmd(&store, cache.path()).args(["search", "--cwd", "/nowhere-arbor", "auth"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "arbor: no sessions in /nowhere-arbor; --all searches every folder\n"
    );
    // Sessions listed (or --all): no hint.
    let out = run(cmd(&store, cache.path()).args(["list", "--all"]));
    assert!(!out.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
