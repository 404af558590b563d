//! JSON and text safe to print on a terminal: DEL, C1 controls and the
//! bidirectional-text controls, which serde_json leaves raw and a terminal
//! obeys (C1) or uses to reorder what is shown (bidi: a path or command in
//! a string could read as something else), written as `\u` escapes. Inside
//! a JSON string the escape means the same character, so a program reading
//! the output sees the same value.

use serde_json::Value;

/// Whether `c` is written as an escape: DEL, a C1 control, or a bidi
/// control (the embeddings, overrides and isolates, and the marks).
fn must_escape(c: char) -> bool {
    matches!(c,
        '\u{7f}'..='\u{9f}'
        | '\u{061c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

/// The first byte of every character [`must_escape`] names: DEL, 0xc2 (C1),
/// 0xd8 (U+061C) and 0xe2 (the U+20xx controls). A buffer without them is
/// passed through without decoding.
fn may_need_escape(buf: &[u8]) -> bool {
    buf.iter().any(|b| matches!(b, 0x7f | 0xc2 | 0xd8 | 0xe2))
}

/// Rewrites the characters [`must_escape`] names as `\u` escapes; in JSON
/// text they can only occur inside strings, where the escape means the same.
pub(super) fn escape_c1(buf: Vec<u8>) -> Vec<u8> {
    if !needs_c1_escape(&buf) {
        return buf;
    }
    match String::from_utf8(buf) {
        Ok(s) => escaped(&s).into_bytes(),
        // serde_json writes UTF-8; anything else is passed on as it is.
        Err(e) => e.into_bytes(),
    }
}

/// Whether `buf` holds a character [`escape_c1`] changes.
pub(super) fn needs_c1_escape(buf: &[u8]) -> bool {
    may_need_escape(buf) && String::from_utf8_lossy(buf).chars().any(must_escape)
}

/// A writer that escapes what [`escape_c1`] escapes as the bytes go
/// through it (a character cut between two writes is held until it is
/// whole): the same bytes as `escape_c1` of everything written.
pub(super) struct C1Escaped<W: std::io::Write> {
    inner: W,
    /// The start of a character the last write cut.
    carry: Vec<u8>,
}

impl<W: std::io::Write> C1Escaped<W> {
    pub(super) fn new(inner: W) -> C1Escaped<W> {
        C1Escaped {
            inner,
            carry: Vec::new(),
        }
    }

    /// Writes what is held (bytes that never made a whole character are
    /// passed on as they are, as `escape_c1` passes on what is not UTF-8).
    pub(super) fn finish(mut self) -> std::io::Result<()> {
        let rest = std::mem::take(&mut self.carry);
        self.inner.write_all(&rest)
    }
}

impl<W: std::io::Write> std::io::Write for C1Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.carry.is_empty() && !may_need_escape(buf) {
            // No character here starts with a byte an escaped one starts with.
            return self.inner.write(buf);
        }
        self.carry.extend_from_slice(buf);
        let whole = match std::str::from_utf8(&self.carry) {
            Ok(_) => self.carry.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => {
                let raw = std::mem::take(&mut self.carry);
                self.inner.write_all(&raw)?;
                return Ok(buf.len());
            }
        };
        let text = String::from_utf8_lossy(&self.carry[..whole]);
        self.inner.write_all(escaped(&text).as_bytes())?;
        self.carry.drain(..whole);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if must_escape(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON text safe to print on a terminal (see the module docs).
pub fn json_text(v: &Value) -> String {
    let s = v.to_string();
    if !s.chars().any(must_escape) {
        return s;
    }
    escaped(&s)
}

/// Adds `"host"` (the remote a session is on, `null` for this machine's)
/// as the last member of the JSON object line that starts at `start` in
/// `buf` and ends there with `}\n`, as every session row is written.
pub(super) fn push_host(buf: &mut Vec<u8>, start: usize, host: Option<&str>) {
    if !buf[start..].ends_with(b"}\n") {
        return;
    }
    buf.truncate(buf.len() - 2);
    buf.extend_from_slice(b",\"host\":");
    match host {
        // A remote's name is `[A-Za-z0-9._-]`: nothing to escape.
        Some(h) => buf.extend_from_slice(Value::from(h).to_string().as_bytes()),
        None => buf.extend_from_slice(b"null"),
    }
    buf.extend_from_slice(b"}\n");
}

pub(super) fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bidi_and_c1_controls_are_escaped_and_mean_the_same() {
        let v = serde_json::json!({"title": "a\u{202e}gpj.exe\u{2066}\u{85}\u{7f}é"});
        let text = json_text(&v);
        assert_eq!(text, r#"{"title":"a\u202egpj.exe\u2066\u0085\u007fé"}"#);
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
        let bytes = escape_c1(v.to_string().into_bytes());
        assert_eq!(String::from_utf8(bytes).unwrap(), text);
        // Escaped as it goes, a byte at a time: the same.
        let mut streamed = Vec::new();
        let mut w = C1Escaped::new(&mut streamed);
        for b in v.to_string().as_bytes() {
            std::io::Write::write_all(&mut w, std::slice::from_ref(b)).unwrap();
        }
        w.finish().unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), text);
        assert!(!needs_c1_escape("plain — “quoted” é".as_bytes()));
    }
}
