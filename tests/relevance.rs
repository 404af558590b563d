//! Issue #54: sessions matched by a query are listed in Atomic's relevance
//! order (its `session-selector-search.ts`): the ordering cases of its
//! `session-selector-search.test.ts`, with the same inputs and expected
//! orders, through the picker's update loop and `arbor list --query`; and
//! the session named exactly by a phrase first, above sessions that only
//! say the words in a reply.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::common::{arbor, drive};
use arbor::ui::picker::{Row, Sort};
use arbor::ui::{App, AppEvent, Effect, Outcome};
use arbor_session::info::scan_info;
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

const CWD: &str = "/home/dev/rank";
/// 2026-02-01T00:00:00Z, after every session below.
const NOW: i64 = 1_769_904_000_000;

/// One session as Atomic's test makes it: an id, a name, when it was
/// last modified (a day of January 2026) and its messages' text.
struct Session<'a> {
    id: &'a str,
    name: Option<&'a str>,
    day: u32,
    /// The user's message, then the replies (`reply:` text) and tool
    /// output (`output:` text).
    messages: &'a [&'a str],
}

/// Writes the sessions into a fresh store; their paths by id.
fn store(sessions: &[Session]) -> (tempfile::TempDir, Vec<(String, PathBuf)>) {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("--home-dev-rank--");
    std::fs::create_dir_all(&folder).unwrap();
    let mut paths = Vec::new();
    for (n, s) in sessions.iter().enumerate() {
        // Atomic's ids are UUIDs: all of one length, so a name or a first
        // message starts at the same place in every session's text.
        let id = format!("0199{n:04x}-0000-7000-8000-{:0>12}", s.id.len());
        let ts = |m: u32| format!("2026-01-{:02}T00:{m:02}:00.000Z", s.day);
        let mut lines = vec![
            serde_json::json!({"type": "session", "version": 3, "id": id,
            "timestamp": ts(0), "cwd": CWD}),
        ];
        let mut parent = serde_json::Value::Null;
        for (i, m) in s.messages.iter().enumerate() {
            let eid = format!("e{i}");
            let message = if let Some(text) = m.strip_prefix("reply:") {
                serde_json::json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
            } else if let Some(text) = m.strip_prefix("output:") {
                serde_json::json!({"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                    "content": [{"type": "text", "text": text}]})
            } else {
                serde_json::json!({"role": "user", "content": m})
            };
            lines.push(
                serde_json::json!({"type": "message", "id": eid, "parentId": parent,
                "timestamp": ts(1 + i as u32), "message": message}),
            );
            parent = serde_json::Value::String(eid);
        }
        if let Some(name) = s.name {
            lines.push(
                serde_json::json!({"type": "session_info", "id": "n1", "parentId": parent,
                "timestamp": ts(50), "name": name}),
            );
        }
        let path = folder.join(format!("2026-01-{:02}T00-00-00-000Z_{id}.jsonl", s.day));
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        paths.push((s.id.to_string(), path));
    }
    (dir, paths)
}

fn ids_of(paths: &[(String, PathBuf)], got: &[PathBuf]) -> Vec<String> {
    got.iter()
        .map(|p| {
            paths
                .iter()
                .find(|(_, q)| q == p)
                .map_or_else(|| format!("? {}", p.display()), |(id, _)| id.clone())
        })
        .collect()
}

/// The picker on the store, every row loaded (rows read from the files,
/// as without the index).
fn picker(root: &Path) -> App {
    let (files, _) = list_session_files(
        &StoreConfig::single(root, StoreKind::PerProject),
        &Scope::All,
    );
    let rows: Vec<Row> = files
        .iter()
        .map(|f| Row::new(scan_info(&f.path).unwrap()))
        .collect();
    let mut app = App::new(CWD.into(), NOW);
    app.width = 100;
    app.height = 30;
    app.print_mode = true;
    drive(&mut app, AppEvent::Rows(rows));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    app
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    drive(app, AppEvent::Key(KeyEvent::new(code, mods)))
}

fn set_query(app: &mut App, q: &str) {
    while !app.picker.search.query.text().is_empty() {
        press(app, KeyCode::Backspace, KeyModifiers::NONE);
    }
    for c in q.chars() {
        press(app, KeyCode::Char(c), KeyModifiers::NONE);
    }
}

fn set_sort(app: &mut App, sort: Sort) {
    while app.picker.settings.sort != sort {
        press(app, KeyCode::Char('s'), KeyModifiers::CONTROL);
    }
}

fn listed(app: &App) -> Vec<PathBuf> {
    app.picker
        .list
        .visible
        .iter()
        .map(|v| app.picker.list.rows[v.idx].info.path.to_path_buf())
        .collect()
}

/// `arbor list --query` (with the index, or without).
fn cli_list(root: &Path, q: &str, no_index: bool) -> Vec<PathBuf> {
    let cache = tempfile::tempdir().unwrap();
    let mut cmd = arbor();
    cmd.env("ARBOR_CACHE_DIR", cache.path())
        .arg("--store")
        .arg(root)
        .args(["list", "--all", "--json", "--query", q]);
    if no_index {
        cmd.arg("--no-index");
    }
    let out = cmd.output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            PathBuf::from(v["path"].as_str().unwrap())
        })
        .collect()
}

