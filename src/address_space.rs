//! The address-space limit (`ulimit -v`, `RLIMIT_AS`) and what arbor sizes
//! by it: the allocator (see `allocator`) and its thread pools. Every
//! thread's stack reserves 2 MiB of it whether used or not.

/// The limit in bytes; `None` when there is none. Allocates nothing (the
/// allocator asks it at its first allocation).
pub fn limit_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: writes the one struct it is given.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) } == 0;
        if ok && lim.rlim_cur != libc::RLIM_INFINITY {
            // `rlim_t` is u64 on Linux, not on every unix.
            #[allow(clippy::unnecessary_cast)]
            return Some(lim.rlim_cur as u64);
        }
    }
    None
}

/// Reserved by one pool thread: its stack (Rust's default) and the page
/// that guards it.
const THREAD_BYTES: u64 = (2 << 20) + 4096;

/// How many threads one of arbor's pools starts: `None` for rayon's
/// default (one per core, or `RAYON_NUM_THREADS`) when there is no limit;
/// under a limit, no more than a sixteenth of it in stacks (arbor has three pools: the shared one,
/// the picker's foreground and background ones).
pub fn pool_threads() -> Option<usize> {
    let limit = limit_bytes()?;
    // rayon's own setting stands in for the cores when it is given.
    let cores = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    Some(threads_within(limit, cores))
}

fn threads_within(limit: u64, cores: usize) -> usize {
    let fit = usize::try_from(limit / 16 / THREAD_BYTES).unwrap_or(usize::MAX);
    fit.clamp(1, cores.max(1))
}

/// The limit for a message: " (the address space is limited to N MB:
/// `ulimit -v`)", or nothing without one.
pub fn limit_note() -> String {
    match limit_bytes() {
        Some(b) => format!(
            " (the address space is limited to {} MB: ulimit -v {})",
            b / 1_000_000,
            b / 1024
        ),
        None => String::new(),
    }
}

/// Starts rayon's shared pool under a limit, sized by it, and says so when
/// its threads cannot be started: rayon would otherwise start it at the
/// first parallel call and panic there ("the global thread pool has not
/// been initialized"). Without a limit the pool starts lazily, as always.
pub fn start_shared_pool() -> anyhow::Result<()> {
    let Some(threads) = pool_threads() else {
        return Ok(());
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot start {threads} worker thread(s): {e}{}",
                limit_note()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::threads_within;

    #[test]
    fn pools_fit_in_a_sixteenth_of_the_limit() {
        // 300,000 KiB: 9 stacks of 2 MiB in 19.2 MB.
        assert_eq!(threads_within(300_000 * 1024, 64), 9);
        assert_eq!(threads_within(300_000 * 1024, 2), 2);
        assert_eq!(threads_within(10 << 20, 8), 1);
        assert_eq!(threads_within(u64::MAX, 16), 16);
    }
}
