//! `arbor export`: Markdown and HTML snapshots, inert HTML for hostile
//! sessions, JSON Lines of the branch, `--out` / `--force`, and the
//! two-pass reader against the full one.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::{arbor, demo_store, find_session, run, run_ok};
use arbor_session::export::{export_file, export_file_full, ExportFormat, ExportOptions};

/// The demo's pyledger session (tool calls, thinking, a verbatim
/// compaction, two models) with a label appended, as `arbor label` would
/// write it but with a fixed time.
fn labelled_demo() -> (tempfile::TempDir, PathBuf) {
    let store = demo_store();
    let path = find_session(&store.path().join("sessions"), "01a212e6");
    let text = std::fs::read_to_string(&path).unwrap();
    let last = text.lines().last().unwrap();
    let last_id = serde_json::from_str::<serde_json::Value>(last).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let label = serde_json::json!({
        "type": "label", "id": "1abe1000", "parentId": last_id,
        "timestamp": "2026-11-25T14:00:00.000Z",
        "targetId": "84df774a", "label": "shim decision",
    });
    std::fs::write(&path, format!("{text}{label}\n")).unwrap();
    (store, path)
}

#[test]
fn markdown_snapshot() {
    let (_store, path) = labelled_demo();
    let md = run_ok(arbor().args(["export", "--thinking"]).arg(&path));
    insta::assert_snapshot!("export_demo_md", md);
    // The export's own time appears nowhere: a second run is identical.
    assert_eq!(
        md,
        run_ok(arbor().args(["export", "--thinking"]).arg(&path))
    );
}

#[test]
fn html_snapshot() {
    let (_store, path) = labelled_demo();
    let html = run_ok(
        arbor()
            .args(["export", "--format", "html", "--thinking"])
            .arg(&path),
    );
    insta::assert_snapshot!("export_demo_html", html);
    assert_inert(&html);
}

#[test]
fn thinking_only_with_the_flag() {
    let (_store, path) = labelled_demo();
    let thought = "Write models first since everything depends on it";
    for format in ["md", "html", "json"] {
        let with = run_ok(
            arbor()
                .args(["export", "--thinking", "--format", format])
                .arg(&path),
        );
        let without = run_ok(arbor().args(["export", "--format", format]).arg(&path));
        assert!(with.contains(thought), "{format}");
        assert!(!without.contains(thought), "{format}");
    }
}

/// The branch's entries, root → leaf, each exactly as its line in the file.
#[test]
fn json_is_the_branch_entries() {
    let store = demo_store();
    let path = find_session(&store.path().join("sessions"), "01a1fd62");
    let lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let ids: Vec<(String, Option<String>)> = lines[1..]
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                v["parentId"].as_str().map(str::to_string),
            )
        })
        .collect();
    // Root → leaf by hand: follow parents up from the last line.
    let mut want = Vec::new();
    let mut cur = Some(ids.len() - 1);
    while let Some(i) = cur {
        want.push(lines[i + 1].clone());
        cur = ids[i]
            .1
            .as_ref()
            .and_then(|p| ids.iter().position(|(id, _)| id == p));
    }
    want.reverse();
    let out = run_ok(
        arbor()
            .args(["export", "--format", "json", "--thinking"])
            .arg(&path),
    );
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got, want);
    // The abandoned branch is not in it; its summary entry is.
    assert!(want.len() < lines.len() - 1);
    assert!(out.contains("\"type\":\"branch_summary\""));
}

#[test]
fn leaf_selects_another_branch() {
    let store = demo_store();
    let path = find_session(&store.path().join("sessions"), "01a1fd62");
    // ece135bc is on the branch abandoned by the branch summary.
    let md = run_ok(arbor().args(["export", "--leaf", "ece135bc"]).arg(&path));
    assert!(md.contains("root → ece135bc (not the session's current leaf)"));
    assert!(!md.contains("Branch summary"));
    let e = run(arbor().args(["export", "--leaf", "nope"]).arg(&path));
    assert!(!e.status.success());
    assert!(String::from_utf8_lossy(&e.stderr).contains("no entry nope"));
    // A unique id prefix names the entry, as in `arbor diff`; an
    // ambiguous one says which ids it could be.
    let short = run_ok(arbor().args(["export", "--leaf", "ece1"]).arg(&path));
    assert_eq!(short, md);
    let e = run(arbor().args(["export", "--leaf", "c0"]).arg(&path));
    assert!(!e.status.success());
    assert!(
        String::from_utf8_lossy(&e.stderr)
            .contains("is ambiguous: 2 entries start with it (c074a644, c09a4c26)"),
        "{e:?}"
    );
}

