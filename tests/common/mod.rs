//! Helpers shared by the integration tests: the built binary, the shared
//! corpora (generated fresh into temp dirs, never written in place).
#![allow(dead_code)]

pub mod pty;
pub mod sshd;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `../shared` beside the repository (override with ARBOR_SHARED).
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("ARBOR_SHARED") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

pub fn arbor() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arbor"));
    // Keep tests away from the developer's real store and cache.
    c.env("HOME", "/nonexistent-arbor-home")
        .env_remove("ATOMIC_CODING_AGENT_DIR")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("ATOMIC_CODING_AGENT_SESSION_DIR")
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        // Nor arbor's settings file (tests that read one name it).
        .env_remove("ARBOR_CONFIG")
        // Nor the developer's ssh command for remotes.
        .env_remove("ARBOR_SSH")
        .env("XDG_CONFIG_HOME", "/nonexistent-arbor-config")
        .env(
            "XDG_CACHE_HOME",
            std::env::temp_dir().join("arbor-test-cache-unused"),
        )
        // Each test process gets its own index (tests that need a specific
        // one set ARBOR_CACHE_DIR again).
        .env("ARBOR_CACHE_DIR", test_cache_dir())
        .env("NO_COLOR", "1")
        // Plain tables fit `COLUMNS` when set: tests see the pipe layout
        // unless they set it.
        .env_remove("COLUMNS");
    c
}

/// A cache dir private to this test process.
///
/// A static is never dropped, so a `TempDir` here was never removed (an
/// index left in the temp dir by every test binary, every run). The dirs
/// are named by process instead, under the target's temp dir, and those of
/// processes that have ended are removed by the next.
pub fn test_cache_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let all = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-caches");
        if let Ok(entries) = std::fs::read_dir(&all) {
            for e in entries.flatten() {
                let pid = e.file_name();
                let ended = !Path::new("/proc").join(&pid).exists();
                if Path::new("/proc/self").exists() && ended {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = all.join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("test cache dir");
        dir
    })
    .clone()
}

pub fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run arbor");
    assert!(
        out.status.success(),
        "arbor failed: {:?}\nstderr: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 stdout")
}

/// Whether process `pid` (not necessarily a child of this one) has ended:
/// gone, or a zombie its parent has not reaped yet.
pub fn process_ended(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rsplit(')').next().unwrap_or("").trim_start();
    stat.is_empty() || state.starts_with('Z')
}

pub fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run arbor")
}

/// Runs the shared corpus generator into `out`.
pub fn gen_corpus(out: &Path, args: &[&str]) {
    let script = shared_dir().join("corpus/gen_corpus.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg(out)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 must be installed to generate test corpora");
    assert!(status.success(), "gen_corpus.py {args:?} failed");
}

/// The conformance corpus, made exactly as the reference outputs were.
pub fn conformance_corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("corpus");
    gen_corpus(
        &out,
        &["--profile", "conformance", "--seed", "1", "--small"],
    );
    dir
}

/// A copy of the bundled demo store with its placeholder paths filled in.
pub fn demo_store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("sessions");
    arbor::demo::copy_demo_store(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo-store"),
        &dest,
    )
    .expect("copy demo store");
    dir
}

pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        let to = dst.join(e.file_name());
        if ft.is_dir() {
            copy_dir(&e.path(), &to);
        } else if ft.is_file() {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// What a command run under a deadline produced.
pub struct Timed {
    pub status: std::process::ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub elapsed: std::time::Duration,
}

impl Timed {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Runs `cmd` with a deadline: spawn, poll, kill on timeout and fail the
/// test with "hang". Output goes to temp files, not pipes, so a large
/// output can never deadlock the child against an unread pipe.
pub fn run_timeout(cmd: &mut Command, limit: std::time::Duration) -> Timed {
    use std::io::{Read, Seek};
    let mut out = tempfile::tempfile().unwrap();
    let mut err = tempfile::tempfile().unwrap();
    let start = std::time::Instant::now();
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .spawn()
        .expect("spawn arbor");
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hang: {cmd:?} still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    out.rewind().unwrap();
    out.read_to_end(&mut stdout).unwrap();
    err.rewind().unwrap();
    err.read_to_end(&mut stderr).unwrap();
    Timed {
        status,
        stdout,
        stderr,
        elapsed,
    }
}

/// Code points a terminal could act on: C0 controls other than `\n`, DEL,
/// C1 controls (ESC and BEL included).
pub fn terminal_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c != '\n' && (c < ' ' || ('\u{7f}'..='\u{9f}').contains(&c)))
        .collect()
}

