//! After arbor writes (label, rename, branch, fork), the pi agent's own
//! reader must see the same session as arbor's reader.
//!
//! Every scenario works on a temp copy of a demo-store or conformance
//! session and writes through the CLI (`arbor label|rename|branch|fork`).
//! After each write the file is checked against docs/spec.md §7 on arbor's side: the
//! old bytes are untouched, exactly one line was appended, it has exactly
//! the keys Atomic writes, its parentId is the last entry (or the branch
//! point), and arbor's reader sees the intended effect. At the end all the
//! resulting files go through ONE run of `tests/pi-reader/read-session.mjs`
//! (pi 0.73.1's SessionManager; loading it costs seconds) and both readers
//! must agree on the leaf, the [id, parentId] pairs, the labels, the name
//! and the pi-flavour context (role, source entry, text, in order).
//!
//! Without `node` or `tests/pi-reader/node_modules` the pi half is skipped
//! with a `skipped:` line on stderr (CI runs `npm ci` first, see .ci/run).

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Map, Value};

use crate::common::{arbor, conformance_corpus, demo_store, run_ok};
use arbor_session::{build_context, read_session, ContextFlavor, Session, SessionTree};

const LABEL_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "targetId", "label"];
const CLEAR_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "targetId"];
const RENAME_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "name"];
const BRANCH_KEYS: &[&str] = &["type", "id", "parentId", "timestamp", "fromId", "summary"];
const FORK_HEADER_KEYS: &[&str] = &["type", "version", "id", "timestamp", "cwd", "parentSession"];

