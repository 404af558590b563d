//! The tree screen: snapshots (TestBackend, fixed size and clock, no
//! colour) and key sequences for folding, segment jumps, filters and labels.

use crate::common;

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::tree::{TreeDialog, TreeState};
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::view::Filter;

/// 2026-11-29T12:00:00Z
const NOW: i64 = 1_795_953_600_000;

fn open(path: &Path, w: u16, h: u16) -> App {
    let mut app = App::new("/".into(), NOW);
    app.width = w;
    app.height = h;
    drive(
        &mut app,
        Effect::OpenTree {
            path: path.to_path_buf(),
            agent: arbor_session::Agent::Atomic,
        },
    );
    if let Mode::Tree(t) = &mut app.mode {
        t.now_ms = NOW;
    } else {
        panic!("the tree did not open");
    }
    app
}

/// Performs an effect and feeds its events back, like the runtime does.
fn drive(app: &mut App, fx: Effect) {
    let mut queue = vec![fx];
    while let Some(fx) = queue.pop() {
        for ev in perform(fx) {
            for more in app.update(ev) {
                if !matches!(more, Effect::Exit(_) | Effect::CloseTree | Effect::Copy(_)) {
                    queue.push(more);
                }
            }
        }
    }
}

/// A key; the search's reading of which entries match (a worker's, in
/// the runtime) is performed and fed back.
fn press(app: &mut App, code: KeyCode, m: KeyModifiers) -> Vec<Effect> {
    let fx = app.update(AppEvent::Key(KeyEvent::new(code, m)));
    for f in &fx {
        if matches!(f, Effect::TreeHits { .. }) {
            for ev in arbor::ui::runtime::perform(f.clone()) {
                app.update(ev);
            }
        }
    }
    fx
}
fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    press(app, code, KeyModifiers::NONE)
}
fn ctrl(app: &mut App, c: char) -> Vec<Effect> {
    press(app, KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn tree(app: &App) -> &TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

fn selected_text(app: &App) -> String {
    let t = tree(app);
    t.entry_line(t.selected_entry().unwrap())
}

fn screen(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(term.backend().buffer())
}

#[test]
fn branches_labels_and_the_active_path() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 40);
    let s = screen(&app);
    // Atomic's layout: the fold marker sits in the connector of each branch
    // start, the first generation after a branch is indented once more.
    assert!(
        s.contains("├⊟ • [branch summary]"),
        "active branch first, foldable, on the active path:\n{s}"
    );
    assert!(
        s.contains("│     • user: OK, go with"),
        "the branch's first generation one level further in:\n{s}"
    );
    assert!(
        s.contains("└⊟ user: Let's keep it simple"),
        "abandoned branch last, without the marker:\n{s}"
    );
    assert!(s.contains("[checkpoint] "), "labels before the text");
    insta::assert_snapshot!("demo_branches", s);
    // Label times (alt+t).
    alt(&mut app, 't');
    let s = screen(&app);
    assert!(s.contains("[+label time]"));
    // Atomic: the time follows the label, `[label] M/D HH:MM `.
    assert!(s.contains("[checkpoint] 11/21 09:"), "{s}");
    insta::assert_snapshot!("demo_label_times", s);
}

#[test]
fn fold_and_segment_jumps() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 40);
    // Start: the leaf (a session_info, hidden) → its nearest visible ancestor.
    assert!(
        selected_text(&app).contains("Committed as"),
        "{}",
        selected_text(&app)
    );
    // ctrl+← from inside a branch jumps to its start (the branch summary).
    ctrl_arrow(&mut app, KeyCode::Left);
    assert!(
        selected_text(&app).starts_with("[branch summary]"),
        "{}",
        selected_text(&app)
    );
    let before = tree(&app).rows.len();
    // A branch start is foldable: ctrl+← folds it.
    ctrl_arrow(&mut app, KeyCode::Left);
    let after = tree(&app).rows.len();
    assert!(
        after < before,
        "folding hides the branch ({before} → {after})"
    );
    let s = screen(&app);
    assert!(s.contains("├⊞ • [branch summary]"), "{s}");
    insta::assert_snapshot!("demo_folded", s);
    // Folded: ctrl+← walks up past the fork to the segment start above it,
    // here the root.
    ctrl_arrow(&mut app, KeyCode::Left);
    assert!(selected_text(&app).starts_with("user: The `SessionManager"));
    // ctrl+→ from the root: down the chain to the fork, onto its first
    // child (the folded branch start), which stays folded.
    ctrl_arrow(&mut app, KeyCode::Right);
    assert!(selected_text(&app).starts_with("[branch summary]"));
    assert_eq!(tree(&app).rows.len(), after);
    // ctrl+→ unfolds, then jumps to the end of the branch.
    ctrl_arrow(&mut app, KeyCode::Right);
    assert_eq!(tree(&app).rows.len(), before);
    ctrl_arrow(&mut app, KeyCode::Right);
    assert!(
        selected_text(&app).contains("Committed as"),
        "{}",
        selected_text(&app)
    );
    // Alt works like ctrl.
    press(&mut app, KeyCode::Left, KeyModifiers::ALT);
    assert!(selected_text(&app).starts_with("[branch summary]"));
    // ↑/↓ wrap around.
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Up);
    assert_eq!(tree(&app).selected, Some(tree(&app).rows.len() - 1));
    key(&mut app, KeyCode::Down);
    assert_eq!(tree(&app).selected, Some(0));
}

fn ctrl_arrow(app: &mut App, code: KeyCode) {
    press(app, code, KeyModifiers::CONTROL);
}

