//! `arbor label / rename / branch / fork` on temp copies of demo sessions
//! (docs/spec.md §7): each write appends exactly one line in Atomic's shape, leaves
//! every earlier byte alone, and arbor's own reader then sees the intended
//! leaf, labels, name and context. Plus the refusals: a version 1 file
//! without `--migrate`, a file ending in a partial line.
//!
//! Expectations are computed from the raw JSON lines of the source files.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::common::{arbor, copy_dir, demo_store, run, run_ok, shared_dir};

const WEBAPP: &str = "--home-demo-projects-webapp--";
/// The demo session with a fork, labels (set, cleared, re-set) and a name.
const BRANCHY: &str = "2026-11-21T09-14-07-412Z_01a1fd62-68b4-7718-a139-873a95bd447e.jsonl";
/// An internal workflow stage (header with `internal` + `workflow`).
const INTERNAL: &str = "2026-11-21T10-20-44-090Z_01a1fd9f-64ba-72cb-a978-f7c2cdda02d8.jsonl";

struct Demo {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Demo {
    fn new() -> Demo {
        let dir = demo_store();
        let root = dir.path().join("sessions");
        Demo { _dir: dir, root }
    }
    fn file(&self, name: &str) -> PathBuf {
        self.root.join(WEBAPP).join(name)
    }
}

fn lines(path: &Path) -> Vec<Map<String, Value>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| v.as_object().unwrap().clone())
        .collect()
}

fn show_json(path: &Path) -> Value {
    serde_json::from_str(&run_ok(arbor().arg("show").arg(path).arg("--json"))).unwrap()
}

fn context(path: &Path, leaf: Option<&str>) -> Value {
    let mut cmd = arbor();
    cmd.arg("context").arg(path).arg("--json");
    if let Some(l) = leaf {
        cmd.args(["--leaf", l]);
    }
    serde_json::from_str(&run_ok(&mut cmd)).unwrap()
}

fn is_hex8(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// ISO 8601 UTC with milliseconds, and about now.
fn check_timestamp(ts: &str) {
    let b = ts.as_bytes();
    assert!(
        ts.len() == 24 && b[10] == b'T' && b[19] == b'.' && ts.ends_with('Z'),
        "timestamp shape {ts:?}"
    );
    let t = chrono::DateTime::parse_from_rfc3339(ts).unwrap();
    let age = chrono::Utc::now().signed_duration_since(t).num_seconds();
    assert!((-5..300).contains(&age), "timestamp {ts} is not now");
}

/// Runs one append command; checks what docs/spec.md §7 requires of every append
/// and returns the new line (keys in file order) and the command's stdout.
fn append(path: &Path, args: &[&str], keys: &[&str]) -> (Map<String, Value>, String) {
    let before = std::fs::read(path).unwrap();
    let before_lines = lines(path);
    let last_id = before_lines.last().unwrap()["id"]
        .as_str()
        .map(str::to_string);
    let out = run_ok(arbor().args(args));
    let after = std::fs::read(path).unwrap();
    assert!(
        after.starts_with(&before),
        "{args:?}: earlier bytes changed"
    );
    let added = std::str::from_utf8(&after[before.len()..]).unwrap();
    assert!(
        added.ends_with('\n') && added.matches('\n').count() == 1,
        "{args:?}: exactly one whole line appended: {added:?}"
    );
    let line: Map<String, Value> = serde_json::from_str(added.trim_end()).unwrap();
    let got: Vec<&str> = line.keys().map(String::as_str).collect();
    assert_eq!(got, keys, "{args:?}: key set and order");
    assert_eq!(line["type"], entry_type(args[0]));
    let id = line["id"].as_str().unwrap();
    assert!(is_hex8(id), "id {id:?}");
    assert!(
        before_lines
            .iter()
            .all(|l| l.get("id").and_then(Value::as_str) != Some(id)),
        "id {id} not unique"
    );
    check_timestamp(line["timestamp"].as_str().unwrap());
    if line["type"] != "branch_summary" {
        // The parent of a new entry is the file's current last entry.
        assert_eq!(line["parentId"].as_str().map(str::to_string), last_id);
    }
    assert_eq!(out.trim(), id, "{args:?} prints the id it wrote");
    (line, out)
}

fn entry_type(command: &str) -> &'static str {
    match command {
        "label" => "label",
        "rename" => "session_info",
        "branch" => "branch_summary",
        other => panic!("{other}"),
    }
}

