//! The picker's preview reads only what it shows: the same last messages as
//! the whole tree gives, from a bounded part of the file; lines too long to
//! hold are skipped and said to be; a 1,000,000-entry session previews in
//! little memory.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};

use arbor::ui::picker::{
    load_hits, load_hits_noting, load_preview, load_preview_with, PreviewLimits, Unread,
};
use arbor_search::Query;
use arbor_session::context::message_text;
use arbor_session::{read_session, SessionTree};

/// The last messages as the whole tree gives them (what the preview read
/// before it read only part of the file).
fn from_the_tree(path: &Path) -> Option<Vec<(String, String)>> {
    let session = read_session(path).ok()?;
    let tree = SessionTree::build(&session);
    let mut last = Vec::new();
    if let Some(leaf) = tree.leaf {
        for &i in tree.path_to(leaf).iter().rev() {
            let e = &session.entries[i];
            let Some(role) = e.role() else { continue };
            if role != "user" && role != "assistant" {
                continue;
            }
            let text = message_text(e.message());
            if text.trim().is_empty() {
                continue;
            }
            let text: String = text.chars().take(2000).collect();
            last.push((role.to_string(), text));
            if last.len() == 4 {
                break;
            }
        }
    }
    last.reverse();
    Some(last)
}

fn sessions_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            sessions_under(&p, out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// On every conformance and demo session (forks, branches, duplicate ids,
/// cycles, version 1 and 2 files, damaged lines), the preview's last
/// messages are the tree's.
#[test]
fn last_messages_match_the_whole_tree() {
    let corpus = common::conformance_corpus();
    let demo = common::demo_store();
    let mut files = Vec::new();
    sessions_under(corpus.path(), &mut files);
    sessions_under(demo.path(), &mut files);
    assert!(files.len() > 50, "{} sessions", files.len());
    let mut compared = 0;
    for f in &files {
        let Some(want) = from_the_tree(f) else {
            assert!(load_preview(f).is_err(), "{}", f.display());
            continue;
        };
        let got = load_preview(f).unwrap();
        assert_eq!(got.last_messages, want, "{}", f.display());
        assert_eq!(got.note, None);
        compared += 1;
    }
    assert!(compared > 50);
}

/// A session like a long agent run: a user message, then an assistant
/// answer with a tool call and the tool's result, over and over.
fn write_session(path: &Path, entries: usize, big_line_at: Option<(usize, usize)>) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    writeln!(
        w,
        r#"{{"type":"session","version":3,"id":"019ad000-0000-7000-8000-00000000beef","timestamp":"2026-11-29T10:00:00.000Z","cwd":"/home/u/big"}}"#
    )
    .unwrap();
    let mut parent = String::from("null");
    for i in 0..entries {
        let id = format!("{i:08x}");
        match big_line_at {
            Some((at, len)) if at == i => {
                write!(
                    w,
                    r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-11-29T10:00:01.000Z","message":{{"role":"user","content":""#
                )
                .unwrap();
                let chunk = "a pasted log line that goes on and on ".repeat(1000);
                let mut left = len;
                while left > 0 {
                    let n = left.min(chunk.len());
                    w.write_all(&chunk.as_bytes()[..n]).unwrap();
                    left -= n;
                }
                writeln!(w, r#"","timestamp":1795946401000}}}}"#).unwrap();
            }
            _ => match i % 3 {
                0 => writeln!(
                    w,
                    r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-11-29T10:00:01.000Z","message":{{"role":"user","content":"question {i}: please look at the parser module and tell me what the tokenizer does","timestamp":1795946401000}}}}"#
                ),
                1 => writeln!(
                    w,
                    r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-11-29T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"answer {i}: reading it"}},{{"type":"toolCall","id":"call_{id}","name":"read","arguments":{{"path":"src/parser.rs"}}}}],"usage":{{"input":1200,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":1280,"cost":{{"total":0.0012}}}},"stopReason":"toolUse","timestamp":1795946402000}}}}"#
                ),
                _ => writeln!(
                    w,
                    r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-11-29T10:00:03.000Z","message":{{"role":"toolResult","toolCallId":"call_{id}","toolName":"read","content":[{{"type":"text","text":"fn tokenize(input: &str) -> Vec<Token> {{ /* ... */ }}"}}],"isError":false,"timestamp":1795946403000}}}}"#
                ),
            }
            .unwrap(),
        }
        parent = format!("\"{id}\"");
    }
    w.flush().unwrap();
}

/// The preview of a big session reads its head and its tail, not the file;
/// a match near the start stops the search there.
#[test]
fn a_big_session_is_read_at_both_ends_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    write_session(&path, 90_002, None);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size > 20 << 20, "{size}");
    let limits = PreviewLimits::default();
    let (p, read) = load_preview_with(&path, &limits).unwrap();
    assert!(read <= 1 << 20, "read {read} of {size} bytes");
    let roles: Vec<&str> = p.last_messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(p.last_messages[3].1, "answer 90001: reading it");

    // The matching entries are read from the whole file, a line at a time.
    let (hits, total) = load_hits(&path, &Query::parse("\"question 30\""), &limits, &|| false)
        .unwrap()
        .unwrap();
    // "question 30", "question 300", … "question 30999": every one.
    assert_eq!(
        total,
        (0..90_002)
            .filter(|i| i % 3 == 0 && i.to_string().starts_with("30"))
            .count()
    );
    assert_eq!(hits[0].entry_id, format!("{:08x}", 30));
    let h = &hits[0];
    assert_eq!(&h.snippet[h.highlight.clone()], "question 30");
    assert_eq!((h.role.as_str(), h.index), ("user", 31));

    // A stale search gives up.
    let found = load_hits(
        &path,
        &Query::parse("nowhere-to-be-found"),
        &limits,
        &|| true,
    )
    .unwrap();
    assert_eq!(found, None);
}