#[test]
fn each_filter_and_selection_through_an_empty_filter() {
    let dir = common::conformance_corpus();
    let root = dir.path().join("corpus");
    let path = common::find_session(&root, "0199a080-8000"); // c16_labels
    let mut app = open(&path, 100, 30);
    let start = tree(&app).selected_entry();
    for (c, f, name) in [
        ('t', Filter::NoTools, "filter_no_tools"),
        ('u', Filter::UserOnly, "filter_user_only"),
        ('l', Filter::LabeledOnly, "filter_labeled_only"),
        ('a', Filter::All, "filter_all"),
    ] {
        ctrl(&mut app, c);
        assert_eq!(tree(&app).filter, f);
        insta::assert_snapshot!(name, screen(&app));
        ctrl(&mut app, c);
        assert_eq!(
            tree(&app).filter,
            Filter::Default,
            "the same key toggles back"
        );
        assert_eq!(
            tree(&app).selected_entry(),
            start,
            "the selection comes back"
        );
    }
    // ctrl+o cycles, ctrl+shift+o goes back.
    ctrl(&mut app, 'o');
    assert_eq!(tree(&app).filter, Filter::NoTools);
    press(
        &mut app,
        KeyCode::Char('O'),
        KeyModifiers::CONTROL | KeyModifiers::SHIFT,
    );
    assert_eq!(tree(&app).filter, Filter::Default);

    // A session without labels: labeled-only is empty, and the selection survives it.
    let plain = common::find_session(&root, "01999d48-8680"); // c01_minimal
    let mut app = open(&plain, 100, 20);
    let sel = tree(&app).selected_entry();
    ctrl(&mut app, 'l');
    assert!(tree(&app).rows.is_empty());
    let s = screen(&app);
    assert!(
        s.contains("No entries found") && s.contains("(0/0) [labeled]"),
        "{s}"
    );
    ctrl(&mut app, 'd');
    assert_eq!(tree(&app).selected_entry(), sel);
}

#[test]
fn user_only_moves_the_selection_to_the_nearest_visible_ancestor() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 40);
    let anchor = tree(&app).anchor.clone();
    ctrl(&mut app, 'u');
    let shown = selected_text(&app);
    assert!(
        shown.starts_with("user: Great. Commit it"),
        "nearest visible ancestor: {shown}"
    );
    assert_eq!(
        tree(&app).anchor,
        anchor,
        "the real selection is remembered"
    );
    ctrl(&mut app, 'u');
    assert!(selected_text(&app).contains("Committed as"));
}

#[test]
fn search_filters_rows_and_highlights_the_detail() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 140, 36);
    for c in "fake timers".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    let t = tree(&app);
    assert!(!t.rows.is_empty());
    let s = screen(&app);
    assert!(s.contains("search: fake timers"));
    insta::assert_snapshot!("search_fake_timers", s);
    // Backspace edits, Esc clears, a second Esc closes.
    key(&mut app, KeyCode::Backspace);
    assert_eq!(tree(&app).search, "fake timer");
    key(&mut app, KeyCode::Esc);
    assert_eq!(tree(&app).search, "");
    // Opened from the picker: back there.
    assert_eq!(key(&mut app, KeyCode::Esc), vec![Effect::CloseTree]);
    assert!(matches!(app.mode, Mode::Picker));
}

#[test]
fn multiple_roots_and_a_deep_chain() {
    let dir = common::conformance_corpus();
    let root = dir.path().join("corpus");
    let app = open(&common::find_session(&root, "0199a9ba-8f80"), 100, 20); // c59_multiple_roots
    let s = screen(&app);
    // Several roots hang from a virtual root that draws no connector; the
    // first generation below each is indented one level (Atomic).
    assert!(
        !s.contains("├─ ") && !s.contains("└─ "),
        "roots without connectors:\n{s}"
    );
    assert!(
        s.contains("›    • assistant: Answer on the second root."),
        "{s}"
    );
    insta::assert_snapshot!("multiple_roots", s);
    let mut app = open(&common::find_session(&root, "0199a012-a300"), 100, 20); // c14_deep_chain
                                                                                // Even under "all", assistant messages without text (tool calls only) stay hidden.
    ctrl(&mut app, 'a');
    let t = tree(&app);
    let textless = t
        .loaded
        .session
        .entries
        .iter()
        .enumerate()
        .filter(|(i, e)| e.role() == Some("assistant") && !t.is_leaf(*i))
        .filter(|(_, e)| {
            arbor_session::entry::content_text(e.message().unwrap().get("content"), "")
                .trim()
                .is_empty()
        })
        .count();
    assert!(textless > 0);
    assert_eq!(t.rows.len(), 1500 - textless);
    assert!(
        t.rows.iter().all(|r| r.display_indent() == 0),
        "a single chain stays at one indent"
    );
    key(&mut app, KeyCode::Home);
    insta::assert_snapshot!("deep_chain_top", screen(&app));
    key(&mut app, KeyCode::End);
    assert_eq!(tree(&app).selected, Some(tree(&app).rows.len() - 1));
}

#[test]
fn detail_pane_and_context_view_with_a_compaction() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a212e6"); // pyledger, compacted
    let mut app = open(&path, 140, 40);
    let s = screen(&app);
    assert!(
        s.contains("message · assistant"),
        "detail pane header:\n{s}"
    );
    insta::assert_snapshot!("detail_pane", s);
    key(&mut app, KeyCode::F(3));
    let s = screen(&app);
    assert!(s.contains("compaction boundary"), "{s}");
    assert!(s.contains("tokens"));
    insta::assert_snapshot!("context_view", s);
    key(&mut app, KeyCode::Esc);
    assert!(!tree(&app).context_view);
}

/// Below the detail pane's default width it starts hidden: the first F2
/// shows it (it used to take two), the next hides it; wide, F2 hides it.
#[test]
fn f2_shows_the_detail_pane_at_once_on_a_narrow_screen() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a212e6");
    let mut app = open(&path, 80, 24);
    assert!(!screen(&app).contains("message · "));
    key(&mut app, KeyCode::F(2));
    assert!(screen(&app).contains("message · "), "{}", screen(&app));
    key(&mut app, KeyCode::F(2));
    assert!(!screen(&app).contains("message · "));
    let mut app = open(&path, 140, 40);
    assert!(screen(&app).contains("message · "));
    key(&mut app, KeyCode::F(2));
    assert!(!screen(&app).contains("message · "));
}

