//! Sessions of other agents — Claude Code and Codex — read as Atomic
//! version 3 sessions.
//!
//! A foreign file is translated, line by line, into the lines an Atomic
//! session would hold (a header, then `message`, `compaction`,
//! `custom_message` … entries with `id`/`parentId`), and the result goes
//! through arbor's own reader, list-row scanner, tree, context and exports.
//! So every screen and command works on them without knowing the format, and
//! the rules that differ live here, each with where it comes from:
//!
//! Claude Code (`~/.claude/projects/<encoded cwd>/<session id>.jsonl`):
//! - every conversational line carries `uuid`/`parentUuid`: they become
//!   `id`/`parentId`, so edits and rewinds (a new line whose `parentUuid`
//!   names an earlier message) are branches of the tree;
//! - the active leaf is the last non-sidechain entry in file order, as with
//!   Atomic. Claude Code appends the line it is about to continue from, so
//!   the newest line is where `claude --resume` picks up; a `summary`
//!   line's `leafUuid` names the leaf the summary was written for, which may
//!   be an older branch (or another file's), so it titles the session but
//!   does not choose the leaf;
//! - lines with `isSidechain: true` are sub-agent runs (the Task tool): they
//!   are left out of the tree and the row, as Claude Code leaves them out of
//!   the conversation it resumes;
//! - the title is the last `custom-title` (`/rename`), else the last
//!   `summary`, else the first prompt — the order of Claude Code's resume
//!   list (custom title, summary, first prompt);
//! - `isMeta` user lines (the caveat Claude Code injects) and the
//!   `<command-…>`/`<local-command-…>` wrappers of slash commands are not
//!   prompts the user typed: they become `custom_message`s, so the first
//!   message is the first real prompt;
//! - a `system` line of subtype `compact_boundary` is a compaction (the
//!   summary is the following `isCompactSummary` user line's text); its
//!   `logicalParentUuid` keeps the tree connected across it;
//! - the git branch is the newest line's `gitBranch`: a session can move
//!   between branches, and Claude Code's resume list shows a branch per
//!   session (listing such a session once per branch was reported as a
//!   bug, anthropics/claude-code#77364, expecting the most recent one);
//! - an assistant reply streamed over several lines repeats one
//!   `message.id` and its usage: the usage is counted once, from the last.
//!
//! Codex (`~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl`): a rollout is one
//! linear thread, `{timestamp, type, payload}` per line:
//! - `session_meta` gives the id, cwd and start time (and `git.branch`);
//! - `response_item`s are the conversation: `message` (user, assistant;
//!   `developer`/`system` are instructions), `reasoning` (its summary is the
//!   thinking shown), `function_call`/`custom_tool_call`/`local_shell_call`
//!   and their outputs;
//! - user messages that are Codex's own injections (`<environment_context>`,
//!   `<user_instructions>`, `# AGENTS.md instructions`, …) are not prompts;
//! - `compacted` replaces the history with its `message`: a compaction whose
//!   context starts from that summary;
//! - `event_msg` duplicates the conversation for the UI; only `token_count`
//!   (usage of the last request) and `thread_name_updated` (the thread's
//!   name) are read from it; `turn_context` gives the model of what follows.
//! - rollouts written before the `{type, payload}` wrapper (a bare meta
//!   object, then bare response items) are read too.
//!
//! Lines that are not JSON objects are copied as they are, so the reader
//! counts them as skipped (or as a partial last line) exactly as in an
//! Atomic file.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use crate::agent::Agent;
use crate::entry::parse_iso_ms;
use crate::reader::{lines, parse_object};

/// Which foreign format a file's first JSON object is in, if any.
pub fn detect(obj: &Map<String, Value>) -> Option<Agent> {
    let ty = obj.get("type").and_then(Value::as_str);
    if obj.contains_key("payload")
        && matches!(
            ty,
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        )
    {
        return Some(Agent::Codex);
    }
    // The pre-wrapper rollout: a bare meta object first (with its
    // `instructions`, and no `version`, which tells it from an Atomic
    // header that lost its `type`).
    if ty.is_none()
        && obj.contains_key("id")
        && obj.contains_key("timestamp")
        && obj.contains_key("instructions")
        && !obj.contains_key("version")
    {
        return Some(Agent::Codex);
    }
    if obj.contains_key("sessionId") || obj.contains_key("parentUuid") || obj.contains_key("uuid") {
        return Some(Agent::Claude);
    }
    match ty {
        Some("summary" | "custom-title" | "file-history-snapshot" | "queue-operation") => {
            Some(Agent::Claude)
        }
        _ => None,
    }
}

/// Which foreign format `buf` is in, from its first JSON object.
pub fn detect_bytes(buf: &[u8]) -> Option<Agent> {
    lines(buf)
        .find_map(|(l, _)| parse_object(l, &mut false))
        .and_then(|o| detect(&o))
}

/// Which foreign format the file at `path` is in, from its first JSON
/// object (looked for in its first MiB, as [`detect_bytes`] looks in the
/// whole); `None` for Atomic files and anything unreadable.
pub fn detect_path(path: &Path) -> Option<Agent> {
    use std::io::{BufRead, Read};
    let (f, _) = crate::open::open_session_file(path).ok()?;
    let mut r = std::io::BufReader::new(f).take(1 << 20);
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if let Some(o) = parse_object(text, &mut false) {
            return detect(&o);
        }
    }
}

