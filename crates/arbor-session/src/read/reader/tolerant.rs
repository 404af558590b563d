//! One line's JSON, read tolerantly: lines without a final newline, invalid
//! UTF-8 replaced, broken lines repaired, nesting too deep to keep cut.

use serde_json::{Map, Value};

/// Splits a buffer into lines, tolerating a missing final newline.
/// Returns `(line, ended_with_newline)`.
pub fn lines(buf: &[u8]) -> impl Iterator<Item = (&[u8], bool)> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let line = &rest[..i];
                rest = &rest[i + 1..];
                Some((line, true))
            }
            None => {
                let line = rest;
                rest = &[];
                Some((line, false))
            }
        }
    })
}

/// Parses one line to a JSON object; `None` when it is not one.
pub fn parse_object(line: &[u8], lossy: &mut bool) -> Option<Map<String, Value>> {
    if line.len() >= crate::lifted::LIFT_LINE {
        // A huge line: its long strings unescaped without serde_json's
        // scratch copy of each.
        if let crate::lifted::Lifted::Parsed(m) = crate::lifted::parse_lifted(line, line.len()) {
            return Some(m);
        }
    }
    let text: std::borrow::Cow<str> = match std::str::from_utf8(line) {
        Ok(s) => s.into(),
        Err(_) => {
            *lossy = true;
            String::from_utf8_lossy(line)
        }
    };
    let text = text.trim_start_matches('\u{feff}');
    match parse_json_lenient(text) {
        Some(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Deepest nesting arbor parses. JavaScript readers accept any depth; this
/// bound keeps a hostile line from exhausting memory or the stack. It is
/// the one rule of every reader: a deeper line is unreadable to the tree
/// reader and to the list-row scanner alike (see [`too_deep`]).
pub const MAX_DEPTH: usize = 20_000;

/// Whether `line` nests arrays and objects deeper than [`MAX_DEPTH`].
/// Linear, and free for lines too short to be that deep.
pub fn too_deep(line: &[u8]) -> bool {
    if line.len() <= 2 * MAX_DEPTH {
        return false;
    }
    let (mut depth, mut in_string, mut i) = (0usize, false, 0);
    while i < line.len() {
        match (in_string, line[i]) {
            (true, b'\\') => i += 1,
            (true, b'"') => in_string = false,
            (false, b'"') => in_string = true,
            (false, b'{' | b'[') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            (false, b'}' | b']') => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}

/// Rewrites what JavaScript accepts but strict JSON does not: lone UTF-16
/// surrogate escapes become U+FFFD (what the agents' own UTF-8 encoding
/// turns them into) and out-of-range numbers become the largest finite
/// double. Returns the text (`None` when unchanged) and the nesting depth.
pub fn repair_line(line: &str) -> (Option<String>, usize) {
    let b = line.as_bytes();
    let esc = |i: usize| -> Option<u16> {
        if i + 6 <= b.len() && b[i] == b'\\' && b[i + 1] == b'u' {
            u16::from_str_radix(std::str::from_utf8(&b[i + 2..i + 6]).ok()?, 16).ok()
        } else {
            None
        }
    };
    let mut out = String::with_capacity(line.len());
    let mut changed = false;
    let (mut depth, mut max_depth) = (0usize, 0usize);
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_string {
            if c == b'\\' {
                match esc(i) {
                    Some(0xd800..=0xdbff) if matches!(esc(i + 6), Some(0xdc00..=0xdfff)) => {
                        out.push_str(&line[i..i + 12]);
                        i += 12;
                    }
                    Some(0xd800..=0xdfff) => {
                        out.push_str("\\ufffd");
                        changed = true;
                        i += 6;
                    }
                    _ => {
                        // The backslash and the character it escapes, which
                        // may be multi-byte in invalid JSON (`"\é"`, or `\`
                        // before a lossy U+FFFD): slicing a fixed two bytes
                        // here used to panic on a non-char boundary.
                        out.push('\\');
                        i += 1;
                        if let Some(ch) = line[i..].chars().next() {
                            out.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                continue;
            }
            if c == b'"' {
                in_string = false;
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => {
                    depth += 1;
                    max_depth = max_depth.max(depth);
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                b'-' | b'0'..=b'9' => {
                    let end = b[i..]
                        .iter()
                        .position(|x| !matches!(x, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                        .map_or(b.len(), |p| i + p);
                    let tok = &line[i..end];
                    match tok.parse::<f64>() {
                        Ok(f) if f.is_infinite() => {
                            out.push_str(if f < 0.0 {
                                "-1.7976931348623157e308"
                            } else {
                                "1.7976931348623157e308"
                            });
                            changed = true;
                        }
                        _ => out.push_str(tok),
                    }
                    i = end;
                    continue;
                }
                _ => {}
            }
        }
        // Copy one whole character (multi-byte UTF-8 included).
        let ch = line[i..].chars().next().unwrap_or('\u{fffd}');
        out.push(ch);
        i += ch.len_utf8();
    }
    (changed.then_some(out), max_depth)
}

/// Parses JSON the way the agents' JavaScript readers accept it.
pub fn parse_json_lenient(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    let (fixed, depth) = repair_line(text);
    if depth > MAX_DEPTH {
        return None;
    }
    let text = fixed.as_deref().unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let mut v = {
        let sd = serde_stacker::Deserializer::new(&mut de);
        <Value as serde::Deserialize>::deserialize(sd).ok()?
    };
    de.end().ok()?;
    if depth > KEEP_DEPTH {
        // Everything else in arbor (clone, drop, serialize) recurses; deep
        // subtrees are cut here and freed on a big stack of their own.
        let mut cut = Vec::new();
        trim_deep(&mut v, 0, &mut cut);
        stacker::grow(64 << 20, move || drop(cut));
    }
    Some(v)
}

/// Nesting kept in memory; deeper JSON is replaced by `DEEP_PLACEHOLDER`.
pub(crate) const KEEP_DEPTH: usize = 64;
pub(crate) const DEEP_PLACEHOLDER: &str = "[arbor: JSON nested too deeply to show]";

fn trim_deep(v: &mut Value, depth: usize, cut: &mut Vec<Value>) {
    if depth >= KEEP_DEPTH && (v.is_array() || v.is_object()) {
        cut.push(std::mem::replace(v, Value::String(DEEP_PLACEHOLDER.into())));
        return;
    }
    match v {
        Value::Array(a) => a.iter_mut().for_each(|x| trim_deep(x, depth + 1, cut)),
        Value::Object(m) => m.values_mut().for_each(|x| trim_deep(x, depth + 1, cut)),
        _ => {}
    }
}
