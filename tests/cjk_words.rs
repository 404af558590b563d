//! Issue #54: a Chinese, Japanese or Korean word of one or two characters
//! searches the transcripts as a longer word does: `arbor search 修复`
//! finds every session `grep` finds, with the index and without it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::common::arbor;

/// A session file of one user message and one assistant reply (with a
/// tool call whose output is `output`), in `root/<dir>/`.
fn write_session(root: &Path, n: usize, user: &str, reply: &str, output: &str) -> PathBuf {
    let dir = root.join("--home-dev-cjk--");
    std::fs::create_dir_all(&dir).unwrap();
    let id = format!("0199cccc-0000-7000-8000-{n:012}");
    let ts = |m: usize| format!("2026-11-{:02}T10:{m:02}:00.000Z", 1 + n);
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": id, "timestamp": ts(0), "cwd": "/home/dev/cjk"}),
        serde_json::json!({"type": "message", "id": "u1", "parentId": null, "timestamp": ts(1),
            "message": {"role": "user", "content": user}}),
        serde_json::json!({"type": "message", "id": "a1", "parentId": "u1", "timestamp": ts(2),
            "message": {"role": "assistant", "content": [
                {"type": "text", "text": reply},
                {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "ls"}}]}}),
        serde_json::json!({"type": "message", "id": "r1", "parentId": "a1", "timestamp": ts(3),
            "message": {"role": "toolResult", "toolCallId": "c1", "toolName": "bash",
                "content": [{"type": "text", "text": output}]}}),
    ];
    let path = dir.join(format!("2026-11-{:02}T10-00-00-000Z_{id}.jsonl", 1 + n));
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

/// The sessions whose file holds `word` (as grep reads them).
fn grep(files: &[PathBuf], word: &str) -> BTreeSet<PathBuf> {
    files
        .iter()
        .filter(|f| std::fs::read_to_string(f).unwrap().contains(word))
        .cloned()
        .collect()
}

/// The sessions `arbor search` names for `word`.
fn searched(root: &Path, cache: &Path, word: &str, no_index: bool) -> BTreeSet<PathBuf> {
    let mut cmd = arbor();
    cmd.env("ARBOR_CACHE_DIR", cache)
        .arg("--store")
        .arg(root)
        .args(["search", "--all", "--json", "--limit", "0"]);
    if no_index {
        cmd.arg("--no-index");
    }
    let out = cmd.arg("--").arg(word).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{word}: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            PathBuf::from(v["path"].as_str().unwrap())
        })
        .collect()
}

/// The sessions `arbor list --query` lists for `word`.
fn listed(root: &Path, cache: &Path, word: &str, no_index: bool) -> BTreeSet<PathBuf> {
    let mut cmd = arbor();
    cmd.env("ARBOR_CACHE_DIR", cache)
        .arg("--store")
        .arg(root)
        .args(["list", "--all", "--json", "--query", word]);
    if no_index {
        cmd.arg("--no-index");
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{word}: {out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            PathBuf::from(v["path"].as_str().unwrap())
        })
        .collect()
}

#[test]
fn short_cjk_words_find_every_session_grep_finds() {
    let store = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let root = store.path();
    let files = vec![
        // The word in the first message, in a reply, deep in a reply, in a
        // tool's output; its two characters apart; none of it.
        write_session(root, 0, "请修复这个错误", "好的", "ok"),
        write_session(root, 1, "看一下测试", "我已经修复了解析器的问题", "ok"),
        write_session(
            root,
            2,
            "hello",
            &format!("{}然后修复", "文本".repeat(400)),
            "ok",
        ),
        write_session(root, 3, "运行测试", "好的", "错误已修复"),
        write_session(root, 4, "修改文件", "恢复原状", "ok"),
        write_session(root, 5, "nothing here", "fine", "ok"),
        // Japanese and Korean.
        write_session(root, 6, "このバグを直して", "はい", "ok"),
        write_session(root, 7, "버그 수정 부탁해요", "네", "ok"),
        write_session(root, 8, "hello", "バグは見つかりません", "수정 완료"),
    ];
    // The index is built by the first command that uses it.
    for word in ["修复", "修", "バグ", "수정", "复"] {
        let want = grep(&files, word);
        assert!(!want.is_empty(), "{word}");
        for no_index in [false, true] {
            assert_eq!(
                searched(root, cache.path(), word, no_index),
                want,
                "arbor search {word} (no index: {no_index})"
            );
            assert_eq!(
                listed(root, cache.path(), word, no_index),
                want,
                "arbor list --query {word} (no index: {no_index})"
            );
        }
    }
    // A Latin word of two letters still looks only at the short fields.
    assert!(searched(root, cache.path(), "ok", true).is_empty());
}
