//! The tree's compare view: Alt+M marks an entry, Alt+C compares its
//! branch with the selected entry's (side by side on a wide screen,
//! stacked on a narrow one), the view scrolls, Esc goes back with the mark
//! and the selection as they were.

use crate::common;

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::tree::{CompareAction, TreeState, COMPARE_KEYS};
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::Agent;

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

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    app.update(AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// Shift+letter, as terminals report it.
fn alt(app: &mut App, c: char) -> Vec<Effect> {
    app.update(AppEvent::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::ALT,
    )))
}

fn screen(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(term.backend().buffer())
}

fn selected_id(app: &App) -> String {
    let t = tree(app);
    t.entry_id(t.selected_entry().unwrap()).to_string()
}

fn scroll(app: &App) -> usize {
    tree(app).compare.as_ref().map(|c| c.scroll).unwrap()
}

fn status(app: &App) -> String {
    tree(app).status.clone().map(|s| s.0).unwrap_or_default()
}

/// The demo session with two branches; the tree opens on `7ea66ad8` (the
/// last visible entry of the active branch), End selects `ece135bc`, the
/// last of the abandoned one.
fn demo(w: u16, h: u16) -> (tempfile::TempDir, App) {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let app = open(&path, w, h);
    (store, app)
}

/// Marks the tree's first selection, then compares it with the last row.
fn mark_and_compare(app: &mut App) {
    assert_eq!(selected_id(app), "7ea66ad8");
    alt(app, 'm');
    key(app, KeyCode::End);
    assert_eq!(selected_id(app), "ece135bc");
    alt(app, 'c');
}

#[test]
fn mark_select_compare_scroll_and_back_with_both_selections() {
    let (_store, mut app) = demo(80, 24);
    // Compare with nothing marked says how.
    alt(&mut app, 'c');
    assert!(tree(&app).compare.is_none());
    assert!(
        status(&app).contains("Mark an entry first (alt+m)"),
        "{}",
        status(&app)
    );
    // Mark: the row carries ◆ and the status line says so.
    alt(&mut app, 'm');
    assert_eq!(tree(&app).mark.as_deref(), Some("7ea66ad8"));
    let s = screen(&app);
    assert!(s.contains("◆ • [checkpoint] assistant: Committed"), "{s}");
    assert!(s.contains("[◆ marked]"), "{s}");
    // The marked entry against itself: nothing to compare.
    alt(&mut app, 'c');
    assert!(tree(&app).compare.is_none());
    assert!(
        status(&app).contains("Select another entry"),
        "{}",
        status(&app)
    );
    // Shift+M again unmarks; once more marks.
    alt(&mut app, 'm');
    assert_eq!(tree(&app).mark, None);
    alt(&mut app, 'm');
    key(&mut app, KeyCode::End);
    alt(&mut app, 'c');
    let c = tree(&app).compare.as_ref().expect("the compare view");
    assert_eq!((c.a.as_str(), c.b.as_str()), ("7ea66ad8", "ece135bc"));
    assert_eq!(c.cmp.common_ancestor.as_deref(), Some("3ece2523"));
    // Stacked at 80 columns: each line says its side.
    let s = screen(&app);
    assert!(s.starts_with("Compare · Fix flaky auth test"), "{s}");
    assert!(s.contains("A │ [branch summary]: Tried option 1"), "{s}");
    assert!(s.contains("B │ — no such turn"), "{s}");
    assert!(!s.contains(" = "), "{s}");
    insta::assert_snapshot!("compare_80x24", s);
    // Scroll: a line, a page, the end, the top; the keys past an end do
    // nothing (no frame).
    assert!(key(&mut app, KeyCode::Up).is_empty());
    assert_eq!(scroll(&app), 0);
    key(&mut app, KeyCode::Down);
    assert_eq!(scroll(&app), 1);
    key(&mut app, KeyCode::PageDown);
    assert_eq!(scroll(&app), 1 + tree(&app).page);
    key(&mut app, KeyCode::End);
    let end = scroll(&app);
    let s = screen(&app);
    assert!(s.contains("tools: A ran 1 tool (bash), B ran none"), "{s}");
    key(&mut app, KeyCode::PageDown);
    assert_eq!(scroll(&app), end, "never past the end");
    key(&mut app, KeyCode::Home);
    assert_eq!(scroll(&app), 0);
    // Keys of the tree do nothing here (no search typed, no move).
    key(&mut app, KeyCode::Char('x'));
    assert!(tree(&app).search.is_empty());
    // Esc: back to the tree, the mark and the selection kept.
    key(&mut app, KeyCode::Esc);
    assert!(
        matches!(app.mode, Mode::Tree(_)),
        "Esc closes only the view"
    );
    assert!(tree(&app).compare.is_none());
    assert_eq!(tree(&app).mark.as_deref(), Some("7ea66ad8"));
    assert_eq!(selected_id(&app), "ece135bc");
    let s = screen(&app);
    assert!(s.starts_with("Session Tree"), "{s}");
    // And it opens again from there.
    alt(&mut app, 'c');
    assert!(tree(&app).compare.is_some());
}