/// A resize keeps the selection on screen (a shorter window used to leave
/// it below the list) and fills a taller one (no blank rows under the end).
#[test]
fn a_resize_keeps_the_selection_on_screen() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 80, 24);
    key(&mut app, KeyCode::End);
    let rows = tree(&app).rows.len();
    assert!(rows > 19, "{rows} rows");
    app.update(AppEvent::Resize(40, 12));
    let s = screen(&app);
    assert!(s.lines().any(|l| l.starts_with('›')), "{s}");
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::End);
    app.update(AppEvent::Resize(80, 24));
    let s = screen(&app);
    let list: Vec<&str> = s.lines().skip(2).take(19).collect();
    assert!(list.iter().all(|l| !l.trim().is_empty()), "{s}");
}

#[test]
fn label_editor_writes_and_clears_a_label() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a20947"); // tidy-csv, no labels
    let mut app = open(&path, 100, 30);
    key(&mut app, KeyCode::Home);
    let target = tree(&app)
        .entry_id(tree(&app).selected_entry().unwrap())
        .to_string();
    alt(&mut app, 'l');
    assert!(matches!(tree(&app).dialog, TreeDialog::Label { .. }));
    for c in "first ask".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    insta::assert_snapshot!("label_editor", screen(&app));
    let fx = key(&mut app, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::Label {
            path: path.clone(),
            target: target.clone(),
            label: Some("first ask".into())
        }]
    );
    let before = std::fs::read(&path).unwrap();
    drive(&mut app, fx[0].clone());
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&before));
    assert_eq!(
        tree(&app)
            .loaded
            .tree
            .labels
            .get(&target)
            .map(|l| l.text.as_str()),
        Some("first ask")
    );
    assert!(screen(&app).contains("[first ask] "));
    // Empty removes it.
    key(&mut app, KeyCode::Home);
    alt(&mut app, 'l');
    ctrl(&mut app, 'u');
    let fx = key(&mut app, KeyCode::Enter);
    assert_eq!(
        fx,
        vec![Effect::Label {
            path: path.clone(),
            target: target.clone(),
            label: None
        }]
    );
    drive(&mut app, fx[0].clone());
    assert!(!tree(&app).loaded.tree.labels.contains_key(&target));
    let last: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["type"], "label");
    assert!(last.get("label").is_none(), "a clear omits the label");
}

#[test]
fn continue_from_here_branches_in_place() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a20947");
    let mut app = open(&path, 100, 30);
    // On the leaf: nothing to do.
    key(&mut app, KeyCode::End);
    let t = tree(&app);
    if t.is_leaf(t.selected_entry().unwrap()) {
        key(&mut app, KeyCode::Enter);
        assert!(screen(&app).contains("Already at this point"));
    }
    // A user message in the middle: the dialog shows its text.
    let rows = tree(&app).rows.clone();
    let pos = rows
        .iter()
        .enumerate()
        .skip(2)
        .find(|(_, r)| tree(&app).loaded.session.entries[r.entry()].role() == Some("user"))
        .map(|(p, _)| p)
        .unwrap();
    tree_select(&mut app, pos);
    let user_entry = tree(&app).selected_entry().unwrap();
    let parent = tree(&app).loaded.tree.parent.of(user_entry).unwrap();
    let parent_id = tree(&app).entry_id(parent).to_string();
    key(&mut app, KeyCode::Enter);
    assert!(matches!(tree(&app).dialog, TreeDialog::Continue { .. }));
    let s = screen(&app);
    assert!(
        s.contains("Continue from here") && s.contains("to re-send or edit"),
        "{s}"
    );
    insta::assert_snapshot!("continue_dialog", s);
    key(&mut app, KeyCode::Char('1'));
    for c in "tried the csv crate".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    let s = screen(&app);
    assert!(
        s.contains("Summary of the abandoned branch (optional): tried the csv crate"),
        "{s}"
    );
    insta::assert_snapshot!("branch_summary_prompt", s);
    let fx = key(&mut app, KeyCode::Enter);
    assert!(matches!(&fx[..], [Effect::Branch { .. }]));
    drive(&mut app, fx[0].clone());
    let last: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(last["type"], "branch_summary");
    assert_eq!(
        last["parentId"],
        serde_json::Value::String(parent_id.clone())
    );
    assert_eq!(last["fromId"], serde_json::Value::String(parent_id));
    assert_eq!(last["summary"], "tried the csv crate");
    assert!(
        matches!(tree(&app).dialog, TreeDialog::OfferResume { .. }),
        "offers to resume"
    );
    // The leaf moved: the new branch summary is the active leaf.
    let t = tree(&app);
    assert_eq!(t.loaded.tree.leaf, Some(t.loaded.session.entries.len() - 1));
}

fn tree_select(app: &mut App, pos: usize) {
    key(app, KeyCode::Home);
    for _ in 0..pos {
        key(app, KeyCode::Down);
    }
}

#[test]
fn a_legacy_file_asks_before_the_migration_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("--p--");
    std::fs::create_dir_all(&proj).unwrap();
    let src = common::shared_dir().join("realdata/large-session.jsonl");
    let path = proj.join("2025-01-01T00-00-00-000Z_legacy.jsonl");
    std::fs::copy(&src, &path).unwrap();
    let original = std::fs::read(&path).unwrap();
    let mut app = open(&path, 100, 30);
    key(&mut app, KeyCode::Home);
    alt(&mut app, 'l');
    key(&mut app, KeyCode::Char('x'));
    assert!(
        key(&mut app, KeyCode::Enter).is_empty(),
        "nothing written before the answer"
    );
    assert!(matches!(
        tree(&app).dialog,
        TreeDialog::ConfirmMigrate { .. }
    ));
    // A short screen: the question under the first rows.
    app.height = 10;
    let s = screen(&app);
    app.height = 30;
    assert!(s.contains("rewrite it as version 3"), "{s}");
    assert!(s.contains("enter rewrite · esc/ctrl+c cancel"), "{s}");
    insta::assert_snapshot!("migration_question", s);
    key(&mut app, KeyCode::Esc);
    assert_eq!(
        std::fs::read(&path).unwrap(),
        original,
        "untouched after esc"
    );
    alt(&mut app, 'l');
    key(&mut app, KeyCode::Char('x'));
    key(&mut app, KeyCode::Enter);
    let fx = key(&mut app, KeyCode::Enter);
    assert!(matches!(&fx[..], [Effect::MigrateThen { .. }]));
    drive(&mut app, fx[0].clone());
    let bak = std::fs::read(proj.join("2025-01-01T00-00-00-000Z_legacy.jsonl.bak")).unwrap();
    assert_eq!(bak, original, "the original is kept");
    let s = arbor_session::read_session(&path).unwrap();
    assert_eq!(s.file_version, 3);
    assert_eq!(s.entries.last().unwrap().entry_type(), "label");
}

