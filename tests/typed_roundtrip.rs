//! The typed view of entries (`session::types`) against every entry of the
//! demo store and of the conformance corpus: whenever `TypedEntry::from_raw`
//! gives a typed variant, `to_raw` must give back exactly the JSON it came
//! from; and only genuinely odd lines may stay `Unknown`.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{conformance_corpus, demo_store};
use arbor_session::read_session;
use arbor_session::types::TypedEntry;

fn session_files(root: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() && !p.is_symlink() {
            session_files(&p, out);
        } else if p.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// Where two JSON values first differ, as `path: a != b`.
fn first_difference(a: &Value, b: &Value, path: &str) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                match y.get(k) {
                    Some(w) if w == v => {}
                    Some(w) => return first_difference(v, w, &format!("{path}.{k}")),
                    None => return format!("{path}.{k}: {v} dropped"),
                }
            }
            for (k, w) in y {
                if !x.contains_key(k) {
                    return format!("{path}.{k}: {w} added");
                }
            }
            format!("{path}: equal?")
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                if v != w {
                    return first_difference(v, w, &format!("{path}[{i}]"));
                }
            }
            format!("{path}: equal?")
        }
        _ => format!("{path}: {a} became {b}"),
    }
}

#[derive(Default)]
struct Tally {
    typed: usize,
    /// (file, entry type) of lines that stayed Unknown.
    unknown: Vec<(String, String, String)>,
    mismatches: Vec<String>,
}

fn walk(root: &Path, label: &str, tally: &mut Tally) {
    let mut files = Vec::new();
    session_files(root, &mut files);
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let Ok(s) = read_session(&f) else { continue };
        let name = format!("{label}/{}", f.strip_prefix(root).unwrap().display());
        for e in &s.entries {
            match TypedEntry::from_raw(&e.raw) {
                TypedEntry::Unknown(m) => {
                    assert_eq!(m, e.raw, "Unknown keeps the raw object");
                    let why = serde_json::from_value::<TypedEntry>(Value::Object(e.raw.clone()))
                        .err()
                        .map(|e| e.to_string())
                        .unwrap_or_default();
                    tally
                        .unknown
                        .push((name.clone(), e.entry_type().to_string(), why));
                }
                typed => {
                    tally.typed += 1;
                    let back = Value::Object(typed.to_raw());
                    let raw = Value::Object(e.raw.clone());
                    if back != raw {
                        tally.mismatches.push(format!(
                            "{name} entry {}: {}",
                            e.id,
                            first_difference(&raw, &back, "")
                        ));
                    }
                }
            }
        }
    }
}

#[test]
fn typed_entries_round_trip() {
    let mut tally = Tally::default();
    let demo = demo_store();
    walk(&demo.path().join("sessions"), "demo", &mut tally);
    let conf = conformance_corpus();
    walk(&conf.path().join("corpus"), "conformance", &mut tally);
    // The real pi files too (read-only: nothing is written here).
    walk(
        &common::shared_dir().join("realdata"),
        "realdata",
        &mut tally,
    );

    let mut by_type: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, ty, _) in &tally.unknown {
        *by_type.entry(ty.as_str()).or_default() += 1;
    }
    eprintln!(
        "typed round trip: {} typed, {} unknown; unknown by type: {by_type:?}",
        tally.typed,
        tally.unknown.len()
    );
    for (f, ty, why) in &tally.unknown {
        eprintln!("  unknown {ty:?} in {f}: {why}");
    }
    assert!(
        tally.mismatches.is_empty(),
        "{} typed entries do not round-trip:\n{}",
        tally.mismatches.len(),
        tally.mismatches.join("\n")
    );
    assert!(tally.typed > 9000, "only {} typed entries", tally.typed);

    // Unknown only where the line is genuinely odd: the adversarial files
    // (wrong field types, `message: null`, a second header, `{}`) and c44,
    // the "lax and historical" case (null/string content where blocks are
    // due, a `system` role, `redacted_thinking` blocks, a future type).
    let odd = |f: &str| f.contains("--adversarial--/") || f.contains("_0199a682-9600-");
    let unexpected: Vec<_> = tally.unknown.iter().filter(|(f, _, _)| !odd(f)).collect();
    assert!(unexpected.is_empty(), "lines left untyped: {unexpected:#?}");
}

/// The two shapes the round trip above found lossy or rejected.
#[test]
fn numbers_and_legacy_usage_round_trip() {
    let line = |usage: &str| -> serde_json::Map<String, Value> {
        let v: Value = serde_json::from_str(&format!(
            r#"{{"type":"message","id":"a","parentId":null,"timestamp":"t",
                "message":{{"role":"assistant","content":[],"usage":{usage}}}}}"#
        ))
        .unwrap();
        v.as_object().unwrap().clone()
    };
    for usage in [
        // Integers stay integers (an f64 field wrote them back as 5.0).
        r#"{"input":5,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":12,
            "cost":{"input":0,"output":0.5,"cacheRead":0,"cacheWrite":0,"total":0.5}}"#,
        // Legacy usage without totalTokens is typed, and stays without it.
        r#"{"input":5,"output":7,"cacheRead":0,"cacheWrite":0,
            "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#,
        // An explicit null survives as null.
        r#"{"input":5,"output":7,"cacheRead":0,"cacheWrite":0,"totalTokens":null,
            "cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}"#,
    ] {
        let raw = line(usage);
        let typed = TypedEntry::from_raw(&raw);
        assert!(!matches!(typed, TypedEntry::Unknown(_)), "{usage}");
        assert_eq!(Value::Object(typed.to_raw()), Value::Object(raw));
    }
}
