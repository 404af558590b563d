//! The branch as JSON Lines: its entries' lines, copied verbatim where the
//! strict parser took them as they are.

use std::fmt::Write as _;

use serde_json::Value;

use super::walk::{block_type, has_thinking};
use super::{ExportOptions, GetEntry, RawLine};

/// Writes the branch's entries to `w`, a line at a time. `may_think(i)`:
/// whether entry `i` can hold thinking (an assistant message); the others'
/// lines are copied without being parsed.
pub(super) fn json_lines(
    branch: &[usize],
    get: GetEntry<'_, '_>,
    raw_line: RawLine<'_>,
    may_think: &dyn Fn(usize) -> bool,
    opts: ExportOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut out = String::new();
    for &i in branch {
        let e = match opts.thinking || !may_think(i) {
            true => None,
            false => match get(i) {
                Some(e) => Some(e),
                None => continue,
            },
        };
        let stripped = e.as_ref().is_some_and(|e| has_thinking(e));
        if !stripped {
            if let Some(line) = raw_line(i) {
                write_json_escaped(w, line.trim())?;
                w.write_all(b"\n")?;
                continue;
            }
        }
        let e = match e {
            Some(e) => e,
            None => match get(i) {
                Some(e) => e,
                None => continue,
            },
        };
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
            out.clear();
            push_json_escaped(&mut out, &line);
            out.push('\n');
            w.write_all(out.as_bytes())?;
        }
    }
    Ok(())
}

/// [`push_json_escaped`] straight to `w` (a long line is not copied when
/// it has nothing to escape).
fn write_json_escaped(w: &mut dyn std::io::Write, s: &str) -> std::io::Result<()> {
    if !s.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return w.write_all(s.as_bytes());
    }
    let mut out = String::with_capacity(s.len() + 16);
    push_json_escaped(&mut out, s);
    w.write_all(out.as_bytes())
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