/// The Atomic version 3 lines of a foreign session file (an Atomic or pi
/// file is returned as it is).
pub fn translate(agent: Agent, path: &Path, buf: &[u8]) -> Vec<u8> {
    let Some(mut t) = Translator::new(agent, path) else {
        return buf.to_vec();
    };
    let mut out = Vec::with_capacity(buf.len());
    for (raw, complete) in lines(buf) {
        t.feed(raw, complete);
        t.drain_into(&mut out);
    }
    t.finish(&mut out);
    out
}

/// [`translate`] of an open file into `out`, in bounded memory: the input
/// is read a chunk at a time, a line longer than `max_line` is never held
/// (left out of the translation; its place and length are returned), and
/// the translation is written as it goes, holding only the last
/// [`WINDOW`] entries (the ones a later line may still change).
pub fn translate_file(
    agent: Agent,
    path: &Path,
    file: &std::fs::File,
    max_line: usize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<Vec<(u64, u64)>> {
    use crate::chunked::{Forward, Line as Chunk};
    let len = file.metadata()?.len();
    let mut huge = Vec::new();
    let Some(mut t) = Translator::new(agent, path) else {
        return Ok(huge);
    };
    let mut fwd = Forward::new(file, 0, len, max_line);
    let mut buf = Vec::new();
    while let Some(line) = fwd.next_line()? {
        match line {
            Chunk::Huge { start, len } => huge.push((start, len)),
            Chunk::Text { bytes, newline, .. } => t.feed(&bytes, newline),
        }
        t.drain_into(&mut buf);
        if buf.len() >= 256 << 10 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    t.finish(&mut buf);
    out.write_all(&buf)?;
    Ok(huge)
}

/// A translation in progress: lines in, Atomic lines out as soon as no
/// later line can change them.
pub struct Translator {
    kind: Kind,
}

enum Kind {
    Claude(Box<Claude>),
    Codex(Box<Codex>),
}

impl Translator {
    /// `None` for Atomic and pi, whose files need no translation.
    pub fn new(agent: Agent, path: &Path) -> Option<Translator> {
        let kind = match agent {
            Agent::Claude => Kind::Claude(Box::new(Claude::new(path))),
            Agent::Codex => Kind::Codex(Box::new(Codex::new(path))),
            Agent::Atomic | Agent::Pi => return None,
        };
        Some(Translator { kind })
    }

    /// One line of the foreign file (without its newline), and whether a
    /// newline ended it.
    pub fn feed(&mut self, raw: &[u8], complete: bool) {
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.window().size = raw.len();
        match parse_object(raw, &mut false) {
            Some(o) => match &mut self.kind {
                Kind::Claude(c) => c.line(o),
                Kind::Codex(c) => c.line(o),
            },
            None => self.window().push(Line::Raw(raw.to_vec(), complete)),
        }
        if let Some(h) = self.settled_header() {
            self.window().header(h);
        }
        self.window().flush(WINDOW);
    }

    /// [`Translator::feed`], handing the translated lines that are final to
    /// `f` (each without its newline, and whether it had one).
    pub fn feed_lines(&mut self, raw: &[u8], complete: bool, f: &mut dyn FnMut(&[u8], bool)) {
        self.feed(raw, complete);
        let w = self.window();
        for (l, c) in lines(&w.ready) {
            f(l, c);
        }
        w.ready.clear();
    }

    /// [`Translator::finish`], handing the last lines to `f`.
    pub fn finish_lines(self, f: &mut dyn FnMut(&[u8], bool)) {
        let mut out = Vec::new();
        self.finish(&mut out);
        for (l, c) in lines(&out) {
            f(l, c);
        }
    }

    /// Appends the translated lines that are final to `out`.
    pub fn drain_into(&mut self, out: &mut Vec<u8>) {
        let w = self.window();
        out.append(&mut w.ready);
    }

    /// Appends the rest of the translation to `out`.
    pub fn finish(mut self, out: &mut Vec<u8>) {
        match &mut self.kind {
            Kind::Claude(c) => c.finish(),
            Kind::Codex(c) => c.finish(),
        }
        let h = self.header();
        let w = self.window();
        w.header(h);
        w.flush(0);
        out.append(&mut w.ready);
    }

    /// The git branch the session was last on, where the agent records one.
    pub fn git_branch(&self) -> Option<&str> {
        match &self.kind {
            Kind::Claude(c) => c.git_branch.as_deref(),
            Kind::Codex(c) => c.git_branch.as_deref(),
        }
    }

    fn window(&mut self) -> &mut Window {
        match &mut self.kind {
            Kind::Claude(c) => &mut c.w,
            Kind::Codex(c) => &mut c.w,
        }
    }

    /// The header, once what it says is known (the lines that tell it come
    /// first: Claude Code's first conversational line, Codex's meta).
    fn settled_header(&self) -> Option<Map<String, Value>> {
        let done = match &self.kind {
            Kind::Claude(c) => c.w.header_done || c.cwd.is_none(),
            Kind::Codex(c) => c.w.header_done || c.id.is_none() || c.cwd.is_none(),
        };
        (!done).then(|| self.header())
    }

    fn header(&self) -> Map<String, Value> {
        match &self.kind {
            Kind::Claude(c) => c.header(),
            Kind::Codex(c) => c.header(),
        }
    }
}

/// What a translation produces, in order.
enum Line {
    Entry(Map<String, Value>),
    /// An input line that is not an object: copied for the reader to count.
    Raw(Vec<u8>, bool),
}

/// Entries a later line may still change (a streamed reply's usage, a
/// compaction's summary, a token count): lines further back are written.
const WINDOW: usize = 64;
/// ... unless they hold more than this (counted by their input's size).
const WINDOW_BYTES: usize = 8 << 20;

/// The translation's last lines, held until no later line can change them.
#[derive(Default)]
struct Window {
    lines: std::collections::VecDeque<(Line, usize)>,
    /// The position of `lines[0]` in the translation.
    base: usize,
    /// The input bytes behind the lines held.
    held: usize,
    /// The size of the input line being translated.
    size: usize,
    header_done: bool,
    /// Serialized lines, ready to be taken.
    ready: Vec<u8>,
}

impl Window {
    /// The position the next line will have.
    fn len(&self) -> usize {
        self.base + self.lines.len()
    }

    fn push(&mut self, l: Line) {
        // Several entries from one input line: its size counts once.
        let size = std::mem::take(&mut self.size);
        self.held += size;
        self.lines.push_back((l, size));
    }

    fn get_mut(&mut self, at: usize) -> Option<&mut Map<String, Value>> {
        match self.lines.get_mut(at.checked_sub(self.base)?) {
            Some((Line::Entry(e), _)) => Some(e),
            _ => None,
        }
    }

    fn header(&mut self, h: Map<String, Value>) {
        if self.header_done {
            return;
        }
        self.header_done = true;
        // Serializing a map of JSON values into memory cannot fail.
        let _ = serde_json::to_writer(&mut self.ready, &Value::Object(h));
        self.ready.push(b'\n');
    }

    /// Writes out all but the last `keep` lines (fewer when they are big),
    /// once the header is out.
    fn flush(&mut self, keep: usize) {
        if !self.header_done {
            return;
        }
        while self.lines.len() > keep || (self.held > WINDOW_BYTES && self.lines.len() > 1) {
            let Some((l, size)) = self.lines.pop_front() else {
                break;
            };
            self.base += 1;
            self.held -= size;
            match l {
                Line::Entry(m) => {
                    let _ = serde_json::to_writer(&mut self.ready, &Value::Object(m));
                    self.ready.push(b'\n');
                }
                Line::Raw(raw, complete) => {
                    self.ready.extend_from_slice(&raw);
                    if complete {
                        self.ready.push(b'\n');
                    }
                }
            }
        }
    }

    /// Runs `add` (which pushes the lines a translation ends with) before
    /// a cut-off last line, which must stay last.
    fn before_partial_tail(&mut self, add: impl FnOnce(&mut Self)) {
        let tail = match self.lines.back() {
            Some((Line::Raw(_, false), _)) => self.lines.pop_back(),
            _ => None,
        };
        add(self);
        self.lines.extend(tail);
    }
}

fn header(id: &str, timestamp: Option<&str>, cwd: &str) -> Map<String, Value> {
    let mut h = Map::new();
    h.insert("type".into(), "session".into());
    h.insert("version".into(), 3.into());
    h.insert("id".into(), id.into());
    if let Some(t) = timestamp {
        h.insert("timestamp".into(), t.into());
    }
    h.insert("cwd".into(), cwd.into());
    h
}

fn entry(ty: &str, id: &str, parent: Option<&str>, timestamp: Option<&str>) -> Map<String, Value> {
    let mut e = Map::new();
    e.insert("type".into(), ty.into());
    e.insert("id".into(), id.into());
    e.insert("parentId".into(), parent.map_or(Value::Null, Value::from));
    if let Some(t) = timestamp {
        e.insert("timestamp".into(), t.into());
    }
    e
}

fn message(
    id: &str,
    parent: Option<&str>,
    timestamp: Option<&str>,
    mut msg: Map<String, Value>,
) -> Map<String, Value> {
    let mut e = entry("message", id, parent, timestamp);
    if let Some(ms) = timestamp.and_then(parse_iso_ms) {
        msg.entry("timestamp").or_insert(ms.into());
    }
    e.insert("message".into(), Value::Object(msg));
    e
}

fn custom_message(
    id: &str,
    parent: Option<&str>,
    timestamp: Option<&str>,
    custom_type: &str,
    text: String,
    display: bool,
) -> Map<String, Value> {
    let mut e = entry("custom_message", id, parent, timestamp);
    e.insert("customType".into(), custom_type.into());
    e.insert("content".into(), text.into());
    e.insert("display".into(), display.into());
    e
}

fn compaction(
    id: &str,
    parent: Option<&str>,
    timestamp: Option<&str>,
    summary: String,
    tokens_before: Option<Value>,
) -> Map<String, Value> {
    let mut e = entry("compaction", id, parent, timestamp);
    e.insert("summary".into(), summary.into());
    // Nothing from before the boundary is kept verbatim: what the model
    // sees afterwards starts with the summary (both agents replace the
    // history with it).
    e.insert("firstKeptEntryId".into(), Value::Null);
    if let Some(t) = tokens_before {
        e.insert("tokensBefore".into(), t);
    }
    e.insert("details".into(), json!({ "strategy": "verbatim-lines" }));
    e
}

fn session_info(id: &str, parent: Option<&str>, name: &str) -> Map<String, Value> {
    let mut e = entry("session_info", id, parent, None);
    e.insert("name".into(), name.into());
    e
}

fn str_of<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

/// The text of a content value: a string, or the text blocks of an array.
fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            for b in blocks {
                let t = match b {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => str_of(o, "text"),
                    _ => None,
                };
                if let Some(t) = t {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(t);
                }
            }
            out
        }
        _ => String::new(),
    }
}

