//! "Continue from here → fork" on a user message, as Atomic's `/fork`: the
//! new session ends at the message's parent (the message is not copied),
//! and its text is offered to send again (`y` copies it). pi's own reader
//! opens the new file (skipped without `node` / `tests/pi-reader/node_modules`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::tree::{TreeDialog, TreeState};
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::{read_session, Agent, SessionTree};

fn open(path: &Path) -> App {
    let mut app = App::new("/".into(), 0);
    app.width = 100;
    app.height = 30;
    drive(
        &mut app,
        Effect::OpenTree {
            path: path.to_path_buf(),
            agent: Agent::Atomic,
        },
    );
    assert!(matches!(app.mode, Mode::Tree(_)));
    app
}

/// Performs an effect and feeds its events back; returns the effects the
/// runtime would hand elsewhere (clipboard, exit).
fn drive(app: &mut App, fx: Effect) -> Vec<Effect> {
    let mut outside = Vec::new();
    let mut queue = vec![fx];
    while let Some(fx) = queue.pop() {
        if matches!(fx, Effect::Copy(_) | Effect::Exit(_) | Effect::CloseTree) {
            outside.push(fx);
            continue;
        }
        for ev in perform(fx) {
            queue.extend(app.update(ev));
        }
    }
    outside
}

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    let fx = app.update(AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    let mut outside = Vec::new();
    for f in fx {
        outside.extend(drive(app, f));
    }
    outside
}

fn tree(app: &App) -> &TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

fn screen(app: &App) -> String {
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(term.backend().buffer())
}

/// Selects the entry `id` with ↓.
fn select(app: &mut App, id: &str) {
    for _ in 0..200 {
        let t = tree(app);
        if t.selected_entry().map(|i| t.entry_id(i)) == Some(id) {
            return;
        }
        key(app, KeyCode::Down);
    }
    panic!("{id} not reached");
}

fn session_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    v.sort();
    v
}

