//! Memory maps of the index's text file that survive the file being cut
//! short by someone else (Linux).
//!
//! Touching a mapped page that lies beyond the end of its file raises
//! SIGBUS, and SIGBUS kills the process. Nothing in arbor shrinks its text
//! file in place, but another program may (a cache cleaner, a user's
//! `truncate`), and the picker keeps the file mapped for as long as it runs.
//! So each map made here registers its address range, and a SIGBUS handler
//! (installed once, by the first map) puts a page of zeros in place of a
//! page lost inside a registered range and marks that map: the read goes on,
//! and its owner, asking [`GuardedMap::intact`] after reading, throws away
//! what it read. A fault anywhere else goes to the handler that was there
//! before (Rust's stack overflow report) or to the default action, so it
//! kills the process as it always did.
//!
//! Checking the file's length before reading (which the owner also does) is
//! not enough on its own: the file can be cut while a search reads it.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

/// How many maps can be guarded at once (the picker maps the text file and
/// each segment's dictionary, ~60 at 100,000 sessions; more fall back to
/// reads).
const SLOTS: usize = 1024;

struct Slot {
    used: AtomicBool,
    /// The registered range; `start` is 0 when none.
    start: AtomicUsize,
    end: AtomicUsize,
    /// A page of this range was lost and replaced by zeros.
    hit: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    used: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    hit: AtomicBool::new(false),
};

/// Read by the signal handler: only atomics, no locks.
static GUARDED: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(0);
static PREVIOUS: OnceLock<Previous> = OnceLock::new();
static INSTALL: Once = Once::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The SIGBUS action before ours.
struct Previous(libc::sigaction);

// SAFETY: a `sigaction` is plain data (a handler address, flags, a mask);
// it is written once before the handler can read it and never changed.
unsafe impl Sync for Previous {}
unsafe impl Send for Previous {}

fn install() -> bool {
    INSTALL.call_once(|| {
        let page = rustix::param::page_size();
        if !page.is_power_of_two() {
            return;
        }
        PAGE.store(page, Ordering::Relaxed);
        // SAFETY: an all-zero `sigaction` is a valid value of the C struct;
        // passing a null new action only reads the current one into `prev`.
        let mut prev: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut prev) } != 0 {
            return;
        }
        let _ = PREVIOUS.set(Previous(prev));
        // SAFETY: as above; `on_sigbus` has the signature SA_SIGINFO asks
        // for, and only does async-signal-safe work (atomics, mmap, and the
        // previous handler's own work).
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
        // On the alternate stack when there is one, as Rust's own handler.
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        let ok = unsafe {
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(libc::SIGBUS, &act, std::ptr::null_mut()) == 0
        };
        INSTALLED.store(ok, Ordering::Release);
    });
    INSTALLED.load(Ordering::Acquire)
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    // A positive code means the kernel raised it for a fault, so the
    // address is the one touched.
    let (code, addr) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
    if code > 0 {
        let page = PAGE.load(Ordering::Relaxed);
        for slot in &GUARDED {
            let start = slot.start.load(Ordering::Acquire);
            if start == 0 || addr < start || addr >= slot.end.load(Ordering::Acquire) {
                continue;
            }
            let at = addr & !(page - 1);
            // SAFETY: `at..at+page` lies inside a live map registered by
            // its owner (it unregisters before unmapping); a fixed
            // anonymous private page replaces only that page of it.
            let p = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                slot.hit.store(true, Ordering::Release);
                // The faulting read runs again and finds zeros.
                return;
            }
        }
    }
    // Not ours: what would have happened without this handler.
    match PREVIOUS.get().map(|p| &p.0) {
        Some(prev) if prev.sa_flags & libc::SA_SIGINFO != 0 => {
            // SAFETY: the previous handler was installed for SA_SIGINFO
            // with this signature.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(prev.sa_sigaction) };
            f(sig, info, ctx)
        }
        Some(prev) if prev.sa_sigaction != libc::SIG_DFL && prev.sa_sigaction != libc::SIG_IGN => {
            // SAFETY: a plain handler installed without SA_SIGINFO.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(prev.sa_sigaction) };
            f(sig)
        }
        _ => {
            // The default action: restored, the fault happens again on
            // return and ends the process with SIGBUS.
            // SAFETY: as in `install`.
            unsafe {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&mut dfl.sa_mask);
                libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
            }
        }
    }
}

/// A read-only map of the first `len` bytes of a file, guarded as the
/// module says.
pub struct GuardedMap {
    map: memmap2::Mmap,
    file: File,
    slot: usize,
}

