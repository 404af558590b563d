//! The fast loader against the reference reader.
//!
//! `parse_session` skims each line for the facts the tree needs and keeps
//! the line for later; `parse_session_eager` is the reader as it was, every
//! line parsed into a JSON object up front. They must agree on everything:
//! the header, every entry (index, id, parent, the object itself, type,
//! role, timestamp, label fields), the tool calls and the diagnostics, on
//! generated lines aimed at the skimmer's edges, on the conformance corpus,
//! the real pi files and a multi-chunk session; and `arbor show --json`,
//! now written straight out, prints what the JSON value it was built as
//! printed.

use crate::common;

use std::path::Path;

use proptest::prelude::*;
use serde_json::{json, Map, Value};

use arbor_session::reader::{parse_session, parse_session_eager};
use arbor_session::tree::write_json;
use arbor_session::{Session, SessionTree};

fn same(a: &Session, b: &Session) -> Result<(), String> {
    let check = |what: &str, ok: bool| if ok { Ok(()) } else { Err(what.to_string()) };
    check("header", a.header == b.header)?;
    check("version", a.file_version == b.file_version)?;
    check("diagnostics", a.diagnostics == b.diagnostics)?;
    check("entry count", a.entries.len() == b.entries.len())?;
    for (x, y) in a.entries.iter().zip(&b.entries) {
        if x != y {
            return Err(format!("entry {}: {x:?} != {y:?}", x.index));
        }
        // The accessors, one by one (the derived equality covers them too).
        check("type", x.entry_type() == y.entry_type())?;
        check("role", x.role() == y.role())?;
        check("timestamp", x.timestamp() == y.timestamp())?;
        for k in ["label", "targetId", "name", "summary", "customType"] {
            check(k, x.str_field(k) == y.str_field(k))?;
        }
        check("message", x.message() == y.message())?;
        check("text", x.assistant_text() == y.assistant_text())?;
        check("stop", x.assistant_stop() == y.assistant_stop())?;
    }
    check("calls", a.calls.to_sorted_vec() == b.calls.to_sorted_vec())?;
    Ok(())
}

/// `arbor show --json` as it was built: a JSON value per entry.
fn reference_show_json(s: &Session) -> String {
    let t = SessionTree::build(s);
    let mut labels = Map::new();
    for e in &s.entries {
        if let Some(l) = t.labels.get(e.id.as_str()) {
            labels.insert(e.id.to_string(), l.text.clone().into());
        }
    }
    let entries: Vec<Value> = s
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut m = Map::new();
            m.insert("id".into(), e.id.to_string().into());
            m.insert(
                "parentId".into(),
                e.parent_id
                    .as_deref()
                    .map(Value::from)
                    .unwrap_or(Value::Null),
            );
            m.insert("type".into(), e.entry_type().into());
            if let Some(r) = e.role() {
                m.insert("role".into(), r.into());
            }
            if let Some(l) = t.labels.get(e.id.as_str()) {
                m.insert("label".into(), l.text.clone().into());
            }
            m.insert("depth".into(), t.depth[i].into());
            m.insert("onActivePath".into(), t.on_active_path[i].into());
            Value::Object(m)
        })
        .collect();
    json!({
        "id": s.id(),
        "leafId": t.leaf.map(|l| s.entries[l].id.to_string()),
        "name": t.display_name(),
        "labels": labels,
        "entries": entries,
    })
    .to_string()
}

fn show_json(s: &Session) -> String {
    let mut out = Vec::new();
    write_json(s, &SessionTree::build(s), &mut out);
    String::from_utf8(out).unwrap()
}

fn agree(buf: &[u8]) -> Result<(), String> {
    let path = Path::new("t.jsonl");
    match (parse_session(path, buf), parse_session_eager(path, buf)) {
        (Ok(a), Ok(b)) => {
            same(&a, &b)?;
            if show_json(&a) != reference_show_json(&b) {
                return Err(format!(
                    "show --json differs:\n{}\n{}",
                    show_json(&a),
                    reference_show_json(&b)
                ));
            }
            Ok(())
        }
        (Err(a), Err(b)) if a.to_string() == b.to_string() => Ok(()),
        (a, b) => Err(format!(
            "one fails: {:?} / {:?}",
            a.err().map(|e| e.to_string()),
            b.err().map(|e| e.to_string())
        )),
    }
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp/p"}"#;

fn id_value() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => prop_oneof![Just("a1"), Just("a2"), Just("b7"), Just("é\"q")].prop_map(|s| Some(json!(s))),
        1 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(json!(12))),
        1 => Just(Some(json!(1.5))),
        1 => Just(Some(json!({"x": [1, "y"]}))),
        1 => Just(Some(json!(true))),
    ]
}

