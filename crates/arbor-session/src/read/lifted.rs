//! One huge line parsed without holding it three times over. Parsing a line
//! of 200 MB held its bytes, serde_json's scratch for a string with escapes
//! and the string. Here the line's bytes are read a block at a time; each
//! long string value is unescaped into its own `String` as its bytes go
//! by (a block of escaped text at a time, by serde_json itself, so the text
//! is exactly what the whole parse gives), and the rest of the line — short,
//! with a placeholder where each long string was — is parsed as usual, the
//! strings then put back in their places. What is held is the strings and a
//! block; the line itself only when the caller has it already.
//!
//! Only what the strict parse takes is done so: anything else (invalid
//! UTF-8, a byte-order mark, an escape the strict parser refuses, a long
//! key, a line that is not an object) answers [`Lifted::Fallback`], and the
//! caller parses the line as before.

use serde_json::{Map, Value};

/// Lines at least this long are parsed with their long strings lifted.
pub const LIFT_LINE: usize = 8 << 20;
/// Strings whose escaped text is at least this long are lifted.
const LIFT_STRING: usize = 64 << 10;
/// How much escaped text is unescaped at a time, and the read block.
const BLOCK: usize = 1 << 20;
/// What a lifted string leaves in the short line: a text no session writes
/// (a NUL first), and its number.
const MARK: &str = "\u{0}arbor-lifted:";

/// [`Scan::escape`] right after a backslash.
const AFTER_BACKSLASH: u8 = 9;

/// The outcome of a lifted parse.
pub enum Lifted {
    /// The line's object (`None`: the line is not an object).
    Parsed(Map<String, Value>),
    /// Not a line this parse takes: parse it the ordinary way.
    Fallback,
}

/// Reads into a buffer from an offset of the line; returns how many bytes
/// it read (0 at the line's end or on an error).
pub trait LineBytes {
    fn read_at(&self, buf: &mut [u8], off: usize) -> usize;
}

impl LineBytes for [u8] {
    fn read_at(&self, buf: &mut [u8], off: usize) -> usize {
        let rest = self.get(off..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        n
    }
}

/// The line `start..end` of an open file (read where it is, without moving
/// the file's position).
pub struct FileLine<'f> {
    pub file: &'f std::fs::File,
    pub start: u64,
    pub end: u64,
}

impl LineBytes for FileLine<'_> {
    fn read_at(&self, buf: &mut [u8], off: usize) -> usize {
        let at = self.start + off as u64;
        let want = buf.len().min(self.end.saturating_sub(at) as usize);
        crate::source::read_at(self.file, &mut buf[..want], at).unwrap_or(0)
    }
}

impl FileLine<'_> {
    /// The line's object: lifted (see [`parse_lifted`]), or else its bytes
    /// read whole and parsed the ordinary way.
    pub fn parse(&self) -> Option<Map<String, Value>> {
        let len = self.end.saturating_sub(self.start) as usize;
        if let Lifted::Parsed(m) = parse_lifted(self, len) {
            return Some(m);
        }
        let mut bytes = vec![0u8; len];
        let n = self.read_at(&mut bytes, 0);
        bytes.truncate(n);
        crate::reader::parse_object(&bytes, &mut false)
    }
}

/// Parses the `len` bytes `line` reads, its long strings lifted.
pub fn parse_lifted(line: &(impl LineBytes + ?Sized), len: usize) -> Lifted {
    let mut scan = Scan::default();
    let mut block = vec![0u8; BLOCK.min(len.max(1))];
    let mut off = 0;
    while off < len {
        let want = block.len().min(len - off);
        let n = line.read_at(&mut block[..want], off);
        if n == 0 {
            return Lifted::Fallback;
        }
        if off == 0 && block.first() == Some(&0xef) {
            // A byte-order mark: the ordinary parse trims it.
            return Lifted::Fallback;
        }
        if scan.feed(&block[..n], len - off).is_none() {
            return Lifted::Fallback;
        }
        off += n;
    }
    drop(block);
    scan.finish().map_or(Lifted::Fallback, Lifted::Parsed)
}

