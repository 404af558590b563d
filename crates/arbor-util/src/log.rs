//! The one diagnostic log. Lines go to the `--log FILE` when one was given
//! (timestamped), and with `ARBOR_TRACE` set to stderr as well, with the
//! milliseconds since the first line (where `arbor list` spends its time) —
//! but never while the picker's screen is up: nothing may reach a terminal
//! in raw mode.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

static LOG: OnceLock<Mutex<std::fs::File>> = OnceLock::new();
static ON_SCREEN: AtomicBool = AtomicBool::new(false);

/// Opens (appends to) the log file.
pub fn init(path: &std::path::Path) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let _ = LOG.set(Mutex::new(f));
    Ok(())
}

/// When `ARBOR_TRACE` is set: the moment of the first line.
fn trace_start() -> Option<Instant> {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    *START.get_or_init(|| std::env::var_os("ARBOR_TRACE").map(|_| Instant::now()))
}

fn tracing() -> bool {
    !ON_SCREEN.load(Ordering::Relaxed) && trace_start().is_some()
}

/// The picker's screen is up (`true`) or gone: stderr is not written
/// meanwhile.
pub fn on_screen(up: bool) {
    ON_SCREEN.store(up, Ordering::Relaxed);
}

/// Whether the picker's screen is up (stderr must not be written).
pub fn screen_up() -> bool {
    ON_SCREEN.load(Ordering::Relaxed)
}

/// Whether a line would go anywhere (to skip building one that would not).
pub fn enabled() -> bool {
    LOG.get().is_some() || tracing()
}

/// Writes one line where the log goes, if anywhere.
pub fn line(msg: impl AsRef<str>) {
    let msg = msg.as_ref();
    if let Some(m) = LOG.get() {
        if let Ok(mut f) = m.lock() {
            let now = chrono::Utc::now().format("%H:%M:%S%.3f");
            let _ = match (cpu_ms(), resident_mb()) {
                (Some(cpu), Some(mb)) => writeln!(f, "{now} {msg} [cpu {cpu:.0} ms, {mb} MB]"),
                (Some(cpu), None) => writeln!(f, "{now} {msg} [cpu {cpu:.0} ms]"),
                _ => writeln!(f, "{now} {msg}"),
            };
        }
    }
    if tracing() {
        if let Some(t) = trace_start() {
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let cpu = cpu_ms().map_or(String::new(), |c| format!(", {c:.0} ms of CPU"));
            match resident_mb() {
                Some(mb) => eprintln!("arbor: {msg}: {ms:.1} ms{cpu}, {mb} MB resident"),
                None => eprintln!("arbor: {msg}: {ms:.1} ms{cpu}"),
            }
        }
    }
}

/// The CPU time the process has used on all its threads: on two cores a
/// load is CPU-bound, and its wall time varies with the machine's other
/// work far more than this.
fn cpu_ms() -> Option<f64> {
    #[cfg(unix)]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        Some(t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 / 1e6)
    }
    #[cfg(not(unix))]
    None
}

/// The process's resident set, where the system tells it cheaply (a trace
/// shows which step made the memory a run peaks at).
fn resident_mb() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        Some((pages * rustix::param::page_size() as u64) >> 20)
    }
    #[cfg(not(target_os = "linux"))]
    None
}