fn string_or_odd(choices: &'static [&'static str]) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        5 => prop::sample::select(choices).prop_map(|s| Some(json!(s))),
        1 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(json!(3))),
        1 => Just(Some(json!(["x"]))),
    ]
}

fn block() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => (
            string_or_odd(&["toolCall", "text", "thinking", "toolcall"]),
            id_value(),
            string_or_odd(&["read", "bash", "write", "grep", ""]),
            prop_oneof![
                Just(None),
                Just(Some(json!({"path": "a.rs", "offset": 3, "limit": 9}))),
                Just(Some(json!("raw"))),
                Just(Some(Value::Null)),
                Just(Some(json!({"command": "ls\n-la", "n": [1, 2.5, -0.0, 1e-7]}))),
            ],
        )
            .prop_map(|(ty, id, name, args)| {
                let mut m = Map::new();
                for (k, v) in [("type", ty), ("id", id), ("name", name), ("arguments", args)] {
                    if let Some(v) = v {
                        m.insert(k.into(), v);
                    }
                }
                Value::Object(m)
            }),
        1 => prop::sample::select(&["  \n hi", " \t\n", "", "\u{85}", " \u{feff} ", "\u{a0}x", "\\n"][..])
            .prop_map(|t| json!({"type": "text", "text": t})),
        1 => Just(json!({"type": "text", "text": 5})),
        1 => Just(json!("a string block")),
        1 => Just(json!(7)),
    ]
}

fn line() -> impl Strategy<Value = Value> {
    let message = prop_oneof![
        4 => (
            string_or_odd(&["user", "assistant", "toolResult", "custom", "weird"]),
            prop_oneof![
                Just(json!("plain text")),
                Just(json!("  \u{85} ")),
                Just(json!(" \n ")),
                prop::collection::vec(block(), 0..4).prop_map(Value::Array),
                Just(json!({"not": "an array"})),
            ],
            prop_oneof![
                Just(None),
                prop::sample::select(&["toolUse", "stop", "error", "aborted", "length", "", "other"][..]).prop_map(|s| Some(json!(s))),
                prop::sample::select(vec![json!(null), json!(true), json!(false), json!(0), json!(0.0), json!(2), json!([]), json!({})]).prop_map(Some),
            ],
        )
            .prop_map(|(role, content, stop)| {
                let mut m = Map::new();
                if let Some(r) = role {
                    m.insert("role".into(), r);
                }
                m.insert("content".into(), content);
                if let Some(s) = stop {
                    m.insert("stopReason".into(), s);
                }
                Some(Value::Object(m))
            }),
        1 => Just(None),
        1 => Just(Some(json!("a string message"))),
        1 => Just(Some(json!([1, 2]))),
    ];
    (
        string_or_odd(&[
            "message",
            "label",
            "session_info",
            "compaction",
            "novel_type",
            "",
        ]),
        id_value(),
        id_value(),
        string_or_odd(&["2025-01-01T00:00:01.000Z", "yesterday"]),
        message,
        string_or_odd(&["start", "", "ü"]),
        string_or_odd(&["a1", "zz"]),
        string_or_odd(&["  named  ", ""]),
    )
        .prop_map(|(ty, id, parent, ts, msg, label, target, name)| {
            let mut m = Map::new();
            for (k, v) in [
                ("type", ty),
                ("id", id),
                ("parentId", parent),
                ("timestamp", ts),
                ("message", msg),
                ("label", label),
                ("targetId", target),
                ("name", name),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), v);
                }
            }
            Value::Object(m)
        })
}