/// Where the scan is in the line.
#[derive(Default)]
struct Scan {
    /// The line without its long strings' text.
    short: Vec<u8>,
    /// Inside a string: where its opening quote is in `short`.
    string_at: Option<usize>,
    /// The bytes still part of an escape: after a backslash,
    /// [`AFTER_BACKSLASH`]; after `\u`, the hex digits left.
    escape: u8,
    /// The string being lifted: its text so far, and its escaped bytes not
    /// yet unescaped.
    lifting: Option<(String, Vec<u8>)>,
    lifted: Vec<Option<String>>,
    /// `"` + escaped text + `"`, for serde_json.
    quoted: String,
}

impl Scan {
    /// Takes in a block of the line; `left` is the bytes of the line from
    /// this block on. `None`: not a line this parse takes.
    fn feed(&mut self, b: &[u8], left: usize) -> Option<()> {
        let mut i = 0;
        while i < b.len() {
            let Some(start) = self.string_at else {
                match memchr::memchr(b'"', &b[i..]) {
                    Some(p) => {
                        self.short.extend_from_slice(&b[i..=i + p]);
                        self.string_at = Some(self.short.len() - 1);
                        i += p + 1;
                    }
                    None => {
                        self.short.extend_from_slice(&b[i..]);
                        i = b.len();
                    }
                }
                continue;
            };
            if self.escape > 0 {
                self.escape = match (self.escape, b[i]) {
                    // The byte after the backslash: `\u` has four hex digits.
                    (AFTER_BACKSLASH, b'u') => 4,
                    (AFTER_BACKSLASH, _) => 0,
                    (n, _) => n - 1,
                };
                self.text(&b[i..=i], false)?;
                i += 1;
                continue;
            }
            match memchr::memchr2(b'"', b'\\', &b[i..]) {
                Some(p) => {
                    self.text(&b[i..i + p], true)?;
                    if b[i + p] == b'"' {
                        self.end_string(start)?;
                        self.short.push(b'"');
                    } else {
                        self.text(b"\\", false)?;
                        self.escape = AFTER_BACKSLASH;
                    }
                    i += p + 1;
                }
                None => {
                    self.text(&b[i..], true)?;
                    i = b.len();
                }
            }
            if self.lifting.is_none() && self.short.len() - start > LIFT_STRING {
                self.start_lifting(start, left.saturating_sub(i))?;
            }
        }
        Some(())
    }

    /// Escaped text of the current string; `plain` when it holds no
    /// escape (a place to cut it for unescaping).
    fn text(&mut self, t: &[u8], plain: bool) -> Option<()> {
        let Some((text, pending)) = &mut self.lifting else {
            self.short.extend_from_slice(t);
            return Some(());
        };
        if !plain || pending.len() + t.len() < BLOCK {
            pending.extend_from_slice(t);
            return Some(());
        }
        // Cut at the last character boundary of this plain run: never in
        // an escape, nor between the two halves of a surrogate pair (the
        // byte after the cut is not a backslash).
        let Some(cut) = (0..t.len()).rev().find(|&j| t[j] & 0xc0 != 0x80) else {
            pending.extend_from_slice(t);
            return Some(());
        };
        pending.extend_from_slice(&t[..cut]);
        unescape_into(pending, &mut self.quoted, text)?;
        pending.clear();
        pending.extend_from_slice(&t[cut..]);
        Some(())
    }

    /// The current string is long: its text so far leaves `short` and is
    /// unescaped from now on into a string of its own, which may grow to
    /// `left` more bytes (reserved once: a doubling `String` would hold it
    /// one and a half times while it copies).
    fn start_lifting(&mut self, start: usize, left: usize) -> Option<()> {
        let pending = self.short.split_off(start + 1);
        let mut text = String::new();
        text.try_reserve_exact(pending.len() + left).ok()?;
        self.lifting = Some((text, pending));
        Some(())
    }

    /// The current string ends (its closing quote is next).
    fn end_string(&mut self, start: usize) -> Option<()> {
        self.string_at = None;
        let Some((mut text, pending)) = self.lifting.take() else {
            return Some(());
        };
        unescape_into(&pending, &mut self.quoted, &mut text)?;
        self.short.truncate(start + 1);
        // `\u0000` is how JSON writes the NUL that starts the mark.
        self.short.extend_from_slice(b"\\u0000arbor-lifted:");
        self.short
            .extend_from_slice(self.lifted.len().to_string().as_bytes());
        self.lifted.push(Some(text));
        Some(())
    }