#[test]
fn help_overlay() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 30);
    key(&mut app, KeyCode::F(1));
    assert_eq!(tree(&app).dialog, TreeDialog::Help);
    insta::assert_snapshot!("tree_help", screen(&app));
    key(&mut app, KeyCode::Char('x'));
    assert_eq!(tree(&app).dialog, TreeDialog::None);
    assert_eq!(tree(&app).search, "", "the closing key is not typed");
    // `?` is a character like any other: the search's (Atomic's).
    key(&mut app, KeyCode::Char('?'));
    assert_eq!(tree(&app).dialog, TreeDialog::None);
    assert_eq!(tree(&app).search, "?");
}

fn alt(app: &mut App, c: char) -> Vec<Effect> {
    press(app, KeyCode::Char(c), KeyModifiers::ALT)
}

fn typ(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// The screen with a `^` under the terminal cursor.
fn screen_cursor(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::screen_with_cursor(term.backend())
}

#[test]
fn the_search_has_a_cursor_on_the_keys_the_tree_leaves_free() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 80, 24);
    // No search: no cursor (the line is a hint).
    assert!(!screen_cursor(&app).contains('^'));
    typ(&mut app, "fake timers");
    // Alt+B / Ctrl+B move it; the tree's own keys keep their meaning.
    alt(&mut app, 'b');
    assert_eq!(tree(&app).search.cursor(), 5);
    ctrl(&mut app, 'b');
    assert_eq!(tree(&app).search.cursor(), 4);
    let s = screen_cursor(&app);
    assert!(s.contains("search: fake timers\n            ^\n"), "{s}");
    insta::assert_snapshot!("search_cursor_mid_text", s);
    key(&mut app, KeyCode::End);
    key(&mut app, KeyCode::Left);
    assert_eq!(tree(&app).search.cursor(), 4, "End and ← are the list's");
    ctrl(&mut app, 'u');
    assert_eq!(tree(&app).filter, Filter::UserOnly, "Ctrl+U is a filter");
    assert_eq!(tree(&app).search, "fake timers");
    ctrl(&mut app, 'u');
    // Typing inserts at the cursor; Ctrl+W, Delete, Ctrl+K edit there.
    typ(&mut app, "r");
    assert_eq!(tree(&app).search, "faker timers");
    ctrl(&mut app, 'f');
    ctrl(&mut app, 'w');
    assert_eq!(tree(&app).search, "timers");
    assert_eq!(tree(&app).search.cursor(), 0);
    alt(&mut app, 'f');
    assert_eq!(tree(&app).search.cursor(), 6);
    alt(&mut app, 'b');
    key(&mut app, KeyCode::Delete);
    assert_eq!(tree(&app).search, "imers");
    ctrl(&mut app, 'e');
    assert_eq!(tree(&app).search.cursor(), 5);
    ctrl(&mut app, 'b');
    ctrl(&mut app, 'k');
    assert_eq!(tree(&app).search, "imer");
    // The rows follow the text.
    let rows = tree(&app).rows.len();
    typ(&mut app, "zzz");
    assert!(tree(&app).rows.is_empty() && rows > 0);
}

#[test]
fn the_label_and_summary_prompts_have_a_cursor() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a20947");
    let mut app = open(&path, 80, 24);
    key(&mut app, KeyCode::Home);
    alt(&mut app, 'l');
    typ(&mut app, "first ask");
    // In a prompt Home/End and ←/→ are the field's.
    key(&mut app, KeyCode::Home);
    typ(&mut app, "the ");
    key(&mut app, KeyCode::End);
    press(&mut app, KeyCode::Left, KeyModifiers::CONTROL);
    key(&mut app, KeyCode::Right);
    let TreeDialog::Label { input, .. } = &tree(&app).dialog else {
        panic!("label prompt")
    };
    assert_eq!(input, "the first ask");
    assert_eq!(input.cursor(), 11);
    let s = screen_cursor(&app);
    assert!(s.contains("Label: the first ask  enter save"), "{s}");
    assert!(s.contains("\n                  ^\n"), "{s}");
    insta::assert_snapshot!("label_cursor_mid_text", s);
    key(&mut app, KeyCode::Esc);

    // The branch summary: at 80 columns the hint gives way to the field.
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('1'));
    typ(&mut app, "tried the csv crate");
    ctrl(&mut app, 'a');
    typ(&mut app, "we ");
    let s = screen_cursor(&app);
    assert!(
        s.contains("Summary of the abandoned branch (optional): we tried the csv crate\n"),
        "{s}"
    );
    let fx = key(&mut app, KeyCode::Enter);
    assert!(
        matches!(&fx[..], [Effect::Branch { summary, .. }] if summary == "we tried the csv crate"),
        "{fx:?}"
    );
}

fn paste(app: &mut App, text: &str) -> Vec<Effect> {
    app.update(AppEvent::Paste(text.into()))
}

