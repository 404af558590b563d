//! The picker screen: whole-screen snapshots on a TestBackend (fixed size
//! and clock, no colour), and key sequences that assert state and effects.

use crate::common::{self, drive};

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::app::searcher::Stage;
use arbor::ui::picker::{Dialog, Row, Sort, PERMANENT_GUARD_MS};
use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect, Outcome};
use arbor_session::info::scan_info;
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

/// 2026-11-29T12:00:00Z: the demo sessions are 1 day to 9 days old.
const NOW: i64 = 1_795_953_600_000;

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn fixture() -> Fixture {
    let dir = common::demo_store();
    let root = dir.path().join("sessions");
    Fixture { _dir: dir, root }
}

fn rows(root: &Path) -> Vec<Row> {
    let (files, _) = list_session_files(
        &StoreConfig::single(root, StoreKind::PerProject),
        &Scope::All,
    );
    files
        .iter()
        .map(|f| Row::new(scan_info(&f.path).unwrap()))
        .collect()
}

fn app_with(root: &Path, cwd: &str) -> App {
    let mut app = App::new(cwd.to_string(), NOW);
    app.width = 100;
    app.height = 24;
    drive(&mut app, AppEvent::Rows(rows(root)));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    app
}

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    drive(app, AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn ctrl(app: &mut App, c: char) -> Vec<Effect> {
    drive(
        app,
        AppEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)),
    )
}

fn typ(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn screen(app: &App, root: &Path) -> String {
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(t.backend().buffer()).replace(&root.display().to_string(), "[store]")
}

const WEBAPP: &str = "/home/demo/projects/webapp";

#[test]
fn loading_frame_paints_before_any_row() {
    let mut app = App::new(WEBAPP.into(), NOW);
    app.width = 100;
    app.height = 12;
    app.picker.progress.loading = Some((0, 9));
    insta::assert_snapshot!("loading", screen(&app, Path::new("/x")));
}

/// While rows still come, a current folder with none of them yet says it
/// is loading, not that it has none: they may be among the rows to come.
#[test]
fn an_empty_current_folder_says_loading_until_every_row_is_in() {
    let fx = fixture();
    let mut app = App::new("/home/demo/elsewhere".into(), NOW);
    app.width = 100;
    app.height = 12;
    app.picker.progress.loading = Some((0, 9));
    drive(&mut app, AppEvent::Rows(rows(&fx.root)));
    assert!(app.picker.list.visible.is_empty());
    let s = screen(&app, &fx.root);
    assert!(s.contains("Loading sessions…"), "{s}");
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    let s = screen(&app, &fx.root);
    assert!(s.contains("No sessions in current folder"), "{s}");
}

#[test]
fn current_folder_threads_the_fork_under_its_parent() {
    let fx = fixture();
    let app = app_with(&fx.root, WEBAPP);
    let s = screen(&app, &fx.root);
    assert!(s.contains("└─ "), "the fork nests under its parent:\n{s}");
    insta::assert_snapshot!("current_threaded", s);
}

#[test]
fn all_scope_and_each_sort_mode() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    insta::assert_snapshot!("all_threaded", screen(&app, &fx.root));
    ctrl(&mut app, 's');
    assert_eq!(app.picker.settings.sort, Sort::Recent);
    let recent = screen(&app, &fx.root);
    assert!(!recent.contains("└─ "), "recent is flat");
    insta::assert_snapshot!("all_recent", recent);
    ctrl(&mut app, 's');
    assert_eq!(app.picker.settings.sort, Sort::Relevance);
    typ(&mut app, "auth");
    insta::assert_snapshot!("all_relevance_query", screen(&app, &fx.root));
    ctrl(&mut app, 's');
    assert_eq!(app.picker.settings.sort, Sort::Threaded);
}

#[test]
fn named_filter_paths_and_summary_column() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    ctrl(&mut app, 'n');
    let named = screen(&app, &fx.root);
    assert!(named.contains("Name: Named"));
    insta::assert_snapshot!("all_named", named);
    ctrl(&mut app, 'n');
    ctrl(&mut app, 'p');
    let paths = screen(&app, &fx.root);
    assert!(paths.contains(".jsonl"), "paths shown:\n{paths}");
    assert!(paths.contains("ctrl+p Path (on)"), "{paths}");
    // The same rows in a store under the home folder (the state's, never
    // the runner's), for a snapshot that does not depend on the temp dir's
    // name.
    let home = PathBuf::from("/home/u");
    let fake = home.join(".atomic/agent/sessions");
    let moved: Vec<Row> = rows(&fx.root)
        .into_iter()
        .map(|r| {
            let mut info = r.into_info();
            let re = |p: &Path| fake.join(p.strip_prefix(&fx.root).unwrap_or(p));
            info.path = re(&info.path).into();
            info.parent_session_path = info
                .parent_session_path
                .map(|p| re(Path::new(&p)).display().to_string());
            Row::new(info)
        })
        .collect();
    let mut app = App::new(WEBAPP.into(), NOW);
    app.width = 100;
    app.height = 24;
    app.picker.settings.home = Some(home);
    drive(&mut app, AppEvent::Rows(moved));
    key(&mut app, KeyCode::Tab);
    ctrl(&mut app, 'p');
    let paths = screen(&app, &fx.root);
    // `~`-shortened, cut in the middle: the store and the file's id both show.
    assert!(paths.contains("~/.atomic/agent/sessions/"), "{paths}");
    assert!(
        paths.contains("….jsonl") || paths.contains(".jsonl"),
        "{paths}"
    );
    insta::assert_snapshot!("all_paths", paths);
}

/// Issue #14.6: the second column is the summary when it is fresh, else
/// the first line of the last assistant message (where the session left
/// off), never a placeholder.
#[test]
fn summary_column_shows_the_summary_else_where_the_session_left_off() {
    let fx = fixture();
    let app = app_with(&fx.root, "/home/demo/projects/pyledger");
    let s = screen(&app, &fx.root);
    assert!(!s.contains("No summary available."), "{s}");
    let line = |title: &str| s.lines().find(|l| l.contains(title)).unwrap().to_string();
    // A fresh summary.
    assert!(
        line("Write a CONTRIBUTING.md").contains("Wrote CONTRIBUTING.md for py"),
        "{s}"
    );
    // No summary, or a stale one: the last reply's first line.
    assert_eq!(app.picker.list.visible.len(), 3);
    for v in &app.picker.list.visible {
        let r = &app.picker.list.rows[v.idx];
        if r.summary().is_none() {
            let reply = r.info.last_reply.as_deref().unwrap();
            let start: String = reply.chars().take(15).collect();
            assert!(
                line(&r.title().chars().take(30).collect::<String>()).contains(&start),
                "{s}"
            );
        }
    }
    assert!(
        line("tests/test_paths.py").contains("Added a module-level `py"),
        "{s}"
    );
    insta::assert_snapshot!("summary_column", s);
}

/// In the all-projects scope the cwds differ in length; the title and
/// summary columns still start in line on every row.
#[test]
fn summary_column_lines_up_across_cwds_of_any_length() {
    let fx = fixture();
    let mut rows = rows(&fx.root);
    let mut first = rows[0].clone().into_info();
    first.cwd = "/w".into();
    rows[0] = Row::new(first);
    let mut app = App::new(WEBAPP.into(), NOW);
    app.width = 160;
    app.height = 24;
    app.picker.settings.preview_on = Some(false);
    drive(&mut app, AppEvent::Rows(rows));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    key(&mut app, KeyCode::Tab);
    let s = screen(&app, &fx.root);
    assert!(s.contains(" /w "), "{s}");
    // The second column's texts of a row with the short cwd, of rows with
    // long ones, and of a fork under its parent.
    let starts: Vec<usize> = [
        "Both done",
        "Committed as",
        "Release build",
        "Added `scripts",
    ]
    .iter()
    .filter_map(|t| {
        s.lines()
            .find_map(|l| l.find(t).map(|b| l[..b].chars().count()))
    })
    .collect();
    assert_eq!(starts.len(), 4, "{s}");
    assert!(starts.iter().all(|&c| c == starts[0]), "{starts:?}\n{s}");
}

#[test]
fn empty_states() {
    let fx = fixture();
    let mut app = app_with(&fx.root, "/nowhere");
    assert!(screen(&app, &fx.root).contains("No sessions in current folder. tab view all."));
    ctrl(&mut app, 'n');
    assert!(screen(&app, &fx.root)
        .contains("No named sessions in current folder. ctrl+n show all · tab view all."));
    let mut only_unnamed = App::new("/nowhere".into(), NOW);
    only_unnamed.width = 100;
    only_unnamed.height = 10;
    let unnamed: Vec<Row> = rows(&fx.root)
        .into_iter()
        .filter(|r| r.display_name().is_none())
        .collect();
    drive(&mut only_unnamed, AppEvent::Rows(unnamed));
    key(&mut only_unnamed, KeyCode::Tab);
    ctrl(&mut only_unnamed, 'n');
    assert!(screen(&only_unnamed, &fx.root)
        .contains("No named sessions found. Press ctrl+n to show all."));
    let mut none = App::new("/nowhere".into(), NOW);
    none.width = 100;
    none.height = 10;
    key(&mut none, KeyCode::Tab);
    let s = screen(&none, &fx.root);
    assert!(s.contains("No sessions found"));
    insta::assert_snapshot!("empty_all", s);
}

#[test]
fn query_highlights_matches_and_bad_regex_says_why() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    typ(&mut app, "flaky");
    let s = screen(&app, &fx.root);
    assert!(s.contains("Fix flaky auth test"));
    // The matched characters carry the highlight style.
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    let theme = Theme::ansi();
    t.draw(|f| arbor::ui::picker::render(f, &app, &theme))
        .unwrap();
    let buf = t.backend().buffer();
    let row = (0..buf.area.height)
        .find(|&y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .contains("Fix flaky")
        })
        .unwrap();
    let line: String = (0..buf.area.width)
        .map(|x| buf[(x, row)].symbol())
        .collect();
    let start = line.find("flaky").unwrap();
    let col = line[..start].chars().count() as u16;
    for x in col..col + 5 {
        assert_eq!(
            buf[(x, row)].style().fg,
            theme.highlight().fg,
            "cell {x} highlighted"
        );
    }
    insta::assert_snapshot!("query_flaky", s);
    ctrl(&mut app, 'u');
    typ(&mut app, "re:([");
    let s = screen(&app, &fx.root);
    assert!(s.contains("invalid regex"), "{s}");
    assert!(app.picker.list.visible.is_empty());
    insta::assert_snapshot!("regex_error", s);
}

#[test]
fn filters_narrow_the_list_and_an_unknown_key_says_so() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    let all = app.picker.list.visible.len();
    typ(&mut app, "is:named");
    let named = app.picker.list.visible.len();
    assert!(named > 0 && named < all, "{named} of {all}");
    let s = screen(&app, &fx.root);
    assert!(s.contains("Fix flaky auth test"), "{s}");
    // Words combine with filters.
    typ(&mut app, " zebra");
    assert!(app.picker.list.visible.is_empty());
    ctrl(&mut app, 'u');
    typ(&mut app, "flaky colour:red");
    let s = screen(&app, &fx.root);
    assert!(s.contains("unknown filter \"colour:\""), "{s}");
    assert!(app.picker.list.visible.is_empty());
    // Too long for the line: cut with an ellipsis, not at the edge.
    let query_line = s.lines().nth(2).unwrap_or_default();
    assert!(query_line.trim_end().ends_with('…'), "{s}");
    insta::assert_snapshot!("unknown_filter_key", s);
}

#[test]
fn phrase_and_body_search() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    typ(&mut app, "\"fake timers\"");
    let titles: Vec<String> = app
        .picker
        .list
        .visible
        .iter()
        .map(|v| app.picker.list.rows[v.idx].title().to_string())
        .collect();
    assert!(!titles.is_empty());
    for v in &app.picker.list.visible {
        // A row keeps its text only in its search document, normalized.
        let text = app.picker.list.rows[v.idx].doc.body_text();
        assert!(
            text.contains("fake timers"),
            "every match contains the phrase"
        );
    }
}

#[test]
fn delete_confirm_swallows_keys_and_trashes_exactly_that_path() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    assert!(ctrl(&mut app, 'd').is_empty());
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmDelete { .. }
    ));
    insta::assert_snapshot!("delete_confirm", screen(&app, &fx.root));
    // Other keys are swallowed while the prompt is up.
    assert!(key(&mut app, KeyCode::Char('x')).is_empty());
    assert!(key(&mut app, KeyCode::Down).is_empty());
    assert_eq!(app.picker.search.query, "");
    let fx2 = key(&mut app, KeyCode::Enter);
    assert_eq!(fx2, vec![Effect::Trash(path.clone())]);
    // The trash result removes the row; ctrl+z asks for exactly that restore.
    drive(
        &mut app,
        AppEvent::Trashed {
            path: path.clone(),
            result: Ok(()),
        },
    );
    assert!(app.picker.row_index(&path).is_none());
    assert!(screen(&app, &fx.root).contains("Session moved to trash"));
    assert_eq!(ctrl(&mut app, 'z'), vec![Effect::Restore(path.clone())]);
    // The restore under way stays said until its result comes.
    let said = |app: &App| app.picker.flash.status.as_ref().map(|s| s.text.clone());
    for t in [NOW + 1_000, NOW + 6_000, NOW + 60_000] {
        app.update_at(t, AppEvent::Tick(t));
    }
    assert_eq!(said(&app).as_deref(), Some("Restoring from trash…"));
    drive(
        &mut app,
        AppEvent::Restored {
            path: path.clone(),
            result: Ok(()),
        },
    );
    assert_ne!(said(&app).as_deref(), Some("Restoring from trash…"));
    // Esc cancels a second prompt.
    ctrl(&mut app, 'd');
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.picker.dialog.open, Dialog::None);
}

