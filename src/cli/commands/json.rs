//! JSON and text safe to print on a terminal: DEL and C1 controls, which
//! serde_json leaves raw and some terminals obey, written as escapes.

use serde_json::Value;

/// Rewrites DEL and C1 controls (raw in JSON strings) as `\u` escapes; they
/// can only occur inside strings, where the escape means the same.
pub(super) fn escape_c1(buf: Vec<u8>) -> Vec<u8> {
    if !needs_c1_escape(&buf) {
        return buf;
    }
    let mut out = Vec::with_capacity(buf.len() + 16);
    let mut i = 0;
    while i < buf.len() {
        let b = buf[i];
        if b == 0x7f {
            out.extend_from_slice(b"\\u007f");
        } else if b == 0xc2 && buf.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)) {
            out.extend_from_slice(format!("\\u{:04x}", buf[i + 1]).as_bytes());
            i += 1;
        } else {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// Whether `buf` holds DEL or a C1 control ([`escape_c1`] changes it).
pub(super) fn needs_c1_escape(buf: &[u8]) -> bool {
    memchr::memchr(0x7f, buf).is_some()
        || memchr::memmem::find_iter(buf, b"\xc2")
            .any(|i| buf.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)))
}

/// JSON text safe to print on a terminal: DEL and C1 controls (which
/// serde_json leaves raw and some terminals obey) are written as escapes.
pub fn json_text(v: &Value) -> String {
    let s = v.to_string();
    if !s.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

pub(super) fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
