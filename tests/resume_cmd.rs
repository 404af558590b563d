//! Enter in the real picker, in a pseudo-terminal: the resume command is a
//! shell-word template whose placeholders only ever become arguments, a
//! pi session resumes with pi's command, and a session whose folder is gone
//! is asked about.

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::pty::{self, Term};

/// arbor with `args` in a 30×150 terminal, at home in `cwd`, with `env` set.
fn spawn(args: &[&str], env: &[(&str, &Path)], cwd: &Path) -> Term {
    let mut cmd = pty::arbor();
    cmd.args(args);
    cmd.env("HOME", cwd);
    cmd.env("ARBOR_CACHE_DIR", cwd.join("cache"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.cwd(cwd);
    Term::spawn(cmd, 30, 150)
}

/// The raw bytes written after `marker` (text printed once the picker has
/// left the screen).
fn after(raw: &[u8], marker: &str) -> String {
    let text = String::from_utf8_lossy(raw).into_owned();
    let i = text
        .find(marker)
        .unwrap_or_else(|| panic!("{marker:?} not in the output:\n{text:?}"));
    text[i..].to_string()
}

/// Escape-capable bytes other than the line ends a terminal prints.
fn controls(text: &str) -> Vec<char> {
    common::terminal_controls(&text.replace("\r\n", "\n"))
}

/// Text no shell may ever see unquoted: each part would run `touch`.
const HOSTILE: &str =
    "x; touch pwned0; $(touch pwned1) `touch pwned2` 'q\" \\ \n\u{1b}]0;title\u{7}";

fn session(dir: &Path, id: &str, cwd: &str, text: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("2026-01-01T10-00-00-000Z_{id}.jsonl"));
    let header = serde_json::json!({"type": "session", "version": 3, "id": id,
        "timestamp": "2026-01-01T10:00:00.000Z", "cwd": cwd});
    let msg = serde_json::json!({"type": "message", "id": "m1", "parentId": null,
        "timestamp": "2026-01-01T10:00:01.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]}});
    std::fs::write(&path, format!("{header}\n{msg}\n")).unwrap();
    path
}

/// A resume command that writes each argument NUL-terminated, then the
/// folder it ran in, to `out`.
fn recorder(out: &Path) -> String {
    format!(
        "sh -c 'printf \"%s\\0\" \"$@\" > \"$0\"; pwd >> \"$0\"' {} {{path}} {{id}} {{cwd}} pre{{id}}post",
        out.display()
    )
}

fn recorded(out: &Path) -> Vec<String> {
    let t = std::fs::read_to_string(out).unwrap();
    t.split('\0').map(str::to_string).collect()
}

fn no_pwned(dirs: &[&Path]) {
    for d in dirs {
        for f in ["pwned0", "pwned1", "pwned2"] {
            assert!(!d.join(f).exists(), "a shell ran session text in {d:?}");
        }
    }
}

#[test]
fn session_text_reaches_the_resume_command_only_as_arguments() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    // The session's folder exists, and its name is hostile too.
    let cwd = home.join(format!("work{HOSTILE}"));
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd_s = cwd.to_str().unwrap();
    let id = format!("0199cccc-{}", HOSTILE.replace('\n', "N"));
    let store = home.join("store");
    let path = session(&store.join("--p--"), &id, cwd_s, "hostile resume");
    let out = home.join("argv");
    let mut pty = spawn(
        &[
            "--store",
            store.to_str().unwrap(),
            "--all",
            "--resume-cmd",
            &recorder(&out),
        ],
        &[],
        home,
    );
    pty.wait_for("the row", |t| t.contains("hostile resume"));
    pty.press(b"\r");
    assert!(pty.wait_exit("its end").success());
    let got = recorded(&out);
    assert_eq!(
        got[..4],
        [
            path.to_str().unwrap().to_string(),
            id.clone(),
            cwd_s.to_string(),
            format!("pre{id}post"),
        ]
    );
    assert_eq!(got[4].trim_end(), cwd_s, "it ran in the session's folder");
    no_pwned(&[home, &cwd, &store]);
}

#[test]
fn a_pi_session_resumes_with_pi() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let pi_store = home.join(".pi/agent/sessions");
    let path = session(&pi_store.join("--p--"), "0199dddd-1", "/", "a pi session");
    // A `pi` on PATH that records how it was called.
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = home.join("argv");
    let pi = bin.join("pi");
    std::fs::write(
        &pi,
        format!("#!/bin/sh\nprintf '%s\\0' \"$@\" > '{}'\n", out.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pi, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path_var = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut pty = spawn(
        &["--all"],
        &[
            ("PATH", Path::new(&path_var)),
            ("ATOMIC_CODING_AGENT_DIR", &home.join("atomic")),
        ],
        home,
    );
    let t = pty.wait_for("the row", |t| t.contains("a pi session"));
    assert!(
        t.lines()
            .any(|l| l.contains("a pi session") && l.contains(" pi ")),
        "{t}"
    );
    pty.press(b"\r");
    assert!(pty.wait_exit("its end").success());
    assert_eq!(
        recorded(&out),
        ["--session", path.to_str().unwrap(), ""],
        "pi --session <path>"
    );
}

/// The question is asked over the picker: `n` goes back to it (the
/// selection kept), `y` resumes in the current folder without asking again
/// on the terminal.
#[test]
fn a_missing_folder_is_asked_about_before_resuming_elsewhere() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let gone = "/nonexistent-arbor/gone\u{1b}]0;pwned-title\u{7}\u{9b}31m".to_string();
    let store = home.join("store");
    session(&store.join("--p--"), "0199eeee-1", &gone, "a moved project");
    let out = home.join("argv");
    for (answer, runs) in [(&b"n"[..], false), (&b"y"[..], true)] {
        let _ = std::fs::remove_file(&out);
        let mut pty = spawn(
            &[
                "--store",
                store.to_str().unwrap(),
                "--all",
                "--resume-cmd",
                &recorder(&out),
            ],
            &[],
            home,
        );
        pty.wait_for("the row", |t| t.contains("a moved project"));
        pty.press(b"\r");
        let t = pty.wait_for("the question", |t| t.contains("no longer exists"));
        assert!(t.contains("/nonexistent-arbor/gone"), "{t}");
        assert!(t.contains("y resume here"), "{t}");
        pty.press(answer);
        if !runs {
            let t = pty.wait_for("the picker again", |t| t.contains("Not resumed"));
            assert!(t.contains("a moved project"), "{t}");
            assert!(!t.contains("y resume here"), "{t}");
            pty.press(b"\x1b");
        }
        assert!(pty.wait_exit("its end").success());
        let raw = pty.into_output();
        assert!(
            !raw.windows(4).any(|w| w == b"\x1b]0;"),
            "the folder's escapes never reach the terminal"
        );
        let said = String::from_utf8_lossy(&raw);
        assert!(!said.contains("[y/N]"), "not asked again on the terminal");
        assert_eq!(out.exists(), runs, "answer {answer:?}");
        if runs {
            let got = recorded(&out);
            assert_eq!(got[2], gone, "{{cwd}} is still the recorded folder");
            assert_eq!(
                Path::new(got[4].trim_end()).canonicalize().unwrap(),
                home.canonicalize().unwrap(),
                "it ran in the current folder"
            );
        }
    }
}

#[test]
fn the_fallback_message_shows_the_command_without_escapes() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let cwd = home.join("proj\u{1b}]2;retitled\u{7}\u{85}");
    std::fs::create_dir_all(&cwd).unwrap();
    let store = home.join("store");
    let id = "0199ffff-\u{1b}[31mred";
    session(&store.join("--p--"), id, cwd.to_str().unwrap(), "no agent");
    let mut pty = spawn(
        &[
            "--store",
            store.to_str().unwrap(),
            "--all",
            "--resume-cmd",
            "arbor-no-such-agent --id {id} {path}",
        ],
        &[],
        home,
    );
    pty.wait_for("the row", |t| t.contains("no agent"));
    pty.press(b"\r");
    // As a shell's status for a command it cannot find.
    assert_eq!(pty.wait_exit("its end").exit_code(), 127);
    let said = after(&pty.into_output(), "arbor-no-such-agent is not installed");
    assert_eq!(controls(&said), Vec::<char>::new(), "{said:?}");
    assert!(
        said.contains("proj\\x1b]2;retitled\\x07\\u0085'"),
        "{said:?}"
    );
    assert!(said.contains("--id $'0199ffff-\\x1b[31mred'"), "{said:?}");
}

/// The fixture stores of Claude Code and Codex (`tests/fixtures/agents`) in
/// `home`, their sessions' folders made real ones under `home`.
fn other_agents_home(home: &Path) -> (PathBuf, PathBuf) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    common::copy_dir(&fixtures.join("claude"), &home.join(".claude"));
    common::copy_dir(&fixtures.join("codex"), &home.join(".codex"));
    let proj = home.join("proj");
    let calc = home.join("calc");
    for (d, from) in [(&proj, "/home/u/proj"), (&calc, "/home/u/calc")] {
        std::fs::create_dir_all(d).unwrap();
        for f in [
            ".claude/projects/-home-u-proj/5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70.jsonl",
            ".codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl",
        ] {
            let p = home.join(f);
            let t = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, t.replace(from, d.to_str().unwrap())).unwrap();
        }
    }
    (proj, calc)
}