/// Ctrl+Z selects the session it brought back, wherever the selection
/// went after the delete: one session, then a batch.
#[test]
fn undo_selects_the_restored_session() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    assert!(app.picker.list.visible.len() >= 3);
    key(&mut app, KeyCode::Down);
    let path = app.picker.selection.selected.clone().unwrap();
    drive(
        &mut app,
        AppEvent::Trashed {
            path: path.clone(),
            result: Ok(()),
        },
    );
    key(&mut app, KeyCode::Home);
    assert_ne!(app.picker.selection.selected.as_ref(), Some(&path));
    assert_eq!(ctrl(&mut app, 'z'), vec![Effect::Restore(path.clone())]);
    drive(
        &mut app,
        AppEvent::Restored {
            path: path.clone(),
            result: Ok(()),
        },
    );
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&path));
    assert!(app.picker.selected_pos().is_some(), "listed again at once");

    // A batch: the restored row the list shows first is selected.
    let batch: Vec<PathBuf> = app.picker.list.visible[1..3]
        .iter()
        .map(|v| app.picker.list.rows[v.idx].info.path.to_path_buf())
        .collect();
    drive(
        &mut app,
        AppEvent::TrashedBatch {
            moved: batch.clone(),
            failed: vec![],
        },
    );
    key(&mut app, KeyCode::Home);
    assert_eq!(
        ctrl(&mut app, 'z'),
        vec![Effect::RestoreBatch(batch.clone())]
    );
    drive(
        &mut app,
        AppEvent::RestoredBatch {
            restored: batch.clone(),
            failed: vec![],
        },
    );
    assert_eq!(app.picker.selected_pos(), Some(1));
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&batch[0]));
}

#[test]
fn ctrl_backspace_deletes_only_with_an_empty_query() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    typ(&mut app, "fix flaky");
    drive(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::CONTROL)),
    );
    assert_eq!(app.picker.dialog.open, Dialog::None);
    assert_eq!(app.picker.search.query, "fix ");
    ctrl(&mut app, 'u');
    drive(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::CONTROL)),
    );
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmDelete { .. }
    ));
}

#[test]
fn trash_failure_asks_before_permanent_deletion() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    drive(
        &mut app,
        AppEvent::Trashed {
            path: path.clone(),
            result: Err("no trash on this volume".into()),
        },
    );
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmPermanent { .. }
    ));
    assert!(app.picker.row_index(&path).is_some(), "nothing deleted yet");
    insta::assert_snapshot!("trash_failed", screen(&app, &fx.root));
    assert!(
        key(&mut app, KeyCode::Enter).is_empty(),
        "Enter never deletes"
    );
    assert_eq!(
        key_at(&mut app, NOW + PERMANENT_GUARD_MS, KeyCode::Char('y')),
        vec![Effect::DeletePermanently(path)]
    );
}

#[test]
fn live_session_delete_asks_again() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    let i = app.picker.row_index(&path).unwrap();
    app.picker.list.rows[i].info.file_mtime_ms = NOW - 2_000;
    ctrl(&mut app, 'd');
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmLiveDelete { .. }
    ));
    assert!(screen(&app, &fx.root).contains("an agent may be writing it"));
    assert_eq!(key(&mut app, KeyCode::Enter), vec![Effect::Trash(path)]);
}

/// At 80 columns the live-delete question ran past the edge and cut off
/// the keys that answer it; it wraps instead.
#[test]
fn live_delete_question_fits_at_80_columns() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    let path = app.picker.selection.selected.clone().unwrap();
    let i = app.picker.row_index(&path).unwrap();
    app.picker.list.rows[i].info.file_mtime_ms = NOW - 2_000;
    ctrl(&mut app, 'd');
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, &fx.root);
    assert!(s.contains("esc/ctrl+c cancel"), "{s}");
    insta::assert_snapshot!("live_delete_80x24", s);
}

#[test]
fn rename_writes_one_session_info_line_after_the_last_entry() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    let before = std::fs::read(&path).unwrap();
    let last_id = {
        let s = arbor_session::read_session(&path).unwrap();
        s.entries.last().unwrap().id.clone()
    };
    ctrl(&mut app, 'r');
    let Dialog::Rename { input, .. } = &app.picker.dialog.open else {
        panic!("rename panel")
    };
    assert_eq!(
        input,
        app.picker
            .selected_row()
            .unwrap()
            .display_name()
            .unwrap_or("")
    );
    ctrl(&mut app, 'u');
    typ(&mut app, "Auth test, fixed");
    insta::assert_snapshot!("rename_panel", screen(&app, &fx.root));
    let fxs = key(&mut app, KeyCode::Enter);
    assert_eq!(
        fxs,
        vec![Effect::Rename {
            path: path.clone(),
            name: "Auth test, fixed".into()
        }]
    );
    for ev in perform(fxs[0].clone()) {
        drive(&mut app, ev);
    }
    let after = std::fs::read(&path).unwrap();
    assert!(after.starts_with(&before), "append only");
    let added = std::str::from_utf8(&after[before.len()..]).unwrap();
    assert_eq!(added.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(added.trim_end()).unwrap();
    assert_eq!(v["type"], "session_info");
    assert_eq!(
        v["parentId"],
        serde_json::Value::String(last_id.to_string())
    );
    assert_eq!(v["name"], "Auth test, fixed");
    // Blank names are ignored.
    ctrl(&mut app, 'r');
    ctrl(&mut app, 'u');
    assert!(key(&mut app, KeyCode::Enter).is_empty());
}

#[test]
fn help_overlay_and_preview_pane() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Char('?'));
    assert_eq!(app.picker.dialog.open, Dialog::Help);
    insta::assert_snapshot!("help", screen(&app, &fx.root));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.picker.dialog.open, Dialog::None);
    key(&mut app, KeyCode::F(1));
    assert_eq!(app.picker.dialog.open, Dialog::Help);
    key(&mut app, KeyCode::F(1));
    let mut wide = app_with(&fx.root, WEBAPP);
    wide.width = 140;
    wide.height = 30;
    // The preview loads for the selected row (moving there triggers it).
    key(&mut wide, KeyCode::Down);
    key(&mut wide, KeyCode::Up);
    let s = screen(&wide, &fx.root);
    assert!(s.contains("Last messages"), "{s}");
    insta::assert_snapshot!("preview", s);
}

#[test]
fn enter_resumes_or_prints() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::Exit(Outcome::Resume {
            path: path.clone(),
            id: app.picker.selected_row().unwrap().id().to_string(),
            cwd: WEBAPP.into(),
            agent: arbor_session::Agent::Atomic,
        })]
    );
    let mut app = app_with(&fx.root, WEBAPP);
    app.print_mode = true;
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::Exit(Outcome::Print(path))]
    );
    let mut app = app_with(&fx.root, WEBAPP);
    assert_eq!(
        key(&mut app, KeyCode::Esc),
        vec![Effect::Exit(Outcome::Quit)]
    );
}

#[test]
fn selection_is_kept_by_path_across_live_updates() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    let sel = app.picker.selection.selected.clone().unwrap();
    // A new session appears at the top (newest): the selection stays put.
    let mut newest = app.picker.list.rows[0].clone().into_info();
    newest.path = fx
        .root
        .join("--home-demo-projects-webapp--/new.jsonl")
        .into();
    newest.modified_ms = NOW;
    drive(&mut app, AppEvent::Rows(vec![Row::new(newest)]));
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&sel));
    // Internal sessions are hidden until asked for.
    let n = app.picker.list.visible.len();
    drive(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::Char('i'), KeyModifiers::ALT)),
    );
    assert_eq!(app.picker.list.visible.len(), n + 1);
}

#[test]
fn up_down_clamp_and_page() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.picker.selected_pos(), Some(0));
    key(&mut app, KeyCode::PageDown);
    assert_eq!(
        app.picker.selected_pos(),
        Some(app.picker.list.visible.len() - 1)
    );
    key(&mut app, KeyCode::Down);
    assert_eq!(
        app.picker.selected_pos(),
        Some(app.picker.list.visible.len() - 1)
    );
    key(&mut app, KeyCode::Home);
    assert_eq!(app.picker.selected_pos(), Some(0));
    key(&mut app, KeyCode::End);
    assert_eq!(
        app.picker.selected_pos(),
        Some(app.picker.list.visible.len() - 1)
    );
}

fn key_with(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    drive(app, AppEvent::Key(KeyEvent::new(code, mods)))
}

/// The screen with a `^` under the terminal cursor.
fn screen_cursor(app: &App, root: &Path) -> String {
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, app, &Theme::plain()))
        .unwrap();
    common::screen_with_cursor(t.backend()).replace(&root.display().to_string(), "[store]")
}

/// The raw text of each search asked for.
fn searched(fx: &[Effect]) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Search { query, .. } => Some(query.raw.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn the_query_is_edited_at_its_cursor() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    key(&mut app, KeyCode::Tab);
    typ(&mut app, "fix test");
    // ← moves the cursor; a move searches nothing.
    for _ in 0..4 {
        assert!(key(&mut app, KeyCode::Left).is_empty());
    }
    assert_eq!(app.picker.search.query.cursor(), 4);
    let mut fxs = Vec::new();
    for c in "auth ".chars() {
        fxs.extend(key(&mut app, KeyCode::Char(c)));
    }
    assert_eq!(app.picker.search.query, "fix auth test");
    assert_eq!(app.picker.search.query.cursor(), 9);
    assert_eq!(
        searched(&fxs).last().map(String::as_str),
        Some("fix auth test")
    );
    let s = screen_cursor(&app, &fx.root);
    assert!(s.contains("> fix auth test\n           ^\n"), "{s}");
    insta::assert_snapshot!("query_cursor_mid_text", s);

    // Home/End stay the list's; Ctrl+A/E move the cursor.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Home);
    assert_eq!(app.picker.selected_pos(), Some(0));
    assert_eq!(app.picker.search.query.cursor(), 9);
    assert!(ctrl(&mut app, 'a').is_empty());
    assert_eq!(app.picker.search.query.cursor(), 0);
    ctrl(&mut app, 'e');
    assert_eq!(app.picker.search.query.cursor(), 13);
    // Ctrl+→/← (and Alt+B/F) by a word.
    key_with(&mut app, KeyCode::Left, KeyModifiers::CONTROL);
    assert_eq!(app.picker.search.query.cursor(), 9);
    key_with(&mut app, KeyCode::Char('b'), KeyModifiers::ALT);
    assert_eq!(app.picker.search.query.cursor(), 4);
    key_with(&mut app, KeyCode::Char('f'), KeyModifiers::ALT);
    assert_eq!(app.picker.search.query.cursor(), 8);
    key(&mut app, KeyCode::Right);
    // Ctrl+W deletes the word before the cursor, and searches again.
    let fxs = ctrl(&mut app, 'w');
    assert_eq!(app.picker.search.query, "fix test");
    assert_eq!(searched(&fxs), vec!["fix test".to_string()]);
    // Delete, Ctrl+K, Ctrl+U.
    key(&mut app, KeyCode::Delete);
    assert_eq!(app.picker.search.query, "fix est");
    ctrl(&mut app, 'k');
    assert_eq!(app.picker.search.query, "fix ");
    key(&mut app, KeyCode::Left);
    ctrl(&mut app, 'u');
    assert_eq!(app.picker.search.query, " ");
    assert_eq!(app.picker.search.query.cursor(), 0);
    // Ctrl+Backspace on a non-empty query deletes a word, not the session.
    ctrl(&mut app, 'e');
    typ(&mut app, "auth");
    let fxs = key_with(&mut app, KeyCode::Backspace, KeyModifiers::CONTROL);
    assert_eq!(app.picker.search.query, " ");
    assert_eq!(app.picker.dialog.open, Dialog::None);
    assert!(searched(&fxs).is_empty(), "a blank query searches nothing");
}

#[test]
fn the_rename_field_has_a_cursor() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    let path = app.picker.selection.selected.clone().unwrap();
    ctrl(&mut app, 'r');
    ctrl(&mut app, 'u');
    typ(&mut app, "auth fixed");
    // In the prompt Home/End are the field's.
    key(&mut app, KeyCode::Home);
    typ(&mut app, "The ");
    key(&mut app, KeyCode::End);
    typ(&mut app, "!");
    key_with(&mut app, KeyCode::Left, KeyModifiers::CONTROL);
    key(&mut app, KeyCode::Left);
    let Dialog::Rename { input, .. } = &app.picker.dialog.open else {
        panic!("rename panel")
    };
    assert_eq!(input, "The auth fixed!");
    assert_eq!(input.cursor(), 8);
    // The query keeps its own (empty) text meanwhile.
    assert_eq!(app.picker.search.query, "");
    let s = screen_cursor(&app, &fx.root);
    assert!(
        s.contains("Rename: The auth fixed!  enter save · esc cancel\n                ^\n"),
        "{s}"
    );
    insta::assert_snapshot!("rename_cursor_mid_text", s);
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::Rename {
            path,
            name: "The auth fixed!".into()
        }]
    );
}

