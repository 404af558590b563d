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

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::{json, Value};

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::Agent;

const COLS: u16 = 140;
const ROWS: u16 = 40;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

// ---------------------------------------------------------------------------
// The generator: deterministic (splitmix64), a few seconds for 350 MB.
// ---------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// A lognormal size around `median` (as gen_corpus.py draws sizes).
    fn size(&mut self, median: f64, sigma: f64, lo: usize, hi: usize) -> usize {
        // Box-Muller.
        let n = (-2.0 * self.unit().ln()).sqrt() * (std::f64::consts::TAU * self.unit()).cos();
        ((median * (sigma * n).exp()) as usize).clamp(lo, hi)
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the",
    "session",
    "parser",
    "tree",
    "branch",
    "error",
    "value",
    "index",
    "file",
    "line",
    "entry",
    "should",
    "check",
    "because",
    "config",
    "return",
    "build",
    "test",
    "cache",
    "token",
    "refresh",
    "handler",
    "request",
    "response",
    "async",
    "await",
    "function",
    "module",
    "import",
    "export",
    "state",
    "update",
    "render",
    "view",
    "model",
    "label",
    "fork",
    "compaction",
    "summary",
    "context",
    "message",
    "assistant",
    "user",
    "tool",
    "result",
    "output",
    "input",
    "we",
    "can",
    "then",
    "with",
    "into",
    "from",
    "this",
    "that",
    "it",
    "is",
    "a",
    "to",
    "and",
    "of",
    "in",
    "for",
    "on",
    "not",
    "but",
    "all",
    "when",
    "where",
    "which",
    "fix",
    "bug",
    "failing",
    "passes",
    "now",
    "again",
    "instead",
    "path",
    "directory",
    "struct",
    "impl",
    "trait",
    "vector",
    "string",
    "bytes",
    "memory",
    "latency",
    "frame",
    "terminal",
    "cursor",
    "scroll",
    "page",
];
const IDENTS: &[&str] = &[
    "parse_line",
    "SessionTree",
    "flatten",
    "render_row",
    "TreeState",
    "build_index",
    "value",
    "count",
    "offset",
    "limit",
    "buffer",
    "entries",
    "children",
    "parent",
    "depth",
    "leaf",
];
const PATHS: &[&str] = &[
    "src/session/reader.rs",
    "src/session/tree.rs",
    "src/ui/tree/view.rs",
    "src/main.rs",
    "packages/core/src/index.ts",
    "packages/core/src/session.ts",
    "README.md",
    "Cargo.toml",
    "tests/tree_ui.rs",
    "src/lib/util.ts",
    "docs/design.md",
    "scripts/build.sh",
];
const COMMANDS: &[&str] = &[
    "cargo test --lib session::",
    "git status --short",
    "rg -n \"fn flatten\" src",
    "npm run build 2>&1 | tail -20",
    "ls -la src/session",
    "cargo clippy --all-targets -- -D warnings",
    "git diff --stat HEAD~1",
];

struct Text<'r>(&'r mut Rng);

impl Text<'_> {
    fn prose(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 16);
        let mut start = true;
        while s.len() < n {
            let w = self.0.pick(WORDS);
            if start {
                let mut c = w.chars();
                if let Some(f) = c.next() {
                    s.extend(f.to_uppercase());
                    s.push_str(c.as_str());
                }
                start = false;
            } else {
                s.push_str(w);
            }
            if self.0.chance(0.08) {
                s.push_str(". ");
                start = true;
            } else {
                s.push(' ');
            }
        }
        s.truncate(s.trim_end().len());
        s.push('.');
        s
    }
    fn code(&mut self, n: usize) -> String {
        let mut s = String::with_capacity(n + 64);
        let mut line = 1;
        while s.len() < n {
            let indent = "    ".repeat(self.0.below(3) as usize);
            let a = self.0.pick(IDENTS);
            let b = self.0.pick(IDENTS);
            match self.0.below(4) {
                0 => s.push_str(&format!(
                    "{line:>4}\t{indent}let {a} = {b}(&mut self.{a});\n"
                )),
                1 => s.push_str(&format!(
                    "{line:>4}\t{indent}if {a}.is_empty() {{ return {b}; }}\n"
                )),
                2 => s.push_str(&format!("{line:>4}\t{indent}// {}\n", self.prose(40))),
                _ => s.push_str(&format!(
                    "{line:>4}\t{indent}fn {a}(&self) -> Option<{b}> {{\n"
                )),
            }
            line += 1;
        }
        s
    }
}

