//! The mouse on both screens, as users of lazygit, yazi and Atomic's
//! fullscreen view expect: the wheel scrolls what is under the pointer,
//! a click selects a row, a double click does what Enter does; and in a
//! real terminal, mouse reports on or (`mouse = false`) never asked for.

use crate::common::{self, drive};

use std::path::Path;

use crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use crate::common::pty::{self, quoted, Term};
use arbor::ui::picker::Row;
use arbor::ui::runtime::perform;
use arbor::ui::tree::{TreeDialog, TreeState};
use arbor::ui::{App, AppEvent, Effect, Mode, Outcome};
use arbor_session::info::scan_info;
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

/// 2026-11-29T12:00:00Z: the demo sessions are 1 day to 9 days old.
const NOW: i64 = 1_795_953_600_000;

/// The picker on every demo session, `width` columns wide.
fn picker(root: &Path, width: u16) -> App {
    let (files, _) = list_session_files(
        &StoreConfig::single(root, StoreKind::PerProject),
        &Scope::All,
    );
    let rows: Vec<Row> = files
        .iter()
        .map(|f| Row::new(scan_info(&f.path).unwrap()))
        .collect();
    let mut app = App::new("/home/demo/projects/webapp".into(), NOW);
    app.width = width;
    app.height = 24;
    app.picker.settings.scope = arbor::ui::picker::Scope::All;
    drive(&mut app, AppEvent::Rows(rows));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    app
}

fn mouse(kind: MouseEventKind, column: u16, row: u16) -> MouseEvent {
    MouseEvent {
        kind,
        column,
        row,
        modifiers: KeyModifiers::NONE,
    }
}

fn click(column: u16, row: u16) -> AppEvent {
    AppEvent::Mouse(mouse(MouseEventKind::Down(MouseButton::Left), column, row))
}

fn double_click(column: u16, row: u16) -> AppEvent {
    AppEvent::DoubleClick(mouse(MouseEventKind::Down(MouseButton::Left), column, row))
}

fn wheel(down: bool, column: u16, row: u16) -> AppEvent {
    let kind = if down {
        MouseEventKind::ScrollDown
    } else {
        MouseEventKind::ScrollUp
    };
    AppEvent::Mouse(mouse(kind, column, row))
}

/// The list's first row is drawn on line 3 (under the title, the notes
/// and the query).
const FIRST_ROW: u16 = 3;

#[test]
fn picker_wheel_click_and_double_click() {
    let store = common::demo_store();
    let mut app = picker(&store.path().join("sessions"), 100);
    assert_eq!(app.picker.selected_pos(), Some(0));
    // The wheel over the list moves the selection.
    drive(&mut app, wheel(true, 10, FIRST_ROW + 1));
    assert_eq!(app.picker.selected_pos(), Some(3));
    drive(&mut app, wheel(false, 10, FIRST_ROW + 1));
    assert_eq!(app.picker.selected_pos(), Some(0));
    // A click selects the row under it, and only selects: a second click
    // (not a double click) on the selected row resumes nothing.
    let fx = drive(&mut app, click(10, FIRST_ROW + 2));
    assert_eq!(app.picker.selected_pos(), Some(2));
    assert!(fx.is_empty(), "{fx:?}");
    let fx = drive(&mut app, click(10, FIRST_ROW + 2));
    assert!(fx.iter().all(|e| !matches!(e, Effect::Exit(_))), "{fx:?}");
    // A double click resumes the row under it, as Enter does.
    let fx = drive(&mut app, double_click(10, FIRST_ROW + 4));
    assert_eq!(app.picker.selected_pos(), Some(4));
    let path = app.picker.selected_row().unwrap().info.path.to_path_buf();
    assert!(
        fx.iter()
            .any(|e| matches!(e, Effect::Exit(Outcome::Resume { path: p, .. }) if *p == path)),
        "{fx:?}"
    );
}

#[test]
fn picker_wheel_over_the_preview_leaves_the_list_alone() {
    let store = common::demo_store();
    // Wide enough for the preview beside the list.
    let mut app = picker(&store.path().join("sessions"), 120);
    drive(&mut app, click(10, FIRST_ROW + 1));
    assert_eq!(app.picker.selected_pos(), Some(1));
    drive(&mut app, wheel(true, 110, FIRST_ROW + 2));
    assert_eq!(
        app.picker.selected_pos(),
        Some(1),
        "the preview is under the pointer"
    );
    // A click on the preview selects no row.
    drive(&mut app, click(110, FIRST_ROW + 4));
    assert_eq!(app.picker.selected_pos(), Some(1));
    drive(&mut app, wheel(true, 10, FIRST_ROW + 2));
    assert_eq!(app.picker.selected_pos(), Some(4));
}

/// With a query, the wheel over the preview steps through its list of
/// matching entries (without wrapping, as a scroll).
#[test]
fn picker_wheel_over_the_preview_steps_through_its_matches() {
    let store = common::demo_store();
    let mut app = picker(&store.path().join("sessions"), 140);
    app.height = 30;
    for c in "token dir:webapp".chars() {
        drive(
            &mut app,
            AppEvent::Key(crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Char(c),
                KeyModifiers::NONE,
            )),
        );
    }
    let n = app.picker.hits().expect("the matches were read").hits.len();
    assert!(n >= 3, "{n} matches");
    let selected = app.picker.selected_pos();
    assert_eq!(app.picker.preview.hit_pos, 0);
    drive(&mut app, wheel(true, 120, FIRST_ROW + 5));
    drive(&mut app, wheel(true, 120, FIRST_ROW + 5));
    assert_eq!(app.picker.preview.hit_pos, 2);
    assert_eq!(app.picker.selected_pos(), selected, "the list stays");
    for _ in 0..n + 2 {
        drive(&mut app, wheel(false, 120, FIRST_ROW + 5));
    }
    assert_eq!(app.picker.preview.hit_pos, 0, "no wrapping");
}

