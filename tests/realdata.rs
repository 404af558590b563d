//! The two real pi session files in ../shared/realdata (legacy version 1:
//! no `version`, no ids, index-based compactions), copied into a temp store.
//!
//! Expectations come from the raw lines, parsed here with serde_json and
//! counted independently of arbor, and from the realdata README.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{Map, Value};

use crate::common::{arbor, run_ok, shared_dir};
use arbor_session::{build_context, read_session, ContextFlavor, SessionTree};

struct Real {
    name: &'static str,
    /// Line counts from the realdata README.
    lines: usize,
    messages: usize,
}

const FILES: &[Real] = &[
    Real {
        name: "large-session.jsonl",
        lines: 1019,
        messages: 914,
    },
    Real {
        name: "before-compaction.jsonl",
        lines: 1003,
        messages: 990,
    },
];

fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("store").join("--some-project--");
    std::fs::create_dir_all(&project).unwrap();
    for f in FILES {
        std::fs::copy(
            shared_dir().join("realdata").join(f.name),
            project.join(f.name),
        )
        .unwrap();
    }
    (dir, project)
}

/// Every line of the file as a JSON object (these files are clean).
fn raw_lines(path: &Path) -> Vec<Map<String, Value>> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.ends_with('\n'));
    text.lines()
        .map(|l| match serde_json::from_str(l).unwrap() {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        })
        .collect()
}

fn snapshot(path: &Path) -> (Vec<u8>, SystemTime) {
    (
        std::fs::read(path).unwrap(),
        std::fs::metadata(path).unwrap().modified().unwrap(),
    )
}

#[test]
fn version_1_files_migrate_in_memory_to_a_linear_chain() {
    let (_dir, project) = store();
    for f in FILES {
        let path = project.join(f.name);
        let raw = raw_lines(&path);
        let newlines = std::fs::read(&path)
            .unwrap()
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        assert_eq!(newlines, f.lines, "{}: line count (README)", f.name);
        assert_eq!(raw.len(), f.lines);
        assert!(raw[0].get("version").is_none(), "{}: a v1 header", f.name);
        assert!(
            raw[1..].iter().all(|e| !e.contains_key("id")),
            "{}: v1 entries carry no ids",
            f.name
        );

        let s = read_session(&path).unwrap();
        assert_eq!(s.file_version, 1, "{}", f.name);
        assert!(s.needs_migration());
        assert!(s.diagnostics.is_clean());
        assert_eq!(
            s.entries.len(),
            f.lines - 1,
            "{}: one entry per line",
            f.name
        );
        let messages = raw.iter().filter(|e| e["type"] == "message").count();
        assert_eq!(messages, f.messages, "{}: messages (README)", f.name);
        assert_eq!(
            s.entries
                .iter()
                .filter(|e| e.entry_type() == "message")
                .count(),
            messages
        );

        // Ids: 8 lowercase hex, unique; each entry's parent is the previous one.
        let mut seen = std::collections::HashSet::new();
        for (i, e) in s.entries.iter().enumerate() {
            assert!(
                e.id.len() == 8
                    && e.id
                        .bytes()
                        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{}: id {:?}",
                f.name,
                e.id
            );
            assert!(
                seen.insert(e.id.clone()),
                "{}: duplicate id {}",
                f.name,
                e.id
            );
            let expected_parent = i.checked_sub(1).map(|p| s.entries[p].id.clone());
            assert_eq!(
                e.parent_id, expected_parent,
                "{}: parent of entry {i}",
                f.name
            );
            // The entry is its line, plus id and parentId.
            let mut rest = e.raw.clone();
            rest.remove("id");
            rest.remove("parentId");
            if e.entry_type() != "compaction" {
                assert_eq!(rest, raw[i + 1], "{}: entry {i} content", f.name);
            }
        }
        let tree = SessionTree::build(&s);
        assert_eq!(tree.roots, vec![0], "{}: exactly one root", f.name);
        assert_eq!(tree.leaf, Some(s.entries.len() - 1));
        assert!(tree.on_active_path.iter().all(|&a| a));
        assert_eq!(
            tree.depth.last().map(|&d| d as usize),
            Some(s.entries.len() - 1)
        );

        // Compactions: `firstKeptEntryIndex` (header = line 0) became the id
        // of the entry on that line.
        let mut compactions = 0;
        for (line, r) in raw.iter().enumerate().skip(1) {
            if r["type"] != "compaction" {
                continue;
            }
            compactions += 1;
            let e = &s.entries[line - 1];
            let idx = r["firstKeptEntryIndex"].as_u64().unwrap() as usize;
            assert!(e.raw.get("firstKeptEntryIndex").is_none());
            let kept = e.raw["firstKeptEntryId"].as_str().unwrap();
            let target = tree.index_of(kept).expect("firstKeptEntryId exists");
            assert_eq!(target, idx - 1, "{}: compaction on line {line}", f.name);
            assert_eq!(s.entries[target].raw["timestamp"], raw[idx]["timestamp"]);
            assert!(target < line - 1, "kept entries come before the compaction");
        }
        let expected_compactions = if f.name.starts_with("before-compaction") {
            2
        } else {
            0
        };
        assert_eq!(compactions, expected_compactions, "{}", f.name);
    }
}

