//! A session's id and file name are data, never one of its agent's
//! options: fake `claude`, `codex` and `atomic` on PATH log the argv arbor
//! gives them, for sessions whose ids and names are options of theirs.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::pty::{self, Term};

const AGENTS: [&str; 3] = ["claude", "codex", "atomic"];

/// A home with fake agents in `bin` (each writes its arguments,
/// NUL-terminated, to `argv-<name>`) and a project folder `proj`.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let h = Home {
            dir: tempfile::tempdir().unwrap(),
        };
        let bin = h.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(h.proj()).unwrap();
        for name in AGENTS {
            let p = bin.join(name);
            let out = h.argv_file(name);
            std::fs::write(
                &p,
                format!("#!/bin/sh\nprintf '%s\\0' \"$@\" > '{}'\n", out.display()),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        h
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn proj(&self) -> PathBuf {
        self.path().join("proj")
    }

    fn argv_file(&self, agent: &str) -> PathBuf {
        self.path().join(format!("argv-{agent}"))
    }

    fn path_var(&self) -> String {
        format!(
            "{}:{}",
            self.path().join("bin").display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// What each fake agent was called with (`None`: it never ran).
    fn ran(&self) -> Vec<(&'static str, Option<Vec<String>>)> {
        AGENTS
            .iter()
            .map(|a| {
                let got = std::fs::read_to_string(self.argv_file(a)).ok().map(|t| {
                    t.split_terminator('\0')
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                });
                (*a, got)
            })
            .collect()
    }

    fn nothing_ran(&self) {
        for (agent, got) in self.ran() {
            assert_eq!(got, None, "{agent} ran");
        }
    }

    /// `arbor --last` (no screen) in the project folder.
    fn last(&self, extra: &[&str]) -> std::process::Output {
        common::arbor()
            .arg("--last")
            .args(extra)
            .env("HOME", self.path())
            .env("PATH", self.path_var())
            .env("ATOMIC_CODING_AGENT_DIR", self.path().join(".atomic"))
            .current_dir(self.proj())
            .output()
            .unwrap()
    }

    /// The picker over every project, in a 30×200 terminal.
    fn picker(&self) -> Term {
        let mut cmd = pty::arbor();
        cmd.args(["--all"]);
        cmd.env("HOME", self.path());
        cmd.env("ARBOR_CACHE_DIR", self.path().join("cache"));
        cmd.env("PATH", self.path_var());
        cmd.env("ATOMIC_CODING_AGENT_DIR", self.path().join(".atomic"));
        cmd.cwd(self.path());
        Term::spawn(cmd, 30, 200)
    }

    /// A Codex rollout whose `session_meta` id is `id`.
    fn codex(&self, id: &str, text: &str) -> PathBuf {
        let dir = self.path().join(".codex/sessions/2025/10/29");
        std::fs::create_dir_all(&dir).unwrap();
        let path =
            dir.join("rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl");
        let meta = serde_json::json!({"timestamp": "2025-10-29T00:59:38.317Z",
            "type": "session_meta", "payload": {"id": id,
            "timestamp": "2025-10-29T00:59:38.308Z", "cwd": self.proj(),
            "originator": "codex_cli_rs", "cli_version": "0.46.0"}});
        let msg = serde_json::json!({"timestamp": "2025-10-29T00:59:40.000Z",
            "type": "response_item", "payload": {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": text}]}});
        std::fs::write(&path, format!("{meta}\n{msg}\n")).unwrap();
        path
    }

    /// A Claude Code file `name` whose lines say `sessionId` (and
    /// `isSidechain`, for a sub-agent's).
    fn claude(&self, name: &str, session_id: &str, sidechain: bool, text: &str) -> PathBuf {
        // Claude Code's folder of the project (`/a/b.c` → `-a-b-c`).
        let folder: String = (self.proj().to_str().unwrap().chars())
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let dir = self.path().join(".claude/projects").join(folder);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        let line = serde_json::json!({"parentUuid": null, "isSidechain": sidechain,
            "userType": "external", "cwd": self.proj(), "sessionId": session_id,
            "agentId": "3f2a9c1b", "version": "2.0.30", "type": "user",
            "message": {"role": "user", "content": text},
            "uuid": "d0000000-0000-4000-8000-000000000001",
            "timestamp": "2025-11-02T09:00:00.000Z"});
        std::fs::write(&path, format!("{line}\n")).unwrap();
        path
    }
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_codex_id_that_is_an_option_is_not_resumed() {
    let h = Home::new();
    let path = h.codex(
        "--dangerously-bypass-approvals-and-sandbox",
        "hostile rollout",
    );
    let out = h.last(&[]);
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(
        stderr(&out).trim_end(),
        format!(
            "arbor: {}: its session id \"--dangerously-bypass-approvals-and-sandbox\" is not a \
             Codex session id, so arbor will not pass it to codex",
            path.display()
        )
    );
    h.nothing_ran();
}

#[test]
fn a_claude_code_file_named_as_an_option_is_not_resumed() {
    let h = Home::new();
    let path = h.claude("--model=opus.jsonl", "--model=opus", false, "hostile name");
    let out = h.last(&[]);
    assert!(!out.status.success(), "{out:?}");
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "{}: its session id \"--model=opus\" is not a Claude Code session id, so arbor will \
             not pass it to claude",
            path.display()
        )),
        "{said}"
    );
    h.nothing_ran();
}

#[test]
fn a_claude_code_session_id_reaches_claude_bound_to_its_option() {
    let h = Home::new();
    let id = "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70";
    h.claude(&format!("{id}.jsonl"), id, false, "a fine session");
    let out = h.last(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(h.ran()[0], ("claude", Some(vec![format!("--resume={id}")])));
}

#[test]
fn a_resume_command_word_never_begins_with_an_id_that_is_an_option() {
    let h = Home::new();
    // Atomic's folder of the project (`/a/b` → `--a-b--`).
    let folder = format!("--{}--", h.proj().to_str().unwrap()[1..].replace('/', "-"));
    let dir = h.path().join(".atomic/sessions").join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let header = serde_json::json!({"type": "session", "version": 3,
        "id": "--dangerously-skip-permissions", "timestamp": "2026-01-01T10:00:00.000Z",
        "cwd": h.proj()});
    let msg = serde_json::json!({"type": "message", "id": "m1", "parentId": null,
        "timestamp": "2026-01-01T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": "hostile atomic"}]}});
    let path = dir.join("--model=opus.jsonl");
    std::fs::write(&path, format!("{header}\n{msg}\n")).unwrap();
    let out = h.last(&["--resume-cmd", "atomic {id}"]);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        stderr(&out).contains(
            "its session id \"--dangerously-skip-permissions\" begins with \"-\", so arbor will \
             not pass it to atomic: it would be read as an option"
        ),
        "{}",
        stderr(&out)
    );
    h.nothing_ran();
    // The agent's own command takes the file, whose name is no option.
    let out = h.last(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        h.ran()[2],
        (
            "atomic",
            Some(vec!["--session".into(), path.to_str().unwrap().into()])
        )
    );
}

/// In the picker the row stays, the reason in the status line: a Codex
/// rollout's id, and a Claude Code sub-agent's `sessionId` (it resumes its
/// session, `<sessionId>.jsonl`).
#[test]
fn the_picker_says_why_a_hostile_session_is_not_resumed() {
    let h = Home::new();
    h.codex(
        "--dangerously-bypass-approvals-and-sandbox",
        "hostile rollout",
    );
    h.claude(
        "agent-3f2a9c1b.jsonl",
        "--dangerously-skip-permissions",
        true,
        "hostile sub-agent",
    );
    let mut pty = h.picker();
    pty.wait_for("the rollout", |t| t.contains("hostile rollout"));
    // Alt+I: the sub-agent's row too.
    pty.press(b"\x1bi");
    for (title, reason) in [
        (
            "hostile rollout",
            "Not resumed: rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl: \
             its session id \"--dangerously-bypass-approvals-and-sandbox\" is not a Codex session id",
        ),
        (
            "hostile sub-agent",
            "Not resumed: --dangerously-skip-permissions.jsonl: its session id \
             \"--dangerously-skip-permissions\" is not a Claude Code session id",
        ),
    ] {
        pty.send(title.as_bytes());
        pty.wait_for("the row", |t| {
            t.lines().any(|l| l.starts_with('›') && l.contains(title))
        });
        pty.press(b"\r");
        let t = pty.wait_for("the reason", |t| t.contains(reason));
        assert!(t.contains(title), "the picker is still there: {t}");
        assert!(pty.running(), "{title}");
        // The query cleared for the next row.
        pty.send(&[0x15]);
    }
    pty.press(b"\x1b");
    assert!(pty.wait_exit("its end").success());
    h.nothing_ran();
}
