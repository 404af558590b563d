//! Live reload of the tree view, at the library level (no terminal): the
//! agent appends to the session while it is shown; `TreeState::replace`
//! with the re-read file keeps the selection, the folds and the scroll (by
//! entry id), shows the new entries, and moves the active-path marker to the
//! new leaf.

use crate::common;

use std::io::Write;

use serde_json::json;

use crate::common::conformance_corpus;
use arbor::ui::tree::{Loaded, TreeState};
use arbor_session::Agent;

/// 2026-11-29T12:00:00Z
const NOW: i64 = 1_795_953_600_000;

fn row_of(t: &TreeState, id: &str) -> Option<usize> {
    t.rows.iter().position(|r| t.entry_id(r.entry()) == id)
}

fn row_ids(t: &TreeState) -> Vec<String> {
    t.rows
        .iter()
        .map(|r| t.entry_id(r.entry()).to_string())
        .collect()
}

/// Entries marked `• ` (on the root → leaf path), in row order.
fn marked(t: &TreeState) -> Vec<String> {
    t.rows
        .iter()
        .filter(|r| r.on_active_path())
        .map(|r| t.entry_id(r.entry()).to_string())
        .collect()
}

#[test]
fn reload_keeps_selection_folds_and_scroll_and_follows_the_new_leaf() {
    // 01999fdb: two roots; the active leaf 75372104 is under the second root
    // (8edc964f), and the first root has a four-way fork at 0fe81304.
    let corpus = conformance_corpus();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session.jsonl");
    std::fs::copy(
        common::find_session(&corpus.path().join("corpus"), "01999fdb"),
        &path,
    )
    .unwrap();

    let loaded = Loaded::read(&path, Agent::Atomic).unwrap();
    let mut t = TreeState::new(path.clone(), loaded, NOW);
    assert_eq!(t.anchor.as_deref(), Some("75372104"), "opens at the leaf");
    assert_eq!(marked(&t).last().map(String::as_str), Some("75372104"));

    // Fold a branch off the active path: 5f02fe53 starts the first of the
    // four branches of 0fe81304 (a segment start, so foldable).
    let fork = row_of(&t, "5f02fe53").expect("branch row");
    assert!(t.rows[fork].foldable() && !t.rows[fork].on_active_path());
    t.folded.insert("5f02fe53".into());
    t.rebuild();
    let fork = row_of(&t, "5f02fe53").unwrap();
    assert!(t.rows[fork].folded());
    for hidden in ["78ab566b", "119e89e9", "ef9bf1cd"] {
        assert!(row_of(&t, hidden).is_none(), "{hidden} is under the fold");
    }

    // Select an entry of the first root: its row comes after the active
    // branch, so new entries on the active branch move it down.
    let sel = row_of(&t, "7667bf96").unwrap();
    t.select_row(sel);
    t.scroll = 4;
    assert_eq!(t.anchor.as_deref(), Some("7667bf96"));
    let rows_before = row_ids(&t);
    let marked_before = marked(&t);

    // The agent appends a user message and its answer after the leaf.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    for line in [
        json!({"type":"message","id":"a1b2c3d4","parentId":"75372104",
               "timestamp":"2026-11-29T12:00:01.000Z",
               "message":{"role":"user","content":"live reload: one more thing","timestamp":1795953601000u64}}),
        json!({"type":"message","id":"b2c3d4e5","parentId":"a1b2c3d4",
               "timestamp":"2026-11-29T12:00:02.000Z",
               "message":{"role":"assistant","content":[{"type":"text","text":"Done."}],
                          "provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"stop",
                          "timestamp":1795953602000u64}}),
    ] {
        f.write_all(format!("{line}\n").as_bytes()).unwrap();
    }
    drop(f);

    t.replace(Loaded::read(&path, Agent::Atomic).unwrap());

    // Selection: the same entry, now two rows further down.
    assert_eq!(t.anchor.as_deref(), Some("7667bf96"));
    let now_sel = t.selected.expect("a selection");
    assert_eq!(t.entry_id(t.selected_entry().unwrap()), "7667bf96");
    assert_eq!(
        now_sel,
        sel + 2,
        "the selection followed its entry, not its row"
    );
    // Folds and scroll kept.
    assert!(t.folded.contains("5f02fe53"));
    assert!(t.rows[row_of(&t, "5f02fe53").unwrap()].folded());
    assert!(row_of(&t, "119e89e9").is_none(), "still folded");
    assert_eq!(t.scroll, 4);

    // The new entries are rows right after the old leaf, on its line.
    let old_leaf = row_of(&t, "75372104").unwrap();
    assert_eq!(row_of(&t, "a1b2c3d4"), Some(old_leaf + 1));
    assert_eq!(row_of(&t, "b2c3d4e5"), Some(old_leaf + 2));
    for r in old_leaf..old_leaf + 3 {
        assert_eq!(t.rows[r].level, t.rows[old_leaf].level);
    }
    let mut want_rows = rows_before.clone();
    want_rows.splice(
        old_leaf + 1..old_leaf + 1,
        ["a1b2c3d4".to_string(), "b2c3d4e5".to_string()],
    );
    assert_eq!(row_ids(&t), want_rows, "nothing else moved");

    // The active-path marker now runs on to the new leaf.
    let leaf = t.loaded.tree.leaf.unwrap();
    assert_eq!(t.entry_id(leaf), "b2c3d4e5");
    assert!(t.is_leaf(leaf));
    let mut want_marked = marked_before;
    want_marked.extend(["a1b2c3d4".to_string(), "b2c3d4e5".to_string()]);
    assert_eq!(marked(&t), want_marked);
    let path_ids: Vec<String> = t
        .loaded
        .tree
        .path_to(leaf)
        .into_iter()
        .map(|i| t.entry_id(i).to_string())
        .collect();
    assert!(
        marked(&t).iter().all(|id| path_ids.contains(id)),
        "only entries on the root → leaf path are marked"
    );
}
