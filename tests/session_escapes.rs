//! Escape sequences in session text are removed whole wherever the text is
//! drawn or printed (docs/spec.md §6): a session whose messages, tool
//! output, name and label hold SGR, OSC, DCS, APC and 8-bit C1 sequences
//! shows `✓ 42 passed` (as Atomic's /tree does) in the picker's list,
//! preview and match list, a dialog, the tree's rows and detail pane, and
//! in plain `show`, `list`, `search`, `context` and `export` output —
//! never an ESC, a C1 control, a bidi control or a `[32m` left behind.

use crate::common::{self, arbor, drive, terminal_controls};

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

use arbor::ui::picker::Row;
use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::info::scan_info;

const NOW: i64 = 1_795_953_600_000;
const CWD: &str = "/home/u/proj";

/// Every kind of sequence, and what a terminal would show of it.
const HOSTILE: &str = "\u{1b}[32m✓\u{1b}[39m 42 passed \u{1b}]0;retitled\u{7}osc \
    \u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\ \u{1b}Pq#0;2;0\u{1b}\\dcs \
    \u{1b}_Gf=100;AAAA\u{1b}\\apc \u{1b}^pm\u{1b}\\pm \u{9b}31mcsi8 \u{9d}2;t8\u{9c}osc8 \
    \u{90}1$r\u{9c}dcs8 \u{9f}apc8\u{9c}apc8 \u{85}nel \u{202e}rtl\u{202c} needle";
const SHOWN: &str = "✓ 42 passed osc link dcs apc pm csi8 osc8 dcs8 apc8";

/// Text a sequence would leave behind when only its ESC is replaced.
const REMNANTS: &[&str] = &[
    "[32m", "[39m", "]0;", "retitled", "]8;", "http://x", "q#0", "Gf=100", "31m", "2;t8", "1$r",
    "[1m", "[0m", "]2;",
];

fn bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

fn assert_clean(what: &str, s: &str) {
    assert_eq!(terminal_controls(s), Vec::<char>::new(), "{what}: {s}");
    assert!(!s.chars().any(bidi), "{what}: a bidi control in {s}");
    for r in REMNANTS {
        let left = s.match_indices(r).find(|(i, _)| !in_escaped_json(&s[..*i]));
        assert!(left.is_none(), "{what}: {r:?} left in\n{s}");
    }
}

/// Whether text ending here is inside a JSON string whose controls are
/// written as `\u001b` escapes (the detail pane's raw entry): exact, and
/// no sequence.
fn in_escaped_json(before: &str) -> bool {
    before
        .rfind('"')
        .is_some_and(|q| before[q..].contains("\\u00"))
}

