//! Writes under hostile conditions: a full disk leaves the session as it
//! was (and a half line an older arbor left is removed before the next
//! write, while the agent's is still refused); a symlink planted at a
//! temporary name or at a target is never written through; a read-only
//! file system is told as a failed write; an ambiguous `--leaf` is said
//! once.
//!
//! The disk tests mount a small tmpfs (CI runs them as root); where the
//! mount fails they print why and pass without checking.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{arbor, demo_store, find_session, run};

/// The demo session with a fork, labels and a name.
const BRANCHY: &str = "01a1fd62";
/// Its first user message.
const FIRST_ASK: &str = "1b2ba06b";

/// A tmpfs mounted on a temporary folder, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// `None` (with the reason printed) where this process may not mount.
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs { dir }),
            Ok(o) => {
                eprintln!(
                    "skipped: cannot mount a tmpfs: {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipped: cannot run mount: {e}");
                None
            }
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn remount(&self, opts: &str) {
        let ok = Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(self.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount {opts}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.path()).status();
    }
}

/// A copy of the demo session at `dir/s.jsonl`.
fn session_in(dir: &Path) -> PathBuf {
    let store = demo_store();
    let src = find_session(&store.path().join("sessions"), BRANCHY);
    let f = dir.join("s.jsonl");
    std::fs::copy(src, &f).unwrap();
    f
}

/// Pads `f` with a blank line (readers skip it) so that its last page has
/// only `slack` bytes free: a line longer than that is cut short there by
/// a full tmpfs.
fn leave_slack(f: &Path, slack: u64) {
    let len = std::fs::metadata(f).unwrap().len();
    let page = 4096;
    let mut pad = (page - (len + slack) % page) % page;
    if pad == 0 {
        pad = page;
    }
    let mut bytes = std::fs::read(f).unwrap();
    bytes.extend(std::iter::repeat_n(b' ', pad as usize - 1));
    bytes.push(b'\n');
    std::fs::write(f, bytes).unwrap();
    assert_eq!((std::fs::metadata(f).unwrap().len() + slack) % page, 0);
}

