//! Raw JSON text of a captured field, decoded only as far as a row needs it.

use serde_json::value::RawValue;
use serde_json::Value;

use crate::jsonscan::{for_each_element, Skim};
use crate::reader::parse_json_lenient;

use super::probe::BlockProbe;
use super::LAST_REPLY_CHARS;

/// Decodes a JSON string literal, tolerating lone surrogate escapes.
fn decode_str(g: &str) -> Option<String> {
    match serde_json::from_str::<String>(g) {
        Ok(s) => Some(s),
        Err(_) => match parse_json_lenient(g) {
            Some(Value::String(s)) => Some(s),
            _ => None,
        },
    }
}

pub(super) fn raw_str(r: Option<&str>) -> Option<String> {
    let r = r?;
    if !r.starts_with('"') {
        return None;
    }
    if !r.contains('\\') {
        // Already validated JSON without escapes: the text between the quotes.
        return Some(r[1..r.len() - 1].to_string());
    }
    decode_str(r)
}

pub(super) fn raw_is(r: Option<&str>, lit: &str) -> bool {
    match r {
        Some(g) => {
            if !g.starts_with('"') {
                return false;
            }
            // Fast path for the unescaped literal. An escaped spelling
            // (`"m\u0065ssage"`) is the same JSON string and must match too,
            // or the row's counts would differ from the full reader's.
            if g.contains('\\') {
                decode_str(g).is_some_and(|s| s == lit)
            } else {
                g.len() == lit.len() + 2 && &g[1..g.len() - 1] == lit
            }
        }
        None => false,
    }
}

pub(super) fn raw_id(r: Option<&str>) -> Option<String> {
    let g = r?;
    if g.starts_with('"') {
        decode_str(g)
    } else if g == "null" {
        None
    } else {
        Some(g.to_string())
    }
}

/// The raw JSON string literals of a `content` value's text: the string
/// itself, or each text block's `text` in order (non-strings included: the
/// caller decodes and skips them).
fn text_literals(g: &str) -> Vec<&str> {
    if g.starts_with('"') {
        return vec![g];
    }
    if !g.starts_with('[') {
        return Vec::new();
    }
    let mut out = Vec::new();
    let fast = for_each_element(g, |b| {
        if !b.starts_with('{') {
            return;
        }
        let mut f: [Option<&str>; 2] = [None; 2];
        // A block with a duplicated `type`/`text` fails in serde too: skipped.
        if Skim::new(b)
            .object(1, &[b"type", b"text"], &mut f)
            .is_none()
        {
            return;
        }
        if f[0] != Some("\"text\"") {
            return;
        }
        if let Some(t) = f[1] {
            out.push(t);
        }
    });
    if fast.is_some() {
        return out;
    }
    // Content the skimmer refused (surrogate escapes, deep nesting): serde decides.
    out.clear();
    let Ok(blocks) = serde_json::from_str::<Vec<&RawValue>>(g) else {
        return out;
    };
    for b in blocks {
        let Ok(bp) = serde_json::from_str::<BlockProbe>(b.get()) else {
            continue;
        };
        if !raw_is(bp.ty.map(RawValue::get), "text") {
            continue;
        }
        if let Some(t) = bp.text {
            out.push(t.get());
        }
    }
    out
}

/// Text of a `content` value: a string, or its text blocks joined by a space.
pub(super) fn raw_content_text(r: Option<&str>) -> String {
    let Some(g) = r else {
        return String::new();
    };
    let mut out = String::new();
    let mut first = true;
    for lit in text_literals(g) {
        if let Some(t) = raw_str(Some(lit)) {
            if !first {
                out.push(' ');
            }
            out.push_str(&t);
            first = false;
        }
    }
    out
}