/// Textual changes the skimmer must hand to the general parser, or read
/// exactly as it would.
#[derive(Debug, Clone)]
enum Twist {
    None,
    EscapeKey(&'static str),
    EscapeValue(&'static str),
    Duplicate(&'static str),
    BigNumber(&'static str),
    Surrogate,
    Deep(usize),
    Bom,
    InvalidUtf8,
    Crlf,
    Whitespace,
}

fn twist() -> impl Strategy<Value = Twist> {
    prop_oneof![
        8 => Just(Twist::None),
        1 => prop::sample::select(&["id", "parentId", "type", "message", "role", "content", "name", "arguments", "label", "stopReason", "text"][..]).prop_map(Twist::EscapeKey),
        1 => prop::sample::select(&["message", "assistant", "toolCall", "a1", "start", "text", "error", "plain text"][..]).prop_map(Twist::EscapeValue),
        1 => prop::sample::select(&["\"id\":\"dup\"", "\"type\":\"label\"", "\"message\":{\"role\":\"user\"}", "\"label\":\"x\"", "\"other\":1,\"other\":2"][..]).prop_map(Twist::Duplicate),
        1 => prop::sample::select(&["1e400", "-2E+308", "1e308", "1.5e-400", "12345678901234567890123"][..]).prop_map(Twist::BigNumber),
        1 => Just(Twist::Surrogate),
        1 => prop_oneof![Just(60usize), Just(99), Just(101), Just(130)].prop_map(Twist::Deep),
        1 => Just(Twist::Bom),
        1 => Just(Twist::InvalidUtf8),
        1 => Just(Twist::Crlf),
        1 => Just(Twist::Whitespace),
    ]
}

fn render(v: &Value, t: &Twist) -> Vec<u8> {
    let s = v.to_string();
    let after_brace = |extra: &str| {
        if s == "{}" {
            format!("{{{extra}}}")
        } else {
            format!("{{{extra},{}", &s[1..])
        }
    };
    let out = match t {
        Twist::None => s.clone(),
        Twist::EscapeKey(k) => {
            let mut e = String::new();
            for (i, c) in k.chars().enumerate() {
                if i == 0 {
                    e.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    e.push(c);
                }
            }
            s.replacen(&format!("\"{k}\":"), &format!("\"{e}\":"), 1)
        }
        Twist::EscapeValue(v) => s.replacen(
            &format!("\"{v}\""),
            &format!(
                "\"{}\\u{:04x}\"",
                &v[..v.len() - 1],
                v.as_bytes()[v.len() - 1]
            ),
            1,
        ),
        Twist::Duplicate(d) => after_brace(d),
        Twist::BigNumber(n) => after_brace(&format!("\"big\":{n}")),
        Twist::Surrogate => s.replacen("a1", "a\\ud83d1", 1),
        Twist::Deep(d) => after_brace(&format!("\"deep\":{}{}", "[".repeat(*d), "]".repeat(*d))),
        Twist::Bom => format!("\u{feff}{s}"),
        Twist::InvalidUtf8 => {
            let mut b = s.into_bytes();
            if let Some(p) = b.iter().position(|&c| c == b'"') {
                b.insert(p + 1, 0xff);
            }
            return b;
        }
        Twist::Crlf => format!("{s}\r"),
        Twist::Whitespace => format!(" {}", s.replacen(':', " : ", 2).replacen(',', " ,\t", 2)),
    };
    out.into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000),
        ..ProptestConfig::default()
    })]

    #[test]
    fn the_fast_loader_reads_what_the_reference_reads(
        lines in prop::collection::vec((line(), twist()), 0..20),
        header_version in prop_oneof![Just(3u32), Just(2), Just(1)],
        final_newline in any::<bool>(),
        blank_first in any::<bool>(),
    ) {
        let mut buf = Vec::new();
        if blank_first {
            buf.extend_from_slice(b"  \nnot json\n");
        }
        buf.extend_from_slice(HEADER.replace("\"version\":3", &format!("\"version\":{header_version}")).as_bytes());
        for (v, t) in &lines {
            buf.push(b'\n');
            buf.extend_from_slice(&render(v, t));
        }
        if final_newline {
            buf.push(b'\n');
        }
        if let Err(e) = agree(&buf) {
            return Err(TestCaseError::fail(format!("{e}\n{}", String::from_utf8_lossy(&buf))));
        }
    }

    #[test]
    fn random_bytes_after_a_header(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut buf = format!("{HEADER}\n").into_bytes();
        buf.extend_from_slice(&bytes);
        prop_assert!(agree(&buf).is_ok(), "{:?}", agree(&buf));
        prop_assert!(agree(&bytes).is_ok());
    }
}

