//! Bulk cleanup (#16.1): the picker's marks (by key, by query, kept by
//! path through reloads), the batch's one question (how many, how many
//! bytes, which an agent may be writing; the second question), a batch the
//! trash partly refuses, its undo; and `arbor trash` / `arbor restore` on a
//! copied store with a trash of its own. (The same on disk through the
//! picker: `bulk_disk.rs`, and in a terminal: `pty_e2e.rs`.)

use crate::common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::ui::picker::{Dialog, Row, PERMANENT_GUARD_MS};
use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect};
use arbor_session::info::scan_info;
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

/// 2026-11-29T12:00:00Z: the demo sessions are 1 day to 9 days old.
const NOW: i64 = 1_795_953_600_000;
const DAY: i64 = 86_400_000;

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

/// The picker on every project of the demo store, at 80×24.
fn app_on(root: &Path) -> App {
    let mut app = App::new("/home/demo/projects/webapp".into(), NOW);
    app.width = 80;
    app.height = 24;
    drive(&mut app, AppEvent::Rows(rows(root)));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    key(&mut app, KeyCode::Tab);
    app
}

/// Feeds an event, performing the searches it asks for; all its effects.
fn drive(app: &mut App, ev: AppEvent) -> Vec<Effect> {
    let mut all = Vec::new();
    let mut queue = vec![ev];
    while let Some(ev) = queue.pop() {
        for fx in app.update(ev) {
            all.push(fx.clone());
            if matches!(fx, Effect::Search { .. }) {
                queue.extend(perform(fx));
            }
        }
    }
    all
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    drive(app, AppEvent::Key(KeyEvent::new(code, mods)))
}

fn key(app: &mut App, code: KeyCode) -> Vec<Effect> {
    press(app, code, KeyModifiers::NONE)
}

fn ctrl(app: &mut App, c: char) -> Vec<Effect> {
    press(app, KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(app: &mut App, c: char) -> Vec<Effect> {
    press(app, KeyCode::Char(c), KeyModifiers::ALT)
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

fn listed(app: &App) -> Vec<PathBuf> {
    let p = &app.picker;
    p.list
        .visible
        .iter()
        .map(|v| p.list.rows[v.idx].info.path.to_path_buf())
        .collect()
}

fn marked(app: &App) -> HashSet<PathBuf> {
    app.picker.selection.marked.clone()
}

/// The sizes and change times a batch's measure would find: days old.
fn measured(paths: &[PathBuf], live: &[&PathBuf]) -> AppEvent {
    AppEvent::BatchMeasured(
        paths
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let mtime = if live.contains(&p) {
                    NOW - 2_000
                } else {
                    NOW - 3 * DAY
                };
                (p.clone(), Some((10_000 + 1_000 * i as u64, mtime)))
            })
            .collect(),
    )
}

/// Space marks while the query is empty and is typed into a query that
/// is not; Ctrl+Space marks either way; each mark moves to the next row.
#[test]
fn space_marks_on_an_empty_query_and_types_into_a_query() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let mut app = app_on(&root);
    let all = listed(&app);
    key(&mut app, KeyCode::Char(' '));
    assert_eq!(marked(&app), HashSet::from([all[0].clone()]));
    assert_eq!(
        app.picker.selection.selected.as_ref(),
        Some(&all[1]),
        "on to the next"
    );
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Char(' '));
    assert!(marked(&app).is_empty(), "the same key unmarks");

    typ(&mut app, "fake timers");
    assert_eq!(app.picker.search.query.text(), "fake timers");
    assert!(marked(&app).is_empty());
    let best = app.picker.selection.selected.clone().unwrap();
    press(&mut app, KeyCode::Char(' '), KeyModifiers::CONTROL);
    assert_eq!(marked(&app), HashSet::from([best]));
    assert_eq!(app.picker.search.query.text(), "fake timers");
}