/// The first non-blank line of [`raw_content_text`]'s text, trimmed and cut
/// to [`LAST_REPLY_CHARS`] characters. Only the text up to that line is
/// decoded: a reply is mostly lines after its first.
pub(super) fn raw_first_line(r: Option<&str>) -> Option<String> {
    let g = r?;
    let mut cur = String::new();
    let mut any = false;
    for lit in text_literals(g) {
        if !lit.starts_with('"') {
            continue;
        }
        // Blocks are joined by a space, as in `raw_content_text`.
        if any {
            cur.push(' ');
        }
        any = true;
        let inner = &lit[1..lit.len() - 1];
        // Cut at each `\n` escape (a backslash starts an escape: the byte
        // after it is the escape's letter, never another escape's start).
        let (mut start, mut i) = (0, 0);
        let bytes = inner.as_bytes();
        loop {
            let cut = memchr::memchr(b'\\', &bytes[i..]).map(|p| i + p);
            let newline = cut.is_some_and(|p| bytes.get(p + 1) == Some(&b'n'));
            if cut.is_some() && !newline {
                i = cut.unwrap_or_default() + 2;
                continue;
            }
            let end = cut.unwrap_or(bytes.len());
            let piece = &inner[start..end];
            let decoded = if piece.contains('\\') {
                decode_str(&format!("\"{piece}\"")).unwrap_or_default()
            } else {
                piece.to_string()
            };
            // `\u000a` is a newline too.
            let mut parts = decoded.split('\n');
            if let Some(p) = parts.next() {
                cur.push_str(p);
            }
            for p in parts {
                if let Some(line) = kept_line(&cur) {
                    return Some(line);
                }
                cur.clear();
                cur.push_str(p);
            }
            if !newline {
                break;
            }
            if let Some(line) = kept_line(&cur) {
                return Some(line);
            }
            cur.clear();
            start = end + 2;
            i = start;
        }
    }
    kept_line(&cur)
}

/// A line as a row keeps it: trimmed, cut; `None` when blank.
fn kept_line(line: &str) -> Option<String> {
    let t = line.trim();
    (!t.is_empty()).then(|| t.chars().take(LAST_REPLY_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `raw_first_line` means, from the whole decoded text.
    fn first_line_reference(content: &str) -> Option<String> {
        let text = raw_content_text(Some(content));
        text.split('\n').find_map(kept_line)
    }

    #[test]
    fn first_line_decodes_only_what_it_needs_and_agrees_with_the_text() {
        let long = "é".repeat(LAST_REPLY_CHARS + 10);
        let cases = [
            r#""Done.\nThe rest""#.to_string(),
            r#""\n\n  \t\n  Second \"quoted\"  \nthird""#.to_string(),
            r#""a backslash and n: \\n stays on the line\nnext""#.to_string(),
            r#""\\\nafter an escaped backslash""#.to_string(),
            r#""unicode newline\u000Anext""#.to_string(),
            r#""crlf line\r\nnext""#.to_string(),
            r#""\ud83d\ude00 pair\nx""#.to_string(),
            r#""lone \ud800 surrogate\nx""#.to_string(),
            r#""   ""#.to_string(),
            r#""""#.to_string(),
            format!(r#""{long}\nx""#),
            r#"[{"type":"thinking","thinking":"hmm\nno"},{"type":"text","text":"\n"},{"type":"text","text":"joined"},{"type":"text","text":"by a space\nnot this"}]"#.to_string(),
            r#"[{"type":"toolCall","name":"bash","arguments":{"command":"ls"}}]"#.to_string(),
            r#"[{"type":"text","text":7},{"type":"text","text":"after a number"}]"#.to_string(),
            r#"[{"type":"text","text":"a\ud800"},{"type":"text","text":"b\nc"}]"#.to_string(),
            r#"[]"#.to_string(),
            r#"{"text":"not content"}"#.to_string(),
        ];
        for c in &cases {
            assert_eq!(raw_first_line(Some(c)), first_line_reference(c), "{c}");
        }
        assert_eq!(
            raw_first_line(Some(&cases[1])).as_deref(),
            Some("Second \"quoted\"")
        );
        assert_eq!(
            raw_first_line(Some(&cases[11])).as_deref(),
            Some("joined by a space")
        );
        assert_eq!(
            raw_first_line(Some(&cases[10])).map(|l| l.chars().count()),
            Some(LAST_REPLY_CHARS)
        );
    }
}
