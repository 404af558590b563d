//! What the model sees when a session resumes at a given leaf (docs/spec.md §3).

use serde_json::{json, Map, Value};

use crate::entry::{content_text, Entry};
use crate::reader::Session;
use crate::tree::SessionTree;

/// Atomic's fixed preamble of a verbatim compaction boundary message.
pub(crate) const VERBATIM_COMPACTION_PREFIX: &str = "The earlier conversation was compacted. Below is the verbatim transcript of the retained lines; elided spans are marked \"(filtered N lines)\".\n\n";

/// Which agent's rules to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextFlavor {
    /// Only `verbatim-lines` compactions are active; one custom boundary message.
    #[default]
    Atomic,
    /// The latest compaction with a summary is active; a `compactionSummary`
    /// message followed by the kept entries.
    Pi,
}

impl ContextFlavor {
    /// The name `--flavor` takes and `arbor context --json` reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Atomic => "atomic",
            Self::Pi => "pi",
        }
    }
}

impl std::str::FromStr for ContextFlavor {
    type Err = crate::Error;
    fn from_str(s: &str) -> crate::Result<Self> {
        match s {
            "atomic" => Ok(Self::Atomic),
            "pi" => Ok(Self::Pi),
            other => Err(crate::Error::UnknownFlavor(other.to_string())),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ContextMessage {
    pub role: String,
    /// The entry it came from (for a compaction boundary: the compaction entry).
    pub entry_id: String,
    pub entry_index: usize,
    /// The message as the model gets it (role, content, …).
    pub message: Value,
    /// Plain text of the message, for display and search.
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SessionContext {
    pub leaf_id: Option<String>,
    /// `(provider, modelId)` as written in the file (any JSON value).
    pub model: Option<(Value, Value)>,
    pub thinking_level: Value,
    pub messages: Vec<ContextMessage>,
    /// Index in `messages` of the compaction boundary, when one is active.
    pub boundary: Option<usize>,
}

impl SessionContext {
    /// A rough token estimate (4 characters a token), as agents use for budgets.
    pub fn estimated_tokens(&self) -> usize {
        self.messages
            .iter()
            .map(|m| m.text.chars().count().div_ceil(4))
            .sum()
    }

    pub fn to_json(&self) -> Value {
        json!({
            "leafId": self.leaf_id,
            "model": self.model.as_ref().map(|(p, m)| json!({"provider": p, "modelId": m})),
            "thinkingLevel": self.thinking_level,
            "messages": self.messages.iter().map(ContextMessage::to_json).collect::<Vec<_>>(),
        })
    }
}

impl ContextMessage {
    /// The message as `arbor context --json` lists it.
    pub fn to_json(&self) -> Value {
        json!({
            "role": self.role,
            "entryId": self.entry_id,
            "text": self.text,
        })
    }
}

/// Builds the context at `leaf` (the session's leaf when `None`).
pub fn build_context(
    session: &Session,
    tree: &SessionTree,
    leaf: Option<usize>,
    flavor: ContextFlavor,
) -> SessionContext {
    let plan = ContextPlan::new(session, tree, leaf, flavor);
    let mut messages = Vec::new();
    plan.for_each_message(|m| messages.push(m));
    SessionContext {
        leaf_id: plan.leaf_id().map(str::to_string),
        model: plan.model,
        thinking_level: plan.thinking_level,
        messages,
        boundary: plan.boundary,
    }
}

/// A context before its messages are made: the path, the model and
/// thinking level in force at its end, and where the compaction boundary
/// is. Its messages are made one at a time ([`ContextPlan::for_each_message`]),
/// so a context of a million entries can be written out without being held.
pub struct ContextPlan<'s> {
    entries: &'s [Entry],
    leaf: Option<usize>,
    path: Vec<usize>,
    flavor: ContextFlavor,
    /// Position in `path` of the active compaction.
    boundary_pos: Option<usize>,
    /// `(provider, modelId)` as written in the file (any JSON value).
    pub model: Option<(Value, Value)>,
    pub thinking_level: Value,
    /// Index among the messages of the compaction boundary, when one is active.
    pub boundary: Option<usize>,
    /// Each message's text only (its `message` left `Null`): see
    /// [`ContextPlan::texts_only`].
    texts_only: bool,
}

impl<'s> ContextPlan<'s> {
    /// The context at `leaf` (the session's leaf when `None`).
    pub fn new(
        session: &'s Session,
        tree: &SessionTree,
        leaf: Option<usize>,
        flavor: ContextFlavor,
    ) -> ContextPlan<'s> {
        let entries = &session.entries;
        let leaf = leaf.or(tree.leaf);
        let path = leaf.map(|l| tree.path_to(l)).unwrap_or_default();
        let (model, thinking_level) = settings_at_end(entries, &path);
        let boundary_pos = path
            .iter()
            .rposition(|&i| is_active_boundary(&entries[i], flavor));
        ContextPlan {
            entries,
            leaf,
            path,
            flavor,
            boundary_pos,
            model,
            thinking_level,
            boundary: boundary_pos.map(|_| 0),
            texts_only: false,
        }
    }

    /// Makes each message with its text only (`message` is `Null`), the
    /// text taken out of the message rather than copied: what a caller
    /// that shows only the text needs, with a message of hundreds of
    /// megabytes held once instead of twice.
    pub fn texts_only(mut self) -> ContextPlan<'s> {
        self.texts_only = true;
        self
    }

    /// The id of the entry the context ends at.
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.map(|l| self.entries[l].id.as_str())
    }

