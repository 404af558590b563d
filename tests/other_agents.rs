//! Claude Code and Codex sessions beside Atomic's (#17), on the hand-written
//! fixture stores in `tests/fixtures/agents` (real-shaped lines, with the
//! less common records, compactions, a rewind branch, a sidechain, broken
//! and cut-off lines): where arbor finds them, their rows, trees and
//! context, `--agent`, refused writes, the picker and the tree on them, and
//! resuming them with their own commands.
//!
//! Where each expected value comes from is said beside it: the rules are
//! those of `src/session/foreign.rs` (its module comment says why each is
//! the agent's own).

use crate::common;

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::Value;

use crate::common::{arbor, run, run_ok};
use arbor::ui::picker::Row;
use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect, Mode, Outcome};
use arbor_session::{build_context, read_session, Agent, ContextFlavor, SessionTree};
use arbor_store::{list_session_files, Scope, StoreConfig};

const NOW: i64 = 1_795_953_600_000;
const CLAUDE_ID: &str = "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70";
const CLAUDE_OTHER_ID: &str = "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4";
const CODEX_ID: &str = "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5";
const CODEX_OLD_ID: &str = "5973b6c0-94b8-487b-a530-2aeb6098ae0e";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents")
}

/// A home with the fixture stores where the agents keep them
/// (`~/.claude/projects`, `~/.codex/sessions`) and an empty Atomic store.
fn home() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    common::copy_dir(&fixtures().join("claude"), &d.path().join(".claude"));
    common::copy_dir(&fixtures().join("codex"), &d.path().join(".codex"));
    std::fs::create_dir_all(d.path().join(".atomic/agent/sessions")).unwrap();
    d
}

fn claude_file(home: &Path) -> PathBuf {
    home.join(format!(".claude/projects/-home-u-proj/{CLAUDE_ID}.jsonl"))
}

fn codex_file(home: &Path) -> PathBuf {
    home.join(format!(
        ".codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-{CODEX_ID}.jsonl"
    ))
}

