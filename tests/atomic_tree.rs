//! `arbor show` against Atomic's own `/tree` screen: the reference renderings
//! of Atomic's `TreeSelectorComponent` for every file of the conformance
//! corpus (`../shared/conformance/expected-atomic-tree.jsonl`, width 140, ANSI
//! stripped), file by file, with the default and the all filter. Every row
//! that differs must be one of the deliberate differences named below.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use crate::common::{arbor, conformance_corpus, run_ok, shared_dir};

/// Why a row may differ from Atomic's, and the files where it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Deliberate {
    /// Control characters and bidi overrides in session text are drawn as
    /// spaces (Atomic writes them to the terminal as they are; the
    /// reference shows them raw). Whole escape sequences are removed, as
    /// the reference's ANSI stripping removed them, so they match.
    Sanitized,
    /// Entry types Atomic's tree has no text for (unknown, retired, or no
    /// `type` at all) are drawn as `[<type>]` (Atomic draws a blank row).
    NamedUnknownType,
    /// Entries on a `parentId` cycle become roots and are shown (Atomic
    /// never reaches them from a root, so they are missing from its tree).
    CycleAsRoots,
    /// A line that is JSON but not an object (`5`, `"x"`, `[]`) is not an
    /// entry (Atomic makes each a blank root row).
    ScalarLinesSkipped,
}

/// The (file, filter) pairs that differ, with the reason. Anything not
/// listed must match row for row.
const DIFFERENCES: &[(&str, &str, Deliberate)] = &[
    ("a15_cycle_off_path", "all", Deliberate::CycleAsRoots),
    (
        "a17_wrong_types_entries",
        "default",
        Deliberate::NamedUnknownType,
    ),
    (
        "a17_wrong_types_entries",
        "all",
        Deliberate::NamedUnknownType,
    ),
    (
        "a22_scalar_lines",
        "default",
        Deliberate::ScalarLinesSkipped,
    ),
    ("a22_scalar_lines", "all", Deliberate::ScalarLinesSkipped),
    ("a35_control_chars", "default", Deliberate::Sanitized),
    ("a35_control_chars", "all", Deliberate::Sanitized),
    (
        "a41_terminal_injection_name",
        "default",
        Deliberate::Sanitized,
    ),
    ("a41_terminal_injection_name", "all", Deliberate::Sanitized),
    // context_window_change entries.
    ("01999db6-6380", "default", Deliberate::NamedUnknownType),
    ("01999db6-6380", "all", Deliberate::NamedUnknownType),
    // A context_compaction entry.
    ("01999ec9-0c00", "default", Deliberate::NamedUnknownType),
    ("01999ec9-0c00", "all", Deliberate::NamedUnknownType),
    // A future_entry_type entry.
    ("0199a682-9600", "default", Deliberate::NamedUnknownType),
    ("0199a682-9600", "all", Deliberate::NamedUnknownType),
    // Bidi overrides and a lone CR in CJK-project messages.
    ("0199a5a6-dc00", "default", Deliberate::Sanitized),
    ("0199a5a6-dc00", "all", Deliberate::Sanitized),
];

/// JSON text with each unpaired UTF-16 surrogate escape replaced by U+FFFD:
/// Atomic's strings can hold half a surrogate pair, Rust's cannot, and a
/// terminal shows one as U+FFFD anyway.
fn fix_lone_surrogates(line: &str) -> String {
    let b = line.as_bytes();
    let unit = |i: usize| -> Option<u16> {
        if b.get(i) == Some(&b'\\') && b.get(i + 1) == Some(&b'u') {
            line.get(i + 2..i + 6)
                .and_then(|h| u16::from_str_radix(h, 16).ok())
        } else {
            None
        }
    };
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            match unit(i) {
                Some(u @ 0xD800..=0xDBFF) if matches!(unit(i + 6), Some(0xDC00..=0xDFFF)) => {
                    let _ = u;
                    out.push_str(&line[i..i + 12]);
                    i += 12;
                }
                Some(0xD800..=0xDFFF) => {
                    out.push_str("\\ufffd");
                    i += 6;
                }
                _ => {
                    // Any other escape: copy it whole (so `\\u` is not misread).
                    let end = (i + 2).min(b.len());
                    out.push_str(&line[i..end]);
                    i = end;
                }
            }
        } else {
            let c = line[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// Atomic's rows without the two-column selection gutter. "No entries
/// found" (the filter shows nothing) is no row at all for `arbor show`.
fn reference_rows(v: &Value) -> Vec<(String, bool)> {
    let rows: Vec<(String, bool)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let r = r.as_str().unwrap();
            // A row that reaches the 140th column was clipped there.
            let clipped = width(r) >= 139;
            let body: String = r.chars().skip(2).collect();
            (body.trim_end().to_string(), clipped)
        })
        .collect();
    if rows.len() == 1 && rows[0].0 == "No entries found" {
        return Vec::new();
    }
    rows
}