#[test]
fn a_wide_query_scrolls_and_the_cursor_sits_on_its_cell() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 24;
    app.height = 8;
    // 11 wide characters (22 cells) and 7 narrow ones: wider than the
    // 22-cell field.
    typ(&mut app, "日本語のセッション一覧 search");
    let s = screen_cursor(&app, &fx.root);
    // The end shows, with a cell for the cursor after it.
    assert!(
        s.contains("> セッション一覧 search\n                       ^\n"),
        "{s}"
    );
    for _ in 0..8 {
        key(&mut app, KeyCode::Left);
    }
    // The cursor sits on 覧 (two cells wide); the view has not moved.
    let s = screen_cursor(&app, &fx.root);
    assert!(
        s.contains("> セッション一覧 search\n              ^\n"),
        "{s}"
    );
    ctrl(&mut app, 'a');
    // All that fits from the start: the space after 覧 would be cell 23.
    let s = screen_cursor(&app, &fx.root);
    assert!(s.contains("> 日本語のセッション一覧\n  ^\n"), "{s}");
    insta::assert_snapshot!("query_wide_at_start", s);
}

fn paste(app: &mut App, text: &str) -> Vec<Effect> {
    drive(app, AppEvent::Paste(text.into()))
}

#[test]
fn a_paste_is_text_for_the_focused_field_never_a_key() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    typ(&mut app, "fix test");
    for _ in 0..4 {
        key(&mut app, KeyCode::Left);
    }
    // Into the query, at the cursor: newlines and tabs become spaces,
    // other control characters go, and nothing is picked.
    let fxs = paste(&mut app, "flaky\n\tauth\r\n\u{1b}[A\u{7} ");
    assert_eq!(app.picker.search.query, "fix flaky  auth [A test");
    assert_eq!(app.picker.search.query.cursor(), 19);
    assert!(app.outcome.is_none(), "a newline in a paste is not Enter");
    assert!(!fxs.iter().any(|e| matches!(e, Effect::Exit(_))));
    assert_eq!(
        searched(&fxs).last().map(String::as_str),
        Some("fix flaky  auth [A test")
    );
    // A question ignores it (it is no answer)…
    ctrl(&mut app, 'u');
    ctrl(&mut app, 'k');
    typ(&mut app, "flaky");
    ctrl(&mut app, 'd');
    assert!(paste(&mut app, "\n").is_empty());
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmDelete { .. }
    ));
    assert_eq!(app.picker.search.query, "flaky");
    key(&mut app, KeyCode::Esc);
    // …and so does the help.
    key(&mut app, KeyCode::F(1));
    assert!(paste(&mut app, "x\n").is_empty());
    assert_eq!(app.picker.dialog.open, Dialog::Help);
    assert_eq!(app.picker.search.query, "flaky");
    key(&mut app, KeyCode::Esc);
    // The rename prompt takes it at its cursor.
    ctrl(&mut app, 'r');
    ctrl(&mut app, 'u');
    typ(&mut app, "auth fix");
    key(&mut app, KeyCode::Home);
    assert!(paste(&mut app, "Flaky\n").is_empty());
    let Dialog::Rename { input, .. } = &app.picker.dialog.open else {
        panic!("still renaming")
    };
    assert_eq!(input, "Flaky auth fix");
    assert_eq!(app.picker.search.query, "flaky");
    assert!(app.outcome.is_none());
}

#[test]
fn the_preview_match_survives_resizing_case_and_newlines() {
    let fx = fixture();
    let proj = fx.root.join("--home-demo-projects-webapp--");
    let path = proj.join("2026-11-28T10-00-00-000Z_019ad000-0000-7000-8000-0000000000aa.jsonl");
    // Å (U+212B) shrinks when lowercased; the phrase spans a newline.
    std::fs::write(
        &path,
        concat!(
            r#"{"type":"session","version":3,"id":"019ad000-0000-7000-8000-0000000000aa","timestamp":"2026-11-28T10:00:00.000Z","cwd":"/home/demo/projects/webapp"}"#,
            "\n",
            r#"{"type":"message","id":"bb000001","parentId":null,"timestamp":"2026-11-28T10:00:01.000Z","message":{"role":"user","content":"Wavelengths in \u212bngstr\u00f6m: the spectrum\nanalyser is off","timestamp":1795860001000}}"#,
            "\n"
        ),
    )
    .unwrap();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 140;
    app.height = 30;
    for q in ["\"spectrum analyser\"", "wavelengths"] {
        ctrl(&mut app, 'u');
        typ(&mut app, q);
        assert_eq!(app.picker.selection.selected.as_ref(), Some(&path), "{q}");
        let s = screen(&app, &fx.root);
        assert!(s.contains("Match"), "{q}: {s}");
        assert!(
            s.contains("ngstr\u{f6}m: the spectrum analyser is off"),
            "{q}: {s}"
        );
    }
}

fn key_at(app: &mut App, now: i64, code: KeyCode) -> Vec<Effect> {
    app.update_at(now, AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn newest_first(app: &App) -> Vec<PathBuf> {
    let mut rows: Vec<_> = app.picker.list.rows.iter().map(|r| &r.info).collect();
    rows.sort_by_key(|i| std::cmp::Reverse(i.modified_ms));
    rows.into_iter().map(|i| i.path.to_path_buf()).collect()
}

/// Issue #10.1: rows arriving above the cursor (a session changed while
/// arbor was closed, after the index's stored rows painted) must not leave
/// Enter on an older session.
#[test]
fn enter_picks_row_zero_until_the_user_moves() {
    let fx = fixture();
    let all = rows(&fx.root);
    let mut app = App::new(WEBAPP.into(), NOW);
    app.width = 100;
    app.height = 24;
    app.print_mode = true;
    key(&mut app, KeyCode::Tab);
    // The stored rows paint first, without the session that changed…
    let mut by_age: Vec<Row> = all.clone();
    by_age.sort_by_key(|r| std::cmp::Reverse(r.info.modified_ms));
    let newest = by_age[0].info.path.to_path_buf();
    drive(&mut app, AppEvent::Rows(by_age[1..].to_vec()));
    assert_eq!(
        app.picker.selection.selected.as_ref(),
        Some(&by_age[1].info.path.to_path_buf())
    );
    // …then it arrives above them: the selection is row 0 again.
    drive(&mut app, AppEvent::Rows(vec![by_age[0].clone()]));
    assert_eq!(app.picker.selected_pos(), Some(0));
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::Exit(Outcome::Print(newest.clone()))]
    );

    // A cold load: rows stream in any order; the cursor is on row 0 each time.
    let mut cold = App::new(WEBAPP.into(), NOW);
    cold.width = 100;
    cold.height = 24;
    key(&mut cold, KeyCode::Tab);
    for r in all.iter().rev() {
        drive(&mut cold, AppEvent::Rows(vec![r.clone()]));
        assert_eq!(cold.picker.selected_pos(), Some(0));
    }
    assert_eq!(
        cold.picker.selection.selected.as_ref(),
        Some(&newest_first(&cold)[0])
    );

    // Once the user has moved, the selection follows its session.
    key(&mut cold, KeyCode::Down);
    key(&mut cold, KeyCode::Up);
    let chosen = cold.picker.selection.selected.clone().unwrap();
    let mut newer = by_age[3].clone().into_info();
    newer.path = fx
        .root
        .join("--home-demo-projects-webapp--/newer.jsonl")
        .into();
    newer.modified_ms = NOW;
    drive(&mut cold, AppEvent::Rows(vec![Row::new(newer)]));
    assert_eq!(cold.picker.selection.selected.as_ref(), Some(&chosen));
    assert_eq!(cold.picker.selected_pos(), Some(1));
}

/// Typing pins the selection too (to the best match, then by identity).
#[test]
fn typing_pins_the_selection() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    typ(&mut app, "a");
    assert!(app.picker.selection.user_moved);
    let chosen = app.picker.selection.selected.clone().unwrap();
    let mut newer = app.picker.list.rows[0].clone().into_info();
    newer.path = fx
        .root
        .join("--home-demo-projects-webapp--/newer.jsonl")
        .into();
    newer.modified_ms = NOW;
    drive(&mut app, AppEvent::Rows(vec![Row::new(newer)]));
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&chosen));
}

/// Issue #11.1: with the trash unavailable, Ctrl+D, Enter, Enter (30–100 ms
/// later) deleted the session for good. Keys typed while the trash works
/// are dropped, the question ignores keys for a moment, and only `y`
/// deletes.
#[test]
fn double_enter_never_deletes_permanently() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    ctrl(&mut app, 'd');
    assert_eq!(
        key_at(&mut app, NOW, KeyCode::Enter),
        vec![Effect::Trash(path.clone())]
    );
    assert!(matches!(app.picker.dialog.open, Dialog::Trashing { .. }));
    // Typed ahead, while the trash is working: dropped.
    assert!(key_at(&mut app, NOW + 30, KeyCode::Enter).is_empty());
    assert!(key_at(&mut app, NOW + 40, KeyCode::Char('y')).is_empty());
    assert_eq!(app.picker.search.query, "");
    app.update_at(
        NOW + 50,
        AppEvent::Trashed {
            path: path.clone(),
            result: Err(
                "cannot create the trash folder ~/.local/share/Trash: not a directory".into(),
            ),
        },
    );
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmPermanent { .. }
    ));
    // The second Enter, 30–100 ms after the first: nothing.
    assert!(key_at(&mut app, NOW + 100, KeyCode::Enter).is_empty());
    // Even `y`, in the first moments: nothing.
    assert!(key_at(&mut app, NOW + 50 + 200, KeyCode::Char('y')).is_empty());
    // Enter never answers it, however late.
    let later = NOW + 50 + PERMANENT_GUARD_MS + 1000;
    assert!(key_at(&mut app, later, KeyCode::Enter).is_empty());
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmPermanent { .. }
    ));
    assert!(app.picker.row_index(&path).is_some(), "nothing deleted");
    // The deliberate answer deletes.
    assert_eq!(
        key_at(&mut app, later, KeyCode::Char('y')),
        vec![Effect::DeletePermanently(path.clone())]
    );
    assert_eq!(app.picker.dialog.open, Dialog::None);

    // Esc keeps it, even at once.
    let mut app = app_with(&fx.root, WEBAPP);
    ctrl(&mut app, 'd');
    key_at(&mut app, NOW, KeyCode::Enter);
    app.update_at(
        NOW,
        AppEvent::Trashed {
            path: path.clone(),
            result: Err("no trash".into()),
        },
    );
    assert!(key_at(&mut app, NOW + 10, KeyCode::Esc).is_empty());
    assert_eq!(app.picker.dialog.open, Dialog::None);
}

/// Issue #10.3: the question comes first and fits at 80 columns, with the
/// reason as one sentence after it.
#[cfg(all(unix, not(target_os = "macos")))]
#[test]
fn trash_failure_question_fits_at_80_columns() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    app.height = 24;
    let path = app.picker.selection.selected.clone().unwrap();
    let home = dirs::home_dir().unwrap_or_else(|| PathBuf::from("/home/u"));
    let reason = arbor::ui::trash_text::trash_error_text(&trash::Error::FileSystem {
        path: home.join(".local/share/Trash"),
        source: std::io::Error::from_raw_os_error(20),
    });
    assert_eq!(
        reason,
        "cannot create the trash folder ~/.local/share/Trash: not a directory"
    );
    ctrl(&mut app, 'd');
    key(&mut app, KeyCode::Enter);
    drive(
        &mut app,
        AppEvent::Trashed {
            path,
            result: Err(reason),
        },
    );
    let s = screen(&app, &fx.root);
    let lines: Vec<&str> = s.lines().collect();
    let q = lines
        .iter()
        .position(|l| l.starts_with("Delete permanently?"))
        .expect("the question is on screen");
    assert!(
        lines[q..].join(" ").contains("Type y to delete it forever"),
        "{s}"
    );
    assert!(s.contains("not a directory"), "the reason, whole:\n{s}");
    assert!(
        !s.contains("Error during") && !s.contains("FileSystem"),
        "{s}"
    );
    insta::assert_snapshot!("trash_failed_80x24", s);
}

/// A project folder removed while the picker is open takes its rows with it
/// at once (not one file event at a time); the other folders' rows and the
/// selection stay.
#[test]
fn a_removed_folder_takes_its_rows() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    let n = app.picker.list.rows.len();
    let shown = app.picker.list.visible.len();
    let gone = fx.root.join("--home-demo-projects-tidy-csv--");
    let in_gone = app
        .picker
        .list
        .rows
        .iter()
        .filter(|r| r.info.path.starts_with(&gone))
        .count();
    assert_eq!(in_gone, 2);
    // Select the last row of another folder.
    let pos = (0..app.picker.list.visible.len())
        .rev()
        .find(|&i| {
            !app.picker.list.rows[app.picker.list.visible[i].idx]
                .info
                .path
                .starts_with(&gone)
        })
        .unwrap();
    for _ in 0..pos {
        key(&mut app, KeyCode::Down);
    }
    let keep = app.picker.selection.selected.clone().unwrap();
    assert!(!keep.starts_with(&gone));
    drive(&mut app, AppEvent::FolderGone(gone.clone()));
    assert_eq!(app.picker.list.rows.len(), n - 2);
    assert!(app
        .picker
        .list
        .rows
        .iter()
        .all(|r| !r.info.path.starts_with(&gone)));
    assert_eq!(app.picker.list.visible.len(), shown - 2);
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&keep));
}

/// Issue #10.8: the picker's status messages go after a few seconds.
#[test]
fn picker_status_messages_expire() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    drive(
        &mut app,
        AppEvent::Renamed {
            path,
            result: Ok("Auth".into()),
        },
    );
    assert!(screen(&app, &fx.root).contains("Renamed to"));
    drive(&mut app, AppEvent::Tick(NOW + 2_000));
    assert!(screen(&app, &fx.root).contains("Renamed to"), "still there");
    drive(&mut app, AppEvent::Tick(NOW + 5_000));
    assert!(!screen(&app, &fx.root).contains("Renamed to"), "gone");
    // Blank names are ignored, and that is said, for a while too.
    drive(&mut app, AppEvent::Tick(NOW + 10_000));
    ctrl(&mut app, 'r');
    ctrl(&mut app, 'u');
    drive(&mut app, AppEvent::Tick(NOW + 10_500));
    key(&mut app, KeyCode::Enter);
    assert!(screen(&app, &fx.root).contains("Name unchanged"));
    drive(&mut app, AppEvent::Tick(NOW + 11_000));
    assert!(screen(&app, &fx.root).contains("Name unchanged"));
    drive(&mut app, AppEvent::Tick(NOW + 15_000));
    assert!(!screen(&app, &fx.root).contains("Name unchanged"));
}

