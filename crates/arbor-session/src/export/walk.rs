//! The branch walked entry by entry into a [`Sink`], the one document model
//! both Markdown and HTML are written from.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::entry::{format_iso_ms, parse_iso_ms, Entry, Header};
use crate::tree::SessionTree;

use super::clean::{first_chars, one_line};
use super::{ExportOptions, GetEntry};

pub(super) fn has_thinking(e: &Entry) -> bool {
    e.role() == Some("assistant")
        && matches!(
            e.message().and_then(|m| m.get("content")),
            Some(Value::Array(b)) if b.iter().any(|b| block_type(b) == "thinking")
        )
}

pub(super) fn block_type(b: &Value) -> &str {
    b.get("type").and_then(Value::as_str).unwrap_or("")
}

fn str_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

/// `2026-11-25 13:30:26 UTC`, from an entry's ISO timestamp (or a number of
/// milliseconds). `None` when there is no readable time.
fn when(v: Option<&Value>) -> Option<String> {
    let ms = match v? {
        Value::String(s) => parse_iso_ms(s)?,
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite())? as i64,
        _ => return None,
    };
    let iso = format_iso_ms(ms);
    // 2026-11-25T13:30:26.867Z → 2026-11-25 13:30:26 UTC
    Some(format!("{} {} UTC", &iso[..10], &iso[11..19]))
}

/// What kind of block an entry becomes (CSS classes in HTML).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    User,
    Assistant,
    Custom,
    BranchSummary,
    Compaction,
}

impl Kind {
    pub(super) fn class(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Assistant => "assistant",
            Kind::Custom => "custom",
            Kind::BranchSummary => "branch-summary",
            Kind::Compaction => "compaction",
        }
    }
}

/// The document's facts, shown at its top.
pub(super) struct DocInfo {
    pub(super) title: String,
    pub(super) rows: Vec<(&'static str, String)>,
}

/// Where `walk` writes: Markdown or HTML.
pub(super) trait Sink {
    /// A message-like section: a heading (title, time, label) then blocks.
    fn section(&mut self, kind: Kind, title: &str, time: Option<&str>, label: Option<&str>);
    /// Prose of a message (Markdown in the source).
    fn text(&mut self, text: &str);
    /// A folded verbatim block: tool calls, tool output, long summaries.
    fn fold(
        &mut self,
        title: &str,
        time: Option<&str>,
        label: Option<&str>,
        lang: &str,
        body: &str,
    );
    fn thinking(&mut self, text: &str);
    fn image(&mut self, mime: &str, data: &str);
    /// A one-line remark (model change, error, …).
    fn note(&mut self, text: &str, time: Option<&str>);
    /// Moves the text rendered so far to the scratch file once it is more
    /// than a fixed budget (see `Spill::take`); the first failed write
    /// since the last call is its error.
    fn pour(&mut self) -> std::io::Result<()>;
}

/// What the walk learns of the branch as it goes: the document's facts
/// (its first user message, the models) and the tools called so far.
#[derive(Default)]
struct BranchFacts {
    /// Tool names by call id, from the calls made so far on this branch.
    calls: HashMap<String, String>,
    first_user: Option<String>,
    models: Vec<String>,
}

/// Renders the branch into `s`, whose text goes to its scratch file as it grows;
/// returns the document's facts (its head is written last, since the
/// title and models come from the branch).
pub(super) fn walk<'e>(
    header: &Header,
    tree: &SessionTree,
    branch: &[usize],
    get: GetEntry<'_, 'e>,
    opts: ExportOptions,
    s: &mut dyn Sink,
) -> std::io::Result<DocInfo> {
    let mut facts = BranchFacts::default();
    for &i in branch {
        let Some(e) = get(i) else {
            continue;
        };
        let e: &Entry = &e;
        facts.note(e);
        let time = when(e.raw.get("timestamp"));
        let time = time.as_deref();
        let label = tree.labels.get(e.id.as_str()).map(|l| one_line(&l.text));
        let label = label.as_deref();
        entry(e, time, label, &facts.calls, opts, s);
        s.pour()?;
    }
    Ok(doc_info(header, tree, branch, get, facts))
}