/// The session file whose name contains `part`, in any project folder of `root`.
pub fn find_session(root: &Path, part: &str) -> PathBuf {
    for d in std::fs::read_dir(root).unwrap() {
        let d = d.unwrap().path();
        if !d.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&d).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.contains(part) && name.ends_with(".jsonl") && p.is_file() {
                return p;
            }
        }
    }
    panic!("no session {part} under {}", root.display());
}

/// A rendered buffer as text, one trimmed line per row. A wide character
/// fills two cells; the second holds no symbol of its own.
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..buf.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            skip = unicode_width::UnicodeWidthStr::width(sym).saturating_sub(1);
            line.push_str(sym);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The screen as text with the terminal cursor shown: a `^` line under the
/// cursor's row, at its column (wide characters count two columns, as they
/// are drawn). Without a visible cursor, the screen alone.
pub fn screen_with_cursor(backend: &ratatui::backend::TestBackend) -> String {
    let text = buffer_text(backend.buffer());
    if !backend.cursor_visible() {
        return text;
    }
    let pos = backend.cursor_position();
    let mut out = String::new();
    for (y, line) in text.lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        if y == pos.y as usize {
            out.push_str(&" ".repeat(pos.x as usize));
            out.push_str("^\n");
        }
    }
    out
}

/// Types `text` into the picker of `app` a key at a time, each key's
/// searches run by `searcher` as the search worker runs them; gives the
/// answers to the last key (not applied to `app`).
pub fn type_query(
    app: &mut arbor::ui::App,
    searcher: &mut arbor::app::searcher::Searcher,
    text: &str,
) -> Vec<arbor::ui::AppEvent> {
    use arbor::ui::{AppEvent, Effect};
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    let mut answers = Vec::new();
    for c in text.chars() {
        answers.clear();
        let key = KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        for fx in app.update(AppEvent::Key(key)) {
            if matches!(fx, Effect::Search { .. }) {
                answers.extend(arbor::ui::runtime::perform_search(searcher, fx));
            }
        }
    }
    answers
}

/// Feeds `ev` to `app`, performing the effects a picker hands its workers
/// (search, preview) and feeding their results back. Returns all effects.
pub fn drive(app: &mut arbor::ui::App, ev: arbor::ui::AppEvent) -> Vec<arbor::ui::Effect> {
    use arbor::ui::Effect;
    let mut all = Vec::new();
    let mut queue = vec![ev];
    while let Some(ev) = queue.pop() {
        for fx in app.update(ev) {
            all.push(fx.clone());
            if matches!(fx, Effect::Search { .. } | Effect::LoadPreview { .. }) {
                queue.extend(arbor::ui::runtime::perform(fx));
            }
        }
    }
    all
}

/// The number the environment variable `name` holds, or `default` when it
/// is unset or not a number (the size knobs of the memory tests).
pub fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Peak memory of this process (Linux: the high-water mark of its RSS).
#[cfg(target_os = "linux")]
pub fn max_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Runs the test `name` (`module::test`) of this test binary alone in a
/// process of its own, with `envs`: its memory is measured alone.
pub fn run_test_alone<K, V>(name: &str, envs: impl IntoIterator<Item = (K, V)>) -> Output
where
    K: AsRef<std::ffi::OsStr>,
    V: AsRef<std::ffi::OsStr>,
{
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .envs(envs)
        .output()
        .unwrap()
}

/// The `max_rss_kb=` figure a test run by [`run_test_alone`] printed (it
/// printed [`max_rss_kb`]), after checking that it passed.
pub fn child_max_rss_kb(out: &Output) -> u64 {
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .split("max_rss_kb=")
        .nth(1)
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no figure from the child:\n{stdout}"))
}
