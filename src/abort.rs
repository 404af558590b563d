//! When arbor aborts (an allocation failed: Rust's answer to that is
//! `abort`, which no panic hook sees): the terminal is restored if the
//! screen was up, out of memory is said in a sentence, and arbor exits
//! with status 1 rather than dying of SIGABRT.
//!
//! The handler runs in a signal handler: it only reads what was prepared
//! before (the terminal's descriptor and settings, atomics) and calls
//! `write`, `tcsetattr` and `_exit`.

#[cfg(unix)]
mod imp {
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

    /// The terminal's descriptor while the screen is up (-1: not up).
    static TTY: AtomicI32 = AtomicI32::new(-1);
    /// Whether `SAVED` holds the settings from before raw mode.
    static HAVE_SAVED: AtomicBool = AtomicBool::new(false);
    static mut SAVED: MaybeUninit<libc::termios> = MaybeUninit::uninit();
    /// The address-space limit in bytes (0: none), read at start.
    static LIMIT: AtomicU64 = AtomicU64::new(0);

    /// What `restore_terminal` writes, prepared: bracketed paste and mouse
    /// reporting off, the alternate screen left, the cursor shown.
    const RESTORE: &[u8] =
        b"\x1b[?2004l\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1049l\x1b[?25h";

    pub fn install() {
        LIMIT.store(
            crate::address_space::limit_bytes().unwrap_or(0),
            Ordering::Relaxed,
        );
        let handler: extern "C" fn(libc::c_int) = on_abort;
        // SAFETY: installs a handler that only makes async-signal-safe
        // calls; the struct is zeroed, then filled.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGABRT, &action, std::ptr::null_mut());
        }
    }

    /// The screen is about to go up on the terminal `fd` (kept open for
    /// the process's life): its settings now are the ones to restore.
    pub fn screen_entering(fd: i32) {
        let mut t = MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills `t` when it returns 0; SAVED is written
        // only here, before HAVE_SAVED says it may be read.
        unsafe {
            if libc::tcgetattr(fd, t.as_mut_ptr()) == 0 {
                HAVE_SAVED.store(false, Ordering::SeqCst);
                std::ptr::addr_of_mut!(SAVED).write(t);
                HAVE_SAVED.store(true, Ordering::SeqCst);
            }
        }
        TTY.store(fd, Ordering::SeqCst);
    }

    /// The screen is down: an abort leaves the terminal alone.
    pub fn screen_left() {
        TTY.store(-1, Ordering::SeqCst);
    }

    extern "C" fn on_abort(_sig: libc::c_int) {
        let tty = TTY.swap(-1, Ordering::SeqCst);
        if tty >= 0 {
            // SAFETY: write and tcsetattr are async-signal-safe; SAVED is
            // complete once HAVE_SAVED is set.
            unsafe {
                libc::write(tty, RESTORE.as_ptr().cast(), RESTORE.len());
                if HAVE_SAVED.load(Ordering::SeqCst) {
                    let saved = (*std::ptr::addr_of!(SAVED)).as_ptr();
                    libc::tcsetattr(tty, libc::TCSANOW, saved);
                }
            }
        }
        let Some(size) = crate::allocator::failed_allocation() else {
            // Another abort: the default action follows (abort re-raises).
            return;
        };
        let mut msg = Message::default();
        msg.push(b"arbor: out of memory: an allocation of ");
        msg.number(size as u64);
        msg.push(b" bytes failed");
        let limit = LIMIT.load(Ordering::Relaxed);
        if limit > 0 {
            msg.push(b" (the address space is limited to ");
            msg.number(limit / 1_000_000);
            msg.push(b" MB: ulimit -v ");
            msg.number(limit / 1024);
            msg.push(b")");
        }
        msg.push(b"\n");
        // SAFETY: write and _exit are async-signal-safe.
        unsafe {
            libc::write(2, msg.buf.as_ptr().cast(), msg.len);
            libc::_exit(1);
        }
    }

    /// A line built without allocating.
    struct Message {
        buf: [u8; 256],
        len: usize,
    }

    impl Default for Message {
        fn default() -> Message {
            Message {
                buf: [0; 256],
                len: 0,
            }
        }
    }

    impl Message {
        fn push(&mut self, bytes: &[u8]) {
            for &b in bytes {
                if self.len < self.buf.len() {
                    self.buf[self.len] = b;
                    self.len += 1;
                }
            }
        }

        fn number(&mut self, mut n: u64) {
            let mut digits = [0u8; 20];
            let mut i = digits.len();
            loop {
                i -= 1;
                digits[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            self.push(&digits[i..]);
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn a_message_is_built_without_allocating() {
            let mut m = super::Message::default();
            m.push(b"a ");
            m.number(0);
            m.push(b" ");
            m.number(18_446_744_073_709_551_615);
            assert_eq!(&m.buf[..m.len], b"a 0 18446744073709551615");
        }
    }
}

#[cfg(unix)]
pub use imp::{install, screen_entering, screen_left};

/// The tests' way to fail once the screen is up (see
/// tests/memory_limit.rs), by `ARBOR_TEST_FAIL_ON_SCREEN`: `oom`, an
/// allocation refused (Rust aborts); `panic-in-thread`, a thread that
/// panics. Debug builds only: a released binary never fails on purpose.
pub fn fail_if_a_test_asks() {
    if !cfg!(debug_assertions) {
        return;
    }
    match std::env::var("ARBOR_TEST_FAIL_ON_SCREEN").as_deref() {
        Ok("oom") => {
            let _ = std::hint::black_box(Vec::<u8>::with_capacity(usize::MAX >> 2));
        }
        Ok("panic-in-thread") => {
            std::thread::spawn(|| panic!("a test's panic"));
        }
        _ => {}
    }
}

#[cfg(not(unix))]
pub fn install() {}
#[cfg(not(unix))]
pub fn screen_entering(_fd: i32) {}
#[cfg(not(unix))]
pub fn screen_left() {}