fn text_block(text: impl Into<Value>) -> Value {
    json!({ "type": "text", "text": text.into() })
}

/// The file's stem (`<session id>.jsonl` → the id).
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

// ---------------------------------------------------------------- Claude

struct Claude {
    id: String,
    cwd: Option<String>,
    first_timestamp: Option<String>,
    /// The newest `gitBranch` of the conversation's lines.
    git_branch: Option<String>,
    /// A sub-agent's transcript (`agent-<id>.jsonl`), whose lines are all
    /// sidechain lines: they are its conversation, not left out.
    sidechain: Option<Sidechain>,
    w: Window,
    /// Uuids of lines that are not entries (progress, other bookkeeping),
    /// mapped to their parent, so that children still find their place.
    alias: HashMap<String, Option<String>>,
    /// Tool names by `tool_use` id, for their results.
    tools: HashMap<String, String>,
    /// Where the usage of each API message id is counted (line index).
    usage_at: HashMap<String, usize>,
    /// The compaction entry waiting for its summary line.
    open_compaction: Option<(String, usize)>,
    custom_title: Option<String>,
    summary: Option<String>,
    last_id: Option<String>,
}

/// What a sub-agent's transcript is part of. Claude Code writes the
/// sub-agent runs of its Task tool as sidechains: inline in the session's
/// file in its first versions (left out of the session's tree), then in
/// `agent-<agent id>.jsonl` beside the session's file, and now in
/// `<session id>/subagents/agent-<agent id>.jsonl`; every line has
/// `isSidechain: true`, the session's `sessionId` and the `agentId`. Such a
/// file reads as an internal workflow session of its session (Atomic's
/// `internal` header with a `workflow` marker, and `parentSession`): hidden
/// unless asked for (`--include-internal`, Alt+I), and then listed under
/// its session in the threaded list.
struct Sidechain {
    /// The folder of the session's file.
    dir: std::path::PathBuf,
    /// The session's id, from the folder (`<session id>/subagents/`) or the
    /// lines' `sessionId`.
    session: Option<String>,
    agent: Option<String>,
}