/// Issue #10.8: "changed -482s ago" came from an entry's timestamp (ahead
/// of the clock); the file's mtime is what says when it changed.
#[test]
fn live_delete_age_comes_from_the_file_mtime() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let path = app.picker.selection.selected.clone().unwrap();
    let i = app.picker.row_index(&path).unwrap();
    app.picker.list.rows[i].info.file_mtime_ms = NOW - 3_000;
    app.picker.list.rows[i].info.modified_ms = NOW + 482_000;
    ctrl(&mut app, 'd');
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, &fx.root);
    assert!(s.contains("This session changed 3s ago"), "{s}");
    // An entry stamped in the future does not make an old file live.
    let mut app = app_with(&fx.root, WEBAPP);
    let i = app.picker.row_index(&path).unwrap();
    app.picker.list.rows[i].info.modified_ms = NOW + 482_000;
    ctrl(&mut app, 'd');
    assert_eq!(key(&mut app, KeyCode::Enter), vec![Effect::Trash(path)]);
}

/// Issue #10.9: a wide character under the help box's left border (here a
/// CJK title starting at column 2, the border at column 3) erased it.
#[test]
fn help_box_border_survives_wide_characters() {
    let fx = fixture();
    let wide: Vec<Row> = rows(&fx.root)
        .into_iter()
        .map(|r| {
            let mut info = r.into_info();
            info.name = Some("日本語のセッション一覧を見る".into());
            info.has_name = true;
            Row::new(info)
        })
        .collect();
    let mut app = App::new(WEBAPP.into(), NOW);
    app.width = 80;
    app.height = 24;
    drive(&mut app, AppEvent::Rows(wide));
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::F(1));
    let s = screen(&app, &fx.root);
    let box_rows: Vec<&str> = s.lines().skip(4).take(7).collect();
    for l in &box_rows {
        assert!(
            l.chars().nth(2) == Some('│') || l.chars().nth(3) == Some('│'),
            "the border is drawn on every row:\n{s}"
        );
    }
    insta::assert_snapshot!("help_over_wide_titles", s);
}

/// Issue #10.9: internal sessions are marked in the list when shown.
#[test]
fn internal_sessions_are_marked_when_shown() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    assert!(!screen(&app, &fx.root).contains("[internal]"));
    drive(
        &mut app,
        AppEvent::Key(KeyEvent::new(KeyCode::Char('i'), KeyModifiers::ALT)),
    );
    let s = screen(&app, &fx.root);
    let marked: Vec<&str> = s.lines().filter(|l| l.contains("[internal] ")).collect();
    let internal = app
        .picker
        .list
        .visible
        .iter()
        .filter(|v| app.picker.list.rows[v.idx].info.internal)
        .count();
    assert!(internal > 0);
    assert_eq!(marked.len(), internal, "{s}");
}

/// Issue #10.9: the preview shows both dates the same way.
#[test]
fn preview_dates_are_formatted_alike() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 140;
    app.height = 30;
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Up);
    let s = screen(&app, &fx.root);
    let line = |label: &str| {
        s.lines()
            .find_map(|l| {
                l.split_once(&format!("│ {label}"))
                    .map(|(_, r)| r.trim().to_string())
            })
            .unwrap_or_default()
    };
    let (created, modified) = (line("created "), line("modified"));
    assert!(created.ends_with("UTC (1w)"), "{created:?}\n{s}");
    assert_eq!(created.chars().nth(10), Some(' '), "not ISO: {created:?}");
    assert!(!created.contains('Z'), "{created:?}");
    assert_eq!(created.len(), modified.len(), "{created:?} / {modified:?}");
}

/// Issue #10.10: after a delete the selection keeps its place (the next
/// row moves up into it), as in Atomic; the last row's successor is the
/// new last row.
#[test]
fn a_deleted_rows_place_keeps_the_selection() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    let path = app.picker.selection.selected.clone().unwrap();
    let next = app.picker.list.rows[app.picker.list.visible[3].idx]
        .info
        .path
        .to_path_buf();
    drive(
        &mut app,
        AppEvent::Trashed {
            path: path.clone(),
            result: Ok(()),
        },
    );
    assert_eq!(app.picker.selected_pos(), Some(2));
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&next));
    key(&mut app, KeyCode::End);
    let last = app.picker.selection.selected.clone().unwrap();
    let n = app.picker.list.visible.len();
    drive(
        &mut app,
        AppEvent::Deleted {
            path: last,
            result: Ok(()),
        },
    );
    assert_eq!(app.picker.selected_pos(), Some(n - 2));
    // A file removed behind arbor's back: the same.
    key(&mut app, KeyCode::Home);
    key(&mut app, KeyCode::Down);
    let gone = app.picker.selection.selected.clone().unwrap();
    drive(&mut app, AppEvent::RowGone(gone));
    assert_eq!(app.picker.selected_pos(), Some(1));
}

/// Issue #10.10: the row a delete question is about is drawn in the error
/// colour (title and right part), as Atomic draws it.
#[test]
fn the_row_awaiting_delete_confirmation_is_marked() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Down);
    ctrl(&mut app, 'd');
    let theme = Theme::ansi();
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, &app, &theme))
        .unwrap();
    let buf = t.backend().buffer();
    let row_y = 3 + app.picker.selected_pos().unwrap() as u16;
    let other_y = 3;
    let fg_at = |y: u16, x: u16| buf[(x, y)].style().fg;
    // The title (after the cursor) and the age at the right end.
    assert_eq!(fg_at(row_y, 3), theme.error().fg);
    assert_eq!(fg_at(row_y, app.width - 2), theme.error().fg);
    assert_ne!(fg_at(other_y, 3), theme.error().fg);
    key(&mut app, KeyCode::Esc);
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, &app, &theme))
        .unwrap();
    assert_ne!(
        t.backend().buffer()[(3, row_y)].style().fg,
        theme.error().fg
    );
}

/// Issue #10.10: Atomic's empty-list texts depend on the filters, also
/// while a query is typed (arbor said "No sessions found" for any query).
#[test]
fn empty_texts_for_each_filter_combination_with_a_query() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    typ(&mut app, "zzqqxxnothing");
    assert!(app.picker.list.visible.is_empty());
    let cases = [
        ("", "No sessions in current folder. tab view all."),
        ("tab", "No sessions found"),
        (
            "ctrl+n",
            "No named sessions found. Press ctrl+n to show all.",
        ),
        (
            "tab",
            "No named sessions in current folder. ctrl+n show all · tab view all.",
        ),
    ];
    for (k, text) in cases {
        match k {
            "tab" => {
                key(&mut app, KeyCode::Tab);
            }
            "ctrl+n" => {
                ctrl(&mut app, 'n');
            }
            _ => {}
        }
        let s = screen(&app, &fx.root);
        assert!(s.contains(&format!("  {text}")), "{k}: {s}");
    }
}

/// Issue #10.10: when the rows do not all fit, Atomic's `(n/N)` position
/// line is under them.
#[test]
fn the_position_line_shows_when_the_list_does_not_fit() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.height = 12;
    key(&mut app, KeyCode::Tab);
    let n = app.picker.list.visible.len();
    let s = screen(&app, &fx.root);
    assert!(s.contains(&format!("  (1/{n})")), "{s}");
    key(&mut app, KeyCode::End);
    let s = screen(&app, &fx.root);
    assert!(s.contains(&format!("  ({n}/{n})")), "{s}");
    // The selected (last) row is still drawn above the position line.
    let last = app.picker.list.rows[app.picker.list.visible[n - 1].idx].title();
    let lines: Vec<&str> = s.lines().collect();
    let pos_line = lines.iter().position(|l| l.starts_with("  (")).unwrap();
    assert!(lines[pos_line - 1].starts_with("› "), "{s}");
    assert!(lines[pos_line - 1].contains(&last.chars().take(10).collect::<String>()));
    insta::assert_snapshot!("position_line", s);
    // Everything fits: no position line.
    app.height = 24;
    assert!(!screen(&app, &fx.root).contains(&format!("/{n})")));
}

/// A message line too long to preview is said to be, in the pane.
#[test]
fn the_preview_says_a_line_was_too_long_to_read() {
    let fx = fixture();
    let path = fx
        .root
        .join("--home-demo-projects-webapp--/2026-11-28T10-00-00-000Z_019ad000-0000-7000-8000-0000000000bb.jsonl");
    let pasted = "0123456789abcdef".repeat(5 << 16);
    std::fs::write(
        &path,
        format!(
            "{}\n{}\n{}\n",
            r#"{"type":"session","version":3,"id":"019ad000-0000-7000-8000-0000000000bb","timestamp":"2026-11-28T10:00:00.000Z","cwd":"/home/demo/projects/webapp"}"#,
            r#"{"type":"message","id":"bb000001","parentId":null,"timestamp":"2026-11-28T10:00:01.000Z","message":{"role":"user","content":"look at this log","timestamp":1795860001000}}"#,
            format_args!(
                r#"{{"type":"message","id":"bb000002","parentId":"bb000001","timestamp":"2026-11-28T10:00:02.000Z","message":{{"role":"user","content":"{pasted}","timestamp":1795860002000}}}}"#
            )
        ),
    )
    .unwrap();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 140;
    app.height = 30;
    typ(&mut app, "look at this");
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&path));
    let s = screen(&app, &fx.root);
    assert!(s.contains("A line of 5 MB is too long to preview"), "{s}");
    assert!(s.contains("user: look at this log"), "{s}");
}

/// Issue #11.2: when the index could not be written (a full cache disk),
/// the picker searches again knowing it, and an answer the search worker
/// marks incomplete is shown as such (header, empty list, status line),
/// never as a plain "No sessions found".
#[test]
fn an_incomplete_search_says_so_on_screen() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    for c in "zqxj".chars() {
        app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
    }
    let why = "No space left on device (os error 28)";
    let effects = app.update(AppEvent::IndexIncomplete(why.into()));
    let Some(Effect::Search {
        generation,
        docs,
        index_problem,
        ..
    }) = effects.into_iter().next()
    else {
        panic!("the query is asked again");
    };
    assert_eq!(index_problem.as_deref(), Some(why));
    let n = docs.0.len();
    app.update(AppEvent::SearchDone {
        generation,
        query: "zqxj".into(),
        docs,
        scores: vec![None; n],
        incomplete: Some(format!("the index could not be written ({why})")),
        stage: Stage::Whole,
    });
    let s = screen(&app, &fx.root);
    assert!(
        s.lines().nth(1).unwrap().contains("Search incomplete"),
        "{s}"
    );
    assert!(s.contains("No sessions found (search incomplete"), "{s}");
    let status = app.picker.flash.status.as_ref().map(|s| s.text.as_str());
    assert_eq!(
        status,
        Some("Search incomplete: the index could not be written (No space left on device (os error 28))")
    );

    // A complete answer clears the mark.
    let effects = key(&mut app, KeyCode::Backspace);
    assert!(effects.iter().any(|e| matches!(e, Effect::Search { .. })));
    assert_eq!(app.picker.search.incomplete, None);
    assert!(!screen(&app, &fx.root).contains("Search incomplete"));
}

/// The picker tests' searches are the search worker's: `perform` runs
/// `Searcher::search`, which asks the index for the message bodies. Rows
/// from the index carry no text of their own, so a word that only a message
/// body holds is found through the index or not at all.
#[test]
fn searches_ask_the_index_for_message_bodies() {
    use arbor::app::searcher::Searcher;
    use arbor::ui::runtime::perform_search;
    use arbor_index::Index;

    let fx = fixture();
    let cache = tempfile::tempdir().unwrap();
    let mut index = Index::open(&cache.path().join("index.db")).unwrap();
    let (files, _) = list_session_files(
        &StoreConfig::single(&fx.root, StoreKind::PerProject),
        &Scope::All,
    );
    let mut infos = Vec::new();
    index.refresh(&files, &mut |r| infos.extend(r)).unwrap();
    assert!(infos.iter().all(|i| i.all_text.is_empty()));
    let loaded = |app: &mut App| {
        app.width = 100;
        app.height = 24;
        let rows = infos.iter().cloned().map(Row::new).collect();
        drive(app, AppEvent::Rows(rows));
        drive(app, AppEvent::LoadFinished { problems: vec![] });
    };
    // Only a message of the stylelint session says it.
    let word = "stylelint";

    let mut searcher = Searcher::new(Some(index));
    let mut app = App::new(WEBAPP.into(), NOW);
    loaded(&mut app);
    for c in word.chars() {
        let mut queue = vec![AppEvent::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        ))];
        while let Some(ev) = queue.pop() {
            for fx in app.update(ev) {
                queue.extend(perform_search(&mut searcher, fx));
            }
        }
    }
    let found: Vec<&str> = app
        .picker
        .list
        .visible
        .iter()
        .map(|v| app.picker.list.rows[v.idx].id())
        .collect();
    assert_eq!(found, ["01a1f97b-0554-756b-95f5-edc872f30502"]);

    // `perform` without an index (as the tests run it): the rows have no
    // text of their own; the files are read for the parts beyond it, and
    // the session's bash command says it too (#14), its thinking does not.
    let mut app = App::new(WEBAPP.into(), NOW);
    loaded(&mut app);
    typ(&mut app, &format!("{word} in:thinking"));
    assert!(app.picker.list.visible.is_empty());
    let mut app = App::new(WEBAPP.into(), NOW);
    loaded(&mut app);
    typ(&mut app, &format!("{word} in:tools"));
    assert_eq!(app.picker.list.visible.len(), 1);
}