/// Picks the row whose title contains `title` (typed as the query) and
/// presses Enter.
fn resume_row(pty: &mut Term, title: &str) {
    pty.wait_for("the rows", |t| t.contains("Arithmetic check"));
    pty.send(title.as_bytes());
    pty.wait_for("the query's results", |t| {
        t.lines().any(|l| l.starts_with('›') && l.contains(title))
    });
    pty.press(b"\r");
    assert!(pty.wait_exit("its end").success());
}

#[test]
fn claude_code_and_codex_sessions_resume_through_per_agent_templates() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let (proj, calc) = other_agents_home(home);
    let (out_claude, out_codex) = (home.join("argv-claude"), home.join("argv-codex"));
    for (title, out, id, path, dir) in [
        (
            "Parser counts",
            &out_claude,
            "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70",
            home.join(".claude/projects/-home-u-proj/5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70.jsonl"),
            &proj,
        ),
        (
            "Arithmetic check",
            &out_codex,
            "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5",
            home.join(".codex/sessions/2025/10/29/rollout-2025-10-29T00-59-38-019a2d7a-41c4-78b1-b7cc-a45d62a89cd5.jsonl"),
            &calc,
        ),
    ] {
        let mut pty = spawn(
            &[
                "--all",
                "--resume-cmd",
                &format!("claude={}", recorder(&out_claude)),
                "--resume-cmd",
                &format!("codex={}", recorder(&out_codex)),
            ],
            &[],
            home,
        );
        resume_row(&mut pty, title);
        let got = recorded(out);
        assert_eq!(
            got[..4],
            [
                path.to_str().unwrap().to_string(),
                id.to_string(),
                dir.to_str().unwrap().to_string(),
                format!("pre{id}post"),
            ],
            "{title}"
        );
        assert_eq!(got[4].trim_end(), dir.to_str().unwrap(), "in the session's folder");
    }
}

#[test]
fn claude_code_and_codex_sessions_resume_with_their_own_commands() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let (proj, calc) = other_agents_home(home);
    // `claude` and `codex` on PATH that record how, and where, they ran.
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    for name in ["claude", "codex"] {
        let p = bin.join(name);
        let out = home.join(format!("argv-{name}"));
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\nprintf '%s\\0' \"$@\" > '{}'; pwd >> '{}'\n",
                out.display(),
                out.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path_var = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (title, name, want, dir) in [
        (
            "Parser counts",
            "claude",
            vec!["--resume=5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70"],
            &proj,
        ),
        (
            "Arithmetic check",
            "codex",
            vec!["resume", "--", "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5"],
            &calc,
        ),
    ] {
        let mut pty = spawn(&["--all"], &[("PATH", Path::new(&path_var))], home);
        resume_row(&mut pty, title);
        let got = recorded(&home.join(format!("argv-{name}")));
        let n = want.len();
        assert_eq!(got[..n], want[..], "{name}");
        assert_eq!(got[n].trim_end(), dir.to_str().unwrap(), "{name}");
    }
}
