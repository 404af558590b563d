//! A validating JSON skimmer for the list-row fast path.
//!
//! It checks that a line is a JSON object exactly as strict `serde_json`
//! would accept it (valid UTF-8 included), and captures the raw bytes of a
//! few fields on the way, without decoding anything else. Strings are
//! crossed sixteen bytes at a time (SSE2 on x86-64), so a multi-megabyte
//! tool result or base64 image costs little more than reading it.
//!
//! It is deliberately conservative: whenever the line is unusual (escaped
//! keys, a duplicated field of interest, surrogate escapes, deep nesting,
//! non-ASCII outside strings, anything it is unsure about) it answers
//! `None` and the caller falls back to the general `serde_json` path, which
//! decides. So it can only ever speed things up, never change a row.

/// Deeper than this, `serde_json` itself would refuse (its limit is 128).
const MAX_DEPTH: u32 = 100;

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\t' | b'\r')
}

/// Length of the escape sequence at `b[pos]` (a backslash), `None` when
/// invalid or a surrogate `\u` escape (those go to the general path).
#[inline(always)]
fn escape_len(b: &[u8], pos: usize) -> Option<usize> {
    match *b.get(pos + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(2),
        b'u' => {
            let hex = b.get(pos + 2..pos + 6)?;
            let mut v = 0u32;
            for &h in hex {
                v = v * 16 + (h as char).to_digit(16)?;
            }
            if (0xd800..=0xdfff).contains(&v) {
                return None;
            }
            Some(6)
        }
        _ => None,
    }
}

/// Bit masks over 16 bytes: `"`/`\`/control characters, and high-bit bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify16(b: &[u8], p: usize) -> (u32, u32) {
    use std::arch::x86_64::*;
    assert!(p + 16 <= b.len());
    // SAFETY: SSE2 is part of the x86-64 baseline, and the load reads the 16
    // bytes b[p..p + 16], which the assertion above keeps in bounds.
    unsafe {
        let x = _mm_loadu_si128(b.as_ptr().add(p) as *const __m128i);
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
        // x >= 0x20 (unsigned) <=> max(x, 0x20) == x
        let printable = _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x20)), x);
        let special = _mm_or_si128(
            _mm_or_si128(quote, backslash),
            _mm_andnot_si128(printable, _mm_set1_epi8(-1)),
        );
        (
            _mm_movemask_epi8(special) as u32,
            _mm_movemask_epi8(x) as u32,
        )
    }
}

/// Appends `s` as a JSON string literal, byte for byte as `serde_json`
/// writes it: `"` and `\\` escaped, control characters as `\b \t \n \f \r`
/// or `\u00XX`, everything else (DEL and non-ASCII included) as is.
pub fn write_json_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut p = 0;
    while p < b.len() {
        // Find the next byte to escape, sixteen at a time where possible.
        #[cfg(target_arch = "x86_64")]
        if p + 16 <= b.len() {
            let (mask, _) = classify16(b, p);
            if mask == 0 {
                p += 16;
                continue;
            }
            p += mask.trailing_zeros() as usize;
        }
        let c = b[p];
        if c != b'"' && c != b'\\' && c >= 0x20 {
            p += 1;
            continue;
        }
        out.extend_from_slice(&b[start..p]);
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x09 => out.extend_from_slice(b"\\t"),
            0x0a => out.extend_from_slice(b"\\n"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x0d => out.extend_from_slice(b"\\r"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[(c >> 4) as usize]);
                out.push(HEX[(c & 15) as usize]);
            }
        }
        p += 1;
        start = p;
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
}