fn at_home(home: &Path) -> std::process::Command {
    let mut c = arbor();
    c.env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env("ARBOR_CACHE_DIR", home.join("cache"));
    c
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn row<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {rows:#?}"))
}

#[test]
fn rows_of_claude_code_and_codex_sessions() {
    let h = home();
    let out = run_ok(at_home(h.path()).args(["list", "--all", "--json", "--no-index"]));
    let rows = json_lines(&out);
    // Four sessions: `agent-*.jsonl` is a sub-agent's transcript, not a session.
    assert_eq!(rows.len(), 4, "{out}");

    let c = row(&rows, CLAUDE_ID);
    assert_eq!(c["agent"], "claude");
    // The id is the file's name (what `claude --resume` takes); the cwd the
    // first recorded one.
    assert_eq!(c["cwd"], "/home/u/proj");
    // The last `custom-title` (`/rename`) wins over the `summary` line.
    assert_eq!(c["name"], "Parser counts from zero");
    // Not the isMeta caveat, not the `/model` command wrapper: the first
    // prompt typed.
    assert_eq!(c["firstMessage"], "Fix the failing parser test");
    // user/assistant/tool-result entries on every branch, sidechain left
    // out: 3 (first branch's user, 2 assistant lines) + 1 result + 1 Task
    // call + 1 result + 1 reply + rewind (user, reply) + after the
    // compaction (user, reply) = 11.
    assert_eq!(c["messageCount"], 11);
    // The first line's time, the newest message's time.
    assert_eq!(c["created"], "2025-11-02T09:00:00.000Z");
    assert_eq!(c["modified"], "2025-11-02T09:06:30.000Z");
    // One broken line in the middle, one cut off at the end (both
    // skipped, as in an Atomic file).
    assert_eq!(c["diagnostics"]["skippedLines"], 2);
    assert_eq!(c["diagnostics"]["partialTail"], true);

    let o = row(&rows, CLAUDE_OTHER_ID);
    assert_eq!(
        (o["name"].clone(), o["messageCount"].clone()),
        (Value::Null, 2.into())
    );
    assert_eq!(o["firstMessage"], "What does this repo do?");

    let x = row(&rows, CODEX_ID);
    assert_eq!(x["agent"], "codex");
    assert_eq!(x["cwd"], "/home/u/calc");
    // `thread_name_updated` names the thread.
    assert_eq!(x["name"], "Arithmetic check");
    // Not the AGENTS.md or <environment_context> injections.
    assert_eq!(x["firstMessage"], "what is 2+2? check it with the shell");
    // response items only (event_msg duplicates them): 2 user, 2 replies,
    // reasoning, 2 calls, 2 outputs = 9.
    assert_eq!(x["messageCount"], 9);
    assert_eq!(x["created"], "2025-10-29T00:59:38.308Z");
    assert_eq!(x["diagnostics"]["skippedLines"], 2);

    // A rollout of the format before `{type, payload}`.
    let old = row(&rows, CODEX_OLD_ID);
    assert_eq!(old["firstMessage"], "rename the config module");
    assert_eq!(old["messageCount"], 2);
}

#[test]
fn the_index_gives_the_rows_a_scan_gives() {
    let h = home();
    let scan = run_ok(at_home(h.path()).args(["list", "--all", "--json", "--no-index"]));
    let first = run_ok(at_home(h.path()).args(["list", "--all", "--json"]));
    let warm = run_ok(at_home(h.path()).args(["list", "--all", "--json"]));
    assert_eq!(first, scan);
    assert_eq!(warm, scan);
    // Bodies are searchable through the index, in every agent's sessions.
    let hits = |q: &str| {
        json_lines(&run_ok(
            at_home(h.path()).args(["list", "--all", "--json", "--query", q]),
        ))
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
    };
    assert_eq!(hits("regression"), [CLAUDE_ID]);
    assert_eq!(hits("\"multiply it by 3\""), [CODEX_ID]);
    // A sidechain's text is not the session's.
    assert!(hits("SIDECHAIN").is_empty());
    assert_eq!(hits("agent:codex").len(), 2);
    // A grown file is read again whole.
    let f = claude_file(h.path());
    let mut text = std::fs::read_to_string(&f).unwrap();
    text.push_str("ude\"}}\n");
    text.push_str(&format!(
        "{{\"parentUuid\":\"a0000000-0000-4000-8000-000000000016\",\"isSidechain\":false,\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"zanzibar please\"}},\"uuid\":\"a0000000-0000-4000-8000-000000000099\",\"timestamp\":\"2025-11-02T09:08:00.000Z\",\"sessionId\":\"{CLAUDE_ID}\"}}\n"
    ));
    std::fs::write(&f, text).unwrap();
    assert_eq!(hits("zanzibar"), [CLAUDE_ID]);
    let rows = json_lines(&run_ok(at_home(h.path()).args(["list", "--all", "--json"])));
    assert_eq!(row(&rows, CLAUDE_ID)["messageCount"], 12);
}

#[test]
fn list_agent_claude_json_shape() {
    let h = home();
    let out = run_ok(at_home(h.path()).args(["list", "--all", "--json", "--agent", "claude"]));
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        let keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        let want = [
            "path",
            "id",
            "cwd",
            "name",
            "hasName",
            "created",
            "modified",
            "messageCount",
            "firstMessage",
            "parentSessionPath",
            "summary",
            "lastReply",
            "internal",
            "agent",
            "gitBranch",
        ];
        assert_eq!(&keys[..want.len()], want, "{r}");
        assert_eq!(r["agent"], "claude");
        // The newest `gitBranch` recorded (the session moved to a branch
        // after its compaction); an empty one is none.
        let branch = if r["id"] == CLAUDE_ID {
            Value::from("fix-parser")
        } else {
            Value::Null
        };
        assert_eq!(r["gitBranch"], branch, "{r}");
        if r["id"] == CLAUDE_ID {
            // The last assistant text in file order.
            assert_eq!(r["lastReply"], "Added tests/parser_zero.rs.");
        }
        assert!(r["path"]
            .as_str()
            .unwrap()
            .starts_with(h.path().to_str().unwrap()));
    }
    // Repeatable; unknown names are refused.
    let both = run_ok(at_home(h.path()).args([
        "list", "--all", "--json", "--agent", "claude", "--agent", "codex",
    ]));
    assert_eq!(json_lines(&both).len(), 4);
    // Codex's `session_meta.git.branch`.
    let codex = json_lines(&run_ok(
        at_home(h.path()).args(["list", "--all", "--json", "--agent", "codex"]),
    ));
    assert_eq!(row(&codex, CODEX_ID)["gitBranch"], "feature/mul");
    assert_eq!(row(&codex, CODEX_OLD_ID)["gitBranch"], "main");
    let bad = run(at_home(h.path()).args(["list", "--agent", "gemini"]));
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("atomic, pi, claude or codex"));
    // Sessions resolve by the ids in their file names.
    let shown = run_ok(at_home(h.path()).args(["show", &CODEX_ID[..13]]));
    assert!(shown.starts_with(CODEX_ID), "{shown}");
}

