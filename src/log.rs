//! A minimal file log (`--log FILE`): nothing may reach the terminal while
//! it is in raw mode, so diagnostics go to a file when asked, else nowhere.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

static LOG: OnceLock<Mutex<std::fs::File>> = OnceLock::new();

/// Opens (appends to) the log file.
pub fn init(path: &std::path::Path) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let _ = LOG.set(Mutex::new(f));
    Ok(())
}

/// Writes one timestamped line, if logging is on.
pub fn line(msg: impl AsRef<str>) {
    if let Some(m) = LOG.get() {
        if let Ok(mut f) = m.lock() {
            let _ = writeln!(
                f,
                "{} {}",
                chrono::Utc::now().format("%H:%M:%S%.3f"),
                msg.as_ref()
            );
        }
    }
}

pub fn enabled() -> bool {
    LOG.get().is_some()
}
