//! Measuring: run statistics (median and range), milliseconds and
//! megabytes, a process's CPU time and peak memory.

use std::time::Duration;

pub(crate) struct Stat(pub(crate) Vec<f64>);

impl Stat {
    pub(crate) fn median(&self) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }
    pub(crate) fn min(&self) -> f64 {
        self.0.iter().copied().fold(f64::INFINITY, f64::min)
    }
    pub(crate) fn max(&self) -> f64 {
        self.0.iter().copied().fold(0.0, f64::max)
    }
    pub(crate) fn ms(&self) -> String {
        format!(
            "median {:.1} ms ({:.1}–{:.1}, {} runs)",
            self.median(),
            self.min(),
            self.max(),
            self.0.len()
        )
    }
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub(crate) fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

/// Peak resident memory (VmHWM) of a live process, in bytes.
pub(crate) fn vm_hwm(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// This process's CPU time so far (user + system, all threads), in ms.
#[cfg(target_os = "linux")]
pub(crate) fn cpu_ms() -> f64 {
    // SAFETY: an all-zero rusage is a valid value; getrusage fills it in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF and a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |v: libc::timeval| v.tv_sec as f64 * 1e3 + v.tv_usec as f64 / 1e3;
    t(ru.ru_utime) + t(ru.ru_stime)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn cpu_ms() -> f64 {
    f64::NAN
}
