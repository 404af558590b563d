//! Claude Code's sessions as Atomic ones.
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

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::atomic::{
    block, compaction, custom_message, header, message, session_info, stem, str_of, text_block,
    text_of, tool_result,
};
use super::translator::{Line, Window};

pub(super) struct Claude {
    id: String,
    pub(super) cwd: Option<String>,
    first_timestamp: Option<String>,
    /// The newest `gitBranch` of the conversation's lines.
    pub(super) git_branch: Option<String>,
    /// A sub-agent's transcript (`agent-<id>.jsonl`), whose lines are all
    /// sidechain lines: they are its conversation, not left out.
    sidechain: Option<Sidechain>,
    pub(super) w: Window,
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
    pub(super) fn new(path: &Path) -> Claude {
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

    pub(super) fn finish(&mut self) {
        // The title goes last, on the active path, as Atomic's `/name` does.
        let Some(name) = self.custom_title.clone().or_else(|| self.summary.clone()) else {
            return;
        };
        let parent = self.last_id.clone();
        let id = format!("{}:title", self.id);
        let e = session_info(&id, parent.as_deref(), &name);
        self.w.before_partial_tail(|w| w.push(Line::Entry(e)));
    }

    pub(super) fn header(&self) -> Map<String, Value> {
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

    pub(super) fn line(&mut self, o: Map<String, Value>) {
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
            let out = match r.get("content") {
                Some(Value::Array(a)) => Value::Array(a.iter().filter_map(block).collect()),
                other => Value::Array(vec![text_block(text_of(other))]),
            };
            let is_error = r.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            let m = tool_result(&self.tools, call, out, is_error);
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
