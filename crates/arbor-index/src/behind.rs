//! Building the index behind an answer.
//!
//! Building the index costs far more than reading the rows: at 10,000
//! stress sessions a first `arbor list` took 21 s to build it and 2.7 s
//! to read the files (`--no-index`); at 100,000, 50 s against 4.4 s. So a
//! command that finds more than [`threshold`] bytes the index lacks (a
//! first run, a store copied in, weeks away) answers from the files, as
//! `--no-index` does, and leaves the build to `arbor index` started
//! behind it (`git gc --auto` detaches the same way). The index stays a
//! cache: the answer is the files' either way.
//!
//! One build runs at a time: a builder (that process, `arbor index`, the
//! picker's first run) holds [`BuildLock`] while it writes; a command that
//! builds behind and finds it held reads what the index lacks from the
//! files and writes nothing, rather than racing the builder for the same
//! files.
//!
//! A command does not share the cores with a build behind it either: while
//! it runs it holds [`mark_busy`]'s shared lock, and a builder behind
//! ([`yield_to_commands`]) stops before its next file or commit until no
//! command holds it (at most 30 s at a go). On two cores a query run beside
//! a build had taken up to 5× its time alone; now it runs as if no build
//! ran, and the build goes on between commands.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustix::fs::{flock, FlockOperation};

/// Bytes the index may lack before a command builds it behind its answer
/// rather than before it: ~2 s of indexing on two cores (~8 ns a byte for
/// the realistic profile's sessions), ~0.1 s of reading.
pub(crate) const BEHIND_BYTES: u64 = 256 << 20;

/// [`BEHIND_BYTES`], or `ARBOR_BUILD_BEHIND_BYTES` (tests and benchmarks
/// set it: `0` builds behind whatever is missing, a huge value never).
pub fn threshold() -> u64 {
    std::env::var("ARBOR_BUILD_BEHIND_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(BEHIND_BYTES)
}

/// A refresh that left what the index lacked to a build behind it: the
/// rows of those files were read from them, and nothing was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deferred {
    /// Files the index lacked (new or changed since it read them).
    pub files: usize,
    /// Their bytes to index.
    pub bytes: u64,
    /// The process already building the index, when one was.
    pub builder: Option<u32>,
}

impl Deferred {
    /// "N sessions (M MB)": what was read from the files.
    pub fn lacked(&self) -> String {
        let mb = self.bytes as f64 / (1 << 20) as f64;
        format!("{} sessions ({mb:.0} MB)", self.files)
    }
}

/// The file a builder holds locked: beside the index's database, named
/// after it, so that each index has its own.
pub(crate) fn lock_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(".build");
    PathBuf::from(p)
}

/// Held by the one process building the index; let go when dropped (or
/// when the process ends, however it ends: it is an `flock`).
#[derive(Debug)]
pub struct BuildLock {
    _file: File,
}