/// A query, then mark all: exactly its matches are marked; they stay
/// marked when the query is cleared; Ctrl+D asks once for all of them
/// (how many, how many bytes), Enter moves them all, Ctrl+Z asks for all
/// of them back.
#[test]
fn mark_by_query_then_one_question_for_the_batch_then_undo() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let mut app = app_on(&root);
    let everything = listed(&app);
    typ(&mut app, "auth");
    let matches = listed(&app);
    assert!(matches.len() >= 2 && matches.len() < everything.len());
    alt(&mut app, 'a');
    assert_eq!(marked(&app), matches.iter().cloned().collect());
    let s = screen(&app, &root);
    assert_eq!(s.matches('✓').count(), 1 + matches.len(), "{s}");
    insta::assert_snapshot!("picker_marks_80x24", s);

    // Cleared, the query shows every session: the marks stay theirs.
    ctrl(&mut app, 'u');
    assert_eq!(listed(&app).len(), everything.len());
    assert_eq!(marked(&app), matches.iter().cloned().collect());
    // In list order.
    let batch: Vec<PathBuf> = listed(&app)
        .into_iter()
        .filter(|p| matches.contains(p))
        .collect();
    assert_eq!(
        ctrl(&mut app, 'd'),
        vec![Effect::MeasureBatch(batch.clone())]
    );
    // Enter waits for the sizes; other keys are dropped.
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    assert!(key(&mut app, KeyCode::Char('x')).is_empty());
    assert_eq!(app.picker.search.query.text(), "");
    drive(&mut app, measured(&batch, &[]));
    let s = screen(&app, &root);
    let bytes: u64 = (0..batch.len() as u64).map(|i| 10_000 + 1_000 * i).sum();
    assert!(
        s.contains(&format!(
            "Delete {} marked sessions ({:.1} kB)?",
            batch.len(),
            bytes as f64 / 1e3
        )),
        "{s}"
    );
    insta::assert_snapshot!("batch_question_80x24", s);

    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::TrashBatch(batch.clone())]
    );
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::TrashingBatch { .. }
    ));
    assert!(key(&mut app, KeyCode::Enter).is_empty(), "keys wait");
    drive(
        &mut app,
        AppEvent::TrashedBatch {
            moved: batch.clone(),
            failed: vec![],
        },
    );
    assert_eq!(app.picker.dialog.open, Dialog::None);
    for p in &batch {
        assert!(app.picker.row_index(p).is_none());
    }
    assert!(marked(&app).is_empty());
    let s = screen(&app, &root);
    assert!(
        s.contains(&format!(
            "{} sessions moved to trash · ctrl+z undo",
            batch.len()
        )),
        "{s}"
    );
    assert_eq!(
        ctrl(&mut app, 'z'),
        vec![Effect::RestoreBatch(batch.clone())]
    );
    // The restored files are read again.
    let fx = drive(
        &mut app,
        AppEvent::RestoredBatch {
            restored: batch.clone(),
            failed: vec![],
        },
    );
    assert!(matches!(&fx[..], [Effect::Rescan(files)] if files.len() == batch.len()));
    // Listed again at once, before that re-read of every file ends.
    for p in &batch {
        assert!(app.picker.row_index(p).is_some(), "{p:?} listed");
    }
    assert_eq!(listed(&app).len(), everything.len());
    assert!(screen(&app, &root).contains(&format!("{} sessions restored", batch.len())));
}

/// The live-session question of a single delete, for a batch: the first
/// question names the sessions changed in the last seconds, Enter asks
/// again, and only a second Enter moves the batch.
#[test]
fn a_batch_holding_a_live_session_asks_again() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let mut app = app_on(&root);
    let all = listed(&app);
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Char(' '));
    let batch = all[..2].to_vec();
    assert_eq!(
        ctrl(&mut app, 'd'),
        vec![Effect::MeasureBatch(batch.clone())]
    );
    drive(&mut app, measured(&batch, &[&batch[1]]));
    let title = app.picker.list.rows[app.picker.row_index(&batch[1]).unwrap()]
        .title()
        .chars()
        .take(20)
        .collect::<String>();
    let s = screen(&app, &root);
    assert!(s.contains("an agent may be writing it"), "{s}");
    assert!(s.contains(&title), "the live one is named: {s}");
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    assert!(matches!(
        app.picker.dialog.open,
        Dialog::ConfirmLiveBatch { .. }
    ));
    let s = screen(&app, &root);
    assert!(s.contains("an agent may be writing it. Delete"), "{s}");
    insta::assert_snapshot!("batch_live_question_80x24", s);
    assert_eq!(
        key(&mut app, KeyCode::Enter),
        vec![Effect::TrashBatch(batch)]
    );

    // Esc at the second question keeps everything, marks included.
    let mut app = app_on(&root);
    key(&mut app, KeyCode::Char(' '));
    let batch = all[..1].to_vec();
    ctrl(&mut app, 'd');
    drive(&mut app, measured(&batch, &[&batch[0]]));
    key(&mut app, KeyCode::Enter);
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    assert_eq!(app.picker.dialog.open, Dialog::None);
    assert_eq!(marked(&app).len(), 1);
}