impl BranchFacts {
    /// Takes in an entry's model, tool calls and (the first time) user text.
    fn note(&mut self, e: &Entry) {
        let Some(m) = e.message() else {
            return;
        };
        if e.role() == Some("assistant") {
            let model = one_line(str_of(m.get("model")));
            if !model.is_empty() && !self.models.contains(&model) {
                self.models.push(model);
            }
            if let Some(Value::Array(blocks)) = m.get("content") {
                for b in blocks.iter().filter(|b| block_type(b) == "toolCall") {
                    if let (Some(id), Some(name)) = (
                        b.get("id").and_then(Value::as_str),
                        b.get("name").and_then(Value::as_str),
                    ) {
                        self.calls.insert(id.to_string(), name.to_string());
                    }
                }
            }
        } else if e.role() == Some("user") && self.first_user.is_none() {
            let t = crate::entry::content_text(m.get("content"), " ");
            if !t.trim().is_empty() {
                self.first_user = Some(t);
            }
        }
    }
}

/// Writes one entry of the branch into `s`, as its type shows it.
fn entry(
    e: &Entry,
    time: Option<&str>,
    label: Option<&str>,
    calls: &HashMap<String, String>,
    opts: ExportOptions,
    s: &mut dyn Sink,
) {
    match e.entry_type() {
        "message" => message(e, time, label, calls, opts, s),
        "custom_message" => {
            let title = format!("Custom message: {}", str_of(e.raw.get("customType")));
            s.section(Kind::Custom, &one_line(&title), time, label);
            content(e.raw.get("content"), s);
        }
        "branch_summary" => {
            let summary = str_of(e.raw.get("summary"));
            s.section(Kind::BranchSummary, "Branch summary", time, label);
            if summary.trim().is_empty() {
                s.note("Branched here (no summary of the abandoned branch).", None);
            } else {
                s.text(summary);
            }
        }
        "compaction" => compaction(e, time, label, s),
        "model_change" => {
            let provider = str_of(e.raw.get("provider"));
            let model = str_of(e.raw.get("modelId"));
            let m = if provider.is_empty() {
                model.to_string()
            } else {
                format!("{provider}/{model}")
            };
            s.note(&format!("Model: {}", one_line(&m)), time);
        }
        "thinking_level_change" => {
            let level = match e.raw.get("thinkingLevel") {
                Some(Value::String(l)) => l.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            s.note(&format!("Thinking level: {}", one_line(&level)), time);
        }
        "session_info" => {
            let name = one_line(str_of(e.raw.get("name")));
            if name.is_empty() {
                s.note("Session name cleared", time);
            } else {
                s.note(&format!("Session named: {name}"), time);
            }
        }
        // Labels show on their targets; extension state, summaries for
        // the picker and settings are not part of the conversation.
        _ => {}
    }
}

/// The document's title and facts rows, from the header and the branch.
fn doc_info<'e>(
    header: &Header,
    tree: &SessionTree,
    branch: &[usize],
    get: GetEntry<'_, 'e>,
    facts: BranchFacts,
) -> DocInfo {
    let BranchFacts {
        first_user, models, ..
    } = facts;
    let title = tree
        .display_name()
        .map(one_line)
        .or_else(|| first_user.map(|t| first_chars(&one_line(&t), 80)))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| one_line(&header.id));
    let mut rows = vec![("Session", one_line(&header.id))];
    if let Some(cwd) = header.cwd() {
        rows.push(("Directory", one_line(cwd)));
    }
    if let Some(t) = when(header.raw.get("timestamp")) {
        rows.push(("Started", t));
    }
    if let Some(&leaf) = branch.last() {
        let id = get(leaf).map(|e| one_line(&e.id)).unwrap_or_default();
        let mut b = format!("{} entries, root → {id}", branch.len());
        if tree.leaf != Some(leaf) {
            b.push_str(" (not the session's current leaf)");
        }
        rows.push(("Branch", b));
    }
    if !models.is_empty() {
        rows.push(("Models", models.join(", ")));
    }
    DocInfo { title, rows }
}