fn show_rows(path: &Path, filter: &str) -> Vec<String> {
    let out = run_ok(arbor().arg("show").arg("--filter").arg(filter).arg(path));
    out.lines().skip(1).map(str::to_string).collect()
}

fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}')
}

/// Checks that a differing row is explained by `why`.
fn explained(why: Deliberate, exp: Option<&str>, got: Option<&str>) -> bool {
    match (why, exp, got) {
        (Deliberate::Sanitized, Some(e), Some(g)) => {
            e.chars().any(is_unsafe) && !g.chars().any(is_unsafe)
        }
        (Deliberate::NamedUnknownType, Some(e), Some(g)) => {
            // Atomic's row has markers only; arbor's adds `[type]` after them.
            let head = e.trim_end();
            g.starts_with(head) && g[head.len()..].trim_start().starts_with('[') && g.ends_with(']')
        }
        (Deliberate::CycleAsRoots, _, _) => true,
        (Deliberate::ScalarLinesSkipped, Some(e), _) => e.trim().is_empty() || got.is_some(),
        _ => false,
    }
}

#[test]
fn show_draws_atomics_tree_rows() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let text = std::fs::read_to_string(shared_dir().join("conformance/expected-atomic-tree.jsonl"))
        .unwrap();
    let (mut pairs, mut pairs_same, mut rows_total, mut rows_same) = (0, 0, 0, 0);
    let mut found: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut unexplained = Vec::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(&fix_lone_surrogates(line)).unwrap();
        // Atomic threw, looped, or showed "No entries in session" instead.
        if r["ok"] != true || r["empty"] == true {
            continue;
        }
        let rel = r["path"].as_str().unwrap();
        let path = root.join(rel);
        for (key, filter) in [("rows", "default"), ("rowsAll", "all")] {
            let exp = reference_rows(&r[key]);
            let got = show_rows(&path, filter);
            pairs += 1;
            rows_total += exp.len();
            let listed = DIFFERENCES
                .iter()
                .find(|(f, fl, _)| rel.contains(f) && *fl == filter)
                .map(|d| d.2);
            let mut differing = 0;
            for k in 0..exp.len().max(got.len()) {
                let e = exp.get(k);
                let g = got.get(k).map(String::as_str);
                let same = match (e, g) {
                    (Some((e, clipped)), Some(g)) => {
                        e == g || (*clipped && g.starts_with(e.as_str()))
                    }
                    _ => false,
                };
                if same {
                    rows_same += 1;
                    continue;
                }
                differing += 1;
                let ok = listed.is_some_and(|why| explained(why, e.map(|e| e.0.as_str()), g));
                if !ok {
                    unexplained.push(format!(
                        "{rel} [{filter}] row {k}:\n  atomic {:?}\n  arbor  {:?}",
                        e.map(|e| &e.0),
                        g
                    ));
                }
            }
            if differing == 0 {
                pairs_same += 1;
            } else {
                found.insert((rel.to_string(), filter.to_string()), differing);
            }
        }
    }
    eprintln!(
        "arbor show vs Atomic's /tree: {pairs_same}/{pairs} (file, filter) pairs identical, \
         {rows_same}/{rows_total} reference rows identical"
    );
    for ((f, fl), n) in &found {
        eprintln!("  deliberate: {f} [{fl}] {n} rows");
    }
    assert!(
        unexplained.is_empty(),
        "rows that differ from Atomic's:\n{}",
        unexplained.join("\n")
    );
    // Every listed difference still happens (else the list is stale).
    for (f, fl, why) in DIFFERENCES {
        assert!(
            found.keys().any(|(p, x)| p.contains(f) && x == fl),
            "{f} [{fl}] no longer differs ({why:?}): remove it from DIFFERENCES"
        );
    }
    assert!(pairs >= 170, "only {pairs} pairs compared");
}