#[test]
fn out_writes_a_new_file_and_keeps_an_existing_one() {
    let (store, path) = labelled_demo();
    let dest = store.path().join("branch.html");
    let printed = run_ok(arbor().args(["export", "--format", "html"]).arg(&path));
    // The format follows the extension; nothing is printed.
    let quiet = run_ok(arbor().arg("export").arg(&path).arg("--out").arg(&dest));
    assert_eq!(quiet, "");
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), printed);

    std::fs::write(&dest, "mine").unwrap();
    let e = run(arbor().arg("export").arg(&path).arg("--out").arg(&dest));
    assert!(!e.status.success());
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.contains("exists") && err.contains("--force"), "{err}");
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "mine");

    run_ok(
        arbor()
            .arg("export")
            .arg(&path)
            .arg("--out")
            .arg(&dest)
            .arg("--force"),
    );
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), printed);
}

// ------------------------------------------------------------ hostile text

const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "</details></pre></section><script>alert(2)</script>",
    "<img src=x onerror=alert(3)>",
    "--><!-- <style>body{display:none}</style>",
    "\" onmouseover=\"alert(4)\" '",
    "</title></head><body onload=alert(5)>",
    "&lt;script&gt; and &amp;",
    "\u{1b}]0;title\u{7}\u{1b}[31mred\u{9b}2J",
];

