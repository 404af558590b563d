//! The session generator: deterministic (splitmix64), a few seconds for
//! 350 MB; a bushy session with forks every ~80 entries or one whose active
//! path crosses many forks.

use std::collections::HashSet;

use serde_json::{json, Value};

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
pub(crate) fn gen_bushy(entries: usize, scale: f64, seed: u64) -> Vec<u8> {
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
pub(crate) fn gen_deep(forks: usize, seed: u64) -> Vec<u8> {
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
