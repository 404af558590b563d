//! Edits the text of a JSON object line in place: the members whose value
//! changed are rewritten, members that went away are cut out, new members are
//! appended, and every other byte stays as written.
//!
//! The migration needs this: reprinting a parsed line would change what it
//! never meant to change (`0.00010439999999999999` prints as `0.0001044`,
//! `\/` as `/`, `\u00e9` as `é`, invalid UTF-8 becomes U+FFFD).
//!
//! The scanner is lenient on purpose: it only ever runs on lines that already
//! parsed as a JSON object (perhaps after the reader's repairs), so it only
//! needs to find where members start and end, and it walks nesting with a
//! counter, never recursion, so a deeply nested value costs nothing special.

use std::ops::Range;

use serde_json::{Map, Value};

use crate::reader::{parse_json_lenient, DEEP_PLACEHOLDER};

/// Why a line could not be rewritten without changing more than asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpliceError;

/// One member of an object, as byte ranges of the line.
struct Member {
    key: Option<String>,
    key_start: usize,
    value: Range<usize>,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// `b[i]` is `"`; returns the index just past the closing quote.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Returns the index just past the value starting at `b[i]`.
fn skip_value(b: &[u8], mut i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'"' => {
                        i = skip_string(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let start = i;
            while i < b.len() && !matches!(b[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                i += 1;
            }
            (i > start).then_some(i)
        }
    }
}

/// The members of the object whose `{` is at `b[open]`, and where its `}` is.
fn members(b: &[u8], open: usize) -> Option<(Vec<Member>, usize)> {
    if b.get(open) != Some(&b'{') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = skip_ws(b, open + 1);
    if b.get(i) == Some(&b'}') {
        return Some((out, i));
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_start = i;
        let key_end = skip_string(b, i)?;
        // Keys are decoded as the reader decodes them (escapes, invalid UTF-8).
        let key = match parse_json_lenient(&String::from_utf8_lossy(&b[key_start..key_end])) {
            Some(Value::String(k)) => Some(k),
            _ => None,
        };
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let value_start = skip_ws(b, i + 1);
        let value_end = skip_value(b, value_start)?;
        out.push(Member {
            key,
            key_start,
            value: value_start..value_end,
        });
        i = skip_ws(b, value_end);
        match b.get(i)? {
            b',' => i = skip_ws(b, i + 1),
            b'}' => return Some((out, i)),
            _ => return None,
        }
    }
}

fn holds_placeholder(v: &Value) -> bool {
    match v {
        Value::String(s) => s == DEEP_PLACEHOLDER,
        Value::Array(a) => a.iter().any(holds_placeholder),
        Value::Object(m) => m.values().any(holds_placeholder),
        _ => false,
    }
}

fn json_text(v: &Value) -> Result<Vec<u8>, SpliceError> {
    // A value cut by the reader (too deep) must never be printed in its place.
    if holds_placeholder(v) {
        return Err(SpliceError);
    }
    serde_json::to_vec(v).map_err(|_| SpliceError)
}

/// The edits that turn the object at `b[open]` (read as `old`) into `new`.
fn object_edits(
    b: &[u8],
    open: usize,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    edits: &mut Vec<(Range<usize>, Vec<u8>)>,
) -> Result<(), SpliceError> {
    let (ms, close) = members(b, open).ok_or(SpliceError)?;
    let mut removed = vec![false; ms.len()];
    for (i, m) in ms.iter().enumerate() {
        let Some(key) = &m.key else {
            // A key the reader could not decode cannot be one migration touches.
            continue;
        };
        match (old.get(key), new.get(key)) {
            (Some(o), Some(n)) if o == n => {}
            (Some(Value::Object(o)), Some(Value::Object(n))) if b[m.value.start] == b'{' => {
                object_edits(b, m.value.start, o, n, edits)?;
            }
            (_, Some(n)) => edits.push((m.value.clone(), json_text(n)?)),
            (_, None) => removed[i] = true,
        }
    }
    // Member i > 0 owns its separator: `,` and blanks after member i - 1.
    for (i, m) in ms.iter().enumerate() {
        if removed[i] {
            let from = if i == 0 {
                m.key_start
            } else {
                ms[i - 1].value.end
            };
            edits.push((from..m.value.end, Vec::new()));
        }
    }
    let first_kept = removed.iter().position(|r| !r);
    if let (true, Some(k)) = (removed.first() == Some(&true), first_kept) {
        // The first kept member now opens the object: drop its separator.
        edits.push((ms[k - 1].value.end..ms[k].key_start, Vec::new()));
    }
    let present: Vec<&str> = ms.iter().filter_map(|m| m.key.as_deref()).collect();
    let mut added = Vec::new();
    let mut any_kept = first_kept.is_some();
    for (k, v) in new {
        if old.contains_key(k) || present.contains(&k.as_str()) {
            continue;
        }
        if any_kept {
            added.push(b',');
        }
        added.extend(json_text(&Value::String(k.clone()))?);
        added.push(b':');
        added.extend(json_text(v)?);
        any_kept = true;
    }
    if !added.is_empty() {
        let at = match removed.iter().rposition(|r| !r) {
            Some(last) => ms[last].value.end,
            None => ms.first().map_or(close, |m| m.key_start),
        };
        edits.push((at..at, added));
    }
    Ok(())
}

/// Rewrites the object line `line` (which the reader parsed as `old`) so it
/// reads as `new`, changing only the members that differ.
pub(crate) fn splice_object_line(
    line: &[u8],
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) -> Result<Vec<u8>, SpliceError> {
    let bom = if line.starts_with("\u{feff}".as_bytes()) {
        3
    } else {
        0
    };
    let open = skip_ws(line, bom);
    let mut edits = Vec::new();
    object_edits(line, open, old, new, &mut edits)?;
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut out = Vec::with_capacity(line.len() + 64);
    let mut at = 0;
    for (range, text) in edits {
        if range.start < at {
            return Err(SpliceError);
        }
        out.extend_from_slice(&line[at..range.start]);
        out.extend_from_slice(&text);
        at = range.end;
    }
    out.extend_from_slice(&line[at..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(s: &str) -> Map<String, Value> {
        match parse_json_lenient(s) {
            Some(Value::Object(m)) => m,
            _ => panic!("not an object: {s}"),
        }
    }

    fn edit(line: &str, f: impl FnOnce(&mut Map<String, Value>)) -> String {
        let old = obj(line);
        let mut new = old.clone();
        f(&mut new);
        let out = splice_object_line(line.as_bytes(), &old, &new).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(obj(&out), new, "{out}");
        out
    }

    #[test]
    fn untouched_text_stays_as_written() {
        let line =
            r#"{"type":"message", "cost" : 0.00010439999999999999,"p":"a\/b\u00e9","n":1e400}"#;
        let out = edit(line, |m| {
            m.insert("id".into(), "abcd1234".into());
            m.insert("parentId".into(), Value::Null);
        });
        assert_eq!(
            out,
            r#"{"type":"message", "cost" : 0.00010439999999999999,"p":"a\/b\u00e9","n":1e400,"id":"abcd1234","parentId":null}"#
        );
    }

    #[test]
    fn replaces_removes_and_recurses() {
        let line = r#"{"a":1,"firstKeptEntryIndex":3,"message":{"role":"hookMessage","x":1.50},"z":[1, {"b":2}]}"#;
        let out = edit(line, |m| {
            m.shift_remove("firstKeptEntryIndex");
            m.insert("firstKeptEntryId".into(), "beef0001".into());
            m["message"]["role"] = "custom".into();
            m.insert("a".into(), 2.into());
        });
        assert_eq!(
            out,
            r#"{"a":2,"message":{"role":"custom","x":1.50},"z":[1, {"b":2}],"firstKeptEntryId":"beef0001"}"#
        );
    }

    #[test]
    fn removing_leading_members_keeps_the_object_valid() {
        assert_eq!(
            edit(r#"{ "a":1 , "b":2 ,"c":3}"#, |m| {
                m.shift_remove("a");
                m.shift_remove("b");
            }),
            r#"{ "c":3}"#
        );
        assert_eq!(
            edit(r#"{"a":1,"b":2}"#, |m| {
                m.shift_remove("a");
                m.shift_remove("b");
                m.insert("c".into(), 3.into());
            }),
            r#"{"c":3}"#
        );
        assert_eq!(
            edit("{ }", |m| {
                m.insert("c".into(), 3.into());
            }),
            r#"{ "c":3}"#
        );
    }

    #[test]
    fn escaped_keys_bom_and_invalid_utf8() {
        let mut line = b"\xef\xbb\xbf{\"t\\u0079pe\":\"x\",\"s\":\"\xff\"}\r".to_vec();
        let mut lossy = false;
        let old = crate::reader::parse_object(&line, &mut lossy).unwrap();
        assert!(lossy);
        let mut new = old.clone();
        new.insert("type".into(), "y".into());
        new.insert("v".into(), 3.into());
        let out = splice_object_line(&line, &old, &new).unwrap();
        line = b"\xef\xbb\xbf{\"t\\u0079pe\":\"y\",\"s\":\"\xff\",\"v\":3}\r".to_vec();
        assert_eq!(out, line);
    }
}