#[derive(Debug, Clone)]
enum Op {
    /// `arbor label FILE ENTRY TEXT`
    Label(&'static str, &'static str),
    /// `arbor label FILE ENTRY --clear`
    Clear(&'static str),
    /// `arbor rename FILE NAME`
    Rename(&'static str),
    /// `arbor branch FILE ENTRY [--summary S]`
    Branch(&'static str, Option<&'static str>),
}

enum Action {
    Appends(Vec<Op>),
    /// `arbor fork FILE ENTRY`
    Fork(&'static str),
}

struct Case {
    name: &'static str,
    /// A file name part that picks the session in its store.
    session: &'static str,
    action: Action,
}

/// One file to show pi, with what the scenario expects beyond agreement.
struct Checked {
    case: &'static str,
    path: PathBuf,
    /// The last write cleared the name (arbor: `Some("")`, pi: no name).
    name_cleared: bool,
    /// Fork: the source file, for `parentSession`.
    fork_source: Option<PathBuf>,
}

fn demo_cases() -> Vec<Case> {
    use Action::*;
    use Op::*;
    // webapp: two branches (a branch_summary), labels set and cleared, a
    // name, and a user message whose parent is a label entry.
    const W: &str = "01a1fd62";
    // pyledger: a compaction (active in pi's flavour).
    const P: &str = "01a212e6";
    vec![
        Case {
            name: "demo label set on an assistant entry",
            session: W,
            action: Appends(vec![Label("3ece2523", "root cause ✓")]),
        },
        Case {
            name: "demo label clear",
            session: W,
            action: Appends(vec![Clear("c856cfd2")]),
        },
        Case {
            name: "demo rename (trimmed)",
            session: W,
            action: Appends(vec![Rename("  Flaky auth test — fixed 🚀  ")]),
        },
        Case {
            name: "demo rename to empty (clear)",
            session: W,
            action: Appends(vec![Rename("")]),
        },
        Case {
            name: "demo branch at an assistant entry with a summary",
            session: W,
            action: Appends(vec![Branch(
                "3ece2523",
                Some("Tried the injectable clock; going back to weigh fake timers again."),
            )]),
        },
        Case {
            name: "demo branch at a user message without summary",
            session: W,
            action: Appends(vec![Branch("2ef18a65", None)]),
        },
        Case {
            name: "demo branch at a user message whose parent is a label entry",
            session: W,
            action: Appends(vec![Branch("381c539e", None)]),
        },
        Case {
            name: "demo fork across dropped label entries",
            session: W,
            action: Fork("7ea66ad8"),
        },
        Case {
            name: "demo label, branch, rename, clear, branch after a compaction",
            session: P,
            action: Appends(vec![
                Label("f90b3f1c", "before the compaction"),
                Branch("f90b3f1c", Some("Abandoned: the compacted line of work.")),
                Rename("pyledger split"),
                Clear("f90b3f1c"),
                Branch("a0a406e9", None),
            ]),
        },
        Case {
            name: "demo label on a compaction entry",
            session: P,
            action: Appends(vec![Label("0a43516d", "compacted here")]),
        },
        Case {
            name: "demo fork at a user message whose parent is a label entry",
            session: W,
            action: Fork("381c539e"),
        },
        Case {
            name: "demo fork through a compaction",
            session: P,
            action: Fork("42ca38a3"),
        },
    ]
}

fn conformance_cases() -> Vec<Case> {
    use Action::*;
    use Op::*;
    vec![
        Case {
            name: "conformance branch at the root user message",
            session: "0199a237",
            action: Appends(vec![Branch("1fbbd989", None)]),
        },
        Case {
            name: "conformance branch at the root user message with a summary",
            session: "01999fdb",
            action: Appends(vec![Branch(
                "eeadea2e",
                Some("Start over: the first prompt was wrong."),
            )]),
        },
        Case {
            name: "conformance label set and clear on a branchy session",
            session: "0199a237",
            action: Appends(vec![Label("6f1cb250", "regenerated"), Clear("59282eed")]),
        },
        Case {
            name: "conformance labels: clear, label a label entry, padded text",
            session: "0199a080",
            action: Appends(vec![
                Clear("d772c4ca"),
                Label("8d27d31b", "relabel a label"),
                Label("46647a0c", "  padded  "),
            ]),
        },
        Case {
            name: "conformance fork across a run of label entries",
            session: "0199a080",
            action: Fork("652d7a5a"),
        },
        Case {
            name: "conformance branch beside branch summaries, then clear the name",
            session: "01999fdb",
            action: Appends(vec![
                Branch("0fe81304", Some("third try")),
                Rename("named"),
                Rename(""),
            ]),
        },
        Case {
            name: "conformance branch to an abandoned branch past a verbatim compaction",
            session: "01999e92",
            action: Appends(vec![Branch("9de55cf3", Some("off-path summary"))]),
        },
        Case {
            name: "conformance branch at a user message right after a compaction",
            session: "01999e92",
            action: Appends(vec![Branch("f9bfe5fb", None)]),
        },
        Case {
            name: "conformance branch at a custom_message with a summary",
            session: "0199a201",
            action: Appends(vec![Branch("00a548c0", Some("custom messages kept"))]),
        },
        Case {
            name: "conformance rename and label with unicode",
            session: "0199a5a6",
            action: Appends(vec![
                Rename("  数据管道 — 重命名 ✓  "),
                Label("2cb1241d", "ＦＵＬＬ 🏷️"),
            ]),
        },
        Case {
            name: "conformance rename to empty on a named session",
            session: "0199a5a6",
            action: Appends(vec![Rename("")]),
        },
        Case {
            name: "conformance name set on an abandoned branch, branch back",
            session: "0199a125",
            action: Appends(vec![Branch("6a3261c1", Some("back to the main line"))]),
        },
        Case {
            name: "conformance label on a file without a final newline",
            session: "a07_no_final_newline",
            action: Appends(vec![Label("aef97507", "tail fixed")]),
        },
        Case {
            name: "conformance fork at a user message mid-branch",
            session: "0199a237",
            action: Fork("2c2dd53c"),
        },
        Case {
            name: "conformance fork at the root user message: an empty session",
            session: "0199a237",
            action: Fork("1fbbd989"),
        },
        Case {
            name: "conformance fork of an internal workflow session",
            session: "0199a313",
            action: Fork("78c08de9"),
        },
    ]
}

// ------------------------------------------------------------------ helpers

fn is_entry_id(s: &str) -> bool {
    s.len() == 8
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, and close to now.
fn check_timestamp(case: &str, ts: &str, start_ms: i64) {
    let shape = ts.len() == 24
        && ts.bytes().enumerate().all(|(i, b)| match i {
            4 | 7 => b == b'-',
            10 => b == b'T',
            13 | 16 => b == b':',
            19 => b == b'.',
            23 => b == b'Z',
            _ => b.is_ascii_digit(),
        });
    assert!(
        shape,
        "{case}: timestamp {ts:?} is not ISO 8601 UTC with ms"
    );
    let ms = arbor_session::entry::parse_iso_ms(ts).expect("parses");
    let now = chrono::Utc::now().timestamp_millis();
    assert!(
        ms >= start_ms - 1000 && ms <= now + 1000,
        "{case}: timestamp {ts} is not the write time"
    );
}

fn keys(m: &Map<String, Value>) -> Vec<&str> {
    m.keys().map(String::as_str).collect()
}

fn parent_of(e: &arbor_session::Entry) -> Value {
    e.raw.get("parentId").cloned().unwrap_or(Value::Null)
}

/// A context as (role, source entry id, pi's rendering of the text).
type Sig = Vec<(String, String, String)>;

fn context_sig(s: &Session, t: &SessionTree, leaf: Option<usize>) -> Sig {
    build_context(s, t, leaf, ContextFlavor::Pi)
        .messages
        .iter()
        .map(|m| (m.role.clone(), m.entry_id.clone(), pi_render(&m.message)))
        .collect()
}

/// read-session.mjs's `renderText`, applied to arbor's message JSON.
fn pi_render(m: &Value) -> String {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    if role == "compactionSummary" || role == "branchSummary" {
        return match m.get("summary") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
    }
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => match (role, m.get("command")) {
            ("bashExecution", Some(Value::String(c))) => c.clone(),
            _ => String::new(),
        },
    }
}

// ------------------------------------------------------------- the writes

fn run_op(path: &Path, op: &Op) -> String {
    let mut cmd = arbor();
    match op {
        Op::Label(e, text) => cmd.arg("label").arg(path).arg(e).arg(text),
        Op::Clear(e) => cmd.arg("label").arg(path).arg(e).arg("--clear"),
        Op::Rename(n) => cmd.arg("rename").arg(path).arg(n),
        Op::Branch(e, s) => {
            cmd.arg("branch").arg(path).arg(e);
            if let Some(s) = s {
                cmd.arg("--summary").arg(s);
            }
            &mut cmd
        }
    };
    let out = run_ok(&mut cmd);
    let id = out.trim_end().to_string();
    assert!(
        is_entry_id(&id) && out == format!("{id}\n"),
        "{op:?}: arbor printed {out:?}, not one entry id"
    );
    id
}

/// Runs one append and checks it against docs/spec.md §7 on arbor's side.
fn append_and_check(case: &str, path: &Path, op: &Op) {
    let start_ms = chrono::Utc::now().timestamp_millis();
    let before = std::fs::read(path).unwrap();
    let pre = read_session(path).unwrap();
    let pre_tree = SessionTree::build(&pre);
    let pre_ids: HashSet<&str> = pre.entries.iter().map(|e| e.id.as_str()).collect();
    let last_id = Value::from(pre.entries.last().map(|e| e.id.to_string()));

    let id = run_op(path, op);
    let case = format!("{case} / {op:?}");

    // Only appended bytes: the old ones untouched (a last line without a
    // newline gets its `\n` first, docs/spec.md §7).
    let after = std::fs::read(path).unwrap();
    let mut prefix = before.clone();
    if !prefix.is_empty() && !prefix.ends_with(b"\n") {
        prefix.push(b'\n');
    }
    assert!(
        after.starts_with(&prefix),
        "{case}: the file changed before its end"
    );
    let added = &after[prefix.len()..];
    assert!(
        added.ends_with(b"\n") && added.iter().filter(|&&b| b == b'\n').count() == 1,
        "{case}: expected exactly one appended line, got {:?}",
        String::from_utf8_lossy(added)
    );
    let line: Value = serde_json::from_slice(&added[..added.len() - 1])
        .unwrap_or_else(|e| panic!("{case}: appended line does not parse: {e}"));
    let obj = line.as_object().expect("an object");
    assert_eq!(obj["id"], Value::from(id.clone()), "{case}: printed id");
    assert!(!pre_ids.contains(id.as_str()), "{case}: id {id} reused");
    check_timestamp(&case, obj["timestamp"].as_str().unwrap(), start_ms);

    let post = read_session(path).unwrap();
    let post_tree = SessionTree::build(&post);
    assert!(
        post.diagnostics.is_clean(),
        "{case}: {:?}",
        post.diagnostics
    );
    assert_eq!(post.entries.len(), pre.entries.len() + 1, "{case}");
    assert_eq!(post_tree.leaf, Some(pre.entries.len()), "{case}: leaf");

    match op {
        Op::Label(target, text) => {
            assert_eq!(keys(obj), LABEL_KEYS, "{case}: keys");
            assert_eq!(obj["type"], "label");
            assert_eq!(obj["parentId"], last_id, "{case}: parent = last entry");
            assert_eq!(obj["targetId"], *target);
            assert_eq!(obj["label"], text.trim(), "{case}: label text trimmed");
            let l = &post_tree.labels[*target];
            assert_eq!(l.text, text.trim());
            assert_eq!(l.timestamp.as_deref(), obj["timestamp"].as_str());
        }
        Op::Clear(target) => {
            assert!(
                pre_tree.labels.contains_key(*target),
                "{case}: the scenario should clear a set label"
            );
            assert_eq!(keys(obj), CLEAR_KEYS, "{case}: a clear omits `label`");
            assert_eq!(obj["type"], "label");
            assert_eq!(obj["parentId"], last_id, "{case}: parent = last entry");
            assert_eq!(obj["targetId"], *target);
            assert!(!post_tree.labels.contains_key(*target), "{case}: cleared");
        }
        Op::Rename(name) => {
            assert_eq!(keys(obj), RENAME_KEYS, "{case}: keys");
            assert_eq!(obj["type"], "session_info");
            assert_eq!(obj["parentId"], last_id, "{case}: parent = last entry");
            assert_eq!(obj["name"], name.trim(), "{case}: name trimmed");
            assert_eq!(post_tree.name.as_deref(), Some(name.trim()));
        }
        Op::Branch(entry, summary) => {
            assert_eq!(keys(obj), BRANCH_KEYS, "{case}: keys");
            assert_eq!(obj["type"], "branch_summary");
            // The branch point, worked out here from the raw entry: a user
            // message's parent (null at the root), any other entry itself.
            let e = &pre.entries[pre_tree.index_of(entry).unwrap()];
            let point = if e.role() == Some("user") {
                parent_of(e)
            } else {
                Value::from(e.id.to_string())
            };
            assert_eq!(obj["parentId"], point, "{case}: parent = branch point");
            let from = if point.is_null() {
                Value::from("root")
            } else {
                point.clone()
            };
            assert_eq!(obj["fromId"], from, "{case}: fromId");
            assert_eq!(obj["summary"], summary.unwrap_or(""), "{case}: summary");
            // The context now is the branch point's, plus the summary if any.
            let mut want = match point.as_str() {
                Some(p) => context_sig(&post, &post_tree, post_tree.index_of(p)),
                None => Vec::new(),
            };
            if let Some(s) = summary.filter(|s| !s.is_empty()) {
                want.push(("branchSummary".into(), id.clone(), s.to_string()));
            }
            assert_eq!(
                context_sig(&post, &post_tree, None),
                want,
                "{case}: context after the branch"
            );
        }
    }
}

/// Runs `arbor fork` and checks the new file (docs/spec.md §7 "Fork").
fn fork_and_check(case: &str, source: &Path, entry: &str) -> PathBuf {
    let start_ms = chrono::Utc::now().timestamp_millis();
    let before = std::fs::read(source).unwrap();
    let src = read_session(source).unwrap();
    let st = SessionTree::build(&src);
    let run = arbor().arg("fork").arg(source).arg(entry).output().unwrap();
    assert!(run.status.success(), "{case}: {run:?}");
    let out = String::from_utf8(run.stdout).unwrap();
    let dest = PathBuf::from(out.trim_end());
    assert_eq!(out, format!("{}\n", dest.display()), "{case}: output");
    // Atomic's /fork at a user message: the new session ends at its parent
    // (no entries for a root), and the message's text is handed back.
    let target = st.index_of(entry).unwrap();
    let at_user = src.entries[target].role() == Some("user");
    let leaf = if at_user {
        st.parent.of(target)
    } else {
        Some(target)
    };
    let stderr = String::from_utf8_lossy(&run.stderr);
    if at_user {
        let text = arbor_session::entry::content_text(
            src.entries[target].message().and_then(|m| m.get("content")),
            "",
        );
        let first = text.lines().next().unwrap_or("").trim();
        assert!(
            stderr.contains("before the user message") && stderr.contains(first),
            "{case}: the message text is offered: {stderr}"
        );
    } else {
        assert!(stderr.is_empty(), "{case}: {stderr}");
    }
    assert_eq!(
        std::fs::read(source).unwrap(),
        before,
        "{case}: fork changed the source"
    );
    assert_eq!(dest.parent(), source.parent(), "{case}: same folder");

    let text = std::fs::read_to_string(&dest).unwrap();
    assert!(text.ends_with('\n'), "{case}: ends in a newline");
    let lines: Vec<Map<String, Value>> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l)
                .unwrap_or_else(|e| panic!("{case}: line does not parse: {e}"))
                .as_object()
                .unwrap()
                .clone()
        })
        .collect();

