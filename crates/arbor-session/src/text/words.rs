//! The words of searchable text — the space-separated tokens of its
//! [normal form](crate::normalize::normalize) — found without building that
//! form: straight from a decoded string ([`str_words`]) or from the inside
//! of a JSON string literal as it lies in a session file
//! ([`literal_words`]), decoding only where an escape or a non-ASCII
//! character appears.
//!
//! A word of `normalize(s)` is a maximal run of characters of `s` that are
//! not whitespace (`char::is_whitespace`), each lowercased on its own
//! (`char::to_lowercase`): that is all `normalize` does, and all these do.

/// Reuses `scratch` for words that had to be rewritten (lowercased,
/// unescaped); `emit` gets each word once per occurrence, in order.
pub fn str_words(s: &str, scratch: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) {
    let b = s.as_bytes();
    let mut w = Word::default();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            if matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
                w.finish(b, scratch, emit);
            } else {
                w.extend(b, i, i + 1, c.is_ascii_uppercase(), scratch);
            }
            i += 1;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        let next = i + ch.len_utf8();
        w.char(b, i, next, ch, scratch, emit);
        i = next;
    }
    w.finish(b, scratch, emit);
}

/// [`str_words`] of the string a JSON string literal stands for, given the
/// bytes between its quotes: valid UTF-8 whose escapes are valid (what
/// strict `serde_json` accepts). A lone surrogate escape, which strict
/// `serde_json` refuses (the callers never pass one), stands for U+FFFD.
pub(crate) fn literal_words(raw: &[u8], scratch: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) {
    let mut w = Word::default();
    let n = raw.len();
    let mut i = 0;
    while i < n {
        let base = i;
        let (special, upper, end) = classify(raw, base);
        loop {
            // Bits of bytes before `i` are done with (i - base < 64).
            let m = special & (!0u64 << (i - base));
            if m == 0 {
                if i < end {
                    w.extend(raw, i, end, upper >> (i - base) != 0, scratch);
                }
                i = end;
                break;
            }
            let at = base + m.trailing_zeros() as usize;
            if at > i {
                let run = upper >> (i - base) & low_bits(at - i);
                w.extend(raw, i, at, run != 0, scratch);
            }
            i = match raw[at] {
                b' ' => {
                    w.finish(raw, scratch, emit);
                    at + 1
                }
                b'\\' => escape(raw, at, &mut w, scratch, emit),
                _ => {
                    // Non-ASCII: one whole character (the input is UTF-8).
                    let len = utf8_len(raw[at]);
                    let ch = std::str::from_utf8(&raw[at..(at + len).min(n)])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .unwrap_or('\u{fffd}');
                    w.char(raw, at, at + len, ch, scratch, emit);
                    at + len
                }
            };
            if i >= end {
                break;
            }
        }
    }
    w.finish(raw, scratch, emit);
}

/// The `n` low bits set (`n` ≤ 64).
#[inline(always)]
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        !0
    } else {
        (1u64 << n) - 1
    }
}

#[inline(always)]
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xf0.. => 4,
        0xe0.. => 3,
        _ => 2,
    }
}

/// Handles the escape at `raw[at]` (a backslash); returns where it ends.
fn escape(
    raw: &[u8],
    at: usize,
    w: &mut Word,
    scratch: &mut Vec<u8>,
    emit: &mut impl FnMut(&[u8]),
) -> usize {
    let simple = |w: &mut Word, scratch: &mut Vec<u8>, byte: u8| {
        w.own(raw, at, scratch);
        scratch.push(byte);
        at + 2
    };
    match raw.get(at + 1) {
        Some(b'n' | b't' | b'r' | b'f') => {
            w.finish(raw, scratch, emit);
            at + 2
        }
        Some(b'b') => simple(w, scratch, 0x08),
        Some(&c @ (b'"' | b'\\' | b'/')) => simple(w, scratch, c),
        Some(b'u') => {
            let hex = |p: usize| -> Option<u32> {
                let h = raw.get(p..p + 4)?;
                let s = std::str::from_utf8(h).ok()?;
                u32::from_str_radix(s, 16).ok()
            };
            let Some(v) = hex(at + 2) else {
                return raw.len();
            };
            let (ch, len) = match v {
                0xd800..=0xdbff => match (raw.get(at + 6..at + 8), hex(at + 8)) {
                    (Some(b"\\u"), Some(lo @ 0xdc00..=0xdfff)) => {
                        let c = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
                        (char::from_u32(c).unwrap_or('\u{fffd}'), 12)
                    }
                    _ => ('\u{fffd}', 6),
                },
                _ => (char::from_u32(v).unwrap_or('\u{fffd}'), 6),
            };
            if ch.is_whitespace() {
                w.finish(raw, scratch, emit);
            } else {
                w.own(raw, at, scratch);
                push_lower(scratch, ch);
            }
            at + len
        }
        // Not valid JSON (never passed): the backslash as a character.
        _ => simple(w, scratch, b'\\') - 1,
    }
}