impl Sidechain {
    fn of(path: &Path, stem: &str) -> Option<Sidechain> {
        let agent = stem.strip_prefix("agent-")?;
        let parent = path.parent()?;
        let (dir, session) = if parent.file_name().is_some_and(|n| n == "subagents") {
            let sdir = parent.parent()?;
            let session = sdir.file_name()?.to_string_lossy().into_owned();
            (sdir.parent()?.to_path_buf(), Some(session))
        } else {
            (parent.to_path_buf(), None)
        };
        Some(Sidechain {
            dir,
            session,
            agent: Some(agent.to_string()).filter(|a| !a.is_empty()),
        })
    }

    fn learn(&mut self, o: &Map<String, Value>) {
        if self.session.is_none() {
            self.session = str_of(o, "sessionId").map(str::to_string);
        }
        if let Some(a) = str_of(o, "agentId") {
            self.agent.get_or_insert_with(|| a.to_string());
        }
    }

    /// Marks a header as the sub-agent run of its session.
    fn mark(&self, h: &mut Map<String, Value>) {
        let session = self.session.as_deref().unwrap_or("");
        let agent = self.agent.as_deref().unwrap_or("agent");
        h.insert("internal".into(), true.into());
        h.insert(
            "workflow".into(),
            json!({
                // Never empty: the marker needs all three.
                "runId": if session.is_empty() { agent } else { session },
                "stageId": agent,
                "stageName": "sub-agent",
            }),
        );
        if !session.is_empty() {
            let parent = self.dir.join(format!("{session}.jsonl"));
            h.insert(
                "parentSession".into(),
                parent.to_string_lossy().into_owned().into(),
            );
        }
    }
}

const CLAUDE_NOT_PROMPTS: [&str; 5] = [
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
];

impl Claude {
    fn new(path: &Path) -> Claude {
        let id = stem(path);
        Claude {
            sidechain: Sidechain::of(path, &id),
            id,
            cwd: None,
            first_timestamp: None,
            git_branch: None,
            w: Window::default(),
            alias: HashMap::new(),
            tools: HashMap::new(),
            usage_at: HashMap::new(),
            open_compaction: None,
            custom_title: None,
            summary: None,
            last_id: None,
        }
    }

    /// The entry a `parentUuid` means, through lines that are not entries.
    fn resolve(&self, id: Option<&str>) -> Option<String> {
        let mut cur = id.map(str::to_string);
        // Bounded: a cycle of aliases ends as a root.
        for _ in 0..64 {
            match cur.as_deref().and_then(|c| self.alias.get(c)) {
                Some(p) => cur = p.clone(),
                None => return cur,
            }
        }
        None
    }