impl BuildLock {
    /// The lock, unless another process holds it.
    pub fn try_take(db: &Path) -> io::Result<Option<BuildLock>> {
        let file = open_lock(db)?;
        match flock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(Some(BuildLock::holding(file))),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The lock, waiting for the process holding it to finish. This
    /// process's [`mark_busy`] is let go first: the builder waited for
    /// would else stop for it, and neither would go on.
    pub fn wait(db: &Path) -> io::Result<BuildLock> {
        unmark_busy();
        let file = open_lock(db)?;
        flock(&file, FlockOperation::LockExclusive)?;
        Ok(BuildLock::holding(file))
    }

    fn holding(mut file: File) -> BuildLock {
        // The pid tells others who builds; a lock without it still locks.
        let _ = file
            .set_len(0)
            .and_then(|_| file.rewind())
            .and_then(|_| write!(file, "{}", std::process::id()))
            .and_then(|_| file.flush());
        BuildLock { _file: file }
    }
}

fn open_lock(db: &Path) -> io::Result<File> {
    open_at(&lock_path(db))
}

/// The pid of the process building the index in `db`, when one is (0 when
/// it has not written its pid yet).
pub fn builder(db: &Path) -> Option<u32> {
    let mut file = File::open(lock_path(db)).ok()?;
    // A shared lock: two processes looking at once do not see each other.
    if flock(&file, FlockOperation::NonBlockingLockShared).is_ok() {
        return None;
    }
    let mut pid = String::new();
    let _ = file.read_to_string(&mut pid);
    Some(pid.trim().parse().unwrap_or(0))
}

/// The file commands hold a shared lock on while they run (see
/// [`mark_busy`]), beside the index's database.
pub(crate) fn busy_path(db: &Path) -> PathBuf {
    let mut p = db.as_os_str().to_owned();
    p.push(".busy");
    PathBuf::from(p)
}

/// This process's shared lock on [`busy_path`], while it holds one.
static BUSY: Mutex<Option<File>> = Mutex::new(None);

/// Marks this process as a command that answers now: a builder behind
/// ([`yield_to_commands`]) stops until it ends (or calls [`unmark_busy`]).
/// (A build that starts after this look runs beside it.)
/// A shared lock: commands never wait for each other. Failing (a read-only
/// cache dir), the command just runs beside the build.
pub fn mark_busy(db: &Path) {
    let Ok(mut held) = BUSY.lock() else { return };
    if held.is_some() {
        return;
    }
    // Made by the builder ([`yield_to_commands`]): without it no build
    // behind has started, and a command writes nothing to the cache dir.
    let Ok(file) = File::open(busy_path(db)) else {
        return;
    };
    // The builder holds it exclusively only for an instant (see
    // `pause_while_busy`): this waits at most that long.
    if flock(&file, FlockOperation::LockShared).is_ok() {
        *held = Some(file);
    }
}

/// Lets [`mark_busy`]'s lock go: this process no longer answers (it waits
/// for a build, or hands the terminal to an agent).
pub fn unmark_busy() {
    if let Ok(mut held) = BUSY.lock() {
        held.take();
    }
}

/// The busy file of the index a builder behind yields to.
static YIELDING: OnceLock<File> = OnceLock::new();

/// Makes this process (`arbor index --behind`) stop its build while any
/// command holds [`mark_busy`] on the index at `db`.
pub fn yield_to_commands(db: &Path) {
    if let Ok(file) = open_at(&busy_path(db)) {
        let _ = YIELDING.set(file);
    }
}

/// The longest a build behind stops for commands at one go. A command
/// that holds it longer (one whose output waits for a pager nobody reads)
/// then shares the cores with the build for as long again, rather than stop
/// it: a first query at 100,000 sessions reads its files in ~10 s.
const LONGEST_PAUSE: Duration = Duration::from_secs(30);

/// Until when a build that stopped for [`LONGEST_PAUSE`] goes on unpaused.
static UNPAUSED_UNTIL: Mutex<Option<Instant>> = Mutex::new(None);

/// Waits while a command holds the index busy, when this process yields
/// to commands: called by the build before each file and each commit. The
/// lock is tried exclusively (free only when no command holds it shared)
/// every 10 ms and let go at once (two threads of this process taking it
/// at once share it: the lock is its open file's).
pub(crate) fn pause_while_busy() {
    let Some(file) = YIELDING.get() else { return };
    let unpaused = |until: Option<Instant>| {
        if let Ok(mut u) = UNPAUSED_UNTIL.lock() {
            match until {
                Some(t) => *u = Some(t),
                None => return u.is_some_and(|t| Instant::now() < t),
            }
        }
        false
    };
    if unpaused(None) {
        return;
    }
    let started = Instant::now();
    loop {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {
                let _ = flock(file, FlockOperation::Unlock);
                return;
            }
            Err(e) if e == rustix::io::Errno::WOULDBLOCK => {}
            Err(_) => return,
        }
        if started.elapsed() > LONGEST_PAUSE {
            arbor_util::log::line("index build goes on beside a command that runs long");
            unpaused(Some(Instant::now() + LONGEST_PAUSE));
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether this process builds behind commands (see [`yield_to_commands`]).
fn yields() -> bool {
    YIELDING.get().is_some()
}

/// A test's hold on a build behind (debug builds only): with
/// `ARBOR_TEST_PAUSE_BUILD_AFTER=N`, a builder behind commits its first N
/// files, writes its pid to the file named by `ARBOR_TEST_BUILD_PAUSED`
/// and waits until that file is gone, so that a test can run commands
/// while a real build is in progress.
pub(crate) struct TestPause {
    left: Option<usize>,
}

impl TestPause {
    pub(crate) fn from_env() -> TestPause {
        let left = (cfg!(debug_assertions) && yields())
            .then(|| std::env::var("ARBOR_TEST_PAUSE_BUILD_AFTER").ok())
            .flatten()
            .and_then(|n| n.parse().ok());
        TestPause { left }
    }

    /// Counts a file put; whether the build is to stop here.
    pub(crate) fn after_one(&mut self) -> bool {
        match &mut self.left {
            Some(n) => {
                *n = n.saturating_sub(1);
                *n == 0
            }
            None => false,
        }
    }

    pub(crate) fn wait(&mut self) {
        self.left = None;
        let Some(flag) = std::env::var_os("ARBOR_TEST_BUILD_PAUSED") else {
            return;
        };
        if std::fs::write(&flag, std::process::id().to_string()).is_err() {
            return;
        }
        while std::path::Path::new(&flag).exists() {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn open_at(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Where a builder started by [`start_builder`] says what went wrong.
pub(crate) fn log_path(db: &Path) -> PathBuf {
    let mut p = lock_path(db).into_os_string();
    p.push(".log");
    PathBuf::from(p)
}

/// Starts `arbor index --behind` with `store_args` (the options that name
/// the store: `--store=DIR`, `--session-dir=DIR`, `--agent=NAME`) in a
/// session of its own (a Ctrl+C or a closed terminal does not stop it),
/// its errors to [`log_path`] of the index at `db`. Returns its pid; it is
/// waited for on a thread of its own (a picker that started it would else
/// keep it a zombie until it quits).
pub fn start_builder(store_args: &[OsString], db: &Path) -> io::Result<u32> {
    let log = File::create(log_path(db))?;
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(store_args)
        .args(["index", "--behind"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log);
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| match libc::setsid() {
            -1 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        });
    }
    let mut child = cmd.spawn()?;
    let pid = child.id();
    let _ = std::thread::Builder::new()
        .name("index builder".into())
        .spawn(move || child.wait());
    Ok(pid)
}

/// Lowers this process's CPU priority for a build behind an answer: its
/// nice value, and its session's. With the scheduler's autogroups (most
/// desktop kernels), a process in a session of its own (as
/// [`start_builder`] starts it) competes as a group with the user's
/// terminal, whatever its own nice value: a query answered beside a new
/// build took 17.8 s instead of 7. Either may fail (not Linux, no
/// autogroups): the build just runs at the usual priority. Only for `arbor
/// index --behind`, in a session of its own: the autogroup is the session's.
pub fn lower_priority() {
    // SAFETY: nice only changes this process's priority.
    unsafe { libc::nice(10) };
    let _ = std::fs::write("/proc/self/autogroup", "10");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A builder that yields to commands stops while one holds the index
    /// busy, and goes on once it lets go.
    #[test]
    fn a_build_behind_waits_while_a_command_runs() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.db");
        yield_to_commands(&db);
        pause_while_busy();
        // As `mark_busy` takes it (its lock is the process's, which other
        // tests let go).
        let command = open_at(&busy_path(&db)).unwrap();
        flock(&command, FlockOperation::LockShared).unwrap();
        let (went, gone) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            pause_while_busy();
            let _ = went.send(());
        });
        // Not a timing goal: without the wait it would be through at once.
        let early = gone.recv_timeout(std::time::Duration::from_millis(300));
        drop(command);
        assert!(early.is_err(), "it went on while the command ran");
        let late = gone.recv_timeout(std::time::Duration::from_secs(30));
        assert!(late.is_ok(), "it goes on once the command is done");
    }

    #[test]
    fn a_held_lock_is_seen_and_not_taken_twice() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("index.db");
        assert_eq!(builder(&db), None, "no lock file yet");
        let held = BuildLock::try_take(&db).unwrap().expect("free");
        assert_eq!(builder(&db), Some(std::process::id()));
        assert!(BuildLock::try_take(&db).unwrap().is_none());
        drop(held);
        assert_eq!(builder(&db), None);
        let again = BuildLock::wait(&db).unwrap();
        assert_eq!(builder(&db), Some(std::process::id()));
        drop(again);
    }
}