fn message(
    e: &Entry,
    time: Option<&str>,
    label: Option<&str>,
    calls: &HashMap<String, String>,
    opts: ExportOptions,
    s: &mut dyn Sink,
) {
    let Some(m) = e.message() else {
        return;
    };
    match str_of(m.get("role")) {
        "user" => {
            s.section(Kind::User, "User", time, label);
            content(m.get("content"), s);
        }
        "assistant" => {
            let model = one_line(str_of(m.get("model")));
            let title = if model.is_empty() {
                "Assistant".to_string()
            } else {
                format!("Assistant · {model}")
            };
            s.section(Kind::Assistant, &title, time, label);
            match m.get("content") {
                Some(Value::String(t)) => s.text(t),
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        match block_type(b) {
                            "text" => s.text(str_of(b.get("text"))),
                            "thinking" if opts.thinking => s.thinking(str_of(b.get("thinking"))),
                            "toolCall" => {
                                let name = one_line(str_of(b.get("name")));
                                let args = b
                                    .get("arguments")
                                    .map(|a| serde_json::to_string_pretty(a).unwrap_or_default())
                                    .unwrap_or_default();
                                s.fold(&format!("Tool call: {name}"), None, None, "json", &args);
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if str_of(m.get("stopReason")) == "aborted" {
                s.note("(aborted)", None);
            } else if let Some(err) = m.get("errorMessage").and_then(Value::as_str) {
                s.note(&format!("Error: {}", one_line(err)), None);
            }
        }
        "toolResult" => {
            let call = str_of(m.get("toolCallId"));
            let name = calls
                .get(call)
                .map(String::as_str)
                .or_else(|| m.get("toolName").and_then(Value::as_str))
                .unwrap_or("tool");
            let mut title = format!("Tool result: {}", one_line(name));
            if m.get("isError") == Some(&Value::Bool(true)) {
                title.push_str(" (error)");
            }
            let (text, images) = content_parts(m.get("content"));
            s.fold(&title, time, label, "text", &text);
            for (mime, data) in images {
                s.image(mime, data);
            }
        }
        "bashExecution" => {
            let cmd = one_line(str_of(m.get("command")));
            let mut body = str_of(m.get("output")).to_string();
            if let Some(code) = m.get("exitCode").and_then(Value::as_i64) {
                if !body.is_empty() && !body.ends_with('\n') {
                    body.push('\n');
                }
                let _ = write!(body, "(exit code {code})");
            }
            s.fold(&format!("Bash: $ {cmd}"), time, label, "text", &body);
        }
        "custom" => {
            let title = format!("Custom message: {}", str_of(m.get("customType")));
            s.section(Kind::Custom, &one_line(&title), time, label);
            content(m.get("content"), s);
        }
        "branchSummary" => {
            s.section(Kind::BranchSummary, "Branch summary", time, label);
            s.text(str_of(m.get("summary")));
        }
        "compactionSummary" => {
            s.section(Kind::Compaction, "Compaction summary", time, label);
            s.fold("Summary", None, None, "text", str_of(m.get("summary")));
        }
        other => {
            let title = format!("Message: {other}");
            s.section(Kind::Custom, &one_line(&title), time, label);
            content(m.get("content"), s);
        }
    }
}

fn compaction(e: &Entry, time: Option<&str>, label: Option<&str>, s: &mut dyn Sink) {
    let mut title = "Compaction".to_string();
    if let Some(t) = e.raw.get("tokensBefore").and_then(Value::as_f64) {
        let _ = write!(title, " · {}k tokens before", (t / 1000.0).round() as i64);
    }
    let strategy = e
        .raw
        .get("details")
        .and_then(|d| d.get("strategy"))
        .and_then(Value::as_str);
    if let Some(st) = strategy {
        let _ = write!(title, " · {}", one_line(st));
    }
    s.section(Kind::Compaction, &title, time, label);
    let kept = match e.raw.get("firstKeptEntryId").and_then(Value::as_str) {
        Some(id) => format!("kept from entry {}", one_line(id)),
        None => "nothing kept".to_string(),
    };
    s.note(
        &format!("The agent's context was compacted here ({kept}); the entries above stay in this export."),
        None,
    );
    let summary = match e.raw.get("summary") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    if !summary.is_empty() {
        s.fold("Summary", None, None, "text", &summary);
    }
}

/// A `content` value's text blocks joined, and its images. One text is
/// lent, not copied (a tool's output of hundreds of megabytes).
fn content_parts(v: Option<&Value>) -> (Cow<'_, str>, Vec<(&str, &str)>) {
    let mut text = Cow::Borrowed("");
    let mut images = Vec::new();
    match v {
        Some(Value::String(t)) => text = Cow::Borrowed(t),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match block_type(b) {
                    "text" => {
                        let t = str_of(b.get("text"));
                        if text.is_empty() {
                            text = Cow::Borrowed(t);
                        } else {
                            let joined = text.to_mut();
                            joined.push('\n');
                            joined.push_str(t);
                        }
                    }
                    "image" => images.push((str_of(b.get("mimeType")), str_of(b.get("data")))),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    (text, images)
}

/// A user or custom message's content: text blocks as prose, images.
fn content(v: Option<&Value>, s: &mut dyn Sink) {
    match v {
        Some(Value::String(t)) => s.text(t),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match block_type(b) {
                    "text" => s.text(str_of(b.get("text"))),
                    "image" => s.image(str_of(b.get("mimeType")), str_of(b.get("data"))),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

pub(super) fn image_kb(data: &str) -> usize {
    // base64: 4 characters carry 3 bytes.
    (data.len() * 3 / 4).div_ceil(1024)
}
