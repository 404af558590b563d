//! `arbor show` text output: insta snapshots of a few demo and conformance
//! sessions (branches, several roots, labels, compactions), and a check of
//! the docs/spec.md §6 flattening rules against a tree model built here from the raw
//! JSON, over every v2/v3 session of the demo store and the conformance
//! corpus.
//!
//! Snapshots were reviewed by eye when accepted (`INSTA_UPDATE=always cargo
//! test --test integration snapshots::`, then read `tests/snapshots/*.snap`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::common::{arbor, conformance_corpus, demo_store, run_ok};

fn show(path: &Path) -> String {
    run_ok(arbor().arg("show").arg(path))
}

fn redact(text: &str, tmp: &Path) -> String {
    text.replace(&tmp.display().to_string(), "[TMP]")
}

/// Conformance files by case name, from the generator's manifest.
fn by_case(root: &Path) -> HashMap<String, PathBuf> {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("MANIFEST.json")).unwrap())
            .unwrap();
    manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["case"].as_str().unwrap().to_string(),
                root.join(f["path"].as_str().unwrap()),
            )
        })
        .collect()
}

fn demo_file(root: &Path, id_prefix: &str) -> PathBuf {
    for project in std::fs::read_dir(root).unwrap() {
        for f in std::fs::read_dir(project.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .contains(&format!("_{id_prefix}"))
            {
                return p;
            }
        }
    }
    panic!("no demo session {id_prefix}");
}

#[test]
fn demo_sessions() {
    let dir = demo_store();
    let root = dir.path().join("sessions");
    for (name, id) in [
        // A fork with a branch summary, labels set/cleared/re-set, a name.
        ("demo_webapp_branch_labels", "01a1fd62"),
        // A long linear session with a compaction and model changes.
        ("demo_pyledger_compaction", "01a212e6"),
        // Named, an error reply, a session summary.
        ("demo_tidy_csv_named", "01a20947"),
        // bash execution and a custom message.
        ("demo_webapp_bash_custom", "01a1f97b"),
    ] {
        let text = show(&demo_file(&root, id));
        insta::assert_snapshot!(name, redact(&text, dir.path()));
    }
}

#[test]
fn conformance_sessions() {
    let dir = conformance_corpus();
    let cases = by_case(&dir.path().join("corpus"));
    for case in [
        "c12_tree_branches",
        "c13_branch_summary",
        "c16_labels",
        "c59_multiple_roots",
        "c07_compaction_kept_off_path",
        "c04_compaction_active_string",
    ] {
        let text = show(&cases[case]);
        insta::assert_snapshot!(case, redact(&text, dir.path()));
    }
}

/// The tree of docs/spec.md §3, built here from the raw lines.
struct Model {
    raw: Vec<Map<String, Value>>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    active: Vec<bool>,
    labels: HashMap<usize, String>,
}