#[test]
fn a_paste_is_text_for_the_tree_never_a_key() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a20947");
    let mut app = open(&path, 100, 30);
    key(&mut app, KeyCode::Home);
    // No field focused: a paste starts a search (a newline is no Enter).
    // (Its only effect: reading which entries match, off the UI thread.)
    assert!(paste(&mut app, "delimiter\n")
        .iter()
        .all(|f| matches!(f, Effect::TreeHits { .. })));
    assert_eq!(tree(&app).search, "delimiter ");
    assert_eq!(tree(&app).dialog, TreeDialog::None);
    assert!(!tree(&app).rows.is_empty());
    key(&mut app, KeyCode::Esc);
    // The label prompt takes it at its cursor.
    alt(&mut app, 'l');
    typ(&mut app, "ask");
    key(&mut app, KeyCode::Home);
    assert!(paste(&mut app, "first\t").is_empty());
    let TreeDialog::Label { input, .. } = &tree(&app).dialog else {
        panic!("label prompt")
    };
    assert_eq!(input, "first ask");
    key(&mut app, KeyCode::Esc);
    // The continue question ignores it (a `1`, `2` or `y` in it is no answer)…
    key(&mut app, KeyCode::Enter);
    assert!(matches!(tree(&app).dialog, TreeDialog::Continue { .. }));
    assert!(paste(&mut app, "2\n").is_empty());
    assert!(matches!(tree(&app).dialog, TreeDialog::Continue { .. }));
    // …and the summary prompt takes it.
    key(&mut app, KeyCode::Char('1'));
    assert!(paste(&mut app, "tried\nthe csv crate\n").is_empty());
    let TreeDialog::BranchSummary { input, .. } = &tree(&app).dialog else {
        panic!("summary prompt")
    };
    assert_eq!(input, "tried the csv crate ");
    assert_eq!(tree(&app).search, "");
    assert!(app.outcome.is_none());
}

fn tick(app: &mut App, now: i64) {
    app.update(AppEvent::Tick(now));
}

fn status(app: &App) -> Option<String> {
    tree(app).status.as_ref().map(|(s, _)| s.clone())
}

/// Issue #10.8: status messages go after a few seconds; clearing a label
/// says so; declining the offer to resume a fork does not bring
/// "Forking…" back; `y` says what was sent, not that the clipboard was set.
#[test]
fn status_messages_expire_and_say_what_happened() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a20947");
    let mut app = open(&path, 100, 30);
    key(&mut app, KeyCode::Home);
    alt(&mut app, 'l');
    typ(&mut app, "first ask");
    let fx = key(&mut app, KeyCode::Enter);
    drive(&mut app, fx[0].clone());
    assert_eq!(status(&app).as_deref(), Some("Label saved"));
    tick(&mut app, NOW + 1_000);
    tick(&mut app, NOW + 3_000);
    assert_eq!(status(&app).as_deref(), Some("Label saved"), "still there");
    tick(&mut app, NOW + 5_000);
    assert_eq!(status(&app), None, "gone after a few seconds");
    assert!(!screen(&app).contains("Label saved"));

    // Clearing the label says it was removed.
    alt(&mut app, 'l');
    ctrl(&mut app, 'u');
    let fx = key(&mut app, KeyCode::Enter);
    drive(&mut app, fx[0].clone());
    assert_eq!(status(&app).as_deref(), Some("Label removed"));

    // Fork from a user message in the middle, then decline the resume.
    let pos = tree(&app)
        .rows
        .iter()
        .enumerate()
        .skip(2)
        .find(|(_, r)| tree(&app).loaded.session.entries[r.entry()].role() == Some("user"))
        .map(|(p, _)| p)
        .unwrap();
    tree_select(&mut app, pos);
    key(&mut app, KeyCode::Enter);
    // `y` copies the message's text; arbor cannot know the terminal took it.
    let fx = key(&mut app, KeyCode::Char('y'));
    assert!(matches!(&fx[..], [Effect::Copy(_)]));
    let said = status(&app).unwrap();
    assert!(
        said.contains("OSC 52") && !said.contains("copied"),
        "{said}"
    );
    let fx = key(&mut app, KeyCode::Char('2'));
    assert_eq!(status(&app).as_deref(), Some("Forking…"));
    // Work under way stays said until its result comes, however long.
    tick(&mut app, NOW + 6_000);
    tick(&mut app, NOW + 60_000);
    assert_eq!(status(&app).as_deref(), Some("Forking…"), "still forking");
    drive(&mut app, fx[0].clone());
    assert!(matches!(tree(&app).dialog, TreeDialog::OfferResume { .. }));
    assert_ne!(status(&app).as_deref(), Some("Forking…"));
    key(&mut app, KeyCode::Esc);
    let said = status(&app).unwrap_or_default();
    assert!(said.starts_with("Forked to "), "{said:?}");
    assert!(!screen(&app).contains("Forking…"));
}

/// Shift+E on an entry: a prompt (m / h, t for thinking), then the branch
/// ending at that entry is written into a folder; a second export never
/// replaces the first; the status line says where.
#[test]
fn shift_e_exports_the_branch_ending_at_the_selection() {
    use arbor_session::export::ExportFormat;
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 120, 30);
    // Select an entry off the active path: the abandoned branch's user message.
    while !selected_text(&app).starts_with("user: Let's keep it simple") {
        key(&mut app, KeyCode::Up);
    }
    let entry = {
        let t = tree(&app);
        t.entry_id(t.selected_entry().unwrap()).to_string()
    };
    assert!(alt(&mut app, 'e').is_empty());
    let s = screen(&app);
    assert!(
        s.contains("Export the branch ending here to the current folder: m Markdown · h HTML · t thinking [off] · esc cancel"),
        "{s}"
    );
    // Esc cancels, nothing is asked of the runtime.
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    assert_eq!(tree(&app).dialog, TreeDialog::None);

    alt(&mut app, 'e');
    assert!(key(&mut app, KeyCode::Char('t')).is_empty());
    assert!(screen(&app).contains("t thinking [on]"));
    let fx = key(&mut app, KeyCode::Char('h'));
    let want = Effect::Export {
        path: path.clone(),
        leaf: entry.clone(),
        format: ExportFormat::Html,
        thinking: true,
        file_name: format!("01a1fd62-68b4-7718-a139-873a95bd447e-{}.html", &entry[..8]),
    };
    assert_eq!(fx, vec![want]);
    assert_eq!(tree(&app).dialog, TreeDialog::None);

    // What the runtime does with it, into a folder of our own.
    let out = tempfile::tempdir().unwrap();
    let export = |name: &str| {
        arbor::ui::runtime::export_branch(&path, &entry, ExportFormat::Html, true, name, out.path())
    };
    let first = export("s-x.html").unwrap();
    let second = export("s-x.html").unwrap();
    assert_eq!(first, out.path().join("s-x.html"));
    assert_eq!(second, out.path().join("s-x-2.html"));
    let html = std::fs::read_to_string(&first).unwrap();
    assert_eq!(html, std::fs::read_to_string(&second).unwrap());
    assert!(html.contains("(not the session&#39;s current leaf)"));
    assert!(html.contains("Let&#39;s keep it simple"));
    assert!(
        !html.contains("Branch summary"),
        "the other branch is not in it"
    );

    app.update(AppEvent::Exported(Ok(first.clone())));
    let s = screen(&app);
    assert!(
        s.contains(&format!("Exported to {}", first.display())),
        "{s}"
    );
    app.update(AppEvent::Exported(Err("disk full".into())));
    assert!(screen(&app).contains("Export failed: disk full"));
}

