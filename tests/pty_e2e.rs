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

/// arbor in a pseudo-terminal of `rows`×`cols`, run through `sh -c` so that
/// `--print` output can go to a file.
struct Pty {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    screen: Screen,
    writer: Box<dyn Write + Send>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Pty {
    fn spawn(shell: &str, env: &[(&str, &std::path::Path)], rows: u16, cols: u16) -> Pty {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new("sh");
        cmd.arg("-c");
        cmd.arg(shell);
        for var in [
            "ATOMIC_CODING_AGENT_DIR",
            "PI_CODING_AGENT_DIR",
            "ATOMIC_CODING_AGENT_SESSION_DIR",
            "PI_CODING_AGENT_SESSION_DIR",
            "ARBOR_RESUME_CMD",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn");
        drop(pair.slave);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
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
        let writer = pair.master.take_writer().unwrap();
        Pty {
            child,
            screen: Screen { parser },
            writer,
            _master: pair.master,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    fn wait_exit(&mut self) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "arbor did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn quoted(p: &std::path::Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// Appends a user message, stamped now, to `path` (as a running agent does).
fn append_message(path: &std::path::Path, text: &str) {
    let session = arbor::session::read_session(path).unwrap();
    let parent = session.entries.last().unwrap().id.clone();
    let now = chrono::Utc::now();
    let line = serde_json::json!({
        "type": "message",
        "id": "feed0001",
        "parentId": parent,
        "timestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        "message": {"role": "user", "content": text, "timestamp": now.timestamp_millis()},
    });
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    writeln!(f, "{line}").unwrap();
}

/// Issue #10.1: a session appended while arbor was closed comes in above
/// the rows painted first (from the index, or as a cold load streams);
/// Enter pressed without moving must pick it, the newest, on a warm and on
/// a cold index.
#[test]
fn enter_at_once_picks_the_newest_session_warm_and_cold() {
    for warm in [true, false] {
        let store = common::demo_store();
        let root = store.path().join("sessions");
        let home = tempfile::tempdir().unwrap();
        let cache = home.path().join("cache");
        if warm {
            common::run_ok(
                common::arbor()
                    .env("ARBOR_CACHE_DIR", &cache)
                    .args(["list", "--all", "--store"])
                    .arg(&root),
            );
        }
        // The oldest session becomes the newest while arbor is closed.
        let (files, _) = arbor::store::list_session_files(
            &arbor::store::StoreConfig::single(&root, arbor::store::StoreKind::PerProject),
            &arbor::store::Scope::All,
        );
        let oldest = files
            .iter()
            .map(|f| arbor::session::info::scan_info(&f.path).unwrap())
            .min_by_key(|i| i.modified_ms)
            .unwrap();
        append_message(&oldest.path, "one more thing");
        let title: String = oldest.title().chars().take(16).collect();

        let out = home.path().join("out.txt");
        let shell = format!(
            "{} --print --store {} --all > {}",
            quoted(std::path::Path::new(env!("CARGO_BIN_EXE_arbor"))),
            quoted(&root),
            quoted(&out)
        );
        let mut pty = Pty::spawn(
            &shell,
            &[("HOME", home.path()), ("ARBOR_CACHE_DIR", &cache)],
            30,
            120,
        );
        pty.screen
            .wait_for("the changed session listed, loading done", |t| {
                t.contains(&title) && !t.contains("Loading")
            });
        pty.send(b"\r");
        assert!(pty.wait_exit().success());
        let printed = std::fs::read_to_string(&out).unwrap();
        assert_eq!(
            printed,
            format!("{}\n", oldest.path.display()),
            "Enter picked the newest session ({} index)",
            if warm { "warm" } else { "cold" }
        );
    }
}

/// Issue #11.1 (and #10.3): with the trash unavailable (XDG_DATA_HOME is a
/// file), Ctrl+D, Enter and a second Enter 50 ms later leave the file in
/// place; the question says why in one sentence; only `y` deletes.
#[test]
fn a_quick_second_enter_never_deletes_permanently() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let not_a_dir = home.path().join("data-is-a-file");
    std::fs::write(&not_a_dir, "").unwrap();
    let shell = format!(
        "exec {} --store {} --all",
        quoted(std::path::Path::new(env!("CARGO_BIN_EXE_arbor"))),
        quoted(&root)
    );
    let cache = home.path().join("cache");
    let mut pty = Pty::spawn(
        &shell,
        &[
            ("HOME", home.path()),
            ("XDG_DATA_HOME", &not_a_dir),
            ("ARBOR_CACHE_DIR", &cache),
        ],
        24,
        80,
    );
    pty.screen.wait_for("the list", |t| {
        t.contains("Fix flaky auth test") && !t.contains("Loading")
    });
    // The selected session: row 0, the newest.
    let (files, _) = arbor::store::list_session_files(
        &arbor::store::StoreConfig::single(&root, arbor::store::StoreKind::PerProject),
        &arbor::store::Scope::All,
    );
    let target = files
        .iter()
        .map(|f| arbor::session::info::scan_info(&f.path).unwrap())
        .max_by_key(|i| i.modified_ms)
        .unwrap()
        .path;

    pty.send(b"\x04");
    pty.screen
        .wait_for("the delete prompt", |t| t.contains("Delete session?"));
    pty.send(b"\r");
    std::thread::sleep(Duration::from_millis(50));
    pty.send(b"\r");
    let t = pty.screen.wait_for("the permanent-delete question", |t| {
        t.contains("Delete permanently?")
    });
    assert!(
        t.contains("cannot create the trash folder"),
        "one human sentence:\n{t}"
    );
    assert!(
        !t.contains("Error during") && !t.contains("FileSystem") && !t.contains("kind:"),
        "no debug text:\n{t}"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(target.exists(), "the double Enter deleted nothing");
    assert!(pty.running(), "the second Enter did not resume either");
    // Enter, however late, is not an answer.
    std::thread::sleep(Duration::from_millis(800));
    pty.send(b"\r");
    std::thread::sleep(Duration::from_millis(300));
    assert!(target.exists());
    // The deliberate answer deletes.
    pty.send(b"y");
    wait_file("the permanent deletion", || !target.exists());
    pty.screen
        .wait_for("the status", |t| t.contains("Session deleted permanently"));
    pty.send(b"\x1b");
    assert!(pty.wait_exit().success());
}

/// Someone else cuts the index's text file short while the picker runs
/// (its search worker keeps the file mapped): the picker does not die of
/// SIGBUS, its phrase searches still find what the files say, and the next
/// run reads the index again.
#[test]
fn picker_survives_its_text_file_cut_short() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let cache = home.path().join("cache");
    // A warm index: the picker maps its text for searches.
    common::run_ok(
        common::arbor()
            .env("ARBOR_CACHE_DIR", &cache)
            .arg("--store")
            .arg(&root)
            .args(["list", "--all"]),
    );
    let pty = native_pty_system();
    let pair = pty
        .openpty(PtySize {
            rows: 30,
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
    cmd.env("ARBOR_CACHE_DIR", &cache);
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    cmd.cwd(home.path());
    let mut child = pair.slave.spawn_command(cmd).expect("spawn arbor");
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
    let mut w = pair.master.take_writer().unwrap();
    let mut send = |s: &[u8]| {
        w.write_all(s).unwrap();
        w.flush().unwrap();
        std::thread::sleep(Duration::from_millis(60));
    };
    let screen = Screen { parser };
    screen.wait_for("the list", |t| t.contains("Fix flaky auth test"));
    // A phrase is confirmed on the stored text, read through the map.
    send(b"\"circular import\"");
    screen.wait_for("the first phrase's session", |t| {
        t.contains("pyledger/ledger.py has grown") && !t.contains("Fix flaky auth test")
    });
    let texts: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("index.sqlite-text."))
        .collect();
    assert_eq!(texts.len(), 1, "{texts:?}");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&texts[0])
        .unwrap()
        .set_len(0)
        .unwrap();
    // A phrase not asked before: its candidates' text must be read again.
    send(b"\x15");
    send(b"\"nav padding\"");
    screen.wait_for("the second phrase's session", |t| {
        t.contains("The sidebar overflows") && !t.contains("pyledger/ledger.py has grown")
    });
    assert!(
        child.try_wait().unwrap().is_none(),
        "arbor is still running"
    );
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
    // The next run reads everything again and answers as the files do.
    let query = |extra: &[&str]| {
        common::run_ok(
            common::arbor()
                .env("ARBOR_CACHE_DIR", &cache)
                .arg("--store")
                .arg(&root)
                .args(["list", "--all", "--query", "\"circular import\""])
                .args(extra),
        )
    };
    assert_eq!(query(&[]), query(&["--no-index"]));
    assert!(query(&[]).contains("01a212e6"));
}

/// The real binary in a pseudo-terminal, for the watcher and signal tests.
struct Running {
    screen: Screen,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    /// Everything the binary wrote to the terminal.
    output: Arc<Mutex<Vec<u8>>>,
    master: Box<dyn portable_pty::MasterPty + Send>,
    /// Kept open: the terminal's settings outlive the binary only while
    /// some process holds its side (the last close resets them).
    _slave: Box<dyn portable_pty::SlavePty + Send>,
}

impl Running {
    fn start(args: &[&std::ffi::OsStr], home: &std::path::Path, cwd: &std::path::Path) -> Running {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_arbor"));
        cmd.args(args);
        cmd.env("HOME", home);
        cmd.env("XDG_DATA_HOME", home.join("data"));
        cmd.env("ARBOR_CACHE_DIR", home.join("cache"));
        cmd.env("TERM", "xterm-256color");
        cmd.env("NO_COLOR", "1");
        cmd.cwd(cwd);
        let child = pair.slave.spawn_command(cmd).expect("spawn arbor");
        let parser = Arc::new(Mutex::new(vt100::Parser::new(30, 120, 0)));
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut reader = pair.master.try_clone_reader().unwrap();
        {
            let parser = parser.clone();
            let output = output.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    parser.lock().unwrap().process(&buf[..n]);
                    output.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            });
        }
        let writer = pair.master.take_writer().unwrap();
        Running {
            screen: Screen { parser },
            writer,
            child,
            output,
            master: pair.master,
            _slave: pair.slave,
        }
    }

    fn send(&mut self, s: &[u8]) {
        self.writer.write_all(s).unwrap();
        self.writer.flush().unwrap();
    }

    fn wait_exit(&mut self, what: &str) -> portable_pty::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "arbor did not exit on {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A session file's text: a header and one user message.
fn one_prompt_session(id: &str, cwd: &str, prompt: &str) -> String {
    format!(
        "{}\n{}\n",
        serde_json::json!({"type":"session","version":3,"id":id,"timestamp":"2026-11-29T10:00:00.000Z","cwd":cwd}),
        serde_json::json!({"type":"message","id":"aa000001","parentId":null,"timestamp":"2026-11-29T10:00:01.000Z","message":{"role":"user","content":prompt,"timestamp":1795946401000u64}})
    )
}

/// inotify watches held by a process (Linux: one `inotify wd:` line per
/// watch in the fdinfo of its inotify descriptors).
#[cfg(target_os = "linux")]
fn inotify_watches(pid: u32) -> usize {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
        return 0;
    };
    fds.flatten()
        .filter_map(|f| std::fs::read_to_string(f.path()).ok())
        .map(|info| {
            info.lines()
                .filter(|l| l.starts_with("inotify wd:"))
                .count()
        })
        .sum()
}

/// The list follows project folders: one removed while open takes its rows
/// with it at once, one created while open is watched and its sessions
/// appear; a project folder that links to a big tree costs one watch.
#[test]
fn watcher_follows_project_folders() {
    let home = tempfile::tempdir().unwrap();
    let root = home.path().join("sessions");
    let folder = |name: &str, id: &str, prompt: &str| {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("2026-11-29T10-00-00-000Z_{id}.jsonl")),
            one_prompt_session(id, "/home/u/p", prompt),
        )
        .unwrap();
    };
    folder(
        "--home-u-alpha--",
        "019ad000-0000-7000-8000-00000000000a",
        "alpha first prompt",
    );
    folder(
        "--home-u-beta--",
        "019ad000-0000-7000-8000-00000000000b",
        "beta first prompt",
    );
    // A project folder linking to a tree of 300 folders, with a session on top.
    let big = home.path().join("big");
    for i in 0..100 {
        std::fs::create_dir_all(big.join(format!("d{i}/e/f"))).unwrap();
    }
    std::fs::write(
        big.join("2026-11-29T10-00-00-000Z_019ad000-0000-7000-8000-00000000000c.jsonl"),
        one_prompt_session(
            "019ad000-0000-7000-8000-00000000000c",
            "/home/u/p",
            "linked first prompt",
        ),
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&big, root.join("--home-u-linked--")).unwrap();

