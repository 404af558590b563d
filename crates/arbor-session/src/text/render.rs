//! One-line text of an entry, as Atomic's /tree shows it (docs/spec.md §6), and the
//! sanitizing every piece of session text goes through before a terminal.

use serde_json::Value;

use crate::entry::Entry;

/// Makes untrusted text safe and single-line: terminal escape sequences
/// are removed whole (`escapes::strip_escapes`: what a terminal would hide),
/// and the control characters left (C0, DEL, C1, newlines and tabs) and
/// bidi controls become spaces, so no escape sequence reaches the terminal
/// and no row can be visually reordered. Every piece of session text drawn
/// or printed goes through this or [`sanitize_block`].
pub fn sanitize_line(s: &str) -> String {
    replace_controls(&crate::escapes::strip_escapes(s))
}

/// `s` with every control character and bidi control as a space, and
/// nothing removed: for a file name or a value printed for a script, where
/// what is shown must still say which file it is (`--p [41m--`), not what
/// a terminal would have drawn of it.
pub fn replace_controls(s: &str) -> String {
    s.chars()
        .map(|c| if is_unsafe(c) { ' ' } else { c })
        .collect()
}

/// Like `sanitize_line` but keeps newlines (for multi-line panes).
pub fn sanitize_block(s: &str) -> String {
    let s = crate::escapes::strip_escapes(s);
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

/// Length in UTF-16 code units: Atomic (JavaScript) measures and cuts text in these.
pub(crate) fn js_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// JavaScript's `s.slice(0, max)`: the first `max` UTF-16 units. A cut through
/// a surrogate pair leaves half a character, which a terminal shows as U+FFFD.
pub(crate) fn js_slice(s: &str, max: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    for c in s.chars() {
        let l = c.len_utf16();
        if n + l > max {
            if n < max {
                out.push('\u{FFFD}');
            }
            break;
        }
        out.push(c);
        n += l;
    }
    out
}

/// JavaScript's `String.prototype.trim` (its whitespace set differs from
/// Rust's: it has U+FEFF and lacks U+0085).
pub(crate) fn js_trim(s: &str) -> &str {
    let ws = |c: char| {
        matches!(
            c,
            '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
                ..='\u{200a}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{202f}'
                    | '\u{205f}'
                    | '\u{3000}'
                    | '\u{feff}'
        )
    };
    s.trim_matches(ws)
}

/// Atomic's row normalisation: newlines and tabs become spaces, then trim.
fn normalize(s: &str) -> String {
    js_trim(&s.replace(['\n', '\t'], " ")).to_string()
}

/// A number as JavaScript prints it.
fn js_number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        let f = n.as_f64().unwrap_or(0.0);
        if f.abs() < 9_007_199_254_740_992.0 {
            return n.to_string();
        }
    }
    let f = n.as_f64().unwrap_or(0.0);
    js_f64(f)
}

fn js_f64(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f == 0.0 {
        return "0".into();
    }
    let a = f.abs();
    if (1e-7..1e21).contains(&a) {
        // Shortest round-trip digits, positional (Rust's Display).
        let s = format!("{f}");
        return s.strip_suffix(".0").map(str::to_string).unwrap_or(s);
    }
    // Exponent form, `1e+21` / `1.5e-7`.
    let s = format!("{f:e}");
    match s.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
        _ => s,
    }
}