/// The order of the sessions `q` lists in the picker under `sort`, and
/// (for the relevance order) in `arbor list --query`, with the index and
/// without: the ids.
fn order(sessions: &[Session], q: &str, sort: Sort) -> Vec<String> {
    let (dir, paths) = store(sessions);
    let mut app = picker(dir.path());
    set_sort(&mut app, sort);
    set_query(&mut app, q);
    let got = ids_of(&paths, &listed(&app));
    if sort != Sort::Recent {
        for no_index in [false, true] {
            let cli = ids_of(&paths, &cli_list(dir.path(), q, no_index));
            assert_eq!(cli, got, "arbor list --query {q} (no index: {no_index})");
        }
    }
    got
}

#[test]
fn a_quoted_phrase_collapses_whitespace() {
    let sessions = [
        Session {
            id: "a",
            name: None,
            day: 1,
            messages: &["node\n\n   cve was discussed"],
        },
        Session {
            id: "b",
            name: None,
            day: 2,
            messages: &["node something else"],
        },
    ];
    assert_eq!(order(&sessions, "\"node cve\"", Sort::Recent), ["a"]);
}

#[test]
fn a_regex_is_case_insensitive() {
    let sessions = [
        Session {
            id: "a",
            name: None,
            day: 2,
            messages: &["Brave is great"],
        },
        Session {
            id: "b",
            name: None,
            day: 3,
            messages: &["bravery is not the same"],
        },
    ];
    assert_eq!(order(&sessions, "re:\\bbrave\\b", Sort::Recent), ["a"]);
}

#[test]
fn recent_keeps_the_newest_first_order() {
    let sessions = [
        Session {
            id: "newer",
            name: None,
            day: 3,
            messages: &["brave"],
        },
        Session {
            id: "older",
            name: None,
            day: 1,
            messages: &["brave"],
        },
        Session {
            id: "nomatch",
            name: None,
            day: 4,
            messages: &["something else"],
        },
    ];
    assert_eq!(
        order(&sessions, "\"brave\"", Sort::Recent),
        ["newer", "older"]
    );
}

/// Atomic's "relevance sort orders by score and tie-breaks by modified
/// desc"; its "threaded" sort with a query orders the same.
#[test]
fn relevance_orders_by_score_then_newest() {
    let sessions = [
        Session {
            id: "late",
            name: None,
            day: 3,
            messages: &["xxxx brave"],
        },
        Session {
            id: "early",
            name: None,
            day: 1,
            messages: &["brave xxxx"],
        },
    ];
    for sort in [Sort::Relevance, Sort::Threaded] {
        assert_eq!(order(&sessions, "\"brave\"", sort), ["early", "late"]);
    }
    let ties = [
        Session {
            id: "newer",
            name: None,
            day: 3,
            messages: &["brave"],
        },
        Session {
            id: "older",
            name: None,
            day: 1,
            messages: &["brave"],
        },
    ];
    for sort in [Sort::Relevance, Sort::Threaded] {
        assert_eq!(order(&ties, "\"brave\"", sort), ["newer", "older"]);
    }
}

#[test]
fn an_invalid_regex_lists_nothing() {
    let sessions = [Session {
        id: "a",
        name: None,
        day: 1,
        messages: &["brave"],
    }];
    assert!(order(&sessions, "re:(", Sort::Recent).is_empty());
    assert!(order(&sessions, "re:(", Sort::Relevance).is_empty());
}