    /// The object: the short line parsed, each lifted string in its place.
    fn finish(mut self) -> Option<Map<String, Value>> {
        if self.string_at.is_some() || self.lifted.is_empty() {
            // A line cut inside a string, or no long string: the ordinary
            // parse says what it is.
            return None;
        }
        let short = std::str::from_utf8(&self.short).ok()?;
        let mut v: Value = serde_json::from_str(short).ok()?;
        drop(std::mem::take(&mut self.short));
        put_back(&mut v, &mut self.lifted)?;
        if self.lifted.iter().any(Option::is_some) {
            // A mark was a key, not a value.
            return None;
        }
        match v {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
}

/// Appends the text of escaped JSON string content `escaped` to `out`,
/// as serde_json reads it.
fn unescape_into(escaped: &[u8], quoted: &mut String, out: &mut String) -> Option<()> {
    quoted.clear();
    quoted.push('"');
    quoted.push_str(std::str::from_utf8(escaped).ok()?);
    quoted.push('"');
    let s: std::borrow::Cow<str> = serde_json::from_str(quoted).ok()?;
    out.push_str(&s);
    Some(())
}

/// Replaces each mark in `v` by its lifted string; `None` when a mark is
/// not one this parse made (a string of the line that looks like one).
fn put_back(v: &mut Value, lifted: &mut [Option<String>]) -> Option<()> {
    match v {
        Value::String(s) => {
            if let Some(n) = s.strip_prefix(MARK) {
                let n: usize = n.parse().ok()?;
                *s = lifted.get_mut(n)?.take()?;
            }
        }
        Value::Array(a) => {
            for x in a {
                put_back(x, lifted)?;
            }
        }
        Value::Object(m) => {
            for x in m.values_mut() {
                put_back(x, lifted)?;
            }
        }
        _ => {}
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(line: &str) -> Option<Map<String, Value>> {
        match serde_json::from_str::<Value>(line).ok()? {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    fn lifted(line: &str) -> Option<Map<String, Value>> {
        match parse_lifted(line.as_bytes(), line.len()) {
            Lifted::Parsed(m) => Some(m),
            Lifted::Fallback => None,
        }
    }

    /// A long text with every kind of escape, surrogate pairs and
    /// multi-byte characters, at every offset against the block borders.
    fn long_text(n: usize) -> String {
        let piece = r#"line \"quoted\" \\ back\tslash é 中 \ud83d\ude00 \u00e9 \n"#;
        piece.repeat(n / piece.len() + 1)
    }

    #[test]
    fn a_line_with_long_strings_parses_as_the_whole_parse_does() {
        for n in [LIFT_STRING + 1, BLOCK - 3, BLOCK + 7, 3 * BLOCK + 11] {
            let t = long_text(n);
            let line = format!(
                r#"{{"type":"message","id":"a","message":{{"content":[{{"type":"text","text":"{t}"}}],"x":"{t}"}},"n":[1,2.5,null,true,"s"]}}"#
            );
            assert_eq!(lifted(&line), strict(&line), "{n}");
            assert!(lifted(&line).is_some());
        }
    }

    #[test]
    fn what_the_strict_parse_refuses_falls_back() {
        let t = long_text(LIFT_STRING * 2);
        for line in [
            // A lone surrogate (the lenient parse repairs it).
            format!(r#"{{"a":"{t}\ud800 x"}}"#),
            // A long key.
            format!(r#"{{"{t}":1}}"#),
            // A line cut short.
            format!(r#"{{"a":"{t}"#),
            // Not an object.
            format!(r#"["{t}"]"#),
            // A string of the line that looks like a mark.
            format!(r#"{{"a":"{t}","b":"\u0000arbor-lifted:0"}}"#),
            // A raw control character in the text.
            format!("{{\"a\":\"{t}\u{1}\"}}"),
            // A byte-order mark.
            format!("\u{feff}{{\"a\":\"{t}\"}}"),
        ] {
            assert!(lifted(&line).is_none(), "{}", &line[line.len() - 40..]);
        }
    }
}