const LABEL_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "targetId", "label"];
const CLEAR_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "targetId"];
const RENAME_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "name"];
const BRANCH_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "fromId", "summary"];

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn label_and_clear() {
    let demo = Demo::new();
    let f = demo.file(BRANCHY);
    let ctx_before = context(&f, None);

    let (line, _) = append(&f, &["label", s(&f), "1b2ba06b", "first ask"], LABEL_KEYS);
    assert_eq!(line["targetId"], "1b2ba06b");
    assert_eq!(line["label"], "first ask");
    let v = show_json(&f);
    assert_eq!(v["labels"]["1b2ba06b"], "first ask");
    assert_eq!(v["labels"]["c856cfd2"], "checkpoint", "other labels kept");
    // The label entry continues the session: it is the new leaf, and it
    // adds nothing to the context.
    assert_eq!(v["leafId"], line["id"]);
    let ctx = context(&f, None);
    assert_eq!(ctx["messages"], ctx_before["messages"]);

    let (line, _) = append(&f, &["label", s(&f), "c856cfd2", "--clear"], CLEAR_KEYS);
    assert_eq!(line["targetId"], "c856cfd2");
    let v = show_json(&f);
    assert!(v["labels"].get("c856cfd2").is_none(), "{}", v["labels"]);
    assert_eq!(v["labels"]["1b2ba06b"], "first ask");
    assert_eq!(v["leafId"], line["id"]);

    // Refusals write nothing.
    let before = std::fs::read(&f).unwrap();
    for args in [
        vec!["label", s(&f), "nope1234", "x"],
        vec!["label", s(&f), "1b2ba06b"],
        vec!["label", s(&f), "1b2ba06b", "   "],
    ] {
        let out = run(arbor().args(&args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("arbor: "));
        assert_eq!(std::fs::read(&f).unwrap(), before, "{args:?} wrote");
    }
}

/// The writes take a unique entry id prefix, as `diff` does; an ambiguous
/// one writes nothing and names the candidates.
#[test]
fn writes_take_unique_entry_id_prefixes() {
    let demo = Demo::new();
    let f = demo.file(BRANCHY);
    let (line, _) = append(&f, &["label", s(&f), "1b2b", "first ask"], LABEL_KEYS);
    assert_eq!(line["targetId"], "1b2ba06b");
    let (line, _) = append(&f, &["branch", s(&f), "ece1"], BRANCH_KEYS);
    assert_eq!(line["parentId"], "ece135bc");
    let before = std::fs::read(&f).unwrap();
    // The two lines just appended have random ids: one may start with
    // "c0" too (about one run in 128), and is then a candidate as well.
    let mut candidates: Vec<String> = lines(&f)
        .iter()
        .filter_map(|l| l["id"].as_str())
        .filter(|id| id.starts_with("c0"))
        .map(str::to_string)
        .collect();
    candidates.sort();
    assert!(candidates.contains(&"c074a644".into()), "{candidates:?}");
    assert!(candidates.contains(&"c09a4c26".into()), "{candidates:?}");
    // The first three are named.
    let ambiguous = format!(
        "entry id \"c0\" is ambiguous: {} entries start with it ({})",
        candidates.len(),
        candidates[..candidates.len().min(3)].join(", ")
    );
    for args in [
        vec!["label", s(&f), "c0", "x"],
        vec!["branch", s(&f), "c0"],
        vec!["fork", s(&f), "c0"],
    ] {
        let out = run(arbor().args(&args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&ambiguous), "{err}");
        assert_eq!(std::fs::read(&f).unwrap(), before, "{args:?} wrote");
    }
    let out = run_ok(arbor().args(["fork", s(&f), "3ece"]));
    let forked = PathBuf::from(out.trim());
    let last = lines(&forked)
        .into_iter()
        .rev()
        .find(|l| l["type"] != "label")
        .unwrap();
    assert_eq!(last["id"], "3ece2523");
}

#[test]
fn rename_and_clear_the_name() {
    let demo = Demo::new();
    let f = demo.file(BRANCHY);
    let (line, _) = append(
        &f,
        &["rename", s(&f), "  Flaky auth: injectable clock  "],
        RENAME_KEYS,
    );
    assert_eq!(line["name"], "Flaky auth: injectable clock", "trimmed");
    let v = show_json(&f);
    assert_eq!(v["name"], "Flaky auth: injectable clock");
    assert_eq!(v["leafId"], line["id"]);
    let row = run_ok(
        arbor()
            .arg("--store")
            .arg(&demo.root)
            .args(["list", "--all", "--json"]),
    );
    let row: Value = row
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["path"] == s(&f))
        .unwrap();
    assert_eq!(row["name"], "Flaky auth: injectable clock");

    let (line, _) = append(&f, &["rename", s(&f), ""], RENAME_KEYS);
    assert_eq!(line["name"], "");
    let v = show_json(&f);
    assert!(v["name"].is_null(), "cleared: {}", v["name"]);
}