/// A store with one session whose text is full of escape sequences.
fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("store").join("--home-u-proj--");
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("2026-11-28T10-00-00-000Z_0199e5c0-aaaa.jsonl");
    let t = |s: u32| format!("2026-11-28T10:00:{s:02}.000Z");
    let usage = json!({"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                       "totalTokens": 15, "cost": {"total": 0.01}});
    let lines = [
        json!({"type": "session", "version": 3, "id": "0199e5c0-aaaa",
               "timestamp": t(0), "cwd": CWD}),
        json!({"type": "message", "id": "u1", "parentId": null, "timestamp": t(1),
               "message": {"role": "user", "content": HOSTILE, "timestamp": 1_795_860_001_000_i64}}),
        json!({"type": "message", "id": "a1", "parentId": "u1", "timestamp": t(2),
               "message": {"role": "assistant", "provider": "p", "model": "m", "usage": usage,
                           "stopReason": "toolUse", "timestamp": 1_795_860_002_000_i64,
                           "content": [{"type": "text", "text": HOSTILE},
                                       {"type": "toolCall", "id": "c1", "name": "bash",
                                        "arguments": {"command": "\u{1b}[1mcargo\u{1b}[0m test"}}]}}),
        json!({"type": "message", "id": "r1", "parentId": "a1", "timestamp": t(3),
               "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                           "content": [{"type": "text", "text": HOSTILE}], "isError": false,
                           "timestamp": 1_795_860_003_000_i64}}),
        json!({"type": "message", "id": "a2", "parentId": "r1", "timestamp": t(4),
               "message": {"role": "assistant", "provider": "p", "model": "m", "usage": usage,
                           "stopReason": "stop", "timestamp": 1_795_860_004_000_i64,
                           "content": [{"type": "text", "text": HOSTILE}]}}),
        json!({"type": "label", "id": "l1", "parentId": "a2", "timestamp": t(5),
               "targetId": "u1", "label": "\u{1b}]2;lab\u{7}keep\u{1b}[1m"}),
        json!({"type": "session_info", "id": "n1", "parentId": "l1", "timestamp": t(6),
               "name": "\u{1b}[1mBold\u{1b}[0m name"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn run(dir: &Path, args: &[&str]) -> String {
    let out = arbor()
        .env("ARBOR_CACHE_DIR", dir.join("cache"))
        .current_dir(dir)
        .args(args)
        .arg("--store")
        .arg(dir.join("store"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_clean(&format!("stderr of {args:?}"), &stderr);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn printed_lines_hold_no_escape_sequence() {
    let (dir, path) = store();
    let dir = dir.path();
    let p = path.to_str().unwrap();
    let runs: [&[&str]; 8] = [
        &["show", p],
        &["show", "--filter", "all", p],
        &["list", "--all"],
        &["list", "--all", "--no-index"],
        &["search", "--all", "needle"],
        &["search", "--all", "--no-index", "needle"],
        &["context", p],
        &["export", "--format", "md", p],
    ];
    for args in runs {
        let out = run(dir, args);
        assert_clean(&format!("{args:?}"), &out);
        assert!(!out.trim().is_empty(), "{args:?} printed nothing");
    }
    // What a terminal shows of the sequences is kept.
    let show = run(dir, &["show", "--filter", "all", p]);
    assert!(show.contains(&format!("• [keep] user: {SHOWN}")), "{show}");
    assert!(show.contains(&format!("• assistant: {SHOWN}")), "{show}");
    assert!(show.contains("[bash: cargo test]"), "{show}");
    assert!(
        show.lines().next().unwrap().ends_with("Bold name"),
        "{show}"
    );
    let md = run(dir, &["export", "--format", "md", p]);
    assert!(md.contains(SHOWN), "{md}");
}

fn picker(path: &Path, w: u16, h: u16) -> App {
    let mut app = App::new(CWD.to_string(), NOW);
    app.width = w;
    app.height = h;
    let row = Row::new(scan_info(path).unwrap());
    drive(&mut app, AppEvent::Rows(vec![row]));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    app
}

fn draw(app: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(t.backend().buffer())
}

fn key(app: &mut App, code: KeyCode, mods: KeyModifiers) {
    drive(app, AppEvent::Key(KeyEvent::new(code, mods)));
}

#[test]
fn drawn_rows_hold_no_escape_sequence() {
    let (_dir, path) = store();
    // The list and the preview.
    let mut app = picker(&path, 160, 40);
    key(&mut app, KeyCode::Down, KeyModifiers::NONE);
    key(&mut app, KeyCode::Up, KeyModifiers::NONE);
    let s = draw(&app);
    assert_clean("picker and preview", &s);
    assert!(
        s.contains("Bold name") && s.contains("✓ 42 passed osc"),
        "{s}"
    );
    // The preview's matches, with their snippets.
    for c in "needle".chars() {
        key(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let s = draw(&app);
    assert_clean("preview matches", &s);
    assert!(s.contains("needle"), "{s}");
    // A dialog naming the session.
    key(&mut app, KeyCode::Char('d'), KeyModifiers::CONTROL);
    let s = draw(&app);
    assert_clean("delete dialog", &s);
    assert!(s.contains("Bold name"), "{s}");

    // The tree: its rows, and the detail pane of each entry.
    let mut app = App::new("/".into(), NOW);
    app.width = 160;
    app.height = 40;
    let mut queue = vec![Effect::OpenTree {
        path: path.clone(),
        agent: arbor_session::Agent::Atomic,
    }];
    while let Some(fx) = queue.pop() {
        for ev in perform(fx) {
            queue.extend(
                app.update(ev)
                    .into_iter()
                    .filter(|f| matches!(f, Effect::OpenTree { .. })),
            );
        }
    }
    let Mode::Tree(t) = &mut app.mode else {
        panic!("the tree did not open");
    };
    t.detail_on = Some(true);
    key(&mut app, KeyCode::Char('a'), KeyModifiers::CONTROL);
    let mut seen = String::new();
    for _ in 0..8 {
        let s = draw(&app);
        assert_clean("tree", &s);
        seen.push_str(&s);
        key(&mut app, KeyCode::Up, KeyModifiers::NONE);
    }
    assert!(seen.contains(&format!("user: {SHOWN}")), "{seen}");
    assert!(seen.contains("[keep]"), "{seen}");
}

/// Atomic cuts an entry's text at 200 UTF-16 units before it is drawn, so
/// the sequences count towards the 200 and a row of colour codes ends
/// sooner than its text would (docs/spec.md §6): arbor cuts first, then
/// removes the sequences, and its row ends where Atomic's does.
#[test]
fn the_200_unit_cut_counts_the_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("2026-11-28T10-00-00-000Z_0199e5c0-bbbb.jsonl");
    // 22 units a time: 9 whole, then `ESC [` of the tenth (cut unfinished).
    let text = "\u{1b}[32m✓\u{1b}[39m 42 passed ".repeat(20);
    let lines = [
        json!({"type": "session", "version": 3, "id": "0199e5c0-bbbb",
               "timestamp": "2026-11-28T10:00:00.000Z", "cwd": CWD}),
        json!({"type": "message", "id": "u1", "parentId": null,
               "timestamp": "2026-11-28T10:00:01.000Z",
               "message": {"role": "user", "content": text}}),
        json!({"type": "message", "id": "a1", "parentId": "u1",
               "timestamp": "2026-11-28T10:00:02.000Z",
               "message": {"role": "assistant", "stopReason": "stop",
                           "content": [{"type": "text", "text": "\u{1b}[1m"},
                                       {"type": "text", "text": text}]}}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, body).unwrap();
    let out = common::run_ok(arbor().arg("show").arg(&path));
    let nine = ["✓ 42 passed"; 9].join(" ");
    // The reply's first block takes 4 of the 200 units.
    let eight = ["✓ 42 passed"; 8].join(" ");
    let rows: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        rows,
        [
            format!("• user: {nine}"),
            format!("• assistant: {eight} ✓ 42 passe")
        ]
    );
}