/// Opens the tree screen on `path` (detail pane off, so the list has the
/// whole width, as Atomic's list does) and returns its list rows, selection
/// gutter included, and its status line.
fn screen_rows(path: &Path, w: u16, h: u16, all: bool) -> (Vec<String>, String) {
    use arbor::ui::runtime::perform;
    use arbor::ui::theme::Theme;
    use arbor::ui::{App, AppEvent, Effect, Mode};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut app = App::new("/".into(), 0);
    app.width = w;
    app.height = h;
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
    let Mode::Tree(t) = &mut app.mode else {
        panic!("{}: the tree did not open", path.display());
    };
    t.detail_on = Some(false);
    if all {
        app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::Char('a'),
            KeyModifiers::CONTROL,
        )));
    }
    let mut term = ratatui::Terminal::new(ratatui::backend::TestBackend::new(w, h)).unwrap();
    term.draw(|f| arbor::ui::render(f, &app, &Theme::plain()))
        .unwrap();
    let text = common::buffer_text(term.backend().buffer());
    let lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    // Header 2 rows, footer 3 (status first).
    let n = lines.len();
    let status = lines[n - 3].clone();
    let rows = lines[2..n - 3]
        .iter()
        .filter(|l| !l.is_empty())
        .cloned()
        .collect();
    (rows, status)
}

/// `(i/N)` of a status line.
fn status_counts(s: &str) -> Option<(usize, usize)> {
    let inner = s.strip_prefix('(')?.split(')').next()?;
    let (i, n) = inner.split_once('/')?;
    Some((i.parse().ok()?, n.parse().ok()?))
}