#[test]
fn branch_moves_the_leaf() {
    let demo = Demo::new();
    let f = demo.file(BRANCHY);

    // Any entry but a user message: the new entry hangs from it.
    let expected = context(&f, Some("3ece2523"));
    let (line, _) = append(&f, &["branch", s(&f), "3ece2523"], BRANCH_KEYS);
    assert_eq!(line["parentId"], "3ece2523");
    assert_eq!(line["fromId"], "3ece2523");
    assert_eq!(line["summary"], "");
    let v = show_json(&f);
    assert_eq!(v["leafId"], line["id"]);
    // An empty summary moves the leaf and adds nothing.
    assert_eq!(context(&f, None)["messages"], expected["messages"]);

    // A user message: continue from its parent, so the message can be re-sent.
    let raw = lines(&f);
    let user = raw.iter().find(|l| l["id"] == "2ef18a65").unwrap();
    assert_eq!(user["message"]["role"], "user");
    let parent = user["parentId"].as_str().unwrap().to_string();
    let expected = context(&f, Some(&parent));
    let (line, _) = append(
        &f,
        &[
            "branch",
            s(&f),
            "2ef18a65",
            "--summary",
            "Tried X; it failed.",
        ],
        BRANCH_KEYS,
    );
    assert_eq!(line["parentId"], parent.as_str());
    assert_eq!(line["fromId"], parent.as_str());
    assert_eq!(line["summary"], "Tried X; it failed.");
    let ctx = context(&f, None);
    let msgs = ctx["messages"].as_array().unwrap();
    let exp = expected["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), exp.len() + 1);
    assert_eq!(msgs[..exp.len()], exp[..]);
    assert_eq!(msgs[exp.len()]["role"], "branchSummary");
    assert_eq!(msgs[exp.len()]["text"], "Tried X; it failed.");
    assert_eq!(msgs[exp.len()]["entryId"], line["id"]);
}

#[test]
fn branch_at_the_root_user_message() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir
        .path()
        .join("2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl");
    std::fs::write(
        &f,
        concat!(
            r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp/x"}"#,
            "\n",
            r#"{"type":"message","id":"r00t0001","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"first","timestamp":1767225601000}}"#,
            "\n",
            r#"{"type":"message","id":"a0000002","parentId":"r00t0001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"reply"}],"provider":"p","model":"m","stopReason":"stop","timestamp":1767225602000}}"#,
            "\n"
        ),
    )
    .unwrap();
    let (line, _) = append(
        &f,
        &["branch", s(&f), "r00t0001", "--summary", "start over"],
        BRANCH_KEYS,
    );
    assert!(line["parentId"].is_null());
    assert_eq!(line["fromId"], "root");
    let v = show_json(&f);
    assert_eq!(v["leafId"], line["id"]);
    let ctx = context(&f, None);
    let texts: Vec<&str> = ctx["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["start over"], "only the summary: a fresh start");
}

/// Entries a fork keeps (parents re-linked), and its fresh labels as
/// (target, text, original timestamp).
type ExpectedFork = (Vec<Map<String, Value>>, Vec<(String, String, Value)>);

/// What a fork of `source` at `entry` must contain, from the raw lines.
fn expected_fork(source: &Path, entry: &str) -> ExpectedFork {
    let raw = lines(source);
    let entries = &raw[1..];
    let by_id = |id: &str| entries.iter().position(|e| e["id"] == id);
    let mut path = vec![by_id(entry).unwrap()];
    while let Some(p) = entries[*path.last().unwrap()]["parentId"].as_str() {
        path.push(by_id(p).unwrap());
    }
    path.reverse();
    let is_label = |i: usize| entries[i]["type"] == "label";
    let mut kept = Vec::new();
    for &i in &path {
        if is_label(i) {
            continue;
        }
        let mut e = entries[i].clone();
        // Re-link across dropped label entries.
        let mut p = entries[i]["parentId"].as_str().and_then(by_id);
        while let Some(x) = p.filter(|&x| is_label(x)) {
            p = entries[x]["parentId"].as_str().and_then(by_id);
        }
        e.insert(
            "parentId".into(),
            p.map(|x| entries[x]["id"].clone()).unwrap_or(Value::Null),
        );
        kept.push(e);
    }
    // Label state after the whole file, for the kept entries, in path order.
    let mut labels: Vec<(String, String, Value)> = Vec::new();
    for e in &kept {
        let id = e["id"].as_str().unwrap();
        let mut state: Option<(String, Value)> = None;
        for l in entries
            .iter()
            .filter(|l| l["type"] == "label" && l["targetId"] == id)
        {
            state = l
                .get("label")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(|t| (t.to_string(), l["timestamp"].clone()));
        }
        if let Some((text, ts)) = state {
            labels.push((id.to_string(), text, ts));
        }
    }
    (kept, labels)
}

fn fork(source: &Path, entry: &str) -> PathBuf {
    let src_before = std::fs::read(source).unwrap();
    let out = run_ok(arbor().arg("fork").arg(source).arg(entry));
    assert_eq!(
        std::fs::read(source).unwrap(),
        src_before,
        "fork left the source alone"
    );
    let dest = PathBuf::from(out.trim());
    assert!(dest.is_file(), "fork prints the path it wrote: {out:?}");
    assert_eq!(dest.parent(), source.parent(), "same folder");

    let raw = lines(&dest);
    let header = &raw[0];
    let src_header = &lines(source)[0];
    let id = header["id"].as_str().unwrap();
    let uuid = uuid::Uuid::parse_str(id).unwrap();
    assert_eq!(uuid.get_version_num(), 7, "UUIDv7 session id");
    let ts = header["timestamp"].as_str().unwrap();
    check_timestamp(ts);
    let name = format!("{}_{id}.jsonl", ts.replace([':', '.'], "-"));
    assert_eq!(dest.file_name().unwrap().to_str().unwrap(), name);
    assert_eq!(header["type"], "session");
    assert_eq!(header["version"], 3);
    assert_eq!(header["cwd"], src_header["cwd"]);
    let abs = std::path::absolute(source).unwrap();
    assert_eq!(header["parentSession"], s(&abs));
    for k in ["internal", "workflow"] {
        assert_eq!(header.get(k), src_header.get(k), "{k} marker kept");
    }

    let (kept, labels) = expected_fork(source, entry);
    assert_eq!(
        raw.len(),
        1 + kept.len() + labels.len(),
        "{}",
        dest.display()
    );
    for (got, want) in raw[1..].iter().zip(&kept) {
        assert_eq!(got, want, "kept entry {}", want["id"]);
    }
    let mut last = kept.last().unwrap()["id"].clone();
    let mut ids: Vec<&str> = kept.iter().map(|e| e["id"].as_str().unwrap()).collect();
    for (got, (target, text, ts)) in raw[1 + kept.len()..].iter().zip(&labels) {
        let keys: Vec<&str> = got.keys().map(String::as_str).collect();
        assert_eq!(keys, LABEL_KEYS);
        assert_eq!(got["type"], "label");
        let lid = got["id"].as_str().unwrap();
        assert!(is_hex8(lid) && !ids.contains(&lid), "fresh unique id {lid}");
        ids.push(lid);
        assert_eq!(got["parentId"], last);
        assert_eq!(got["targetId"], target.as_str());
        assert_eq!(got["label"], text.as_str());
        assert_eq!(&got["timestamp"], ts, "original label time kept");
        last = got["id"].clone();
    }

    // Resumed, the fork is what the source is at that entry.
    assert_eq!(
        context(&dest, None)["messages"],
        context(source, Some(entry))["messages"]
    );
    let v = show_json(&dest);
    assert_eq!(v["leafId"], last);
    for (target, text, _) in &labels {
        assert_eq!(v["labels"][target], text.as_str());
    }
    dest
}

#[test]
fn fork_copies_the_path_without_old_labels() {
    let demo = Demo::new();
    let f = demo.file(BRANCHY);
    // The leaf: the path crosses three label entries; two entries on it
    // carry labels, and two kept entries hung from dropped labels.
    let (kept, labels) = expected_fork(&f, "0cbebe84");
    assert_eq!(labels.len(), 2);
    let relinked: Vec<&Value> = kept
        .iter()
        .filter(|e| ["381c539e", "0cbebe84"].contains(&e["id"].as_str().unwrap()))
        .map(|e| &e["parentId"])
        .collect();
    assert_eq!(relinked, ["c856cfd2", "7ea66ad8"]);
    fork(&f, "0cbebe84");

    // The abandoned branch, whose one label was cleared: no label lines.
    let (_, labels) = expected_fork(&f, "ece135bc");
    assert!(labels.is_empty());
    fork(&f, "ece135bc");

    // An internal workflow stage keeps its marker.
    let g = demo.file(INTERNAL);
    let last = lines(&g).last().unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    fork(&g, &last);

    // No entry: refused, nothing written.
    let before: Vec<_> = std::fs::read_dir(f.parent().unwrap()).unwrap().collect();
    let out = run(arbor().arg("fork").arg(&f).arg("nope1234"));
    assert_eq!(out.status.code(), Some(1));
    let after: Vec<_> = std::fs::read_dir(f.parent().unwrap()).unwrap().collect();
    assert_eq!(before.len(), after.len());
}

#[test]
fn version_1_file_needs_migrate() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("--some-project--");
    std::fs::create_dir_all(&project).unwrap();
    let f = project.join("large-session.jsonl");
    std::fs::copy(shared_dir().join("realdata/large-session.jsonl"), &f).unwrap();
    let original = std::fs::read(&f).unwrap();
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    let raw = lines(&f);

    // Ids are assigned in memory, deterministically.
    let shown = show_json(&f);
    let ids: Vec<String> = shown["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), raw.len() - 1);
    let target = ids[4].clone();

    let out = run(arbor().args(["label", s(&f), &target, "kept"]));
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("arbor: ") && err.contains("version 1") && err.contains("--migrate"),
        "{err}"
    );
    // Short, and says what to do.
    assert_eq!(
        err,
        "arbor: large-session.jsonl is a version 1 session: add --migrate to rewrite it as \
         version 3 first (the original is kept as .bak)\n"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(&f).unwrap(), original, "untouched");
    assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), mtime);
    assert!(!project.join("large-session.jsonl.bak").exists());

    let out = run_ok(arbor().args(["label", s(&f), &target, "kept", "--migrate"]));
    let bak = project.join("large-session.jsonl.bak");
    assert_eq!(
        std::fs::read(&bak).unwrap(),
        original,
        ".bak is the original"
    );
    let new = lines(&f);
    assert_eq!(new.len(), raw.len() + 1, "migrated lines + the label");
    let mut header = raw[0].clone();
    header.insert("version".into(), 3.into());
    assert_eq!(new[0], header);
    for (i, (got, orig)) in new[1..raw.len()].iter().zip(&raw[1..]).enumerate() {
        let mut want = orig.clone();
        want.insert("id".into(), ids[i].clone().into());
        let parent = i.checked_sub(1).map(|p| Value::from(ids[p].clone()));
        want.insert("parentId".into(), parent.unwrap_or(Value::Null));
        assert_eq!(got, &want, "entry {i} after migration");
    }
    let label = new.last().unwrap();
    assert_eq!(label["type"], "label");
    assert_eq!(label["id"], out.trim());
    assert_eq!(label["parentId"], ids.last().unwrap().as_str());
    assert_eq!(label["targetId"], target.as_str());
    let s2 = arbor_session::read_session(&f).unwrap();
    assert_eq!(s2.file_version, 3);
    assert_eq!(show_json(&f)["labels"][&target], "kept");
}

