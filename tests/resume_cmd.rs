//! Enter in the real picker, in a pseudo-terminal: the resume command is a
//! shell-word template whose placeholders only ever become arguments, a
//! pi session resumes with pi's command, and a session whose folder is gone
//! is asked about.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};

/// arbor running in a pseudo-terminal; the screen parsed, the raw bytes kept.
struct Pty {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Pty {
    fn spawn(args: &[&str], env: &[(&str, &Path)], cwd: &Path) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 150,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_arbor"));
        cmd.args(args);
        cmd.env("HOME", cwd);
        cmd.env("ARBOR_CACHE_DIR", cwd.join("cache"));
        cmd.env("TERM", "xterm-256color");
        cmd.env("NO_COLOR", "1");
        cmd.env_remove("ARBOR_RESUME_CMD");
        cmd.env_remove("ATOMIC_CODING_AGENT_DIR");
        cmd.env_remove("ATOMIC_CODING_AGENT_SESSION_DIR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.cwd(cwd);
        let child = pair.slave.spawn_command(cmd).expect("spawn arbor");
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(30, 150, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().unwrap();
        {
            let (parser, raw) = (parser.clone(), raw.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    parser.lock().unwrap().process(&buf[..n]);
                    raw.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            });
        }
        let writer = pair.master.take_writer().unwrap();
        // The master must outlive the child's reads: keep it alive.
        std::mem::forget(pair.master);
        Pty {
            parser,
            raw,
            writer,
            child,
        }
    }

    fn send(&mut self, s: &[u8]) {
        self.writer.write_all(s).unwrap();
        self.writer.flush().unwrap();
        std::thread::sleep(Duration::from_millis(60));
    }

    fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let t = self.parser.lock().unwrap().screen().contents();
            if pred(&t) {
                return t;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; screen:\n{t}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                // Let the reader drain what was written last.
                std::thread::sleep(Duration::from_millis(200));
                return st;
            }
            assert!(Instant::now() < deadline, "arbor did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
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
    let mut pty = Pty::spawn(
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
    pty.send(b"\r");
    assert!(pty.wait_exit().success());
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
    let mut pty = Pty::spawn(
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
    pty.send(b"\r");
    assert!(pty.wait_exit().success());
    assert_eq!(
        recorded(&out),
        ["--session", path.to_str().unwrap(), ""],
        "pi --session <path>"
    );
}

#[test]
fn a_missing_folder_is_asked_about_before_resuming_elsewhere() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let gone = "/nonexistent-arbor/gone\u{1b}]0;pwned-title\u{7}\u{9b}31m".to_string();
    let store = home.join("store");
    session(&store.join("--p--"), "0199eeee-1", &gone, "a moved project");
    let out = home.join("argv");
    for (answer, runs) in [(&b"n\r"[..], false), (&b"y\r"[..], true)] {
        let _ = std::fs::remove_file(&out);
        let mut pty = Pty::spawn(
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
        pty.send(b"\r");
        let t = pty.wait_for("the question", |t| t.contains("no longer exists"));
        assert!(t.contains("[y/N]"), "{t}");
        pty.send(answer);
        assert!(pty.wait_exit().success());
        let said = after(&pty.raw(), "The session's folder");
        assert_eq!(controls(&said), Vec::<char>::new(), "{said:?}");
        assert!(
            said.contains("$'/nonexistent-arbor/gone\\x1b]0;pwned-title\\x07\\u009b31m'"),
            "the folder is shown exactly, escaped: {said:?}"
        );
        assert_eq!(out.exists(), runs, "answer {answer:?}");
        if runs {
            let got = recorded(&out);
            assert_eq!(got[2], gone, "{{cwd}} is still the recorded folder");
            assert_eq!(
                Path::new(got[4].trim_end()).canonicalize().unwrap(),
                home.canonicalize().unwrap(),
                "it ran in the current folder"
            );
        } else {
            assert!(said.contains("not resumed"), "{said:?}");
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
    let mut pty = Pty::spawn(
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
    pty.send(b"\r");
    assert!(pty.wait_exit().success());
    let said = after(&pty.raw(), "arbor-no-such-agent is not installed");
    assert_eq!(controls(&said), Vec::<char>::new(), "{said:?}");
    assert!(
        said.contains("proj\\x1b]2;retitled\\x07\\u0085'"),
        "{said:?}"
    );
    assert!(said.contains("--id $'0199ffff-\\x1b[31mred'"), "{said:?}");
}