/// The tree screen draws Atomic's rows too: at Atomic's width (140, detail
/// pane off) its list and `(i/N)` status line equal the reference screen,
/// file by file, but for the deliberate differences. The initial selection
/// (the leaf, or its nearest visible ancestor, or the last row) is Atomic's.
/// After Ctrl+A, arbor's selection comes back to the entry the user had
/// (here the leaf), where Atomic keeps the ancestor the default filter had
/// moved it to (docs/spec.md §6: the selection comes back when the filter does).
#[test]
fn the_tree_screen_draws_atomics_rows_and_selection() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let text = std::fs::read_to_string(shared_dir().join("conformance/expected-atomic-tree.jsonl"))
        .unwrap();
    let (mut pairs, mut pairs_same) = (0, 0);
    let mut returned = Vec::new();
    let mut bad = Vec::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(&fix_lone_surrogates(line)).unwrap();
        if r["ok"] != true || r["empty"] == true {
            continue;
        }
        let rel = r["path"].as_str().unwrap();
        for (key, status_key, filter) in [
            ("rows", "status", "default"),
            ("rowsAll", "statusAll", "all"),
        ] {
            let exp: Vec<String> = r[key]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().trim_end().to_string())
                .collect();
            let h = exp.len() as u16 + 6;
            let (got, status) = screen_rows(&root.join(rel), 140, h, filter == "all");
            pairs += 1;
            let listed = DIFFERENCES
                .iter()
                .any(|(f, fl, _)| rel.contains(f) && *fl == filter);
            let exp_status = r[status_key].as_str().unwrap_or("(0/0)").trim().to_string();
            let same_row =
                |e: &String, g: &String| e == g || (width(e) >= 139 && g.starts_with(e.as_str()));
            let body = |x: &String| x.chars().skip(2).collect::<String>();
            let same_bodies = exp.len() == got.len()
                && exp
                    .iter()
                    .zip(&got)
                    .all(|(e, g)| same_row(&body(e), &body(g)));
            let same_all =
                exp.len() == got.len() && exp.iter().zip(&got).all(|(e, g)| same_row(e, g));
            if same_all && status.starts_with(&exp_status) {
                pairs_same += 1;
                continue;
            }
            let (Some((_, en)), Some((gi, gn))) =
                (status_counts(&exp_status), status_counts(&status))
            else {
                bad.push(format!(
                    "{rel} [{filter}] status: atomic {exp_status:?}, arbor {status:?}"
                ));
                continue;
            };
            let report = || {
                format!(
                    "{rel} [{filter}]\n  atomic {exp_status} {exp:#?}\n  arbor  {status} {got:#?}"
                )
            };
            if filter == "all" && en == gn && (same_bodies || listed) {
                // Only the selection differs: arbor's must be the leaf (the
                // last row on the active path).
                let leaf_row = got.iter().rposition(|g| {
                    body(g)
                        .trim_start_matches(['│', '├', '└', '─', '⊟', '⊞', ' '])
                        .starts_with('•')
                });
                if leaf_row.map(|p| p + 1) == Some(gi) {
                    returned.push(rel.to_string());
                    continue;
                }
            }
            // A listed difference changes rows, not which row is selected.
            if listed && status_counts(&exp_status).map(|c| c.0) == Some(gi) {
                continue;
            }
            bad.push(report());
        }
    }
    eprintln!(
        "tree screen vs Atomic's /tree: {pairs_same}/{pairs} (file, filter) pairs identical; \
         after Ctrl+A the selection came back to the leaf in {} files",
        returned.len()
    );
    for f in &returned {
        eprintln!("  selection returns: {f} [all]");
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The layout features of Atomic's flattening, each on a conformance case
/// that shows it, with the feature's rows checked against Atomic's own
/// rendering (the whole file is compared in `show_draws_atomics_tree_rows`).
#[test]
fn named_layouts_match_atomic() {
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("MANIFEST.json")).unwrap())
            .unwrap();
    let case_path = |case: &str| {
        manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["case"] == case)
            .map(|f| f["path"].as_str().unwrap().to_string())
            .unwrap()
    };
    let text = std::fs::read_to_string(shared_dir().join("conformance/expected-atomic-tree.jsonl"))
        .unwrap();
    let refs: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(&fix_lone_surrogates(l)).unwrap())
        .collect();
    // (case, filter, a row that shows the feature, what it shows)
    let cases = [
        (
            "c12_tree_branches",
            "default",
            "├⊟ • [bash: pytest -q tests]",
            "fold marker in a branch start's connector",
        ),
        (
            "c12_tree_branches",
            "default",
            "│     • assistant: shortcut will sort",
            "the first generation after a branch one level further in",
        ),
        (
            "c12_tree_branches",
            "default",
            "│     └⊟ user: module field archived inte",
            "a nested branch start, last sibling",
        ),
        (
            "c12_tree_branches",
            "default",
            "└─ assistant: Regenerated answer",
            "a leaf branch start: not foldable",
        ),
        (
            "c13_branch_summary",
            "default",
            "   ├─ [branch summary]: Extension-made summary",
            "a one-entry branch: not foldable",
        ),
        (
            "c59_multiple_roots",
            "default",
            "   • assistant: Answer on the second root.",
            "several roots: no connector, first generation indented",
        ),
        (
            "c16_labels",
            "all",
            "• [✅ 修复完成 🚀] user:",
            "a label before the text",
        ),
        (
            "c16_labels",
            "all",
            "• [label: (cleared)]",
            "a cleared label entry",
        ),
        (
            "c61_metadata_leaf",
            "all",
            "• [title: Leaf is a session_info entry]",
            "a session_info leaf, shown under all",
        ),
    ];
    for (case, filter, needle, what) in cases {
        let rel = case_path(case);
        let r = refs.iter().find(|r| r["path"] == rel.as_str()).unwrap();
        let exp = reference_rows(&r[if filter == "all" { "rowsAll" } else { "rows" }]);
        let got = show_rows(&root.join(&rel), filter);
        let k = exp
            .iter()
            .position(|(e, _)| e.starts_with(needle))
            .unwrap_or_else(|| panic!("{case}: Atomic has no row {needle:?}: {exp:#?}"));
        assert!(
            got.get(k).is_some_and(|g| g.starts_with(needle)),
            "{case} ({what}): row {k} is {:?}, Atomic's starts {needle:?}",
            got.get(k)
        );
        let same = exp.len() == got.len()
            && exp
                .iter()
                .zip(&got)
                .all(|((e, clipped), g)| e == g || (*clipped && g.starts_with(e.as_str())));
        assert!(
            same,
            "{case} [{filter}]: rows differ from Atomic's\n{exp:#?}\n{got:#?}"
        );
    }
}

#[test]
fn lone_surrogate_escapes_become_replacement_characters() {
    let fixed = fix_lone_surrogates(r#"["a\ud800b", "\ud83d\ude80", "\\ud800", "\udc00"]"#);
    let v: Value = serde_json::from_str(&fixed).unwrap();
    assert_eq!(v[0], "a\u{fffd}b");
    assert_eq!(v[1], "🚀");
    assert_eq!(v[2], "\\ud800");
    assert_eq!(v[3], "\u{fffd}");
}