/// One file of a batch the trash refuses: the others are moved (and can
/// be undone), and that one is asked about as a single delete is — `y`,
/// never Enter, and not in the first moments.
#[test]
fn a_failed_move_leaves_the_others_and_asks_about_it_alone() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let mut app = app_on(&root);
    let all = listed(&app);
    for _ in 0..3 {
        key(&mut app, KeyCode::Char(' '));
    }
    let batch = all[..3].to_vec();
    ctrl(&mut app, 'd');
    drive(&mut app, measured(&batch, &[]));
    key(&mut app, KeyCode::Enter);
    drive(
        &mut app,
        AppEvent::TrashedBatch {
            moved: batch[..2].to_vec(),
            failed: vec![(batch[2].clone(), "no trash on this volume".into())],
        },
    );
    assert!(app.picker.row_index(&batch[0]).is_none());
    assert!(
        app.picker.row_index(&batch[2]).is_some(),
        "nothing deleted yet"
    );
    assert!(matches!(
        &app.picker.dialog.open,
        Dialog::ConfirmPermanent { paths, moved: 2, .. } if paths == &batch[2..]
    ));
    let s = screen(&app, &root);
    assert!(
        s.contains("could not be moved to the trash: no trash on this volume"),
        "{s}"
    );
    assert!(s.contains("The other 2 of the"), "{s}");
    assert!(
        key(&mut app, KeyCode::Enter).is_empty(),
        "Enter never deletes"
    );
    assert!(key(&mut app, KeyCode::Char('y')).is_empty(), "not at once");
    assert_eq!(
        drive_at(&mut app, NOW + PERMANENT_GUARD_MS, KeyCode::Char('y')),
        vec![Effect::DeletePermanently(batch[2].clone())]
    );
    // Undo brings back the two moved.
    assert_eq!(
        ctrl(&mut app, 'z'),
        vec![Effect::RestoreBatch(batch[..2].to_vec())]
    );

    // Kept instead: said, with what was moved.
    let mut app = app_on(&root);
    for _ in 0..3 {
        key(&mut app, KeyCode::Char(' '));
    }
    ctrl(&mut app, 'd');
    drive(&mut app, measured(&batch, &[]));
    key(&mut app, KeyCode::Enter);
    drive(
        &mut app,
        AppEvent::TrashedBatch {
            moved: batch[..1].to_vec(),
            failed: vec![
                (batch[1].clone(), "no trash on this volume".into()),
                (batch[2].clone(), "no trash on this volume".into()),
            ],
        },
    );
    let s = screen(&app, &root);
    assert!(s.contains("Delete 2 sessions permanently?"), "{s}");
    key(&mut app, KeyCode::Esc);
    let s = screen(&app, &root);
    assert!(s.contains("1 session moved to trash, 2 not deleted"), "{s}");
    assert!(app.picker.row_index(&batch[2]).is_some());
    assert_eq!(ctrl(&mut app, 'z'), vec![Effect::Restore(batch[0].clone())]);
}

fn drive_at(app: &mut App, now: i64, code: KeyCode) -> Vec<Effect> {
    app.update_at(now, AppEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// Marks belong to sessions, not rows: a reload, another scope or sort
/// keeps them; a session gone takes its mark; Alt+U clears them all.
#[test]
fn marks_follow_their_sessions_through_reloads() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let mut app = app_on(&root);
    let all = listed(&app);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Char(' '));
    let want: HashSet<PathBuf> = all[1..3].iter().cloned().collect();
    assert_eq!(marked(&app), want);
    // Every row read again (the watcher), in another order.
    let mut again = rows(&root);
    again.reverse();
    drive(&mut app, AppEvent::Rows(again));
    ctrl(&mut app, 's');
    key(&mut app, KeyCode::Tab);
    assert_eq!(marked(&app), want);
    // Out of view now (another scope): the header says so.
    let hidden = all[1..3]
        .iter()
        .filter(|p| !listed(&app).contains(p))
        .count();
    let s = screen(&app, &root);
    if hidden > 0 {
        assert!(
            s.contains(&format!("✓ 2 marked ({hidden} not listed)")),
            "{s}"
        );
    }
    drive(&mut app, AppEvent::RowGone(all[1].clone()));
    assert_eq!(marked(&app), HashSet::from([all[2].clone()]));
    alt(&mut app, 'u');
    assert!(marked(&app).is_empty());
    alt(&mut app, 'u');
    assert!(screen(&app, &root).contains("No marks to clear"));
}

// ------------------------------------------------------------------- CLI

/// `arbor` on the copied store, with a trash (and a note of the last
/// batch) in `data`.
fn cli(root: &Path, data: &Path) -> std::process::Command {
    let mut c = common::arbor();
    c.arg("--store").arg(root).env("XDG_DATA_HOME", data);
    c
}

fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn paths_with(lines: &[serde_json::Value], status: &str) -> Vec<PathBuf> {
    lines
        .iter()
        .filter(|v| v["status"] == status)
        .map(|v| PathBuf::from(v["path"].as_str().unwrap()))
        .collect()
}

