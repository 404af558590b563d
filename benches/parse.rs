//! Parsing throughput on a realistic store: `cargo bench --bench parse`.
//!
//! The corpus (`gen_corpus.py OUT --profile realistic --sessions 200 --seed 1`,
//! ~120 MB, one file of 20 MB) is generated once and cached under
//! `target/bench-corpus/`. Files are read into memory first, so the main
//! figures measure parsing alone; the `+ read` rows run the same work from
//! the paths (warm page cache) for an end-to-end number.
//!
//! Every figure is the median of `ARBOR_BENCH_RUNS` runs (default 7);
//! `ARBOR_BENCH_STORE=DIR` measures another store instead.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use arbor_session::info::{scan_info, scan_info_bytes};
use arbor_session::reader::{parse_session, read_session};
use arbor_session::SessionTree;

fn shared_dir() -> PathBuf {
    match std::env::var_os("ARBOR_SHARED") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// The cached corpus, generated on first use.
fn corpus() -> PathBuf {
    let base = target_dir().join("bench-corpus");
    let dir = base.join("realistic-200-seed1");
    if dir.join("MANIFEST.json").is_file() {
        return dir;
    }
    let tmp = base.join("realistic-200-seed1.tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&base).unwrap();
    eprintln!("generating the benchmark corpus into {} ...", dir.display());
    let status = Command::new("python3")
        .arg(shared_dir().join("corpus/gen_corpus.py"))
        .arg(&tmp)
        .args(["--profile", "realistic", "--sessions", "200", "--seed", "1"])
        .status()
        .expect("python3 is needed to generate the benchmark corpus");
    assert!(status.success(), "gen_corpus.py failed");
    std::fs::rename(&tmp, &dir).unwrap();
    dir
}

/// `*.jsonl` files one folder down (the store layout).
fn session_files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for project in std::fs::read_dir(root).unwrap() {
        let project = project.unwrap().path();
        if !project.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&project).unwrap() {
            let p = f.unwrap().path();
            if p.is_file() && p.extension().is_some_and(|e| e == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm-up
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

struct Row {
    what: &'static str,
    threads: String,
    time: Duration,
}

fn main() {
    // `cargo bench` passes `--bench`; ignore any filter arguments.
    let runs: usize = std::env::var("ARBOR_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7)
        .max(1);
    // ARBOR_BENCH_STORE=DIR measures another store (e.g. a stress store).
    let root = std::env::var_os("ARBOR_BENCH_STORE")
        .map(PathBuf::from)
        .unwrap_or_else(corpus);
    let paths = session_files(&root);
    let files: Vec<(PathBuf, Vec<u8>)> = paths
        .iter()
        .map(|p| (p.clone(), std::fs::read(p).unwrap()))
        .collect();
    let entries = check_corpus(&files);
    let rows = measure(runs, &files, &paths);
    print_table(runs, &root, &files, entries, &rows);
}

/// Sanity: every file of the corpus is a session and both paths agree.
/// Returns the corpus's number of entries.
fn check_corpus(files: &[(PathBuf, Vec<u8>)]) -> usize {
    files
        .iter()
        .map(|(p, b)| {
            let s = parse_session(p, b).expect("corpus file parses");
            let info = scan_info_bytes(p, b, 0).expect("corpus file lists");
            assert_eq!(
                info.message_count,
                s.entries
                    .iter()
                    .filter(|e| e.entry_type() == "message")
                    .count()
            );
            s.entries.len()
        })
        .sum()
}

/// Each measurement's median of `runs`: from the bytes in memory, then
/// with the files read.
fn measure(runs: usize, files: &[(PathBuf, Vec<u8>)], paths: &[PathBuf]) -> Vec<Row> {
    let threads = rayon::current_num_threads();
    let scan = |(p, b): &(PathBuf, Vec<u8>)| {
        black_box(scan_info_bytes(p, b, 0).unwrap());
    };
    let tree = |(p, b): &(PathBuf, Vec<u8>)| {
        let s = parse_session(p, b).unwrap();
        black_box(SessionTree::build(&s));
    };

    let mut rows = vec![
        Row {
            what: "list rows (scan_info_bytes)",
            threads: "1".into(),
            time: median(runs, || files.iter().for_each(scan)),
        },
        Row {
            what: "list rows (scan_info_bytes)",
            threads: format!("{threads} (rayon)"),
            time: median(runs, || files.par_iter().for_each(scan)),
        },
        Row {
            what: "full tree (parse_session + build)",
            threads: "1".into(),
            time: median(runs, || files.iter().for_each(tree)),
        },
        Row {
            what: "full tree (parse_session + build)",
            threads: format!("{threads} (rayon)"),
            time: median(runs, || files.par_iter().for_each(tree)),
        },
    ];
    rows.extend([
        Row {
            what: "list rows + read (scan_info)",
            threads: "1".into(),
            time: median(runs, || {
                paths.iter().for_each(|p| {
                    black_box(scan_info(p).unwrap());
                })
            }),
        },
        Row {
            what: "list rows + read (scan_info)",
            threads: format!("{threads} (rayon)"),
            time: median(runs, || {
                paths.par_iter().for_each(|p| {
                    black_box(scan_info(p).unwrap());
                })
            }),
        },
        Row {
            what: "full tree + read (read_session + build)",
            threads: "1".into(),
            time: median(runs, || {
                paths.iter().for_each(|p| {
                    let s = read_session(p).unwrap();
                    black_box(SessionTree::build(&s));
                })
            }),
        },
    ]);
    rows
}

/// The corpus and the measurements, as a Markdown table.
fn print_table(
    runs: usize,
    root: &Path,
    files: &[(PathBuf, Vec<u8>)],
    entries: usize,
    rows: &[Row],
) {
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    let largest = files.iter().map(|(_, b)| b.len()).max().unwrap_or(0);
    let mb = bytes as f64 / 1e6;
    println!();
    println!(
        "corpus: {} files, {:.1} MB, {} entries, largest file {:.1} MB ({})",
        files.len(),
        mb,
        entries,
        largest as f64 / 1e6,
        root.display()
    );
    println!("median of {runs} runs; MB = 10^6 bytes");
    println!();
    println!(
        "| {:<40} | {:>12} | {:>9} | {:>8} | {:>9} |",
        "measurement", "threads", "median", "MB/s", "files/s"
    );
    println!(
        "|{:-<42}|{:->14}|{:->11}|{:->10}|{:->11}|",
        "", "", "", "", ""
    );
    for r in rows {
        let secs = r.time.as_secs_f64();
        println!(
            "| {:<40} | {:>12} | {:>7.1}ms | {:>8.0} | {:>9.0} |",
            r.what,
            r.threads,
            secs * 1e3,
            mb / secs,
            files.len() as f64 / secs
        );
    }
    println!();
}
