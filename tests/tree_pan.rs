//! Horizontal panning of the tree screen (Atomic's horizontal viewport): on
//! a session whose active path crosses 60 forks, the selected row's text is
//! on screen at any depth and width, and `«` in the gutter says the rows are
//! shifted.

use crate::common;

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::tree::TreeState;
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::Agent;

/// A session whose active path crosses `forks` forks: at each level a user
/// message, then an assistant reply with two children — an abandoned
/// one-message branch and the user message that continues.
fn deep_session(dir: &Path, forks: usize) -> PathBuf {
    let path = dir.join("2026-01-01T00-00-00-000Z_0199a000-0000-7000-8000-0000000000d6.jsonl");
    let mut lines = vec![json!({"type":"session","version":3,
        "id":"0199a000-0000-7000-8000-0000000000d6","timestamp":"2026-01-01T00:00:00.000Z",
        "cwd":"/tmp/deep"})];
    let mut t = 0;
    let mut ts = || {
        t += 1;
        format!(
            "2026-01-01T{:02}:{:02}:{:02}.000Z",
            t / 3600,
            (t / 60) % 60,
            t % 60
        )
    };
    let mut parent: Option<String> = None;
    // Abandoned branches are written before the continuing one, so the
    // active child is not simply the first by time.
    for level in 0..=forks {
        let u = format!("u{level:03}");
        lines.push(json!({"type":"message","id":u,"parentId":parent,"timestamp":ts(),
            "message":{"role":"user","content":format!("level {level} question: what does step {level} do?")}}));
        let a = format!("a{level:03}");
        lines.push(json!({"type":"message","id":a,"parentId":u,"timestamp":ts(),
            "message":{"role":"assistant","content":[{"type":"text","text":format!("level {level} answer")}],
                       "stopReason":"stop"}}));
        if level < forks {
            lines.push(
                json!({"type":"message","id":format!("x{level:03}"),"parentId":a,"timestamp":ts(),
                "message":{"role":"user","content":format!("abandoned idea at level {level}")}}),
            );
        }
        parent = Some(a);
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn open(path: &Path, w: u16, h: u16) -> App {
    let mut app = App::new("/".into(), 0);
    app.width = w;
    app.height = h;
    let mut queue = vec![Effect::OpenTree {
        path: path.to_path_buf(),
        agent: Agent::Atomic,
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
    assert!(matches!(app.mode, Mode::Tree(_)));
    app
}

fn tree(app: &App) -> &TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

fn key(app: &mut App, code: KeyCode) {
    app.update(AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn screen(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(term.backend().buffer())
}

/// The screen line of the selected row.
fn selected_line(s: &str) -> String {
    s.lines()
        .find(|l| l.starts_with('›'))
        .unwrap_or_else(|| panic!("no selected row:\n{s}"))
        .to_string()
}

/// The first words of the selected entry's text.
fn selected_text_head(app: &App) -> String {
    let t = tree(app);
    let text = t.entry_line(t.selected_entry().unwrap());
    text.chars().take(12).collect()
}

#[test]
fn the_deepest_entry_is_readable_at_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = deep_session(dir.path(), 60);
    let mut app = open(&path, 80, 24);
    assert_eq!(
        tree(&app).entry_id(tree(&app).selected_entry().unwrap()),
        "a060",
        "opens at the leaf"
    );
    let s = screen(&app);
    let line = selected_line(&s);
    assert!(
        line.contains("• assistant: level 60 answer"),
        "the leaf's text is on screen:\n{s}"
    );
    assert!(
        line.starts_with("›«"),
        "the gutter says the view is panned:\n{s}"
    );
    insta::assert_snapshot!("deep_leaf_panned", s);

    // At the top the rows start at column 0: no pan, no hint.
    key(&mut app, KeyCode::Home);
    let s = screen(&app);
    assert!(
        selected_line(&s).starts_with("› • user: level 0 question"),
        "{s}"
    );
    assert!(!s.contains('«'), "{s}");
    insta::assert_snapshot!("deep_top_unpanned", s);

    // Halfway down the path the view pans to that depth.
    for _ in 0..70 {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app);
    let head = selected_text_head(&app);
    assert!(selected_line(&s).contains(&head), "{head:?} visible:\n{s}");
    insta::assert_snapshot!("deep_middle_panned", s);
}

#[test]
fn every_selected_row_shows_its_text_at_any_width() {
    let dir = tempfile::tempdir().unwrap();
    let path = deep_session(dir.path(), 60);
    for (w, h) in [(80, 24), (160, 45), (40, 12), (120, 30)] {
        let mut app = open(&path, w, h);
        key(&mut app, KeyCode::Home);
        let n = tree(&app).rows.len();
        assert_eq!(n, 61 * 2 + 60);
        for step in 0..n {
            let s = screen(&app);
            let line = selected_line(&s);
            let head = selected_text_head(&app);
            // Narrow screens may cut the text, never hide its start.
            let want: String = head.chars().take(6).collect();
            assert!(
                line.contains(&want),
                "{w}x{h}, row {step}: {want:?} not on the selected line\n{s}"
            );
            // The hint is there exactly when the rows are shifted.
            let shifted = line.chars().nth(1) == Some('«');
            let anchor_col = s
                .lines()
                .find(|l| l.starts_with('›'))
                .map(|l| l.find(&want));
            assert!(anchor_col.is_some());
            if !shifted {
                assert!(s.lines().skip(2).all(|l| !l.contains('«')));
            }
            key(&mut app, KeyCode::Down);
        }
    }
}