    fn push(&mut self, e: Map<String, Value>) {
        if let Some(id) = str_of(&e, "id") {
            self.last_id = Some(id.to_string());
        }
        self.w.push(Line::Entry(e));
    }

    fn finish(&mut self) {
        // The title goes last, on the active path, as Atomic's `/name` does.
        let Some(name) = self.custom_title.clone().or_else(|| self.summary.clone()) else {
            return;
        };
        let parent = self.last_id.clone();
        let id = format!("{}:title", self.id);
        let e = session_info(&id, parent.as_deref(), &name);
        self.w.before_partial_tail(|w| w.push(Line::Entry(e)));
    }

    fn header(&self) -> Map<String, Value> {
        let mut h = header(
            &self.id,
            self.first_timestamp.as_deref(),
            self.cwd.as_deref().unwrap_or(""),
        );
        if let Some(sc) = &self.sidechain {
            sc.mark(&mut h);
        }
        h
    }

    fn line(&mut self, o: Map<String, Value>) {
        let ty = str_of(&o, "type").unwrap_or("");
        match ty {
            "summary" => {
                if let Some(s) = str_of(&o, "summary").filter(|s| !s.trim().is_empty()) {
                    self.summary = Some(s.trim().to_string());
                }
                return;
            }
            "custom-title" => {
                if let Some(s) = str_of(&o, "customTitle") {
                    self.custom_title = Some(s.trim().to_string()).filter(|s| !s.is_empty());
                }
                return;
            }
            _ => {}
        }
        let Some(uuid) = str_of(&o, "uuid").map(str::to_string) else {
            // Snapshots, queue operations and other bookkeeping.
            return;
        };
        if o.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            match &mut self.sidechain {
                Some(sc) => sc.learn(&o),
                // Inline sidechain lines (older Claude Code) of a session.
                None => return,
            }
        }
        if let Some(b) = str_of(&o, "gitBranch").filter(|b| !b.trim().is_empty()) {
            if self.git_branch.as_deref() != Some(b) {
                self.git_branch = Some(b.to_string());
            }
        }
        if self.first_timestamp.is_none() {
            self.first_timestamp = str_of(&o, "timestamp").map(str::to_string);
        }
        if self.cwd.is_none() {
            self.cwd = str_of(&o, "cwd")
                .filter(|c| !c.is_empty())
                .map(str::to_string);
        }
        let parent_raw = str_of(&o, "parentUuid")
            .or_else(|| str_of(&o, "logicalParentUuid"))
            .map(str::to_string);
        let parent = self.resolve(parent_raw.as_deref());
        let ts = str_of(&o, "timestamp").map(str::to_string);
        let ts = ts.as_deref();
        let msg = o.get("message").and_then(Value::as_object);
        match ty {
            "user" => self.user(&o, &uuid, parent, ts, msg),
            "assistant" => self.assistant(&uuid, parent, ts, msg),
            "system" => {
                if str_of(&o, "subtype") == Some("compact_boundary") {
                    let tokens = o
                        .get("compactMetadata")
                        .and_then(|m| m.get("preTokens"))
                        .cloned();
                    let e = compaction(&uuid, parent.as_deref(), ts, String::new(), tokens);
                    self.open_compaction = Some((uuid.clone(), self.w.len()));
                    self.push(e);
                } else {
                    let text = text_of(o.get("content"));
                    let kind = format!("system:{}", str_of(&o, "subtype").unwrap_or("note"));
                    let e = custom_message(&uuid, parent.as_deref(), ts, &kind, text, true);
                    self.push(e);
                }
            }
            _ => {
                // A line in the tree arbor has no use for (progress of a
                // hook, …): its children hang from its parent.
                self.alias.insert(uuid, parent);
            }
        }
    }

    fn user(
        &mut self,
        o: &Map<String, Value>,
        uuid: &str,
        parent: Option<String>,
        ts: Option<&str>,
        msg: Option<&Map<String, Value>>,
    ) {
        let content = msg.and_then(|m| m.get("content"));
        let text = text_of(content);
        if o.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
            // The summary of the boundary just written: it becomes that
            // compaction's summary, and the line an alias of it.
            if let Some((cid, at)) = self.open_compaction.take() {
                if let Some(e) = self.w.get_mut(at) {
                    e.insert("summary".into(), text.into());
                }
                self.alias.insert(uuid.to_string(), Some(cid));
                return;
            }
            let e = custom_message(uuid, parent.as_deref(), ts, "compact-summary", text, true);
            self.push(e);
            return;
        }
        let trimmed = text.trim_start();
        if o.get("isMeta").and_then(Value::as_bool) == Some(true) {
            let e = custom_message(uuid, parent.as_deref(), ts, "meta", text, false);
            self.push(e);
            return;
        }
        if CLAUDE_NOT_PROMPTS.iter().any(|p| trimmed.starts_with(p)) {
            let e = custom_message(uuid, parent.as_deref(), ts, "command", text, true);
            self.push(e);
            return;
        }
        let blocks: Vec<&Value> = match content {
            Some(Value::Array(a)) => a.iter().collect(),
            _ => Vec::new(),
        };
        let results: Vec<&Value> = blocks
            .iter()
            .copied()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .collect();
        if results.is_empty() {
            let mut m = Map::new();
            m.insert("role".into(), "user".into());
            m.insert("content".into(), user_content(content));
            let e = message(uuid, parent.as_deref(), ts, m);
            self.push(e);
            return;
        }
        // One toolResult per result block (the agents' own shape), then any
        // text beside them; the last one keeps the line's uuid so that its
        // children find it.
        let rest: Vec<Value> = blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) != Some("tool_result"))
            .map(|b| (*b).clone())
            .collect();
        let n = results.len() + usize::from(!rest.is_empty());
        let mut prev = parent;
        for (k, r) in results.iter().enumerate() {
            let id = if k + 1 == n {
                uuid.to_string()
            } else {
                format!("{uuid}:{k}")
            };
            let call = r.get("tool_use_id").and_then(Value::as_str).unwrap_or("");
            let mut m = Map::new();
            m.insert("role".into(), "toolResult".into());
            m.insert("toolCallId".into(), call.into());
            m.insert(
                "toolName".into(),
                self.tools
                    .get(call)
                    .map_or(Value::Null, |n| n.clone().into()),
            );
            let out = match r.get("content") {
                Some(Value::Array(a)) => Value::Array(a.iter().filter_map(block).collect()),
                other => Value::Array(vec![text_block(text_of(other))]),
            };
            m.insert("content".into(), out);
            m.insert(
                "isError".into(),
                r.get("is_error")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                    .into(),
            );
            let e = message(&id, prev.as_deref(), ts, m);
            self.push(e);
            prev = Some(id);
        }
        if !rest.is_empty() {
            let mut m = Map::new();
            m.insert("role".into(), "user".into());
            m.insert("content".into(), user_content(Some(&Value::Array(rest))));
            let e = message(uuid, prev.as_deref(), ts, m);
            self.push(e);
        }
    }

    fn assistant(
        &mut self,
        uuid: &str,
        parent: Option<String>,
        ts: Option<&str>,
        msg: Option<&Map<String, Value>>,
    ) {
        let empty = Map::new();
        let msg = msg.unwrap_or(&empty);
        let mut content = Vec::new();
        if let Some(Value::Array(blocks)) = msg.get("content") {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("tool_use" | "server_tool_use") => {
                        let id = b.get("id").and_then(Value::as_str).unwrap_or("");
                        let name = b.get("name").and_then(Value::as_str).unwrap_or("");
                        self.tools.insert(id.to_string(), name.to_string());
                        content.push(json!({
                            "type": "toolCall",
                            "id": id,
                            "name": name,
                            "arguments": b.get("input").cloned().unwrap_or(json!({})),
                        }));
                    }
                    Some("thinking") => content.push(json!({
                        "type": "thinking",
                        "thinking": b.get("thinking").cloned().unwrap_or(json!("")),
                    })),
                    _ => {
                        if let Some(v) = block(b) {
                            content.push(v);
                        }
                    }
                }
            }
        } else if let Some(Value::String(s)) = msg.get("content") {
            content.push(text_block(s.clone()));
        }
        let mut m = Map::new();
        m.insert("role".into(), "assistant".into());
        m.insert("content".into(), Value::Array(content));
        m.insert("provider".into(), "anthropic".into());
        if let Some(model) = str_of(msg, "model").filter(|m| *m != "<synthetic>") {
            m.insert("model".into(), model.into());
        }
        let stop = match str_of(msg, "stop_reason") {
            Some("end_turn" | "stop_sequence") => Some("stop"),
            Some("tool_use") => Some("toolUse"),
            Some("max_tokens") => Some("length"),
            _ => None,
        };
        if let Some(s) = stop {
            m.insert("stopReason".into(), s.into());
        }
        if let Some(u) = msg.get("usage").and_then(Value::as_object) {
            let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0);
            let (input, output) = (n("input_tokens"), n("output_tokens"));
            let (read, write) = (
                n("cache_read_input_tokens"),
                n("cache_creation_input_tokens"),
            );
            m.insert(
                "usage".into(),
                json!({
                    "input": input, "output": output, "cacheRead": read, "cacheWrite": write,
                    "totalTokens": input + output + read + write,
                }),
            );
            if let Some(api_id) = str_of(msg, "id") {
                // Streamed replies repeat the usage: the last line counts.
                if let Some(prev) = self.usage_at.insert(api_id.to_string(), self.w.len()) {
                    if let Some(e) = self.w.get_mut(prev) {
                        if let Some(Value::Object(pm)) = e.get_mut("message") {
                            pm.remove("usage");
                        }
                    }
                }
            }
        }
        let e = message(uuid, parent.as_deref(), ts, m);
        self.push(e);
    }
}