    // Header: new UUIDv7, same cwd, parentSession = source, marker kept.
    let h = &lines[0];
    let mut want_keys = FORK_HEADER_KEYS.to_vec();
    for k in ["internal", "workflow"] {
        if let Some(v) = src.header.raw.get(k) {
            want_keys.push(k);
            assert_eq!(&h[k], v, "{case}: header {k} kept");
        }
    }
    assert_eq!(keys(h), want_keys, "{case}: header keys");
    assert_eq!(h["type"], "session");
    assert_eq!(h["version"], 3);
    let id = h["id"].as_str().unwrap();
    let uuid = uuid::Uuid::parse_str(id).expect("uuid");
    assert_eq!(uuid.get_version_num(), 7, "{case}: UUIDv7");
    assert_ne!(id, src.id());
    let ts = h["timestamp"].as_str().unwrap();
    check_timestamp(case, ts, start_ms);
    assert_eq!(h["cwd"], src.header.raw["cwd"], "{case}: cwd");
    assert_eq!(
        h["parentSession"],
        source.display().to_string(),
        "{case}: parentSession"
    );
    assert_eq!(
        dest.file_name().unwrap().to_string_lossy(),
        format!("{}_{id}.jsonl", ts.replace([':', '.'], "-")),
        "{case}: file name"
    );

