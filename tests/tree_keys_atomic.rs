//! The tree screen's keys against Atomic's own tree-selector tests
//! (`packages/coding-agent/test/tree-selector-*.suite.ts`): the same trees,
//! the same key sequences, the same selections. Atomic's tests pass the leaf
//! explicitly; arbor's leaf is the file's last entry, so each file is written
//! with that entry last.

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{json, Value};

use arbor::ui::runtime::perform;
use arbor::ui::tree::TreeState;
use arbor::ui::{App, AppEvent, Effect, Mode};

#[derive(Clone, Copy)]
enum Kind {
    User,
    Assistant,
    /// An assistant message with only a tool call: hidden by every filter.
    ToolCallOnly,
    ModelChange,
    ThinkingChange,
}

use Kind::*;

/// Writes a v3 session with `entries` in this order (timestamps increasing).
fn write_session(dir: &Path, entries: &[(&str, Option<&str>, Kind)]) -> PathBuf {
    let path = dir.join("2026-01-01T00-00-00-000Z_0199a000-0000-7000-8000-000000000001.jsonl");
    let mut lines = vec![json!({"type":"session","version":3,
        "id":"0199a000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z",
        "cwd":"/tmp/project"})];
    for (k, (id, parent, kind)) in entries.iter().enumerate() {
        let ts = format!("2026-01-01T00:00:{:02}.000Z", k + 1);
        let base = json!({"id": id, "parentId": parent, "timestamp": ts});
        let mut v = base.as_object().unwrap().clone();
        let extra: Value = match kind {
            User => {
                json!({"type":"message","message":{"role":"user","content":format!("{id} text")}})
            }
            Assistant => json!({"type":"message","message":{"role":"assistant",
                "content":[{"type":"text","text":format!("{id} text")}],"stopReason":"stop"}}),
            ToolCallOnly => json!({"type":"message","message":{"role":"assistant",
                "content":[{"type":"toolCall","id":format!("tc-{id}"),"name":"read",
                            "arguments":{"path":"test.ts"}}],"stopReason":"toolUse"}}),
            ModelChange => {
                json!({"type":"model_change","provider":"anthropic","modelId":"claude-sonnet-4"})
            }
            ThinkingChange => json!({"type":"thinking_level_change","thinkingLevel":"high"}),
        };
        for (k, x) in extra.as_object().unwrap() {
            v.insert(k.clone(), x.clone());
        }
        lines.push(Value::Object(v));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn open(path: &Path) -> App {
    let mut app = App::new("/".into(), 0);
    app.width = 100;
    app.height = 24;
    let mut queue = vec![Effect::OpenTree {
        path: path.to_path_buf(),
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
    assert!(matches!(app.mode, Mode::Tree(_)), "the tree did not open");
    app
}

fn tree(app: &App) -> &TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

/// The selected entry's id (None: nothing shown).
fn sel(app: &App) -> Option<String> {
    let t = tree(app);
    t.selected_entry().map(|i| t.entry_id(i).to_string())
}

fn press(app: &mut App, code: KeyCode, m: KeyModifiers) {
    app.update(AppEvent::Key(KeyEvent::new(code, m)));
}

const UP: (KeyCode, KeyModifiers) = (KeyCode::Up, KeyModifiers::NONE);
const DOWN: (KeyCode, KeyModifiers) = (KeyCode::Down, KeyModifiers::NONE);
const CTRL_LEFT: (KeyCode, KeyModifiers) = (KeyCode::Left, KeyModifiers::CONTROL);
const CTRL_RIGHT: (KeyCode, KeyModifiers) = (KeyCode::Right, KeyModifiers::CONTROL);
const ALT_LEFT: (KeyCode, KeyModifiers) = (KeyCode::Left, KeyModifiers::ALT);
const ALT_RIGHT: (KeyCode, KeyModifiers) = (KeyCode::Right, KeyModifiers::ALT);
const ESC: (KeyCode, KeyModifiers) = (KeyCode::Esc, KeyModifiers::NONE);

fn ctrl(c: char) -> (KeyCode, KeyModifiers) {
    (KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Presses each key and checks the selection after it.
fn steps(app: &mut App, seq: &[((KeyCode, KeyModifiers), &str)]) {
    for (n, ((code, m), want)) in seq.iter().enumerate() {
        press(app, *code, *m);
        assert_eq!(
            sel(app).as_deref(),
            Some(*want),
            "step {n} ({code:?} {m:?})"
        );
    }
}

/// Atomic's branching tree: user-1 … asst-2, then branch A (active, leaf
/// asst-4a) and branch B. Foldable: user-1 (root), user-3a and user-3b
/// (segment starts).
fn branching(dir: &Path) -> PathBuf {
    write_session(
        dir,
        &[
            ("user-1", None, User),
            ("asst-1", Some("user-1"), Assistant),
            ("user-2", Some("asst-1"), User),
            ("asst-2", Some("user-2"), Assistant),
            ("user-3a", Some("asst-2"), User),
            ("user-3b", Some("asst-2"), User),
            ("asst-3b", Some("user-3b"), Assistant),
            ("user-4b", Some("asst-3b"), User),
            ("asst-3a", Some("user-3a"), Assistant),
            ("user-4a", Some("asst-3a"), User),
            ("asst-4a", Some("user-4a"), Assistant),
        ],
    )
}

#[test]
fn ctrl_right_unfolds_then_jumps_to_the_segment_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(&branching(dir.path()));
    assert_eq!(sel(&app).as_deref(), Some("asst-4a"));
    steps(
        &mut app,
        &[
            (CTRL_LEFT, "user-3a"),  // asst-4a → user-3a
            (CTRL_LEFT, "user-3a"),  // fold user-3a
            (DOWN, "user-3b"),       // children hidden
            (UP, "user-3a"),         //
            (CTRL_RIGHT, "user-3a"), // unfold user-3a
            (DOWN, "asst-3a"),       // children restored
            (CTRL_LEFT, "user-3a"),  // asst-3a → user-3a
            (CTRL_RIGHT, "asst-4a"), // segment jump to the leaf
        ],
    );
}

#[test]
fn alt_left_right_are_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(&branching(dir.path()));
    steps(
        &mut app,
        &[
            (ALT_LEFT, "user-3a"),
            (ALT_LEFT, "user-3a"),
            (ALT_RIGHT, "user-3a"),
            (ALT_RIGHT, "asst-4a"),
        ],
    );
}

#[test]
fn folding_the_root_hides_everything_and_nested_folds_survive() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(&branching(dir.path()));
    steps(
        &mut app,
        &[
            (CTRL_LEFT, "user-3a"),
            (CTRL_LEFT, "user-3a"), // fold user-3a
            // Folded: walks up past the fork (asst-2) to the root.
            (CTRL_LEFT, "user-1"),
            (CTRL_LEFT, "user-1"),   // fold the root
            (DOWN, "user-1"),        // the only row: wraps onto itself
            (CTRL_RIGHT, "user-1"),  // unfold the root
            (CTRL_RIGHT, "user-3a"), // to the fork's first child, still folded
            (DOWN, "user-3b"),
        ],
    );
    assert_eq!(tree(&app).rows.len(), 8, "user-3a folded");
}

#[test]
fn fold_and_navigate_on_the_inactive_branch() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = open(&branching(dir.path()));
    for _ in 0..20 {
        press(&mut app, KeyCode::Down, KeyModifiers::NONE);
        if sel(&app).as_deref() == Some("user-3b") {
            break;
        }
    }
    assert_eq!(sel(&app).as_deref(), Some("user-3b"));
    steps(
        &mut app,
        &[
            (CTRL_RIGHT, "user-4b"),
            (CTRL_LEFT, "user-3b"),
            (CTRL_LEFT, "user-3b"), // fold
            (CTRL_LEFT, "user-1"),
        ],
    );
}

#[test]
fn fold_and_navigate_with_several_roots() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            ("user-2", None, User),
            ("asst-2", Some("user-2"), Assistant),
            ("user-1", None, User),
            ("asst-1", Some("user-1"), Assistant),
        ],
    );
    let mut app = open(&path);
    assert_eq!(sel(&app).as_deref(), Some("asst-1"));
    steps(
        &mut app,
        &[
            (CTRL_LEFT, "user-1"),
            (CTRL_LEFT, "user-1"), // fold
            (DOWN, "user-2"),
            (CTRL_RIGHT, "asst-2"),
            (CTRL_LEFT, "user-2"),
            (CTRL_LEFT, "user-2"), // fold
            (CTRL_LEFT, "user-2"), // a folded root stays
        ],
    );
}

