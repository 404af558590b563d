//! The global allocator: mimalloc, or the C library's `malloc` when the
//! address space is limited (`ulimit -v`).
//!
//! mimalloc reserves address space far beyond what it uses: a 1 GiB arena
//! at the first allocation and, once that reservation fails under a limit,
//! a 32 MiB segment for every thread that allocates. glibc adds a 64 MiB
//! arena for every thread that calls `malloc` (a thread-local destructor
//! registered is enough). Under `ulimit -v 300000` the picker's 13 threads
//! reserved ~480 MB while ~25 MB were resident, and allocations of a few
//! bytes failed. The C library's allocator with one arena reserves about
//! what it uses, so under a limit arbor uses that one (mimalloc stays the
//! allocator otherwise: it measured faster, see `main.rs`).
//!
//! The choice is made at the first allocation, before `main`, and never
//! changes: memory is always freed by the allocator that gave it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// arbor's global allocator (see the module's documentation).
pub struct Allocator;

const UNDECIDED: u8 = 0;
const MIMALLOC: u8 = 1;
const SYSTEM: u8 = 2;

static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);
/// The size of the last allocation that failed (0: none did).
static FAILED: AtomicUsize = AtomicUsize::new(0);
/// The thread it failed on ([`this_thread`]) and when ([`now_ms`]).
static FAILED_ON: AtomicUsize = AtomicUsize::new(0);
static FAILED_AT: AtomicUsize = AtomicUsize::new(0);

/// How long after an allocation failed an abort on its thread is taken to
/// be for it: Rust aborts right after an infallible allocation fails (its
/// hook may print a backtrace first, which allocates and can take a
/// while); after a fallible one (`try_reserve`) the program goes on, and a
/// later abort is for something else.
const ABORT_WITHIN_MS: usize = 5_000;

/// A monotonic clock in milliseconds (`clock_gettime`: safe in the abort
/// handler).
fn now_ms() -> usize {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the struct it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
        (t.tv_sec as usize).saturating_mul(1000) + t.tv_nsec as usize / 1_000_000
    }
    #[cfg(not(unix))]
    0
}

/// The calling thread, as a number (`pthread_self`: no system call, and
/// safe in the abort handler, which runs on the aborting thread).
fn this_thread() -> usize {
    #[cfg(unix)]
    // SAFETY: pthread_self has no preconditions and cannot fail.
    return unsafe { libc::pthread_self() } as usize;
    #[cfg(not(unix))]
    return 0;
}

fn choice() -> u8 {
    match CHOICE.load(Ordering::Relaxed) {
        UNDECIDED => decide(),
        chosen => chosen,
    }
}

/// Reads the limit and chooses; the first caller's choice stands.
#[cold]
fn decide() -> u8 {
    let chosen = if crate::address_space::limit_bytes().is_some() {
        tune_c_malloc();
        SYSTEM
    } else {
        MIMALLOC
    };
    match CHOICE.compare_exchange(UNDECIDED, chosen, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => chosen,
        Err(earlier) => earlier,
    }
}

/// One `malloc` arena for all threads: each further one reserves 64 MiB.
/// And blocks of 256 KiB and more mapped on their own, so that freeing
/// one gives its address space back at once: by default that threshold
/// grows with the blocks freed (to 32 MiB), and freed big blocks stayed in
/// the heap (`arbor index` of 2,000 sessions under 300 MB: peak 137 -> 121
/// MB of address space).
fn tune_c_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: sets two tuning parameters; allocates nothing of Rust's.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 << 10);
    }
}

/// Whether mimalloc is the allocator (no address-space limit).
pub fn is_mimalloc() -> bool {
    choice() == MIMALLOC
}

/// The size of the allocation whose failure the calling thread is
/// aborting for: the last one that failed, when it failed on this thread
/// moments ago (see [`ABORT_WITHIN_MS`]). An abort for anything else is
/// not out of memory.
pub fn failed_allocation() -> Option<usize> {
    failed_allocation_at(now_ms())
}

/// [`failed_allocation`] at the time `now` ([`now_ms`]).
fn failed_allocation_at(now: usize) -> Option<usize> {
    match FAILED.load(Ordering::Acquire) {
        0 => None,
        _ if FAILED_ON.load(Ordering::Acquire) != this_thread() => None,
        _ if now.saturating_sub(FAILED_AT.load(Ordering::Acquire)) > ABORT_WITHIN_MS => None,
        size => Some(size),
    }
}

fn record(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        FAILED_ON.store(this_thread(), Ordering::Release);
        FAILED_AT.store(now_ms(), Ordering::Release);
        FAILED.store(size.max(1), Ordering::Release);
    }
    p
}

// SAFETY: every call goes to the allocator chosen once and for all, which
// upholds `GlobalAlloc`'s contract itself.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = match choice() {
            MIMALLOC => mimalloc::MiMalloc.alloc(layout),
            _ => System.alloc(layout),
        };
        record(p, layout.size())
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = match choice() {
            MIMALLOC => mimalloc::MiMalloc.alloc_zeroed(layout),
            _ => System.alloc_zeroed(layout),
        };
        record(p, layout.size())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match choice() {
            MIMALLOC => mimalloc::MiMalloc.dealloc(ptr, layout),
            _ => System.dealloc(ptr, layout),
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = match choice() {
            MIMALLOC => mimalloc::MiMalloc.realloc(ptr, layout, new_size),
            _ => System.realloc(ptr, layout, new_size),
        };
        record(p, new_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A failed allocation is remembered (for the out-of-memory message),
    /// and memory goes back to the allocator that gave it.
    #[test]
    fn a_failed_allocation_is_recorded() {
        let a = Allocator;
        // SAFETY: a layout this large is refused; nothing is freed.
        let huge = Layout::from_size_align(usize::MAX >> 2, 8).unwrap();
        assert!(unsafe { a.alloc(huge) }.is_null());
        assert_eq!(failed_allocation(), Some(usize::MAX >> 2));
        // Not this thread's failure: another thread aborting is not out of
        // memory.
        let elsewhere = std::thread::spawn(failed_allocation).join().unwrap();
        assert_eq!(elsewhere, None);
        assert_eq!(failed_allocation(), Some(usize::MAX >> 2));
        // Seconds later the thread is still going: the failure was handled
        // (a fallible allocation's), and an abort now is for something else.
        let later = now_ms() + ABORT_WITHIN_MS + 1;
        assert_eq!(failed_allocation_at(later), None);
        let small = Layout::from_size_align(64, 8).unwrap();
        unsafe {
            let p = a.alloc(small);
            assert!(!p.is_null());
            let p = a.realloc(p, small, 4096);
            assert!(!p.is_null());
            a.dealloc(p, Layout::from_size_align(4096, 8).unwrap());
        }
    }
}
