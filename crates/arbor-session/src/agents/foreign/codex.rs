//! Codex's rollouts as Atomic sessions.
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

use std::collections::HashMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::atomic::{
    compaction, custom_message, header, message, session_info, stem, str_of, text_block, text_of,
    tool_result,
};
use super::translator::{Line, Window};

pub(super) struct Codex {
    pub(super) id: Option<String>,
    pub(super) cwd: Option<String>,
    timestamp: Option<String>,
    file_id: String,
    /// `session_meta.git.branch`.
    pub(super) git_branch: Option<String>,
    pub(super) w: Window,
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
    pub(super) fn new(path: &Path) -> Codex {
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

    pub(super) fn finish(&mut self) {
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

    pub(super) fn header(&self) -> Map<String, Value> {
        let id = self.id.clone().unwrap_or_else(|| self.file_id.clone());
        header(
            &id,
            self.timestamp.as_deref(),
            self.cwd.as_deref().unwrap_or(""),
        )
    }

    pub(super) fn line(&mut self, o: Map<String, Value>) {
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
                let m = tool_result(
                    &self.tools,
                    call,
                    Value::Array(vec![text_block(out)]),
                    false,
                );
                self.push(message("", None, ts, m));
            }
            _ => {}
        }
    }
}