/// Claude Code's sub-agent runs (sidechains): `agent-<id>.jsonl` beside the
/// session and `<session id>/subagents/agent-<id>.jsonl` are internal
/// sessions of their session, hidden unless asked for
/// (`--include-internal`, Alt+I in the picker); Claude Code's own
/// compaction agent (`agent-acompact-…`) is left out.
#[test]
fn sidechains_are_hidden_unless_asked() {
    let h = home();
    let sub = h.path().join(format!(
        ".claude/projects/-home-u-proj/{CLAUDE_ID}/subagents/agent-a7c41d2.jsonl"
    ));
    let flat = h
        .path()
        .join(".claude/projects/-home-u-other/agent-3f2a9c1b.jsonl");
    for index in [false, true, true] {
        let args = |more: &[&'static str]| {
            let mut a = vec!["list", "--all", "--json", "--agent", "claude"];
            if !index {
                a.push("--no-index");
            }
            a.extend(more);
            a
        };
        let plain = json_lines(&run_ok(at_home(h.path()).args(args(&[]))));
        assert_eq!(plain.len(), 2, "{plain:#?}");
        assert!(plain.iter().all(|r| r["internal"] == false));
        let all = json_lines(&run_ok(
            at_home(h.path()).args(args(&["--include-internal"])),
        ));
        assert_eq!(all.len(), 4, "{all:#?}");
        let s = row(&all, "agent-a7c41d2");
        assert_eq!(s["internal"], true);
        assert_eq!(s["agent"], "claude");
        assert_eq!(s["path"], sub.to_str().unwrap());
        // Listed under its session (the threaded sort nests it there).
        assert_eq!(
            s["parentSessionPath"],
            claude_file(h.path()).to_str().unwrap()
        );
        assert_eq!(
            s["firstMessage"],
            "Search the tests for every place that counts tokens and report the file names."
        );
        assert_eq!(s["messageCount"], 4);
        assert_eq!(s["gitBranch"], "fix-parser");
        assert_eq!(
            s["lastReply"],
            "Two files count tokens: tests/lexer_tokens.rs and tests/parser_zero.rs."
        );
        let f = row(&all, "agent-3f2a9c1b");
        assert_eq!(f["path"], flat.to_str().unwrap());
        assert_eq!(
            f["parentSessionPath"],
            h.path()
                .join(format!(
                    ".claude/projects/-home-u-other/{CLAUDE_OTHER_ID}.jsonl"
                ))
                .to_str()
                .unwrap()
        );
        assert_eq!(f["firstMessage"], "Warmup");
        assert!(all
            .iter()
            .all(|r| !r["id"].as_str().unwrap().starts_with("agent-acompact")));
    }
    // Its tree and context read as any session's.
    let shown = run_ok(at_home(h.path()).args(["context", sub.to_str().unwrap()]));
    assert!(shown.contains("lexer_tokens.rs"), "{shown}");
    // In the picker: hidden, then Alt+I lists them under their session.
    let mut app = picker(h.path());
    assert!(!screen(&app).contains("[sub-agent]"));
    key(&mut app, KeyCode::Char('i'), KeyModifiers::ALT);
    let s = screen(&app);
    assert!(s.contains("└─ [sub-agent] Search the te"), "{s}");
    assert!(s.contains("└─ [sub-agent] Warmup"), "{s}");
    // Enter on a sub-agent run resumes its session (Claude Code resumes
    // sessions, not their sub-agents).
    key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    let fx = key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        fx,
        vec![Effect::Exit(Outcome::Resume {
            path: claude_file(h.path()),
            id: CLAUDE_ID.into(),
            cwd: "/home/u/proj".into(),
            agent: Agent::Claude,
        })]
    );
}

#[test]
fn stores_honour_claude_config_dir_and_codex_home() {
    let h = home();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = run_ok(
        at_home(elsewhere.path())
            .env("CLAUDE_CONFIG_DIR", h.path().join(".claude"))
            .env("CODEX_HOME", h.path().join(".codex"))
            .args(["list", "--all", "--json", "--no-index"]),
    );
    assert_eq!(json_lines(&out).len(), 4);
    // Absent stores are simply not there.
    let none = run_ok(at_home(elsewhere.path()).args(["list", "--all", "--json"]));
    assert_eq!(none, "");
}

