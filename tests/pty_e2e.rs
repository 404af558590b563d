//! The real binary in a pseudo-terminal: type a query, rename a session,
//! trash one and undo, and check the files on disk.

mod common;

use std::io::{Read, Write};

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};

struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
}

impl Screen {
    fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let t = self.text();
            if pred(&t) {
                return t;
            }
            if Instant::now() > deadline {
                panic!("timed out waiting for {what}; screen:\n{t}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn wait_file(what: &str, pred: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pred() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn picker_in_a_real_terminal() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    std::fs::create_dir_all(&data).unwrap();

    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 40,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open a pty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_arbor"));
    cmd.arg("--store");
    cmd.arg(&root);
    cmd.arg("--all");
    cmd.env("HOME", home.path());
    cmd.env("XDG_DATA_HOME", &data);
    cmd.env("ARBOR_CACHE_DIR", home.path().join("cache"));
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    cmd.cwd(home.path());
    let mut child = pair.slave.spawn_command(cmd).expect("spawn arbor");
    drop(pair.slave);

    let parser = Arc::new(Mutex::new(vt100::Parser::new(40, 120, 0)));
    let mut reader = pair.master.try_clone_reader().unwrap();
    {
        let parser = parser.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                parser.lock().unwrap().process(&buf[..n]);
            }
        });
    }
    let mut w = pair.master.take_writer().unwrap();
    let mut send = |s: &[u8]| {
        w.write_all(s).unwrap();
        w.flush().unwrap();
        std::thread::sleep(Duration::from_millis(60));
    };
    let screen = Screen { parser };

    screen.wait_for("the list", |t| {
        t.contains("Resume Session (All)") && t.contains("Fix flaky auth test")
    });

    // A query narrows the list to the matching session.
    send(b"flaky");
    let t = screen.wait_for("the query result", |t| {
        t.contains("> flaky") && !t.contains("Add --delimiter flag")
    });
    assert!(t.contains("Fix flaky auth test"), "{t}");

    // Rename it: ctrl+r, clear, type, enter.
    let target = common::find_session(&root, "01a1fd62");
    send(b"\x12");
    send(b"\x15");
    send(b"Renamed in a pty");
    send(b"\r");
    wait_file("the session_info line", || {
        std::fs::read_to_string(&target)
            .unwrap()
            .contains("Renamed in a pty")
    });
    screen.wait_for("the new name", |t| t.contains("Renamed in a pty"));
    let last = std::fs::read_to_string(&target).unwrap();
    let last: serde_json::Value = serde_json::from_str(last.lines().last().unwrap()).unwrap();
    assert_eq!(last["type"], "session_info");

    // Trash the selected session, then undo.
    send(b"\x04");
    screen.wait_for("the delete prompt", |t| t.contains("Delete session?"));
    send(b"\r");
    // We renamed it a moment ago, so arbor takes it for a live session and asks again.
    screen.wait_for("the live-session prompt", |t| {
        t.contains("an agent may be writing it")
    });
    send(b"\r");
    screen.wait_for("the trash status", |t| t.contains("Session moved to trash"));
    assert!(!target.exists(), "the file left the store");
    let trashed = data.join("Trash/files").join(target.file_name().unwrap());
    assert!(
        trashed.exists(),
        "the file is in the freedesktop trash at {}",
        trashed.display()
    );
    send(b"\x1a");
    screen.wait_for("the restore status", |t| t.contains("Session restored"));
    wait_file("the restored file", || target.exists());

    // Live: a session created by an agent right now appears without a rescan…
    send(b"\x15");
    let proj = root.join("--home-demo-projects-webapp--");
    let new_file = proj.join("2026-11-29T10-00-00-000Z_019ad000-0000-7000-8000-000000000001.jsonl");
    std::fs::write(
        &new_file,
        concat!(
            r#"{"type":"session","version":3,"id":"019ad000-0000-7000-8000-000000000001","timestamp":"2026-11-29T10:00:00.000Z","cwd":"/home/demo/projects/webapp"}"#,
            "\n",
            r#"{"type":"message","id":"aa000001","parentId":null,"timestamp":"2026-11-29T10:00:01.000Z","message":{"role":"user","content":"a brand new live session","timestamp":1795946401000}}"#,
            "\n"
        ),
    )
    .unwrap();
    screen.wait_for("the new session", |t| {
        t.contains("a brand new live session")
    });
    // …and grows in place: its message count follows the file.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&new_file)
        .unwrap();
    f.write_all(
        concat!(
            r#"{"type":"message","id":"aa000002","parentId":"aa000001","timestamp":"2026-11-29T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":1795946402000}}"#,
            "\n"
        )
        .as_bytes(),
    )
    .unwrap();
    drop(f);
    screen.wait_for("the grown session", |t| {
        t.lines()
            .any(|l| l.contains("a brand new live session") && l.contains("   2 "))
    });
    // A file deleted behind arbor's back vanishes from the list.
    std::fs::remove_file(&new_file).unwrap();
    screen.wait_for("the deleted session to vanish", |t| {
        !t.contains("a brand new live session")
    });

    // Esc leaves and restores the terminal.
    send(b"\x1b");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "arbor exited with {status:?}");
            break;
        }
        assert!(Instant::now() < deadline, "arbor did not exit on Esc");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `atomic --session "$(arbor --print)"`: the screen goes to the terminal