/// `--dry-run --json` lists exactly the files the real run then moves
/// (absolute paths, into the trash, nothing else touched); `arbor restore`
/// brings the batch back byte for byte.
#[test]
fn trash_older_than_dry_run_is_the_real_run_and_restore_undoes_it() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let data = tempfile::tempdir().unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> = rows(&root)
        .into_iter()
        .map(|r| {
            let bytes = std::fs::read(&r.info.path).unwrap();
            (r.info.path.into(), bytes)
        })
        .collect();
    let args = ["trash", "--all", "--older-than", "2026-11-26"];
    let dry = common::run(
        cli(&root, data.path())
            .args(args)
            .args(["--dry-run", "--json"]),
    );
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    let dry = json_lines(&dry.stdout);
    let would = paths_with(&dry, "would-move");
    assert_eq!(would.len(), dry.len());
    assert!(!would.is_empty() && would.len() < before.len(), "{dry:?}");
    for v in &dry {
        let p = PathBuf::from(v["path"].as_str().unwrap());
        assert!(p.is_absolute() && p.exists(), "{p:?}");
        assert!(v["modified"].as_str().unwrap() < "2026-11-26", "{v}");
        assert!(v["bytes"].as_u64().unwrap() > 0);
    }
    // Nothing moved by the dry run.
    assert!(before.iter().all(|(p, _)| p.exists()));

    let real = common::run(cli(&root, data.path()).args(args).arg("--json"));
    assert!(
        real.status.success(),
        "{}",
        String::from_utf8_lossy(&real.stderr)
    );
    let moved = paths_with(&json_lines(&real.stdout), "moved");
    assert_eq!(moved, would);
    for (p, _) in &before {
        let in_trash = data
            .path()
            .join("Trash/files")
            .join(p.file_name().unwrap())
            .exists();
        assert_eq!(!p.exists(), moved.contains(p), "{p:?}");
        assert_eq!(in_trash, moved.contains(p), "{p:?}");
    }

    // Text: what it restored, one line each.
    let out = common::run_ok(cli(&root, data.path()).arg("restore"));
    assert_eq!(
        out.lines().filter(|l| l.starts_with("restored")).count(),
        moved.len()
    );
    for (p, bytes) in &before {
        assert_eq!(&std::fs::read(p).unwrap(), bytes, "{p:?} is back as it was");
    }
    // The note is gone with the batch: nothing more to restore.
    let again = common::run(cli(&root, data.path()).arg("restore"));
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("no batch to restore"));
}

/// A session changed seconds ago (an agent may be writing it) and a name
/// that is no session are not moved and are named; the others are moved;
/// the exit status says that not all were.
#[test]
fn trash_names_what_it_did_not_move_and_fails() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let data = tempfile::tempdir().unwrap();
    let old = common::find_session(&root, "01a20947");
    let live = common::find_session(&root, "01a21c2e");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&live)
        .unwrap();
    std::io::Write::write_all(&mut f, b"\n").unwrap();
    drop(f);
    let out = common::run(
        cli(&root, data.path())
            .args(["trash", "--json"])
            .arg(&old)
            .arg(&live)
            .arg("no-such-session"),
    );
    assert!(!out.status.success());
    let lines = json_lines(&out.stdout);
    assert_eq!(paths_with(&lines, "moved"), vec![old.clone()]);
    assert_eq!(lines.len(), 3);
    assert!(lines[1]["error"]
        .as_str()
        .unwrap()
        .contains("an agent may be writing it"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("not moved: {}", live.display())),
        "{err}"
    );
    assert!(err.contains("no-such-session"), "{err}");
    assert!(err.contains("2 sessions of 3 not moved"), "{err}");
    assert!(!old.exists() && live.exists());

    // Restored by its id (a prefix of it), as the picker's rows name it.
    let out = common::run_ok(cli(&root, data.path()).args(["restore", "01a20947"]));
    assert!(out.contains(&old.display().to_string()), "{out}");
    assert!(old.exists());
}

/// `--larger-than` keeps the sessions whose file is larger.
#[test]
fn trash_larger_than_chooses_by_size() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let data = tempfile::tempdir().unwrap();
    let out = common::run_ok(cli(&root, data.path()).args([
        "trash",
        "--all",
        "--larger-than",
        "5k",
        "--dry-run",
        "--json",
    ]));
    let listed: HashSet<PathBuf> = paths_with(&json_lines(out.as_bytes()), "would-move")
        .into_iter()
        .collect();
    // As everywhere, internal workflow sessions only when asked for.
    let want: HashSet<PathBuf> = rows(&root)
        .into_iter()
        .filter(|r| !r.info.internal)
        .map(|r| r.info.path.into())
        .filter(|p| std::fs::metadata(p).unwrap().len() > 5_000)
        .collect();
    assert!(!want.is_empty());
    assert_eq!(listed, want);
}