    // Entries: root → entry without label entries, unchanged but for a
    // parentId re-linked past dropped labels; then the path's labels.
    let is_label = |i: usize| src.entries[i].entry_type() == "label";
    let path: Vec<usize> = leaf
        .map(|l| st.path_to(l))
        .unwrap_or_default()
        .into_iter()
        .filter(|&i| !is_label(i))
        .collect();
    assert!(
        lines.len() > path.len(),
        "{case}: {} lines for {} kept entries",
        lines.len(),
        path.len()
    );
    for (k, &i) in path.iter().enumerate() {
        let mut want = src.entries[i].raw.clone();
        let mut p = st.parent.of(i);
        while let Some(x) = p.filter(|&x| is_label(x)) {
            p = st.parent.of(x);
        }
        want.insert(
            "parentId".into(),
            p.map(|x| Value::from(src.entries[x].id.to_string()))
                .unwrap_or(Value::Null),
        );
        assert_eq!(lines[k + 1], want, "{case}: entry {}", src.entries[i].id);
    }
    let labels = &lines[path.len() + 1..];
    let want_labels: BTreeMap<&str, (&str, Option<&str>)> = path
        .iter()
        .filter_map(|&i| {
            let id = src.entries[i].id.as_str();
            st.labels
                .get(id)
                .map(|l| (id, (l.text.as_str(), l.timestamp.as_deref())))
        })
        .collect();
    let mut got_labels = BTreeMap::new();
    let mut prev = path
        .last()
        .map_or(Value::Null, |&i| Value::from(src.entries[i].id.to_string()));
    let mut ids: HashSet<String> = path
        .iter()
        .map(|&i| src.entries[i].id.to_string())
        .collect();
    for l in labels {
        assert_eq!(keys(l), LABEL_KEYS, "{case}: label keys");
        assert_eq!(l["type"], "label");
        let lid = l["id"].as_str().unwrap();
        assert!(
            is_entry_id(lid) && ids.insert(lid.to_string()),
            "{case}: id"
        );
        assert_eq!(l["parentId"], prev, "{case}: labels chain after the path");
        prev = Value::from(lid);
        got_labels.insert(
            l["targetId"].as_str().unwrap(),
            (l["label"].as_str().unwrap(), l["timestamp"].as_str()),
        );
    }
    assert_eq!(got_labels, want_labels, "{case}: labels, original times");

