//! A program in a pseudo-terminal, for the tests of the real binary: its
//! screen as a terminal shows it, every byte it wrote, and keys sent to it.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, Child, CommandBuilder, ExitStatus, MasterPty, PtySize};

/// `program` with the terminal the tests assume (xterm, no colours) and
/// none of the runner's store locations or resume command.
pub fn command(program: impl AsRef<OsStr>) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(program);
    for var in [
        "ATOMIC_CODING_AGENT_DIR",
        "PI_CODING_AGENT_DIR",
        "ATOMIC_CODING_AGENT_SESSION_DIR",
        "PI_CODING_AGENT_SESSION_DIR",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "ARBOR_RESUME_CMD",
        "ARBOR_CONFIG",
    ] {
        cmd.env_remove(var);
    }
    // No settings file of the runner's (tests that want one name it).
    cmd.env("XDG_CONFIG_HOME", "/nonexistent-arbor-config");
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    cmd
}

/// The built `arbor`, as [`command`] sets it up.
pub fn arbor() -> CommandBuilder {
    command(env!("CARGO_BIN_EXE_arbor"))
}

/// `sh -c script` (for a redirection such as `arbor --print > FILE`).
pub fn shell(script: &str) -> CommandBuilder {
    let mut cmd = command("sh");
    cmd.arg("-c");
    cmd.arg(script);
    cmd
}

/// A path as one `sh` word.
pub fn quoted(p: &std::path::Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// A running program in a terminal of its own.
pub struct Term {
    pub child: Box<dyn Child + Send + Sync>,
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    pub master: Box<dyn MasterPty + Send>,
    /// Held open: the terminal's settings outlive the program only while
    /// some process holds its side (the last close resets them).
    slave: Box<dyn portable_pty::SlavePty + Send>,
    reader: std::thread::JoinHandle<()>,
}

impl Term {
    /// Starts `cmd` in a `rows`×`cols` terminal.
    pub fn spawn(cmd: CommandBuilder, rows: u16, cols: u16) -> Term {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let child = pair.slave.spawn_command(cmd).expect("spawn");
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut from = pair.master.try_clone_reader().unwrap();
        let reader = {
            let (parser, raw) = (parser.clone(), raw.clone());
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = from.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    parser.lock().unwrap().process(&buf[..n]);
                    raw.lock().unwrap().extend_from_slice(&buf[..n]);
                }
            })
        };
        let writer = pair.master.take_writer().unwrap();
        Term {
            child,
            parser,
            raw,
            writer,
            master: pair.master,
            slave: pair.slave,
            reader,
        }
    }

    /// The screen's text now.
    pub fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Whether the program has bracketed paste on.
    pub fn bracketed_paste(&self) -> bool {
        self.parser.lock().unwrap().screen().bracketed_paste()
    }

    /// Everything the program wrote so far.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// Everything the program wrote, read to the end: call it once the
    /// program has exited (it closes the terminal).
    pub fn into_output(self) -> Vec<u8> {
        let Term {
            raw, slave, reader, ..
        } = self;
        // The reader sees the end once no process holds the terminal.
        drop(slave);
        reader.join().unwrap();
        let out = raw.lock().unwrap().clone();
        out
    }

    /// Waits (20 s at most) for the screen to satisfy `pred`; returns it.
    pub fn wait_for(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
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

    /// Sends bytes as typed, at once.
    pub fn send(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).unwrap();
        self.writer.flush().unwrap();
    }

    /// Sends bytes, then pauses so that the next arrive in a read of their
    /// own (as keys pressed one after another do).
    pub fn press(&mut self, bytes: &[u8]) {
        self.send(bytes);
        std::thread::sleep(Duration::from_millis(60));
    }

    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits (20 s at most) for the program to end.
    pub fn wait_exit(&mut self, what: &str) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "arbor did not exit on {what}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