/// A user message's content in Atomic's shape (a string stays a string).
fn user_content(content: Option<&Value>) -> Value {
    match content {
        Some(Value::String(s)) => Value::String(s.clone()),
        Some(Value::Array(a)) => Value::Array(a.iter().filter_map(block).collect()),
        _ => Value::String(String::new()),
    }
}

/// A text or image content block in Atomic's shape.
fn block(b: &Value) -> Option<Value> {
    match b {
        Value::String(s) => Some(text_block(s.clone())),
        Value::Object(o) => match str_of(o, "type") {
            Some("text") => Some(text_block(o.get("text").cloned().unwrap_or(json!("")))),
            Some("image") => {
                let src = o.get("source").and_then(Value::as_object);
                Some(json!({
                    "type": "image",
                    "data": src.and_then(|s| s.get("data")).cloned().unwrap_or(json!("")),
                    "mimeType": src.and_then(|s| s.get("media_type")).cloned().unwrap_or(json!("")),
                }))
            }
            _ => None,
        },
        _ => None,
    }
}

// ---------------------------------------------------------------- Codex

struct Codex {
    id: Option<String>,
    cwd: Option<String>,
    timestamp: Option<String>,
    file_id: String,
    /// `session_meta.git.branch`.
    git_branch: Option<String>,
    w: Window,
    next: u64,
    last_id: Option<String>,
    tools: HashMap<String, String>,
    model: Option<String>,
    /// The last assistant message (line index), which a token count is for.
    last_assistant: Option<usize>,
    last_total: Option<Value>,
    /// Tokens of the last request (the context's size at that point).
    context_tokens: Option<Value>,
    name: Option<String>,
}