/// A typed query shows the count of its results `(i/N)` even when they all
/// fit, and a session written in the last minute carries the live marker.
#[test]
fn result_count_and_live_marker() {
    let fx = fixture();
    let mut app = App::new(WEBAPP.to_string(), NOW);
    app.width = 100;
    app.height = 24;
    let mut rs = rows(&fx.root);
    for r in &mut rs {
        if r.title().contains("Fix flaky") {
            r.info.file_mtime_ms = NOW - 10_000;
        } else {
            // A minute ago is no longer live.
            r.info.file_mtime_ms = NOW - 60_000;
        }
    }
    drive(&mut app, AppEvent::Rows(rs));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    key(&mut app, KeyCode::Tab);
    let s = screen(&app, &fx.root);
    assert_eq!(s.matches('●').count(), 1, "{s}");
    let live_line = s.lines().find(|l| l.contains('●')).unwrap();
    assert!(live_line.contains("Fix flaky auth test"), "{s}");
    assert!(
        !s.contains("(1/"),
        "no count without a query and all rows fitting: {s}"
    );
    typ(&mut app, "dir:webapp");
    let s = screen(&app, &fx.root);
    let n = app.picker.list.visible.len();
    assert!(n > 1);
    assert!(s.contains(&format!("(1/{n})")), "{s}");
    insta::assert_snapshot!("result_count_live_marker", s);
    // Where each session left off, wide (with the preview pane), then at
    // 80 columns in the current folder (in All the cwd column leaves the
    // titles no room for a second one).
    for (w, name) in [
        (160, "result_count_live_marker_wide"),
        (80, "result_count_live_marker_80x24"),
    ] {
        app.width = w;
        if w == 80 {
            key(&mut app, KeyCode::Tab);
        }
        let s = screen(&app, &fx.root);
        assert!(s.contains(&format!("(1/{n})")), "{s}");
        let live_line = s.lines().find(|l| l.contains('●')).unwrap();
        assert!(live_line.contains("Committed as"), "{s}");
        insta::assert_snapshot!(name, s);
    }
}

/// Issue #12: one table drives the picker's keys, its help and its hints.
/// Every key in it is dispatched to its own action (no binding above it
/// takes it first), does something (changes the frame or asks for an
/// effect) and is listed in the help with its text.
#[test]
fn every_picker_key_is_dispatched_and_listed() {
    use arbor::ui::keymap::When;
    use arbor::ui::picker::{help_rows, KEYS};
    let fx = fixture();
    let start = || {
        let mut app = app_with(&fx.root, WEBAPP);
        // The middle of three rows: every move goes somewhere.
        key(&mut app, KeyCode::Down);
        app
    };
    for b in KEYS.0 {
        for (chord, action) in b.keys {
            let name = chord.label();
            let ev = chord.event();
            assert_eq!(KEYS.action(&ev, true), Some(*action), "{name}");
            // With text in the query, a conditional key is the query's.
            let with_text = KEYS.action(&ev, false);
            match b.when {
                When::Always => assert_eq!(with_text, Some(*action), "{name}"),
                When::EmptyField => assert_eq!(with_text, None, "{name}"),
            }
            let mut app = start();
            let before = screen(&app, &fx.root);
            let fx_ = drive(&mut app, AppEvent::Key(ev));
            assert!(
                !fx_.is_empty() || screen(&app, &fx.root) != before,
                "{name} ({action:?}) did nothing:\n{before}"
            );
        }
    }
    // The help, on a screen tall enough for all of it.
    let mut app = start();
    app.height = 60;
    key(&mut app, KeyCode::F(1));
    let help = screen(&app, &fx.root);
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
            // Wrapped lines: every word is on screen.
            for word in part.split(' ') {
                assert!(help.contains(word), "{word:?} of {r:?}:\n{help}");
            }
        }
    }
    assert!(help.contains("any key closes"), "{help}");
    // The query's own keys: those the picker leaves to it are listed, the
    // others (Home/End) are not.
    assert!(rows.iter().any(|r| r.keys == "ctrl+a"), "{rows:?}");
    assert!(rows.iter().any(|r| r.keys == "ctrl+e"), "{rows:?}");
    // No row of the field's describes a key the picker took from it.
    assert_eq!(
        KEYS.partly_taken(&arbor::ui::input::KEYS),
        Vec::<String>::new()
    );
    assert!(rows.iter().any(|r| r.keys == "type"), "{rows:?}");
}

/// The help scrolls when it is taller than the screen (80×24: it is),
/// in a box that leaves the screen's first and last rows showing; any
/// other key closes it.
#[test]
fn the_help_scrolls_when_it_does_not_fit() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    app.height = 24;
    key(&mut app, KeyCode::F(1));
    let top = screen(&app, &fx.root);
    assert!(top.contains("keys · 1–19 of"), "{top}");
    let lines: Vec<&str> = top.lines().collect();
    assert!(lines[0].starts_with("Resume Session"), "{top}");
    assert!(lines[1].contains('┌') && lines[22].contains('└'), "{top}");
    assert!(
        top.contains("↑/↓ PgUp/PgDn Home/End scroll · any other key closes"),
        "{top}"
    );
    assert!(!top.contains("ctrl+k"), "the last row is below:\n{top}");
    key(&mut app, KeyCode::End);
    let bottom = screen(&app, &fx.root);
    assert!(bottom.contains("ctrl+k"), "{bottom}");
    assert_eq!(app.picker.dialog.open, Dialog::Help);
    // Down at the bottom changes nothing: no frame.
    let step = app.step(AppEvent::Key(KeyEvent::new(
        KeyCode::Down,
        KeyModifiers::NONE,
    )));
    assert!(!step.redraw);
    key(&mut app, KeyCode::Home);
    assert_eq!(screen(&app, &fx.root), top);
    key(&mut app, KeyCode::Char('x'));
    assert_eq!(app.picker.dialog.open, Dialog::None);
    assert_eq!(
        app.picker.search.query.text(),
        "",
        "the closing key is not typed"
    );
}

/// The questions' keys come from their tables too: each answers, and the
/// question's line names the keys that are not quiet.
#[test]
fn question_keys_are_dispatched_and_named() {
    use arbor::ui::keymap::{Answer, CONFIRM, PROMPT};
    use arbor::ui::picker::{PERMANENT_KEYS, TRASHING_KEYS};
    let fx = fixture();
    let asked = || {
        let mut app = app_with(&fx.root, WEBAPP);
        ctrl(&mut app, 'd');
        assert!(matches!(
            app.picker.dialog.open,
            Dialog::ConfirmDelete { .. }
        ));
        app
    };
    let s = screen(&asked(), &fx.root);
    for (chord, answer) in CONFIRM.0.iter().flat_map(|b| b.keys) {
        assert!(s.contains(&chord.label()), "{}:\n{s}", chord.label());
        let mut app = asked();
        let fx_ = drive(&mut app, AppEvent::Key(chord.event()));
        match answer {
            Answer::Yes => assert!(matches!(fx_[..], [Effect::Trash(_)]), "{fx_:?}"),
            Answer::No => assert_eq!(app.picker.dialog.open, Dialog::None),
        }
    }
    // Rename.
    for (chord, answer) in PROMPT.0.iter().flat_map(|b| b.keys) {
        let mut app = app_with(&fx.root, WEBAPP);
        ctrl(&mut app, 'r');
        let s = screen(&app, &fx.root);
        assert!(chord.quiet || s.contains(&chord.label()), "{s}");
        let fx_ = drive(&mut app, AppEvent::Key(chord.event()));
        assert_eq!(app.picker.dialog.open, Dialog::None);
        assert_eq!(*answer == Answer::Yes, !fx_.is_empty(), "{fx_:?}");
    }
    // While the trash works, and the permanent question after it fails.
    let failed = |now: i64| {
        let mut app = asked();
        let fx_ = app.update_at(
            now,
            AppEvent::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)),
        );
        let Some(Effect::Trash(path)) = fx_.into_iter().next() else {
            panic!("no trash effect");
        };
        for (chord, _) in TRASHING_KEYS.0.iter().flat_map(|b| b.keys) {
            let mut busy = App::new(WEBAPP.into(), NOW);
            busy.picker.dialog.open = app.picker.dialog.open.clone();
            let fx_ = busy.update(AppEvent::Key(chord.event()));
            assert_eq!(fx_, vec![Effect::Exit(Outcome::Quit)]);
        }
        app.update_at(
            now,
            AppEvent::Trashed {
                path,
                result: Err("no trash here".into()),
            },
        );
        app
    };
    let s = screen(&failed(NOW), &fx.root);
    for (chord, answer) in PERMANENT_KEYS.0.iter().flat_map(|b| b.keys) {
        assert!(chord.quiet || s.contains(&chord.label()), "{s}");
        let mut app = failed(NOW);
        let fx_ = app.update_at(NOW + PERMANENT_GUARD_MS, AppEvent::Key(chord.event()));
        assert_eq!(app.picker.dialog.open, Dialog::None, "{}", chord.label());
        assert_eq!(
            *answer == Answer::Yes,
            matches!(fx_[..], [Effect::DeletePermanently(_)]),
            "{}",
            chord.label()
        );
    }
}

/// Issue #12: a frame is drawn only when something on it changed. A tick
/// that changes no age shown, a key that does nothing, a mouse move, an
/// older search's answer and a change on disk still to be read draw
/// nothing; a tick that changes an age, or ends a status message, does.
#[test]
fn nothing_is_drawn_when_nothing_visible_changed() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let press = |app: &mut App, code, m| app.step(AppEvent::Key(KeyEvent::new(code, m))).redraw;
    // The ages shown are days and weeks old: a second changes none.
    assert!(!app.step_at(NOW + 1_000, AppEvent::Tick(NOW + 1_000)).redraw);
    assert!(!app.step_at(NOW + 2_000, AppEvent::Tick(NOW + 2_000)).redraw);
    // A day later, some do (`5d` → `6d`).
    let later = NOW + 86_400_000;
    assert!(app.step_at(later, AppEvent::Tick(later)).redraw);
    assert!(
        !app.step_at(later + 1_000, AppEvent::Tick(later + 1_000))
            .redraw
    );
    // Keys bound to nothing, in the list and in the query.
    assert!(!press(&mut app, KeyCode::F(5), KeyModifiers::NONE));
    assert!(!press(&mut app, KeyCode::Char('g'), KeyModifiers::CONTROL));
    assert!(!press(&mut app, KeyCode::Insert, KeyModifiers::NONE));
    let mut release = KeyEvent::new(KeyCode::Down, KeyModifiers::NONE);
    release.kind = crossterm::event::KeyEventKind::Release;
    assert!(!app.step(AppEvent::Key(release)).redraw);
    assert!(
        !app.step(AppEvent::Mouse(crossterm::event::MouseEvent {
            kind: crossterm::event::MouseEventKind::Moved,
            column: 3,
            row: 5,
            modifiers: KeyModifiers::NONE,
        }))
        .redraw
    );
    // A key that does something draws.
    assert!(press(&mut app, KeyCode::Down, KeyModifiers::NONE));
    assert!(press(&mut app, KeyCode::Char('a'), KeyModifiers::NONE));
    // An answer to an older query: dropped unseen.
    let docs = app.picker.docs();
    let stale = app.step(AppEvent::SearchDone {
        generation: app.picker.search.generation - 1,
        query: "x".into(),
        docs,
        scores: Vec::new(),
        incomplete: None,
        stage: Stage::Whole,
    });
    assert!(!stale.redraw);
    // A change on disk: a rescan first, drawn when its rows come.
    let path = app.picker.list.rows[0].info.path.to_path_buf();
    let step = app.step(AppEvent::FsChanged(vec![path]));
    assert!(matches!(step.effects[..], [Effect::Rescan(_)]));
    assert!(!step.redraw);
    // A status message goes after its time: that tick draws.
    ctrl(&mut app, 'z');
    assert!(app.picker.flash.status.is_some());
    let t = app.picker.now_ms;
    assert!(!app.step_at(t + 1_000, AppEvent::Tick(t + 1_000)).redraw);
    assert!(app.step_at(t + 5_000, AppEvent::Tick(t + 5_000)).redraw);
    assert!(app.picker.flash.status.is_none());
}

/// Drawing reads no environment: the home folder shown as `~` is the
/// state's (resolved once by the runtime), never `$HOME` read per row, so
/// these screens are the same on any machine.
#[test]
fn paths_are_shortened_by_the_home_in_the_state() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 200;
    key(&mut app, KeyCode::Tab);
    // The cwd column, cut from the left to its width.
    let s = screen(&app, &fx.root);
    assert!(s.contains(" …mo/projects/webapp "), "{s}");
    app.picker.settings.home = Some("/home/demo".into());
    let s = screen(&app, &fx.root);
    assert!(s.contains(" ~/projects/webapp "), "{s}");
}

/// Issue #12: the picker at 80×24 and at 40×12 (current folder, so that no
/// path, and no home folder, is on screen).
#[test]
fn picker_frames_at_80x24_and_40x12() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    app.height = 24;
    drive(&mut app, AppEvent::Resize(80, 24));
    insta::assert_snapshot!("picker_80x24", screen(&app, &fx.root));
    drive(&mut app, AppEvent::Resize(40, 12));
    let s = screen(&app, &fx.root);
    assert!(s.contains("› "), "the selection is on screen:\n{s}");
    insta::assert_snapshot!("picker_40x12", s);
    key(&mut app, KeyCode::F(1));
    insta::assert_snapshot!("picker_help_40x12", screen(&app, &fx.root));
}