#[test]
fn folding_the_root_hides_descendants_under_hidden_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            ("user-1", None, User),
            ("tool-asst-1", Some("user-1"), ToolCallOnly),
            ("user-2", Some("tool-asst-1"), User),
            ("asst-2", Some("user-2"), Assistant),
        ],
    );
    let mut app = open(&path);
    steps(
        &mut app,
        &[
            (CTRL_LEFT, "user-1"),
            (CTRL_LEFT, "user-1"),
            (DOWN, "user-1"),
        ],
    );
}

/// Finds `id` by pressing ↓ (at most 20 times).
fn down_to(app: &mut App, id: &str) {
    for _ in 0..20 {
        press(app, KeyCode::Down, KeyModifiers::NONE);
        if sel(app).as_deref() == Some(id) {
            return;
        }
    }
    panic!("{id} not reached");
}

#[test]
fn search_and_filter_changes_clear_the_folds() {
    let dir = tempfile::tempdir().unwrap();
    let path = branching(dir.path());
    let mut app = open(&path);
    steps(
        &mut app,
        &[
            (CTRL_LEFT, "user-3a"),
            (CTRL_LEFT, "user-3a"),
            (DOWN, "user-3b"),
        ],
    );
    press(&mut app, KeyCode::Char('b'), KeyModifiers::NONE); // a search edit clears folds
    press(&mut app, ESC.0, ESC.1); // clear the search
    down_to(&mut app, "user-3a");
    steps(&mut app, &[(DOWN, "asst-3a")]);

    let mut app = open(&path);
    steps(&mut app, &[(CTRL_LEFT, "user-3a"), (CTRL_LEFT, "user-3a")]);
    let (u, d) = (ctrl('u'), ctrl('d'));
    press(&mut app, u.0, u.1);
    press(&mut app, d.0, d.1);
    down_to(&mut app, "user-3a");
    steps(&mut app, &[(DOWN, "asst-3a")]);
}