/// Builds a session line by line, as an agent appends it.
struct Gen {
    rng: Rng,
    out: Vec<u8>,
    ms: i64,
    ids: HashSet<String>,
    /// Entries in file order: (id, parent, is a user message).
    entries: Vec<(String, Option<usize>, bool)>,
    leaf: Option<usize>,
    /// Scales tool output sizes (the 1,000,000-entry session is leaner).
    scale: f64,
}

impl Gen {
    fn new(seed: u64, scale: f64) -> Gen {
        let mut g = Gen {
            rng: Rng(seed),
            out: Vec::new(),
            ms: 1_767_225_600_000,
            ids: HashSet::new(),
            entries: Vec::new(),
            leaf: None,
            scale,
        };
        let header = json!({
            "type": "session", "version": 3,
            "id": format!("0199a1b2-c3d4-7e5f-8a9b-{:012x}", seed),
            "timestamp": arbor_session::entry::format_iso_ms(g.ms),
            "cwd": "/home/dev/projects/arbor",
        });
        g.line(&header);
        g
    }

    fn line(&mut self, v: &Value) {
        serde_json::to_writer(&mut self.out, v).expect("in memory");
        self.out.push(b'\n');
    }

    fn tick(&mut self, lo: i64, hi: i64) -> String {
        self.ms += lo + self.rng.below((hi - lo) as u64) as i64;
        arbor_session::entry::format_iso_ms(self.ms)
    }

    fn new_id(&mut self) -> String {
        loop {
            let id = format!("{:08x}", self.rng.next() as u32);
            if self.ids.insert(id.clone()) {
                return id;
            }
        }
    }

    /// Appends an entry under the leaf; `body` gets type, id, parentId, timestamp.
    fn push(&mut self, ty: &str, body: Value, is_user: bool) -> usize {
        let id = self.new_id();
        let ts = self.tick(50, 20_000);
        let parent = self.leaf.map(|p| Value::from(self.entries[p].0.clone()));
        let mut m = serde_json::Map::new();
        m.insert("type".into(), ty.into());
        m.insert("id".into(), id.clone().into());
        m.insert("parentId".into(), parent.unwrap_or(Value::Null));
        m.insert("timestamp".into(), ts.into());
        if let Value::Object(b) = body {
            m.extend(b);
        }
        self.line(&Value::Object(m));
        self.entries.push((id, self.leaf, is_user));
        let i = self.entries.len() - 1;
        self.leaf = Some(i);
        i
    }

    fn usage(&mut self, out: usize) -> Value {
        let cache_read = 20_000 + self.rng.below(150_000);
        json!({"input": self.rng.below(12), "output": out, "cacheRead": cache_read,
            "cacheWrite": self.rng.below(3000), "totalTokens": cache_read + out as u64 + 400,
            "cost": {"input": 0.000_036, "output": out as f64 * 0.000_015,
                "cacheRead": cache_read as f64 * 0.000_000_3, "cacheWrite": 0.0112, "total": 0.0431}})
    }

    fn user(&mut self) {
        let n = self.rng.size(180.0, 0.8, 4, 2400);
        let text = Text(&mut self.rng).prose(n);
        let content = if self.rng.chance(0.5) {
            json!(text)
        } else {
            json!([{"type": "text", "text": text}])
        };
        let ts = self.ms;
        self.push(
            "message",
            json!({"message": {"role": "user", "content": content, "timestamp": ts}}),
            true,
        );
    }

