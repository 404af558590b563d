//! `arbor trash` and `arbor restore` under hostile conditions: a batch
//! killed in the middle (its note is a journal: `restore` brings back
//! exactly what moved, and no placeholder of a move cut off is left), a
//! file the trash cannot move (nothing left in the trash), and
//! `--older-than` on sessions whose times lie (a fork made now of an old
//! session, times in seconds, a header-only file dated 1970, a file dated
//! 2099, a time of 1e30).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const PROJECT: &str = "--home-x-proj--";

/// A session file of `lines` (JSON lines), dated `mtime`.
fn write_session(root: &Path, name: &str, lines: &[String], mtime: SystemTime) -> PathBuf {
    let dir = root.join(PROJECT);
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    p
}

fn header(id: &str, timestamp: &str) -> String {
    format!(
        r#"{{"type":"session","version":3,"id":"{id}","timestamp":{timestamp},"cwd":"/home/x/proj"}}"#
    )
}

/// A user message at `iso` (an entry time) and `ms` (the message's own).
fn message(n: usize, iso: &str, ms: &str) -> String {
    format!(
        r#"{{"type":"message","id":"m{n:07}","parentId":null,"timestamp":"{iso}","message":{{"role":"user","content":"hello {n}","timestamp":{ms}}}}}"#
    )
}

fn id(n: usize) -> String {
    format!("01a00000-0000-7000-8000-{n:012}")
}

/// `n` sessions of January 2025, files dated then too.
fn old_store(n: usize) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let jan = UNIX_EPOCH + Duration::from_secs(1_735_776_000);
    let paths = (1..=n)
        .map(|k| {
            let lines = [
                header(&id(k), "\"2025-01-01T00:00:00.000Z\""),
                message(k, "2025-01-01T00:01:00.000Z", "1735689660000"),
            ];
            write_session(&root, &format!("2025-01-01_{}.jsonl", id(k)), &lines, jan)
        })
        .collect();
    (dir, paths)
}

/// `arbor` on `root`, with a trash (and arbor's note of the last batch)
/// in `data`.
fn cli(root: &Path, data: &Path) -> std::process::Command {
    let mut c = common::arbor();
    c.arg("--store").arg(root).env("XDG_DATA_HOME", data);
    c
}

/// The names in the trash's `files` and `info` folders.
fn trash_names(data: &Path) -> (Vec<String>, Vec<String>) {
    let names = |sub: &str| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(data.join("Trash").join(sub))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    (names("files"), names("info"))
}

fn restored(out: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = out
        .lines()
        .filter_map(|l| l.strip_prefix("restored"))
        .map(|l| PathBuf::from(l.trim()))
        .collect();
    v.sort();
    v
}

/// An earlier batch of two, then a batch of 80 killed right after its
/// 70th move (the first 64, one call to the trash, noted; the next 6 not
/// yet): `arbor restore` brings back exactly those 70 (the last 6 found in
/// the trash), leaves the earlier two there, and has no batch left.
#[test]
fn a_batch_killed_after_its_nth_move_restores_exactly_what_moved() {
    let (dir, paths) = old_store(82);
    let root = dir.path().join("sessions");
    let data = tempfile::tempdir().unwrap();
    let (earlier, batch) = paths.split_at(2);
    common::run_ok(cli(&root, data.path()).arg("trash").args(earlier));

    let killed = common::run(
        cli(&root, data.path())
            .args(["trash", "--all", "--older-than", "1d"])
            .env("ARBOR_TEST_KILL_AFTER_MOVES", "70"),
    );
    assert!(!killed.status.success(), "the batch was to be cut off");
    let gone: Vec<&PathBuf> = batch.iter().filter(|p| !p.exists()).collect();
    assert_eq!(gone.len(), 70);

    let out = common::run_ok(cli(&root, data.path()).arg("restore"));
    let mut want: Vec<PathBuf> = gone.into_iter().cloned().collect();
    want.sort();
    assert_eq!(restored(&out), want, "{out}");
    assert!(batch.iter().all(|p| p.exists()));
    assert!(earlier.iter().all(|p| !p.exists()));
    let (files, info) = trash_names(data.path());
    assert_eq!(files.len(), 2, "{files:?}");
    assert_eq!(info.len(), 2, "{info:?}");
    let again = common::run(cli(&root, data.path()).arg("restore"));
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("no batch to restore"));
}