/// The openings of user messages Codex writes itself.
const CODEX_NOT_PROMPTS: [&str; 6] = [
    "<environment_context>",
    "<user_instructions>",
    "<user_shell_command>",
    "<turn_aborted>",
    "# AGENTS.md instructions",
    "<INSTRUCTIONS>",
];

impl Codex {
    fn new(path: &Path) -> Codex {
        // `rollout-<time>-<uuid>.jsonl`: the id is the last 36 characters.
        let s = stem(path);
        let file_id = s
            .get(s.len().saturating_sub(36)..)
            .filter(|_| s.len() > 36)
            .unwrap_or(&s)
            .to_string();
        Codex {
            id: None,
            cwd: None,
            timestamp: None,
            file_id,
            git_branch: None,
            w: Window::default(),
            next: 0,
            last_id: None,
            tools: HashMap::new(),
            model: None,
            last_assistant: None,
            last_total: None,
            context_tokens: None,
            name: None,
        }
    }

    fn push(&mut self, mut e: Map<String, Value>) {
        self.next += 1;
        let id = format!("{:08x}", self.next);
        e.insert("id".into(), id.clone().into());
        e.insert(
            "parentId".into(),
            self.last_id.clone().map_or(Value::Null, Value::from),
        );
        self.last_id = Some(id);
        self.w.push(Line::Entry(e));
    }

    fn finish(&mut self) {
        let Some(name) = self.name.clone() else {
            return;
        };
        let tail = match self.w.lines.back() {
            Some((Line::Raw(_, false), _)) => self.w.lines.pop_back(),
            _ => None,
        };
        let mut e = session_info("", None, &name);
        e.remove("timestamp");
        self.push(e);
        self.w.lines.extend(tail);
    }

    fn header(&self) -> Map<String, Value> {
        let id = self.id.clone().unwrap_or_else(|| self.file_id.clone());
        header(
            &id,
            self.timestamp.as_deref(),
            self.cwd.as_deref().unwrap_or(""),
        )
    }

    fn line(&mut self, o: Map<String, Value>) {
        let ts = str_of(&o, "timestamp").map(str::to_string);
        let (ty, payload) = match (str_of(&o, "type"), o.get("payload")) {
            (Some(t), Some(Value::Object(p))) => (t.to_string(), p.clone()),
            // The old layout: the meta object bare, then bare items.
            (None, _) if self.id.is_none() && o.contains_key("id") => {
                ("session_meta".to_string(), o.clone())
            }
            (Some(_), None) if !o.contains_key("record_type") => {
                ("response_item".to_string(), o.clone())
            }
            _ => return,
        };
        let ts = ts.as_deref();
        match ty.as_str() {
            "session_meta" => {
                if self.id.is_none() {
                    self.id = str_of(&payload, "id").map(str::to_string);
                    self.timestamp = str_of(&payload, "timestamp").or(ts).map(str::to_string);
                }
                if self.cwd.is_none() {
                    self.cwd = str_of(&payload, "cwd").map(str::to_string);
                }
                if let Some(b) = payload
                    .get("git")
                    .and_then(|g| g.get("branch"))
                    .and_then(Value::as_str)
                    .filter(|b| !b.trim().is_empty())
                {
                    self.git_branch = Some(b.to_string());
                }
            }
            "turn_context" => {
                if let Some(m) = str_of(&payload, "model") {
                    self.model = Some(m.to_string());
                }
                if self.cwd.is_none() {
                    self.cwd = str_of(&payload, "cwd").map(str::to_string);
                }
            }
            "compacted" => {
                let summary = str_of(&payload, "message").unwrap_or("").to_string();
                // The context's size before it: the last request's count.
                let before = self.context_tokens.clone();
                let e = compaction("", None, ts, summary, before);
                self.push(e);
                self.last_assistant = None;
            }
            "event_msg" => self.event(&payload),
            "response_item" => self.item(&payload, ts),
            _ => {}
        }
    }