fn hostile_session(dir: &Path) -> PathBuf {
    use serde_json::json;
    let h = HOSTILE.join(" ");
    let lines = vec![
        json!({"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001",
               "timestamp":"2026-01-01T00:00:00.000Z","cwd":format!("/tmp/{h}")}),
        json!({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z",
               "message":{"role":"user","content":[{"type":"text","text":h},
                   {"type":"image","mimeType":"image/svg+xml\"><script>alert(6)</script>","data":"PHN2Zz4="},
                   {"type":"image","mimeType":"image/png","data":"\"><script>alert(7)</script>"}]}}),
        json!({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z",
               "message":{"role":"assistant","model":h,"content":[
                   {"type":"thinking","thinking":h},
                   {"type":"text","text":h},
                   {"type":"toolCall","id":"c1","name":h,"arguments":{"command":h}}]}}),
        json!({"type":"message","id":"t1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z",
               "message":{"role":"toolResult","toolCallId":"c1","toolName":h,"isError":true,
                   "content":[{"type":"text","text":h}]}}),
        json!({"type":"compaction","id":"k1","parentId":"t1","timestamp":"2026-01-01T00:00:04.000Z",
               "summary":h,"firstKeptEntryId":h,"tokensBefore":1000,"details":{"strategy":h}}),
        json!({"type":"custom_message","id":"m1","parentId":"k1","timestamp":"2026-01-01T00:00:05.000Z",
               "customType":h,"content":h,"display":true}),
        json!({"type":"branch_summary","id":"b1","parentId":"m1","timestamp":"2026-01-01T00:00:06.000Z",
               "fromId":"u1","summary":h}),
        json!({"type":"model_change","id":"mc","parentId":"b1","timestamp":"2026-01-01T00:00:07.000Z",
               "provider":h,"modelId":h}),
        json!({"type":"message","id":"x1","parentId":"mc","timestamp":"2026-01-01T00:00:08.000Z",
               "message":{"role":"bashExecution","command":h,"output":h,"exitCode":1}}),
        json!({"type":"session_info","id":"n1","parentId":"x1","timestamp":"2026-01-01T00:00:09.000Z","name":h}),
        json!({"type":"label","id":"l1","parentId":"n1","timestamp":"2026-01-01T00:00:10.000Z",
               "targetId":"a1","label":h}),
    ];
    let dir = dir.join("--tmp--");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// Every tag arbor writes, and the attributes it gives them.
const TAGS: &[(&str, &[&str])] = &[
    ("html", &["lang"]),
    ("head", &[]),
    ("meta", &["charset", "name", "content", "http-equiv"]),
    ("title", &[]),
    ("style", &[]),
    ("body", &[]),
    ("main", &[]),
    ("h1", &[]),
    ("dl", &["class"]),
    ("dt", &[]),
    ("dd", &[]),
    ("section", &["class"]),
    ("div", &["class"]),
    ("span", &["class"]),
    ("details", &["class"]),
    ("summary", &[]),
    ("pre", &[]),
    ("p", &["class"]),
    ("img", &["alt", "src"]),
];
const VOID: &[&str] = &["meta", "img"];

/// A strict reading of the page: outside `<style>`, every `<` opens a tag
/// of [`TAGS`] with only its attributes, each value double-quoted without
/// `<`, `>` or `"` inside; elements nest properly; no `&` starts anything
/// but the five entities arbor writes; the CSP forbids scripts. So no
/// session text became markup: it is all text.
fn assert_inert(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>\n"));
    assert!(html.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    ));
    let mut rest = &html["<!DOCTYPE html>\n".len()..];
    let mut stack: Vec<String> = Vec::new();
    let mut tags = 0;
    loop {
        // Text up to the next tag: only the entities arbor writes.
        let lt = rest.find('<').unwrap_or(rest.len());
        let text = &rest[..lt];
        let mut t = text;
        while let Some(i) = t.find('&') {
            let ent = &t[i..];
            assert!(
                ["&amp;", "&lt;", "&gt;", "&quot;", "&#39;"]
                    .iter()
                    .any(|e| ent.starts_with(e)),
                "stray & in text: {}",
                &ent[..ent.len().min(20)]
            );
            t = &t[i + 1..];
        }
        assert!(!text.contains('>'), "stray > in text: {text:.80}");
        if lt == rest.len() {
            break;
        }
        rest = &rest[lt + 1..];
        let gt = rest.find('>').expect("unclosed tag");
        let tag = &rest[..gt];
        rest = &rest[gt + 1..];
        tags += 1;
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack
                .pop()
                .unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(open, name, "</{name}> closes <{open}>");
            continue;
        }
        let (name, attrs) = tag.split_once(' ').unwrap_or((tag, ""));
        let allowed = TAGS
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("a tag arbor does not write: <{tag:.80}>"))
            .1;
        let mut a = attrs;
        while !a.is_empty() {
            let eq = a.find("=\"").expect("attribute without a quoted value");
            let key = &a[..eq];
            assert!(allowed.contains(&key), "attribute {key} on <{name}>");
            let v = &a[eq + 2..];
            let end = v.find('"').expect("unterminated attribute");
            let value = &v[..end];
            assert!(!value.contains('<') && !value.contains('>'), "{value}");
            if key == "src" {
                let b64 = value
                    .strip_prefix("data:image/png;base64,")
                    .or_else(|| value.strip_prefix("data:image/jpeg;base64,"))
                    .expect("an image from a data: URI of a safe type");
                assert!(b64
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)));
            }
            a = v[end + 1..].trim_start();
        }
        if name == "style" {
            // Arbor's own CSS: no session text inside.
            let end = rest.find("</style>").unwrap();
            assert!(!rest[..end].contains('<'));
            rest = &rest[end..];
        }
        if !VOID.contains(&name) {
            stack.push(name.to_string());
        }
    }
    assert!(stack.is_empty(), "unclosed: {stack:?}");
    assert!(tags > 20);
    assert!(common::terminal_controls(html).is_empty());
}