fn push_lower(out: &mut Vec<u8>, ch: char) {
    let mut buf = [0u8; 4];
    for l in ch.to_lowercase() {
        out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
    }
}

/// The word being gathered: `raw[start..end]` as it is (`owned` false), or
/// in `scratch` once something in it needed rewriting.
#[derive(Default)]
struct Word {
    active: bool,
    owned: bool,
    /// ASCII capitals in it (lowercased when it is emitted).
    upper: bool,
    start: usize,
    end: usize,
}

impl Word {
    /// Adds `src[from..to]` (no whitespace in it, and no escapes).
    #[inline(always)]
    fn extend(&mut self, src: &[u8], from: usize, to: usize, upper: bool, scratch: &mut Vec<u8>) {
        self.upper |= upper;
        if !self.active {
            self.active = true;
            self.start = from;
        } else if self.owned {
            scratch.extend_from_slice(&src[from..to]);
        }
        self.end = to;
    }

    /// From here on the word is written into `scratch` (what it has so far
    /// ends at `at`).
    #[inline(always)]
    fn own(&mut self, src: &[u8], at: usize, scratch: &mut Vec<u8>) {
        if self.owned {
            return;
        }
        scratch.clear();
        if self.active {
            scratch.extend_from_slice(&src[self.start..self.end]);
        }
        debug_assert!(!self.active || self.end == at);
        self.active = true;
        self.owned = true;
    }

    /// Adds one non-ASCII character `src[from..to]`.
    fn char(
        &mut self,
        src: &[u8],
        from: usize,
        to: usize,
        ch: char,
        scratch: &mut Vec<u8>,
        emit: &mut impl FnMut(&[u8]),
    ) {
        if ch.is_whitespace() {
            self.finish(src, scratch, emit);
            return;
        }
        let mut lower = ch.to_lowercase();
        if lower.len() == 1 && lower.next() == Some(ch) {
            self.extend(src, from, to, false, scratch);
        } else {
            self.own(src, from, scratch);
            push_lower(scratch, ch);
        }
    }

    #[inline(always)]
    fn finish(&mut self, src: &[u8], scratch: &mut Vec<u8>, emit: &mut impl FnMut(&[u8])) {
        if !self.active {
            return;
        }
        if self.owned {
            if self.upper {
                scratch.make_ascii_lowercase();
            }
            if !scratch.is_empty() {
                emit(scratch);
            }
        } else if self.upper {
            scratch.clear();
            scratch.extend_from_slice(&src[self.start..self.end]);
            scratch.make_ascii_lowercase();
            emit(scratch);
        } else if self.end > self.start {
            emit(&src[self.start..self.end]);
        }
        *self = Word::default();
    }
}

