//! The key tables in `docs/` are generated from the screens' key tables
//! (the same ones that drive dispatch and the help overlay): each block
//! between `<!-- keys:NAME -->` and `<!-- /keys:NAME -->` must equal the
//! table rendered by `keymap::markdown`. On a mismatch the test prints the
//! expected block; `ARBOR_UPDATE_DOCS=1 cargo test --test integration
//! keymap_docs` rewrites the blocks instead.

use std::path::Path;

use arbor::ui::keymap::{self, HelpRow, CONFIRM, PROMPT};
use arbor::ui::{app::RESUME_HERE_KEYS, picker, tree, widgets::HELP_KEYS};

/// Each generated block: the doc it lives in, its name, its table.
fn blocks() -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "docs/picker.md",
            "picker",
            keymap::markdown(&picker::help_rows()),
        ),
        ("docs/picker.md", "help", HELP_KEYS.markdown()),
        ("docs/picker.md", "confirm", CONFIRM.markdown()),
        (
            "docs/picker.md",
            "permanent-delete",
            picker::PERMANENT_KEYS.markdown(),
        ),
        (
            "docs/picker.md",
            "trashing",
            picker::TRASHING_KEYS.markdown(),
        ),
        ("docs/picker.md", "resume-here", RESUME_HERE_KEYS.markdown()),
        ("docs/picker.md", "prompt", PROMPT.markdown()),
        ("docs/picker.md", "labels", picker::LABEL_KEYS.markdown()),
        ("docs/tree.md", "tree", keymap::markdown(&tree::help_rows())),
        (
            "docs/tree.md",
            "tree-continue",
            tree::CONTINUE_KEYS.markdown(),
        ),
        ("docs/tree.md", "tree-offer", tree::OFFER_KEYS.markdown()),
        ("docs/tree.md", "tree-export", tree::EXPORT_KEYS.markdown()),
        (
            "docs/tree.md",
            "tree-context",
            tree::CONTEXT_KEYS.markdown(),
        ),
        (
            "docs/tree.md",
            "tree-compare",
            tree::COMPARE_KEYS.markdown(),
        ),
    ]
}

/// The text between a block's markers, and where it lies in `doc`.
fn find_block(doc: &str, name: &str) -> Option<(usize, usize)> {
    let open = format!("<!-- keys:{name} -->\n");
    let close = format!("<!-- /keys:{name} -->");
    let start = doc.find(&open)? + open.len();
    let end = start + doc[start..].find(&close)?;
    Some((start, end))
}

#[test]
fn the_docs_key_tables_match_the_keymaps() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let update = std::env::var_os("ARBOR_UPDATE_DOCS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (file, name, table) in blocks() {
        let path = root.join(file);
        let mut doc = std::fs::read_to_string(&path).unwrap();
        let Some((start, end)) = find_block(&doc, name) else {
            stale.push(format!(
                "{file}: no block `<!-- keys:{name} -->` … `<!-- /keys:{name} -->`; it should hold:\n{table}"
            ));
            continue;
        };
        if doc[start..end] == table {
            continue;
        }
        if update {
            doc.replace_range(start..end, &table);
            std::fs::write(&path, doc).unwrap();
        } else {
            stale.push(format!(
                "{file}: the `keys:{name}` block differs from the key table; it should be:\n{table}"
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "{}\n(ARBOR_UPDATE_DOCS=1 cargo test --test integration keymap_docs rewrites the blocks)",
        stale.join("\n")
    );
}

#[test]
fn a_heading_row_and_a_pipe_render_as_markdown() {
    let rows = [
        HelpRow {
            keys: "ctrl+a/e".into(),
            text: "start | end".into(),
        },
        HelpRow::heading("Editing"),
    ];
    assert_eq!(
        keymap::markdown(&rows),
        "| key | action |\n| --- | --- |\n| `ctrl+a/e` | start \\| end |\n| **Editing** | |\n"
    );
}
