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

/// A writer that escapes DEL and C1 controls as [`json_text`] does, as
/// the bytes go through (a JSON text of hundreds of megabytes is never
/// held to be escaped). [`C1Escaped::finish`] writes a `\xc2` held last.
pub(super) struct C1Escaped<W: std::io::Write> {
    out: W,
    /// A `\xc2` was the last byte: whether it starts a C1 control depends
    /// on the next.
    held: bool,
}

impl<W: std::io::Write> C1Escaped<W> {
    pub(super) fn new(out: W) -> Self {
        C1Escaped { out, held: false }
    }

    pub(super) fn finish(mut self) -> std::io::Result<W> {
        if std::mem::take(&mut self.held) {
            self.out.write_all(b"\xc2")?;
        }
        Ok(self.out)
    }
}

impl<W: std::io::Write> std::io::Write for C1Escaped<W> {
    fn write(&mut self, mut buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len();
        if std::mem::take(&mut self.held) {
            match buf.first() {
                Some(&b) if (0x80..=0x9f).contains(&b) => {
                    write!(self.out, "\\u{b:04x}")?;
                    buf = &buf[1..];
                }
                _ => self.out.write_all(b"\xc2")?,
            }
        }
        while let Some(i) = memchr::memchr2(0x7f, 0xc2, buf) {
            self.out.write_all(&buf[..i])?;
            match (buf[i], buf.get(i + 1)) {
                (0x7f, _) => self.out.write_all(b"\\u007f")?,
                (_, None) => self.held = true,
                (_, Some(&b)) if (0x80..=0x9f).contains(&b) => {
                    write!(self.out, "\\u{b:04x}")?;
                    buf = &buf[i + 2..];
                    continue;
                }
                _ => self.out.write_all(b"\xc2")?,
            }
            buf = &buf[i + 1..];
        }
        self.out.write_all(buf)?;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Escaped as the bytes go, whatever the pieces, as `json_text` does whole.
    #[test]
    fn c1_escaped_as_a_stream_is_json_text() {
        let v = serde_json::json!({"t": "a\u{7f}b\u{85}c\u{9f}é\u{a0}ok\u{c2}\u{80}"});
        let whole = json_text(&v);
        let bytes = v.to_string().into_bytes();
        for piece in 1..6 {
            let mut w = C1Escaped::new(Vec::new());
            for c in bytes.chunks(piece) {
                w.write_all(c).unwrap();
            }
            assert_eq!(String::from_utf8(w.finish().unwrap()).unwrap(), whole);
        }
    }
}