impl GuardedMap {
    /// `None` when the map cannot be made or guarded (the caller reads the
    /// file instead).
    pub fn new(file: File, len: u64) -> Option<GuardedMap> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        if !install() {
            return None;
        }
        let slot = GUARDED.iter().position(|s| {
            s.used
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        // SAFETY: the map is read only while registered below; a file cut
        // short under it gives zeros (noted, see `intact`), not a crash.
        // The bytes read lie below the length committed in the index,
        // which arbor itself never rewrites.
        let map = match unsafe { memmap2::MmapOptions::new().len(len).map(&file) } {
            Ok(m) => m,
            Err(_) => {
                GUARDED[slot].used.store(false, Ordering::Release);
                return None;
            }
        };
        let s = &GUARDED[slot];
        let page = PAGE.load(Ordering::Relaxed);
        let start = map.as_ptr() as usize;
        s.hit.store(false, Ordering::Relaxed);
        s.end
            .store(start + len.div_ceil(page) * page, Ordering::Release);
        s.start.store(start, Ordering::Release);
        Some(GuardedMap { map, file, slot })
    }

    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The file mapped, to read without the map (its pages then stay out
    /// of the resident set).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Drops the map's pages from the resident set. They stay in the page
    /// cache, and reading them again maps them again (a minor fault per
    /// few pages): a search that reads much of the text would otherwise
    /// keep all of it resident for as long as the map lives.
    pub fn release(&self) {
        // SAFETY: a shared read-only map of a file: a dropped page reads
        // back from the file as it was (no private copy is lost). A page
        // the guard replaced by zeros stays marked lost (`hit`).
        let _ = unsafe {
            self.map
                .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
        };
    }

    /// [`GuardedMap::release`] for the pages holding bytes `at..at + len`.
    pub fn release_range(&self, at: usize, len: usize) {
        if len == 0 || at >= self.map.len() {
            return;
        }
        let len = len.min(self.map.len() - at);
        // SAFETY: as in `release` (memmap2 widens the range to whole pages).
        let _ = unsafe {
            self.map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, len)
        };
    }

    /// No page was lost so far and the file is still as long as the map:
    /// everything read from it is what was written. Asked after reading.
    pub fn intact(&self) -> bool {
        !GUARDED[self.slot].hit.load(Ordering::Acquire)
            && self
                .file
                .metadata()
                .is_ok_and(|m| m.len() >= self.map.len() as u64)
    }
}

impl Drop for GuardedMap {
    fn drop(&mut self) {
        // Unregistered before `map` is unmapped (fields drop after this).
        let s = &GUARDED[self.slot];
        s.start.store(0, Ordering::Release);
        s.end.store(0, Ordering::Release);
        s.hit.store(false, Ordering::Relaxed);
        s.used.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::GuardedMap;

    #[test]
    fn a_file_cut_short_under_the_map_reads_as_zeros_and_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("text");
        std::fs::write(&p, vec![b'x'; 3 * 4096 + 100]).unwrap();
        let m = GuardedMap::new(std::fs::File::open(&p).unwrap(), 3 * 4096 + 100).unwrap();
        assert!(m.bytes().iter().all(|&b| b == b'x'));
        assert!(m.intact());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(10)
            .unwrap();
        // Past the new end: without the guard, SIGBUS here.
        let after: Vec<u8> = m.bytes()[4096..].to_vec();
        assert!(after.iter().all(|&b| b == 0));
        assert!(!m.intact());
        drop(m);
        // A slot freed and used again starts clean.
        std::fs::write(&p, b"abc").unwrap();
        let m = GuardedMap::new(std::fs::File::open(&p).unwrap(), 3).unwrap();
        assert_eq!(m.bytes(), b"abc");
        assert!(m.intact());
    }

    /// The resident kilobytes of the mapping starting at `start`, as the
    /// kernel reports them.
    fn resident_kb(start: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines();
        while let Some(l) = lines.next() {
            let Some((from, _)) = l.split_once('-') else {
                continue;
            };
            if usize::from_str_radix(from, 16).ok() != Some(start) {
                continue;
            }
            for l in lines.by_ref() {
                if let Some(kb) = l.strip_prefix("Rss:") {
                    return kb.trim().trim_end_matches("kB").trim().parse().unwrap();
                }
            }
        }
        panic!("no mapping at {start:#x}");
    }

    #[test]
    fn released_pages_leave_the_resident_set_and_read_back_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("text");
        let bytes: Vec<u8> = (0..64 * 4096u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&p, &bytes).unwrap();
        let m = GuardedMap::new(std::fs::File::open(&p).unwrap(), bytes.len() as u64).unwrap();
        let start = m.bytes().as_ptr() as usize;
        assert_eq!(m.bytes(), &bytes[..]);
        assert!(resident_kb(start) >= 64 * 4);
        m.release();
        assert_eq!(resident_kb(start), 0);
        assert_eq!(m.bytes(), &bytes[..]);
        assert!(m.intact());
    }

    /// A SIGBUS outside any guarded map still ends the process, as without
    /// the handler (checked in a child process: this test runs itself).
    #[test]
    fn other_faults_still_kill() {
        const CHILD: &str = "ARBOR_MAPGUARD_CHILD";
        if let Some(dir) = std::env::var_os(CHILD) {
            let dir = std::path::PathBuf::from(dir);
            // The handler is installed by a guarded map first.
            let g = dir.join("guarded");
            std::fs::write(&g, b"guarded").unwrap();
            let _m = GuardedMap::new(std::fs::File::open(&g).unwrap(), 7).unwrap();
            let p = dir.join("plain");
            std::fs::write(&p, vec![1u8; 8192]).unwrap();
            let f = std::fs::File::open(&p).unwrap();
            let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&p)
                .unwrap()
                .set_len(0)
                .unwrap();
            let b = std::hint::black_box(map[4096]);
            // Not reached.
            std::process::exit(i32::from(b) + 100);
        }
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "mapguard::tests::other_faults_still_kill",
                "--test-threads=1",
            ])
            .env(CHILD, dir.path())
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGBUS),
            "{:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