impl Model {
    /// `None` for files this simple model does not cover (v1, ids missing).
    fn load(path: &Path) -> Option<Model> {
        let bytes = std::fs::read(path).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header: Value = serde_json::from_str(lines.next()?).ok()?;
        if header["version"].as_u64().unwrap_or(1) < 2 {
            return None;
        }
        let mut raw = Vec::new();
        for l in lines {
            match serde_json::from_str(l).ok()? {
                Value::Object(m) => raw.push(m),
                _ => return None,
            }
        }
        let ids: Vec<String> = raw
            .iter()
            .map(|e| e.get("id").and_then(Value::as_str).map(str::to_string))
            .collect::<Option<_>>()?;
        let n = raw.len();
        let mut by_id = HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            by_id.insert(id.as_str(), i);
        }
        let mut parent: Vec<Option<usize>> = raw
            .iter()
            .enumerate()
            .map(|(i, e)| {
                e.get("parentId")
                    .and_then(Value::as_str)
                    .and_then(|p| by_id.get(p).copied())
                    .filter(|&p| p != i)
            })
            .collect();
        let cyclic: Vec<bool> = (0..n)
            .map(|i| {
                let mut c = parent[i];
                for _ in 0..n {
                    match c {
                        Some(x) if x == i => return true,
                        Some(x) => c = parent[x],
                        None => return false,
                    }
                }
                false
            })
            .collect();
        for i in 0..n {
            if cyclic[i] {
                parent[i] = None;
            }
        }
        let ts = |i: usize| {
            raw[i]
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                .map(|d| d.timestamp_millis())
                .unwrap_or(i64::MAX)
        };
        let mut children = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(i),
                None => roots.push(i),
            }
        }
        // Children by time; roots keep file order (Atomic).
        for c in children.iter_mut() {
            c.sort_by_key(|&i| (ts(i), i));
        }
        let mut active = vec![false; n];
        let mut cur = n.checked_sub(1);
        while let Some(i) = cur {
            active[i] = true;
            cur = parent[i];
        }
        let mut labels = HashMap::new();
        for e in &raw {
            if e["type"] != "label" {
                continue;
            }
            let Some(&t) = e
                .get("targetId")
                .and_then(Value::as_str)
                .and_then(|t| by_id.get(t))
            else {
                continue;
            };
            match e
                .get("label")
                .and_then(Value::as_str)
                .filter(|l| !l.is_empty())
            {
                Some(l) => labels.insert(t, l.to_string()),
                None => labels.remove(&t),
            };
        }
        Some(Model {
            raw,
            children,
            roots,
            active,
            labels,
        })
    }

    fn active_first(&self, mut v: Vec<usize>) -> Vec<usize> {
        if let Some(p) = v.iter().position(|&x| self.active[x]) {
            let a = v.remove(p);
            v.insert(0, a);
        }
        v
    }

    /// Shown under `arbor show --filter all`: everything but assistant
    /// messages without text (unless the leaf, or ended unusually).
    fn shown(&self, i: usize) -> bool {
        let e = &self.raw[i];
        if e["type"] != "message" || e["message"]["role"] != "assistant" {
            return true;
        }
        if i + 1 == self.raw.len() {
            return true;
        }
        let m = &e["message"];
        let text = match &m["content"] {
            Value::String(s) => !s.trim().is_empty(),
            Value::Array(b) => b.iter().any(|b| {
                b["type"] == "text" && b["text"].as_str().is_some_and(|t| !t.trim().is_empty())
            }),
            _ => false,
        };
        let unusual = m["stopReason"]
            .as_str()
            .is_some_and(|s| !s.is_empty() && s != "stop" && s != "toolUse");
        text || unusual
    }

    /// The visible children of `of` (`None` = the top): hidden entries are
    /// replaced by their own visible descendants, in order.
    fn visible_kids(&self, of: Option<usize>) -> Vec<usize> {
        let start = match of {
            Some(i) => self.active_first(self.children[i].clone()),
            None => {
                // Roots keep file order, the active one first.
                self.active_first(self.roots.to_vec())
            }
        };
        let mut out = Vec::new();
        for c in start {
            if self.shown(c) {
                out.push(c);
            } else {
                out.extend(self.visible_kids(Some(c)));
            }
        }
        out
    }

    /// Expected row starts, in order, following Atomic's
    /// `tree-selector-model.ts` / `tree-selector-list.ts` as read: prefix of
    /// `displayIndent` levels of 3 columns, gutters at the levels where an
    /// ancestor's connector was (`│` unless it was the last sibling),
    /// `├`/`└` + `⊟`/`─` + space for a row under a fork, `• `, `[label] `.
    fn expected_rows(&self) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let roots = self.visible_kids(None);
        let multi = roots.len() > 1;
        // (node, indent, just_branched, connector, last, gutters, parent_kids)
        struct It {
            node: usize,
            indent: usize,
            just_branched: bool,
            connector: bool,
            last: bool,
            gutters: Vec<(usize, bool)>,
            parent_kids: usize,
        }
        let mut stack: Vec<It> = Vec::new();
        for (k, &r) in roots.iter().enumerate().rev() {
            stack.push(It {
                node: r,
                indent: usize::from(multi),
                just_branched: multi,
                connector: false, // a virtual root draws no connector
                last: k + 1 == roots.len(),
                gutters: vec![],
                parent_kids: 0,
            });
        }
        while let Some(it) = stack.pop() {
            let kids = self.visible_kids(Some(it.node));
            let shown_indent = if multi {
                it.indent.max(1) - 1
            } else {
                it.indent
            };
            let foldable = !kids.is_empty() && (it.parent_kids == 0 || it.parent_kids > 1);
            let mut s = String::new();
            for level in 0..shown_indent {
                if let Some(g) = it.gutters.iter().find(|g| g.0 == level) {
                    s += if g.1 { "│  " } else { "   " };
                } else if it.connector && level == shown_indent - 1 {
                    s += if it.last { "└" } else { "├" };
                    s += if foldable { "⊟ " } else { "─ " };
                } else {
                    s += "   ";
                }
            }
            if self.active[it.node] {
                s += "• ";
            }
            if let Some(l) = self.labels.get(&it.node) {
                let clean: String = l
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                s += &format!("[{clean}] ");
            }
            out.push((it.node, s));
            let branching = kids.len() > 1;
            let child_indent = if branching || (it.just_branched && it.indent > 0) {
                it.indent + 1
            } else {
                it.indent
            };
            let mut gutters = it.gutters.clone();
            if it.connector {
                gutters.push((shown_indent.max(1) - 1, !it.last));
            }
            for (k, &c) in kids.iter().enumerate().rev() {
                stack.push(It {
                    node: c,
                    indent: child_indent,
                    just_branched: branching,
                    connector: branching,
                    last: k + 1 == kids.len(),
                    gutters: gutters.clone(),
                    parent_kids: kids.len(),
                });
            }
        }
        out
    }
}

