//! `arbor tree` in a pseudo-terminal: time to the first frame with rows,
//! a filter and a search key through the terminal, and peak memory.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::measure::{mb, ms, vm_hwm, Stat};
use crate::sessions::Session;
use crate::{target_dir, COLS, ROWS};

/// `arbor tree` in a pty: open, a filter and a search key, and its peak
/// memory (`bytes`: the file's size).
pub(crate) fn bench_pty(s: &Session, runs: usize, bytes: u64) {
    let mut open = Stat(Vec::new());
    let mut filter = Stat(Vec::new());
    let mut search = Stat(Vec::new());
    let mut rss = 0;
    for _ in 0..runs {
        let r = pty_run(&s.path);
        open.0.push(r.open);
        filter.0.push(r.filter);
        search.0.push(r.search);
        rss = rss.max(r.rss);
    }
    println!(
        "arbor tree: open → first frame with rows: {} (goal < {} ms)",
        open.ms(),
        s.goal_open
    );
    println!(
        "arbor tree: ctrl+a → frame, through the terminal: {}",
        filter.ms()
    );
    println!(
        "arbor tree: search key → frame, through the terminal: {}",
        search.ms()
    );
    println!(
        "arbor tree: peak RSS {:.0} MB ({:.1}× the file; goal < 3×)",
        mb(rss),
        rss as f64 / bytes.max(1) as f64
    );
}

struct Pty {
    open: f64,
    filter: f64,
    search: f64,
    rss: u64,
}

/// `arbor tree FILE` in a 140×40 pty: process start → a frame with a
/// selected row; then a filter toggle and a search key through the
/// terminal, each until its frame shows; then the peak RSS.
fn pty_run(path: &Path) -> Pty {
    use portable_pty::{native_pty_system, CommandBuilder, PtySize};
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .expect("pty");
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_arbor"));
    cmd.args(["tree", &path.display().to_string()]);
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    cmd.env("ARBOR_CACHE_DIR", target_dir().join("bench-tree/cache"));
    let start = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).expect("spawn");
    let pid = child.process_id().unwrap_or(0);
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
    let mut reader = pair.master.try_clone_reader().expect("reader");
    let p2 = parser.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            p2.lock().expect("parser").process(&buf[..n]);
        }
    });
    let screen = || parser.lock().expect("parser").screen().contents();
    // How long from `t` until `f` holds (NaN after `limit`).
    let wait_from = |t: Instant, f: &dyn Fn(&str) -> bool, limit: Duration| -> f64 {
        loop {
            if f(&screen()) {
                return ms(t.elapsed());
            }
            if t.elapsed() > limit {
                return f64::NAN;
            }
            std::thread::sleep(Duration::from_micros(500));
        }
    };
    let wait = |f: &dyn Fn(&str) -> bool, limit: Duration| wait_from(Instant::now(), f, limit);
    let open = wait_from(start, &|s| s.contains('›'), Duration::from_secs(300));
    let mut w = pair.master.take_writer().expect("writer");
    let limit = Duration::from_secs(60);
    // Ctrl+A: the all filter, shown in the status line.
    w.write_all(b"\x01").expect("key");
    let filter = wait(&|s| s.contains("[all]"), limit);
    w.write_all(b"\x01").expect("key");
    wait(&|s| !s.contains("[all]"), limit);
    let search = if std::env::var_os("ARBOR_BENCH_SKIP_SEARCH").is_some() {
        f64::NAN
    } else {
        w.write_all(b"q").expect("key");
        wait(&|s| s.contains(": q"), limit)
    };
    let rss = vm_hwm(pid).unwrap_or(0);
    if search.is_nan() {
        let _ = child.kill();
    } else {
        // Esc clears the search, the second one quits.
        let _ = w.write_all(b"\x1b");
        std::thread::sleep(Duration::from_millis(50));
        let _ = w.write_all(b"\x1b");
    }
    let _ = child.wait();
    Pty {
        open,
        filter,
        search,
        rss,
    }
}