/// What a key may change: the tree's whole state (the detail scroll, the
/// filter, a dialog…).
fn state_of(app: &App) -> String {
    format!("{:?}", tree(app))
}

/// Issue #12: one table drives the tree's keys, its help and its hints.
/// Every key in it is dispatched to its own action (no binding above it
/// takes it first), does something, and is listed in the help.
#[test]
fn every_tree_key_is_dispatched_and_listed() {
    use arbor::ui::keymap::When;
    use arbor::ui::tree::{help_rows, CONTEXT_KEYS, KEYS};
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    // A middle row (every move goes somewhere), the detail pane scrolled
    // one line (both ways move it), a filter on (the default one is a
    // change).
    let start = || {
        let mut app = open(&path, 120, 24);
        key(&mut app, KeyCode::Home);
        for _ in 0..12 {
            key(&mut app, KeyCode::Down);
        }
        press(&mut app, KeyCode::Down, KeyModifiers::SHIFT);
        ctrl(&mut app, 'u');
        app
    };
    for b in KEYS.0 {
        for (chord, action) in b.keys {
            let name = chord.label();
            let ev = chord.event();
            assert_eq!(KEYS.action(&ev, true), Some(*action), "{name}");
            let with_text = KEYS.action(&ev, false);
            match b.when {
                When::Always => assert_eq!(with_text, Some(*action), "{name}"),
                When::EmptyField => assert_eq!(with_text, None, "{name}"),
            }
            let mut app = start();
            let before = state_of(&app);
            let fx = app.update(AppEvent::Key(ev));
            let after = match &app.mode {
                Mode::Tree(_) => state_of(&app),
                Mode::Picker => "back in the picker".into(),
            };
            assert!(
                !fx.is_empty() || after != before,
                "{name} ({action:?}) did nothing"
            );
        }
    }
    // The context view (F3) has keys of its own.
    for (chord, action) in CONTEXT_KEYS.0.iter().flat_map(|b| b.keys) {
        let mut app = start();
        key(&mut app, KeyCode::F(3));
        key(&mut app, KeyCode::Down);
        let before = state_of(&app);
        let fx = app.update(AppEvent::Key(chord.event()));
        assert!(
            !fx.is_empty() || state_of(&app) != before,
            "{} ({action:?}) did nothing in the context view",
            chord.label()
        );
    }
    let mut app = start();
    key(&mut app, KeyCode::F(3));
    let s = screen(&app);
    for c in CONTEXT_KEYS.0.iter().flat_map(|b| b.keys).map(|k| &k.0) {
        assert!(c.quiet || s.contains(&c.label()), "{}:\n{s}", c.label());
    }
    // The help, on a screen tall enough for all of it.
    let mut app = start();
    app.height = 80;
    key(&mut app, KeyCode::F(1));
    let help = screen(&app);
    let rows = help_rows();
    for b in KEYS.0 {
        assert!(
            rows.iter().any(|r| r.keys == b.label() && r.text == b.help),
            "{} is not in the help",
            b.label()
        );
    }
    for r in &rows {
        for part in [&r.keys, &r.text] {
            for word in part.split(' ') {
                assert!(help.contains(word), "{word:?} of {r:?}:\n{help}");
            }
        }
    }
    // The search's own keys: the tree takes ←/→, Home/End and Ctrl+A/U;
    // Ctrl+B/F, Alt+B/F, Ctrl+E and Ctrl+K are the field's.
    assert!(rows.iter().any(|r| r.keys == "ctrl+b/f"), "{rows:?}");
    assert!(rows.iter().any(|r| r.keys == "ctrl+e"), "{rows:?}");
    assert!(rows.iter().any(|r| r.keys == "ctrl+k"), "{rows:?}");
    let field = rows
        .iter()
        .skip_while(|r| !r.keys.is_empty() || !r.text.starts_with("Editing"));
    assert!(
        !field.clone().any(|r| r.keys.contains("ctrl+a")),
        "{rows:?}"
    );
    assert!(!field.clone().any(|r| r.keys.contains("Home")), "{rows:?}");
    // No row of the field's describes a key the tree took from it.
    assert_eq!(
        KEYS.partly_taken(&arbor::ui::input::KEYS),
        Vec::<String>::new()
    );
}