#[test]
fn contexts_follow_the_raw_lines() {
    let (_dir, project) = store();
    for f in FILES {
        let path = project.join(f.name);
        let raw = raw_lines(&path);
        // Model and thinking level replayed from the raw lines (docs/spec.md §3).
        let mut model: Option<(Value, Value)> = None;
        let mut thinking = Value::from("off");
        for r in &raw[1..] {
            match r["type"].as_str().unwrap() {
                "model_change" => model = Some((r["provider"].clone(), r["modelId"].clone())),
                "thinking_level_change" => thinking = r["thinkingLevel"].clone(),
                "message" if r["message"]["role"] == "assistant" => {
                    let m = &r["message"];
                    model = Some((m["provider"].clone(), m["model"].clone()));
                }
                _ => {}
            }
        }
        let all_messages = raw.iter().filter(|e| e["type"] == "message").count();
        // pi: the latest compaction is active; Atomic: these legacy
        // compactions have no `details.strategy` and are inert.
        let pi_expected = match raw.iter().rposition(|e| e["type"] == "compaction") {
            None => all_messages,
            Some(c) => {
                let k = raw[c]["firstKeptEntryIndex"].as_u64().unwrap() as usize;
                let kept = raw[k..c].iter().filter(|e| e["type"] == "message").count();
                let after = raw[c + 1..]
                    .iter()
                    .filter(|e| e["type"] == "message")
                    .count();
                1 + kept + after
            }
        };
        for (flavor, expected) in [("atomic", all_messages), ("pi", pi_expected)] {
            let out = run_ok(
                arbor()
                    .arg("context")
                    .arg(&path)
                    .args(["--json", "--flavor", flavor]),
            );
            let v: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(
                v["messages"].as_array().unwrap().len(),
                expected,
                "{} ({flavor})",
                f.name
            );
            assert_eq!(v["thinkingLevel"], thinking, "{} ({flavor})", f.name);
            let (p, m) = model.clone().unwrap();
            assert_eq!(v["model"]["provider"], p, "{} ({flavor})", f.name);
            assert_eq!(v["model"]["modelId"], m, "{} ({flavor})", f.name);
            let s = read_session(&path).unwrap();
            assert_eq!(v["leafId"], s.entries.last().unwrap().id.as_str());
            if flavor == "pi" && expected != all_messages {
                assert_eq!(v["messages"][0]["role"], "compactionSummary");
            }
        }
        // The library agrees with the CLI.
        let s = read_session(&path).unwrap();
        let t = SessionTree::build(&s);
        let ctx = build_context(&s, &t, None, ContextFlavor::Pi);
        assert_eq!(ctx.messages.len(), pi_expected);
    }
}