#[test]
fn the_initial_selection_skips_a_hidden_leaf() {
    for kind in [ModelChange, ThinkingChange] {
        let dir = tempfile::tempdir().unwrap();
        let path = write_session(
            dir.path(),
            &[
                ("user-1", None, User),
                ("asst-1", Some("user-1"), Assistant),
                ("user-2", Some("asst-1"), User),
                ("user-3", Some("asst-1"), User),
                ("meta-1", Some("user-2"), kind),
            ],
        );
        let app = open(&path);
        assert_eq!(sel(&app).as_deref(), Some("user-2"));
    }
}

#[test]
fn filters_move_the_selection_to_the_nearest_visible_ancestor() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            ("user-1", None, User),
            ("asst-1", Some("user-1"), Assistant),
            ("user-3", Some("asst-1"), User),
            ("user-2", Some("asst-1"), User),
            ("asst-2", Some("user-2"), Assistant),
        ],
    );
    let mut app = open(&path);
    assert_eq!(sel(&app).as_deref(), Some("asst-2"));
    steps(&mut app, &[(ctrl('u'), "user-2")]);
    // Atomic stays on user-2 here; arbor deliberately brings the selection
    // back to the entry the user had (docs/spec.md §6).
    steps(&mut app, &[(ctrl('d'), "asst-2")]);
}

#[test]
fn the_selection_survives_empty_filters() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            ("user-1", None, User),
            ("asst-1", Some("user-1"), Assistant),
            ("user-2", Some("asst-1"), User),
            ("asst-2", Some("user-2"), Assistant),
        ],
    );
    let mut app = open(&path);
    let l = ctrl('l');
    press(&mut app, l.0, l.1);
    assert_eq!(sel(&app), None);
    steps(&mut app, &[(ctrl('d'), "asst-2")]);

    let dir = tempfile::tempdir().unwrap();
    let path = write_session(
        dir.path(),
        &[
            ("user-1", None, User),
            ("asst-1", Some("user-1"), Assistant),
        ],
    );
    let mut app = open(&path);
    press(&mut app, l.0, l.1);
    assert_eq!(sel(&app), None);
    steps(&mut app, &[(ctrl('l'), "asst-1")]);
    press(&mut app, l.0, l.1);
    assert_eq!(sel(&app), None);
    steps(&mut app, &[(ctrl('d'), "asst-1")]);
}