/// Atomic's name filter cases (Ctrl+N in the picker, `is:named` in the
/// query language). Atomic lists the sessions in the order it is given
/// them, which its loader gives newest first, as arbor lists them.
#[test]
fn the_name_filter_applies_before_the_query() {
    let sessions = [
        Session {
            id: "named1",
            name: Some("My Project"),
            day: 3,
            messages: &["blueberry"],
        },
        Session {
            id: "named2",
            name: Some("Another Named"),
            day: 2,
            messages: &["blueberry"],
        },
        Session {
            id: "other1",
            name: None,
            day: 4,
            messages: &["blueberry"],
        },
        Session {
            id: "other2",
            name: None,
            day: 1,
            messages: &["blueberry"],
        },
    ];
    let (dir, paths) = store(&sessions);
    let mut app = picker(dir.path());
    set_sort(&mut app, Sort::Recent);
    assert_eq!(
        ids_of(&paths, &listed(&app)),
        ["other1", "named1", "named2", "other2"]
    );
    press(&mut app, KeyCode::Char('n'), KeyModifiers::CONTROL);
    assert!(app.picker.settings.named_only);
    assert_eq!(ids_of(&paths, &listed(&app)), ["named1", "named2"]);
    set_query(&mut app, "blueberry");
    assert_eq!(ids_of(&paths, &listed(&app)), ["named1", "named2"]);
    assert_eq!(
        ids_of(&paths, &cli_list(dir.path(), "blueberry is:named", true)),
        ["named1", "named2"]
    );

    // Blank names are no names.
    let blank = [
        Session {
            id: "whitespace",
            name: Some("   "),
            day: 1,
            messages: &["test"],
        },
        Session {
            id: "empty",
            name: Some(""),
            day: 2,
            messages: &["test"],
        },
        Session {
            id: "named",
            name: Some("Real Name"),
            day: 3,
            messages: &["test"],
        },
    ];
    let (dir, paths) = store(&blank);
    let mut app = picker(dir.path());
    press(&mut app, KeyCode::Char('n'), KeyModifiers::CONTROL);
    assert_eq!(ids_of(&paths, &listed(&app)), ["named"]);
}

const PHRASE: &str = "A: truncate deleted markdown edit";

/// The case: the session named exactly by the phrase is listed
/// first and Enter picks it, above newer sessions that only say the
/// words in a reply or a tool's output; a session whose first message
/// starts with them ties with it (the name and the first message both
/// start right after the id), the newer first.
#[test]
fn the_session_named_by_a_phrase_ranks_first() {
    let reply = format!("reply:Looking at it: {PHRASE} is what the handler does.");
    let output = format!("output:log: {PHRASE}");
    let sessions = [
        Session {
            id: "first-message",
            name: None,
            day: 1,
            messages: &[&format!("{PHRASE} happens when I undo"), "reply:ok"],
        },
        Session {
            id: "named",
            name: Some(PHRASE),
            day: 2,
            messages: &["the edit handler again", "reply:I will look"],
        },
        Session {
            id: "reply1",
            name: None,
            day: 5,
            messages: &["what does the markdown code do", &reply],
        },
        Session {
            id: "reply2",
            name: None,
            day: 6,
            messages: &["check the edits", &reply],
        },
        Session {
            id: "reply3",
            name: Some("markdown work"),
            day: 7,
            messages: &["and now?", &reply],
        },
        Session {
            id: "output",
            name: None,
            day: 8,
            messages: &["run the tests", "reply:running", &output],
        },
    ];
    let want = [
        "named",
        "first-message",
        "reply3",
        "reply2",
        "reply1",
        "output",
    ];
    let q = format!("\"{PHRASE}\"");
    for sort in [Sort::Threaded, Sort::Relevance] {
        assert_eq!(order(&sessions, &q, sort), want, "{sort:?}");
    }
    // Enter picks it.
    let (dir, paths) = store(&sessions);
    let mut app = picker(dir.path());
    set_query(&mut app, &q);
    assert_eq!(
        press(&mut app, KeyCode::Enter, KeyModifiers::NONE),
        vec![Effect::Exit(Outcome::Print(paths[1].1.clone()))]
    );
    // `arbor search` prints the sessions' entries in the same order (the
    // named session has no entry that says it).
    let out = arbor()
        .env("ARBOR_CACHE_DIR", tempfile::tempdir().unwrap().path())
        .arg("--store")
        .arg(dir.path())
        .args(["search", "--all", "--json", "--", &q])
        .output()
        .unwrap();
    let mut sessions_seen: Vec<PathBuf> = Vec::new();
    for l in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let p = PathBuf::from(v["path"].as_str().unwrap());
        if sessions_seen.last() != Some(&p) {
            sessions_seen.push(p);
        }
    }
    assert_eq!(ids_of(&paths, &sessions_seen), &want[1..]);

    // A word typed rather than quoted: the name's words, in Atomic's
    // fuzzy order, still put the named session first.
    assert_eq!(order(&sessions, "truncate", Sort::Threaded)[0], "named");
}