/// Claude Code's tree: a rewind makes a branch, the newest line is the
/// active leaf, the sidechain is left out and the compaction keeps the tree
/// connected.
#[test]
fn claude_code_tree_and_context() {
    let h = home();
    let s = read_session(&claude_file(h.path())).unwrap();
    assert_eq!(s.foreign, Some(Agent::Claude));
    let tree = SessionTree::build(&s);
    let id = |n: u32| format!("a0000000-0000-4000-8000-{n:012}");
    assert!(
        s.entries.iter().all(|e| !e.id.starts_with("b0000000")),
        "sidechain"
    );
    let active: Vec<&str> = tree
        .on_active_path
        .iter()
        .enumerate()
        .filter(|(_, on)| **on)
        .map(|(i, _)| s.entries[i].id.as_str())
        .collect();
    // The rewound prompt (…10) and what follows it, through the compaction
    // (…13), up to the last reply (…16) and the title after it; the
    // progress line (…11) is not an entry; its child hangs from its parent.
    let mut want: Vec<String> = [1, 2, 10, 12, 13, 15, 16].iter().map(|&n| id(n)).collect();
    want.push(format!("{CLAUDE_ID}:title"));
    assert_eq!(active, want);
    let first = tree.index_of(&id(3)).unwrap();
    assert!(
        !tree.on_active_path[first],
        "the first attempt is a side branch"
    );
    assert_eq!(tree.parent.of(first), Some(tree.index_of(&id(2)).unwrap()));
    // The context at the leaf starts at the compaction's summary.
    let ctx = build_context(&s, &tree, tree.leaf, ContextFlavor::Atomic);
    let texts: Vec<String> = ctx.messages.iter().map(|m| format!("{m:?}")).collect();
    assert!(texts[0].contains("counts from zero"), "{texts:?}");
    assert!(!texts
        .iter()
        .any(|t| t.contains("without touching the lexer")));
    assert!(
        texts.last().unwrap().contains("parser_zero.rs"),
        "{texts:?}"
    );
}

/// A Codex rollout is one thread; `compacted` is where the context restarts.
#[test]
fn codex_rollout_is_a_linear_thread() {
    let h = home();
    let s = read_session(&codex_file(h.path())).unwrap();
    assert_eq!(s.foreign, Some(Agent::Codex));
    assert_eq!(s.header.id, CODEX_ID);
    let tree = SessionTree::build(&s);
    assert_eq!(tree.roots.len(), 1);
    for (i, p) in tree.parent.iter().enumerate().skip(1) {
        assert_eq!(p, Some(i - 1), "entry {i}");
    }
    assert!(tree.on_active_path.iter().all(|on| *on));
    let kinds: Vec<&str> = s.entries.iter().map(|e| e.entry_type()).collect();
    assert!(kinds.contains(&"compaction"), "{kinds:?}");
    let ctx = build_context(&s, &tree, tree.leaf, ContextFlavor::Atomic);
    let texts: Vec<String> = ctx.messages.iter().map(|m| format!("{m:?}")).collect();
    assert!(texts[0].contains("the shell said 4"), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("check it with the shell")));
}

#[test]
fn writes_are_refused_on_other_agents_files() {
    let h = home();
    let f = claude_file(h.path());
    let before = std::fs::read(&f).unwrap();
    let entry = "a0000000-0000-4000-8000-000000000016";
    for args in [
        vec!["label", CLAUDE_ID, entry, "x"],
        vec!["rename", CLAUDE_ID, "x"],
        vec!["branch", CLAUDE_ID, entry],
        vec!["fork", CLAUDE_ID, entry],
    ] {
        let out = run(at_home(h.path()).args(&args));
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("Claude Code session"), "{args:?}: {err}");
        assert!(
            err.contains("never writes into another agent's files"),
            "{err}"
        );
    }
    assert_eq!(std::fs::read(&f).unwrap(), before);
    let files = std::fs::read_dir(f.parent().unwrap())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_file())
        .count();
    assert_eq!(files, 1, "no fork file was written");
}

fn store(home: &Path) -> StoreConfig {
    struct Env(PathBuf);
    impl arbor_store::paths::Env for Env {
        fn var(&self, _: &str) -> Option<String> {
            None
        }
        fn home(&self) -> Option<PathBuf> {
            Some(self.0.clone())
        }
    }
    StoreConfig::resolve(None, None, &Env(home.to_path_buf()))
}