/// The system kills the batch at the rename of its 10th move (the trash
/// has made that file's info and its empty placeholder): `arbor restore`
/// brings back the 9 moved and removes the placeholder and its info.
#[test]
fn a_move_cut_off_leaves_no_placeholder() {
    let strace = Path::new("/usr/bin/strace");
    let probe = std::process::Command::new(strace)
        .args(["-qq", "-o", "/dev/null", "true"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: /usr/bin/strace cannot trace here");
        return;
    }
    let (dir, paths) = old_store(20);
    let root = dir.path().join("sessions");
    let data = tempfile::tempdir().unwrap();
    let mut run = std::process::Command::new(strace);
    // The 1st rename writes arbor's note; the 11th is the 10th move.
    let renames = "rename,renameat,renameat2";
    run.args(["-f", "-qq", "-o", "/dev/null", "-e"])
        .arg(format!("trace={renames}"))
        .arg("-e")
        .arg(format!("inject={renames}:signal=SIGKILL:when=11"))
        .arg(env!("CARGO_BIN_EXE_arbor"))
        .args(["--store"])
        .arg(&root)
        .args(["trash", "--all", "--older-than", "1d"])
        .env("HOME", "/nonexistent-arbor-home")
        .env("XDG_DATA_HOME", data.path());
    let killed = run.output().unwrap();
    assert!(!killed.status.success());
    let gone: Vec<PathBuf> = paths.iter().filter(|p| !p.exists()).cloned().collect();
    assert_eq!(gone.len(), 9, "{}", String::from_utf8_lossy(&killed.stderr));
    let (files, _) = trash_names(data.path());
    assert_eq!(files.len(), 10, "the 10th move's placeholder: {files:?}");

    let out = common::run_ok(cli(&root, data.path()).arg("restore"));
    assert_eq!(restored(&out), gone, "{out}");
    assert!(paths
        .iter()
        .all(|p| std::fs::metadata(p).unwrap().len() > 0));
    assert_eq!(trash_names(data.path()), (vec![], vec![]));
}

/// A file the system will not let go (`chattr +i`): not moved, said so,
/// and nothing of it left in the trash.
#[test]
fn a_file_the_trash_cannot_move_leaves_nothing_in_it() {
    let (dir, paths) = old_store(2);
    let root = dir.path().join("sessions");
    let data = tempfile::tempdir().unwrap();
    let chattr = std::process::Command::new("chattr")
        .arg("+i")
        .arg(&paths[0])
        .output();
    if !chattr.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: chattr +i is refused here (not root, or tmpfs/overlay)");
        return;
    }
    let out = common::run(cli(&root, data.path()).arg("trash").args(&paths));
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(&paths[0])
        .output();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not moved"), "{err}");
    assert!(paths[0].exists() && !paths[1].exists());
    let (files, info) = trash_names(data.path());
    assert_eq!(files, vec![format!("2025-01-01_{}.jsonl", id(2))]);
    assert_eq!(info.len(), 1, "{info:?}");
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn ago(secs: u64) -> SystemTime {
    SystemTime::now() - Duration::from_secs(secs)
}

fn json_lines(out: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `--older-than 1d` on sessions whose times lie: only the two that are
/// old (the control, and one whose message time is 1e30 but whose entry
/// time is January 2025) are chosen, oldest first; the 1e30 one shows and
/// sorts as January 2025. Not chosen: a fork written a minute ago (old
/// times copied), a session whose times are in seconds (a minute ago), one
/// whose only time is 0, a header-only file dated 1970 written a minute
/// ago, and a file dated 2099.
#[test]
fn older_than_goes_by_the_file_too_and_believes_no_broken_time() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    let data = tempfile::tempdir().unwrap();
    let jan = UNIX_EPOCH + Duration::from_secs(1_735_776_000);
    let old_lines = |k: usize| {
        vec![
            header(&id(k), "\"2025-01-01T00:00:00.000Z\""),
            message(k, "2025-01-01T00:01:00.000Z", "1735689660000"),
        ]
    };
    let control = write_session(&root, "control.jsonl", &old_lines(1), jan);
    let fork = write_session(&root, "fork.jsonl", &old_lines(2), ago(60));
    let secs = (now_ms() / 1000 - 60).to_string();
    let seconds = write_session(
        &root,
        "seconds.jsonl",
        &[header(&id(3), &secs), message(3, "not a time", &secs)],
        jan,
    );
    let zero = write_session(
        &root,
        "zero.jsonl",
        &[header(&id(4), "0"), message(4, "not a time", "0")],
        ago(60),
    );
    let header_only = write_session(
        &root,
        "header-only.jsonl",
        &[header(&id(5), "\"1970-01-01T00:00:00.000Z\"")],
        ago(60),
    );
    let huge = write_session(
        &root,
        "huge.jsonl",
        &[
            header(&id(6), "\"2025-01-01T00:00:00.000Z\""),
            message(6, "2025-01-01T00:02:00.000Z", "1e30"),
        ],
        jan,
    );
    let future = write_session(
        &root,
        "future.jsonl",
        &old_lines(7),
        UNIX_EPOCH + Duration::from_secs(4_070_908_800),
    );

    let out = common::run(cli(&root, data.path()).args([
        "trash",
        "--all",
        "--older-than",
        "1d",
        "--dry-run",
        "--json",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = json_lines(&out.stdout);
    let chosen: Vec<PathBuf> = lines
        .iter()
        .map(|v| PathBuf::from(v["path"].as_str().unwrap()))
        .collect();
    assert_eq!(chosen, vec![control.clone(), huge.clone()], "{lines:?}");
    assert_eq!(lines[1]["modified"], "2025-01-01T00:02:00.000Z");
    for p in [&fork, &seconds, &zero, &header_only, &future] {
        assert!(!chosen.contains(p), "{p:?}");
    }

    // The list agrees: the 1e30 session is January 2025's, below the
    // sessions of a minute ago.
    let list = common::run_ok(cli(&root, data.path()).args(["list", "--all", "--json"]));
    let listed: Vec<serde_json::Value> = json_lines(list.as_bytes());
    let row = |p: &Path| {
        listed
            .iter()
            .position(|v| v["path"].as_str() == Some(p.to_str().unwrap()))
            .unwrap_or_else(|| panic!("{p:?} not listed: {list}"))
    };
    assert!(row(&huge) > row(&seconds), "{list}");
    assert_eq!(listed[row(&huge)]["modified"], "2025-01-01T00:02:00.000Z");
    let seconds_ms = listed[row(&seconds)]["modified"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(seconds_ms.as_str() > "2026", "{seconds_ms}");

    // Named, the file dated 2099 is moved, and that is said.
    let out = common::run(cli(&root, data.path()).arg("trash").arg(&future));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!future.exists());
    assert!(err.contains("dated in the future (2099-"), "{err}");
    assert!(!err.contains("changed"), "{err}");
}