    fn assistant(&mut self, blocks: Vec<Value>, stop: &str) {
        let out = blocks.iter().map(|b| b.to_string().len()).sum::<usize>() / 4 + 1;
        let ts = self.ms;
        let message = if self.scale < 0.1 {
            // The extreme session is leaner: no usage record.
            json!({"role": "assistant", "content": blocks, "stopReason": stop, "timestamp": ts})
        } else {
            let usage = self.usage(out);
            json!({"role": "assistant", "content": blocks, "api": "anthropic-messages",
                "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage,
                "stopReason": stop, "timestamp": ts})
        };
        self.push("message", json!({ "message": message }), false);
    }

    /// One assistant step with a tool call, then its result.
    fn tool_exchange(&mut self) {
        let mut blocks = Vec::new();
        let lean = self.scale < 0.1;
        if !lean && self.rng.chance(0.12) {
            let n = self.rng.size(500.0, 1.0, 40, 8000);
            let t = Text(&mut self.rng).prose(n);
            blocks.push(json!({"type": "thinking", "thinking": t, "thinkingSignature": "EqQBCkYIBxgCKkB".repeat(8)}));
        }
        if !lean && self.rng.chance(0.45) {
            let n = self.rng.size(110.0, 0.9, 10, 3000);
            blocks.push(json!({"type": "text", "text": Text(&mut self.rng).prose(n)}));
        }
        let call = format!("toolu_01{:022x}", self.rng.next() as u128 * 7919);
        let path = self.rng.pick(PATHS);
        let (tool, args) = match self.rng.below(10) {
            0..=3 => (
                "read",
                json!({"path": path, "offset": 1 + self.rng.below(900), "limit": 80}),
            ),
            4..=6 => ("bash", json!({"command": self.rng.pick(COMMANDS)})),
            7 => {
                let n = (self.rng.size(300.0, 0.9, 20, 6000) as f64 * self.scale) as usize;
                let old = Text(&mut self.rng).code(n);
                (
                    "edit",
                    json!({"path": path, "oldText": old, "newText": format!("{old}\n// edited")}),
                )
            }
            8 => {
                let n = (self.rng.size(1500.0, 1.0, 50, 40_000) as f64 * self.scale) as usize;
                (
                    "write",
                    json!({"path": path, "content": Text(&mut self.rng).code(n)}),
                )
            }
            _ => (
                "grep",
                json!({"pattern": self.rng.pick(IDENTS), "path": "src", "glob": "*.rs"}),
            ),
        };
        blocks.push(json!({"type": "toolCall", "id": call, "name": tool, "arguments": args}));
        self.assistant(blocks, "toolUse");
        let scale = self.scale;
        let text = match tool {
            "read" => {
                let n = (self.rng.size(2200.0, 1.1, 40, 120_000) as f64 * scale) as usize;
                Text(&mut self.rng).code(n)
            }
            "bash" | "grep" => {
                let n = (self.rng.size(500.0, 1.3, 10, 60_000) as f64 * scale) as usize;
                Text(&mut self.rng).code(n)
            }
            "edit" => format!("Successfully replaced text in {path}."),
            _ => format!("Successfully wrote 1234 bytes to {path}"),
        };
        let is_error = self.rng.chance(0.05);
        let ts = self.ms;
        self.push(
            "message",
            json!({"message": {"role": "toolResult", "toolCallId": call, "toolName": tool,
                "content": [{"type": "text", "text": text}], "isError": is_error, "timestamp": ts}}),
            false,
        );
    }

    fn final_answer(&mut self) {
        if self.rng.chance(0.035) {
            self.assistant(vec![], "aborted");
            return;
        }
        let n = self.rng.size(260.0, 1.0, 20, 12_000);
        let text = Text(&mut self.rng).prose(n);
        self.assistant(vec![json!({"type": "text", "text": text})], "stop");
    }

