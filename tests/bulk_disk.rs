//! Bulk cleanup on disk through the picker's own update and effects (#16.1):
//! mark by query, one question, the batch moved to a temporary
//! freedesktop trash, Ctrl+Z restores every file to its path; a file of
//! the batch gone meanwhile fails alone. One test in this binary: it sets
//! `XDG_DATA_HOME` for the process (the trash crate reads it), which no
//! other test thread may race.

// A test reads top to bottom as one scenario (set up, act, check each
// consequence); the length limits are for the code it tests.
#![allow(clippy::too_many_lines, clippy::cognitive_complexity)]

mod common;

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use arbor::ui::picker::{Dialog, Row};
use arbor::ui::runtime::perform;
use arbor::ui::{App, AppEvent, Effect};
use arbor_session::info::scan_info;
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

/// Feeds an event and performs every effect it asks for (the trash
/// included), feeding the results back, until nothing is left to do.
fn run(app: &mut App, ev: AppEvent) -> Vec<Effect> {
    let mut all = Vec::new();
    let mut queue = vec![ev];
    while let Some(ev) = queue.pop() {
        let now = chrono::Utc::now().timestamp_millis();
        for fx in app.update_at(now, ev) {
            all.push(fx.clone());
            if !matches!(fx, Effect::Exit(_) | Effect::Rescan(_)) {
                queue.extend(perform(fx));
            }
        }
    }
    all
}

fn press(app: &mut App, code: KeyCode, mods: KeyModifiers) -> Vec<Effect> {
    run(app, AppEvent::Key(KeyEvent::new(code, mods)))
}

fn files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let (files, _) = list_session_files(
        &StoreConfig::single(root, StoreKind::PerProject),
        &Scope::All,
    );
    files
        .into_iter()
        .map(|f| {
            let bytes = std::fs::read(&f.path).unwrap();
            (f.path, bytes)
        })
        .collect()
}

#[test]
fn mark_by_query_trash_the_batch_and_undo_restores_every_file() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    std::env::set_var("XDG_DATA_HOME", &data);
    std::env::set_var("ARBOR_CACHE_DIR", home.path().join("cache"));
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let before = files(&root);

    let mut app = App::new("/home/demo/projects/webapp".into(), 0);
    let rows: Vec<Row> = before
        .iter()
        .map(|(p, _)| Row::new(scan_info(p).unwrap()))
        .collect();
    run(&mut app, AppEvent::Rows(rows));
    run(&mut app, AppEvent::LoadFinished { problems: vec![] });
    press(&mut app, KeyCode::Tab, KeyModifiers::NONE);
    for c in "auth".chars() {
        press(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    press(&mut app, KeyCode::Char('a'), KeyModifiers::ALT);
    let batch: Vec<PathBuf> = app.picker.selection.marked.iter().cloned().collect();
    assert!(batch.len() >= 2, "{batch:?}");
    press(&mut app, KeyCode::Char('u'), KeyModifiers::CONTROL);
    press(&mut app, KeyCode::Char('d'), KeyModifiers::CONTROL);
    assert!(matches!(
        &app.picker.dialog.open,
        Dialog::ConfirmBatch { measured: Some(m), .. } if m.live.is_empty() && m.bytes > 0
    ));
    let fx = press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    assert!(matches!(&fx[..], [Effect::TrashBatch(p)] if p.len() == batch.len()));
    assert_eq!(app.picker.dialog.open, Dialog::None);
    for (p, _) in &before {
        let trashed = data.join("Trash/files").join(p.file_name().unwrap());
        assert_eq!(!p.exists(), batch.contains(p), "{p:?}");
        assert_eq!(trashed.exists(), batch.contains(p), "{p:?} in the trash");
    }
    // The note for `arbor restore`, beside the trash.
    let note = std::fs::read_to_string(data.join("arbor/last-trash.json")).unwrap();
    for p in &batch {
        assert!(note.contains(&*p.to_string_lossy()), "{note}");
    }

    let fx = press(&mut app, KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert!(matches!(&fx[0], Effect::RestoreBatch(p) if p.len() == batch.len()));
    for (p, bytes) in &before {
        assert_eq!(&std::fs::read(p).unwrap(), bytes, "{p:?} is back");
    }
    assert_eq!(
        std::fs::read_dir(data.join("Trash/files")).unwrap().count(),
        0,
        "the trash is empty again"
    );
    let status = app.picker.flash.status.as_ref().map(|s| s.text.clone());
    assert_eq!(
        status.as_deref(),
        Some(&*format!("{} sessions restored from trash", batch.len()))
    );

    // A file of the batch removed meanwhile: the others move; that one is
    // asked about (never deleted without `y`).
    let rows: Vec<Row> = before
        .iter()
        .map(|(p, _)| Row::new(scan_info(p).unwrap()))
        .collect();
    run(&mut app, AppEvent::Rows(rows));
    press(&mut app, KeyCode::Char('a'), KeyModifiers::ALT);
    let all: Vec<PathBuf> = app.picker.selection.marked.iter().cloned().collect();
    let gone = all[0].clone();
    // Asked, then gone before the answer.
    press(&mut app, KeyCode::Char('d'), KeyModifiers::CONTROL);
    let kept = home.path().join("kept.jsonl");
    std::fs::rename(&gone, &kept).unwrap();
    press(&mut app, KeyCode::Enter, KeyModifiers::NONE);
    match &app.picker.dialog.open {
        Dialog::ConfirmPermanent { paths, moved, .. } => {
            assert_eq!(paths, &vec![gone.clone()]);
            assert_eq!(*moved, all.len() - 1);
        }
        other => panic!("no question about the failed one: {other:?}"),
    }
    for p in &all[1..] {
        assert!(!p.exists(), "{p:?} moved");
    }
    press(&mut app, KeyCode::Esc, KeyModifiers::NONE);
    let fx = press(&mut app, KeyCode::Char('z'), KeyModifiers::CONTROL);
    assert!(matches!(&fx[0], Effect::RestoreBatch(p) if p.len() == all.len() - 1));
    for p in &all[1..] {
        assert!(p.exists(), "{p:?} restored");
    }
}