/// The questions' keys come from their tables: each one answers (or
/// toggles), and the question names the keys that are not quiet.
#[test]
fn tree_question_keys_are_dispatched_and_named() {
    use arbor::ui::tree::{Choice, ExportChoice, CONTINUE_KEYS, EXPORT_KEYS};
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    // A user message off the leaf: the Continue box offers its text.
    let asked = |k: char| {
        let mut app = open(&path, 120, 30);
        while !selected_text(&app).starts_with("user: Let's keep it simple") {
            key(&mut app, KeyCode::Up);
        }
        if k == 'c' {
            key(&mut app, KeyCode::Enter);
        } else {
            alt(&mut app, 'e');
        }
        app
    };
    let s = screen(&asked('c'));
    for (chord, choice) in CONTINUE_KEYS.0.iter().flat_map(|b| b.keys) {
        assert!(
            chord.quiet
                || s.contains(&format!(" {} ", chord.label()))
                || s.contains(&format!("({}", chord.label())),
            "{}:\n{s}",
            chord.label()
        );
        let mut app = asked('c');
        let before = state_of(&app);
        let fx = app.update(AppEvent::Key(chord.event()));
        match choice {
            Choice::Fork => assert!(matches!(fx[..], [Effect::Fork { .. }])),
            Choice::Copy => assert!(matches!(fx[..], [Effect::Copy(_)])),
            Choice::Branch => assert!(matches!(
                tree(&app).dialog,
                TreeDialog::BranchSummary { .. }
            )),
            Choice::Cancel => assert_eq!(tree(&app).dialog, TreeDialog::None),
        }
        assert_ne!(state_of(&app), before);
    }
    let s = screen(&asked('e'));
    for (chord, choice) in EXPORT_KEYS.0.iter().flat_map(|b| b.keys) {
        assert!(chord.quiet || s.contains(&chord.label()), "{s}");
        let mut app = asked('e');
        let fx = app.update(AppEvent::Key(chord.event()));
        match choice {
            ExportChoice::Markdown | ExportChoice::Html => {
                assert!(matches!(fx[..], [Effect::Export { .. }]))
            }
            ExportChoice::Thinking => {
                assert!(matches!(
                    tree(&app).dialog,
                    TreeDialog::Export { thinking: true, .. }
                ))
            }
            ExportChoice::Cancel => assert_eq!(tree(&app).dialog, TreeDialog::None),
        }
    }
}

/// Issue #12: in the tree too, a tick changes nothing on screen (no
/// frame) unless a status message ends or the day label times are
/// written against turns; a key bound to nothing draws nothing.
#[test]
fn the_tree_draws_nothing_when_nothing_visible_changed() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 30);
    let t0 = NOW;
    assert!(!app.step_at(t0 + 1_000, AppEvent::Tick(t0 + 1_000)).redraw);
    let f5 = AppEvent::Key(KeyEvent::new(KeyCode::F(5), KeyModifiers::NONE));
    assert!(!app.step(f5).redraw);
    let ctrl_g = AppEvent::Key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL));
    assert!(!app.step(ctrl_g).redraw);
    assert!(
        app.step(AppEvent::Key(KeyEvent::new(
            KeyCode::Up,
            KeyModifiers::NONE
        )))
        .redraw
    );
    // Label times: `HH:MM` for today; the next day they read `M/D HH:MM`.
    alt(&mut app, 't');
    let midnight = 1_796_000_000_000 - 1_796_000_000_000 % 86_400_000;
    assert!(
        !app.step_at(midnight - 1_000, AppEvent::Tick(midnight - 1_000))
            .redraw
    );
    assert!(app.step_at(midnight, AppEvent::Tick(midnight)).redraw);
    alt(&mut app, 't');
    // A status message's end is drawn.
    if let Mode::Tree(t) = &mut app.mode {
        t.status = Some(("Label saved".into(), false));
    }
    let t = midnight + 10_000;
    assert!(!app.step_at(t, AppEvent::Tick(t)).redraw, "its time starts");
    assert!(!app.step_at(t + 1_000, AppEvent::Tick(t + 1_000)).redraw);
    assert!(app.step_at(t + 5_000, AppEvent::Tick(t + 5_000)).redraw);
    assert!(tree(&app).status.is_none());
    // The picker's background work behind the tree is not drawn.
    let step = app.step(AppEvent::LoadProgress { done: 1, total: 2 });
    assert!(!step.redraw);
}

/// The offer to resume after a branch from an entry that is not a user
/// message (nothing to send again): one line under the tree.
#[test]
fn a_branch_offers_to_resume_there() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a20947");
    let mut app = open(&path, 80, 24);
    let pos = tree(&app)
        .rows
        .iter()
        .position(|r| {
            let t = tree(&app);
            t.loaded.session.entries[r.entry()].role() == Some("assistant") && !t.is_leaf(r.entry())
        })
        .unwrap();
    tree_select(&mut app, pos);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Char('1'));
    let fx = key(&mut app, KeyCode::Enter);
    drive(&mut app, fx[0].clone());
    assert!(matches!(
        tree(&app).dialog,
        TreeDialog::OfferResume { prompt: None, .. }
    ));
    let s = screen(&app);
    assert!(
        s.contains("Branched: the session now continues from there.")
            && s.contains("Resume the agent there now?")
            && s.contains("enter resume · esc stay"),
        "{s}"
    );
    insta::assert_snapshot!("offer_resume", s);
    // Esc stays, and says again what was done.
    key(&mut app, KeyCode::Esc);
    assert_eq!(tree(&app).dialog, TreeDialog::None);
    assert!(screen(&app).contains("Branched: the session now continues from there."));
}

/// Issue #12: both screens' frames at 80×24 and at 40×12 (the smallest
/// size the help and questions are checked at).
#[test]
fn tree_frames_at_80x24_and_40x12() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let app = open(&path, 80, 24);
    insta::assert_snapshot!("tree_80x24", screen(&app));
    let mut app = open(&path, 40, 12);
    let s = screen(&app);
    assert!(s.contains("›"), "the selection is on screen:\n{s}");
    insta::assert_snapshot!("tree_40x12", s);
    key(&mut app, KeyCode::F(1));
    insta::assert_snapshot!("tree_help_40x12", screen(&app));
}

/// The two hint lines hold whole hints at any width (as Atomic wraps its
/// tree help between items): at 80 columns they were cut mid-word. What
/// does not fit is left to the help, whose key always shows.
#[test]
fn hint_lines_hold_whole_hints_at_any_width() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    const ENDS: &[&str] = &[
        "move",
        "page",
        "fold/jump",
        "here",
        "label",
        "time",
        "export",
        "mark/compare",
        "filter",
        "cycle",
        "detail",
        "context",
        "help",
        "back",
    ];
    for (w, h) in [
        (40, 12),
        (60, 20),
        (80, 24),
        (100, 30),
        (140, 30),
        (220, 30),
    ] {
        let app = open(&path, w, h);
        let s = screen(&app);
        let lines: Vec<&str> = s.lines().collect();
        let hints = &lines[lines.len() - 2..];
        for l in hints.iter().filter(|l| !l.trim().is_empty()) {
            for item in l.trim_end().split(" · ") {
                let last = item.rsplit(' ').next().unwrap_or("");
                assert!(ENDS.contains(&last), "{w}×{h}: a cut hint {item:?}:\n{s}");
            }
        }
        assert!(hints.iter().any(|l| l.contains("F1 help")), "{w}×{h}:\n{s}");
        if w >= 220 {
            assert!(hints.concat().contains("label time"), "all of them:\n{s}");
        }
    }
}