/// Takes over the value of a captured key (see [`Skim::object_with`]).
pub type Nested<'n, 'a> = dyn FnMut(&[u8], &mut Skim<'a>) -> Option<Option<()>> + 'n;

/// A cursor over one line.
pub struct Skim<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Skim<'a> {
    pub fn new(b: &'a [u8]) -> Skim<'a> {
        Skim { b, i: 0 }
    }

    #[inline]
    fn ws(&mut self) {
        while self.i < self.b.len() && is_ws(self.b[self.i]) {
            self.i += 1;
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// The next byte that is not whitespace, without moving.
    pub fn peek_nonws(&self) -> Option<u8> {
        self.b[self.i..].iter().copied().find(|&b| !is_ws(b))
    }

    /// True when only whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.ws();
        self.i == self.b.len()
    }

    /// Crosses a string whose opening quote is at `self.i`, checking escapes,
    /// control characters and UTF-8. Returns whether it contained an escape.
    fn string(&mut self) -> Option<bool> {
        let b = self.b;
        let start = self.i + 1;
        let mut p = start;
        let mut escaped = false;
        // Non-ASCII bytes were seen between these positions (block bounds,
        // which never split a character: bytes around them are ASCII).
        let mut high: Option<(usize, usize)> = None;
        let mut note_high = |from: usize, to: usize| {
            high = Some(high.map_or((from, to), |(a, _)| (a, to)));
        };
        let end = 'scan: {
            #[cfg(target_arch = "x86_64")]
            while p + 16 <= b.len() {
                let (mut mask, hi) = classify16(b, p);
                if hi != 0 {
                    note_high(p, p + 16);
                }
                let mut skip_to = p;
                while mask != 0 {
                    let pos = p + mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    if pos < skip_to {
                        continue; // inside an escape sequence
                    }
                    match b[pos] {
                        b'"' => break 'scan pos,
                        b'\\' => {
                            escaped = true;
                            skip_to = pos + escape_len(b, pos)?;
                        }
                        _ => return None, // a raw control character
                    }
                }
                p = (p + 16).max(skip_to);
            }
            while p < b.len() {
                match b[p] {
                    b'"' => break 'scan p,
                    b'\\' => {
                        escaped = true;
                        p += escape_len(b, p)?;
                    }
                    c if c < 0x20 => return None,
                    c => {
                        if c >= 0x80 {
                            note_high(p, b.len());
                        }
                        p += 1;
                    }
                }
            }
            return None; // unterminated
        };
        if let Some((from, to)) = high {
            // Only the stretch with non-ASCII bytes needs a UTF-8 check.
            let from = from.max(start);
            let to = to.min(end);
            if from < to {
                std::str::from_utf8(&b[from..to]).ok()?;
            }
        }
        self.i = end + 1;
        Some(escaped)
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while self.i < self.b.len() && self.b[self.i].is_ascii_digit() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek()? {
            b'0' => {
                self.i += 1;
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return None;
                }
            }
            b'1'..=b'9' => {
                self.digits();
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return None;
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return None;
            }
        }
        Some(())
    }

    fn ident(&mut self, word: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + word.len())? == word {
            self.i += word.len();
            Some(())
        } else {
            None
        }
    }

    /// Crosses any value (after whitespace).
    pub fn value(&mut self, depth: u32) -> Option<()> {
        self.ws();
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'{' => self.object(depth + 1, &[], &mut []),
            b'[' => self.array(depth + 1),
            b't' => self.ident(b"true"),
            b'f' => self.ident(b"false"),
            b'n' => self.ident(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// The raw bytes of the next value.
    pub fn value_span(&mut self, depth: u32) -> Option<&'a [u8]> {
        self.ws();
        let start = self.i;
        self.value(depth)?;
        Some(&self.b[start..self.i])
    }

    fn array(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.i += 1; // '['
        self.ws();
        if self.peek()? == b']' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.value(depth)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Reads a key; `None` for escaped keys (the general path decodes them).
    fn key(&mut self) -> Option<&'a [u8]> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.i + 1;
        if self.string()? {
            return None;
        }
        Some(&self.b[start..self.i - 1])
    }

    /// Crosses an object, capturing the raw values of `keys`. A captured
    /// key seen twice gives `None` (serde would reject the line).
    pub fn object(
        &mut self,
        depth: u32,
        keys: &[&[u8]],
        out: &mut [Option<&'a [u8]>],
    ) -> Option<()> {
        self.object_with(depth, keys, out, &mut |_, _| None)
    }

    /// Like [`Skim::object`], but `nested(key, skim)` may cross the value of
    /// a captured key itself (returning `Some(Some(()))`, or `Some(None)` to
    /// give up): used to descend into `message` without crossing it twice.
    pub fn object_with(
        &mut self,
        depth: u32,
        keys: &[&[u8]],
        out: &mut [Option<&'a [u8]>],
        nested: &mut Nested<'_, 'a>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        if self.peek()? != b'{' {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            let key = self.key()?;
            self.ws();
            if self.peek()? != b':' {
                return None;
            }
            self.i += 1;
            self.ws();
            match keys.iter().position(|k| *k == key) {
                Some(k) => {
                    if out[k].is_some() {
                        return None;
                    }
                    let start = self.i;
                    match nested(key, self) {
                        Some(Some(())) => {}
                        Some(None) => return None,
                        None => self.value(depth)?,
                    }
                    out[k] = Some(&self.b[start..self.i]);
                }
                None => self.value(depth)?,
            }
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }
}

/// Calls `f` with the raw bytes of each element of a JSON array.
pub fn for_each_element<'a>(array: &'a [u8], mut f: impl FnMut(&'a [u8])) -> Option<()> {
    let mut sk = Skim::new(array);
    sk.ws();
    if sk.peek()? != b'[' {
        return None;
    }
    sk.i += 1;
    sk.ws();
    if sk.peek()? == b']' {
        return Some(());
    }
    loop {
        let v = sk.value_span(1)?;
        f(v);
        sk.ws();
        match sk.peek()? {
            b',' => sk.i += 1,
            b']' => return Some(()),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(s: &[u8]) -> bool {
        let mut sk = Skim::new(s);
        sk.object(0, &[], &mut []).is_some() && sk.at_end()
    }

    #[test]
    fn never_accepts_what_serde_rejects() {
        let long = format!(
            r#"{{"a":"{}\"{}\\n{}","b":[{}]}}"#,
            "x".repeat(40),
            "é".repeat(20),
            "y".repeat(33),
            "1,".repeat(30) + "2"
        );
        let cases: Vec<&[u8]> = vec![
            br#"{}"#,
            br#" {"a":1} "#,
            br#"{"a":[1,2,{"b":null}],"c":"x\ny\u00e9"}"#,
            br#"{"a":-0.5e+3,"b":true,"c":false}"#,
            br#"{"a":01}"#,
            br#"{"a":1,}"#,
            br#"{"a":[1,]}"#,
            b"{\"a\":\"tab\tinside\"}",
            b"{\"a\":\"tab\tinside a longer string of more than sixteen bytes\"}",
            br#"{"a":"\x"}"#,
            br#"{"a":"a long string that ends in a bad escape \x"}"#,
            br#"{"a":1.}"#,
            br#"{"a":.5}"#,
            br#"{"a":1e}"#,
            br#"{"a":tru}"#,
            br#"{"a" 1}"#,
            br#"{"a":1}x"#,
            br#"{"a":"unterminated}"#,
            "{\"a\":\"é ✓ 😀 and some more text to fill a block\"}".as_bytes(),
            b"{\"a\":1}\r",
            b"{\"a\":\"\xff invalid utf-8 in a string long enough\"}",
            b"{\"a\":\"\xc3\"}",
            br#"{"a":"escaped quote \" and backslash \\ at block edges \"\"\"\"\\\\"}"#,
            br#"{"a":"\u12G4 bad hex digit in a long enough string"}"#,
            long.as_bytes(),
        ];
        for c in cases {
            let serde_ok = std::str::from_utf8(c)
                .ok()
                .is_some_and(|s| serde_json::from_str::<serde_json::Value>(s).is_ok());
            let ours = valid(c);
            assert!(
                !ours || serde_ok,
                "{}: accepted but serde rejects",
                String::from_utf8_lossy(c)
            );
            assert_eq!(ours, serde_ok, "{}", String::from_utf8_lossy(c));
        }
    }

    #[test]
    fn escapes_at_every_block_offset() {
        for pad in 0..40 {
            for esc in [r#"\""#, r#"\\"#, r#"\n"#, r#"\u00e9"#, r#"\/"#] {
                let s = format!(r#"{{"a":"{}{esc}tail","b":1}}"#, "x".repeat(pad));
                assert!(valid(s.as_bytes()), "{s}");
                let bad = format!(r#"{{"a":"{}\qtail"}}"#, "x".repeat(pad));
                assert!(!valid(bad.as_bytes()), "{bad}");
                let ctrl = format!("{{\"a\":\"{}\u{1}tail\"}}", "x".repeat(pad));
                assert!(!valid(ctrl.as_bytes()), "{ctrl}");
            }
        }
    }

    #[test]
    fn captures_and_duplicates() {
        let s = br#"{"type":"message","x":{"type":1},"id":"ab"}"#;
        let mut out = [None; 2];
        let mut sk = Skim::new(s);
        sk.object(0, &[b"type", b"id"], &mut out).unwrap();
        assert_eq!(out, [Some(&br#""message""#[..]), Some(&br#""ab""#[..])]);
        let s = br#"{"type":"message","type":"x"}"#;
        let mut out = [None; 1];
        assert!(Skim::new(s).object(0, &[b"type"], &mut out).is_none());
        // Surrogates and escaped keys go to the general path.
        assert!(!valid(br#"{"a":"\ud800"}"#));
        assert!(!valid(br#"{"\u0061":1}"#));
    }

    #[test]
    fn strings_are_written_like_serde_json() {
        let mut cases: Vec<String> = vec![
            String::new(),
            "plain".into(),
            "quote \" backslash \\ slash / del \u{7f} é ✓ 😀".into(),
            (0u8..0x20).map(|c| c as char).collect(),
        ];
        for pad in 0..20 {
            cases.push(format!("{}\"{}\n\u{1}", "x".repeat(pad), "y".repeat(17)));
        }
        for c in cases {
            let mut out = Vec::new();
            write_json_str(&mut out, &c);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                serde_json::to_string(&c).unwrap()
            );
        }
    }

    #[test]
    fn elements() {
        let mut v = Vec::new();
        for_each_element(br#"[ 1, "a" ,{"b":[2]} ]"#, |e| v.push(e)).unwrap();
        assert_eq!(v, [&b"1"[..], &b"\"a\""[..], &b"{\"b\":[2]}"[..]]);
    }
}