    /// Makes the messages in order, handing each to `f`; entries are
    /// parsed one at a time and let go.
    pub fn for_each_message(&self, mut f: impl FnMut(ContextMessage)) {
        let (entries, path) = (self.entries, &self.path);
        let mut one = Vec::with_capacity(1);
        let texts_only = self.texts_only;
        let mut push = |e: &Entry, f: &mut dyn FnMut(ContextMessage)| {
            push_entry(&mut one, e, texts_only);
            one.drain(..).for_each(f);
        };
        let Some(b) = self.boundary_pos else {
            for &i in path {
                push(&entries[i], &mut f);
            }
            return;
        };
        let c = &*entries[path[b]].parsed();
        let first_kept = c
            .raw
            .get("firstKeptEntryId")
            .and_then(Value::as_str)
            .and_then(|id| path[..b].iter().position(|&i| entries[i].id == id));
        let kept: &[usize] = match first_kept {
            Some(k) => &path[k..b],
            None => &[],
        };
        match self.flavor {
            ContextFlavor::Atomic => {
                let mut kept_msgs = Vec::new();
                for &i in kept {
                    push_entry(&mut kept_msgs, &entries[i], false);
                }
                f(verbatim_boundary(c, &kept_msgs));
            }
            ContextFlavor::Pi => {
                f(pi_compaction_summary(c));
                for &i in kept {
                    push(&entries[i], &mut f);
                }
            }
        }
        for &i in &path[b + 1..] {
            push(&entries[i], &mut f);
        }
    }
}

/// The model and thinking level in force at the end of `path`.
fn settings_at_end(entries: &[Entry], path: &[usize]) -> (Option<(Value, Value)>, Value) {
    let mut thinking_level = Value::String("off".into());
    let mut model: Option<(Value, Value)> = None;
    // Entries are parsed one at a time and let go: a long path must not
    // leave the whole session parsed.
    for &i in path {
        let e = &entries[i];
        match e.entry_type() {
            "thinking_level_change" => {
                if let Some(v) = e.with_raw(|raw| raw.get("thinkingLevel").cloned()) {
                    thinking_level = v;
                }
            }
            "model_change" => {
                model = Some(e.with_raw(|raw| {
                    (
                        raw.get("provider").cloned().unwrap_or(Value::Null),
                        raw.get("modelId").cloned().unwrap_or(Value::Null),
                    )
                }));
            }
            "message" if e.role() == Some("assistant") => {
                let changed = e.with_raw(|raw| {
                    let m = raw.get("message").and_then(Value::as_object)?;
                    (m.contains_key("provider") || m.contains_key("model")).then(|| {
                        (
                            m.get("provider").cloned().unwrap_or(Value::Null),
                            m.get("model").cloned().unwrap_or(Value::Null),
                        )
                    })
                });
                if changed.is_some() {
                    model = changed;
                }
            }
            _ => {}
        }
    }
    (model, thinking_level)
}

fn is_active_boundary(e: &Entry, flavor: ContextFlavor) -> bool {
    if e.entry_type() != "compaction" {
        return false;
    }
    e.with_raw(|raw| match flavor {
        ContextFlavor::Atomic => {
            raw.get("details")
                .and_then(|d| d.get("strategy"))
                .and_then(Value::as_str)
                == Some("verbatim-lines")
        }
        ContextFlavor::Pi => raw.get("summary").is_some_and(|s| !s.is_null()),
    })
}

fn json_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn verbatim_boundary(c: &Entry, kept: &[ContextMessage]) -> ContextMessage {
    let mut text = String::from(VERBATIM_COMPACTION_PREFIX);
    text.push_str(&json_text(c.raw.get("summary")));
    if !kept.is_empty() {
        text.push_str("\n\n");
        let lines: Vec<String> = kept.iter().map(transcript_line).collect();
        text.push_str(&lines.join("\n"));
    }
    let message = json!({
        "role": "custom",
        "customType": "compaction",
        "content": [{"type": "text", "text": text}],
        "display": true,
        "details": c.raw.get("details").cloned().unwrap_or(Value::Null),
        "timestamp": c.timestamp(),
    });
    ContextMessage {
        role: "custom".into(),
        entry_id: c.id.to_string(),
        entry_index: c.index,
        message,
        text,
    }
}