#[test]
fn show_renders_one_row_per_entry_with_the_leaf_marked() {
    let (_dir, project) = store();
    for f in FILES {
        let path = project.join(f.name);
        let raw = raw_lines(&path);
        let out = arbor()
            .arg("show")
            .arg("--filter")
            .arg("all")
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success());
        let stdout = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = stdout.lines().collect();
        let header_id = raw[0]["id"].as_str().unwrap();
        assert_eq!(lines[0], header_id, "{}: title line", f.name);
        // Notes go to stderr: stdout is the id line and the rows only.
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("(version 1 file, read as version 3)")
        );
        let rows = &lines[1..];
        // One row per entry, but for assistant messages with no text (tool
        // calls only), which Atomic's tree hides under every filter.
        let hidden = raw[1..raw.len() - 1]
            .iter()
            .filter(|e| {
                let Some(m) = e.get("message") else {
                    return false;
                };
                m["role"] == "assistant"
                    && !matches!(&m["content"], Value::Array(b) if b.iter().any(|b| b["type"] == "text"
                        && b["text"].as_str().is_some_and(|t| !t.trim().is_empty())))
                    && !matches!(&m["content"], Value::String(t) if !t.trim().is_empty())
                    && matches!(m["stopReason"].as_str(), None | Some("stop") | Some("toolUse"))
            })
            .count();
        assert_eq!(
            rows.len(),
            f.lines - 1 - hidden,
            "{}: one row per shown entry",
            f.name
        );
        // A linear chain: no connectors, no folds, every row on the active
        // path, the leaf row (last) included.
        for r in rows {
            assert!(r.starts_with("• "), "{}: {r:?}", f.name);
            assert!(!r.contains('⊟') && !r.starts_with('├') && !r.starts_with('└'));
        }
        // Rows follow the file: the first user message opens the tree.
        let first = &raw[1]["message"];
        let text = match &first["content"] {
            Value::String(s) => s.clone(),
            Value::Array(b) => b[0]["text"].as_str().unwrap().to_string(),
            other => panic!("{other}"),
        };
        // Atomic's row: the first 200 UTF-16 units, newlines and tabs as spaces, trimmed.
        let mut units = 0;
        let head: String = text
            .chars()
            .take_while(|c| {
                units += c.len_utf16();
                units <= 200
            })
            .collect();
        assert_eq!(
            rows[0],
            format!("• user: {}", head.replace(['\n', '\t'], " ").trim())
        );
        let last = raw.last().unwrap();
        if last["type"] == "message" && last["message"]["role"] == "assistant" {
            assert!(rows.last().unwrap().starts_with("• assistant: "));
        }
        let json: Value =
            serde_json::from_str(&run_ok(arbor().arg("show").arg(&path).arg("--json"))).unwrap();
        assert_eq!(json["entries"].as_array().unwrap().len(), f.lines - 1);
        assert_eq!(
            json["leafId"],
            json["entries"].as_array().unwrap().last().unwrap()["id"]
        );
    }
}

#[test]
fn reading_never_modifies_the_files() {
    let (dir, project) = store();
    let before: Vec<_> = FILES
        .iter()
        .map(|f| snapshot(&project.join(f.name)))
        .collect();
    // Let an accidental rewrite show up in the mtime even on coarse clocks.
    std::thread::sleep(std::time::Duration::from_millis(20));
    for f in FILES {
        let path = project.join(f.name);
        read_session(&path).unwrap();
        arbor_session::scan_info(&path).unwrap();
        run_ok(arbor().arg("show").arg(&path));
        run_ok(arbor().arg("show").arg(&path).arg("--json"));
        for flavor in ["atomic", "pi"] {
            run_ok(
                arbor()
                    .arg("context")
                    .arg(&path)
                    .args(["--json", "--flavor", flavor]),
            );
        }
        run_ok(arbor().arg("context").arg(&path));
    }
    let list = run_ok(
        arbor()
            .arg("--store")
            .arg(dir.path().join("store"))
            .args(["list", "--all", "--json"]),
    );
    assert_eq!(list.lines().count(), FILES.len());
    for (f, b) in FILES.iter().zip(&before) {
        assert!(snapshot(&project.join(f.name)) == *b, "{} changed", f.name);
    }
    let mut names: Vec<String> = std::fs::read_dir(&project)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["before-compaction.jsonl", "large-session.jsonl"]
    );
}
