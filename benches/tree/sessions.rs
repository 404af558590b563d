//! The sessions benchmarked: generated once into `target/bench-tree/`, or
//! the realistic corpus's largest session.

use std::path::{Path, PathBuf};

use crate::generate::{gen_bushy, gen_deep};
use crate::target_dir;

pub(crate) struct Session {
    pub(crate) name: &'static str,
    pub(crate) path: PathBuf,
    pub(crate) goal_open: f64,
    pub(crate) goal_show: f64,
}

/// The sessions ARBOR_BENCH_ONLY names (`bushy,deep,realistic,huge`; all
/// but huge when unset, huge too with ARBOR_BENCH_HUGE), made once.
pub(crate) fn sessions_wanted() -> Vec<Session> {
    let only = std::env::var("ARBOR_BENCH_ONLY").unwrap_or_default();
    let wanted = |k: &str| only.is_empty() || only.split(',').any(|o| o.trim() == k);
    let mut sessions = Vec::new();
    if wanted("bushy") {
        sessions.push(Session {
            name: "bushy, 100,000 entries",
            path: cached("bushy-100000", || gen_bushy(100_000, 0.35, 1)),
            goal_open: 300.0,
            goal_show: 500.0,
        });
    }
    if wanted("deep") {
        sessions.push(Session {
            name: "deep, 60 forks on the active path",
            path: cached("deep-60", || gen_deep(60, 2)),
            goal_open: 300.0,
            goal_show: 500.0,
        });
    }
    if wanted("realistic") {
        sessions.push(Session {
            name: "realistic corpus, largest session",
            path: realistic_largest(),
            goal_open: 100.0,
            goal_show: 100.0,
        });
    }
    if std::env::var_os("ARBOR_BENCH_HUGE").is_some() || (!only.is_empty() && wanted("huge")) {
        sessions.push(Session {
            name: "huge, 1,000,000 entries",
            path: cached("huge-1000000", || gen_bushy(1_000_000, 0.02, 3)),
            goal_open: 3000.0,
            goal_show: f64::NAN,
        });
    }
    sessions
}

fn cached(name: &str, make: impl FnOnce() -> Vec<u8>) -> PathBuf {
    let dir = target_dir().join("bench-tree");
    std::fs::create_dir_all(&dir).expect("target dir");
    let path = dir.join(format!("{name}.jsonl"));
    if !path.is_file() {
        eprintln!("generating {} …", path.display());
        let tmp = dir.join(format!("{name}.tmp"));
        std::fs::write(&tmp, make()).expect("write the session");
        std::fs::rename(&tmp, &path).expect("rename");
    }
    path
}

/// The realistic corpus's largest session (as benches/parse.rs makes it).
fn realistic_largest() -> PathBuf {
    let base = target_dir().join("bench-corpus");
    let dir = base.join("realistic-200-seed1");
    if !dir.join("MANIFEST.json").is_file() {
        let tmp = base.join("realistic-200-seed1.tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&base).expect("target dir");
        eprintln!("generating the realistic corpus into {} …", dir.display());
        let shared = std::env::var_os("ARBOR_SHARED")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
        let status = std::process::Command::new("python3")
            .arg(shared.join("corpus/gen_corpus.py"))
            .arg(&tmp)
            .args(["--profile", "realistic", "--sessions", "200", "--seed", "1"])
            .status()
            .expect("python3 is needed to generate the realistic corpus");
        assert!(status.success(), "gen_corpus.py failed");
        std::fs::rename(&tmp, &dir).expect("rename");
    }
    let mut best = (0, PathBuf::new());
    for project in std::fs::read_dir(&dir).expect("corpus").flatten() {
        for f in std::fs::read_dir(project.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let len = f.metadata().map(|m| m.len()).unwrap_or(0);
            if f.path().extension().is_some_and(|e| e == "jsonl") && len > best.0 {
                best = (len, f.path());
            }
        }
    }
    best.1
}