#[test]
fn side_by_side_on_a_wide_screen() {
    let (_store, mut app) = demo(160, 40);
    mark_and_compare(&mut app);
    let s = screen(&app);
    // A's user message beside B's.
    let row = s
        .lines()
        .find(|l| l.starts_with("user: OK, go with the injectable clock"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(row.contains(" │ user: Let's keep it simple"), "{row}");
    insta::assert_snapshot!("compare_160x40", s);
}

#[test]
fn a_resize_relays_the_view_and_keeps_the_scroll_in_range() {
    let (_store, mut app) = demo(80, 24);
    mark_and_compare(&mut app);
    key(&mut app, KeyCode::End);
    let narrow_end = scroll(&app);
    // Wider: fewer rows; the view shows its end, not blank lines.
    app.update(AppEvent::Resize(160, 40));
    let s = screen(&app);
    assert!(s.contains("── Turn 2"), "{s}");
    assert!(s.contains(" │ "), "side by side now:\n{s}");
    assert!(s.contains("tools: A ran 1 tool (bash), B ran none"), "{s}");
    // One up from there moves from the new end, not from the old scroll.
    key(&mut app, KeyCode::Up);
    assert!(scroll(&app) < narrow_end);
    app.update(AppEvent::Resize(80, 24));
    assert!(screen(&app).contains("A │ "));
}

#[test]
fn the_wheel_scrolls_the_view() {
    let (_store, mut app) = demo(80, 24);
    mark_and_compare(&mut app);
    let wheel = |app: &mut App, kind| {
        app.update(AppEvent::Mouse(MouseEvent {
            kind,
            column: 5,
            row: 5,
            modifiers: KeyModifiers::NONE,
        }))
    };
    wheel(&mut app, MouseEventKind::ScrollDown);
    assert_eq!(scroll(&app), 3);
    wheel(&mut app, MouseEventKind::ScrollUp);
    assert_eq!(scroll(&app), 0);
    // The selection in the tree under it did not move.
    assert_eq!(selected_id(&app), "ece135bc");
}

/// The view's key table: each key does something from the middle of the
/// view, and the footer names the keys that are not quiet.
#[test]
fn every_compare_key_is_dispatched_and_named() {
    let start = || {
        let (store, mut app) = demo(80, 24);
        mark_and_compare(&mut app);
        key(&mut app, KeyCode::PageDown);
        (store, app)
    };
    for (chord, action) in COMPARE_KEYS.0.iter().flat_map(|b| b.keys) {
        let (_store, mut app) = start();
        let before = format!("{:?}", tree(&app));
        app.update(AppEvent::Key(chord.event()));
        match action {
            CompareAction::Close => {
                assert!(tree(&app).compare.is_none(), "{}", chord.label());
                assert_eq!(tree(&app).mark.as_deref(), Some("7ea66ad8"));
            }
            CompareAction::Scroll(_) => {
                assert_ne!(format!("{:?}", tree(&app)), before, "{}", chord.label())
            }
        }
    }
    let (_store, app) = start();
    let s = screen(&app);
    for c in COMPARE_KEYS.0.iter().flat_map(|b| b.keys).map(|k| &k.0) {
        assert!(c.quiet || s.contains(&c.label()), "{}:\n{s}", c.label());
    }
}

#[test]
fn session_text_reaches_the_view_sanitized() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\u{202e}";
    let ts = |s: u32| format!("2026-11-01T00:00:{s:02}.000Z");
    let user = |id: &str, parent: Option<&str>, s: u32, text: String| {
        serde_json::json!({"type":"message","id":id,"parentId":parent,"timestamp":ts(s),
            "message":{"role":"user","content":text}})
    };
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"0000aaaa-0000-7000-8000-000000000002",
            "timestamp":ts(0),"cwd":"/tmp/x"}),
        user("r", None, 1, format!("root {evil}")),
        user("x", Some("r"), 2, format!("left {evil}")),
        user("y", Some("r"), 3, format!("right {evil}")),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    for (w, h) in [(80, 24), (160, 40)] {
        let mut app = open(&path, w, h);
        // The leaf `y` is selected (the active branch first, `x` under
        // it): mark it, compare with `x`.
        alt(&mut app, 'm');
        key(&mut app, KeyCode::Down);
        assert_eq!(selected_id(&app), "x");
        alt(&mut app, 'c');
        assert!(tree(&app).compare.is_some());
        let s = screen(&app);
        assert!(s.contains("left"), "{s}");
        assert!(s.contains("right"), "{s}");
        assert_eq!(common::terminal_controls(&s), Vec::<char>::new(), "{s:?}");
        assert!(!s.contains('\u{202e}'), "{s}");
    }
}