#[test]
fn partial_last_line_is_never_glued() {
    let demo = Demo::new();
    let f = demo.file(BRANCHY);
    let mut bytes = std::fs::read(&f).unwrap();
    bytes.extend_from_slice(br#"{"type":"message","id":"half","parentId":"0cbe"#);
    std::fs::write(&f, &bytes).unwrap();
    for args in [
        vec!["label", s(&f), "1b2ba06b", "x"],
        vec!["rename", s(&f), "x"],
        vec!["branch", s(&f), "3ece2523"],
    ] {
        let out = run(arbor().args(&args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("partial line"), "{err}");
        assert_eq!(
            std::fs::read(&f).unwrap(),
            bytes,
            "{args:?} touched the file"
        );
    }
}

#[test]
fn complete_last_line_without_newline_gets_one() {
    let demo = Demo::new();
    let f = demo.file(BRANCHY);
    let mut bytes = std::fs::read(&f).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    std::fs::write(&f, &bytes).unwrap();
    let out = run_ok(arbor().args(["rename", s(&f), "glued?"]));
    let after = std::fs::read(&f).unwrap();
    assert!(after.starts_with(&bytes));
    assert_eq!(after[bytes.len()], b'\n', "a newline first");
    let added = std::str::from_utf8(&after[bytes.len() + 1..]).unwrap();
    assert_eq!(added.matches('\n').count(), 1);
    let line: Value = serde_json::from_str(added.trim_end()).unwrap();
    assert_eq!(line["id"], out.trim());
    assert_eq!(
        line["parentId"], "0cbebe84",
        "the old last line is the parent"
    );
    assert_eq!(show_json(&f)["name"], "glued?");
}

/// The members of one JSON object line, as their exact text (the last of a
/// duplicated key, as readers take it).
fn member_texts(line: &str) -> std::collections::BTreeMap<String, String> {
    let raw: std::collections::BTreeMap<String, &serde_json::value::RawValue> =
        serde_json::from_str(line.trim_start_matches('\u{feff}'))
            .unwrap_or_else(|e| panic!("{e}: {line}"));
    raw.into_iter()
        .map(|(k, v)| (k, v.get().to_string()))
        .collect()
}

/// Sets a file's mtime (and atime) to a fixed time in the past.
fn backdate(path: &Path, secs: u64) -> std::time::SystemTime {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_times(std::fs::FileTimes::new().set_modified(t).set_accessed(t))
        .unwrap();
    t
}

/// Issue #10.5: the v1/v2 → v3 rewrite changes only what migration means
/// (the header's `version`, entry `id`/`parentId`, compaction pointers, the
/// `hookMessage` role); every other value keeps its exact JSON text
/// (`0.00010439999999999999` is not reprinted as `0.0001044`, `\/` stays),
/// lines the reader skips stay, and `FILE.bak` is the original's bytes with
/// its mtime. Run on the real pi files and on every v1/v2 file of the
/// conformance corpus.
#[test]
fn migration_changes_only_what_migration_means() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    copy_dir(&shared_dir().join("conformance/corpus"), &root);
    let real = root.join("--real--");
    std::fs::create_dir_all(&real).unwrap();
    for name in ["large-session.jsonl", "before-compaction.jsonl"] {
        std::fs::copy(shared_dir().join("realdata").join(name), real.join(name)).unwrap();
    }
    // A v1 file with the texts a reprint changes: a float whose shortest
    // form differs, escapes, an exponent, a legacy compaction, a hook message,
    // a line that is not JSON and a blank line.
    let hand = real.join("hand.jsonl");
    std::fs::write(
        &hand,
        concat!(
            "{\"type\":\"session\",\"id\":\"aaaaaaaa-0000-4000-8000-000000000001\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"\\/tmp\\/x\",\"n\":1E2}\n",
            "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"caf\\u00e9 \\/\"}}\n",
            "not json at all\n",
            "\n",
            "{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:02.000Z\",\"message\":{\"role\":\"hookMessage\",\"content\":\"h\",\"usage\":{\"cost\":{\"total\":0.00010439999999999999,\"input\":1.0e-5}}}}\n",
            "{\"type\":\"compaction\",\"timestamp\":\"2025-01-01T00:00:03.000Z\",\"summary\":\"s\",\"firstKeptEntryIndex\":2,\"tokensBefore\":12345}\n",
        ),
    )
    .unwrap();

    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let ft = std::fs::symlink_metadata(&p).unwrap().file_type();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
                if let Ok(s) = arbor_session::read_session(&p) {
                    if s.needs_migration() {
                        files.push(p);
                    }
                }
            }
        }
    }
    files.sort();
    assert!(files.len() >= 6, "v1/v2 files found: {files:?}");

    let allowed_new = ["version", "id", "parentId", "firstKeptEntryId"];
    for (n, f) in files.iter().enumerate() {
        let mtime = backdate(f, 1_000_000_000 + n as u64 * 1000);
        let original = std::fs::read(f).unwrap();
        let before = arbor_session::read_session(f).unwrap();

        run_ok(arbor().arg("rename").arg(f).args(["migrated", "--migrate"]));

        let bak = PathBuf::from(format!("{}.bak", f.display()));
        assert_eq!(std::fs::read(&bak).unwrap(), original, "{}", bak.display());
        assert_eq!(
            std::fs::metadata(&bak).unwrap().modified().unwrap(),
            mtime,
            "{}: the .bak keeps the original mtime",
            bak.display()
        );

        let new_bytes = std::fs::read(f).unwrap();
        let old_text = String::from_utf8_lossy(&original);
        let new_text = String::from_utf8_lossy(&new_bytes);
        let old_lines: Vec<&str> = old_text.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new_text.split_inclusive('\n').collect();
        assert_eq!(
            new_lines.len(),
            old_lines.len() + 1,
            "{}: every line kept, plus the rename",
            f.display()
        );
        let mut objects = 0;
        for (i, (o, w)) in old_lines.iter().zip(&new_lines).enumerate() {
            let what = format!("{} line {}", f.display(), i + 1);
            let parsed = arbor_session::reader::parse_object(o.as_bytes(), &mut false);
            if parsed.is_none() {
                assert_eq!(o, w, "{what}: a skipped line stays as written");
                continue;
            }
            objects += 1;
            assert_eq!(o.ends_with('\n'), w.ends_with('\n'), "{what}");
            let (om, nm) = (member_texts(o), member_texts(w));
            for (k, ov) in &om {
                match nm.get(k) {
                    Some(nv) if k == "message" && ov != nv => {
                        // Only the role may change inside a message.
                        let (mut oi, mut ni) = (member_texts(ov), member_texts(nv));
                        let roles = (oi.remove("role"), ni.remove("role"));
                        assert_eq!(oi, ni, "{what}: message members");
                        assert_eq!(
                            (roles.0.as_deref(), roles.1.as_deref()),
                            (Some("\"hookMessage\""), Some("\"custom\"")),
                            "{what}"
                        );
                    }
                    Some(nv) if allowed_new.contains(&k.as_str()) => {
                        let _ = nv;
                    }
                    Some(nv) => assert_eq!(ov, nv, "{what}: member {k}"),
                    None => assert_eq!(k, "firstKeptEntryIndex", "{what}: {k} dropped"),
                }
            }
            for k in nm.keys() {
                assert!(
                    om.contains_key(k) || allowed_new.contains(&k.as_str()),
                    "{what}: {k} added"
                );
            }
        }
        assert!(objects > 0);

        // And the rewritten file means what the original meant.
        let after = arbor_session::read_session(f).unwrap();
        assert_eq!(after.file_version, 3);
        let mut header = before.header.raw.clone();
        header.insert("version".into(), 3.into());
        assert_eq!(after.header.raw, header, "{}", f.display());
        let raws = |s: &arbor_session::Session| -> Vec<Map<String, Value>> {
            s.entries.iter().map(|e| e.raw.clone()).collect()
        };
        let after_raws = raws(&after);
        assert_eq!(
            &after_raws[..after_raws.len() - 1],
            &raws(&before)[..],
            "{}",
            f.display()
        );
    }

    // The hand-made file, whole.
    let got = std::fs::read_to_string(&hand).unwrap();
    let got: Vec<&str> = got.lines().collect();
    assert_eq!(
        got[0],
        "{\"type\":\"session\",\"id\":\"aaaaaaaa-0000-4000-8000-000000000001\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"\\/tmp\\/x\",\"n\":1E2,\"version\":3}"
    );
    assert!(got[1].starts_with("{\"type\":\"message\",\"timestamp\":\"2025-01-01T00:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"caf\\u00e9 \\/\"},\"id\":\""));
    assert_eq!(got[2], "not json at all");
    assert_eq!(got[3], "");
    assert!(got[4].contains(
        "\"message\":{\"role\":\"custom\",\"content\":\"h\",\"usage\":{\"cost\":{\"total\":0.00010439999999999999,\"input\":1.0e-5}}}"
    ));
    assert!(got[5].starts_with(
        "{\"type\":\"compaction\",\"timestamp\":\"2025-01-01T00:00:03.000Z\",\"summary\":\"s\",\"tokensBefore\":12345,\"id\":\""
    ));
    assert!(got[5].contains("\"firstKeptEntryId\":\""));
}
