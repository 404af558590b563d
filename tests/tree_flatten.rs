//! The tree screen's rows (one pass over the walk order with each filter's
//! bits, folds as positions: `TreeState::rebuild`) are exactly the rows of
//! the plain flattening (`view::flatten` with `passes_filter` per entry and
//! the folded entries), on every file of the conformance corpus, under
//! every filter, with and without folds.

use std::collections::HashSet;

use crate::common::conformance_corpus;
use arbor::ui::tree::{Loaded, TreeState};
use arbor_session::view::{flatten, passes_filter, Filter};
use arbor_session::Agent;

/// 2026-11-29T12:00:00Z
const NOW: i64 = 1_795_953_600_000;

fn sessions(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sessions(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// The rows `flatten` gives for the screen's filter and folds.
fn expected(t: &TreeState) -> Vec<arbor_session::view::TreeRow> {
    let (s, tree) = (&t.loaded.session, &t.loaded.tree);
    let visible = |i: usize| {
        let e = &s.entries[i];
        passes_filter(
            e,
            tree.leaf == Some(i),
            tree.labels.contains_key(e.id.as_str()),
            t.filter,
        )
    };
    let folded: HashSet<usize> = t.folded.iter().filter_map(|id| tree.index_of(id)).collect();
    flatten(&s.entries, tree, &visible, &folded)
}

#[test]
fn screen_rows_are_the_plain_flattening_under_every_filter_and_folds() {
    let corpus = conformance_corpus();
    let mut files = Vec::new();
    sessions(&corpus.path().join("corpus"), &mut files);
    files.sort();
    assert!(files.len() > 10, "corpus too small: {}", files.len());
    let (mut checked, mut folds) = (0, 0);
    for path in &files {
        let Ok(loaded) = Loaded::read(path, Agent::Atomic) else {
            continue;
        };
        let mut t = TreeState::new(path.clone(), loaded, NOW);
        for f in Filter::CYCLE {
            t.set_filter(f);
            assert_eq!(t.rows, expected(&t), "{} {f:?}", path.display());
            // Fold every third foldable row (nested folds included), one
            // at a time, then unfold them in the same order.
            let ids: Vec<String> = t
                .rows
                .iter()
                .filter(|r| r.foldable())
                .step_by(3)
                .map(|r| t.entry_id(r.entry()).to_string())
                .collect();
            for id in ids.iter().chain(&ids) {
                if !t.folded.remove(id) {
                    t.folded.insert(id.clone());
                }
                t.rebuild();
                assert_eq!(
                    t.rows,
                    expected(&t),
                    "{} {f:?} folds {:?}",
                    path.display(),
                    t.folded
                );
                let sel = t.selected_entry();
                assert!(sel.is_some() || t.rows.is_empty());
                folds += 1;
            }
            checked += 1;
        }
    }
    assert!(checked > 50 && folds > 20, "{checked} views, {folds} folds");
}