/// What a row's text starts with for this entry, from its type.
fn text_start(e: &Map<String, Value>) -> &'static str {
    match e["type"].as_str().unwrap_or("") {
        "message" => match e["message"]["role"].as_str() {
            Some("user") => "user: ",
            Some("assistant") => "assistant: ",
            _ => "[",
        },
        _ => "[",
    }
}

fn check_flattening(path: &Path) -> bool {
    let Some(m) = Model::load(path) else {
        return false;
    };
    let out = run_ok(arbor().arg("show").arg("--filter").arg("all").arg(path));
    let rows: Vec<&str> = out.lines().skip(1).collect();
    let expected = m.expected_rows();
    assert_eq!(
        expected.len(),
        (0..m.raw.len()).filter(|&i| m.shown(i)).count(),
        "{}: model covers every shown entry",
        path.display()
    );
    assert_eq!(rows.len(), expected.len(), "{}:\n{out}", path.display());
    for (k, (i, start)) in expected.iter().enumerate() {
        let row = rows[k];
        assert!(
            row.starts_with(start.as_str()),
            "{}: row {k} (entry {i}) should start with {start:?}:\n{row:?}\n{out}",
            path.display()
        );
        let rest = &row[start.len()..];
        assert!(
            rest.starts_with(text_start(&m.raw[*i]).trim_end()),
            "{}: row {k} is not entry {i}: {row:?}\n{out}",
            path.display()
        );
        assert!(!rest.starts_with("• ") && !rest.starts_with("⊟ "));
    }
    true
}

#[test]
fn flattening_follows_spec_6_everywhere() {
    let mut checked = 0;
    let dir = demo_store();
    for project in std::fs::read_dir(dir.path().join("sessions")).unwrap() {
        for f in std::fs::read_dir(project.unwrap().path()).unwrap() {
            checked += usize::from(check_flattening(&f.unwrap().path()));
        }
    }
    assert_eq!(checked, 9, "every demo session is v3");
    let dir = conformance_corpus();
    let root = dir.path().join("corpus");
    let mut forks = 0;
    for (case, path) in by_case(&root) {
        if case.starts_with('a') || !path.is_file() || !path.to_string_lossy().ends_with(".jsonl") {
            continue;
        }
        if check_flattening(&path) {
            checked += 1;
            forks += usize::from(show(&path).contains('⊟'));
        }
    }
    eprintln!("flattening checked on {checked} sessions, {forks} with forks");
    assert!(checked > 60, "only {checked} sessions checked");
    assert!(forks >= 5, "only {forks} sessions with forks");
}