    /// A user turn: prompt, tool steps, answer, and the odd settings entry.
    fn turn(&mut self) {
        if self.rng.chance(0.05) {
            let level = self.rng.pick(&["off", "low", "medium", "high"]);
            self.push(
                "thinking_level_change",
                json!({"thinkingLevel": level}),
                false,
            );
        }
        if self.rng.chance(0.02) {
            self.push(
                "model_change",
                json!({"provider": "anthropic", "modelId": "claude-opus-4-1"}),
                false,
            );
        }
        self.user();
        let steps = (-6.0 * self.rng.unit().ln()) as usize + 1;
        for _ in 0..steps.min(60) {
            self.tool_exchange();
        }
        self.final_answer();
        if self.rng.chance(0.03) {
            // A label on an earlier user message.
            let users: Vec<usize> = (0..self.entries.len())
                .filter(|&i| self.entries[i].2)
                .collect();
            let target = users[self.rng.below(users.len() as u64) as usize];
            let label = self
                .rng
                .pick(&["checkpoint", "good", "before-refactor", "bug-repro"]);
            let target = self.entries[target].0.clone();
            self.push("label", json!({"targetId": target, "label": label}), false);
        }
        if self.rng.chance(0.02) {
            self.push(
                "custom",
                json!({"customType": "todo-state", "data": {"items": [{"text": "write the bench", "done": false}]}}),
                false,
            );
        }
        if self.rng.chance(0.005) {
            let name = Text(&mut self.rng).prose(24);
            self.push("session_info", json!({"name": name}), false);
        }
    }

    /// Back to an earlier user message on the current path (edit and
    /// resubmit), sometimes with a branch summary.
    fn branch_back(&mut self) {
        let mut path = Vec::new();
        let mut cur = self.leaf;
        while let Some(i) = cur {
            if self.entries[i].2 {
                path.push(i);
            }
            cur = self.entries[i].1;
        }
        if path.len() < 2 {
            return;
        }
        let target = path[1 + self.rng.below(path.len() as u64 - 1) as usize];
        self.leaf = self.entries[target].1;
        if self.rng.chance(0.5) {
            let from = self.entries[self.entries.len() - 1].0.clone();
            let n = 80 + self.rng.below(300) as usize;
            let summary = format!("## Goal\n{}", Text(&mut self.rng).prose(n));
            self.push(
                "branch_summary",
                json!({"fromId": from, "summary": summary}),
                false,
            );
        }
    }
}

/// `entries` entries, a fork every ~80 of them.
fn gen_bushy(entries: usize, scale: f64, seed: u64) -> Vec<u8> {
    let mut g = Gen::new(seed, scale);
    let mut next_fork = 80;
    while g.entries.len() < entries {
        g.turn();
        if g.entries.len() >= next_fork {
            g.branch_back();
            next_fork = g.entries.len() + 40 + g.rng.below(80) as usize;
        }
    }
    g.out
}

