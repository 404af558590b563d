//! The user's Atomic `keybindings.json` on every screen: read with
//! Atomic's key syntax and old ids, applied to dispatch, the help and the
//! hints, what cannot be used said in one line, reloaded while arbor
//! runs; `arbor keys`; and the tree's search taking every character, and
//! its Ctrl+C going back as Atomic's cancel does.

use crate::common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::ui::keybindings::{install, load_from, UserKeys};
use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::tree::TreeDialog;
use arbor::ui::{App, AppEvent, Effect, Mode, Outcome};

use crate::common::pty::{self, Term};

const NOW: i64 = 1_795_953_600_000;

/// A `keybindings.json` holding `json`, in an agent dir of its own.
fn file_with(json: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("keybindings.json");
    std::fs::write(&f, json).unwrap();
    (dir, f)
}

fn keys_from(json: &str) -> UserKeys {
    let (_dir, f) = file_with(json);
    load_from(Some(f))
}

fn ev(code: KeyCode, m: KeyModifiers) -> AppEvent {
    AppEvent::Key(KeyEvent::new(code, m))
}

fn screen(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(term.backend().buffer())
}

fn open_tree(path: &Path, tree_only: bool) -> App {
    let mut app = App::new("/".into(), NOW);
    app.width = 100;
    app.height = 30;
    app.tree_only = tree_only;
    let mut queue = vec![Effect::OpenTree {
        path: path.to_path_buf(),
        agent: arbor_session::Agent::Atomic,
    }];
    while let Some(fx) = queue.pop() {
        for e in perform(fx) {
            queue.extend(
                app.update(e)
                    .into_iter()
                    .filter(|f| matches!(f, Effect::TreeHits { .. })),
            );
        }
    }
    assert!(matches!(app.mode, Mode::Tree(_)), "the tree did not open");
    app
}

fn tree(app: &App) -> &arbor::ui::tree::TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

const REMAP: &str = r#"{
  "app.session.rename": "ctrl+y",
  "deleteSession": ["alt+x"],
  "app.tree.filter.userOnly": "alt+u",
  "tui.editor.deleteToLineStart": "ctrl+g",
  "app.model.select": "ctrl+l"
}"#;

#[test]
fn ids_old_names_and_key_syntax_are_read_as_atomic_reads_them() {
    let k = keys_from(REMAP);
    assert_eq!(k.problems, Vec::<String>::new());
    assert!(k.found);
    let names = |id: &str| -> Vec<String> {
        k.bound[id]
            .iter()
            .map(arbor::ui::key_syntax::name)
            .collect()
    };
    assert_eq!(names("app.session.rename"), ["ctrl+y"]);
    // `deleteSession` is Atomic's old name of `app.session.delete`.
    assert_eq!(names("app.session.delete"), ["alt+x"]);
    assert_eq!(names("tui.editor.deleteToLineStart"), ["ctrl+g"]);
    // Atomic's own ids with no action here are passed over quietly.
    assert!(!k.bound.contains_key("app.model.select"));
    // Both the old name and the new: the new one's keys.
    let k = keys_from(r#"{"selectCancel": "ctrl+g", "tui.select.cancel": ["ctrl+q", "esc"]}"#);
    let cancel: Vec<String> = k.bound["tui.select.cancel"]
        .iter()
        .map(arbor::ui::key_syntax::name)
        .collect();
    assert_eq!(cancel, ["ctrl+q", "escape"]);
    assert_eq!(k.bound.len(), 1);
}

#[test]
fn what_cannot_be_read_is_one_line_and_keeps_the_defaults() {
    // Not JSON: one line, every default in force.
    let k = keys_from("{ \"app.session.rename\": \"ctrl+e\", ");
    assert_eq!(k.problems.len(), 1, "{:?}", k.problems);
    assert!(k.problems[0].contains("not valid JSON"), "{:?}", k.problems);
    assert!(k.bound.is_empty());
    // An unknown key name: that action keeps its defaults, others apply.
    let k = keys_from(
        r#"{"app.session.rename": ["ctrl+e", "ctrl+rr"], "app.session.toggleSort": "alt+s",
            "app.session.renmae": "ctrl+y", "app.session.togglePath": 3}"#,
    );
    assert_eq!(k.problems.len(), 3, "{:?}", k.problems);
    assert!(k.problems[0].contains("app.session.rename") && k.problems[0].contains("\"ctrl+rr\""));
    assert!(k.problems[1].contains("unknown action id \"app.session.renmae\""));
    assert!(k.problems[2].contains("app.session.togglePath"));
    assert!(!k.bound.contains_key("app.session.rename"));
    install(Arc::new(k));
    use arbor::ui::picker::{Action, KEYS};
    let key = |c, m| KEYS.action(&KeyEvent::new(c, m), true);
    assert_eq!(
        key(KeyCode::Char('r'), KeyModifiers::CONTROL),
        Some(Action::Rename)
    );
    assert_eq!(
        key(KeyCode::Char('s'), KeyModifiers::ALT),
        Some(Action::Sort)
    );
    assert_eq!(key(KeyCode::Char('s'), KeyModifiers::CONTROL), None);
    assert_eq!(
        key(KeyCode::Char('p'), KeyModifiers::CONTROL),
        Some(Action::Paths)
    );
    install(Arc::new(UserKeys::default()));
}