/// Fills the file system of `dir` until it takes no more.
fn fill(dir: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![b'x'; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    while f.write_all(b"x").is_ok() {}
}

fn stderr_of(args: &[&str]) -> (bool, String) {
    let out = run(arbor().args(args));
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Issue "Hostile conditions, second round" (2): on a full disk `label`,
/// `rename` and `branch` fail, leave the file byte for byte as it was, and
/// say so in one sentence that names the cause once.
#[test]
fn a_full_disk_leaves_the_session_as_it_was() {
    let Some(fs) = Tmpfs::mount("4m") else {
        return;
    };
    let f = session_in(fs.path());
    // 40 bytes fit: the line is cut short there (the old half line).
    leave_slack(&f, 40);
    fill(fs.path());
    let before = std::fs::read(&f).unwrap();
    let p = f.to_str().unwrap();
    for args in [
        vec![
            "label",
            p,
            FIRST_ASK,
            "a label longer than forty bytes, to be cut",
        ],
        vec![
            "rename",
            p,
            "a name longer than forty bytes, to be cut short",
        ],
        vec!["branch", p, FIRST_ASK],
    ] {
        let (ok, err) = stderr_of(&args);
        assert!(!ok, "{args:?} succeeded on a full disk");
        assert_eq!(
            std::fs::read(&f).unwrap(),
            before,
            "{args:?} changed the file: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert_eq!(err.matches("No space left on device").count(), 1, "{err}");
        assert!(err.contains("nothing was written"), "{err}");
        assert!(err.contains("s.jsonl"), "{err}");
    }
    // With room again, the next write lands on a whole line.
    std::fs::remove_file(fs.path().join("filler")).unwrap();
    let (ok, err) = stderr_of(&["label", p, FIRST_ASK, "after"]);
    assert!(ok, "{err}");
    let after = std::fs::read(&f).unwrap();
    assert!(after.starts_with(&before));
    let line: serde_json::Value = serde_json::from_slice(&after[before.len()..]).unwrap();
    assert_eq!(line["label"], "after");
}

/// A half line an older arbor left on a full disk is cut off before the
/// next write (it would otherwise block every write, and the agent's next
/// line would be glued onto it); a half line of the agent's own shape is
/// still refused and left alone.
#[test]
fn arbor_s_own_half_line_is_removed_and_the_agent_s_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = session_in(dir.path());
    let whole = std::fs::read(&f).unwrap();
    let last_id = {
        let text = String::from_utf8_lossy(&whole).into_owned();
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        last["id"].as_str().unwrap().to_string()
    };
    let mut damaged = whole.clone();
    damaged.extend_from_slice(br#"{"type":"label","id":"1acaff0f","parentI"#);
    std::fs::write(&f, &damaged).unwrap();
    let p = f.to_str().unwrap();
    let (ok, err) = stderr_of(&["label", p, FIRST_ASK, "kept"]);
    assert!(ok, "{err}");
    let after = std::fs::read(&f).unwrap();
    assert!(after.starts_with(&whole), "the half line stayed");
    let line: serde_json::Value = serde_json::from_slice(&after[whole.len()..]).unwrap();
    assert_eq!(line["label"], "kept");
    assert_eq!(
        line["parentId"],
        last_id.as_str(),
        "its parent is the last whole entry"
    );

    // The agent's half line: never cut.
    let mut agent = after.clone();
    agent.extend_from_slice(br#"{"type":"message","id":"0badc0de","parentId":"x","mess"#);
    std::fs::write(&f, &agent).unwrap();
    let (ok, err) = stderr_of(&["label", p, FIRST_ASK, "refused"]);
    assert!(!ok);
    assert!(err.contains("partial line"), "{err}");
    assert!(
        std::fs::read(&f).unwrap() == agent,
        "the agent's half line was touched"
    );
}

/// Issue (4): a symlink planted at the temporary name arbor used to write
/// a fork through (`.NAME.arbor-tmp-<pid>`) is never followed: the link's
/// target keeps its bytes, and the fork is a regular file.
#[cfg(unix)]
#[test]
fn a_planted_link_at_the_temporary_name_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let f = session_in(dir.path());
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious\n").unwrap();
    let out = dir.path().join("new.jsonl");
    let planted = dir
        .path()
        .join(format!(".new.jsonl.arbor-tmp-{}", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();

    let forked = arbor_session::writer::fork(&f, FIRST_ASK, Some(&out)).unwrap();
    assert_eq!(forked.path, out);
    assert!(
        std::fs::read(&victim).unwrap() == b"precious\n",
        "the link was followed"
    );
    assert!(std::fs::symlink_metadata(&out).unwrap().is_file());
    assert_eq!(std::fs::read_link(&planted).unwrap(), victim);
    // Nothing else is left beside them.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 4, "{names:?}");
}

/// The same for a migration and its `.bak`, both rewritten through a
/// temporary file.
#[cfg(unix)]
#[test]
fn a_migration_follows_no_planted_link() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("old.jsonl");
    std::fs::write(
        &f,
        concat!(
            r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"}"#,
            "\n",
            r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi"}}"#,
            "\n"
        ),
    )
    .unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious\n").unwrap();
    for name in ["old.jsonl", "old.jsonl.bak"] {
        let planted = dir
            .path()
            .join(format!(".{name}.arbor-tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, planted).unwrap();
    }
    arbor_session::writer::migrate_file(&f).unwrap();
    assert!(
        std::fs::read(&victim).unwrap() == b"precious\n",
        "the link was followed"
    );
    assert!(std::fs::symlink_metadata(&f).unwrap().is_file());
    assert!(std::fs::read_to_string(&f)
        .unwrap()
        .contains("\"version\":3"));
}

/// A target that is a symlink is refused, never written through: an export
/// with `--force`, a fork's `--out` (a dangling link too), a migration.
#[cfg(unix)]
#[test]
fn a_link_at_the_target_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = session_in(dir.path());
    let p = f.to_str().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious\n").unwrap();
    let link = dir.path().join("out.md");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let (ok, err) = stderr_of(&["export", p, "--out", link.to_str().unwrap(), "--force"]);
    assert!(!ok, "exported through a link");
    assert!(err.contains("symbolic link"), "{err}");
    assert!(
        std::fs::read(&victim).unwrap() == b"precious\n",
        "the link was followed"
    );

    let dangling = dir.path().join("fork.jsonl");
    let missing = dir.path().join("made-through-the-link");
    std::os::unix::fs::symlink(&missing, &dangling).unwrap();
    let (ok, err) = stderr_of(&["fork", p, FIRST_ASK, "--out", dangling.to_str().unwrap()]);
    assert!(!ok, "forked onto a link");
    assert!(err.contains("already exists"), "{err}");
    assert!(!missing.exists());
    assert!(std::fs::symlink_metadata(&dangling).unwrap().is_symlink());

    // A session reached through a link is not migrated in its place.
    let v1 = dir.path().join("v1.jsonl");
    std::fs::write(
        &v1,
        "{\"type\":\"session\",\"id\":\"s1\",\"timestamp\":\"2025-01-01T00:00:00.000Z\"}\n",
    )
    .unwrap();
    let linked = dir.path().join("linked.jsonl");
    std::os::unix::fs::symlink(&v1, &linked).unwrap();
    let e = arbor_session::writer::migrate_file(&linked).unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert!(std::fs::symlink_metadata(&linked).unwrap().is_symlink());
    assert!(!dir.path().join("linked.jsonl.bak").exists());
}

/// A write refused by a read-only file system says it cannot write, and
/// names the file (it said "cannot read").
#[test]
fn a_read_only_file_system_is_a_failed_write() {
    let Some(fs) = Tmpfs::mount("4m") else {
        return;
    };
    let f = session_in(fs.path());
    fs.remount("ro");
    let before = std::fs::read(&f).unwrap();
    let (ok, err) = stderr_of(&["label", f.to_str().unwrap(), FIRST_ASK, "x"]);
    assert!(!ok);
    assert!(err.contains("cannot write"), "{err}");
    assert!(!err.contains("cannot read"), "{err}");
    assert!(err.contains("s.jsonl"), "{err}");
    assert_eq!(err.matches("Read-only file system").count(), 1, "{err}");
    assert!(std::fs::read(&f).unwrap() == before, "the file changed");
}

/// An ambiguous `--leaf` prefix is said once (the message used to repeat
/// its cause).
#[test]
fn an_ambiguous_leaf_is_said_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = session_in(dir.path());
    let text = std::fs::read_to_string(&f).unwrap();
    let ids: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["id"].as_str().map(str::to_string))
        .collect();
    let prefix = (0..16)
        .map(|d| format!("{d:x}"))
        .find(|p| ids.iter().filter(|id| id.starts_with(p.as_str())).count() >= 2)
        .expect("two ids share a first digit");
    let (ok, err) = stderr_of(&["export", f.to_str().unwrap(), "--leaf", &prefix]);
    assert!(!ok);
    assert_eq!(err.matches("is ambiguous").count(), 1, "{err}");
}