/// device and stdout carries only the chosen path.
#[test]
fn print_mode_writes_only_the_path_to_stdout() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out.txt");
    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 30,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open a pty");
    let mut cmd = CommandBuilder::new("sh");
    cmd.arg("-c");
    cmd.arg(format!(
        "'{}' --print --store '{}' --all > '{}'",
        env!("CARGO_BIN_EXE_arbor"),
        root.display(),
        out.display()
    ));
    cmd.env("HOME", home.path());
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(30, 120, 0)));
    let mut reader = pair.master.try_clone_reader().unwrap();
    {
        let parser = parser.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                parser.lock().unwrap().process(&buf[..n]);
            }
        });
    }
    let screen = Screen { parser };
    screen.wait_for("the list on the terminal", |t| {
        t.contains("Fix flaky auth test")
    });
    let mut w = pair.master.take_writer().unwrap();
    w.write_all(b"flaky").unwrap();
    w.flush().unwrap();
    screen.wait_for("the query", |t| {
        t.contains("> flaky") && !t.contains("Add --delimiter")
    });
    std::thread::sleep(Duration::from_millis(200));
    w.write_all(b"\r").unwrap();
    w.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        assert!(Instant::now() < deadline, "arbor did not exit on Enter");
        std::thread::sleep(Duration::from_millis(50));
    }
    let printed = std::fs::read_to_string(&out).unwrap();
    let expected = common::find_session(&root, "01a1fd62");
    assert_eq!(
        printed,
        format!("{}\n", expected.display()),
        "stdout holds the path alone"
    );
}

/// A paste is text for the query, never keys: a newline in it must not be
/// Enter (which would resume, here print, a session).
#[test]
fn a_bracketed_paste_with_a_newline_leaves_the_picker_open() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out.txt");
    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 24,
            cols: 80,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open a pty");
    let mut cmd = CommandBuilder::new("sh");
    cmd.arg("-c");
    cmd.arg(format!(
        "'{}' --print --store '{}' --all > '{}'",
        env!("CARGO_BIN_EXE_arbor"),
        root.display(),
        out.display()
    ));
    cmd.env("HOME", home.path());
    cmd.env("ARBOR_CACHE_DIR", home.path().join("cache"));
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(24, 80, 0)));
    let mut reader = pair.master.try_clone_reader().unwrap();
    {
        let parser = parser.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                parser.lock().unwrap().process(&buf[..n]);
            }
        });
    }
    let paste_mode = {
        let parser = parser.clone();
        move || parser.lock().unwrap().screen().bracketed_paste()
    };
    let screen = Screen { parser };
    screen.wait_for("the list", |t| t.contains("Fix flaky auth test"));
    assert!(paste_mode(), "arbor turns bracketed paste on");
    let mut w = pair.master.take_writer().unwrap();
    w.write_all(b"\x1b[200~flaky\nauth\r\n\x1b[201~").unwrap();
    w.flush().unwrap();
    let t = screen.wait_for("the pasted query", |t| t.contains("> flaky auth"));
    assert!(t.contains("Fix flaky auth test"), "{t}");
    // Give a wrongly taken Enter time to act.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the picker is still open"
    );
    w.write_all(b"\x1b").unwrap();
    w.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success());
            break;
        }
        assert!(Instant::now() < deadline, "arbor did not exit on Esc");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "",
        "nothing was picked"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while paste_mode() {
        assert!(
            Instant::now() < deadline,
            "bracketed paste is turned off on exit"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