#[test]
fn conformance_and_real_files_load_as_the_reference_reads_them() {
    let shared = common::shared_dir();
    let mut n = 0;
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo-store");
    for dir in [
        shared.join("conformance/corpus"),
        shared.join("realdata"),
        demo,
    ] {
        for f in walk(&dir) {
            if f.extension().is_some_and(|e| e == "jsonl") {
                let buf = std::fs::read(&f).unwrap();
                agree(&buf).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                n += 1;
            }
        }
    }
    assert!(n > 50, "only {n} files");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Several megabytes: read in several chunks on several threads, with a
/// partial last line; numbering, calls and diagnostics still match.
#[test]
fn a_session_read_in_chunks() {
    let mut buf = format!("{HEADER}\n").into_bytes();
    let mut parent = Value::Null;
    for i in 0..12_000 {
        let id = format!("e{i}");
        let call = format!("call{}", i % 500);
        let line = if i % 3 == 0 {
            json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:01.000Z",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "x".repeat(400)},
                    {"type": "toolCall", "id": call, "name": "read", "arguments": {"path": format!("f{i}.rs")}}]}})
        } else if i % 3 == 1 {
            json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2025-01-01T00:00:02.000Z",
                "message": {"role": "toolResult", "toolCallId": call, "content": [{"type": "text", "text": "y".repeat(600)}]}})
        } else {
            json!({"type": "label", "id": id, "parentId": parent, "targetId": "e0", "label": format!("l{i}")})
        };
        buf.extend_from_slice(line.to_string().as_bytes());
        buf.push(b'\n');
        if i % 1000 == 999 {
            buf.extend_from_slice(b"garbage line\n\n");
        }
        parent = json!(id);
    }
    buf.extend_from_slice(b"{\"type\":\"message\",\"id\":\"cut");
    assert!(buf.len() > 4 << 20);
    agree(&buf).unwrap();
    let s = parse_session(Path::new("t.jsonl"), &buf).unwrap();
    assert_eq!(s.entries.len(), 12_000);
    assert_eq!(s.diagnostics.skipped_lines, 12);
    assert!(s.diagnostics.partial_tail);
    // Entries are kept as lines until something reads them.
    assert!(s.entries.iter().all(|e| !e.raw.is_parsed()));
    let (name, args) = s.calls.get("call7").unwrap();
    assert_eq!(
        (name, args.into_owned()),
        ("read", json!({"path": "f11007.rs"}))
    );
}

/// Entries, tool calls and the search text read the same from the file once
/// the bytes are let go.
#[test]
fn entries_read_from_the_file_after_the_bytes_are_let_go() {
    use arbor_session::search_text::SearchText;
    let shared = common::shared_dir();
    let mut n = 0;
    for f in walk(&shared.join("conformance/corpus")) {
        if f.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let Ok(held) = arbor_session::read_session(&f) else {
            continue;
        };
        let released = arbor_session::read_session(&f).unwrap();
        if !released.release_bytes() {
            assert!(released.needs_migration(), "{}", f.display());
            continue;
        }
        n += 1;
        same(&released, &held).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let (a, b) = (SearchText::build(&released), SearchText::build(&held));
        for i in 0..held.entries.len() {
            assert_eq!(a.get(i), b.get(i), "{}", f.display());
        }
    }
    assert!(n > 50, "{n}");
}

/// Read a block at a time, never whole (the tree screen, `show --json`): the
/// same session as read whole, wherever the blocks cut the lines (blocks of
/// 1 byte to the default), with the same errors for files that are not
/// sessions.
#[test]
fn a_session_read_a_block_at_a_time_reads_as_one_read_whole() {
    use arbor_session::reader::read_session_lean_in;
    use arbor_session::search_text::SearchText;
    let shared = common::shared_dir();
    let mut files = walk(&shared.join("conformance/corpus"));
    files.extend(walk(&shared.join("realdata")));
    // A header after a megabyte of lines that are not JSON (read whole).
    let tmp = tempfile::tempdir().unwrap();
    let late = tmp.path().join("late-header.jsonl");
    let mut text = "not json\n".repeat(130_000);
    text.push_str(r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#);
    text.push('\n');
    text.push_str(r#"{"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#);
    files.push(late.clone());
    std::fs::write(&late, text).unwrap();
    let mut n = 0;
    for f in files {
        if f.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let whole = arbor_session::read_session(&f);
        for block in [1, 7, 300, 4096, 8 << 20] {
            let lean = read_session_lean_in(&f, block);
            let (whole, lean) = match (&whole, lean) {
                (Ok(w), Ok(l)) => (w, l),
                (Err(a), Err(b)) => {
                    assert_eq!(a.to_string(), b.to_string(), "{}", f.display());
                    continue;
                }
                (a, b) => panic!("{}: {:?} vs {:?}", f.display(), a.is_ok(), b.is_ok()),
            };
            n += 1;
            let at = |e: String| format!("{} (blocks of {block}): {e}", f.display());
            same(&lean, whole).unwrap_or_else(|e| panic!("{}", at(e)));
            assert_eq!(lean.bytes, whole.bytes, "{}", at(String::new()));
            assert_eq!(show_json(&lean), show_json(whole), "{}", at(String::new()));
            let (a, b) = (SearchText::build(&lean), SearchText::build(whole));
            for i in 0..whole.entries.len() {
                assert_eq!(a.get(i), b.get(i), "{}", at(format!("entry {i}")));
            }
        }
    }
    assert!(n > 300, "{n}");
}
