//! Tree benchmark: one big session opened by the real binary in a
//! pseudo-terminal (time to the first frame with rows, peak memory), the
//! latency of every key class in process (update + a full draw, as the
//! event loop runs them), and `arbor show --json` / `show` / `context`.
//!
//! `cargo bench --bench tree`. Sessions (generated once into
//! `target/bench-tree/`, never committed):
//! - `bushy-100000`: 100,000 entries, ~90 MB, a fork every ~80 entries,
//!   the realistic profile's mix of roles, tools and sizes;
//! - `deep-60`: ~20,000 entries whose active path crosses 60 forks;
//! - the realistic corpus's largest session (~21 MB, ~14,000 entries:
//!   `gen_corpus.py --profile realistic --sessions 200 --seed 1`, shared
//!   with `benches/parse.rs`);
//! - with `ARBOR_BENCH_HUGE=1`, `huge-1000000`: 1,000,000 entries, ~350 MB.
//!
//! `ARBOR_BENCH_RUNS=N` process runs per figure (median and range; default
//! 5), `ARBOR_BENCH_ONLY=bushy,deep,realistic,huge` picks sessions,
//! `ARBOR_BENCH_SKIP_PTY=1` skips the pseudo-terminal.

mod commands;
mod generate;
mod in_process;
mod keys;
mod measure;
mod pty;
mod sessions;

use std::path::{Path, PathBuf};

use crate::commands::bench_commands;
use crate::in_process::{in_process, print_in_process};
use crate::measure::mb;
use crate::pty::bench_pty;
use crate::sessions::sessions_wanted;

const COLS: u16 = 140;
const ROWS: u16 = 40;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn main() {
    let runs: usize = std::env::var("ARBOR_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let sessions = sessions_wanted();
    let skip_pty = std::env::var_os("ARBOR_BENCH_SKIP_PTY").is_some();
    if std::env::var_os("ARBOR_BENCH_GEN_ONLY").is_some() {
        for s in &sessions {
            let b = std::fs::read(&s.path).unwrap_or_default();
            let lines = memchr::memchr_iter(b'\n', &b).count();
            println!(
                "{}: {:.1} MB, {lines} lines",
                s.path.display(),
                mb(b.len() as u64)
            );
        }
        return;
    }

    for s in &sessions {
        let bytes = std::fs::metadata(&s.path).map(|m| m.len()).unwrap_or(0);
        let lines = std::fs::read(&s.path)
            .map(|b| memchr::memchr_iter(b'\n', &b).count())
            .unwrap_or(0);
        println!();
        println!(
            "## {} — {} ({:.1} MB, {} lines)",
            s.name,
            s.path.display(),
            mb(bytes),
            lines
        );
        // Warm the page cache.
        let _ = std::fs::read(&s.path);
        if !skip_pty {
            bench_pty(s, runs, bytes);
        }
        bench_commands(s, runs, bytes);
        print_in_process(&in_process(&s.path, runs));
    }
}