    // What the model sees is the same as in the source at `entry`.
    let fs = read_session(&dest).unwrap();
    let ft = SessionTree::build(&fs);
    let want = match leaf {
        Some(l) => context_sig(&src, &st, Some(l)),
        None => Sig::default(),
    };
    assert_eq!(
        context_sig(&fs, &ft, None),
        want,
        "{case}: the fork's context"
    );
    if at_user {
        let last = fs.entries.iter().rev().find(|e| e.entry_type() != "label");
        assert_eq!(
            last.map(|e| e.id.as_str()),
            path.last().map(|&i| src.entries[i].id.as_str()),
            "{case}: the fork ends before the user message"
        );
        assert!(
            fs.entries.iter().all(|e| e.id != entry),
            "{case}: the user message itself is not copied"
        );
    }
    dest
}

// ----------------------------------------------------------- pi's reader

fn pi_reader_script() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pi-reader");
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => return Err(format!("`node --version` failed: {}", o.status)),
        Err(e) => return Err(format!("node is not on PATH ({e})")),
    }
    if !dir
        .join("node_modules/@mariozechner/pi-coding-agent/package.json")
        .is_file()
    {
        return Err(
            "tests/pi-reader/node_modules is missing (run `npm ci` in tests/pi-reader)".into(),
        );
    }
    Ok(dir.join("read-session.mjs"))
}