    let mut arbor = Running::start(
        &["--store".as_ref(), root.as_os_str(), "--all".as_ref()],
        home.path(),
        home.path(),
    );
    arbor.screen.wait_for("the list", |t| {
        t.contains("alpha first prompt")
            && t.contains("beta first prompt")
            && (cfg!(not(unix)) || t.contains("linked first prompt"))
    });
    #[cfg(target_os = "linux")]
    let pid = arbor.child.process_id().expect("pid");
    // The root and its three project folders, nothing behind the link.
    #[cfg(target_os = "linux")]
    wait_file("4 watches", || inotify_watches(pid) == 4);

    std::fs::remove_dir_all(root.join("--home-u-alpha--")).unwrap();
    arbor
        .screen
        .wait_for("the removed folder's rows to go", |t| {
            !t.contains("alpha first prompt") && t.contains("beta first prompt")
        });

    folder(
        "--home-u-gamma--",
        "019ad000-0000-7000-8000-00000000000d",
        "gamma first prompt",
    );
    arbor.screen.wait_for("the new folder's session", |t| {
        t.contains("gamma first prompt")
    });
    // …and the new folder is watched: a second session written into it appears.
    std::fs::write(
        root.join(
            "--home-u-gamma--/2026-11-29T11-00-00-000Z_019ad000-0000-7000-8000-00000000000e.jsonl",
        ),
        one_prompt_session(
            "019ad000-0000-7000-8000-00000000000e",
            "/home/u/p",
            "gamma second prompt",
        ),
    )
    .unwrap();
    arbor
        .screen
        .wait_for("the new folder's second session", |t| {
            t.contains("gamma second prompt")
        });
    #[cfg(target_os = "linux")]
    assert_eq!(inotify_watches(pid), 4, "alpha's watch went, gamma's came");