/// `String(v)` in JavaScript, for a JSON value (`None` = `undefined`).
pub(crate) fn js_string(v: Option<&Value>) -> String {
    match v {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => js_number(n),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::Null => String::new(),
                x => js_string(Some(x)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

/// JavaScript truthiness of a JSON value (`None` = `undefined`).
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(Value::String(s)) => !s.is_empty(),
        Some(_) => true,
    }
}

/// `JSON.stringify(v)`: numbers as JavaScript prints them, and an object's
/// integer-like keys first in ascending order (JavaScript's property order).
pub(crate) fn js_stringify(v: &Value) -> String {
    let mut out = String::new();
    stringify_into(v, &mut out);
    out
}

fn stringify_into(v: &Value, out: &mut String) {
    match v {
        Value::Number(n) => {
            let s = js_number(n);
            // Non-finite numbers cannot come from JSON text; keep the guard anyway.
            out.push_str(if s == "NaN" || s.contains("Infinity") {
                "null"
            } else {
                &s
            });
        }
        Value::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
        Value::Array(a) => {
            out.push('[');
            for (k, x) in a.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                stringify_into(x, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let index_key = |k: &str| -> Option<u32> {
                if k == "0" || (!k.starts_with('0') && !k.is_empty()) {
                    k.parse::<u32>().ok().filter(|&n| n != u32::MAX)
                } else {
                    None
                }
            };
            let mut ints: Vec<(u32, &String, &Value)> = Vec::new();
            let mut rest: Vec<(&String, &Value)> = Vec::new();
            for (k, x) in m {
                match index_key(k) {
                    Some(n) if n.to_string() == *k => ints.push((n, k, x)),
                    _ => rest.push((k, x)),
                }
            }
            ints.sort_by_key(|e| e.0);
            out.push('{');
            let all = ints.into_iter().map(|(_, k, x)| (k, x)).chain(rest);
            for (n, (k, x)) in all.enumerate() {
                if n > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                stringify_into(x, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Atomic's `extractContent`: a string, or the text blocks concatenated, cut
/// to 200 UTF-16 units.
pub(crate) fn extract_content(content: Option<&Value>) -> String {
    const MAX: usize = 200;
    match content {
        Some(Value::String(s)) => js_slice(s, MAX),
        Some(Value::Array(blocks)) => {
            let mut out = String::new();
            for b in blocks {
                if b.get("type").and_then(Value::as_str) == Some("text") {
                    out.push_str(&js_string(b.get("text")));
                    if js_len(&out) >= MAX {
                        return js_slice(&out, MAX);
                    }
                }
            }
            out
        }
        _ => String::new(),
    }
}

/// Atomic's `hasTextContent`: some non-blank text.
pub(crate) fn has_text_content(content: Option<&Value>) -> bool {
    match content {
        Some(Value::String(s)) => !js_trim(s).is_empty(),
        Some(Value::Array(blocks)) => blocks.iter().any(|b| {
            b.get("type").and_then(Value::as_str) == Some("text")
                && b.get("text")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !js_trim(t).is_empty())
        }),
        _ => false,
    }
}

pub use crate::calls::ToolCalls;

/// Tool calls by id, to name tool results after the call that made them
/// (a loaded session has them already: `Session::calls`).
pub fn collect_tool_calls(entries: &[Entry]) -> ToolCalls {
    ToolCalls::from_entries(entries)
}

/// Atomic shortens paths under the home directory to `~…` (a plain prefix test).
fn shorten_path(p: String) -> String {
    let home = std::env::var("HOME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("USERPROFILE").ok())
        .unwrap_or_default();
    if !home.is_empty() {
        if let Some(rest) = p.strip_prefix(&home) {
            return format!("~{rest}");
        }
    }
    p
}

/// `String(args.path || args.file_path || fallback)`.
fn path_arg(args: &Value, fallback: &str) -> String {
    let v = [args.get("path"), args.get("file_path")]
        .into_iter()
        .find(|v| truthy(*v))
        .flatten();
    match v {
        Some(v) => js_string(Some(v)),
        None => fallback.to_string(),
    }
}

/// `[read: path:start-end]` and friends, as Atomic's tree names a tool result.
pub(crate) fn tool_call_text(name: &str, args: &Value) -> String {
    match name {
        "read" => {
            let mut display = shorten_path(path_arg(args, ""));
            let (offset, limit) = (args.get("offset"), args.get("limit"));
            // `!== undefined`: a null offset or limit still counts.
            if offset.is_some() || limit.is_some() {
                let one = Value::from(1);
                let start = offset.filter(|v| !v.is_null()).unwrap_or(&one);
                display.push(':');
                display.push_str(&js_string(Some(start)));
                if let Some(l) = limit {
                    let end = js_plus(start, l) - 1.0;
                    // A zero or NaN end is falsy in JavaScript: no `-end`.
                    if end != 0.0 && !end.is_nan() {
                        display.push('-');
                        display.push_str(&js_f64(end));
                    }
                }
            }
            format!("[read: {display}]")
        }
        "write" => format!("[write: {}]", shorten_path(path_arg(args, ""))),
        "edit" => format!("[edit: {}]", shorten_path(path_arg(args, ""))),
        "bash" => {
            let raw = if truthy(args.get("command")) {
                js_string(args.get("command"))
            } else {
                String::new()
            };
            let cmd = js_slice(&normalize(&raw), 50);
            let more = if js_len(&raw) > 50 { "..." } else { "" };
            format!("[bash: {cmd}{more}]")
        }
        "find" => {
            let pattern = if truthy(args.get("pattern")) {
                js_string(args.get("pattern"))
            } else {
                String::new()
            };
            format!(
                "[find: {pattern} in {}]",
                shorten_path(path_arg_only(args, "."))
            )
        }
        "ls" => format!("[ls: {}]", shorten_path(path_arg_only(args, "."))),
        other => {
            let json = js_stringify(args);
            let more = if js_len(&json) > 40 { "..." } else { "" };
            format!("[{other}: {}{more}]", js_slice(&json, 40))
        }
    }
}

/// `Number(v)` in JavaScript.
fn js_to_number(v: &Value) -> f64 {
    match v {
        Value::Null => 0.0,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
        Value::String(s) => {
            let t = js_trim(s);
            if t.is_empty() {
                0.0
            } else {
                t.parse().unwrap_or(f64::NAN)
            }
        }
        Value::Array(a) if a.is_empty() => 0.0,
        Value::Array(a) if a.len() == 1 => js_to_number(&Value::String(js_string(Some(&a[0])))),
        _ => f64::NAN,
    }
}

/// `a + b` in JavaScript, as a number (a string operand concatenates first).
fn js_plus(a: &Value, b: &Value) -> f64 {
    let stringy = |v: &Value| matches!(v, Value::String(_) | Value::Array(_) | Value::Object(_));
    if stringy(a) || stringy(b) {
        let s = js_string(Some(a)) + &js_string(Some(b));
        js_to_number(&Value::String(s))
    } else {
        js_to_number(a) + js_to_number(b)
    }
}

/// `String(args.path || fallback)`.
fn path_arg_only(args: &Value, fallback: &str) -> String {
    if truthy(args.get("path")) {
        js_string(args.get("path"))
    } else {
        fallback.to_string()
    }
}

/// The text of an entry whose line is too long to read: what it is (from
/// its facts) and that it was not read.
pub fn unread_text(e: &Entry, len: usize) -> String {
    let what = e.role().unwrap_or(e.entry_type());
    format!(
        "{what}: [a line of {} MB, too long to read here: not shown]",
        len.div_ceil(1 << 20)
    )
}

/// The row text of an entry, exactly as Atomic's tree builds it (docs/spec.md §6),
/// before sanitizing. Entry types Atomic draws as blank rows are named
/// `[<type>]` instead; an entry whose line is too long to read says so.
pub fn entry_text(e: &Entry, calls: &ToolCalls) -> String {
    match e.unread_len() {
        Some(len) => unread_text(e, len),
        None => read_entry_text(e, calls),
    }
}

/// [`entry_text`] of an entry whose line can be read.
fn read_entry_text(e: &Entry, calls: &ToolCalls) -> String {
    // Parsed for this call only: rows are drawn again and again, and
    // keeping every object ever shown would hold the whole file parsed.
    let e = &*e.parsed();
    let raw_text = |k: &str| js_string(e.raw.get(k));
    match e.entry_type() {
        "message" => {
            let Some(m) = e.message() else {
                // A message that is not an object has no role (JavaScript
                // reads `undefined`); a missing one would crash Atomic.
                return match e.raw.get("message") {
                    None | Some(Value::Null) => "[message]".into(),
                    Some(_) => "[undefined]".into(),
                };
            };
            let content = m.get("content");
            match m.get("role") {
                Some(Value::String(r)) if r == "user" => {
                    format!("user: {}", normalize(&extract_content(content)))
                }
                Some(Value::String(r)) if r == "assistant" => {
                    let text = normalize(&extract_content(content));
                    if !text.is_empty() {
                        format!("assistant: {text}")
                    } else if m.get("stopReason").and_then(Value::as_str) == Some("aborted") {
                        "assistant: (aborted)".into()
                    } else if truthy(m.get("errorMessage")) {
                        let err = normalize(&js_string(m.get("errorMessage")));
                        format!("assistant: {}", js_slice(&err, 80))
                    } else {
                        "assistant: (no content)".into()
                    }
                }
                Some(Value::String(r)) if r == "toolResult" => {
                    let call = m
                        .get("toolCallId")
                        .and_then(Value::as_str)
                        .and_then(|id| calls.get(id));
                    match call {
                        Some((name, args)) => tool_call_text(name, &args),
                        None => match m.get("toolName") {
                            None | Some(Value::Null) => "[tool]".into(),
                            t => format!("[{}]", js_string(t)),
                        },
                    }
                }
                Some(Value::String(r)) if r == "bashExecution" => {
                    let cmd = match m.get("command") {
                        None | Some(Value::Null) => String::new(),
                        c => js_string(c),
                    };
                    format!("[bash]: {}", normalize(&cmd))
                }
                role => format!("[{}]", js_string(role)),
            }
        }
        "custom_message" => {
            let content = match e.raw.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(blocks)) => blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    // Array.join: undefined and null join as empty.
                    .map(|b| match b.get("text") {
                        None | Some(Value::Null) => String::new(),
                        t => js_string(t),
                    })
                    .collect(),
                _ => String::new(),
            };
            format!("[{}]: {}", raw_text("customType"), normalize(&content))
        }
        "compaction" => {
            let tokens = e.raw.get("tokensBefore").and_then(Value::as_f64);
            // Math.round: halves go up.
            let k = tokens.map_or("NaN".to_string(), |t| js_f64((t / 1000.0 + 0.5).floor()));
            format!("[compaction: {k}k tokens]")
        }
        "branch_summary" => format!("[branch summary]: {}", normalize(&raw_text("summary"))),
        "model_change" => format!("[model: {}]", raw_text("modelId")),
        "thinking_level_change" => format!("[thinking: {}]", raw_text("thinkingLevel")),
        "custom" => format!("[custom: {}]", raw_text("customType")),
        "label" => match e.raw.get("label") {
            None | Some(Value::Null) => "[label: (cleared)]".into(),
            l => format!("[label: {}]", js_string(l)),
        },
        "session_info" => {
            if truthy(e.raw.get("name")) {
                format!("[title: {}]", raw_text("name"))
            } else {
                "[title: empty]".into()
            }
        }
        "session_summary" => format!(
            "[session summary]: {}",
            normalize(e.str_field("summary").unwrap_or(""))
        ),
        "context_window_change" => format!(
            "[context window: {}]",
            e.raw
                .get("contextWindow")
                .map(|v| js_string(Some(v)))
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
        assert_eq!(s, "abred   x");
        assert_eq!(
            sanitize_block("\x1b[32m✓\x1b[39m ok\n\x1b]0;t\x07\u{7}z"),
            "✓ ok\n z"
        );
    }
}