/// A line too long to hold is skipped with a note, never read whole: the
/// last messages go on past it (its parent is read from its start), and
/// the search goes on after it.
#[test]
fn a_huge_line_is_skipped_and_said_to_be() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    // 30 entries; the user message at 27 is a 3 MB line.
    write_session(&path, 30, Some((27, 3 << 20)));
    let limits = PreviewLimits {
        max_line: 1 << 20,
        ..PreviewLimits::default()
    };
    let (p, _) = load_preview_with(&path, &limits).unwrap();
    assert_eq!(
        p.note.as_deref(),
        Some("A line of 3 MB is too long to preview: not read")
    );
    let texts: Vec<&str> = p.last_messages.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "answer 22: reading it",
            "question 24: please look at the parser module and tell me what the tokenizer does",
            "answer 25: reading it",
            "answer 28: reading it",
        ]
    );
    // The search for matches goes on past it.
    let (hits, _) = load_hits(&path, &Query::parse("\"question 24\""), &limits, &|| false)
        .unwrap()
        .unwrap();
    assert_eq!(hits.len(), 1);
    // With room for it, the line is read.
    let p = load_preview(&path).unwrap();
    assert_eq!(p.note, None);
    assert!(p.last_messages[2].1.starts_with("a pasted log line"));
}

/// Issue (hostile conditions, item 5): a match inside a line too long to
/// read is not "none in its entries": the search says the line was not
/// read, and the picker's preview says so.
#[test]
fn a_match_in_a_line_too_long_to_read_is_said_unread_not_absent() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    write_session(&path, 30, Some((27, 3 << 20)));
    let limits = PreviewLimits {
        max_line: 1 << 20,
        ..PreviewLimits::default()
    };
    let q = Query::parse("\"pasted log line\"");
    let (hits, total, unread) = load_hits_noting(&path, &q, &limits, &|| false)
        .unwrap()
        .unwrap();
    assert_eq!((hits.len(), total), (0, 0));
    assert_eq!(unread.lines, 1);
    assert!(unread.biggest > 3 << 20, "{}", unread.biggest);
    assert_eq!(
        unread.note().as_deref(),
        Some("a line of 3 MB is too long to read here: not searched")
    );
    // With room for it, it is read and matches.
    let (hits, _, unread) = load_hits_noting(&path, &q, &PreviewLimits::default(), &|| false)
        .unwrap()
        .unwrap();
    assert_eq!((hits.len(), unread), (1, Unread::default()));
}

/// Run by `a_million_entry_session_previews_in_little_memory` in a process
/// of its own (its memory is measured alone); does nothing otherwise.
#[cfg(target_os = "linux")]
#[test]
fn preview_memory_child() {
    let Some(path) = std::env::var_os("ARBOR_PREVIEW_MEMORY_CHILD") else {
        return;
    };
    let path = PathBuf::from(path);
    // No query; a match near the start; one at the very end (the whole
    // file is searched, a line at a time).
    let last = load_preview(&path).unwrap();
    assert_eq!(last.last_messages.len(), 4);
    let limits = PreviewLimits::default();
    let t = std::time::Instant::now();
    let hits = |q: &str| {
        load_hits(&path, &Query::parse(q), &limits, &|| false)
            .unwrap()
            .unwrap()
    };
    let early = hits("\"question 300:\"");
    assert_eq!(early.1, 1);
    eprintln!("early match: {:?}", t.elapsed());
    let n = common::env_number("ARBOR_PREVIEW_ENTRIES", 0);
    // The last assistant answer.
    let i = (0..n).rev().find(|i| i % 3 == 1).unwrap_or(1);
    let late = hits(&format!("\"answer {i}:\""));
    assert_eq!(late.1, 1);
    eprintln!("late match: {:?}", t.elapsed());
    println!("max_rss_kb={}", common::max_rss_kb());
}

/// The preview of a 1,000,000-entry session (~350 MB) stays under 100 MB
/// of memory (reading it whole took 4–7 GB).
#[cfg(target_os = "linux")]
#[test]
fn a_million_entry_session_previews_in_little_memory() {
    let entries = common::env_number("ARBOR_PREVIEW_ENTRIES", 1_000_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("million.jsonl");
    let t = std::time::Instant::now();
    write_session(&path, entries, None);
    eprintln!("written in {:?}", t.elapsed());
    let size = std::fs::metadata(&path).unwrap().len();
    let out = common::run_test_alone(
        "preview::preview_memory_child",
        [
            ("ARBOR_PREVIEW_MEMORY_CHILD", path.as_os_str().to_owned()),
            ("ARBOR_PREVIEW_ENTRIES", entries.to_string().into()),
        ],
    );
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    let kb = common::child_max_rss_kb(&out);
    eprintln!(
        "preview of {entries} entries ({} MB): max RSS {} MB",
        size >> 20,
        kb >> 10
    );
    assert!(kb < 100 << 10, "max RSS {kb} kB");
}