    arbor.send(b"\x1b");
    assert!(arbor.wait_exit("Esc").success());
}

/// `arbor tree RELATIVE/PATH` reloads when the file grows.
#[test]
fn tree_of_a_relative_path_reloads_when_the_file_grows() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("work/sub");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s.jsonl");
    std::fs::write(
        &file,
        one_prompt_session(
            "019ad000-0000-7000-8000-0000000000f1",
            "/home/u/p",
            "the first question",
        ),
    )
    .unwrap();
    let mut arbor = Running::start(
        &["tree".as_ref(), "sub/./s.jsonl".as_ref()],
        home.path(),
        &home.path().join("work"),
    );
    arbor
        .screen
        .wait_for("the tree", |t| t.contains("the first question"));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    writeln!(
        f,
        "{}",
        serde_json::json!({"type":"message","id":"aa000002","parentId":"aa000001","timestamp":"2026-11-29T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"an answer appended while open"}],"timestamp":1795946402000u64}})
    )
    .unwrap();
    drop(f);
    arbor.screen.wait_for("the appended entry", |t| {
        t.contains("an answer appended while open")
    });
    arbor.send(b"\x1b");
    assert!(arbor.wait_exit("Esc").success());
}

/// The terminal's settings, as `stty -a` prints them.
#[cfg(unix)]
fn stty(tty: &std::path::Path) -> String {
    let out = std::process::Command::new("stty")
        .arg(if cfg!(target_os = "linux") {
            "-F"
        } else {
            "-f"
        })
        .arg(tty)
        .arg("-a")
        .output()
        .expect("run stty");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[cfg(unix)]
fn has_flag(stty: &str, flag: &str) -> Option<bool> {
    stty.split_whitespace().find_map(|w| {
        if w == flag {
            Some(true)
        } else if w.strip_prefix('-') == Some(flag) {
            Some(false)
        } else {
            None
        }
    })
}

/// SIGTERM, SIGINT or SIGHUP sent to the picker or the tree restores the
/// terminal (alternate screen left, mouse reporting and raw mode off), and
/// arbor dies of the signal.
#[cfg(unix)]
fn signal_restores_the_terminal(signal: &str, tree: bool) {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let session = common::find_session(&root, "01a1fd62");
    let args: Vec<&std::ffi::OsStr> = if tree {
        vec!["tree".as_ref(), session.as_os_str()]
    } else {
        vec!["--store".as_ref(), root.as_os_str(), "--all".as_ref()]
    };
    let mut arbor = Running::start(&args, home.path(), home.path());
    arbor.screen.wait_for("the screen", |t| {
        t.contains(if tree {
            "refreshes an expired token"
        } else {
            "Fix flaky auth test"
        })
    });
    let tty = arbor.master.tty_name().expect("the terminal's name");
    let before = stty(&tty);
    assert_eq!(
        has_flag(&before, "icanon"),
        Some(false),
        "raw mode while open:\n{before}"
    );
    assert_eq!(
        has_flag(&before, "echo"),
        Some(false),
        "raw mode while open:\n{before}"
    );

    let pid = arbor.child.process_id().expect("pid").to_string();
    let killed = std::process::Command::new("kill")
        .args([format!("-{signal}"), pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = arbor.wait_exit(signal);
    assert!(!status.success(), "arbor died of {signal}: {status:?}");

    let after = stty(&tty);
    assert_eq!(
        has_flag(&after, "icanon"),
        Some(true),
        "raw mode left:\n{after}"
    );
    assert_eq!(
        has_flag(&after, "echo"),
        Some(true),
        "raw mode left:\n{after}"
    );
    // Give the reader a moment for the last bytes.
    std::thread::sleep(Duration::from_millis(200));
    let out = arbor.output.lock().unwrap().clone();
    let last = |seq: &[u8]| out.windows(seq.len()).rposition(|w| w == seq);
    let entered = last(b"\x1b[?1049h").expect("the alternate screen was entered");
    let left = last(b"\x1b[?1049l");
    assert!(left > Some(entered), "the alternate screen was left");
    let mouse_on = last(b"\x1b[?1000h").expect("mouse reporting was on");
    assert!(
        last(b"\x1b[?1000l") > Some(mouse_on),
        "mouse reporting is off"
    );
    assert!(last(b"\x1b[?25h") > Some(entered), "the cursor is shown");
}

#[cfg(unix)]
#[test]
fn sigterm_restores_the_terminal() {
    signal_restores_the_terminal("TERM", false);
}

#[cfg(unix)]
#[test]
fn sigint_and_sighup_restore_the_terminal() {
    signal_restores_the_terminal("INT", false);
    signal_restores_the_terminal("HUP", true);
}

/// Issue #11.7: undoing a delete when a file already stands at the
/// session's path says so in a sentence, not as `RestoreCollision { … }`.
#[test]
fn a_restore_collision_is_one_sentence() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let shell = format!(
        "exec {} --store {} --all",
        quoted(std::path::Path::new(env!("CARGO_BIN_EXE_arbor"))),
        quoted(&root)
    );
    let cache = home.path().join("cache");
    let mut pty = Pty::spawn(
        &shell,
        &[
            ("HOME", home.path()),
            ("XDG_DATA_HOME", &data),
            ("ARBOR_CACHE_DIR", &cache),
        ],
        24,
        100,
    );
    pty.screen.wait_for("the list", |t| {
        t.contains("Fix flaky auth test") && !t.contains("Loading")
    });
    let (files, _) = arbor::store::list_session_files(
        &arbor::store::StoreConfig::single(&root, arbor::store::StoreKind::PerProject),
        &arbor::store::Scope::All,
    );
    let target = files
        .iter()
        .map(|f| arbor::session::info::scan_info(&f.path).unwrap())
        .max_by_key(|i| i.modified_ms)
        .unwrap()
        .path;
    pty.send(b"\x04");
    pty.screen
        .wait_for("the delete prompt", |t| t.contains("Delete session?"));
    pty.send(b"\r");
    pty.screen
        .wait_for("the trash status", |t| t.contains("Session moved to trash"));
    assert!(!target.exists());
    // Something else takes the name meanwhile.
    std::fs::write(&target, "not the session\n").unwrap();
    pty.send(b"\x1a");
    let t = pty
        .screen
        .wait_for("the undo failure", |t| t.contains("Undo failed"));
    assert!(t.contains("already exists"), "{t}");
    assert!(
        !t.contains("RestoreCollision") && !t.contains("remaining_items") && !t.contains('{'),
        "{t}"
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "not the session\n",
        "the other file is untouched"
    );
    pty.send(b"\x1b");
    assert!(pty.wait_exit().success());
}

/// Spawns `script` (a shell command line) in a pseudo-terminal of 30×120 in
/// `cwd`; returns the child and its screen.
fn spawn_in_pty(
    script: &str,
    cwd: &std::path::Path,
    home: &std::path::Path,
) -> (
    Box<dyn portable_pty::Child + Send + Sync>,
    Screen,
    Box<dyn Write + Send>,
) {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 30,
            cols: 120,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("open a pty");
    let mut cmd = CommandBuilder::new("sh");
    cmd.arg("-c");
    cmd.arg(script);
    cmd.cwd(cwd);
    cmd.env("HOME", home);
    cmd.env("XDG_DATA_HOME", home.join("data"));
    cmd.env("ARBOR_CACHE_DIR", home.join("cache"));
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    let child = pair.slave.spawn_command(cmd).expect("spawn");
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
    let w = pair.master.take_writer().unwrap();
    (child, Screen { parser }, w)
}

fn wait_exit(child: &mut Box<dyn portable_pty::Child + Send + Sync>) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.success();
        }
        assert!(Instant::now() < deadline, "arbor did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `arbor QUERY…` opens the picker with the query typed and its results
/// listed; Enter (with --print) picks the first result.
#[test]
fn arbor_with_words_opens_the_picker_with_that_query() {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let out = home.path().join("out.txt");
    let (mut child, screen, mut w) = spawn_in_pty(
        &format!(
            "'{}' --print --store '{}' --all flaky auth > '{}'",
            env!("CARGO_BIN_EXE_arbor"),
            root.display(),
            out.display()
        ),
        home.path(),
        home.path(),
    );
    let t = screen.wait_for("the query's results", |t| {
        t.contains("> flaky auth") && t.contains("Fix flaky auth test")
    });
    assert!(!t.contains("Add --delimiter flag"), "{t}");
    std::thread::sleep(Duration::from_millis(200));
    w.write_all(b"\r").unwrap();
    w.flush().unwrap();
    assert!(wait_exit(&mut child));
    let printed = std::fs::read_to_string(&out).unwrap();
    let expected = common::find_session(&root, "01a1fd62");
    assert_eq!(printed, format!("{}\n", expected.display()));
}

/// `arbor --last --print` prints the newest session of the current folder,
/// with no picker; with none there, it says so and fails.
#[test]
fn last_prints_the_newest_session_of_the_current_folder() {
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("proj");
    let other = home.path().join("other");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    let root = home.path().join("sessions");
    let cwd = project.display().to_string();
    let dir = root.join(arbor::store::paths::encode_cwd(&cwd));
    std::fs::create_dir_all(&dir).unwrap();
    let old = dir.join("2026-11-29T10-00-00-000Z_0199aaaa-0000-7000-8000-000000000001.jsonl");
    let new = dir.join("2026-11-29T11-00-00-000Z_0199aaaa-0000-7000-8000-000000000002.jsonl");
    std::fs::write(
        &old,
        one_prompt_session("0199aaaa-0000-7000-8000-000000000001", &cwd, "older"),
    )
    .unwrap();
    std::fs::write(
        &new,
        one_prompt_session("0199aaaa-0000-7000-8000-000000000002", &cwd, "newer")
            .replace("T10:00", "T11:00")
            .replace("1795946401000", "1795950001000"),
    )
    .unwrap();
    let out = home.path().join("out.txt");
    let script = |cwd_flag: &str| {
        format!(
            "'{}' --last --print --store '{}' {cwd_flag} > '{}'",
            env!("CARGO_BIN_EXE_arbor"),
            root.display(),
            out.display()
        )
    };
    let (mut child, _screen, _w) = spawn_in_pty(&script(""), &project, home.path());
    assert!(wait_exit(&mut child));
    let printed = std::fs::read_to_string(&out).unwrap();
    assert_eq!(printed, format!("{}\n", new.display()));
    let (mut child, screen, _w) = spawn_in_pty(&script(""), &other, home.path());
    assert!(!wait_exit(&mut child));
    screen.wait_for("the reason", |t| t.contains("no sessions in"));
}
