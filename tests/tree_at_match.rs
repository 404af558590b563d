//! Issue #54: a match chosen in the picker's preview is where the tree
//! opens (Ctrl+T), even when the tree's default filter hides its entry:
//! the tree shows it under the filter that does, or selects its nearest
//! shown ancestor, and says which on its status line; and the preview's
//! count of matches and the tree's agree, or the tree says why not.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use crate::common::{self, drive};
use arbor::ui::picker::Row;
use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::info::scan_info;

const CWD: &str = "/home/dev/crate";
/// 2026-02-01T00:00:00Z.
const NOW: i64 = 1_769_904_000_000;

fn line(v: serde_json::Value) -> String {
    format!("{v}\n")
}

fn msg(id: &str, parent: Option<&str>, min: u32, message: serde_json::Value) -> String {
    line(
        serde_json::json!({"type": "message", "id": id, "parentId": parent,
        "timestamp": format!("2026-01-10T10:{min:02}:00.000Z"), "message": message}),
    )
}

fn call(id: &str, command: &str) -> serde_json::Value {
    serde_json::json!({"type": "toolCall", "id": id, "name": "bash", "arguments": {"command": command}})
}

fn result(call: &str, text: &str) -> serde_json::Value {
    serde_json::json!({"role": "toolResult", "toolCallId": call, "toolName": "bash",
        "content": [{"type": "text", "text": text}]})
}

/// A session whose assistant runs `cargo build`, then `cargo test` in a
/// message of tool calls alone, then `cargo clippy` with a word of text.
fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("--home-dev-crate--");
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("2026-01-10T10-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl");
    let text = [
        line(serde_json::json!({"type": "session", "version": 3,
            "id": "0199aaaa-0000-7000-8000-000000000001",
            "timestamp": "2026-01-10T10:00:00.000Z", "cwd": CWD})),
        msg(
            "u1",
            None,
            1,
            serde_json::json!({"role": "user", "content": "check that cargo is happy"}),
        ),
        msg(
            "a1",
            Some("u1"),
            2,
            serde_json::json!({"role": "assistant",
            "content": [{"type": "text", "text": "Building first."}, call("c1", "cargo build")]}),
        ),
        msg("r1", Some("a1"), 3, result("c1", "Finished dev profile")),
        msg(
            "a2",
            Some("r1"),
            4,
            serde_json::json!({"role": "assistant",
            "content": [call("c2", "cargo test -q")]}),
        ),
        msg(
            "r2",
            Some("a2"),
            5,
            result("c2", "test result: ok. 3 passed"),
        ),
        msg(
            "a3",
            Some("r2"),
            6,
            serde_json::json!({"role": "assistant",
            "content": [{"type": "text", "text": "Lints next."}, call("c3", "cargo clippy")]}),
        ),
        msg(
            "r3",
            Some("a3"),
            7,
            result("c3", "warning: unused variable"),
        ),
        msg(
            "a4",
            Some("r3"),
            8,
            serde_json::json!({"role": "assistant",
            "content": [{"type": "text", "text": "All good: cargo is happy."}]}),
        ),
        // A call the user stopped before it ran: no result follows it.
        msg(
            "a5",
            Some("a4"),
            9,
            serde_json::json!({"role": "assistant",
            "content": [call("c5", "cargo fmt")]}),
        ),
        msg(
            "u2",
            Some("a5"),
            10,
            serde_json::json!({"role": "user", "content": "stop there"}),
        ),
    ]
    .concat();
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn picker(path: &Path) -> App {
    let mut app = App::new(CWD.into(), NOW);
    app.width = 80;
    app.height = 24;
    drive(
        &mut app,
        AppEvent::Rows(vec![Row::new(scan_info(path).unwrap())]),
    );
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    app
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    drive(app, AppEvent::Key(KeyEvent::new(code, mods)))
}

/// Performs the effects of opening a tree and feeds their results back,
/// as the runtime's workers do.
fn run_tree_effects(app: &mut App, mut queue: Vec<Effect>) {
    while let Some(fx) = queue.pop() {
        if matches!(
            fx,
            Effect::OpenTree { .. } | Effect::IndexTree(_) | Effect::TreeHits { .. }
        ) {
            for ev in perform(fx) {
                queue.extend(app.update(ev));
            }
        }
    }
}

fn screen(app: &App, root: &Path) -> String {
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(t.backend().buffer()).replace(&root.display().to_string(), "[store]")
}

/// The picker with the preview on, `cargo` typed, the preview's match
/// on entry `id` picked with Alt+N and the tree opened with Ctrl+T.
fn open_at_match(path: &Path, id: &str) -> (App, usize) {
    let mut app = picker(path);
    press(&mut app, KeyCode::F(2), KeyModifiers::NONE);
    for c in "cargo".chars() {
        press(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    let hits = app.picker.hits().expect("the matches were read").clone();
    let pos = hits
        .hits
        .iter()
        .position(|h| h.entry_id == id)
        .unwrap_or_else(|| panic!("{id} is not a match"));
    for _ in 0..pos {
        press(&mut app, KeyCode::Char('n'), KeyModifiers::ALT);
    }
    assert_eq!(app.picker.preview.hit_pos, pos);
    let open = press(&mut app, KeyCode::Char('t'), KeyModifiers::CONTROL);
    run_tree_effects(&mut app, open);
    assert!(matches!(app.mode, Mode::Tree(_)), "the tree did not open");
    (app, hits.total)
}

fn tree(app: &App) -> &arbor::ui::tree::TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        _ => unreachable!(),
    }
}

fn selected_id(app: &App) -> String {
    let t = tree(app);
    t.entry_id(t.selected_entry().unwrap()).to_string()
}

fn status(app: &App) -> String {
    tree(app).status.clone().map(|(s, _)| s).unwrap_or_default()
}

/// The case: the `cargo test` call picked in the preview is an
/// assistant message of tool calls alone, which no filter of the tree
/// shows (as in Atomic); the tree opens on the row of its result, which
/// shows the call — not on the earlier `cargo build` — and says so.
#[test]
fn a_call_picked_in_the_preview_opens_the_tree_at_its_result() {
    let (dir, path) = store();
    let (app, listed) = open_at_match(&path, "a2");
    assert_eq!(selected_id(&app), "r2");
    assert_eq!(
        status(&app),
        "At its call's result: calls alone have no row"
    );
    // The counts: the tree's rows and the preview's entries, both said.
    let rows = tree(&app).rows.len();
    assert_ne!(rows, listed);
    let s = screen(&app, dir.path());
    assert!(
        s.contains(&format!("{rows} matches · preview {listed}")),
        "{s}"
    );
    insta::assert_snapshot!("tree_opened_at_a_call", s);
}

/// A call with no result (the user stopped it): the tree opens at the
/// entry before it, and says that no filter shows the match.
#[test]
fn a_call_without_a_row_opens_the_tree_at_the_entry_before_it() {
    let (_dir, path) = store();
    let (app, _) = open_at_match(&path, "a5");
    assert_eq!(selected_id(&app), "a4");
    assert_eq!(
        status(&app),
        "At the entry before: no filter shows this match"
    );
}

/// A match that has its own row opens there; the status line says why the
/// counts differ.
#[test]
fn a_match_with_its_own_row_opens_there() {
    let (_dir, path) = store();
    let (app, listed) = open_at_match(&path, "u1");
    assert_eq!(selected_id(&app), "u1");
    assert_ne!(tree(&app).rows.len(), listed);
    assert_eq!(
        status(&app),
        "Rows count: a call matches on its result's row"
    );
}