fn picker(home: &Path) -> App {
    let config = store(home);
    let (files, _) = list_session_files(&config, &Scope::All);
    let rows = files
        .iter()
        .map(|f| Row::new(arbor_store::listing::scan_file(f, true).unwrap()))
        .collect();
    let mut app = App::new("/home/u/proj".into(), NOW);
    app.width = 120;
    app.height = 14;
    app.store = config;
    app.update(AppEvent::Rows(rows));
    app.update(AppEvent::LoadFinished { problems: vec![] });
    key(&mut app, KeyCode::Tab, KeyModifiers::NONE);
    app
}

/// A key, with the search and preview it asks for performed and fed back.
fn key(app: &mut App, code: KeyCode, m: KeyModifiers) -> Vec<Effect> {
    common::drive(app, AppEvent::Key(KeyEvent::new(code, m)))
}

fn screen(app: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(t.backend().buffer())
}

#[test]
fn picker_with_mixed_agents() {
    let h = home();
    let mut app = picker(h.path());
    insta::assert_snapshot!("mixed_agents", screen(&app));
    // Rename says plainly it cannot; Enter resumes with the row's agent.
    let fx = key(&mut app, KeyCode::Char('r'), KeyModifiers::CONTROL);
    assert!(
        fx.iter().all(|e| !matches!(e, Effect::Rename { .. })),
        "{fx:?}"
    );
    let s = screen(&app);
    assert!(
        s.contains("Claude Code sessions cannot be renamed here"),
        "{s}"
    );
    let fx = key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert_eq!(
        fx,
        vec![Effect::Exit(Outcome::Resume {
            path: claude_file(h.path()),
            id: CLAUDE_ID.into(),
            cwd: "/home/u/proj".into(),
            agent: Agent::Claude,
        })]
    );
    // Delete goes to the trash (with undo) as for any session.
    let mut app = picker(h.path());
    key(&mut app, KeyCode::Char('d'), KeyModifiers::CONTROL);
    let mut fx = key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    if fx.is_empty() {
        // The copy is seconds old by the file's clock: asked again.
        fx = key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    }
    assert_eq!(fx, vec![Effect::Trash(claude_file(h.path()))]);
    // `agent:` in the query.
    let mut app = picker(h.path());
    for c in "agent:codex".chars() {
        key(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let ids: Vec<&str> = app
        .picker
        .list
        .visible
        .iter()
        .map(|v| app.picker.list.rows[v.idx].id())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.contains(&CODEX_ID));
}

#[test]
fn claude_code_tree_screen() {
    let h = home();
    let mut app = picker(h.path());
    let fx = key(&mut app, KeyCode::Char('t'), KeyModifiers::CONTROL);
    let mut queue = fx;
    while let Some(e) = queue.pop() {
        for ev in perform(e) {
            queue.extend(
                app.update(ev).into_iter().filter(|e| {
                    !matches!(e, Effect::Exit(_) | Effect::CloseTree | Effect::Copy(_))
                }),
            );
        }
    }
    let Mode::Tree(t) = &mut app.mode else {
        panic!("the tree did not open")
    };
    t.now_ms = NOW;
    app.height = 18;
    insta::assert_snapshot!("claude_tree", screen(&app));
    // Label and continue are refused, in a sentence.
    key(&mut app, KeyCode::Char('l'), KeyModifiers::ALT);
    assert!(screen(&app).contains("cannot be labelled here"));
    key(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(screen(&app).contains("cannot be branched or forked here"));
}

/// The words of every string in `v` (object keys and content blocks'
/// `type`s left out).
fn words_of(v: &Value, out: &mut std::collections::BTreeSet<String>) {
    match v {
        Value::String(s) => {
            // A JSON text inside a string (Codex's arguments and shell
            // output) holds its words as strings too.
            if let Ok(inner @ (Value::Object(_) | Value::Array(_))) =
                serde_json::from_str::<Value>(s)
            {
                return words_of(&inner, out);
            }
            for w in s.split(|c: char| !c.is_ascii_alphanumeric()) {
                if w.len() >= 4 && w.chars().any(|c| c.is_ascii_alphabetic()) {
                    out.insert(w.to_ascii_lowercase());
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| words_of(x, out)),
        Value::Object(o) => o
            .iter()
            .filter(|(k, _)| *k != "type")
            .for_each(|(_, x)| words_of(x, out)),
        _ => {}
    }
}

/// The words of a foreign file's tool calls (arguments) and tool outputs,
/// read from the agent's own lines (not through arbor): Claude Code's
/// `tool_use` inputs and `tool_result` contents, Codex's `function_call`
/// / `custom_tool_call` / `local_shell_call` and their outputs. Sidechain
/// lines are another session's.
fn tool_words(path: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    for l in std::fs::read_to_string(path).unwrap().lines() {
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(l) else {
            continue;
        };
        if o.get("isSidechain") == Some(&Value::Bool(true)) {
            continue;
        }
        if let Some(Value::Array(blocks)) = o.get("message").and_then(|m| m.get("content")) {
            for b in blocks {
                match b["type"].as_str() {
                    Some("tool_use") => {
                        words_of(&b["input"], &mut out);
                        words_of(&b["name"], &mut out);
                    }
                    Some("tool_result") => words_of(&b["content"], &mut out),
                    _ => {}
                }
            }
        }
        let p = &o.get("payload").cloned().unwrap_or(Value::Null);
        match p["type"].as_str() {
            Some("function_call") => {
                words_of(&p["arguments"], &mut out);
                words_of(&p["name"], &mut out);
            }
            Some("custom_tool_call") => {
                words_of(&p["input"], &mut out);
                words_of(&p["name"], &mut out);
            }
            Some("local_shell_call") => words_of(&p["action"], &mut out),
            Some("function_call_output" | "custom_tool_call_output") => {
                words_of(&p["output"], &mut out)
            }
            _ => {}
        }
    }
    out
}

/// `in:tools` finds other agents' tool calls and output, through the index
/// and without it: every word of a session's tool parts (the oracle reads
/// the agents' lines itself) finds that session, and nothing is found in a
/// file that does not hold the word at all (grep).
#[test]
fn tool_calls_and_output_of_other_agents_are_searchable() {
    let h = home();
    let sessions = [claude_file(h.path()), codex_file(h.path())];
    let mut checked = 0;
    for (i, path) in sessions.iter().enumerate() {
        let words = tool_words(path);
        assert!(words.len() > 5, "{words:?}");
        // A spread of them (each query is three runs of arbor).
        for w in words.iter().step_by(words.len() / 6 + 1) {
            let q = format!("in:tools {w}");
            let mut found = Vec::new();
            for no_index in [false, true] {
                let mut c = at_home(h.path());
                c.args(["list", "--all", "--json", "--query", &q]);
                if no_index {
                    c.arg("--no-index");
                }
                let paths: Vec<String> = json_lines(&run_ok(&mut c))
                    .iter()
                    .map(|r| r["path"].as_str().unwrap().to_string())
                    .collect();
                assert!(
                    paths.contains(&path.to_str().unwrap().to_string()),
                    "{q} (no index: {no_index}) did not find {path:?}: {paths:?}"
                );
                for p in &paths {
                    let text = std::fs::read_to_string(p).unwrap().to_ascii_lowercase();
                    assert!(text.contains(w.as_str()), "{q} found {p}");
                }
                found.push(paths);
            }
            assert_eq!(found[0], found[1], "{q}: index and files disagree");
            checked += 1;
        }
        // A word only in the conversation is not a tool part.
        let only_text = ["regression", "arithmetic"][i];
        assert!(!words.contains(only_text));
    }
    assert!(checked >= 8, "{checked}");
    // The sidechain's tool output is its own session's, not the parent's.
    let out = run_ok(at_home(h.path()).args([
        "list",
        "--all",
        "--json",
        "--query",
        "in:tools count_tokens",
    ]));
    assert!(out.is_empty(), "{out}");
}

/// The generator profiles (`bench/gen_agents.py`: real-shaped Claude Code
/// and Codex stores with their less common records, compactions, rewinds,
/// sub-agent runs in both layouts, malformed and cut-off lines) agree with
/// arbor's rows, read with the index (cold and warm) and without: every
/// session's id, cwd, title, first prompt, message count, git branch,
/// internal flag and diagnostics are what the generator wrote down.
#[test]
fn generated_stores_agree_with_their_manifest() {
    let d = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/gen_agents.py");
    let st = std::process::Command::new("python3")
        .arg(&script)
        .args([
            "--claude",
            "40",
            "--codex",
            "40",
            "--seed",
            "11",
            "--median-kb",
            "24",
        ])
        .arg("--out")
        .arg(d.path())
        .status()
        .expect("python3 runs the generator");
    assert!(st.success());
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("MANIFEST.json")).unwrap()).unwrap();
    let want = manifest["sessions"].as_array().unwrap();
    assert!(want.iter().any(|s| s["internal"] == true), "sub-agent runs");
    assert!(want.iter().any(|s| s["skippedLines"] != 0), "broken lines");
    for args in [vec!["--no-index"], vec![], vec![]] {
        let out = run_ok(
            at_home(d.path())
                .args(["list", "--all", "--json", "--include-internal"])
                .args(&args),
        );
        let rows = json_lines(&out);
        assert_eq!(rows.len(), want.len(), "{args:?}");
        for s in want {
            let r = rows
                .iter()
                .find(|r| r["path"] == s["path"])
                .unwrap_or_else(|| panic!("no row for {}", s["path"]));
            for k in [
                "id",
                "agent",
                "cwd",
                "name",
                "firstMessage",
                "messageCount",
                "gitBranch",
                "internal",
            ] {
                assert_eq!(r[k], s[k], "{k} of {} ({args:?})", s["path"]);
            }
            let diag = &r["diagnostics"];
            let skipped = diag["skippedLines"].as_u64().unwrap_or(0);
            assert_eq!(skipped, s["skippedLines"].as_u64().unwrap(), "{r}");
            assert_eq!(diag["partialTail"] == true, s["partialTail"] == true, "{r}");
        }
    }
    // Each generated session reads as a tree with a context.
    for s in want.iter().step_by(9) {
        let p = s["path"].as_str().unwrap();
        run_ok(at_home(d.path()).args(["context", p]));
        run_ok(at_home(d.path()).args(["show", p]));
    }
}

/// A big Claude Code session and a big Codex rollout: `lines` lines with a
/// tool output of about 4 KB each.
fn write_big_foreign(dir: &Path, lines: usize) -> (PathBuf, PathBuf) {
    use std::io::Write;
    let pad = "fn parse(input: &str) -> Result<Vec<Token>, Error> { Ok(Vec::new()) }\n".repeat(300);
    let claude = dir.join("claude.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&claude).unwrap());
    let mut parent = Value::Null;
    for i in 0..lines {
        let uuid = format!("u{i:08}");
        let base = serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "cwd": "/home/u/big",
            "sessionId": "big", "gitBranch": "main", "uuid": uuid,
            "timestamp": "2025-11-02T09:00:00.000Z",
        });
        let mut o = base.as_object().unwrap().clone();
        match i % 3 {
            0 => {
                o.insert("type".into(), "user".into());
                o.insert(
                    "message".into(),
                    serde_json::json!({"role": "user", "content": format!("question {i}: why")}),
                );
            }
            1 => {
                o.insert("type".into(), "assistant".into());
                o.insert("message".into(), serde_json::json!({"id": format!("msg_{i}"), "role": "assistant",
                    "content": [{"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": "cargo test"}}],
                    "usage": {"input_tokens": 1, "output_tokens": 1}}));
            }
            _ => {
                o.insert("type".into(), "user".into());
                o.insert("message".into(), serde_json::json!({"role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": format!("t{}", i - 1), "content": format!("answer {i}: {pad}")}]}));
            }
        }
        serde_json::to_writer(&mut f, &o).unwrap();
        f.write_all(b"\n").unwrap();
        parent = uuid.into();
    }
    f.flush().unwrap();
    let codex = dir.join("rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd6.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&codex).unwrap());
    writeln!(f, r#"{{"timestamp":"2025-10-29T00:59:38.317Z","type":"session_meta","payload":{{"id":"019a2d7a-41c4-78b1-b7cc-a45d62a89cd6","timestamp":"2025-10-29T00:59:38.308Z","cwd":"/home/u/big","git":{{"branch":"main"}}}}}}"#).unwrap();
    for i in 0..lines {
        let item = match i % 3 {
            0 => {
                serde_json::json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("question {i}: why")}]})
            }
            1 => {
                serde_json::json!({"type": "function_call", "name": "shell", "call_id": format!("c{i}"), "arguments": "{\"command\":[\"ls\"]}"})
            }
            _ => {
                serde_json::json!({"type": "function_call_output", "call_id": format!("c{}", i - 1), "output": format!("answer {i}: {pad}")})
            }
        };
        let o = serde_json::json!({"timestamp": "2025-10-29T01:00:00.000Z", "type": "response_item", "payload": item});
        serde_json::to_writer(&mut f, &o).unwrap();
        f.write_all(b"\n").unwrap();
    }
    f.flush().unwrap();
    (claude, codex)
}