/// The index being built behind the rows: `Indexing n/N` under the title.
#[test]
fn the_indexing_header() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    app.height = 12;
    drive(&mut app, AppEvent::Indexing(Some((120, 2000))));
    let s = screen(&app, &fx.root);
    assert!(
        s.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("Indexing 120/2000")),
        "{s}"
    );
    insta::assert_snapshot!("indexing_header", s);
    drive(&mut app, AppEvent::Indexing(None));
    assert!(!screen(&app, &fx.root).contains("Indexing"));
}

/// A 12,345-message session and a `10mo` age widen their columns for every
/// row on screen, so the columns stay aligned (a five-digit count used to
/// push its own row's folder one cell left).
#[test]
fn wide_counts_and_ages_keep_the_columns_aligned() {
    let fx = fixture();
    let mut rows = rows(&fx.root);
    rows[0].info.message_count = 12_345;
    rows[1].info.modified_ms = NOW - 305 * 86_400_000;
    let mut app = App::new(WEBAPP.into(), NOW);
    app.width = 100;
    app.height = 24;
    drive(&mut app, AppEvent::Rows(rows));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    key(&mut app, KeyCode::Tab);
    let s = screen(&app, &fx.root);
    assert!(s.contains(" 12345 ") && s.contains(" 10mo"), "{s}");
    // Where each row's folder ends: before its count and age.
    let ends: std::collections::BTreeSet<usize> = s
        .lines()
        .filter_map(|l| {
            let mut t: Vec<&str> = l.split_whitespace().rev().take(2).collect();
            t.reverse();
            let [count, age] = t[..] else { return None };
            let is_age = age.ends_with(['m', 'h', 'd', 'w', 'o', 'y']) || age == "now";
            if !(is_age && count.bytes().all(|b| b.is_ascii_digit())) {
                return None;
            }
            let before = l.trim_end().strip_suffix(age)?.trim_end();
            let folder = before.strip_suffix(count)?.trim_end();
            Some(folder.chars().count())
        })
        .collect();
    assert_eq!(ends.len(), 1, "folders end at {ends:?}:\n{s}");
}

/// Atomic's two hint lines stand as they are where they fit; narrower,
/// they hold whole hints (flowed between them, the least needed left to
/// the help), and F1 always shows: at 60 columns they were cut mid-word.
#[test]
fn hint_lines_hold_whole_hints_at_any_width() {
    let fx = fixture();
    const HINTS: &[&str] = &[
        "tab scope",
        "re:<pattern> regex",
        "\"phrase\" exact",
        "F1 help",
        "ctrl+s Sort",
        "ctrl+n Named",
        "ctrl+d Delete",
        "ctrl+p Path (off)",
        "ctrl+r Rename",
    ];
    for (w, h) in [(30, 12), (40, 12), (60, 20), (79, 24), (80, 24), (120, 30)] {
        let mut app = app_with(&fx.root, WEBAPP);
        app.width = w;
        app.height = h;
        let s = screen(&app, &fx.root);
        let lines: Vec<&str> = s.lines().collect();
        let hints = &lines[lines.len() - 2..];
        for l in hints.iter().filter(|l| !l.trim().is_empty()) {
            for item in l.trim_end().split(" · ") {
                assert!(HINTS.contains(&item), "{w}×{h}: a cut hint {item:?}:\n{s}");
            }
        }
        assert!(hints.iter().any(|l| l.contains("F1 help")), "{w}×{h}:\n{s}");
        if w >= 80 {
            assert_eq!(
                hints.iter().map(|l| l.trim_end()).collect::<Vec<_>>(),
                [
                    "tab scope · re:<pattern> regex · \"phrase\" exact · F1 help",
                    "ctrl+s Sort · ctrl+n Named · ctrl+d Delete · ctrl+p Path (off) · ctrl+r Rename"
                ],
                "Atomic's lines where they fit"
            );
        }
    }
}

/// Ctrl+L lists the labels of the sessions in scope (read as `arbor
/// labels` reads them), newest first; Enter opens the tree at the labelled
/// entry; Esc closes the list.
#[test]
fn ctrl_l_lists_labels_and_opens_the_tree_at_one() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.store = StoreConfig::single(&fx.root, StoreKind::PerProject);
    let fxs = ctrl(&mut app, 'l');
    assert_eq!(
        fxs,
        vec![Effect::LoadLabels {
            config: app.store.clone(),
            scope: Scope::Project(WEBAPP.into()),
            include_internal: false,
        }]
    );
    assert!(screen(&app, &fx.root).contains("Labels · loading…"));
    // Esc closes; the answer arriving later changes nothing.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.picker.dialog.open, Dialog::None);
    for ev in perform(fxs[0].clone()) {
        drive(&mut app, ev);
    }
    assert_eq!(app.picker.dialog.open, Dialog::None);

    ctrl(&mut app, 'l');
    for ev in perform(fxs[0].clone()) {
        drive(&mut app, ev);
    }
    let s = screen(&app, &fx.root);
    insta::assert_snapshot!("labels_box", s);
    // The webapp session's two checkpoints, the newer first.
    let first = s.find("Committed as").unwrap();
    let second = s.find("Fixed. Summary").unwrap();
    assert!(first < second, "{s}");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down); // stays on the last
    let open = key(&mut app, KeyCode::Enter);
    let webapp = common::find_session(&fx.root, "01a1fd62");
    assert_eq!(
        open,
        vec![Effect::OpenTree {
            path: webapp.clone(),
            agent: arbor_session::Agent::Atomic,
        }]
    );
    assert_eq!(app.picker.dialog.open, Dialog::None);
    for ev in perform(open[0].clone()) {
        app.update(ev);
    }
    match &app.mode {
        arbor::ui::Mode::Tree(t) => {
            assert_eq!(t.path, webapp);
            assert_eq!(t.entry_id(t.selected_entry().unwrap()), "c856cfd2");
        }
        arbor::ui::Mode::Picker => panic!("the tree did not open"),
    }
}

/// `label:` in the picker: the same sessions whether the rows came from
/// the files or from the index's stored rows (which the picker shows first
/// on a warm start).
#[test]
fn label_filter_with_rows_from_the_files_or_the_index() {
    use arbor_index::Index;
    use arbor_store::StoreRoot;

    let fx = fixture();
    let cache = tempfile::tempdir().unwrap();
    let mut index = Index::open(&cache.path().join("index.db")).unwrap();
    let (files, _) = list_session_files(
        &StoreConfig::single(&fx.root, StoreKind::PerProject),
        &Scope::All,
    );
    index.refresh(&files, &mut |_| {}).unwrap();
    let root = StoreRoot {
        path: fx.root.clone(),
        kind: StoreKind::PerProject,
        agent: Default::default(),
        host: None,
    };
    let stored = index.stored_rows(&[root], None).unwrap();
    assert_eq!(stored.len(), files.len());
    let found = |rows: Vec<Row>, q: &str| -> Vec<String> {
        let mut app = App::new(WEBAPP.into(), NOW);
        app.width = 100;
        app.height = 24;
        drive(&mut app, AppEvent::Rows(rows));
        drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
        key(&mut app, KeyCode::Tab);
        typ(&mut app, q);
        assert!(app.picker.search.parsed.error().is_none(), "{q}");
        app.picker
            .list
            .visible
            .iter()
            .map(|v| app.picker.list.rows[v.idx].id()[..8].to_string())
            .collect()
    };
    for (q, want) in [
        ("label:checkpoint", &["01a1fd62"][..]),
        ("label:CHECK flaky", &["01a1fd62"][..]),
        // Set, then cleared.
        ("label:wip", &[][..]),
        ("label:check sidebar", &[][..]),
    ] {
        assert_eq!(found(rows(&fx.root), q), want, "{q}: from the files");
        let from_index = stored.iter().cloned().map(Row::new).collect();
        assert_eq!(found(from_index, q), want, "{q}: from the index");
    }
}

/// Enter on a session whose folder is gone: the question is asked over the
/// picker (the runtime hands the outcome back with `ask_resume_here`);
/// declining goes back to the picker with the selection kept, agreeing
/// leaves with `ResumeHere` (not asked again on the terminal).
#[test]
fn declining_to_resume_elsewhere_goes_back_to_the_picker() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 80;
    key(&mut app, KeyCode::Down);
    let path = app.picker.selection.selected.clone().unwrap();
    let id = app.picker.selected_row().unwrap().id().to_string();
    let resume = |app: &mut App| {
        let fxs = key(app, KeyCode::Enter);
        let o = app.outcome.take().expect("Enter leaves");
        assert_eq!(fxs, vec![Effect::Exit(o.clone())]);
        // The fixture's folder does not exist on this machine.
        assert!(o.folder_gone());
        app.ask_resume_here(o, "/tmp/here".into());
    };
    resume(&mut app);
    let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
    t.draw(|f| arbor::ui::render(f, &app, &Theme::plain()))
        .unwrap();
    let s = common::buffer_text(t.backend().buffer());
    assert!(s.contains("The session's folder no longer exists:"), "{s}");
    assert!(s.contains(WEBAPP), "{s}");
    assert!(s.contains("/tmp/here"), "{s}");
    assert!(s.contains("y resume here · n/esc back"), "{s}");
    // Typed text and pastes do not reach the query under the question.
    key(&mut app, KeyCode::Char('x'));
    drive(&mut app, AppEvent::Paste("abc".into()));
    assert_eq!(app.picker.search.query.text(), "");
    assert!(app.resume_here.is_some());
    // `n`: back in the picker, the same row selected, nothing to leave with.
    assert!(key(&mut app, KeyCode::Char('n')).is_empty());
    assert!(app.resume_here.is_none());
    assert!(app.outcome.is_none());
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&path));
    let status = app.picker.flash.status.as_ref().unwrap();
    assert!(status.text.starts_with("Not resumed"), "{}", status.text);
    // Esc too; and the picker still works after.
    resume(&mut app);
    key(&mut app, KeyCode::Esc);
    assert!(app.resume_here.is_none() && app.outcome.is_none());
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&path));
    // `y`: leaves, to resume in the current folder.
    resume(&mut app);
    let o = Outcome::ResumeHere {
        path,
        id,
        cwd: WEBAPP.into(),
        agent: arbor_session::Agent::Atomic,
    };
    assert_eq!(
        key(&mut app, KeyCode::Char('y')),
        vec![Effect::Exit(o.clone())]
    );
    assert_eq!(app.outcome, Some(o));
    // A folder that exists is not asked about.
    let here = Outcome::Resume {
        path: "/x.jsonl".into(),
        id: "x".into(),
        cwd: fx.root.display().to_string(),
        agent: arbor_session::Agent::Atomic,
    };
    assert!(!here.folder_gone());
}

/// Ctrl+R on a version 1 session: instead of a long error, the picker asks
/// to rewrite it (Enter), then renames it; Esc leaves the file untouched.
#[test]
fn renaming_a_version_1_session_offers_the_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let project = root.join("--some-project--");
    std::fs::create_dir_all(&project).unwrap();
    let f = project.join("large-session.jsonl");
    std::fs::copy(
        common::shared_dir().join("realdata/large-session.jsonl"),
        &f,
    )
    .unwrap();
    let original = std::fs::read(&f).unwrap();
    let rename = |app: &mut App| {
        ctrl(app, 'r');
        ctrl(app, 'u');
        typ(app, "Migrated");
        let fxs = key(app, KeyCode::Enter);
        assert_eq!(fxs.len(), 1);
        for ev in perform(fxs[0].clone()) {
            drive(app, ev);
        }
    };
    let mut app = app_with(&root, "/nowhere");
    app.width = 80;
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&f));
    rename(&mut app);
    assert!(
        matches!(
            app.picker.dialog.open,
            Dialog::ConfirmMigrateRename { version: 1, .. }
        ),
        "{:?}",
        app.picker.dialog.open
    );
    let s = screen(&app, &root);
    assert!(
        s.contains("A version 1 session: rewrite it as version 3 (the original kept as .bak) to"),
        "{s}"
    );
    assert!(
        s.contains("enter rewrite and rename · esc/ctrl+c cancel"),
        "{s}"
    );
    // Esc: nothing written.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.picker.dialog.open, Dialog::None);
    assert_eq!(std::fs::read(&f).unwrap(), original);
    // Enter: rewritten (the original kept), then renamed.
    rename(&mut app);
    let fxs = key(&mut app, KeyCode::Enter);
    assert!(
        matches!(&fxs[..], [Effect::MigrateThen { path, .. }] if path == &f),
        "{fxs:?}"
    );
    for ev in perform(fxs[0].clone()) {
        drive(&mut app, ev);
    }
    assert_eq!(
        std::fs::read(project.join("large-session.jsonl.bak")).unwrap(),
        original
    );
    let s = arbor_session::read_session(&f).unwrap();
    assert_eq!(s.file_version, 3);
    assert_eq!(
        app.picker.flash.status.as_ref().map(|s| s.text.as_str()),
        Some("Renamed to \u{201c}Migrated\u{201d}")
    );
}

/// Alt+a letter.
fn alt(app: &mut App, c: char) -> Vec<Effect> {
    drive(
        app,
        AppEvent::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)),
    )
}