/// One kept entry as a transcript line, in the `[Role]: text` shape of the summaries.
fn transcript_line(m: &ContextMessage) -> String {
    let who = match m.role.as_str() {
        "user" => "User",
        "assistant" => "Assistant",
        "toolResult" => "Tool result",
        "bashExecution" => "Bash",
        "branchSummary" => "Branch summary",
        _ => "Context",
    };
    format!("[{who}]: {}", m.text)
}

fn pi_compaction_summary(c: &Entry) -> ContextMessage {
    let summary = json_text(c.raw.get("summary"));
    let message = json!({
        "role": "compactionSummary",
        "summary": summary,
        "tokensBefore": c.raw.get("tokensBefore").cloned().unwrap_or(Value::Null),
        "timestamp": c.timestamp(),
    });
    ContextMessage {
        role: "compactionSummary".into(),
        entry_id: c.id.to_string(),
        entry_index: c.index,
        message,
        text: summary,
    }
}

fn push_entry(out: &mut Vec<ContextMessage>, e: &Entry, texts_only: bool) {
    if !matches!(
        e.entry_type(),
        "message" | "custom_message" | "branch_summary"
    ) {
        return;
    }
    if e.entry_type() == "message" {
        // The message taken out of its line's object (a line of hundreds
        // of megabytes is not held twice over).
        let msg = match e.raw.parse_unparsed() {
            Some(raw) => raw.and_then(|mut raw| raw.shift_remove("message")),
            None => e.with_raw(|raw| raw.get("message").cloned()),
        };
        let mut msg = msg.unwrap_or(Value::Null);
        let role = msg
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let text = if texts_only {
            take_message_text(std::mem::take(&mut msg))
        } else {
            message_text(msg.as_object())
        };
        out.push(ContextMessage {
            role,
            entry_id: e.id.to_string(),
            entry_index: e.index,
            message: msg,
            text,
        });
        return;
    }
    let e = &*e.parsed();
    match e.entry_type() {
        "custom_message" => {
            let text = content_text(e.raw.get("content"), "\n");
            let mut message = Map::new();
            message.insert("role".into(), "custom".into());
            for k in ["customType", "content", "display", "details"] {
                if let Some(v) = e.raw.get(k) {
                    message.insert(k.into(), v.clone());
                }
            }
            out.push(ContextMessage {
                role: "custom".into(),
                entry_id: e.id.to_string(),
                entry_index: e.index,
                message: Value::Object(message),
                text,
            });
        }
        "branch_summary" => {
            let summary = json_text(e.raw.get("summary"));
            if summary.is_empty() {
                return;
            }
            out.push(ContextMessage {
                role: "branchSummary".into(),
                entry_id: e.id.to_string(),
                entry_index: e.index,
                message: json!({
                    "role": "branchSummary",
                    "summary": summary,
                    "fromId": e.raw.get("fromId").cloned().unwrap_or(Value::Null),
                }),
                text: summary,
            });
        }
        _ => {}
    }
}

/// Plain text of any message role.
pub fn message_text(m: Option<&Map<String, Value>>) -> String {
    let Some(m) = m else {
        return String::new();
    };
    match m.get("role").and_then(Value::as_str) {
        Some("bashExecution") => {
            let cmd = json_text(m.get("command"));
            let output = json_text(m.get("output"));
            if output.is_empty() {
                format!("$ {cmd}")
            } else {
                format!("$ {cmd}\n{output}")
            }
        }
        Some("branchSummary") | Some("compactionSummary") => json_text(m.get("summary")),
        _ => content_text(m.get("content"), "\n"),
    }
}

/// [`message_text`] of a message that is let go: a text that is one
/// string of it is moved out, not copied.
fn take_message_text(msg: Value) -> String {
    let role = msg.get("role").and_then(Value::as_str);
    if matches!(
        role,
        Some("bashExecution" | "branchSummary" | "compactionSummary")
    ) {
        return message_text(msg.as_object());
    }
    take_content_text(msg)
}

/// `content_text(msg.content, "\n")` of a message that is let go: a text
/// that is one string of it is moved out, not copied.
pub(crate) fn take_content_text(mut msg: Value) -> String {
    let Some(content) = msg.get_mut("content") else {
        return String::new();
    };
    if let Value::Array(blocks) = content {
        let mut texts = blocks.iter_mut().filter_map(|b| match b {
            Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("text") => {
                match o.get_mut("text") {
                    Some(Value::String(t)) => Some(t),
                    _ => None,
                }
            }
            _ => None,
        });
        if let (Some(one), None) = (texts.next(), texts.next()) {
            return std::mem::take(one);
        }
    }
    match content {
        Value::String(s) => std::mem::take(s),
        other => content_text(Some(other), "\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_flavor_names_the_known_ones() {
        let e = "gpt".parse::<ContextFlavor>().unwrap_err();
        assert_eq!(e.to_string(), "unknown flavor \"gpt\" (atomic or pi)");
    }
}
