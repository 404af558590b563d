//! A validating JSON skimmer for the list-row fast path.
//!
//! It checks that a line is a JSON object exactly as strict `serde_json`
//! would accept it (the caller checks UTF-8 for the whole line: [`Skim`]
//! takes a `str`), and captures the raw text of a few fields on the way,
//! without decoding anything else. Strings are crossed 64 bytes at a time
//! (SSE2 on x86-64; escapes found by mask arithmetic, not byte by byte), so
//! a multi-megabyte tool result or base64 image costs little more than
//! reading it.
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

/// Bit mask over 16 bytes: `"`, `\` and control characters.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn classify16(b: &[u8], p: usize) -> u32 {
    use std::arch::x86_64::*;
    assert!(p + 16 <= b.len());
    // SAFETY: SSE2 is part of the x86-64 baseline, and the load reads the 16
    // bytes b[p..p + 16], which the assertion above keeps in bounds.
    unsafe {
        let x = _mm_loadu_si128(b.as_ptr().add(p) as *const __m128i);
        let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
        // x < 0x20 (unsigned) <=> min(x, 0x1f) == x
        let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
    }
}

/// The characters that may follow a backslash, `u` aside.
#[cfg(target_arch = "x86_64")]
const SIMPLE_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let ok = b"\"\\/bfnrt";
    let mut i = 0;
    while i < ok.len() {
        t[ok[i] as usize] = true;
        i += 1;
    }
    t
};

/// Bit masks over 64 bytes (bit i is byte p + i).
#[cfg(target_arch = "x86_64")]
struct Block {
    quote: u64,
    backslash: u64,
    control: u64,
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify64(b: &[u8], p: usize) -> Block {
    use std::arch::x86_64::*;
    assert!(p + 64 <= b.len());
    let mut m = Block {
        quote: 0,
        backslash: 0,
        control: 0,
    };
    for k in 0..4 {
        // SAFETY: SSE2 is part of the x86-64 baseline, and the load reads
        // b[p + 16k..p + 16k + 16], inside b[p..p + 64] (asserted above).
        unsafe {
            let x = _mm_loadu_si128(b.as_ptr().add(p + 16 * k) as *const __m128i);
            let quote = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
            // x < 0x20 (unsigned) <=> min(x, 0x1f) == x
            let control = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(0x1f)), x);
            m.quote |= (_mm_movemask_epi8(quote) as u16 as u64) << (16 * k);
            m.backslash |= (_mm_movemask_epi8(backslash) as u16 as u64) << (16 * k);
            m.control |= (_mm_movemask_epi8(control) as u16 as u64) << (16 * k);
        }
    }
    m
}

/// The bytes escaped by `backslash` (a mask with no run of backslashes
/// reaching bit 63): the byte after each run of odd length. Adding a run's
/// first bit to the mask carries through the run and lands just past it,
/// and the run's length is odd exactly when that end has the other parity
/// than its start.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn escaped_by(backslash: u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let starts = backslash & !(backslash << 1);
    let ends_of_even = backslash.wrapping_add(starts & EVEN) & !backslash;
    let ends_of_odd = backslash.wrapping_add(starts & !EVEN) & !backslash;
    (ends_of_even & !EVEN) | (ends_of_odd & EVEN)
}

/// Takes over the value of a captured key (see [`Skim::object_with`]).
pub type Nested<'n, 'a> = dyn FnMut(&[u8], &mut Skim<'a>) -> Option<Option<()>> + 'n;

/// A cursor over one line. It takes a `str`, so UTF-8 is checked once for
/// the whole line (a fast SIMD pass), not string by string.
pub struct Skim<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
    /// A number that might not fit a double (see [`Skim::saw_big_number`]).
    big_number: bool,
}

impl<'a> Skim<'a> {
    pub fn new(s: &'a str) -> Skim<'a> {
        Skim {
            s,
            b: s.as_bytes(),
            i: 0,
            big_number: false,
        }
    }

    /// Whether a number crossed so far may overflow a double (`1e400`):
    /// strict `serde_json` refuses such a line and the lenient reader
    /// rewrites it, so a caller that must agree with the reader falls back
    /// to it. Conservative: any exponent of three digits or more (not
    /// negative), or more than 300 digits before the point.
    pub fn saw_big_number(&self) -> bool {
        self.big_number
    }

    /// The position in the line (a byte offset).
    pub fn pos(&self) -> usize {
        self.i
    }

    /// `s[from..self.i]`: spans start and end on ASCII bytes, so on
    /// character boundaries.
    fn span(&self, from: usize) -> Option<&'a str> {
        self.s.get(from..self.i)
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

    /// Crosses a string whose opening quote is at `self.i`, checking escapes
    /// and control characters (UTF-8 was checked for the whole line).
    /// Returns whether it contained an escape.
    #[inline(always)]
    fn string(&mut self) -> Option<bool> {
        // Most strings are keys, ids and timestamps: one 32-byte look,
        // inlined into the caller, settles them.
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.i + 1;
            if p + 32 <= self.b.len() {
                let mask = classify16(self.b, p) | (classify16(self.b, p + 16) << 16);
                if mask != 0 {
                    let q = p + mask.trailing_zeros() as usize;
                    if self.b[q] == b'"' {
                        self.i = q + 1;
                        return Some(false);
                    }
                }
            }
        }
        self.long_string()
    }

