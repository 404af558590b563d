//! What a new user tripped on in the command line: `--cwd` spelled with a
//! trailing slash or relatively, `--all` with `--cwd`, a `--store` that is
//! not there, message times of 0, a bad `--older-than`, `search` with only
//! filters, a Claude Code session's sub-agent folder in the trash, and an
//! agent that is not installed.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

const ID: &str = "019b0000-0000-7000-8000-000000000001";

/// An Atomic session of `cwd` in `store` (a per-project store), its
/// messages carrying `msg_ts` as their own numeric `timestamp`.
fn session(store: &Path, id: &str, cwd: &str, text: &str, msg_ts: &str) -> PathBuf {
    let dir = store.join(arbor_store::paths::encode_cwd(cwd));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("2026-01-01T10-00-00-000Z_{id}.jsonl"));
    let header = format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":"2026-01-01T10:00:00.000Z","cwd":{}}}"#,
        serde_json::to_string(cwd).unwrap()
    );
    let user = format!(
        r#"{{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T10:00:01.000Z","message":{{"role":"user","content":"{text}","timestamp":{msg_ts}}}}}"#
    );
    let reply = format!(
        r#"{{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"text","text":"ok"}}],"timestamp":{msg_ts}}}}}"#
    );
    std::fs::write(&path, format!("{header}\n{user}\n{reply}\n")).unwrap();
    path
}

fn arbor_on(store: &Path) -> std::process::Command {
    let mut c = common::arbor();
    c.arg("--store").arg(store).arg("--no-index");
    c
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn ids(out: &str) -> Vec<&str> {
    out.lines()
        .filter_map(|l| l.split_whitespace().last())
        .collect()
}

/// `--cwd proj/`, `--cwd proj` from its parent and `--cwd ./x/../proj`
/// list what `--cwd /abs/proj` lists; a folder not on this machine loses
/// its trailing slash too.
#[test]
fn cwd_with_a_trailing_slash_or_relative_lists_the_project() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap();
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    let store = home.join("store");
    session(&store, ID, proj.to_str().unwrap(), "here", "1767261601000");
    session(
        &store,
        "019b0000-0000-7000-8000-000000000002",
        "/elsewhere/proj",
        "away",
        "1767261601000",
    );
    let list = |cwd: &str| {
        common::run_ok(
            arbor_on(&store)
                .current_dir(&home)
                .args(["list", "--cwd", cwd]),
        )
    };
    let want = list(proj.to_str().unwrap());
    assert_eq!(ids(&want), vec![ID]);
    for given in [
        format!("{}/", proj.display()),
        "proj".into(),
        "proj/".into(),
        "./x/../proj".into(),
    ] {
        assert_eq!(list(&given), want, "--cwd {given}");
    }
    assert_eq!(
        ids(&list("/elsewhere/proj/")),
        vec!["019b0000-0000-7000-8000-000000000002"]
    );
}

/// `list --all --cwd X` is refused naming both, as `search`, `labels`,
/// `stats` and `trash` refuse it.
#[test]
fn list_all_with_cwd_names_the_conflict() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run(arbor_on(dir.path()).args(["list", "--all", "--cwd", "/x"]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("'--all' cannot be used with '--cwd"), "{err}");
    assert!(out.stdout.is_empty());
}

/// A `--store` or `--session-dir` that is not there is one line on
/// stderr and status 1, for every command that reads the store.
#[test]
fn a_store_that_is_not_there_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("no-such-store");
    for args in [
        vec!["--store", gone.to_str().unwrap(), "list", "--all"],
        vec!["--store", gone.to_str().unwrap(), "stats"],
        vec!["--session-dir", gone.to_str().unwrap(), "labels", "--all"],
    ] {
        let out = common::run(common::arbor().args(&args));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("no such folder"), "{err}");
        assert!(err.contains("no-such-store"), "{err}");
    }
    // A file where a folder should be.
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let out = common::run(common::arbor().arg("--store").arg(&file).arg("list"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not a folder"), "{}", stderr(&out));
    // An empty store is a store.
    common::run_ok(
        common::arbor()
            .arg("--store")
            .arg(dir.path())
            .args(["list", "--all"]),
    );
}

/// Messages whose own time is 0 take the time Atomic falls back to, not
/// 1970: the session lists as of January 2026, never 56 years old.
#[test]
fn a_message_time_of_zero_is_no_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    session(&store, ID, "/p", "zero", "0");
    let out = common::run_ok(arbor_on(&store).args(["list", "--all", "--json"]));
    let row: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    let modified = row["modified"].as_str().unwrap();
    assert!(modified.starts_with("2026-01-01T10:00:0"), "{modified}");
    let plain = common::run_ok(arbor_on(&store).args(["list", "--all"]));
    assert!(!plain.contains("56y") && !plain.contains("57y"), "{plain}");
}