#[test]
fn hostile_html_stays_inert() {
    let dir = tempfile::tempdir().unwrap();
    let path = hostile_session(dir.path());
    let html = run_ok(
        arbor()
            .args(["export", "--format", "html", "--thinking"])
            .arg(&path),
    );
    assert_inert(&html);
    // The text is all there, escaped: each hostile piece appears as text.
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&lt;/details&gt;&lt;/pre&gt;&lt;/section&gt;"));
    assert!(html.contains("&lt;img src=x onerror=alert(3)&gt;"));
    assert!(html.contains("--&gt;&lt;!-- "));
    assert!(html.contains("&amp;lt;script&amp;gt;"));
    // Images of an unsafe type or with bad data are only named.
    assert!(html.contains("[image image/svg+xml&quot;&gt;&lt;script&gt;"));
    assert!(!html.contains("alert(7)</"));
}

#[test]
fn hostile_markdown_has_no_raw_html_or_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let path = hostile_session(dir.path());
    let md = run_ok(arbor().args(["export", "--thinking"]).arg(&path));
    assert!(common::terminal_controls(&md).is_empty());
    // Outside fences (tool call, tool output, summary), no tag can start.
    let mut in_fence: Option<String> = None;
    for line in md.lines() {
        let t = line.trim_start_matches("> ");
        match &in_fence {
            Some(f) => {
                if t == f {
                    in_fence = None;
                }
            }
            None => {
                if t.starts_with("```") {
                    in_fence = Some(t.chars().take_while(|&c| c == '`').collect());
                    continue;
                }
                let b = t.as_bytes();
                for i in 0..b.len() {
                    if b[i] == b'<' && i > 0 && b[i - 1] == b'\\' {
                        continue;
                    }
                    assert!(
                        !(b[i] == b'<'
                            && b.get(i + 1)
                                .is_some_and(|c| c.is_ascii_alphabetic() || b"/!?".contains(c))),
                        "raw tag in: {line}"
                    );
                }
            }
        }
    }
    assert!(in_fence.is_none());
}

// ------------------------------------------------------- two-pass reader

/// The two-pass read (tree from a light probe, the branch parsed line by
/// line) renders exactly what the full reader gives, on every file of the
/// conformance corpus (duplicate ids, cycles, orphans, lossy UTF-8, BOMs,
/// surrogates, deep nesting, v1/v2 files, labels on missing targets) and
/// for every leaf of a session with branches.
#[test]
fn two_pass_read_matches_the_full_reader() {
    let dir = common::conformance_corpus();
    let mut files = Vec::new();
    collect(&dir.path().join("corpus"), &mut files);
    files.sort();
    assert!(files.len() > 30, "{}", files.len());
    let opts = ExportOptions { thinking: true };
    let mut compared = 0;
    for f in &files {
        for format in [
            ExportFormat::Markdown,
            ExportFormat::Html,
            ExportFormat::Json,
        ] {
            let a = export_file(f, None, format, opts);
            let b = export_file_full(f, None, format, opts);
            match (a, b) {
                (Ok(a), Ok(b)) if format == ExportFormat::Json => {
                    // Verbatim lines against re-serialized ones: the same
                    // JSON (as the agents read it: `1e400` is a valid number).
                    let parse = |s: String| -> Vec<serde_json::Value> {
                        s.lines()
                            .map(|l| {
                                arbor_session::reader::parse_json_lenient(l)
                                    .unwrap_or_else(|| panic!("{}: {l:.300}", f.display()))
                            })
                            .collect()
                    };
                    assert_eq!(
                        parse(a.to_string()),
                        parse(b.to_string()),
                        "{}",
                        f.display()
                    );
                }
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "{}", f.display());
                    compared += 1;
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{}: {:?} vs {:?}", f.display(), a.is_ok(), b.is_ok()),
            }
        }
    }
    assert!(compared > 60);
    // Every leaf of a branched session.
    let store = demo_store();
    let path = find_session(&store.path().join("sessions"), "01a1fd62");
    let text = std::fs::read_to_string(&path).unwrap();
    for l in text.lines().skip(1) {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        let id = v["id"].as_str().unwrap();
        let a = export_file(&path, Some(id), ExportFormat::Markdown, opts).unwrap();
        let b = export_file_full(&path, Some(id), ExportFormat::Markdown, opts).unwrap();
        assert_eq!(a.to_string(), b.to_string(), "{id}");
    }
}

/// Session files under `dir`, not following symbolic links (the corpus
/// has a folder linked to itself).
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            collect(&p, out);
        } else if ft.is_file() && p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
}