    /// [`Skim::string`] for strings that need more than one look.
    #[inline(never)]
    fn long_string(&mut self) -> Option<bool> {
        let b = self.b;
        let mut p = self.i + 1;
        let mut escaped = false;
        #[cfg(target_arch = "x86_64")]
        {
            while p + 64 <= b.len() {
                let m = classify64(b, p);
                let mut backslash = m.backslash;
                let mut len = 64;
                if backslash >> 63 == 1 {
                    // A run of backslashes reaches the block's end: whether
                    // it escapes what follows is decided in the next block.
                    let run = backslash.leading_ones();
                    if run == 64 {
                        break;
                    }
                    len = 64 - run;
                    backslash &= (1u64 << len) - 1;
                }
                let within = if len == 64 { !0 } else { (1u64 << len) - 1 };
                let targets = escaped_by(backslash) & within;
                let quotes = m.quote & !targets & within;
                let before = match quotes.trailing_zeros() {
                    64 => within,
                    stop => (1u64 << stop) - 1,
                };
                if m.control & before != 0 {
                    return None;
                }
                // `\\` pairs escape nothing the masks below see.
                escaped |= backslash & before != 0;
                let mut e = targets & before;
                if e != 0 {
                    escaped = true;
                    // Branch-free over the common escapes; `\u` is checked
                    // apart (hex digits, no surrogates).
                    let (mut bad, mut unicode) = (false, false);
                    let mut t = e;
                    while t != 0 {
                        let c = b[p + t.trailing_zeros() as usize];
                        bad |= !SIMPLE_ESCAPE[c as usize];
                        unicode |= c == b'u';
                        t &= t - 1;
                    }
                    if bad {
                        if !unicode {
                            return None;
                        }
                        while e != 0 {
                            let q = p + e.trailing_zeros() as usize;
                            escape_len(b, q - 1)?;
                            e &= e - 1;
                        }
                    }
                }
                if quotes != 0 {
                    self.i = p + quotes.trailing_zeros() as usize + 1;
                    return Some(escaped);
                }
                p += len as usize;
            }
        }
        // The last bytes of the line: escape by escape, skipping sixteen
        // plain bytes at a time where there are sixteen.
        while p < b.len() {
            #[cfg(target_arch = "x86_64")]
            if p + 16 <= b.len() {
                let mask = classify16(b, p);
                if mask == 0 {
                    p += 16;
                    continue;
                }
                p += mask.trailing_zeros() as usize;
            }
            match b[p] {
                b'"' => {
                    self.i = p + 1;
                    return Some(escaped);
                }
                b'\\' => {
                    escaped = true;
                    p += escape_len(b, p)?;
                }
                c if c < 0x20 => return None,
                _ => p += 1,
            }
        }
        None // unterminated
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
                if self.digits() > 300 {
                    self.big_number = true;
                }
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
            let negative = self.peek() == Some(b'-');
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            match self.digits() {
                0 => return None,
                n if n >= 3 && !negative => self.big_number = true,
                _ => {}
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
    pub fn value_span(&mut self, depth: u32) -> Option<&'a str> {
        self.ws();
        let start = self.i;
        self.value(depth)?;
        self.span(start)
    }

    /// Crosses an array, calling `element` at the start of each element
    /// (after whitespace); it must cross exactly that one value.
    pub fn array_with(
        &mut self,
        depth: u32,
        element: &mut impl FnMut(&mut Skim<'a>, u32) -> Option<()>,
    ) -> Option<()> {
        self.container(depth, b'[', b']', element)
    }

    /// Crosses a container from `open` to `close`, calling `item` at the
    /// start of each item (after whitespace); it must cross exactly that one
    /// item (an element, or a member with its key). The one walk behind
    /// arrays and objects.
    #[inline]
    fn container(
        &mut self,
        depth: u32,
        open: u8,
        close: u8,
        item: &mut impl FnMut(&mut Skim<'a>, u32) -> Option<()>,
    ) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.ws();
        if self.peek()? != open {
            return None;
        }
        self.i += 1;
        self.ws();
        if self.peek()? == close {
            self.i += 1;
            return Some(());
        }
        loop {
            self.ws();
            item(self, depth)?;
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                c if c == close => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array(&mut self, depth: u32) -> Option<()> {
        self.array_with(depth, &mut |s, depth| s.value(depth))
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

    /// Reads a member's key and its `:` (whitespace around), leaving the
    /// skim at the start of the value.
    #[inline]
    fn member_key(&mut self) -> Option<&'a [u8]> {
        let key = self.key()?;
        self.ws();
        if self.peek()? != b':' {
            return None;
        }
        self.i += 1;
        self.ws();
        Some(key)
    }

    /// Crosses an object, capturing the raw values of `keys`. A captured
    /// key seen twice gives `None` (serde would reject the line).
    pub fn object(
        &mut self,
        depth: u32,
        keys: &[&[u8]],
        out: &mut [Option<&'a str>],
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
        out: &mut [Option<&'a str>],
        nested: &mut Nested<'_, 'a>,
    ) -> Option<()> {
        self.container(depth, b'{', b'}', &mut |sk, depth| {
            let key = sk.member_key()?;
            match keys.iter().position(|k| *k == key) {
                Some(k) => {
                    if out[k].is_some() {
                        return None;
                    }
                    let start = sk.i;
                    match nested(key, sk) {
                        Some(Some(())) => {}
                        Some(None) => return None,
                        None => sk.value(depth)?,
                    }
                    out[k] = Some(sk.span(start)?);
                }
                None => sk.value(depth)?,
            }
            Some(())
        })
    }
}

impl<'a> Skim<'a> {
    /// Crosses an object, calling `member(skim, depth)` at the start of
    /// each member's value (after whitespace); it must cross exactly that
    /// value. Keys are not looked at (escaped ones give `None`, as in
    /// [`Skim::object_with`]).
    pub fn object_each(
        &mut self,
        depth: u32,
        member: &mut impl FnMut(&mut Skim<'a>, u32) -> Option<()>,
    ) -> Option<()> {
        self.container(depth, b'{', b'}', &mut |sk, depth| {
            sk.member_key()?;
            member(sk, depth)
        })
    }
}

/// Calls `f` with the raw bytes of each element of a JSON array.
pub(crate) fn for_each_element<'a>(array: &'a str, mut f: impl FnMut(&'a str)) -> Option<()> {
    Skim::new(array).array_with(0, &mut |sk, _| {
        f(sk.value_span(1)?);
        Some(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `probe_fast` does: UTF-8 for the whole line, then the skim.
    fn valid(s: &[u8]) -> bool {
        let Ok(s) = std::str::from_utf8(s) else {
            return false;
        };
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

    /// Strings of escapes, quotes and backslash runs at every offset of the
    /// 64-byte blocks: the skim agrees with serde on every one, and ends the
    /// string where serde does.
    #[test]
    fn strings_agree_with_serde() {
        const PIECES: [&str; 12] = [
            "a",
            "\\",
            "\\\\",
            "\"",
            "n",
            "u",
            "\\u00e9",
            "\\ud800",
            "\u{1}",
            "é",
            "xxxxxxxxxxxxxxx",
            "\\\\\\",
        ];
        let mut next = crate::testgen::xorshift(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let body = crate::testgen::random_text(&mut next, &PIECES);
            let line = format!(r#"{{"a":"{body}","b":1}}"#);
            let serde_ok = serde_json::from_str::<serde_json::Value>(&line).is_ok();
            assert_eq!(valid(line.as_bytes()), serde_ok, "{line:?}");
            // Where the string ends: the skim's span is serde's string.
            if serde_ok {
                let mut out = [None];
                let mut sk = Skim::new(&line);
                sk.object(0, &[b"a"], &mut out).unwrap();
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                let ours: String = serde_json::from_str(out[0].unwrap()).unwrap();
                assert_eq!(v["a"].as_str(), Some(ours.as_str()), "{line:?}");
            }
        }
    }

    #[test]
    fn captures_and_duplicates() {
        let s = r#"{"type":"message","x":{"type":1},"id":"ab"}"#;
        let mut out = [None; 2];
        let mut sk = Skim::new(s);
        sk.object(0, &[b"type", b"id"], &mut out).unwrap();
        assert_eq!(out, [Some(r#""message""#), Some(r#""ab""#)]);
        let s = r#"{"type":"message","type":"x"}"#;
        let mut out = [None; 1];
        assert!(Skim::new(s).object(0, &[b"type"], &mut out).is_none());
        // Surrogates and escaped keys go to the general path.
        assert!(!valid(br#"{"a":"\ud800"}"#));
        assert!(!valid(br#"{"\u0061":1}"#));
    }

    #[test]
    fn elements() {
        let mut v = Vec::new();
        for_each_element(r#"[ 1, "a" ,{"b":[2]} ]"#, |e| v.push(e)).unwrap();
        assert_eq!(v, ["1", "\"a\"", "{\"b\":[2]}"]);
    }
}