/// Run by `big_foreign_sessions_read_in_bounded_memory` in a process of its
/// own (its memory is measured alone); does nothing otherwise.
#[cfg(target_os = "linux")]
#[test]
fn foreign_memory_child() {
    let Some(dir) = std::env::var_os("ARBOR_FOREIGN_MEMORY_CHILD") else {
        return;
    };
    let n: usize = std::env::var("ARBOR_FOREIGN_LINES")
        .unwrap()
        .parse()
        .unwrap();
    let dir = PathBuf::from(dir);
    let last = (0..n).rev().find(|i| i % 3 == 2).unwrap();
    let last_question = (0..n).rev().find(|i| i % 3 == 0).unwrap();
    for (name, agent) in [
        ("claude.jsonl", Agent::Claude),
        (
            "rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd6.jsonl",
            Agent::Codex,
        ),
    ] {
        let path = dir.join(name);
        // The preview: the last messages, and a match at the very end.
        let q = arbor_search::Query::parse(&format!("\"question {last_question}:\""));
        let p = arbor::ui::picker::load_preview(&path).unwrap();
        let limits = arbor::ui::picker::PreviewLimits::default();
        let (hits, _) = arbor::ui::picker::load_hits(&path, &q, &limits, &|| false)
            .unwrap()
            .unwrap();
        assert_eq!(hits.len(), 1, "{agent:?}");
        assert_eq!(p.last_messages.len(), 4, "{agent:?}");
        // The tree's lean read and the row.
        let s = arbor_session::reader::read_session_lean(&path).unwrap();
        assert_eq!(s.foreign, Some(agent));
        assert_eq!(s.entries.len(), n);
        let row = arbor_session::info::scan_foreign(&path, true)
            .unwrap()
            .unwrap();
        assert_eq!(row.message_count, n);
        assert_eq!(row.git_branch.as_deref(), Some("main"));
        // And the search without the index.
        let q = arbor_search::Query::parse(&format!("in:tools \"answer {last}:\""));
        assert!(arbor_search::hits::file_hits(&q, &[path]).is_some_and(|h| !h.is_empty()));
    }
    println!("max_rss_kb={}", common::max_rss_kb());
}

