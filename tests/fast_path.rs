//! The list-row fast path (a validating skimmer) must give exactly the rows
//! that the general `serde_json` path gives, on every corpus and on mangled
//! lines.

use crate::common;

use std::path::{Path, PathBuf};

use arbor_session::info::{scan_info_bytes, scan_info_bytes_reference, scan_info_bytes_skimmed};
use proptest::prelude::*;

fn jsonl_files(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(m) = std::fs::metadata(&p) else {
            continue;
        };
        if m.is_dir() {
            if !std::fs::symlink_metadata(&p)
                .unwrap()
                .file_type()
                .is_symlink()
            {
                jsonl_files(&p, out);
            }
        } else if m.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// The fast path, and the index build's (one skim for the row and the
/// words), both give the reference's row.
fn same(path: &Path, bytes: &[u8]) {
    let fast = scan_info_bytes(path, bytes, 42).map_err(|e| e.to_string());
    let reference = scan_info_bytes_reference(path, bytes, 42).map_err(|e| e.to_string());
    assert_eq!(fast, reference, "{}", path.display());
    if !bytes.starts_with(HEADER.as_bytes()) && reference.is_err() {
        // Another agent's file: the index translates it first.
        return;
    }
    let skimmed = scan_info_bytes_skimmed(path, bytes, 42).map_err(|e| e.to_string());
    assert_eq!(skimmed, reference, "skimmed: {}", path.display());
}

#[test]
fn conformance_and_realistic_corpora() {
    let dir = common::conformance_corpus();
    let real = dir.path().join("real");
    common::gen_corpus(
        &real,
        &[
            "--profile",
            "realistic",
            "--sessions",
            "40",
            "--seed",
            "3",
            "--max-mb",
            "2",
        ],
    );
    let mut files = Vec::new();
    jsonl_files(dir.path(), &mut files);
    assert!(files.len() > 100, "{}", files.len());
    for f in &files {
        same(f, &std::fs::read(f).unwrap());
    }
}

const HEADER: &str = r#"{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

fn sample_lines() -> Vec<String> {
    let long = "word ".repeat(20);
    vec![
        format!(
            r#"{{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"hi \"there\"\n{long} é ✓","timestamp":1767225601000}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"hmm {long}"}},{{"type":"text","text":"\n done\t{long}\\n\nmore"}},{{"type":"toolCall","id":"t","name":"bash","arguments":{{"command":"ls -la \\\\ {long}"}}}}],"model":"m-1","usage":{{"totalTokens":12,"cost":{{"total":0.5}}}},"timestamp":1767225602000}}}}"#
        ),
        format!(
            r#"{{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"toolResult","toolCallId":"t","toolName":"bash","content":[{{"type":"text","text":"{long}\n{long}"}},{{"type":"image","data":"iVBORw0KGgo{long}","mimeType":"image/png"}}],"isError":false,"timestamp":1767225603000}}}}"#
        ),
        r#"{"type":"session_info","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:04.000Z","name":"  My name  "}"#.to_string(),
        r#"{"type":"session_summary","id":"a5","parentId":"a4","timestamp":"2026-01-01T00:00:05.000Z","summary":"sum","summarizedThroughId":"a2"}"#.to_string(),
        r#"{"type":"branch_summary","id":"a6","parentId":"a5","timestamp":"2026-01-01T00:00:06.000Z","fromId":"a1","summary":"x"}"#.to_string(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn mangled_lines_agree(
        which in 0usize..6,
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8, any::<u8>()), 0..4),
    ) {
        let lines = sample_lines();
        let mut line = lines[which].clone().into_bytes();
        for (at, op, byte) in edits {
            if line.is_empty() {
                break;
            }
            let i = at.index(line.len());
            let b = match op {
                0 => b'"',
                1 => b'\\',
                2 => byte % 0x20,
                3 => 0x80 | byte,
                4 => b'u',
                5 => b'}',
                6 => { line.truncate(i); continue; }
                _ => { line.remove(i); continue; }
            };
            line.insert(i, b);
        }
        let mut file = HEADER.as_bytes().to_vec();
        file.push(b'\n');
        for l in &lines[..which] {
            file.extend_from_slice(l.as_bytes());
            file.push(b'\n');
        }
        file.extend_from_slice(&line);
        file.push(b'\n');
        same(Path::new("/x.jsonl"), &file);
        // And as an unterminated last line.
        file.pop();
        same(Path::new("/x.jsonl"), &file);
    }
}

#[test]
fn invalid_escape_before_a_multibyte_character_is_skipped_not_a_panic() {
    let file = format!("{HEADER}\n{{\"type\":\"message\",\"x\":\"\\é\"}}\n");
    same(Path::new("/x.jsonl"), file.as_bytes());
    let info = scan_info_bytes(Path::new("/x.jsonl"), file.as_bytes(), 0).unwrap();
    assert_eq!(info.diagnostics.skipped_lines, 1);
}