/// pi's reader on `file`, or None when it is not installed.
fn pi_read(file: &Path) -> Option<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pi-reader");
    if !dir
        .join("node_modules/@mariozechner/pi-coding-agent/package.json")
        .is_file()
    {
        eprintln!("skipped: pi's reader (tests/pi-reader/node_modules missing)");
        return None;
    }
    let out = Command::new("node")
        .arg(dir.join("read-session.mjs"))
        .arg(file)
        .output()
        .ok()?;
    assert!(out.status.success());
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// Forks at `user_id` through the keys, returns the new file.
/// The lines inside the box drawn over the screen (its border cut off).
fn box_lines(s: &str) -> Vec<String> {
    let grid: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
    let top = grid.iter().position(|l| l.contains(&'┌')).unwrap();
    let (left, right) = (
        grid[top].iter().position(|&c| c == '┌').unwrap(),
        grid[top].iter().position(|&c| c == '┐').unwrap(),
    );
    grid[top + 1..]
        .iter()
        .take_while(|l| l[left] == '│')
        .map(|l| {
            l[left + 1..right]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

/// The words of the message, as the box shows them (wrapped, indented).
fn shown_message(boxed: &[String]) -> String {
    boxed
        .iter()
        .filter(|l| l.starts_with("   "))
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ")
}

fn fork_at(path: &Path, user_id: &str) -> (PathBuf, App) {
    let folder = path.parent().unwrap();
    let before = session_files(folder);
    let mut app = open(path);
    select(&mut app, user_id);
    key(&mut app, KeyCode::Enter);
    assert!(matches!(tree(&app).dialog, TreeDialog::Continue { .. }));
    let s = screen(&app);
    assert!(
        s.contains("Continuing before this user message") && s.contains("before this message"),
        "{s}"
    );
    // The message whole (when short), wrapped inside the box's padding.
    let boxed = box_lines(&s);
    assert!(
        boxed.iter().all(|l| l.is_empty() || l.starts_with(' ')),
        "{s}"
    );
    let text = arbor::ui::tree::user_text(tree(&app), user_id).unwrap();
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if words.len() < 300 {
        assert!(shown_message(&boxed).contains(&words), "{s}");
    }
    key(&mut app, KeyCode::Char('2'));
    let after = session_files(folder);
    let new: Vec<&PathBuf> = after.iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(new.len(), 1, "one new session file");
    (new[0].clone(), app)
}

#[test]
fn fork_at_a_user_message_ends_at_its_parent_and_offers_the_text() {
    let store = common::demo_store();
    let src = common::find_session(&store.path().join("sessions"), "01a1fd62");
    // "OK, go with the injectable clock instead…", mid-session, its parent a
    // branch summary.
    let user_id = "08f89399";
    let s = read_session(&src).unwrap();
    let t = SessionTree::build(&s);
    let i = t.index_of(user_id).expect("the user message");
    assert_eq!(s.entries[i].role(), Some("user"));
    let parent = s.entries[t.parent.of(i).unwrap()].id.clone();
    let text =
        arbor_session::entry::content_text(s.entries[i].message().unwrap().get("content"), "");

    let (new, mut app) = fork_at(&src, user_id);
    let f = read_session(&new).unwrap();
    let ft = SessionTree::build(&f);
    let last = f
        .entries
        .iter()
        .rev()
        .find(|e| e.entry_type() != "label")
        .unwrap();
    assert_eq!(last.id, parent, "the fork ends at the message's parent");
    assert!(f.entries.iter().all(|e| e.id != user_id), "not copied");
    assert_eq!(
        ft.leaf.map(|l| f.entries[l].entry_type()),
        Some(last.entry_type())
    );

    // The text is offered; y copies it; Enter resumes the new file.
    match &tree(&app).dialog {
        TreeDialog::OfferResume { path, prompt, .. } => {
            assert_eq!(path, &new);
            assert_eq!(prompt.as_deref(), Some(text.as_str()));
        }
        other => panic!("{other:?}"),
    }
    let s = screen(&app);
    assert!(s.contains("continues before this user message"), "{s}");
    assert!(s.contains("OK, go with the injectable clock"), "{s}");
    let name = new.file_name().unwrap().to_string_lossy().to_string();
    insta::assert_snapshot!("fork_offers_the_message", s.replace(&name, "[NEW FILE]"));
    // The whole message is shown, wrapped inside the box's padding.
    let boxed = box_lines(&s);
    assert!(
        boxed.iter().all(|l| l.is_empty() || l.starts_with(' ')),
        "{s}"
    );
    let shown = shown_message(&boxed);
    assert!(
        shown.contains(&text.split_whitespace().collect::<Vec<_>>().join(" ")),
        "{s}"
    );
    assert!(!s.contains("Copied"), "{s}");
    // `y` copies it, and the box says so.
    assert_eq!(key(&mut app, KeyCode::Char('y')), vec![Effect::Copy(text)]);
    let s = screen(&app);
    assert!(
        s.contains("✓ Sent to the terminal's clipboard (OSC 52)"),
        "{s}"
    );
    let fx = key(&mut app, KeyCode::Enter);
    assert!(
        matches!(&fx[..], [Effect::Exit(arbor::ui::Outcome::Resume { path, .. })] if path == &new),
        "{fx:?}"
    );

    if let Some(pi) = pi_read(&new) {
        assert_eq!(pi["ok"], true, "{pi}");
        // pi's leaf is the last line: a label re-created after the path, or
        // the parent itself.
        let last_line = std::fs::read_to_string(&new)
            .unwrap()
            .lines()
            .last()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
            .unwrap();
        assert_eq!(pi["leafId"], last_line);
        let ids: Vec<&str> = pi["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert!(ids.contains(&parent.as_str()) && !ids.contains(&user_id));
        let ctx_last = pi["context"]["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["src"]
            .clone();
        assert_ne!(ctx_last, user_id, "pi's context stops before the message");
    }
}

#[test]
fn fork_at_the_root_user_message_is_an_empty_session() {
    let corpus = common::conformance_corpus();
    let src = common::find_session(&corpus.path().join("corpus"), "0199a237");
    let s = read_session(&src).unwrap();
    let root = s
        .entries
        .iter()
        .find(|e| e.parent_id.is_none() && e.role() == Some("user"))
        .unwrap()
        .id
        .clone();
    let (new, app) = fork_at(&src, &root);
    let f = read_session(&new).unwrap();
    assert!(f.entries.is_empty(), "only the header");
    assert_eq!(
        f.header.parent_session(),
        Some(std::path::absolute(&src).unwrap().to_str().unwrap())
    );
    assert!(matches!(
        &tree(&app).dialog,
        TreeDialog::OfferResume {
            prompt: Some(_),
            ..
        }
    ));
    if let Some(pi) = pi_read(&new) {
        assert_eq!(pi["ok"], true, "{pi}");
        assert_eq!(pi["entryCount"], 0);
        assert_eq!(pi["rewritten"], false, "pi takes the header as it is");
    }
}

#[test]
fn fork_elsewhere_copies_through_the_entry() {
    let store = common::demo_store();
    let src = common::find_session(&store.path().join("sessions"), "01a1fd62");
    // The assistant reply with the fork below it.
    let (new, app) = fork_at_assistant(&src);
    let f = read_session(&new).unwrap();
    assert_eq!(
        f.entries
            .iter()
            .rev()
            .find(|e| e.entry_type() != "label")
            .map(|e| e.id.as_str()),
        Some("3ece2523")
    );
    assert!(matches!(
        &tree(&app).dialog,
        TreeDialog::OfferResume { prompt: None, .. }
    ));
}

fn fork_at_assistant(path: &Path) -> (PathBuf, App) {
    let folder = path.parent().unwrap();
    let before = session_files(folder);
    let mut app = open(path);
    select(&mut app, "3ece2523");
    key(&mut app, KeyCode::Enter);
    let s = screen(&app);
    assert!(s.contains("root → here"), "{s}");
    key(&mut app, KeyCode::Char('f'));
    let after = session_files(folder);
    let new: Vec<PathBuf> = after.into_iter().filter(|p| !before.contains(p)).collect();
    assert_eq!(new.len(), 1);
    (new[0].clone(), app)
}