/// Another agent's session is never read whole into memory: the preview,
/// the tree's read, the row and the search of a pair of 64 MB files stay under
/// 64 MB of memory (reading them whole took more than the file's size).
#[cfg(target_os = "linux")]
#[test]
fn big_foreign_sessions_read_in_bounded_memory() {
    let lines = common::env_number("ARBOR_FOREIGN_LINES", 9_000);
    let dir = tempfile::tempdir().unwrap();
    let (claude, _) = write_big_foreign(dir.path(), lines);
    let size = std::fs::metadata(&claude).unwrap().len();
    let out = common::run_test_alone(
        "other_agents::foreign_memory_child",
        [
            (
                "ARBOR_FOREIGN_MEMORY_CHILD",
                dir.path().as_os_str().to_owned(),
            ),
            ("ARBOR_FOREIGN_LINES", lines.to_string().into()),
        ],
    );
    let kb = common::child_max_rss_kb(&out);
    eprintln!(
        "foreign sessions of {} MB each: max RSS {} MB",
        size >> 20,
        kb >> 10
    );
    assert!(kb < 64 << 10, "max RSS {kb} kB");
}

/// A warm listing takes an unchanged foreign file's row from the index, as
/// an Atomic file's, without reading the file: its bytes replaced by others
/// of the same length and time are not seen.
#[test]
fn a_warm_listing_does_not_read_unchanged_foreign_files() {
    let h = home();
    let first = run_ok(at_home(h.path()).args(["list", "--all", "--json"]));
    for f in [claude_file(h.path()), codex_file(h.path())] {
        let meta = std::fs::metadata(&f).unwrap();
        let len = meta.len() as usize;
        std::fs::write(&f, "x".repeat(len)).unwrap();
        let file = std::fs::File::options().write(true).open(&f).unwrap();
        file.set_modified(meta.modified().unwrap()).unwrap();
    }
    let warm = run_ok(at_home(h.path()).args(["list", "--all", "--json"]));
    assert_eq!(warm, first);
}
