//! Session text and file names never reach a terminal raw outside the TUI:
//! plain `list`, `show`, `context`, `index`, diagnostics and error messages
//! are sanitized (stderr always, stdout on a terminal), while `--json` and
//! values printed for scripts on a pipe stay exact.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::common::{arbor, terminal_controls};

const ID: &str = "0199e5c0-\u{1b}]0;retitled\u{7}-\u{9b}2J-\u{1b}[31m";
const CWD: &str = "/home/u/\u{1b}]2;cwd\u{7}proj\u{85}";
const FOLDER: &str = "--p\u{1b}[41m--";

/// A store whose session id, cwd, name, model, thinking level and entry
/// ids carry escape sequences, in a folder and file whose names do too,
/// beside a file that is not a session.
fn store() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("store").join(FOLDER);
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join(format!("2026-01-01T10-00-00-000Z_{ID}.jsonl"));
    let lines = [
        json!({"type": "session", "version": 3, "id": ID,
               "timestamp": "2026-01-01T10:00:00.000Z", "cwd": CWD}),
        json!({"type": "thinking_level_change", "id": "t\u{1b}[1m", "parentId": null,
               "timestamp": "2026-01-01T10:00:00.500Z", "thinkingLevel": "hi\u{1b}[5mgh"}),
        json!({"type": "message", "id": "m1\u{1b}[2J", "parentId": "t\u{1b}[1m",
               "timestamp": "2026-01-01T10:00:01.000Z",
               "message": {"role": "user", "content": [{"type": "text", "text": "hello \u{1b}[31mred"}]}}),
        json!({"type": "message", "id": "m2\u{90}", "parentId": "m1\u{1b}[2J",
               "timestamp": "2026-01-01T10:00:02.000Z",
               "message": {"role": "assistant", "provider": "p\u{1b}[0m", "model": "m\u{7}",
                           "content": [{"type": "text", "text": "hi"}]}}),
        json!({"type": "session_info", "id": "n1", "parentId": "m2\u{90}",
               "timestamp": "2026-01-01T10:00:03.000Z", "name": "name\u{1b}]0;x\u{7}"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    std::fs::write(
        folder.join("2026-01-01T11-00-00-000Z_bad\u{1b}]0;file\u{7}.jsonl"),
        "not a session\n",
    )
    .unwrap();
    (dir, path)
}

fn run(dir: &Path, args: &[&str]) -> Output {
    arbor()
        .env("ARBOR_CACHE_DIR", dir.join("cache"))
        .arg("--store")
        .arg(dir.join("store"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs arbor with its stdout and stderr on a terminal; everything written.
fn run_on_a_terminal(dir: &Path, args: &[&str]) -> String {
    let mut cmd = common::pty::arbor();
    cmd.env("HOME", "/nonexistent-arbor-home");
    cmd.env("ARBOR_CACHE_DIR", dir.join("cache"));
    cmd.arg("--store");
    cmd.arg(dir.join("store"));
    cmd.args(args);
    cmd.cwd(dir);
    let mut term = common::pty::Term::spawn(cmd, 50, 250);
    assert!(term.wait_exit("its end").success(), "arbor {args:?}");
    text(&term.into_output()).replace("\r\n", "\n")
}

fn assert_clean(what: &str, s: &str) {
    assert_eq!(terminal_controls(s), Vec::<char>::new(), "{what}: {s:?}");
}

#[test]
fn plain_output_and_diagnostics_carry_no_escapes() {
    let (dir, path) = store();
    let dir = dir.path();
    let p = path.to_str().unwrap();
    let plain_runs: [&[&str]; 5] = [
        &["list", "--all"],
        &["list", "--all", "--no-index"],
        &["show", p],
        &["context", p],
        &["index", "--file", p],
    ];
    for args in plain_runs {
        let out = run(dir, args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_clean(&format!("stdout of {args:?}"), &text(&out.stdout));
        assert_clean(&format!("stderr of {args:?}"), &text(&out.stderr));
        assert!(!out.stdout.is_empty(), "{args:?}");
    }
    // The diagnostics name the broken file, escapes shown as spaces.
    for args in [&["list", "--all"][..], &["index"][..]] {
        let out = run(dir, args);
        let err = text(&out.stderr);
        assert!(
            err.contains("skipped") && err.contains("bad ]0;file "),
            "{err}"
        );
        assert_clean(&format!("stderr of {args:?}"), &err);
    }
    let show = text(&run(dir, &["show", p]).stdout);
    // Session text: escape sequences removed whole, as a terminal shows them.
    assert!(
        show.starts_with("0199e5c0--- — name\n• user: hello red"),
        "{show}"
    );
    // The same commands on a terminal.
    for args in [&["list", "--all"][..], &["show", p], &["context", p]] {
        let t = run_on_a_terminal(dir, args);
        assert_clean(&format!("{args:?} on a terminal"), &t);
        assert!(t.contains("0199e5c0---") || t.contains("hello red"), "{t}");
    }
}

#[test]
fn error_messages_carry_no_escapes() {
    let (dir, _) = store();
    let dir = dir.path();
    let not_a_file = dir
        .join("store")
        .join(FOLDER)
        .join("x\u{1b}]0;t\u{7}.jsonl");
    std::fs::create_dir(&not_a_file).unwrap();
    for arg in [
        not_a_file.to_str().unwrap(),
        "no-such\u{1b}[2J-session",
        dir.join("missing\u{1b}]0;t\u{7}/x.jsonl").to_str().unwrap(),
    ] {
        let out = run(dir, &["show", arg]);
        assert!(!out.status.success());
        let err = text(&out.stderr);
        assert!(err.starts_with("arbor: "), "{err}");
        assert_clean(&format!("show {arg:?}"), &err);
    }
}

#[test]
fn json_and_piped_values_stay_exact() {
    let (dir, path) = store();
    let dir = dir.path();
    let p = path.to_str().unwrap();
    let out = run(dir, &["list", "--all", "--json"]);
    let stdout = text(&out.stdout);
    assert_clean("list --json", &stdout);
    let row: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(
        (row["id"].as_str(), row["cwd"].as_str()),
        (Some(ID), Some(CWD))
    );
    assert_eq!(row["path"].as_str(), Some(p));
    let out = text(&run(dir, &["show", p, "--json"]).stdout);
    assert_clean("show --json", &out);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["id"].as_str(), Some(ID));
    let out = text(&run(dir, &["index", "--file", p, "--json"]).stdout);
    assert_clean("index --file --json", &out);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["path"].as_str(), v["row"]["id"].as_str()),
        (Some(p), Some(ID))
    );

    // A value printed for a script: exact on a pipe, sanitized on a terminal.
    let out = run(dir, &["fork", p, "m1\u{1b}[2J"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let forked = text(&out.stdout);
    let forked = Path::new(forked.trim_end());
    assert!(forked.is_file() && forked.starts_with(dir.join("store").join(FOLDER)));
    let t = run_on_a_terminal(dir, &["fork", p, "m1\u{1b}[2J"]);
    assert_clean("fork on a terminal", &t);
    assert!(t.contains("--p [41m--"), "{t}");
}

/// A file whose name is not UTF-8 is listed (under a lossy name), never
/// silently left out.
#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_listed() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("store").join("--p--");
    std::fs::create_dir_all(&folder).unwrap();
    let name = std::ffi::OsStr::from_bytes(b"2026-01-01T10-00-00-000Z_0199\xff\xfe.jsonl");
    let header = json!({"type": "session", "version": 3, "id": "0199-latin1",
        "timestamp": "2026-01-01T10:00:00.000Z", "cwd": "/p"});
    let msg = json!({"type": "message", "id": "m1", "parentId": null,
        "timestamp": "2026-01-01T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "named in latin-1"}]}});
    std::fs::write(folder.join(name), format!("{header}\n{msg}\n")).unwrap();
    for extra in [&[][..], &["--no-index"][..]] {
        let out = run(
            dir.path(),
            &[&["list", "--all", "--json"][..], extra].concat(),
        );
        let rows: Vec<Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(rows.len(), 1, "{extra:?}: {}", text(&out.stderr));
        assert_eq!(rows[0]["id"], "0199-latin1");
        let path = rows[0]["path"].as_str().unwrap();
        assert!(path.ends_with("_0199\u{fffd}\u{fffd}.jsonl"), "{path}");
        let out = run(dir.path(), &[&["list", "--all"][..], extra].concat());
        assert!(text(&out.stdout).contains("named in latin-1"), "{extra:?}");
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    }
}