/// An active path crossing `forks` forks: after each stretch of turns, a
/// short abandoned branch, then the active path goes on beside it.
fn gen_deep(forks: usize, seed: u64) -> Vec<u8> {
    let mut g = Gen::new(seed, 0.35);
    for k in 0..forks {
        while g.entries.len() < (k + 1) * 320 {
            g.turn();
        }
        let fork = g.leaf;
        g.user();
        g.final_answer();
        g.leaf = fork;
    }
    g.turn();
    g.out
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

// ---------------------------------------------------------------------------
// Measuring
// ---------------------------------------------------------------------------

struct Stat(Vec<f64>);

impl Stat {
    fn median(&self) -> f64 {
        let mut v = self.0.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    }
    fn min(&self) -> f64 {
        self.0.iter().copied().fold(f64::INFINITY, f64::min)
    }
    fn max(&self) -> f64 {
        self.0.iter().copied().fold(0.0, f64::max)
    }
    fn ms(&self) -> String {
        format!(
            "median {:.1} ms ({:.1}–{:.1}, {} runs)",
            self.median(),
            self.min(),
            self.max(),
            self.0.len()
        )
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Peak resident memory (VmHWM) of a live process, in bytes.
fn vm_hwm(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// This process's CPU time so far (user + system, all threads), in ms.
#[cfg(target_os = "linux")]
fn cpu_ms() -> f64 {
    // SAFETY: an all-zero rusage is a valid value; getrusage fills it in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF and a valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let t = |v: libc::timeval| v.tv_sec as f64 * 1e3 + v.tv_usec as f64 / 1e3;
    t(ru.ru_utime) + t(ru.ru_stime)
}

#[cfg(not(target_os = "linux"))]
fn cpu_ms() -> f64 {
    f64::NAN
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

fn key(code: KeyCode, m: KeyModifiers) -> AppEvent {
    AppEvent::Key(KeyEvent::new(code, m))
}
fn plain(code: KeyCode) -> AppEvent {
    key(code, KeyModifiers::NONE)
}
fn ctrl(c: char) -> AppEvent {
    key(KeyCode::Char(c), KeyModifiers::CONTROL)
}

/// Performs effects and feeds their events back, as the runtime does (on
/// its threads); the search text's build is left for the caller.
fn drive(app: &mut App, fx: Vec<Effect>) -> Vec<Effect> {
    let mut queue = fx;
    let mut later = Vec::new();
    while let Some(fx) = queue.pop() {
        if matches!(fx, Effect::Exit(_) | Effect::CloseTree | Effect::Copy(_)) {
            continue;
        }
        if matches!(fx, Effect::IndexTree(_)) {
            later.push(fx);
            continue;
        }
        for ev in perform(fx) {
            queue.extend(app.update(ev));
        }
    }
    later
}

/// [`drive`], the search text included.
fn drive_all(app: &mut App, fx: Vec<Effect>) {
    let mut later = drive(app, fx);
    while !later.is_empty() {
        let fx = later.split_off(0);
        for f in fx {
            for ev in perform(f) {
                let more = app.update(ev);
                later.extend(drive(app, more));
            }
        }
    }
}

struct InProcess {
    load: Stat,
    load_cpu: Stat,
    index: Stat,
    keys: Vec<(&'static str, Stat)>,
    keys_cpu: Vec<(&'static str, Stat)>,
    background: Vec<(&'static str, Stat)>,
}

/// The tree in process, on a copy of the file (label edits write to it).
fn in_process(path: &Path, runs: usize) -> InProcess {
    let tmp = tempfile::tempdir().expect("temp dir");
    let copy = tmp.path().join(path.file_name().expect("file name"));
    std::fs::copy(path, &copy).expect("copy the session");
    let theme = Theme::plain();
    let mut term = Terminal::new(TestBackend::new(COLS, ROWS)).expect("terminal");
    let (mut app, opened) = open_runs(&copy, runs, &mut term, &theme);
    let mut timer = KeyTimer {
        term: &mut term,
        theme: &theme,
        keys: Vec::new(),
        keys_cpu: Vec::new(),
        background: Vec::new(),
    };
    let n = 12;
    timer.moves(&mut app, n);
    timer.folds(&mut app, n);
    timer.filters(&mut app, runs);
    timer.searches(&mut app, runs);
    timer.labels(&mut app, runs);
    InProcess {
        load: opened.load,
        load_cpu: opened.load_cpu,
        index: opened.index,
        keys: timer.keys,
        keys_cpu: timer.keys_cpu,
        background: timer.background,
    }
}

/// The times of opening the tree: to its first frame, its CPU, and the
/// search text built after it.
struct Opened {
    load: Stat,
    load_cpu: Stat,
    index: Stat,
}

/// Opens the tree on `copy` `runs` times; returns the last one's app.
fn open_runs(
    copy: &Path,
    runs: usize,
    term: &mut Terminal<TestBackend>,
    theme: &Theme,
) -> (App, Opened) {
    let mut load = Stat(Vec::new());
    let mut load_cpu = Stat(Vec::new());
    let mut index = Stat(Vec::new());
    let mut app = App::new("/".into(), 0);
    for _ in 0..runs {
        app = App::new("/".into(), 0);
        app.width = COLS;
        app.height = ROWS;
        app.tree_only = true;
        let t = Instant::now();
        let c = cpu_ms();
        let later = drive(
            &mut app,
            vec![Effect::OpenTree {
                path: copy.to_path_buf(),
                agent: Agent::Atomic,
            }],
        );
        term.draw(|f| arbor::ui::render(f, &app, theme))
            .expect("draw");
        load.0.push(ms(t.elapsed()));
        load_cpu.0.push(cpu_ms() - c);
        assert!(matches!(app.mode, Mode::Tree(_)), "the tree did not open");
        let t = Instant::now();
        drive_all(&mut app, later);
        index.0.push(ms(t.elapsed()));
    }
    (
        app,
        Opened {
            load,
            load_cpu,
            index,
        },
    )
}

fn record(v: &mut Vec<(&'static str, Stat)>, name: &'static str, d: f64) {
    match v.iter_mut().find(|(n, _)| *n == name) {
        Some((_, s)) => s.0.push(d),
        None => v.push((name, Stat(vec![d]))),
    }
}

/// Times keys in the open tree, per kind of key.
struct KeyTimer<'t> {
    term: &'t mut Terminal<TestBackend>,
    theme: &'t Theme,
    keys: Vec<(&'static str, Stat)>,
    keys_cpu: Vec<(&'static str, Stat)>,
    background: Vec<(&'static str, Stat)>,
}

impl KeyTimer<'_> {
    /// Key → frame: `update` and a draw, as the event loop runs them; the
    /// effects it asks for run on other threads, timed apart (a label
    /// written, the file read again, its search text built).
    fn time(&mut self, app: &mut App, name: &'static str, ev: AppEvent) {
        let theme = self.theme;
        let t = Instant::now();
        let c = cpu_ms();
        let fx = app.update(ev);
        self.term
            .draw(|f| arbor::ui::render(f, app, theme))
            .expect("draw");
        record(&mut self.keys, name, ms(t.elapsed()));
        record(&mut self.keys_cpu, name, cpu_ms() - c);
        if fx
            .iter()
            .any(|f| !matches!(f, Effect::Exit(_) | Effect::CloseTree | Effect::Copy(_)))
        {
            let t = Instant::now();
            let later = drive(app, fx);
            self.term
                .draw(|f| arbor::ui::render(f, app, theme))
                .expect("draw");
            record(
                &mut self.background,
                "effects → frame (label written, file re-read)",
                ms(t.elapsed()),
            );
            if !later.is_empty() {
                let t = Instant::now();
                drive_all(app, later);
                record(
                    &mut self.background,
                    "search text rebuilt after a reload",
                    ms(t.elapsed()),
                );
            }
        }
    }

    /// Moves: a row, a page, to either end; `n` of each.
    fn moves(&mut self, app: &mut App, n: usize) {
        for _ in 0..n {
            self.time(app, "move ↓", plain(KeyCode::Down));
        }
        for _ in 0..n {
            self.time(app, "move ↑", plain(KeyCode::Up));
        }
        for _ in 0..n / 2 {
            self.time(app, "page ↑/↓", plain(KeyCode::PageUp));
            self.time(app, "page ↑/↓", plain(KeyCode::PageDown));
        }
        for _ in 0..n / 2 {
            self.time(app, "Home/End", plain(KeyCode::Home));
            self.time(app, "Home/End", plain(KeyCode::End));
        }
    }

    /// Folds and unfolds the `n` forks nearest the top, one after the
    /// other; then jumps between branches from the end.
    fn folds(&mut self, app: &mut App, n: usize) {
        let forks: Vec<usize> = match &app.mode {
            Mode::Tree(t) => t
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.foldable())
                .map(|(p, _)| p)
                .take(n)
                .collect(),
            Mode::Picker => Vec::new(),
        };
        for &p in &forks {
            if let Mode::Tree(t) = &mut app.mode {
                t.select_row(p);
            }
            self.time(
                app,
                "fold (ctrl+←)",
                key(KeyCode::Left, KeyModifiers::CONTROL),
            );
            self.time(
                app,
                "unfold (ctrl+→)",
                key(KeyCode::Right, KeyModifiers::CONTROL),
            );
        }
        app.update(plain(KeyCode::End));
        for _ in 0..n / 2 {
            self.time(
                app,
                "branch jump (ctrl+←/→)",
                key(KeyCode::Left, KeyModifiers::CONTROL),
            );
            self.time(
                app,
                "branch jump (ctrl+←/→)",
                key(KeyCode::Right, KeyModifiers::CONTROL),
            );
        }
    }

    /// Each filter on and off, and the filter cycle.
    fn filters(&mut self, app: &mut App, runs: usize) {
        for _ in 0..runs.max(3) {
            for (name, c) in [
                ("filter no-tools (ctrl+t, twice)", 't'),
                ("filter user-only (ctrl+u, twice)", 'u'),
                ("filter labeled-only (ctrl+l, twice)", 'l'),
                ("filter all (ctrl+a, twice)", 'a'),
                ("filter default (ctrl+d)", 'd'),
            ] {
                self.time(app, name, ctrl(c));
                if c != 'd' {
                    self.time(app, name, ctrl(c));
                }
            }
            for _ in 0..5 {
                self.time(app, "filter cycle (ctrl+o)", ctrl('o'));
            }
        }
    }

    /// A search typed, backspaced and cleared.
    fn searches(&mut self, app: &mut App, runs: usize) {
        // ARBOR_BENCH_SKIP_SEARCH=1: for a build whose search is too slow to wait for.
        let searches = if std::env::var_os("ARBOR_BENCH_SKIP_SEARCH").is_some() {
            0
        } else {
            runs.max(3)
        };
        for _ in 0..searches {
            for c in "error tree".chars() {
                self.time(app, "search: a typed character", plain(KeyCode::Char(c)));
            }
            for _ in 0..4 {
                self.time(app, "search: backspace", plain(KeyCode::Backspace));
            }
            self.time(app, "search: esc clears", plain(KeyCode::Esc));
        }
    }

    /// A label typed in its dialog and written.
    fn labels(&mut self, app: &mut App, runs: usize) {
        for _ in 0..runs.max(3) {
            self.time(app, "label: dialog keys", plain(KeyCode::Char('L')));
            self.time(app, "label: dialog keys", plain(KeyCode::Char('x')));
            // Enter writes the label (an effect) and reloads the grown file.
            self.time(app, "label: enter", plain(KeyCode::Enter));
        }
    }
}

struct Session {
    name: &'static str,
    path: PathBuf,
    goal_open: f64,
    goal_show: f64,
}

fn mb(b: u64) -> f64 {
    b as f64 / 1e6
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

/// The sessions ARBOR_BENCH_ONLY names (`bushy,deep,realistic,huge`; all
/// but huge when unset, huge too with ARBOR_BENCH_HUGE), made once.
fn sessions_wanted() -> Vec<Session> {
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

/// `arbor tree` in a pty: open, a filter and a search key, and its peak
/// memory (`bytes`: the file's size).
fn bench_pty(s: &Session, runs: usize, bytes: u64) {
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

/// `show` and `context` on the session: time, CPU and peak memory.
fn bench_commands(s: &Session, runs: usize, bytes: u64) {
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

/// What [`in_process`] measured.
fn print_in_process(ip: &InProcess) {
    println!(
        "in process: open (read, build, first draw): {}",
        ip.load.ms()
    );
    println!("in process: open, CPU (all threads): {}", ip.load_cpu.ms());
    println!(
        "in process: search text (built after the first frame, off the UI thread): {}",
        ip.index.ms()
    );
    println!("key → frame (update + draw at {COLS}×{ROWS}; goal < 16 ms):");
    for ((name, st), (_, cpu)) in ip.keys.iter().zip(&ip.keys_cpu) {
        println!(
            "  {:<38} median {:>8.2} ms, worst {:>8.2} ms ({} keys); CPU median {:>6.2} ms, worst {:>6.2} ms",
            name,
            st.median(),
            st.max(),
            st.0.len(),
            cpu.median(),
            cpu.max()
        );
    }
    for (name, st) in &ip.background {
        println!(
            "  background: {:<38} median {:>8.2} ms, worst {:>8.2} ms ({} times)",
            name,
            st.median(),
            st.max(),
            st.0.len()
        );
    }
}