/// Over `raw[base..]` (up to 64 bytes; `end` is where they stop): a mask of
/// the bytes that need a look (space, backslash, non-ASCII) and one of the
/// ASCII capitals.
#[inline(always)]
fn classify(raw: &[u8], base: usize) -> (u64, u64, usize) {
    let n = raw.len() - base;
    if n >= 64 {
        let (s, u) = classify64(&raw[base..base + 64]);
        return (s, u, base + 64);
    }
    // The tail: padded with a byte of no interest.
    let mut buf = [b'a'; 64];
    buf[..n].copy_from_slice(&raw[base..]);
    let (s, u) = classify64(&buf);
    (s & low_bits(n), u & low_bits(n), raw.len())
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn classify64(b: &[u8]) -> (u64, u64) {
    use std::arch::x86_64::*;
    assert!(b.len() >= 64);
    let (mut special, mut upper) = (0u64, 0u64);
    for k in 0..4 {
        // SAFETY: SSE2 is part of the x86-64 baseline, and the load reads
        // b[16k..16k + 16], inside b[..64] (asserted above).
        unsafe {
            let x = _mm_loadu_si128(b.as_ptr().add(16 * k) as *const __m128i);
            let space = _mm_cmpeq_epi8(x, _mm_set1_epi8(b' ' as i8));
            let backslash = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\\' as i8));
            // Signed compares: bytes of 0x80 and up are negative.
            let caps = _mm_and_si128(
                _mm_cmpgt_epi8(x, _mm_set1_epi8(b'A' as i8 - 1)),
                _mm_cmplt_epi8(x, _mm_set1_epi8(b'Z' as i8 + 1)),
            );
            let s = _mm_movemask_epi8(_mm_or_si128(space, backslash)) | _mm_movemask_epi8(x);
            special |= (s as u16 as u64) << (16 * k);
            upper |= (_mm_movemask_epi8(caps) as u16 as u64) << (16 * k);
        }
    }
    (special, upper)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn classify64(b: &[u8]) -> (u64, u64) {
    let (mut special, mut upper) = (0u64, 0u64);
    for (k, &c) in b[..64].iter().enumerate() {
        special |= u64::from(c == b' ' || c == b'\\' || c >= 0x80) << k;
        upper |= u64::from(c.is_ascii_uppercase()) << k;
    }
    (special, upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::normalize;

    /// The words of `normalize(s)`, the slow way.
    fn slow(s: &str) -> Vec<String> {
        let mut n = String::new();
        normalize(s, &mut n);
        n.split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    }

    fn fast_str(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        str_words(s, &mut Vec::new(), &mut |w| {
            out.push(String::from_utf8(w.to_vec()).unwrap())
        });
        out
    }

    fn fast_literal(s: &str) -> Vec<String> {
        let lit = serde_json::to_string(s).unwrap();
        let mut out = Vec::new();
        literal_words(
            &lit.as_bytes()[1..lit.len() - 1],
            &mut Vec::new(),
            &mut |w| out.push(String::from_utf8(w.to_vec()).unwrap()),
        );
        out
    }

    #[test]
    fn words_as_normalize_splits_them() {
        for s in [
            "",
            "   ",
            "Hello   World\n\tX",
            "\u{130}stanbul \u{212a}elvin \u{212b} ÉMIGRÉ ü",
            "a\u{a0}b\u{2003}c\u{3000}d\u{85}e\u{1680}f",
            "tab\there\u{b}vt\u{c}ff\rcr",
            "nul\u{0}byte \u{8}bs",
            "quote\"s and back\\slash/es",
            "😀 emoji😀X",
            "ΣΑΣ σας",
            &"LongWordWithCapitals".repeat(10),
            &format!("{} {}", "x".repeat(63), "Y".repeat(65)),
        ] {
            assert_eq!(fast_str(s), slow(s), "{s:?}");
            assert_eq!(fast_literal(s), slow(s), "{s:?}");
        }
    }

    #[test]
    fn escapes_in_literals() {
        let cases: [(&str, &[&str]); 6] = [
            (r#"a\nb\tc\rd\fe"#, &["a", "b", "c", "d", "e"]),
            (r#"\u0041BC\u00e9\u00C9x"#, &["abcééx"]),
            (r#"sp\u0020ace nb\u00a0sp"#, &["sp", "ace", "nb", "sp"]),
            (r#"\ud83d\ude00Z \uD83D\uDE00"#, &["😀z", "😀"]),
            (r#"q\"q \\ \/ \b"#, &["q\"q", "\\", "/", "\u{8}"]),
            (r#"\u0130x \u212A"#, &["i\u{307}x", "k"]),
        ];
        for (lit, want) in cases {
            let mut out = Vec::new();
            literal_words(lit.as_bytes(), &mut Vec::new(), &mut |w| {
                out.push(String::from_utf8(w.to_vec()).unwrap())
            });
            assert_eq!(out, want, "{lit}");
            let decoded: String = serde_json::from_str(&format!("\"{lit}\"")).unwrap();
            assert_eq!(out, slow(&decoded), "{lit}");
        }
    }

    #[test]
    fn random_strings_at_every_block_offset() {
        const PIECES: [&str; 22] = [
            "a",
            "Z",
            " ",
            "  ",
            "\n",
            "\t",
            "\r",
            "\u{b}",
            "\u{c}",
            "\u{0}",
            "\u{1f}",
            "\"",
            "\\",
            "/",
            "é",
            "É",
            "\u{a0}",
            "\u{2003}",
            "\u{130}",
            "😀",
            "xxxxxxxxxxxxxxx",
            "MiXeD",
        ];
        let mut next = crate::testgen::xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..20_000 {
            let s = crate::testgen::random_text(&mut next, &PIECES);
            assert_eq!(fast_str(&s), slow(&s), "{s:?}");
            assert_eq!(fast_literal(&s), slow(&s), "{s:?}");
            // Every character escaped as \uXXXX (pairs for the astral ones).
            let mut esc = String::new();
            for u in s.encode_utf16() {
                esc.push_str(&format!("\\u{u:04X}"));
            }
            let mut out = Vec::new();
            literal_words(esc.as_bytes(), &mut Vec::new(), &mut |w| {
                out.push(String::from_utf8(w.to_vec()).unwrap())
            });
            assert_eq!(out, slow(&s), "{s:?}");
        }
    }
}