fn read_with_pi(script: &Path, files: &[&Path]) -> Vec<Value> {
    let out = Command::new("node")
        .arg(script)
        .args(files)
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "pi reader failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), files.len(), "one line per file from the pi reader");
    v
}

fn compare_with_pi(c: &Checked, pi: &Value, errors: &mut Vec<String>) {
    let case = c.case;
    let mut err = |what: String| errors.push(format!("{case}: {what}"));
    if pi["ok"] != true {
        err(format!("pi could not read the file: {}", pi["error"]));
        return;
    }
    if pi["rewritten"] != false {
        err("pi rewrote the file on open (it thought it invalid or old)".into());
    }
    let s = read_session(&c.path).unwrap();
    let t = SessionTree::build(&s);

    if pi["sessionId"] != s.id() {
        err(format!(
            "session id: pi {} arbor {}",
            pi["sessionId"],
            s.id()
        ));
    }
    let leaf = Value::from(t.leaf.map(|l| s.entries[l].id.to_string()));
    if pi["leafId"] != leaf {
        err(format!("leafId: pi {} arbor {leaf}", pi["leafId"]));
    }

    let ours: Vec<(Value, Value)> = s
        .entries
        .iter()
        .map(|e| (Value::from(e.id.to_string()), parent_of(e)))
        .collect();
    let theirs: Vec<(Value, Value)> = pi["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["id"].clone(), e["parentId"].clone()))
        .collect();
    if pi["entryCount"] != ours.len() || ours != theirs {
        err(format!(
            "[id, parentId] pairs: pi {} entries, arbor {}",
            pi["entryCount"],
            ours.len()
        ));
    }

    // pi reports labels of entries that exist; so does this.
    let ours: BTreeMap<String, Value> = s
        .entries
        .iter()
        .filter_map(|e| {
            t.labels
                .get(e.id.as_str())
                .map(|l| (e.id.to_string(), Value::from(l.text.clone())))
        })
        .collect();
    let theirs: BTreeMap<String, Value> = pi["labels"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if ours != theirs {
        err(format!("labels: pi {theirs:?} arbor {ours:?}"));
    }

    // Name: pi's getSessionName() is `name?.trim() || undefined`, so a
    // cleared name and a never-set one both read as no name (null here).
    // arbor keeps the difference (docs/spec.md §3: `Some("")` = cleared; Atomic's
    // `hasName`), and shows no name for both: compare the shown name.
    let shown = Value::from(t.display_name().map(str::to_string));
    if pi["sessionName"] != shown {
        err(format!("name: pi {} arbor {shown}", pi["sessionName"]));
    }
    if c.name_cleared {
        if t.name.as_deref() != Some("") {
            err(format!(
                "name: arbor should record a clear, has {:?}",
                t.name
            ));
        }
        if !pi["sessionName"].is_null() {
            err("name: pi should show no name after a clear".into());
        }
    }

    if let Some(src) = &c.fork_source {
        if pi["header"]["parentSession"] != src.display().to_string() {
            err(format!(
                "header parentSession: pi {}",
                pi["header"]["parentSession"]
            ));
        }
    }

    // Context, pi flavour: model, thinking level, and the messages in order.
    let ctx = build_context(&s, &t, None, ContextFlavor::Pi);
    let pctx = &pi["context"];
    let model = match &ctx.model {
        None => Value::Null,
        Some((p, m)) => serde_json::json!({"provider": p, "modelId": m}),
    };
    let pmodel = match &pctx["model"] {
        Value::Null => Value::Null,
        m => serde_json::json!({"provider": m["provider"], "modelId": m["modelId"]}),
    };
    if model != pmodel {
        err(format!("context model: pi {pmodel} arbor {model}"));
    }
    if pctx["thinkingLevel"] != ctx.thinking_level {
        err(format!(
            "thinking level: pi {} arbor {}",
            pctx["thinkingLevel"], ctx.thinking_level
        ));
    }
    let ours: Vec<(Value, Value, Value)> = ctx
        .messages
        .iter()
        .map(|m| {
            (
                Value::from(m.role.clone()),
                Value::from(m.entry_id.clone()),
                Value::from(pi_render(&m.message)),
            )
        })
        .collect();
    let theirs: Vec<(Value, Value, Value)> = pctx["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].clone(), m["src"].clone(), m["text"].clone()))
        .collect();
    if ours != theirs {
        let first = ours
            .iter()
            .zip(&theirs)
            .position(|(a, b)| a != b)
            .unwrap_or(ours.len().min(theirs.len()));
        err(format!(
            "context: pi {} messages, arbor {}; first difference at #{first}: pi {:?} arbor {:?}",
            theirs.len(),
            ours.len(),
            theirs.get(first),
            ours.get(first)
        ));
    }
}

// --------------------------------------------------------------- the test

#[test]
fn pi_reads_arbor_writes_like_arbor() {
    let t0 = std::time::Instant::now();
    let demo = demo_store();
    let conf = conformance_corpus();
    let work = tempfile::tempdir().unwrap();

    let mut checked = Vec::new();
    let mut n = 0;
    let stores = [
        (demo.path().join("sessions"), demo_cases()),
        (conf.path().join("corpus"), conformance_cases()),
    ];
    for (root, cases) in &stores {
        for case in cases {
            n += 1;
            // A private copy per scenario, in its own project folder.
            let src = common::find_session(root, case.session);
            let dir = work.path().join(format!("case-{n:02}"));
            std::fs::create_dir(&dir).unwrap();
            let path = dir.join(src.file_name().unwrap());
            std::fs::copy(&src, &path).unwrap();
            match &case.action {
                Action::Appends(ops) => {
                    for op in ops {
                        append_and_check(case.name, &path, op);
                    }
                    checked.push(Checked {
                        case: case.name,
                        path,
                        name_cleared: matches!(ops.last(), Some(Op::Rename(""))),
                        fork_source: None,
                    });
                }
                Action::Fork(entry) => {
                    let dest = fork_and_check(case.name, &path, entry);
                    checked.push(Checked {
                        case: case.name,
                        path: dest,
                        name_cleared: false,
                        fork_source: Some(path),
                    });
                }
            }
        }
    }
    let arbor_side = t0.elapsed();

    let script = match pi_reader_script() {
        Ok(s) => s,
        Err(reason) => {
            eprintln!(
                "skipped: pi cross-check of {} files: {reason} (arbor-side checks ran)",
                checked.len()
            );
            return;
        }
    };
    let files: Vec<&Path> = checked.iter().map(|c| c.path.as_path()).collect();
    let pi = read_with_pi(&script, &files);
    let mut errors = Vec::new();
    for (c, p) in checked.iter().zip(&pi) {
        compare_with_pi(c, p, &mut errors);
        eprintln!(
            "  {}: {} entries, {} labels, name {}, {} context messages",
            c.case,
            p["entryCount"],
            p["labels"].as_object().map_or(0, |l| l.len()),
            p["sessionName"],
            p["context"]["messageCount"]
        );
    }
    eprintln!(
        "writes_pi: {} scenarios, {} files cross-checked with pi, {} differences \
         (arbor side {:.1}s, total {:.1}s)",
        n,
        checked.len(),
        errors.len(),
        arbor_side.as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