/// The screen with a line of `~` under the cells drawn highlighted (the
/// plain theme underlines matches) after each line that has any.
fn screen_marked(app: &App, root: &Path) -> String {
    use ratatui::style::Modifier;
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    let buf = t.backend().buffer();
    let text = common::buffer_text(buf).replace(&root.display().to_string(), "[store]");
    let mut out = String::new();
    for (y, line) in common::buffer_text(buf).lines().enumerate() {
        let _ = &text;
        out.push_str(&line.replace(&root.display().to_string(), "[store]"));
        out.push('\n');
        let marks: String = (0..buf.area.width)
            .map(|x| {
                if buf[(x, y as u16)].modifier.contains(Modifier::UNDERLINED) {
                    '~'
                } else {
                    ' '
                }
            })
            .collect();
        if marks.contains('~') {
            out.push_str(marks.trim_end());
            out.push('\n');
        }
    }
    out
}

/// Performs the effects of opening a tree (reading it, its search text,
/// which entries match its search) and feeds their results back, as the
/// runtime's workers do.
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

/// Issue #14.2: the preview lists the selected session's matching entries
/// (role or part, time, the snippet with the match marked, `k of N`);
/// Alt+N / Alt+P step through them (wrapping); Ctrl+T opens the tree at the
/// picked one, searching for the query less its filters, the match marked
/// in the rows, and the tree steps through the matches.
#[test]
fn preview_lists_matching_entries_and_ctrl_t_opens_the_tree_at_one() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 140;
    app.height = 30;
    typ(&mut app, "token dir:webapp");
    // The fork of the auth session, first in the threaded order.
    let webapp = common::find_session(&fx.root, "01a20d3b");
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&webapp));
    let hits = app.picker.hits().expect("the matches were read").clone();
    let n = hits.hits.len();
    assert!(n >= 3, "{n} matches");
    assert_eq!(hits.total, n);
    // Each one holds the word where its snippet says.
    for h in &hits.hits {
        assert_eq!(h.snippet[h.highlight.clone()].to_lowercase(), "token");
    }
    let s = screen_marked(&app, &fx.root);
    assert!(
        s.contains(&format!("Matches · 1 of {n} · alt+n/p step · ctrl+t tree")),
        "{s}"
    );
    insta::assert_snapshot!("preview_matches", s);

    // Alt+N / Alt+P step, wrapping.
    alt(&mut app, 'n');
    assert_eq!(app.picker.preview.hit_pos, 1);
    assert!(screen(&app, &fx.root).contains(&format!("Matches · 2 of {n}")));
    alt(&mut app, 'p');
    alt(&mut app, 'p');
    assert_eq!(app.picker.preview.hit_pos, n - 1);
    alt(&mut app, 'n');
    alt(&mut app, 'n');
    assert_eq!(app.picker.preview.hit_pos, 1);
    // Another selection, or another query, starts at the first again.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Up);
    assert_eq!(app.picker.preview.hit_pos, 0);
    alt(&mut app, 'n');

    // Ctrl+T: the tree at the picked match, searching for the query's
    // terms (its filters chose the session).
    let open = ctrl(&mut app, 't');
    let picked = hits.hits[1].entry_id.clone();
    assert_eq!(app.open_at, Some((webapp.clone(), picked.clone())));
    assert_eq!(app.open_search, Some((webapp.clone(), "token".into())));
    run_tree_effects(&mut app, open);
    let arbor::ui::Mode::Tree(t) = &app.mode else {
        panic!("the tree did not open")
    };
    assert_eq!(t.search.text(), "token");
    assert_eq!(t.entry_id(t.selected_entry().unwrap()), picked);
    // The rows are the matches: every entry the preview listed that the
    // filter shows is one.
    let rows: Vec<String> = t
        .rows
        .iter()
        .map(|r| t.entry_id(r.entry()).to_string())
        .collect();
    assert!(rows.len() >= 3, "{rows:?}");
    let s = screen_marked(&app, &fx.root);
    let k = t.selected.unwrap() + 1;
    assert!(
        s.contains(&format!("({k}/{}) · {} matches", rows.len(), rows.len())),
        "{s}"
    );
    insta::assert_snapshot!("tree_at_hit", s);
    let n_rows = rows.len();
    // ↓ steps to the next match.
    key(&mut app, KeyCode::Down);
    let arbor::ui::Mode::Tree(t) = &app.mode else {
        unreachable!()
    };
    assert_eq!(t.selected, Some(k % n_rows));
}

/// Ctrl+T with a phrase or a regex: the tree searches with the same
/// matcher (one implementation), at the first match when none was picked
/// (the preview hidden: its matches were never read).
#[test]
fn the_tree_takes_phrases_regexes_and_scopes() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    for (q, carried) in [
        ("\"fake timers\"", "\"fake timers\""),
        ("re:fake\\s+timers after:2026-01-01", "re:fake\\s+timers"),
        ("timers in:user", "timers in:user"),
    ] {
        ctrl(&mut app, 'u');
        typ(&mut app, q);
        let webapp = app.picker.selection.selected.clone().unwrap();
        let open = ctrl(&mut app, 't');
        assert_eq!(app.open_at, None, "{q}: no match picked at 100 columns");
        assert_eq!(app.open_search, Some((webapp.clone(), carried.into())));
        run_tree_effects(&mut app, open);
        let arbor::ui::Mode::Tree(t) = &app.mode else {
            panic!("{q}: the tree did not open")
        };
        // The rows are exactly the entries the matcher finds (that the
        // filter shows), the first selected.
        let want = arbor_search::hits::entry_hits(
            &t.loaded.session.entries,
            &arbor_search::Query::parse(carried),
        );
        assert!(!want.is_empty(), "{q}");
        let rows: Vec<String> = t
            .rows
            .iter()
            .map(|r| t.entry_id(r.entry()).to_string())
            .collect();
        for r in &rows {
            assert!(want.iter().any(|h| &h.entry_id == r), "{q}: {r}");
        }
        assert_eq!(t.selected, Some(0), "{q}");
        if carried.contains("in:user") {
            assert!(t
                .rows
                .iter()
                .all(|r| t.loaded.session.entries[r.entry()].role() == Some("user")));
        }
        key(&mut app, KeyCode::Esc);
        key(&mut app, KeyCode::Esc);
        assert!(matches!(app.mode, arbor::ui::Mode::Picker), "{q}");
    }
}

/// A first prompt longer than the pane no longer pushes the matches out of
/// view: it is cut to a few lines under them.
#[test]
fn a_long_first_prompt_leaves_the_matches_in_view() {
    let fx = fixture();
    let proj = fx.root.join("--home-demo-projects-webapp--");
    let path = proj.join("2026-11-28T10-00-00-000Z_019ad000-0000-7000-8000-0000000000ab.jsonl");
    let prompt = "please read this long log and tell me what went wrong. ".repeat(60);
    std::fs::write(
        &path,
        format!(
            concat!(
                r#"{{"type":"session","version":3,"id":"019ad000-0000-7000-8000-0000000000ab","timestamp":"2026-11-28T10:00:00.000Z","cwd":"/home/demo/projects/webapp"}}"#,
                "\n",
                r#"{{"type":"message","id":"cc000001","parentId":null,"timestamp":"2026-11-28T10:00:01.000Z","message":{{"role":"user","content":"{} the end","timestamp":1795860001000}}}}"#,
                "\n",
                r#"{{"type":"message","id":"cc000002","parentId":"cc000001","timestamp":"2026-11-28T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"The zeppelin module panicked."}}],"timestamp":1795860002000}}}}"#,
                "\n"
            ),
            prompt
        ),
    )
    .unwrap();
    let mut app = app_with(&fx.root, WEBAPP);
    app.width = 110;
    app.height = 24;
    typ(&mut app, "zeppelin");
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&path));
    let s = screen(&app, &fx.root);
    assert!(s.contains("Matches · 1 of 1"), "{s}");
    assert!(s.contains("The zeppelin module panicked."), "{s}");
    assert!(s.contains("First prompt"), "{s}");
}