/// `arbor tree SESSION` before the session is read: a line that says so.
#[test]
fn the_tree_only_loading_screen() {
    let mut app = App::new("/".into(), NOW);
    app.width = 40;
    app.height = 12;
    app.tree_only = true;
    let s = screen(&app);
    assert!(s.starts_with("Loading session…"), "{s}");
    insta::assert_snapshot!("tree_only_loading", s);
}

/// Label times are drawn in the offset the state holds (the runtime sets
/// the local one from its clock), never read from the system inside the
/// view: UTC unless told.
#[test]
fn label_times_use_the_offset_in_the_state() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 40);
    alt(&mut app, 't');
    assert!(screen(&app).contains("[checkpoint] 11/21 09:"));
    let two_hours_east = chrono::FixedOffset::east_opt(2 * 3600).unwrap();
    app.set_utc_offset(two_hours_east);
    let s = screen(&app);
    assert!(s.contains("[checkpoint] 11/21 11:"), "{s}");
}

/// `arbor tree SESSION --at ENTRY` (and a search hit) opens the tree at an
/// entry: selected, on its branch, shown even when the default filter hides
/// it; an id the session lacks opens at the leaf and says so.
#[test]
fn the_tree_opens_at_an_entry() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let open_at = |entry: &str| {
        let mut app = App::new("/".into(), NOW);
        app.width = 100;
        app.height = 24;
        app.open_at = Some((path.clone(), entry.into()));
        drive(
            &mut app,
            Effect::OpenTree {
                path: path.clone(),
                agent: arbor_session::Agent::Atomic,
            },
        );
        assert!(app.open_at.is_none(), "taken when the tree opens");
        app
    };
    let id = |app: &App| {
        let t = tree(app);
        t.entry_id(t.selected_entry().unwrap()).to_string()
    };
    // On the abandoned branch (the leaf is on the other one).
    let app = open_at("ece135bc");
    assert_eq!(id(&app), "ece135bc");
    assert!(selected_text(&app).contains("The fake timers made it worse"));
    assert_eq!(tree(&app).filter, Filter::Default);
    let s = screen(&app);
    let line = s.lines().find(|l| l.contains('›')).unwrap();
    assert!(line.contains("The fake timers made it worse"), "{s}");
    // A thinking-level change: only the `all` filter shows it.
    let app = open_at("b61e6ba5");
    assert_eq!(id(&app), "b61e6ba5");
    assert_eq!(tree(&app).filter, Filter::All);
    // No such entry: the leaf (a title change the default filter hides:
    // its nearest shown ancestor), and why.
    let app = open_at("nope");
    assert_eq!(id(&app), "7ea66ad8");
    assert!(screen(&app).contains("No entry nope in this session"));
    // The keys work from there as from the leaf.
    let mut app = open_at("ece135bc");
    key(&mut app, KeyCode::Up);
    assert_eq!(id(&app), "10d18958");
}

/// Hostile conditions, item 5: a line longer than the tree reads
/// (`TREE_MAX_LINE`) is never read: its row says what it is and that it
/// was not read, and the entries around it show as ever.
#[test]
fn a_line_too_long_to_read_says_so_in_the_tree() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(w, r#"{{"type":"session","version":3,"id":"0193b000-0000-7000-8000-0000000000aa","timestamp":"2026-11-29T10:00:00.000Z","cwd":"/h"}}"#).unwrap();
    writeln!(w, r#"{{"type":"message","id":"aaaa0001","parentId":null,"timestamp":"2026-11-29T10:00:01.000Z","message":{{"role":"user","content":"show me the log"}}}}"#).unwrap();
    write!(w, r#"{{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-11-29T10:00:02.000Z","message":{{"role":"assistant","content":""#).unwrap();
    let chunk = "a log line ".repeat(1 << 16);
    let big = arbor::ui::tree::TREE_MAX_LINE + (1 << 20);
    for _ in 0..big.div_ceil(chunk.len()) {
        w.write_all(chunk.as_bytes()).unwrap();
    }
    writeln!(w, r#""}}}}"#).unwrap();
    writeln!(w, r#"{{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-11-29T10:00:03.000Z","message":{{"role":"user","content":"thanks"}}}}"#).unwrap();
    drop(w);
    let app = open(&path, 120, 20);
    let s = screen(&app);
    assert!(s.contains("user: show me the log"), "{s}");
    assert!(s.contains("user: thanks"), "{s}");
    let mb = big.div_ceil(chunk.len()) * chunk.len() / (1 << 20) + 1;
    assert!(
        s.contains(&format!(
            "assistant: [a line of {mb} MB, too long to read here: not shown]"
        )),
        "{s}"
    );
}

/// Issue "Hostile conditions, second round": a label on a file trashed
/// since the tree opened says the file is gone and nothing was written
/// (the reload that follows a failed write used to replace that with
/// "Reload failed").
#[test]
fn a_label_on_a_file_that_is_gone_says_so() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a20947");
    let mut app = open(&path, 100, 30);
    key(&mut app, KeyCode::Home);
    alt(&mut app, 'l');
    for c in "lost".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    std::fs::remove_file(&path).unwrap();
    let fx = key(&mut app, KeyCode::Enter);
    assert!(matches!(fx[0], Effect::Label { .. }), "{fx:?}");
    drive(&mut app, fx[0].clone());
    let (text, error) = tree(&app).status.clone().expect("a message");
    assert!(error, "{text}");
    assert!(text.contains("is gone"), "{text}");
    assert!(text.contains("nothing was written"), "{text}");
    assert!(!text.contains("Reload failed"), "{text}");
}