fn open_tree(path: &Path, w: u16, h: u16) -> App {
    let mut app = App::new("/".into(), NOW);
    app.width = w;
    app.height = h;
    let mut queue = vec![Effect::OpenTree {
        path: path.to_path_buf(),
        agent: arbor_session::Agent::Atomic,
    }];
    while let Some(fx) = queue.pop() {
        for ev in perform(fx) {
            for more in app.update(ev) {
                if !matches!(more, Effect::Exit(_) | Effect::CloseTree | Effect::Copy(_)) {
                    queue.push(more);
                }
            }
        }
    }
    app
}

fn tree(app: &App) -> &TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

/// The tree's first row is drawn on line 2 (under its two header lines).
const TREE_FIRST_ROW: u16 = 2;

#[test]
fn tree_wheel_click_and_double_click() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    // Wide enough for the detail pane beside the rows.
    let mut app = open_tree(&path, 120, 30);
    let row_at = |app: &App| tree(app).selected;
    // A click selects the row under it.
    app.update(click(5, TREE_FIRST_ROW + 1));
    assert_eq!(row_at(&app), Some(1));
    assert_eq!(tree(&app).dialog, TreeDialog::None);
    // The wheel over the rows moves the selection.
    app.update(wheel(true, 5, TREE_FIRST_ROW));
    assert_eq!(row_at(&app), Some(4));
    app.update(wheel(false, 5, TREE_FIRST_ROW));
    assert_eq!(row_at(&app), Some(1));
    // Over the detail pane it scrolls the pane, not the rows; a click
    // there selects nothing.
    app.update(wheel(true, 100, TREE_FIRST_ROW + 3));
    assert_eq!(row_at(&app), Some(1));
    assert_eq!(tree(&app).detail_scroll, 3);
    app.update(wheel(false, 100, TREE_FIRST_ROW + 3));
    assert_eq!(tree(&app).detail_scroll, 0);
    app.update(click(100, TREE_FIRST_ROW + 5));
    assert_eq!(row_at(&app), Some(1));
    // A double click does what Enter does: continue from that entry.
    app.update(double_click(5, TREE_FIRST_ROW));
    assert_eq!(row_at(&app), Some(0));
    assert!(
        matches!(tree(&app).dialog, TreeDialog::Continue { .. }),
        "{:?}",
        tree(&app).dialog
    );
}

/// `arbor --print` in a terminal, sent two slow clicks on the second row
/// and a double click on the third
/// (`mouse_setting`: the settings file's `mouse`, none without one), then
/// Enter when the mouse is off: the path printed, all arbor wrote, and the
/// screen before the clicks (and the store, kept until the caller is done).
fn print_after_clicks(mouse_setting: Option<bool>) -> (String, Vec<u8>, String, tempfile::TempDir) {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out.txt");
    if let Some(on) = mouse_setting {
        let dir = home.path().join("config/arbor");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("config.toml"), format!("mouse = {on}\n")).unwrap();
    }
    let mut cmd = pty::shell(&format!(
        "{} --print --store {} --all > {}",
        quoted(Path::new(env!("CARGO_BIN_EXE_arbor"))),
        quoted(&root),
        quoted(&out)
    ));
    cmd.env("HOME", home.path());
    cmd.env("XDG_CONFIG_HOME", home.path().join("config"));
    let mut term = Term::spawn(cmd, 24, 100);
    let screen = term.wait_for("the list", |t| t.contains("Fix flaky auth test"));
    // SGR reports (1-based cells). Two single clicks on the second row
    // (line 5), further apart than a double click: they only select it.
    for _ in 0..2 {
        term.send(b"\x1b[<0;12;5M\x1b[<0;12;5m");
        std::thread::sleep(2 * arbor::ui::mouse::DOUBLE_CLICK);
    }
    // Then a double click on the third row (line 6).
    term.send(b"\x1b[<0;12;6M\x1b[<0;12;6m\x1b[<0;12;6M\x1b[<0;12;6m");
    if mouse_setting == Some(false) {
        std::thread::sleep(std::time::Duration::from_millis(300));
        term.send(b"\r");
    }
    assert!(term.wait_exit("the choice").success());
    let raw = term.into_output();
    let printed = std::fs::read_to_string(&out).unwrap();
    (printed, raw, screen, store)
}

/// Whether the session at `path` is the one drawn on screen line `line`
/// (its title's first words are there).
fn drawn_on(screen: &str, line: usize, path: &str) -> bool {
    let info = scan_info(Path::new(path.trim_end())).unwrap();
    let title = Row::new(info).title().to_string();
    let start: String = title.chars().take(16).collect();
    screen.lines().nth(line).is_some_and(|l| l.contains(&start))
}

fn asks_for_mouse(raw: &[u8]) -> bool {
    raw.windows(8).any(|w| w == b"\x1b[?1000h")
}

#[test]
fn a_double_click_in_a_real_terminal_picks_the_row() {
    let (printed, raw, screen, _store) = print_after_clicks(None);
    assert!(asks_for_mouse(&raw), "mouse reports asked for");
    assert!(
        drawn_on(&screen, usize::from(FIRST_ROW) + 2, &printed),
        "{printed}\n{screen}"
    );
}

#[test]
fn mouse_off_never_asks_for_mouse_reports() {
    let (printed, raw, screen, _store) = print_after_clicks(Some(false));
    assert!(!asks_for_mouse(&raw), "no mouse capture");
    // The clicks reached nothing: Enter chose the first row.
    assert!(
        drawn_on(&screen, usize::from(FIRST_ROW), &printed),
        "{printed}\n{screen}"
    );
}
