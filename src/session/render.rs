//! One-line text of an entry, as Atomic's /tree shows it (SPEC §6), and the
//! sanitizing every piece of session text goes through before a terminal.

use std::collections::HashMap;

use serde_json::Value;

use super::entry::{content_text, Entry};

/// Makes untrusted text safe and single-line: control characters (C0, DEL,
/// C1) and bidi overrides become spaces, so no escape sequence reaches the
/// terminal and no row can be visually reordered.
pub fn sanitize_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        out.push(if is_unsafe(c) { ' ' } else { c });
    }
    out
}

/// Like `sanitize_line` but keeps newlines (for multi-line panes).
pub fn sanitize_block(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push_str("    "),
            c if is_unsafe(c) => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A character the sanitizers replace: controls and bidi overrides.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Truncates to at most `max` characters, adding `...` like Atomic.
fn head(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        let t: String = s.chars().take(max).collect();
        format!("{t}...")
    } else {
        s.to_string()
    }
}

/// Tool calls by id, to name tool results after the call that made them.
pub type ToolCalls<'a> = HashMap<&'a str, (&'a str, &'a Value)>;

pub fn collect_tool_calls(entries: &[Entry]) -> ToolCalls<'_> {
    let mut calls = HashMap::new();
    for e in entries {
        if e.role() != Some("assistant") {
            continue;
        }
        let Some(Value::Array(blocks)) = e.message().and_then(|m| m.get("content")) else {
            continue;
        };
        for b in blocks {
            if b.get("type").and_then(Value::as_str) != Some("toolCall") {
                continue;
            }
            if let (Some(id), Some(name)) = (
                b.get("id").and_then(Value::as_str),
                b.get("name").and_then(Value::as_str),
            ) {
                calls.insert(id, (name, b.get("arguments").unwrap_or(&Value::Null)));
            }
        }
    }
    calls
}

fn arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `[read: path:start-end]` and friends.
fn tool_call_text(name: &str, args: &Value) -> String {
    match name {
        "read" => {
            let path = arg(args, "path");
            let offset = args.get("offset").and_then(Value::as_u64);
            let limit = args.get("limit").and_then(Value::as_u64);
            match (offset, limit) {
                (Some(o), Some(l)) => format!("[read: {path}:{o}-{}]", o + l.saturating_sub(1)),
                (Some(o), None) => format!("[read: {path}:{o}]"),
                _ => format!("[read: {path}]"),
            }
        }
        "write" => format!("[write: {}]", arg(args, "path")),
        "edit" => format!("[edit: {}]", arg(args, "path")),
        "bash" => {
            let cmd = arg(args, "command");
            if cmd.chars().count() > 50 {
                format!("[bash: {}]", head(cmd, 50))
            } else {
                format!("[bash: {cmd}]")
            }
        }
        "find" => {
            let path = args.get("path").and_then(Value::as_str).unwrap_or(".");
            format!("[find: {} in {path}]", arg(args, "pattern"))
        }
        "grep" => {
            let path = args.get("path").and_then(Value::as_str).unwrap_or(".");
            format!("[grep: {} in {path}]", arg(args, "pattern"))
        }
        "ls" => format!(
            "[ls: {}]",
            args.get("path").and_then(Value::as_str).unwrap_or(".")
        ),
        other => {
            let json = args.to_string();
            if json.chars().count() > 40 {
                format!("[{other}: {}]", head(&json, 40))
            } else {
                format!("[{other}: {json}]")
            }
        }
    }
}

/// The row text of an entry (before sanitizing).
pub fn entry_text(e: &Entry, calls: &ToolCalls) -> String {
    let raw_text = |k: &str| e.raw.get(k).and_then(Value::as_str).unwrap_or("");
    match e.entry_type() {
        "message" => {
            let Some(m) = e.message() else {
                return "[message]".into();
            };
            match m.get("role").and_then(Value::as_str).unwrap_or("") {
                "user" => format!("user: {}", content_text(m.get("content"), " ")),
                "assistant" => {
                    let text = content_text(m.get("content"), " ");
                    let stop = m.get("stopReason").and_then(Value::as_str);
                    if !text.trim().is_empty() {
                        format!("assistant: {text}")
                    } else if stop == Some("aborted") {
                        "assistant: (aborted)".into()
                    } else if let Some(err) = m.get("errorMessage").and_then(Value::as_str) {
                        format!("assistant: {err}")
                    } else {
                        "assistant: (no content)".into()
                    }
                }
                "toolResult" => {
                    let call_id = m.get("toolCallId").and_then(Value::as_str).unwrap_or("");
                    match calls.get(call_id) {
                        Some((name, args)) => tool_call_text(name, args),
                        None => format!(
                            "[{}]",
                            m.get("toolName").and_then(Value::as_str).unwrap_or("tool")
                        ),
                    }
                }
                "bashExecution" => format!(
                    "[bash]: {}",
                    m.get("command").and_then(Value::as_str).unwrap_or("")
                ),
                "custom" => format!(
                    "[{}]: {}",
                    m.get("customType")
                        .and_then(Value::as_str)
                        .unwrap_or("custom"),
                    content_text(m.get("content"), " ")
                ),
                "branchSummary" => format!(
                    "[branch summary]: {}",
                    m.get("summary").and_then(Value::as_str).unwrap_or("")
                ),
                "compactionSummary" => format!(
                    "[compaction]: {}",
                    m.get("summary").and_then(Value::as_str).unwrap_or("")
                ),
                other => format!("[{other}]"),
            }
        }
        "custom_message" => format!(
            "[{}]: {}",
            raw_text("customType"),
            content_text(e.raw.get("content"), " ")
        ),
        "compaction" => {
            let tokens = e
                .raw
                .get("tokensBefore")
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            format!("[compaction: {}k tokens]", (tokens / 1000.0).round() as i64)
        }
        "branch_summary" => format!("[branch summary]: {}", raw_text("summary")),
        "model_change" => format!("[model: {}]", raw_text("modelId")),
        "thinking_level_change" => format!("[thinking: {}]", raw_text("thinkingLevel")),
        "custom" => format!("[custom: {}]", raw_text("customType")),
        "label" => match e.label_text().filter(|l| !l.is_empty()) {
            Some(l) => format!("[label: {l}]"),
            None => "[label: (cleared)]".into(),
        },
        "session_info" => format!("[title: {}]", raw_text("name")),
        "session_summary" => format!("[session summary]: {}", raw_text("summary")),
        "context_window_change" => format!(
            "[context window: {}]",
            e.raw
                .get("contextWindow")
                .map(|v| v.to_string())
                .unwrap_or_default()
        ),
        "" => "[entry]".into(),
        other => format!("[{other}]"),
    }
}

/// Single-line, sanitized row text.
pub fn row_text(e: &Entry, calls: &ToolCalls) -> String {
    sanitize_line(&entry_text(e, calls))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_never_survive() {
        let s = sanitize_line("a\x1b]0;title\x07b\x1b[31mred\r\n\u{202e}x\u{9b}");
        assert!(!s.chars().any(|c| c.is_control()));
        assert!(!s.contains('\u{202e}'));
        assert!(s.contains("red"));
    }
}