    fn event(&mut self, p: &Map<String, Value>) {
        match str_of(p, "type") {
            Some("thread_name_updated") => {
                let name = str_of(p, "thread_name").or_else(|| str_of(p, "name"));
                self.name = name
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string);
            }
            Some("token_count") => {
                let Some(info) = p.get("info").and_then(Value::as_object) else {
                    return;
                };
                // The same count is sometimes written twice.
                let total = info.get("total_token_usage").cloned();
                if total.is_some() && total == self.last_total {
                    return;
                }
                self.last_total = total;
                let Some(u) = info.get("last_token_usage").and_then(Value::as_object) else {
                    return;
                };
                self.context_tokens = u.get("total_tokens").cloned();
                let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0).max(0.0);
                let cached = n("cached_input_tokens");
                let usage = json!({
                    "input": (n("input_tokens") - cached).max(0.0),
                    "output": n("output_tokens"),
                    "cacheRead": cached,
                    "cacheWrite": 0,
                    "totalTokens": n("total_tokens"),
                });
                if let Some(e) = self.last_assistant.and_then(|i| self.w.get_mut(i)) {
                    if let Some(Value::Object(m)) = e.get_mut("message") {
                        m.insert("usage".into(), usage);
                    }
                }
                self.last_assistant = None;
            }
            _ => {}
        }
    }

    fn assistant(&mut self, ts: Option<&str>, content: Vec<Value>) {
        let mut m = Map::new();
        m.insert("role".into(), "assistant".into());
        m.insert("content".into(), Value::Array(content));
        m.insert("provider".into(), "openai".into());
        if let Some(model) = &self.model {
            m.insert("model".into(), model.clone().into());
        }
        self.last_assistant = Some(self.w.len());
        self.push(message("", None, ts, m));
    }

    fn item(&mut self, p: &Map<String, Value>, ts: Option<&str>) {
        match str_of(p, "type") {
            Some("message") => {
                let text = text_of(p.get("content"));
                match str_of(p, "role") {
                    Some("user") => {
                        let t = text.trim_start();
                        if CODEX_NOT_PROMPTS.iter().any(|x| t.starts_with(x)) {
                            let kind = t
                                .strip_prefix('<')
                                .and_then(|r| r.split('>').next())
                                .unwrap_or("instructions")
                                .to_string();
                            self.push(custom_message("", None, ts, &kind, text, false));
                        } else {
                            let mut m = Map::new();
                            m.insert("role".into(), "user".into());
                            m.insert("content".into(), Value::Array(vec![text_block(text)]));
                            self.push(message("", None, ts, m));
                        }
                    }
                    Some("assistant") => self.assistant(ts, vec![text_block(text)]),
                    role => {
                        let kind = role.unwrap_or("instructions").to_string();
                        self.push(custom_message("", None, ts, &kind, text, false));
                    }
                }
            }
            Some("reasoning") => {
                let text = text_of(p.get("summary"));
                if !text.trim().is_empty() {
                    let block = json!({ "type": "thinking", "thinking": text });
                    self.assistant(ts, vec![block]);
                }
            }
            Some(
                kind @ ("function_call" | "custom_tool_call" | "local_shell_call"
                | "web_search_call"),
            ) => {
                let call = str_of(p, "call_id")
                    .or_else(|| str_of(p, "id"))
                    .unwrap_or("");
                let name = match kind {
                    "local_shell_call" => "shell",
                    "web_search_call" => "web_search",
                    _ => str_of(p, "name").unwrap_or(""),
                }
                .to_string();
                let args = match kind {
                    // Arguments are a JSON text; kept as text when not JSON.
                    "function_call" => {
                        let a = str_of(p, "arguments").unwrap_or("");
                        serde_json::from_str::<Value>(a)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({ "input": a }))
                    }
                    "custom_tool_call" => {
                        json!({ "input": p.get("input").cloned().unwrap_or(json!("")) })
                    }
                    _ => p.get("action").cloned().unwrap_or(json!({})),
                };
                self.tools.insert(call.to_string(), name.clone());
                let block =
                    json!({ "type": "toolCall", "id": call, "name": name, "arguments": args });
                self.assistant(ts, vec![block]);
            }
            Some("function_call_output" | "custom_tool_call_output") => {
                let call = str_of(p, "call_id").unwrap_or("");
                let out = match p.get("output") {
                    Some(Value::Object(o)) => text_of(o.get("content")),
                    // A shell's output is a JSON text of its own
                    // (`{"output": …, "metadata": {"exit_code": …}}`):
                    // the output is what it printed.
                    Some(Value::String(s)) if s.starts_with('{') => {
                        match serde_json::from_str::<Value>(s) {
                            Ok(Value::Object(o))
                                if o.get("output").is_some_and(Value::is_string) =>
                            {
                                text_of(o.get("output"))
                            }
                            _ => s.clone(),
                        }
                    }
                    other => text_of(other),
                };
                let mut m = Map::new();
                m.insert("role".into(), "toolResult".into());
                m.insert("toolCallId".into(), call.into());
                m.insert(
                    "toolName".into(),
                    self.tools
                        .get(call)
                        .map_or(Value::Null, |n| n.clone().into()),
                );
                m.insert("content".into(), Value::Array(vec![text_block(out)]));
                m.insert("isError".into(), false.into());
                self.push(message("", None, ts, m));
            }
            _ => {}
        }
    }
}