#[test]
fn two_actions_on_one_key_are_said_and_the_users_key_wins() {
    let k = keys_from(r#"{"app.session.rename": "ctrl+s", "app.tree.editLabel": "ctrl+u"}"#);
    // Ctrl+U: the tree's filter key, and its search's delete-to-start.
    assert_eq!(k.problems.len(), 3, "{:?}", k.problems);
    assert!(
        k.problems[2]
            .contains("ctrl+u is both app.tree.editLabel and tui.editor.deleteToLineStart"),
        "{:?}",
        k.problems
    );
    assert!(
        k.problems[0]
            .contains("ctrl+s is both app.session.rename and app.session.toggleSort in the picker"),
        "{:?}",
        k.problems
    );
    assert!(k.problems[1].contains("ctrl+u") && k.problems[1].contains("app.tree.filter.userOnly"));
    // A screen key of the user's that was an editing key is said too.
    let k2 = keys_from(r#"{"app.session.rename": "ctrl+e"}"#);
    assert_eq!(k2.problems.len(), 1, "{:?}", k2.problems);
    assert!(
        k2.problems[0].contains("ctrl+e is both app.session.rename and tui.editor.cursorLineEnd"),
        "{:?}",
        k2.problems
    );
    install(Arc::new(k));
    use arbor::ui::picker::{Action, KEYS};
    let ctrl_s = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
    assert_eq!(KEYS.action(&ctrl_s, true), Some(Action::Rename));
    // Sort has lost its key, in the help too: no key does two things.
    assert_eq!(KEYS.keys_of(&[Action::Sort]), "(no key)");
    let help = arbor::ui::picker::help_rows();
    let sort = help.iter().find(|r| r.text.starts_with("sort:")).unwrap();
    assert_eq!(sort.keys, "(no key)");
    install(Arc::new(UserKeys::default()));
}

/// arbor's own tables give no key two actions on one screen.
#[test]
fn the_defaults_have_no_clashes() {
    assert_eq!(
        arbor::ui::key_screens::clashes(&UserKeys::default()),
        Vec::<String>::new()
    );
    // A character bound to an editing action edits rather than types.
    let k = keys_from(r#"{"tui.editor.deleteToLineStart": "~"}"#);
    install(Arc::new(k));
    let mut field = arbor::ui::input::LineInput::new("abc");
    field.handle_key(&KeyEvent::new(KeyCode::Char('~'), KeyModifiers::NONE));
    assert_eq!(field.text(), "");
    install(Arc::new(UserKeys::default()));
}

/// The picker's help with a file's keys in force: the help names them.
#[test]
fn the_help_shows_the_keys_in_force() {
    install(Arc::new(keys_from(REMAP)));
    let mut app = App::new("/".into(), NOW);
    app.width = 100;
    app.height = 60;
    app.update(ev(KeyCode::F(1), KeyModifiers::NONE));
    let s = screen(&app);
    insta::assert_snapshot!("picker_help_remapped", s);
    assert!(
        s.contains("ctrl+y") && s.contains("alt+x") && s.contains("ctrl+g"),
        "{s}"
    );
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open_tree(&path, false);
    app.height = 60;
    app.update(ev(KeyCode::F(1), KeyModifiers::NONE));
    let s = screen(&app);
    insta::assert_snapshot!("tree_help_remapped", s);
    assert!(
        s.lines()
            .any(|l| l.contains("alt+u") && l.contains("user messages only")),
        "{s}"
    );
    install(Arc::new(UserKeys::default()));
}

/// Every character typed goes into the tree's search: `Test` is `Test`
/// (the label-time toggle, export, mark and compare are on Alt+letters).
#[test]
fn the_tree_search_takes_capitals_whole() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open_tree(&path, false);
    // As terminals report a capital: the letter, with Shift.
    for c in "Test LEMC?".chars() {
        let m = if c.is_ascii_uppercase() {
            KeyModifiers::SHIFT
        } else {
            KeyModifiers::NONE
        };
        app.update(ev(KeyCode::Char(c), m));
    }
    let t = tree(&app);
    assert_eq!(t.search, "Test LEMC?");
    assert!(!t.label_times, "T typed, not the label-time toggle");
    assert_eq!(t.dialog, TreeDialog::None);
    assert!(t.mark.is_none() && t.compare.is_none());
    // The commands are on Alt+letters.
    app.update(ev(KeyCode::Char('t'), KeyModifiers::ALT));
    assert!(tree(&app).label_times);
}

/// Ctrl+C in a tree the picker opened is Atomic's cancel: it clears the
/// search, then goes back to the picker; only `arbor tree` quits on it.
#[test]
fn ctrl_c_in_the_tree_goes_back_to_the_picker() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let ctrl_c = || ev(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut app = open_tree(&path, false);
    app.update(ev(KeyCode::Char('x'), KeyModifiers::NONE));
    assert_eq!(tree(&app).search, "x");
    let fx = app.update(ctrl_c());
    assert!(
        !fx.iter()
            .any(|f| matches!(f, Effect::Exit(_) | Effect::CloseTree)),
        "{fx:?}"
    );
    assert_eq!(tree(&app).search, "");
    let fx = app.update(ctrl_c());
    assert!(matches!(fx[..], [Effect::CloseTree]), "{fx:?}");
    assert!(matches!(app.mode, Mode::Picker));
    assert!(app.outcome.is_none());
    // The context and compare views: back to the tree.
    let mut app = open_tree(&path, false);
    app.update(ev(KeyCode::F(3), KeyModifiers::NONE));
    assert!(tree(&app).context_view);
    app.update(ctrl_c());
    assert!(!tree(&app).context_view);
    assert!(matches!(app.mode, Mode::Tree(_)));
    // Opened alone (`arbor tree`), there is no picker to go back to.
    let mut app = open_tree(&path, true);
    let fx = app.update(ctrl_c());
    assert!(matches!(fx[..], [Effect::Exit(Outcome::Quit)]), "{fx:?}");
}

/// The file changing while arbor runs: the new keys at once, said.
#[test]
fn a_changed_file_is_put_in_force_by_its_event() {
    let mut app = App::new("/".into(), NOW);
    let ctrl_y = KeyEvent::new(KeyCode::Char('y'), KeyModifiers::CONTROL);
    use arbor::ui::picker::{Action, KEYS};
    assert_eq!(KEYS.action(&ctrl_y, true), None);
    app.update(AppEvent::Keys(Arc::new(keys_from(
        r#"{"app.session.rename": "ctrl+y"}"#,
    ))));
    assert_eq!(KEYS.action(&ctrl_y, true), Some(Action::Rename));
    let status = app.picker.flash.status.as_ref().unwrap().text.clone();
    assert!(status.contains("Keys read again"), "{status}");
    app.update(AppEvent::Keys(Arc::new(keys_from("[1, 2"))));
    assert_eq!(KEYS.action(&ctrl_y, true), None);
    let status = app.picker.flash.status.as_ref().unwrap().text.clone();
    assert!(status.contains("not valid JSON"), "{status}");
    install(Arc::new(UserKeys::default()));
}

/// `arbor keys`, with a file: every screen's keys, those from the file
/// marked.
#[test]
fn arbor_keys_prints_the_table_in_force() {
    let (dir, _f) = file_with(REMAP);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbor"))
        .arg("keys")
        .env("ATOMIC_CODING_AGENT_DIR", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&dir.path().display().to_string(), "[AGENT DIR]");
    insta::assert_snapshot!("arbor_keys", text);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["keys", "--json"])
        .env("ATOMIC_CODING_AGENT_DIR", dir.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let picker = &v["screens"][0];
    assert_eq!(picker["screen"], "picker");
    let rename = picker["bindings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == "app.session.rename")
        .unwrap();
    assert_eq!(rename["keys"], serde_json::json!(["ctrl+y"]));
    assert_eq!(
        rename["source"],
        dir.path().join("keybindings.json").display().to_string()
    );
    // A broken file: one line on stderr, the defaults printed.
    std::fs::write(
        dir.path().join("keybindings.json"),
        "{\"app.session.rename\": \"ctrl+\"}",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arbor"))
        .arg("keys")
        .env("ATOMIC_CODING_AGENT_DIR", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("app.session.rename") && err.contains("default"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("ctrl+r"));
}

/// The docs list every id arbor binds a key under, and every Atomic id
/// it passes over.
#[test]
fn the_docs_name_every_id() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/keys.md")).unwrap();
    for id in arbor::ui::key_screens::known_ids() {
        assert!(doc.contains(&format!("`{id}`")), "docs/keys.md lacks {id}");
    }
    for (id, _) in arbor::ui::key_file::NOT_HONOURED {
        assert!(doc.contains(&format!("`{id}`")), "docs/keys.md lacks {id}");
    }
}

/// arbor in a 30×120 terminal with `home` as its home, whose Atomic
/// agent dir holds `json` as its keybindings.
fn arbor_with_keys(home: &Path, root: &Path, json: &str) -> Term {
    let agent = home.join(".atomic/agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(agent.join("keybindings.json"), json).unwrap();
    let mut cmd = pty::arbor();
    cmd.args([
        std::ffi::OsStr::new("--store"),
        root.as_os_str(),
        "--all".as_ref(),
    ]);
    cmd.env("HOME", home);
    cmd.env("XDG_DATA_HOME", home.join("data"));
    cmd.env("ARBOR_CACHE_DIR", home.join("cache"));
    cmd.cwd(home);
    Term::spawn(cmd, 30, 120)
}

fn wait_file(what: &str, pred: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pred() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The real binary with a file remapping rename, delete, the tree's
/// user-only filter and an editing key: those keys do the remapped thing,
/// the old ones do not, the help and footer say so, and an edit of the
/// file while it runs is in force at once.
#[test]
fn remapped_keys_in_a_real_terminal() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let mut term = arbor_with_keys(home.path(), &root, REMAP);
    let t = term.wait_for("the list", |t| {
        t.contains("Resume Session (All)") && t.contains("Fix flaky auth test")
    });
    assert!(
        t.contains("ctrl+y Rename") && t.contains("alt+x Delete"),
        "{t}"
    );
    term.press(b"flaky");
    term.wait_for("the query", |t| {
        t.contains("> flaky") && !t.contains("Add --delimiter")
    });
    // Ctrl+R is no longer rename; Ctrl+Y is.
    term.press(b"\x12");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!term.text().contains("enter save"), "{}", term.text());
    term.press(b"\x19");
    term.wait_for("the rename prompt", |t| t.contains("enter save"));
    // The remapped editing key (tui.editor.deleteToLineStart: ctrl+g)
    // clears the prompt; Ctrl+U no longer does.
    term.press(b"\x15");
    term.press(b"\x07");
    term.press(b"Renamed by my keys");
    term.press(b"\r");
    let target = common::find_session(&root, "01a1fd62");
    wait_file("the session_info line", || {
        let text = std::fs::read_to_string(&target).unwrap();
        let last = text.lines().last().unwrap().to_string();
        last.contains("\"name\":\"Renamed by my keys\"")
    });
    // Ctrl+D no longer deletes; Alt+X does (esc: keep it).
    term.press(b"\x04");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!term.text().contains("Delete session?"), "{}", term.text());
    term.press(b"\x1bx");
    term.wait_for("the delete question", |t| t.contains("Delete session?"));
    term.press(b"\x1b");
    term.wait_for("the question gone", |t| !t.contains("Delete session?"));
    // The help names the keys in force.
    term.press(b"\x1bOP");
    let help = term.wait_for("the help", |t| t.contains("arbor · keys"));
    assert!(
        help.contains("ctrl+y") && help.contains("rename the session"),
        "{help}"
    );
    assert!(
        help.contains("alt+x") && help.contains("delete to the trash"),
        "{help}"
    );
    term.press(b"q");
    term.wait_for("the help closed", |t| !t.contains("arbor · keys"));
    // The remapped Ctrl+G clears the query too; then the tree: Alt+U is
    // user messages only.
    term.press(b"\x07");
    term.wait_for("the query cleared", |t| !t.contains("> flaky"));
    term.press(b"\x14");
    term.wait_for("the tree", |t| t.contains("enter continue from here"));
    term.press(b"\x1bu");
    term.wait_for("the user-only filter", |t| t.contains("[user]"));
    term.press(b"\x1bu");
    term.wait_for("the default filter", |t| !t.contains("[user]"));
    // Back to the picker, and the file edited while arbor runs.
    term.press(b"\x1b");
    term.wait_for("the picker", |t| t.contains("Resume Session"));
    let file = home.path().join(".atomic/agent/keybindings.json");
    std::fs::write(&file, r#"{"app.session.rename": "alt+r"}"#).unwrap();
    term.wait_for("the reload said", |t| t.contains("Keys read again"));
    term.press(b"\x1br");
    term.wait_for("the rename prompt on the new key", |t| {
        t.contains("enter save")
    });
    term.press(b"\x1b");
    term.wait_for("the prompt closed", |t| !t.contains("enter save"));
    term.press(b"\x1b");
    assert!(term.wait_exit("Esc").success());
}

/// A malformed file and a conflicting one: the status line says what
/// could not be used, and the keys it did not touch still work.
#[test]
fn broken_and_conflicting_files_in_a_real_terminal() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let mut term = arbor_with_keys(home.path(), &root, "{\"app.session.rename\": ");
    term.wait_for("the problem on the status line", |t| {
        t.contains("keybindings.json: not valid JSON") && t.contains("Fix flaky auth test")
    });
    term.press(b"\x12");
    term.wait_for("the default rename key", |t| t.contains("enter save"));
    term.press(b"\x1b");
    term.press(b"\x1b");
    assert!(term.wait_exit("Esc").success());

    let home = tempfile::tempdir().unwrap();
    let mut term = arbor_with_keys(
        home.path(),
        &root,
        r#"{"app.session.rename": "ctrl+s", "app.session.toggleSort": "ctrl+s"}"#,
    );
    term.wait_for("the clash on the status line", |t| {
        t.contains("ctrl+s is both app.session.toggleSort and app.session.rename")
    });
    // The first of the two in the picker's table keeps it: sort.
    term.press(b"\x13");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!term.text().contains("enter save"), "{}", term.text());
    term.press(b"\x1b");
    assert!(term.wait_exit("Esc").success());
}