/// A bad `--older-than` is named as `--older-than`, not `--since`.
#[test]
fn a_bad_older_than_names_its_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::run(arbor_on(dir.path()).args(["trash", "--all", "--older-than", "banana"]));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("--older-than \"banana\""), "{err}");
    assert!(!err.contains("--since"), "{err}");
}

/// `arbor search dir:x` has nothing to find entries by: it says so and
/// names the command that lists the sessions the filter chooses.
#[test]
fn search_with_only_filters_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    session(&store, ID, "/p", "zero", "1767261601000");
    let out = common::run(arbor_on(&store).args(["search", "--all", "dir:p"]));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no words"), "{err}");
    assert!(err.contains("arbor list --query \"dir:p\""), "{err}");
    // What it points to works.
    let listed = common::run_ok(arbor_on(&store).args(["list", "--all", "--query", "dir:p"]));
    assert_eq!(ids(&listed), vec![ID]);
    // With a word, the entries are found as before.
    let found = common::run_ok(arbor_on(&store).args(["search", "--all", "dir:p", "zero"]));
    assert!(found.contains("zero"), "{found}");
}

/// A copy of the Claude Code fixture store, its files dated a day ago (a
/// session changed in the last seconds is not trashed).
fn claude_store(root: &Path) -> PathBuf {
    let fixtures =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents/claude/projects");
    common::copy_dir(&fixtures, root);
    let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(86_400);
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let f = std::fs::File::options().write(true).open(&p).unwrap();
                f.set_modified(day_ago).unwrap();
            }
        }
    }
    root.join("-home-u-proj/5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70.jsonl")
}

/// Trashing a Claude Code session takes its `<id>/` folder (the
/// sub-agent runs) with it, so no run is left to list as a session of
/// its own; `arbor restore` brings both back.
#[test]
fn a_claude_session_goes_to_the_trash_with_its_subagents() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    let data = dir.path().join("data");
    let session = claude_store(&root);
    let companion = session.with_extension("");
    assert!(companion.join("subagents").is_dir());
    let cli = || {
        let mut c = common::arbor();
        c.args(["--agent", "claude", "--no-index", "--store"])
            .arg(&root)
            .env("XDG_DATA_HOME", &data);
        c
    };
    let listed = |c: &mut std::process::Command| -> Vec<String> {
        let out = common::run_ok(c.args(["list", "--all", "--include-internal", "--json"]));
        out.lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["path"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let before = listed(&mut cli());
    assert!(
        before.iter().any(|p| p.contains("/subagents/")),
        "{before:?}"
    );

    common::run_ok(cli().args(["trash", "5f0c2a1e"]));
    assert!(!session.exists());
    assert!(!companion.exists(), "the sub-agent folder went with it");
    let after = listed(&mut cli());
    assert!(after.iter().all(|p| !p.contains("5f0c2a1e")), "{after:?}");

    common::run_ok(cli().arg("restore"));
    assert!(session.is_file());
    assert!(companion.join("subagents/agent-a7c41d2.jsonl").is_file());
    assert_eq!(listed(&mut cli()), before);
}

/// The agent to resume is not installed: the command is printed and the
/// status is 127, as a shell's for a command it cannot find.
#[test]
fn an_agent_not_installed_exits_non_zero() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap();
    let store = home.join("store");
    session(&store, ID, home.to_str().unwrap(), "here", "1767261601000");
    let out = common::run(arbor_on(&store).current_dir(&home).args([
        "--last",
        "--resume-cmd",
        "arbor-no-such-agent {path}",
    ]));
    assert_eq!(out.status.code(), Some(127), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("arbor-no-such-agent is not installed"),
        "{said}"
    );
    assert!(said.contains("arbor-no-such-agent "), "{said}");
}
