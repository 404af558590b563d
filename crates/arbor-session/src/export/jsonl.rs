//! The branch as JSON Lines: its entries' lines, copied verbatim where the
//! strict parser took them as they are.

use std::fmt::Write as _;

use serde_json::Value;

use super::walk::{block_type, has_thinking};
use super::{ExportOptions, GetEntry};

pub(super) fn json_lines<'e>(
    branch: &[usize],
    get: GetEntry<'_, 'e>,
    raw_line: &dyn Fn(usize) -> Option<&'e str>,
    opts: ExportOptions,
    size: usize,
) -> String {
    let mut out = String::with_capacity(size);
    for &i in branch {
        let Some(e) = get(i) else {
            continue;
        };
        let stripped = !opts.thinking && has_thinking(&e);
        if !stripped {
            if let Some(line) = raw_line(i) {
                push_json_escaped(&mut out, line.trim());
                out.push('\n');
                continue;
            }
        }
        let line = if stripped {
            let mut raw = e.raw.clone();
            if let Some(Value::Array(blocks)) =
                raw.get_mut("message").and_then(|m| m.get_mut("content"))
            {
                blocks.retain(|b| block_type(b) != "thinking");
            }
            serde_json::to_string(&raw)
        } else {
            serde_json::to_string(&*e.raw)
        };
        if let Ok(line) = line {
            push_json_escaped(&mut out, &line);
            out.push('\n');
        }
    }
    out
}

/// DEL and C1 controls, which serde_json leaves raw (and some terminals
/// obey), as `\u` escapes; they only occur inside strings, where the escape
/// means the same.
fn push_json_escaped(out: &mut String, s: &str) {
    if !s.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
}
