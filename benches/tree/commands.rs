//! `arbor show` / `context` run to completion: wall time, CPU and peak
//! memory per command.

use std::io::Read;
use std::path::Path;
use std::time::Instant;

use crate::measure::{mb, ms, Stat};
use crate::sessions::Session;
use crate::target_dir;

/// `show` and `context` on the session: time, CPU and peak memory.
pub(crate) fn bench_commands(s: &Session, runs: usize, bytes: u64) {
    let file = s.path.display().to_string();
    // The commands first: a child forked while this process holds a
    // loaded tree counts that memory in its own peak until it execs.
    for (what, args, goal) in [
        ("show --json", vec!["show", "--json", &file], s.goal_show),
        ("show", vec!["show", &file], f64::NAN),
        ("context --json", vec!["context", "--json", &file], f64::NAN),
    ] {
        let mut t = Stat(Vec::new());
        let mut cpu = Stat(Vec::new());
        let mut rss = 0;
        for _ in 0..runs {
            let (ms, r, c) = run_measured(&args);
            t.0.push(ms);
            cpu.0.push(c);
            rss = rss.max(r);
        }
        let goal = if goal.is_nan() {
            String::new()
        } else {
            format!(" (goal < {goal} ms)")
        };
        println!(
            "arbor {what}: {}{goal}; CPU {}; peak RSS {:.0} MB ({:.1}×)",
            t.ms(),
            cpu.ms(),
            mb(rss),
            rss as f64 / bytes.max(1) as f64
        );
    }
}

/// Runs the binary to completion: wall time, peak RSS and CPU time (user +
/// system, from GNU time when there is one; NaN without).
fn run_measured(args: &[&str]) -> (f64, u64, f64) {
    // A child's peak memory counts its parent's until it execs (vfork), and
    // this process may hold a loaded tree: GNU time, small, runs arbor in a
    // process of its own and reports that one's peak.
    let time = Path::new("/usr/bin/time");
    let mut cmd = if time.is_file() {
        let mut c = std::process::Command::new(time);
        c.args(["-f", "%M %U %S"]).arg(env!("CARGO_BIN_EXE_arbor"));
        c
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_arbor"))
    };
    let start = Instant::now();
    let mut child = cmd
        .args(args)
        .env("ARBOR_CACHE_DIR", target_dir().join("bench-tree/cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn arbor");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let (ok, rss) = wait_rusage(&mut child);
    let t = ms(start.elapsed());
    assert!(ok, "arbor {args:?} failed: {err}");
    let last: Vec<f64> = err
        .lines()
        .last()
        .map(|l| {
            l.split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let reported = last.first().map(|kb| *kb as u64 * 1024);
    let cpu = match last[..] {
        [_, u, s] => (u + s) * 1e3,
        _ => f64::NAN,
    };
    (
        t,
        if time.is_file() {
            reported.unwrap_or(rss)
        } else {
            rss
        },
        cpu,
    )
}

#[cfg(target_os = "linux")]
fn wait_rusage(child: &mut std::process::Child) -> (bool, u64) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child, not yet waited for.
    let r = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(r, child.id() as i32, "wait4");
    (
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        ru.ru_maxrss as u64 * 1024,
    )
}

#[cfg(not(target_os = "linux"))]
fn wait_rusage(child: &mut std::process::Child) -> (bool, u64) {
    (child.wait().map(|s| s.success()).unwrap_or(false), 0)
}
