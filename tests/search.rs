//! Issue #14: everything is searchable, per scope, and `arbor search`
//! returns the matching entries. The oracle is an independent reading of
//! the files (serde_json values, the README's table of parts) plus `grep`:
//! every session it finds in a scope, arbor finds (with and without the
//! index), and every entry arbor returns contains the match.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::common::{arbor, gen_corpus};
use serde_json::Value;

const SCOPES: [&str; 5] = ["user", "assistant", "tools", "thinking", "other"];

fn norm(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn blocks_text(content: &Value, ty: &str, key: &str) -> Vec<String> {
    match content {
        Value::String(s) if ty == "text" => vec![s.clone()],
        Value::Array(bs) => bs
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some(ty))
            .filter_map(|b| b.get(key).and_then(Value::as_str).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

fn scalars(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Array(a) => a.iter().for_each(|x| scalars(x, out)),
        Value::Object(m) => m.values().for_each(|x| scalars(x, out)),
        _ => {}
    }
}

/// Per entry id: its searchable texts by scope, as the README describes them.
type Entries = Vec<(String, Vec<(&'static str, String)>)>;

/// The entries as the reader gives them (old versions migrated: ids given
/// to v1 entries, `hookMessage` become `custom`), their text read here.
fn oracle_entries(path: &Path) -> Entries {
    let mut out = Vec::new();
    let Ok(session) = arbor_session::read_session(path) else {
        return out;
    };
    for e in session.entries {
        let id = e.id.clone();
        let v = Value::Object((*e.raw).clone());
        let mut parts: Vec<(&'static str, String)> = Vec::new();
        let msg = v.get("message").cloned().unwrap_or(Value::Null);
        let content = msg.get("content").cloned().unwrap_or(Value::Null);
        let join = |v: Vec<String>| v.join(" ");
        match v.get("type").and_then(Value::as_str) {
            Some("message") => match msg.get("role").and_then(Value::as_str) {
                Some("user") => parts.push(("user", join(blocks_text(&content, "text", "text")))),
                Some("assistant") => {
                    parts.push(("assistant", join(blocks_text(&content, "text", "text"))));
                    for t in blocks_text(&content, "thinking", "thinking") {
                        parts.push(("thinking", t));
                    }
                    if let Value::Array(bs) = &content {
                        for b in bs {
                            if b.get("type").and_then(Value::as_str) == Some("toolCall") {
                                let mut s = vec![b
                                    .get("name")
                                    .and_then(Value::as_str)
                                    .unwrap_or("")
                                    .to_string()];
                                if let Some(a) = b.get("arguments") {
                                    scalars(a, &mut s);
                                }
                                parts.push(("tools", s.join(" ")));
                            }
                        }
                    }
                }
                Some("toolResult") => {
                    parts.push(("tools", join(blocks_text(&content, "text", "text"))))
                }
                Some("bashExecution") => {
                    for k in ["command", "output"] {
                        if let Some(s) = msg.get(k).and_then(Value::as_str) {
                            parts.push(("tools", s.to_string()));
                        }
                    }
                }
                Some("custom" | "hookMessage") => {
                    parts.push(("other", join(blocks_text(&content, "text", "text"))))
                }
                _ => {}
            },
            Some("custom_message") => {
                let c = v.get("content").cloned().unwrap_or(Value::Null);
                parts.push(("other", join(blocks_text(&c, "text", "text"))));
            }
            Some("branch_summary" | "compaction") => {
                if let Some(s) = v.get("summary").and_then(Value::as_str) {
                    parts.push(("other", s.to_string()));
                }
            }
            _ => {}
        }
        let parts = parts
            .into_iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(s, t)| (s, norm(&t)))
            .collect();
        out.push((id.to_string(), parts));
    }
    out
}

/// Internal workflow sessions are not listed (nor searched) by default.
fn internal(f: &Path) -> bool {
    let text = std::fs::read_to_string(f).unwrap_or_default();
    let Some(Ok(h)) = text.lines().next().map(serde_json::from_str::<Value>) else {
        return false;
    };
    h["internal"] == Value::Bool(true)
        && ["runId", "stageId", "stageName"].iter().all(|k| {
            h["workflow"][k]
                .as_str()
                .is_some_and(|s| !s.trim().is_empty())
        })
}

/// The session files arbor lists by default (internal ones left out).
fn session_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(root).unwrap() {
        let d = d.unwrap().path();
        if d.is_dir() {
            for f in std::fs::read_dir(&d).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_some_and(|e| e == "jsonl") && !internal(&f) {
                    out.push(f);
                }
            }
        }
    }
    out.sort();
    out
}

enum Needle {
    Text(String),
    Regex(regex::Regex),
}

impl Needle {
    fn is_in(&self, norm_text: &str) -> bool {
        match self {
            Needle::Text(t) => norm_text.contains(t.as_str()),
            Needle::Regex(r) => r.is_match(norm_text),
        }
    }
}

/// `arbor search --json` over the store: (path, entry id, snippet) per hit.
fn search(root: &Path, cache: &Path, query: &str, no_index: bool) -> Vec<(PathBuf, String)> {
    let mut cmd = arbor();
    cmd.env("ARBOR_CACHE_DIR", cache)
        .arg("--store")
        .arg(root)
        .args(["search", "--all", "--json", "--limit", "0"]);
    if no_index {
        cmd.arg("--no-index");
    }
    let out = cmd.arg("--").arg(query).output().unwrap();
    let code = out.status.code();
    assert!(
        code == Some(0) || (code == Some(1) && out.stdout.is_empty()),
        "{query}: {:?} {}",
        code,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                PathBuf::from(v["path"].as_str().unwrap()),
                v["entryId"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

struct Lcg(u64);
impl Lcg {
    fn pick(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

#[test]
fn every_session_the_oracle_finds_arbor_finds_in_each_scope() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &[
            "--profile",
            "realistic",
            "--sessions",
            "30",
            "--seed",
            "7",
            "--max-mb",
            "1",
        ],
    );
    let cache = dir.path().join("cache");
    let files = session_files(&root);
    let sessions: BTreeMap<PathBuf, Entries> = files
        .iter()
        .map(|f| (f.clone(), oracle_entries(f)))
        .collect();
    // Words and phrases taken from each scope's own text.
    let mut rng = Lcg(14);
    let mut cases: Vec<(String, Needle, Option<&str>)> = Vec::new();
    for scope in SCOPES {
        let texts: Vec<&str> = sessions
            .values()
            .flatten()
            .flat_map(|(_, ps)| ps.iter())
            .filter(|(s, _)| *s == scope)
            .map(|(_, t)| t.as_str())
            .collect();
        assert!(!texts.is_empty(), "the corpus has {scope} text");
        let mut words: Vec<Vec<&str>> = Vec::new();
        for _ in 0..40 {
            let t = texts[rng.pick(texts.len())];
            let w: Vec<&str> = t.split(' ').collect();
            if w.len() >= 2 {
                words.push(w);
            }
        }
        let plain = |w: &str| {
            w.len() >= 4
                && w.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
        };
        // A `re:` query and its oracle (case-insensitive, as `re:` is).
        let regex_case = |pat: String, scope| {
            let r = regex::RegexBuilder::new(&pat)
                .case_insensitive(true)
                .build()
                .unwrap();
            (format!("re:{pat}"), Needle::Regex(r), Some(scope))
        };
        let mut n = (0, 0, 0, 0, 0, 0, 0);
        for w in &words {
            let k = rng.pick(w.len() - 1);
            let ascii = |w: &str| plain(w) && w.is_ascii();
            if n.3 < 1 && w.len() > k + 2 && plain(w[k]) && plain(w[k + 1]) && plain(w[k + 2]) {
                // Three words: narrowed by their pairs, then confirmed.
                let p = format!("{} {} {}", w[k], w[k + 1], w[k + 2]);
                cases.push((format!("\"{p}\""), Needle::Text(p), Some(scope)));
                n.3 += 1;
            } else if n.4 < 1 && ascii(w[k]) && ascii(w[k + 1]) {
                // A regex spanning two words, by its literal with a space.
                let pat = format!("{}\\s+{}", w[k], &w[k + 1][..3]);
                cases.push(regex_case(pat, scope));
                n.4 += 1;
            } else if n.5 < 2 && ascii(w[k]) && ascii(w[k + 1]) {
                // One word beside a space (a regex half typed): the
                // pairs answer it.
                let pat = match n.5 {
                    0 => format!("{}\\s", w[k]),
                    _ => format!("\\s{}", &w[k + 1][..3]),
                };
                cases.push(regex_case(pat, scope));
                n.5 += 1;
            } else if n.0 < 2 && plain(w[k]) {
                cases.push((w[k].to_string(), Needle::Text(w[k].into()), Some(scope)));
                n.0 += 1;
            } else if n.1 < 2 && plain(w[k]) && plain(w[k + 1]) {
                let p = format!("{} {}", w[k], w[k + 1]);
                cases.push((format!("\"{p}\""), Needle::Text(p), Some(scope)));
                n.1 += 1;
            } else if n.6 < 2 && ascii(w[k]) {
                // A letter or two: in nearly every term (the longest lists
                // are read first, and a segment stops once it gave all its
                // sessions).
                let p = match n.6 {
                    0 => w[k][..1].to_string(),
                    _ => w[k][1..3].to_string(),
                };
                cases.push((format!("\"{p}\""), Needle::Text(p), Some(scope)));
                n.6 += 1;
            } else if n.2 < 1 && plain(w[k]) && w[k].is_ascii() {
                let lit = &w[k][..3];
                let pat = format!("{lit}\\w+\\s\\S");
                cases.push(regex_case(pat, scope));
                n.2 += 1;
            }
        }
        assert!(n.0 > 0 && n.1 > 0 && n.2 > 0 && n.6 > 0, "{scope}: {n:?}");
    }
    // Three-word phrases and regexes spanning words are among them.
    assert!(cases.iter().any(|c| c.0.matches(' ').count() == 2));
    assert!(cases.iter().any(|c| c.0.contains("\\s+")));
    // Every case again without a scope.
    let unscoped: Vec<(String, Needle, Option<&str>)> = cases
        .iter()
        .step_by(2)
        .map(|(q, n, _)| {
            let n = match n {
                Needle::Text(t) => Needle::Text(t.clone()),
                Needle::Regex(r) => Needle::Regex(r.clone()),
            };
            (q.clone(), n, None)
        })
        .collect();
    cases.extend(unscoped);
    let mut checked = 0;
    for no_index in [false, true] {
        for (q, needle, scope) in &cases {
            let query = match scope {
                Some(s) => format!("{q} in:{s}"),
                None => q.clone(),
            };
            let in_scope = |s: &str| scope.is_none_or(|x| x == s);
            let expected: BTreeSet<&PathBuf> = sessions
                .iter()
                .filter(|(_, es)| {
                    es.iter()
                        .flat_map(|(_, ps)| ps.iter())
                        .any(|(s, t)| in_scope(s) && needle.is_in(t))
                })
                .map(|(p, _)| p)
                .collect();
            assert!(!expected.is_empty(), "{query}: taken from the text");
            let hits = search(&root, &cache, &query, no_index);
            let found: BTreeSet<&PathBuf> = hits.iter().map(|(p, _)| p).collect();
            let missing: Vec<_> = expected.difference(&found).collect();
            assert!(
                missing.is_empty(),
                "{query} (no_index {no_index}): arbor misses {missing:?}"
            );
            let extra: Vec<_> = found.difference(&expected).collect();
            assert!(
                extra.is_empty(),
                "{query} (no_index {no_index}): arbor finds more: {extra:?}"
            );
            // Every entry returned holds the match in scope.
            for (p, id) in &hits {
                let es = &sessions[p];
                let e = es.iter().find(|(eid, _)| eid == id);
                let ok =
                    e.is_some_and(|(_, ps)| ps.iter().any(|(s, t)| in_scope(s) && needle.is_in(t)));
                assert!(ok, "{query}: entry {id} of {} has no match", p.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "{checked}");
}

#[test]
fn a_string_only_in_tool_output_is_found_wherever_grep_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    gen_corpus(
        &root,
        &[
            "--profile",
            "realistic",
            "--sessions",
            "30",
            "--seed",
            "9",
            "--max-mb",
            "1",
        ],
    );
    let cache = dir.path().join("cache");
    let files = session_files(&root);
    let sessions: Vec<(PathBuf, Entries)> = files
        .iter()
        .map(|f| (f.clone(), oracle_entries(f)))
        .collect();
    // Tokens of tool results that no other part of any session has.
    let mut tool_only: BTreeMap<String, usize> = BTreeMap::new();
    let mut elsewhere: BTreeSet<String> = BTreeSet::new();
    for (_, es) in &sessions {
        for (_, ps) in es {
            for (s, t) in ps {
                for w in t.split(' ') {
                    if *s == "tools" {
                        *tool_only.entry(w.to_string()).or_default() += 1;
                    } else {
                        elsewhere.insert(w.to_string());
                    }
                }
            }
        }
    }
    let grep = |w: &str| -> BTreeSet<PathBuf> {
        let out = std::process::Command::new("grep")
            .args(["-rliF", "--include=*.jsonl", w])
            .arg(&root)
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(PathBuf::from)
            .filter(|p| !internal(p))
            .collect()
    };
    let mut tried = 0;
    for (w, _) in tool_only.iter().filter(|(w, n)| {
        **n >= 2
            && w.len() >= 6
            && w.chars().all(|c| c.is_ascii_alphanumeric())
            && !elsewhere.iter().any(|e| e.contains(w.as_str()))
    }) {
        let by_grep = grep(w);
        // Keep words grep finds only where they are text (not in ids,
        // keys or details).
        let by_oracle: BTreeSet<PathBuf> = sessions
            .iter()
            .filter(|(_, es)| {
                es.iter()
                    .flat_map(|(_, ps)| ps.iter())
                    .any(|(_, t)| t.contains(w.as_str()))
            })
            .map(|(p, _)| p.clone())
            .collect();
        if by_grep != by_oracle || by_grep.len() < 2 {
            continue;
        }
        for no_index in [false, true] {
            let found: BTreeSet<PathBuf> = search(&root, &cache, w, no_index)
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            assert_eq!(found, by_grep, "{w} (no_index {no_index})");
        }
        // And with `arbor list --query`, the picker's ranking.
        let listed = common::run_ok(
            arbor()
                .env("ARBOR_CACHE_DIR", &cache)
                .arg("--store")
                .arg(&root)
                .args(["list", "--all", "--json", "--query", w]),
        );
        let listed: BTreeSet<PathBuf> = listed
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                PathBuf::from(v["path"].as_str().unwrap())
            })
            .collect();
        assert!(by_grep.is_subset(&listed), "{w}: list --query");
        tried += 1;
        if tried == 5 {
            break;
        }
    }
    assert!(tried >= 3, "found {tried} tool-only words");
}

#[test]
fn search_json_shape_limit_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let proj = root.join("--w--");
    std::fs::create_dir_all(&proj).unwrap();
    let file = proj.join("2026-01-01T00-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl");
    std::fs::write(
        &file,
        [
            r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#,
            r#"{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"run the zebra tests"}}"#,
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":{"command":"cargo test"}}]}}"#,
            r#"{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"thread panicked: Zebra stripes\nmissing"}]}}"#,
            "",
        ]
        .join("\n"),
    )
    .unwrap();
    let cache = dir.path().join("cache");
    let run = |args: &[&str]| {
        arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .arg("search")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--all", "--json", "zebra"]);
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Best first: the user's message, then the tool's output.
    assert_eq!(lines.len(), 2);
    let v = &lines[0];
    let keys: BTreeSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "path",
            "sessionId",
            "entryId",
            "role",
            "timestamp",
            "snippet",
            "part",
            "match",
            "host"
        ]
        .into()
    );
    assert_eq!(v["host"], Value::Null, "a session of this machine");
    assert_eq!(v["path"].as_str().unwrap(), file.to_str().unwrap());
    assert!(Path::new(v["path"].as_str().unwrap()).is_absolute());
    assert_eq!(v["sessionId"], "0199aaaa-0000-7000-8000-000000000001");
    assert_eq!(v["entryId"], "u1");
    assert_eq!(v["role"], "user");
    assert_eq!(v["timestamp"], "2026-01-01T00:00:01.000Z");
    assert_eq!(v["snippet"], "run the zebra tests");
    assert_eq!(v["match"], serde_json::json!([8, 13]));
    let w = &lines[1];
    assert_eq!(
        (&w["entryId"], &w["role"]),
        (&"r1".into(), &"toolResult".into())
    );
    assert_eq!(w["snippet"], "thread panicked: Zebra stripes missing");
    assert_eq!(w["part"], "toolOutput");
    // --limit, scopes, and the plain lines.
    let out = run(&["--all", "--json", "--limit", "1", "zebra"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 1);
    let out = run(&["--all", "--json", "zebra", "in:tools"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("\"r1\"") && !text.contains("\"u1\""),
        "{text}"
    );
    let out = run(&["--all", "cargo", "test", "in:tools"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "2026-01-01 00:00  0199aaaa-0000-7000-8000-000000000001  a1  assistant  bash cargo test\n"
    );
    // Nothing matched: status 1, nothing printed; a bad query is an error.
    let out = run(&["--all", "--json", "giraffe"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let out = run(&["--all", "zebra", "in:elsewhere"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("in: takes"));
}

/// `arbor search` streams each session's lines (`file_entry_hits`): the
/// same hits, in the same order, as matching the read session's entries,
/// on the conformance corpus (odd shapes, versions 1 and 2, hostile files)
/// and the real pi sessions.
#[test]
fn streamed_entry_hits_are_the_read_sessions() {
    use arbor_search::hits::{entry_hits, file_entry_hits};
    use arbor_search::Query;
    let corpus = common::conformance_corpus();
    let mut files = Vec::new();
    let mut dirs = vec![
        corpus.path().to_path_buf(),
        common::shared_dir().join("realdata"),
    ];
    while let Some(d) = dirs.pop() {
        for f in std::fs::read_dir(&d).unwrap() {
            let f = f.unwrap().path();
            if f.is_dir() {
                dirs.push(f);
            } else if f.extension().is_some_and(|e| e == "jsonl")
                && std::fs::metadata(&f).is_ok_and(|m| m.len() < 1 << 20)
            {
                files.push(f);
            }
        }
    }
    assert!(files.len() > 30, "{} files", files.len());
    let queries = [
        "the",
        "user",
        "\"hello world\"",
        "re:\\d{3}",
        "in:tools ls",
        "in:thinking the",
        "in:user a",
        "error re:fail\\w*",
    ];
    let mut compared = 0;
    for f in &files {
        let Ok(session) = arbor_session::read_session(f) else {
            continue;
        };
        for q in queries {
            let query = Query::parse(q);
            let key = |h: &arbor_search::hits::EntryHit| {
                (
                    h.entry_id.clone(),
                    h.role.clone(),
                    h.score,
                    h.snippet.clone(),
                    h.highlight.clone(),
                )
            };
            let want: Vec<_> = entry_hits(&session.entries, &query)
                .iter()
                .map(key)
                .collect();
            let got: Vec<_> = file_entry_hits(f, &query)
                .unwrap()
                .iter()
                .map(key)
                .collect();
            assert_eq!(got, want, "{} {q:?}", f.display());
            compared += usize::from(!want.is_empty());
        }
    }
    assert!(compared > 50, "{compared} non-empty answers compared");
}

/// The index keeps word pairs only of short terms without digits or `/`
/// (`terms::pairable`): a phrase or a spanning regex with a path, a number
/// or a long word is found through the words' dictionaries instead, in
/// the stored text and in tool output alike, and nothing more is found.
#[test]
fn phrases_with_numbers_paths_and_long_words_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    let proj = root.join("--work-proj--");
    std::fs::create_dir_all(&proj).unwrap();
    let session = |name: &str, user: &str, output: &str| {
        let lines = [
            format!(
                r#"{{"type":"session","version":3,"id":"{name}","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/work/proj"}}"#
            ),
            format!(
                r#"{{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{user}"}}}}"#
            ),
            r#"{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"cargo build"}}]}}"#.to_string(),
            format!(
                r#"{{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{{"type":"text","text":"{output}"}}]}}}}"#
            ),
        ];
        let path = proj.join(format!("{name}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    };
    let s1 = session(
        "s1",
        "see line 42 of the file",
        "error at src/main.rs:42: cannot borrow",
    );
    let s2 = session(
        "s2",
        "line 42 the of file",
        "error at src/main.rs 42 cannot borrow",
    );
    let s3 = session(
        "s3",
        "plain words here",
        "averyveryverylongidentifier follows here",
    );
    let _s4 = session("s4", "nothing to see", "all clean");
    let cache = dir.path().join("cache");
    let cases: [(&str, Vec<&PathBuf>); 15] = [
        (r#""main.rs:42: cannot""#, vec![&s1]),
        (r#""main.rs:42: cannot" in:tools"#, vec![&s1]),
        (r#""line 42 of""#, vec![&s1]),
        (r#""line 42 of" in:user"#, vec![&s1]),
        (r#""42 cannot""#, vec![&s2]),
        (r#""verylongidentifier follows""#, vec![&s3]),
        (r#""identifier follows here""#, vec![&s3]),
        (r"re:rs:42:\s+cannot", vec![&s1]),
        (r#""follows here""#, vec![&s3]),
        // A word beside a space: a word ending so and followed by one, or
        // starting so after one (never at a text's end).
        (r"re:cannot\s", vec![&s1, &s2]),
        (r"re:borrow\s", vec![]),
        (r"re:\sfollows", vec![&s3]),
        (r"re:\sfollow in:user", vec![]),
        // Before a number (whose side is empty: a half pair).
        (r"re:line\s", vec![&s1, &s2]),
        (r"re:rs\s", vec![&s2]),
    ];
    for (q, want) in cases {
        let want: BTreeSet<&PathBuf> = want.into_iter().collect();
        for no_index in [false, true] {
            let hits = search(&root, &cache, q, no_index);
            let found: BTreeSet<&PathBuf> = hits.iter().map(|(p, _)| p).collect();
            assert_eq!(found, want, "{q} (no_index {no_index})");
        }
    }
}

/// Only the best part a session matches ranks it, so the index reads a
/// session's file to confirm a lower part only when its text has not
/// already found it: of three sessions with `token <word>` in their tool
/// output, the two with it in their conversation too are not read, and
/// the listing is the one a reading of every file gives, in the same order.
#[test]
fn a_session_its_text_found_is_not_read_for_a_lower_part() {
    use serde_json::json;
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let dir = store.path().join("--work--");
    std::fs::create_dir_all(&dir).unwrap();
    for (n, user) in [
        (1, "please check the token refresh"),
        (2, "nothing to see"),
        (3, "the token expiry is wrong"),
    ] {
        let id = format!("0199bbbb-0000-7000-8000-00000000000{n}");
        let t = |s: u32| format!("2026-01-0{n}T00:00:0{s}.000Z");
        let lines = [
            json!({"type":"session","version":3,"id":id,"timestamp":t(0),"cwd":"/work"}),
            json!({"type":"message","id":"u1","parentId":null,"timestamp":t(1),
                   "message":{"role":"user","content":[{"type":"text","text":user}]}}),
            json!({"type":"message","id":"a1","parentId":"u1","timestamp":t(2),
                   "message":{"role":"assistant","content":[
                       {"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}]}}),
            json!({"type":"message","id":"t1","parentId":"a1","timestamp":t(3),
                   "message":{"role":"toolResult","toolCallId":"c1","toolName":"bash",
                       "content":[{"type":"text","text":"saw token   cache in the log"}]}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let name = format!("2026-01-0{n}T00-00-00-000Z_{id}.jsonl");
        std::fs::write(dir.join(name), text).unwrap();
    }
    let list = |traced: bool, no_index: bool| {
        let mut cmd = arbor();
        cmd.env("ARBOR_CACHE_DIR", cache.path())
            .arg("--store")
            .arg(store.path())
            .args(["list", "--all", "--json", "--query", r"re:token\s+\w+"]);
        if traced {
            cmd.env("ARBOR_TRACE", "1");
        }
        if no_index {
            cmd.arg("--no-index");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    list(false, false); // Builds the index.
    let (listed, trace) = list(true, false);
    assert!(
        trace.contains("search: reading 1 session files"),
        "only the session whose text lacks it is read:\n{trace}"
    );
    let ids = |out: &str| -> Vec<String> {
        out.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].to_string())
            .collect()
    };
    assert_eq!(ids(&listed).len(), 3, "{listed}");
    assert_eq!(ids(&listed), ids(&list(false, true).0));
}