/// Issue #14.6: a session file changed a moment ago (appended to, or only
/// `touch`ed: the watcher reports its new change time) is read again and
/// carries the live marker; a minute later a tick redraws without it.
#[test]
fn a_just_written_file_is_live_and_the_mark_goes_a_minute_later() {
    let fx = fixture();
    let path = common::find_session(&fx.root, "01a1fd62");
    let now = std::time::SystemTime::now();
    let now_ms = now
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mut app = App::new(WEBAPP.to_string(), now_ms);
    app.width = 100;
    app.height = 24;
    app.store = StoreConfig::single(&fx.root, StoreKind::PerProject);
    app.update_at(now_ms, AppEvent::Rows(rows(&fx.root)));
    let live_lines = |app: &App| {
        screen(app, &fx.root)
            .lines()
            .filter(|l| l.contains('●'))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(live_lines(&app).is_empty());
    // `touch`: only the change time moves.
    std::fs::File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .set_modified(now)
        .unwrap();
    let fxs = app.update_at(now_ms, AppEvent::FsChanged(vec![path.clone()]));
    assert!(
        matches!(&fxs[..], [Effect::Rescan(f)] if f[0].path == path),
        "{fxs:?}"
    );
    for f in fxs {
        for ev in perform(f) {
            app.update_at(now_ms + 500, ev);
        }
    }
    let live = live_lines(&app);
    assert_eq!(live.len(), 1, "{live:?}");
    assert!(live[0].contains("Fix flaky auth test"), "{live:?}");
    // A minute later the tick redraws the row without it.
    let later = now_ms + 61_000;
    assert!(app.step_at(later, AppEvent::Tick(later)).redraw);
    assert!(live_lines(&app).is_empty());
}

/// Issue #15: the list without a query is remembered for the next time the
/// query is cleared; whatever changed meanwhile (scope, sort, the named and
/// internal filters, rows arriving or leaving), clearing shows what a
/// fresh computation of the list shows.
#[test]
fn a_cleared_query_lists_what_a_fresh_list_does() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let fresh = |app: &App| {
        let mut p = arbor::ui::picker::PickerState::new(WEBAPP.to_string(), NOW);
        p.upsert(app.picker.list.rows.clone());
        p.settings.scope = app.picker.settings.scope;
        p.settings.sort = app.picker.settings.sort;
        p.settings.named_only = app.picker.settings.named_only;
        p.settings.show_internal = app.picker.settings.show_internal;
        p.recompute();
        p.list
            .visible
            .iter()
            .map(|v| (p.list.rows[v.idx].info.path.clone(), v.prefix.clone()))
            .collect::<Vec<_>>()
    };
    let listed = |app: &App| {
        app.picker
            .list
            .visible
            .iter()
            .map(|v| {
                (
                    app.picker.list.rows[v.idx].info.path.clone(),
                    v.prefix.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let all = rows(&fx.root);
    type Step = Box<dyn Fn(&mut App)>;
    let steps: Vec<Step> = vec![
        Box::new(|_| {}),
        Box::new(|app| {
            key(app, KeyCode::Tab);
        }),
        Box::new(|app| {
            ctrl(app, 's');
        }),
        Box::new(|app| {
            ctrl(app, 'n');
        }),
        Box::new(|app| {
            ctrl(app, 'n');
            key_with(app, KeyCode::Char('i'), KeyModifiers::ALT);
        }),
        Box::new(|app| {
            ctrl(app, 's');
            ctrl(app, 's');
        }),
        Box::new(|app| {
            let gone = app.picker.list.rows[0].info.path.to_path_buf();
            drive(app, AppEvent::RowGone(gone));
        }),
        Box::new(move |app| {
            drive(app, AppEvent::Rows(all.clone()));
        }),
        Box::new(|app| {
            key(app, KeyCode::Tab);
        }),
    ];
    for (i, step) in steps.iter().enumerate() {
        typ(&mut app, "auth");
        step(&mut app);
        ctrl(&mut app, 'u');
        assert!(app.picker.search.query.text().is_empty());
        assert_eq!(listed(&app), fresh(&app), "step {i}");
        assert!(!listed(&app).is_empty(), "step {i}");
    }
}

/// A row keeps one copy of its first message: the search document's start
/// of it and the rest up to what the preview shows. Read back, it is the
/// message as the session has it, cut at the same place as before.
#[test]
fn a_row_gives_back_its_first_message_whole_up_to_the_cut() {
    use arbor::ui::picker::FIRST_PROMPT_KEPT;
    use arbor_session::info::{SessionInfo, NO_MESSAGES};
    let row = |first: Option<String>, name: Option<&str>| {
        Row::new(SessionInfo {
            first_message: first,
            name: name.map(str::to_string),
            has_name: name.is_some(),
            ..SessionInfo::default()
        })
    };
    // Multi-byte characters on both sides of the document's cut.
    let long: String = "añ€😀b".chars().cycle().take(3_001).collect();
    let kept: String = long.chars().take(FIRST_PROMPT_KEPT).collect();
    for text in [
        "fix the flaky test".to_string(),
        "é".repeat(500),
        "é".repeat(501),
        long.chars().take(FIRST_PROMPT_KEPT).collect(),
        long.clone(),
    ] {
        let want: String = text.chars().take(FIRST_PROMPT_KEPT).collect();
        let r = row(Some(text), None);
        assert_eq!(r.first_message_text(), want);
        assert_eq!(r.title(), want);
        assert_eq!(r.into_info().first_message, Some(want));
    }
    assert_eq!(row(None, None).into_info().first_message, None);
    assert_eq!(row(Some(long), None).first_message_text(), kept);
    assert_eq!(row(None, None).first_message_text(), NO_MESSAGES);
    let named = row(Some("first".into()), Some("My name"));
    assert_eq!(named.title(), "My name");
    assert_eq!(named.first_message_text(), "first");
}

/// A row keeps its id, folder, name and summary only in its search
/// document: read back, they are the session's own whichever of the name
/// and summary it has, and so is what Enter resumes; made into a session
/// row again, it makes the same row.
#[test]
fn a_row_reads_its_facts_back_from_its_search_document() {
    use arbor_session::info::SessionInfo;
    use arbor_session::Agent;
    for (name, summary, stale) in [
        (None, None, false),
        (Some("Ünïcode name 日本"), None, false),
        (None, Some("the summary"), false),
        (Some("both"), Some("the summary"), false),
        (Some("a name"), Some("a stale summary"), true),
    ] {
        for (internal, agent, parent) in [
            (false, Agent::Atomic, None),
            (true, Agent::Claude, Some("/p/parent-id.jsonl")),
        ] {
            let info = SessionInfo {
                path: PathBuf::from("/s/--w--/sess.jsonl").into(),
                id: "0195-abc".into(),
                cwd: "/home/u/Wörk  dir".into(),
                name: name.map(str::to_string),
                has_name: name.is_some(),
                summary_candidate: summary.map(|s| (s.to_string(), "m1".to_string())),
                last_message_id: Some(if stale { "m2" } else { "m1" }.to_string()),
                first_message: Some("hello".into()),
                internal,
                agent,
                parent_session_path: parent.map(str::to_string),
                created: "2026-01-01T00:00:00Z".into(),
                modified_ms: 5,
                message_count: 3,
                models: vec!["m-a".into(), "m-b".into()],
                ..SessionInfo::default()
            };
            let row = Row::new(info.clone());
            assert_eq!(row.id(), info.id);
            assert_eq!(row.cwd(), info.cwd);
            assert_eq!(row.display_name(), info.display_name());
            assert_eq!(row.summary(), info.summary());
            assert_eq!(row.resume_target(), info.resume_target());
            assert_eq!(row.title(), info.title());
            let again = row.clone().into_info();
            assert_eq!(again.summary(), info.summary(), "{name:?} {summary:?}");
            assert_eq!(again.models, info.models);
            let remade = Row::new(again);
            assert_eq!(
                (
                    remade.id(),
                    remade.cwd(),
                    remade.display_name(),
                    remade.summary()
                ),
                (row.id(), row.cwd(), row.display_name(), row.summary())
            );
            assert_eq!(remade.info.created, row.info.created);
        }
    }
}

/// A query that chose a session by its id, name or folder alone carries
/// over to no entry: Ctrl+T then opens the whole tree and says why,
/// rather than an empty one.
#[test]
fn ctrl_t_with_a_query_no_entry_holds_opens_the_whole_tree() {
    let fx = fixture();
    let mut app = app_with(&fx.root, WEBAPP);
    let webapp = common::find_session(&fx.root, "01a20d3b");
    typ(&mut app, "01a20d3b");
    assert_eq!(app.picker.selection.selected.as_ref(), Some(&webapp));
    let open = ctrl(&mut app, 't');
    assert_eq!(app.open_search, Some((webapp.clone(), "01a20d3b".into())));
    run_tree_effects(&mut app, open);
    let arbor::ui::Mode::Tree(t) = &app.mode else {
        panic!("the tree did not open")
    };
    assert!(!t.rows.is_empty());
    assert_eq!(t.search.text(), "");
    app.width = 140;
    let s = screen_marked(&app, &fx.root);
    assert!(!s.contains("No entries found"), "{s}");
    assert!(s.contains("No entry holds 01a20d3b"), "{s}");
    // A search typed in the tree itself that finds nothing stays as typed.
    for c in "zzqx".chars() {
        key(&mut app, KeyCode::Char(c));
    }
    let arbor::ui::Mode::Tree(t) = &app.mode else {
        unreachable!()
    };
    assert_eq!(t.search.text(), "zzqx");
    assert!(t.rows.is_empty());
}

/// A query's first screen comes before its whole answer: the rows that
/// fill the screen (the newest sessions whose names match best, which no
/// other session can outrank) with the count to follow, then the whole
/// list, whose first rows are the same.
#[test]
fn the_first_screen_comes_before_the_whole_answer() {
    let (mut app, first, whole) = parser_typed();
    assert!(matches!(
        whole,
        AppEvent::SearchDone {
            stage: Stage::Whole,
            ..
        }
    ));
    let shown = |app: &App| -> Vec<String> {
        let p = &app.picker;
        p.list
            .visible
            .iter()
            .take(p.selection.page)
            .map(|v| p.list.rows[v.idx].info.path.display().to_string())
            .collect()
    };
    app.update(first);
    let early = shown(&app);
    let s = screen(&app, Path::new("/nowhere"));
    assert!(s.contains("(1/…)"), "the count is to follow:\n{s}");
    assert_eq!(early.len(), app.picker.selection.page, "the screen is full");
    assert!(
        app.picker.list.visible.len() >= 2 * app.picker.selection.page,
        "and the next"
    );
    // The newest named for the parser, newest first.
    let want: Vec<String> = (0..app.picker.selection.page)
        .map(|k| format!("/nowhere/s/{:03}.jsonl", 3 * k))
        .collect();
    assert_eq!(early, want);
    app.update(whole);
    let s = screen(&app, Path::new("/nowhere"));
    assert!(s.contains("(1/200)"), "every match counted:\n{s}");
    assert_eq!(shown(&app), early);
    assert!(!app.picker.search.partial);
}

/// A picker at 100×24 over [`parser_rows`], loaded.
fn parser_app() -> App {
    let mut app = App::new("/w".into(), NOW);
    app.width = 100;
    app.height = 24;
    app.update(AppEvent::Rows(parser_rows()));
    app.update(AppEvent::LoadFinished { problems: vec![] });
    app
}

/// 300 sessions a minute apart; every third is about the parser (its
/// name), as many match it less well (spread over their first message).
fn parser_rows() -> Vec<Row> {
    use arbor_session::info::SessionInfo;
    (0..300)
        .map(|i| {
            let (name, first) = match i % 3 {
                0 => ("parser fix", "the lexer"),
                1 => ("other work", "p a r s e r"),
                _ => ("other work", "nothing here"),
            };
            Row::new(SessionInfo {
                path: PathBuf::from(format!("/nowhere/s/{i:03}.jsonl")).into(),
                id: format!("id-{i:03}"),
                cwd: "/w".into(),
                name: Some(name.into()),
                has_name: true,
                modified_ms: NOW - i * 60_000,
                message_count: 2,
                first_message: Some(first.into()),
                all_text: first.into(),
                ..Default::default()
            })
        })
        .collect()
}

/// The same query asked again (rows changed on disk) keeps the selection
/// where the user moved it: no first screen is sent for it, whose two
/// screens of rows would not hold the selection.
#[test]
fn a_query_asked_again_keeps_the_selection() {
    use arbor::app::searcher::Searcher;
    use arbor::ui::runtime::perform_search;
    let mut app = parser_app();
    let mut searcher = Searcher::new(None);
    let mut run = |app: &mut App, fx: Vec<Effect>| {
        let mut partial = 0;
        for fx in fx {
            if matches!(fx, Effect::Search { .. }) {
                for ev in perform_search(&mut searcher, fx) {
                    if matches!(
                        ev,
                        AppEvent::SearchDone {
                            stage: Stage::FirstRows,
                            ..
                        }
                    ) {
                        partial += 1;
                    }
                    app.update(ev);
                }
            }
        }
        partial
    };
    // (Without the index no first screen is sent: Atomic's relevance
    // order is known only once every session is scored.)
    for c in "parser".chars() {
        let fx = app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
        run(&mut app, fx);
    }
    for _ in 0..60 {
        app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::Down,
            KeyModifiers::NONE,
        )));
    }
    let chosen = app.picker.selection.selected.clone().expect("a row");
    let again = parser_rows().into_iter().take(1).collect();
    let fx = app.update(AppEvent::Rows(again));
    assert!(
        fx.iter().any(|f| matches!(f, Effect::Search { .. })),
        "asked again"
    );
    assert_eq!(run(&mut app, fx), 0, "no first screen for it");
    assert_eq!(app.picker.selection.selected, Some(chosen));
}

/// [`parser_app`] with `parser` typed, and the last key's two answers
/// (the first rows, then the whole answer), not yet taken in. The first
/// rows are the whole answer's first two screens, as an index's placed
/// rows would come (without the index, the whole answer comes alone).
fn parser_typed() -> (App, AppEvent, AppEvent) {
    use arbor::app::searcher::Searcher;
    let mut app = parser_app();
    let answers = common::type_query(&mut app, &mut Searcher::new(None), "parser");
    let [whole] = <[AppEvent; 1]>::try_from(answers).expect("one answer");
    let first = first_rows_of(&whole, 2 * app.picker.selection.page);
    (app, first, whole)
}

/// The first `want` rows of a whole answer (best, then newest), and those
/// that tie with the last, as a [`Stage::FirstRows`] answer.
fn first_rows_of(whole: &AppEvent, want: usize) -> AppEvent {
    let AppEvent::SearchDone {
        generation,
        query,
        docs,
        scores,
        incomplete,
        stage: Stage::Whole,
    } = whole
    else {
        panic!("not a whole answer: {whole:?}")
    };
    let key = |d: usize| (scores[d], docs.0[d].1.facts.modified_ms);
    let mut ranked: Vec<usize> = (0..scores.len()).filter(|&d| scores[d].is_some()).collect();
    ranked.sort_by_key(|&d| std::cmp::Reverse(key(d)));
    let last = key(ranked[want.min(ranked.len()) - 1]);
    let mut first = vec![None; scores.len()];
    for d in ranked.into_iter().filter(|&d| key(d) >= last) {
        first[d] = scores[d];
    }
    AppEvent::SearchDone {
        generation: *generation,
        query: query.clone(),
        docs: docs.clone(),
        scores: first,
        incomplete: incomplete.clone(),
        stage: Stage::FirstRows,
    }
}

fn visible_paths(app: &App) -> Vec<PathBuf> {
    let p = &app.picker;
    p.list
        .visible
        .iter()
        .map(|v| p.list.rows[v.idx].info.path.to_path_buf())
        .collect()
}

fn sort_by_time(app: &mut App) {
    while app.picker.settings.sort != Sort::Recent {
        ctrl(app, 's');
    }
}

/// Sorting by time while only the first rows by relevance are known: those
/// rows are not the newest matches, so the list stays as it was until the
/// whole answer, which is then listed by time as if it had come first.
/// First rows that come after the change are not shown at all.
#[test]
fn a_setting_changed_under_a_partial_answer_waits_for_the_whole_one() {
    let (mut app, first, whole) = parser_typed();
    let (mut want, _, whole_again) = parser_typed();
    sort_by_time(&mut want);
    want.update(whole_again);
    let newest = visible_paths(&want);

    app.update(first);
    let early = visible_paths(&app);
    assert_ne!(early[..10], newest[..10], "a list this test tells apart");
    sort_by_time(&mut app);
    assert_eq!(visible_paths(&app), early, "kept until the whole answer");
    app.update(whole);
    assert_eq!(visible_paths(&app), newest);
    assert_eq!(app.picker.selection.selected.as_ref(), newest.first());

    // The first rows asked for by relevance, come once sorted by time.
    let (mut app, first, whole) = parser_typed();
    sort_by_time(&mut app);
    let before = visible_paths(&app);
    app.update(first);
    assert!(!app.picker.search.partial, "not taken");
    assert_eq!(visible_paths(&app), before);
    app.update(whole);
    assert_eq!(visible_paths(&app), newest);
}

/// End on a partial list goes to the whole answer's last row when it
/// comes; a move after End keeps the selection where it moved.
#[test]
fn end_on_a_partial_list_goes_to_the_whole_answers_last_row() {
    let end = |app: &mut App| {
        app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::End,
            KeyModifiers::NONE,
        )));
    };
    let (mut app, first, whole) = parser_typed();
    app.update(first);
    let partial_len = app.picker.list.visible.len();
    end(&mut app);
    app.update(whole);
    let all = visible_paths(&app);
    assert!(all.len() > partial_len, "{} rows", all.len());
    assert_eq!(app.picker.selection.selected.as_ref(), all.last());

    let (mut app, first, whole) = parser_typed();
    app.update(first);
    end(&mut app);
    app.update(AppEvent::Key(KeyEvent::new(
        KeyCode::Up,
        KeyModifiers::NONE,
    )));
    let chosen = app.picker.selection.selected.clone();
    app.update(whole);
    assert_eq!(app.picker.selection.selected, chosen);
}

/// End and a setting changed before the typed query's first answer: the
/// list of the query before stays (never an empty "No sessions found"
/// while the answer is on its way), and End goes to the answer's last row.
#[test]
fn keys_before_the_first_answer_wait_for_it() {
    let (mut app, first, whole) = parser_typed();
    let before = visible_paths(&app);
    sort_by_time(&mut app);
    assert_eq!(visible_paths(&app), before, "kept until the answer");
    app.update(AppEvent::Key(KeyEvent::new(
        KeyCode::End,
        KeyModifiers::NONE,
    )));
    app.update(first);
    app.update(whole);
    let all = visible_paths(&app);
    assert!(
        all.len() > 2 * app.picker.selection.page,
        "{} rows",
        all.len()
    );
    assert_eq!(app.picker.selection.selected.as_ref(), all.last());
}

/// Rows that change while an answer is awaited are listed afresh: the
/// list kept for the answer would name rows by stale positions.
#[test]
fn rows_changed_while_an_answer_is_awaited_are_listed_afresh() {
    let (mut app, _, _) = parser_typed();
    sort_by_time(&mut app);
    let gone = app.picker.list.rows[0].info.path.to_path_buf();
    app.picker.remove(&gone);
    app.update(AppEvent::Rows(
        parser_rows().into_iter().skip(299).collect(),
    ));
    let rows = app.picker.list.rows.len();
    assert!(app.picker.list.visible.iter().all(|v| v.idx < rows));
    assert!(!visible_paths(&app).contains(&gone));
    let _ = screen(&app, Path::new("/nowhere"));
}
