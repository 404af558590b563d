//! The searchable parts' words skimmed straight from a line's bytes, for
//! an index build: nothing decoded into a value, and a long piece seen
//! before in the file skipped whole.

use std::borrow::Cow;

use serde::de::DeserializeSeed;

use crate::jsonscan::Skim;
use crate::line_skim::{skim_line, BlockSpans, LineSpans};

use super::views::Collect;
use super::{Part, Parts};

/// The words of each part in `wanted` of one raw line, as [`parts_of_line`](super::parts_of_line)
/// then [`crate::normalize::normalize`] would give them (each part's words
/// once per occurrence, in order, split as `normalize`'s output is split on
/// spaces; an empty word where a text [`parts_of_line`](super::parts_of_line) hands out starts,
/// so that adjacent words are known),
/// but skimmed from the line's bytes: JSON strings are tokenized where they
/// lie (see [`crate::words::literal_words`]), nothing is decoded into a
/// value. Returns false, having emitted nothing, when the line is unusual
/// (not strict JSON, escaped keys, surrogate escapes, a number that may
/// not fit a double, a duplicated field, deep nesting): then ask
/// [`parts_of_line`](super::parts_of_line), which decides.
///
/// A piece already in `seen` (the same part and the same raw JSON, at
/// least [`SeenPieces::MIN_LEN`] bytes) is skipped whole: its words and
/// pairs were emitted when it was first seen, and a piece's words and
/// pairs depend on its bytes alone.
pub fn skim_part_words(
    line: &[u8],
    wanted: Parts,
    scratch: &mut Vec<u8>,
    seen: &mut SeenPieces,
    emit: &mut impl FnMut(Part, &[u8]),
) -> bool {
    skim_words(line, wanted, scratch, seen, emit).is_some()
}

/// The long pieces one file's skim has cut into words so far, by a 128-bit
/// hash of their part and raw JSON bytes: agents read the same file or run
/// the same command again within a session, and its output's words need
/// cutting and counting only once per file.
#[derive(Default)]
pub struct SeenPieces {
    hashes: std::collections::HashSet<u128, arbor_util::hash::FxBuild>,
}

impl SeenPieces {
    /// Shorter pieces cost less to cut than to remember.
    pub const MIN_LEN: usize = 256;

    /// Whether `raw` of `part` was seen before (then it is skipped); a
    /// short piece is never "seen".
    fn seen_before(&mut self, part: Part, raw: &str) -> bool {
        if raw.len() < Self::MIN_LEN {
            return false;
        }
        let h = xxhash_rust::xxh3::xxh3_128_with_seed(raw.as_bytes(), u64::from(part.code()));
        !self.hashes.insert(h)
    }

    pub fn clear(&mut self) {
        self.hashes.clear();
    }
}

/// The string a raw JSON value stands for when it is one (it was checked
/// as strict JSON: only an escaped one is decoded).
fn raw_string(raw: Option<&str>) -> Option<Cow<'_, str>> {
    let r = raw?;
    let inner = r.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(r).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

fn skim_words(
    line: &[u8],
    wanted: Parts,
    scratch: &mut Vec<u8>,
    seen: &mut SeenPieces,
    emit: &mut impl FnMut(Part, &[u8]),
) -> Option<()> {
    let spans = skim_line(line)?;
    part_words_of(&spans, wanted, scratch, seen, emit).then_some(())
}

/// [`skim_part_words`] of a line already skimmed: false, having emitted
/// nothing, when the skim crossed a number that may not fit a double (then
/// ask [`parts_of_line`](super::parts_of_line)).
pub fn part_words_of(
    spans: &LineSpans,
    wanted: Parts,
    scratch: &mut Vec<u8>,
    seen: &mut SeenPieces,
    emit: &mut impl FnMut(Part, &[u8]),
) -> bool {
    use crate::line_skim::{msg, top};
    if spans.big_number {
        return false;
    }
    let content = spans.msg[msg::CONTENT];
    let (command, output) = (spans.msg[msg::COMMAND], spans.msg[msg::OUTPUT]);
    let blocks = &spans.msg_blocks;
    // What the line holds, decided before anything is emitted.
    let ty = raw_string(spans.top[top::TYPE]);
    let role = raw_string(spans.msg[msg::ROLE]).filter(|_| spans.msg_is_object);
    let mut out = WordsOut {
        wanted,
        scratch,
        seen,
        emit,
    };
    match ty.as_deref() {
        Some("message") => match role.as_deref() {
            Some("user") => out.content(Part::User, content, blocks),
            Some("assistant") => {
                out.content(Part::Assistant, content, blocks);
                if !content.is_some_and(|r| r.starts_with('[')) {
                    return true;
                }
                for b in blocks {
                    match raw_string(b[0]).as_deref() {
                        Some("thinking") => out.long_words(Part::Thinking, b[2]),
                        Some("toolCall") if wanted.contains(Part::ToolCall) => {
                            // The name and the arguments: one piece.
                            out.words(Part::ToolCall, b[3]);
                            if let Some(args) = b[4] {
                                out.args(args);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Some("toolResult") => out.content(Part::ToolOutput, content, blocks),
            Some("bashExecution") => {
                out.words(Part::ToolCall, command);
                out.long_words(Part::ToolOutput, output);
            }
            Some("custom" | "hookMessage") => out.content(Part::Other, content, blocks),
            Some("branchSummary" | "compactionSummary") => {
                out.words(Part::Other, spans.msg[msg::SUMMARY])
            }
            _ => {}
        },
        Some("custom_message") => {
            out.content(Part::Other, spans.top[top::CONTENT], &spans.top_blocks)
        }
        Some("branch_summary" | "compaction") => out.words(Part::Other, spans.top[top::SUMMARY]),
        _ => {}
    }
    true
}

/// Where [`skim_part_words`] sends words.
struct WordsOut<'s, 'e, E: FnMut(Part, &[u8])> {
    wanted: Parts,
    scratch: &'s mut Vec<u8>,
    seen: &'s mut SeenPieces,
    // Generic, not `dyn`: the call per word is inlined into the cutting
    // loop.
    emit: &'e mut E,
}

impl<E: FnMut(Part, &[u8])> WordsOut<'_, '_, E> {
    /// [`Self::words`] for a piece that may repeat within a file (a tool's
    /// output, a thinking block): skipped when seen before.
    fn long_words(&mut self, part: Part, raw: Option<&str>) {
        if !self.wanted.contains(part) || raw.is_some_and(|r| self.seen.seen_before(part, r)) {
            return;
        }
        self.words(part, raw);
    }

    /// A new piece of `part` starts (what [`parts_of_line`](super::parts_of_line) hands out as
    /// one text): an empty word.
    fn piece(&mut self, part: Part) {
        if self.wanted.contains(part) {
            (self.emit)(part, b"");
        }
    }

    /// The words of a raw value when it is a string, as a piece.
    fn words(&mut self, part: Part, raw: Option<&str>) {
        self.piece(part);
        self.words_in(part, raw);
    }

    /// The words of a raw value when it is a string, in the current piece.
    fn words_in(&mut self, part: Part, raw: Option<&str>) {
        if !self.wanted.contains(part) {
            return;
        }
        let Some(lit) = raw.and_then(|r| r.strip_prefix('"')?.strip_suffix('"')) else {
            return;
        };
        let emit = &mut *self.emit;
        crate::words::literal_words(lit.as_bytes(), self.scratch, &mut |w| emit(part, w));
    }

    /// The words of a `content` value: a string, or its text blocks (one
    /// piece: they are handed out joined).
    fn content(&mut self, part: Part, raw: Option<&str>, blocks: &[BlockSpans]) {
        if !self.wanted.contains(part) || raw.is_some_and(|r| self.seen.seen_before(part, r)) {
            return;
        }
        match raw.map(|r| r.as_bytes()[0]) {
            Some(b'"') => self.words(part, raw),
            Some(b'[') if self.wanted.contains(part) => {
                self.piece(part);
                for b in blocks {
                    if raw_string(b[0]).as_deref() == Some("text") {
                        self.words_in(part, b[1]);
                    }
                }
            }
            _ => {}
        }
    }

    /// The words of a tool call's arguments (a raw JSON value the skim
    /// checked): its strings' and numbers' words, as [`ArgText`] gathers
    /// them.
    fn args(&mut self, raw: &str) {
        fn walk<E: FnMut(Part, &[u8])>(
            sk: &mut Skim,
            depth: u32,
            out: &mut WordsOut<E>,
        ) -> Option<()> {
            let emit = &mut *out.emit;
            match sk.peek_nonws()? {
                b'"' => {
                    let lit = sk.value_span(depth)?;
                    let inner = &lit.as_bytes()[1..lit.len() - 1];
                    crate::words::literal_words(inner, out.scratch, &mut |w| {
                        emit(Part::ToolCall, w)
                    });
                    Some(())
                }
                b'{' => sk.object_each(depth + 1, &mut |sk, d| walk(sk, d, out)),
                b'[' => sk.array_with(depth + 1, &mut |sk, d| walk(sk, d, out)),
                b'-' | b'0'..=b'9' => {
                    let num = sk.value_span(depth)?;
                    let mut text = String::new();
                    let mut de = serde_json::Deserializer::from_str(num);
                    Collect(&mut text).deserialize(&mut de).ok()?;
                    crate::words::str_words(&text, out.scratch, &mut |w| emit(Part::ToolCall, w));
                    Some(())
                }
                _ => sk.value(depth),
            }
        }
        let _ = walk(&mut Skim::new(raw), 0, self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::searchable::parts_of_line;

    /// Each part's words and pairs of adjacent words within a piece (one
    /// text handed out), the slow way: the serde extraction, normalized
    /// and split on spaces. Pairs are `w1 w2` marked with a leading `|`.
    fn slow_words(line: &[u8]) -> Vec<(Part, String)> {
        let mut out = Vec::new();
        parts_of_line(line, &mut |p, t| {
            let n = crate::normalize::normalized(t);
            let words: Vec<&str> = n.split(' ').filter(|w| !w.is_empty()).collect();
            for w in &words {
                out.push((p, w.to_string()));
            }
            for pair in words.windows(2) {
                out.push((p, format!("|{} {}", pair[0], pair[1])));
            }
        });
        out.sort();
        out
    }

    /// The skim's words and pairs, or `None` when it hands the line over.
    fn skimmed(line: &[u8]) -> Option<Vec<(Part, String)>> {
        let mut out = Vec::new();
        let mut prev: Option<(Part, String)> = None;
        let mut seen = SeenPieces::default();
        let ok = skim_part_words(line, Parts::ALL, &mut Vec::new(), &mut seen, &mut |p, w| {
            if w.is_empty() {
                prev = None;
                return;
            }
            let w = String::from_utf8(w.to_vec()).expect("words are UTF-8");
            if let Some((pp, pw)) = &prev {
                assert_eq!(*pp, p, "a piece is of one part");
                out.push((p, format!("|{pw} {w}")));
            }
            out.push((p, w.clone()));
            prev = Some((p, w));
        });
        if !ok {
            assert!(out.is_empty(), "nothing emitted before handing over");
            return None;
        }
        out.sort();
        Some(out)
    }

    /// A JSON value written with random spellings: escapes (short, `\u`,
    /// surrogate pairs), whitespace, key order kept.
    enum J {
        S(String),
        N(&'static str),
        B,
        Null,
        A(Vec<J>),
        O(Vec<(String, J)>),
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            crate::testgen::xorshift_step(&mut self.0)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn chance(&mut self, per_mille: u64) -> bool {
            self.below(1000) < per_mille
        }
    }

    fn write_str(s: &str, rng: &mut Rng, escape_rate: u64, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            let forced = matches!(c, '"' | '\\') || (c as u32) < 0x20;
            if forced || rng.chance(escape_rate) {
                match (c, rng.below(3)) {
                    ('"', 0) => out.push_str("\\\""),
                    ('\\', 0) => out.push_str("\\\\"),
                    ('\n', 0) => out.push_str("\\n"),
                    ('\t', 0) => out.push_str("\\t"),
                    ('\r', 0) => out.push_str("\\r"),
                    ('\u{8}', 0) => out.push_str("\\b"),
                    ('\u{c}', 0) => out.push_str("\\f"),
                    ('/', _) => out.push_str("\\/"),
                    _ => {
                        let mut buf = [0u16; 2];
                        for u in c.encode_utf16(&mut buf) {
                            if rng.chance(500) {
                                out.push_str(&format!("\\u{u:04x}"));
                            } else {
                                out.push_str(&format!("\\u{u:04X}"));
                            }
                        }
                    }
                }
            } else {
                out.push(c);
            }
        }
        out.push('"');
    }

    fn write(j: &J, rng: &mut Rng, out: &mut String) {
        let ws = |rng: &mut Rng, out: &mut String| {
            if rng.chance(50) {
                out.push_str([" ", "\n", "\t ", "\r\n"][rng.below(4) as usize]);
            }
        };
        ws(rng, out);
        match j {
            J::S(s) => write_str(s, rng, 60, out),
            J::N(n) => out.push_str(n),
            J::B => out.push_str(if rng.chance(500) { "true" } else { "false" }),
            J::Null => out.push_str("null"),
            J::A(v) => {
                out.push('[');
                for (i, e) in v.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(e, rng, out);
                }
                out.push(']');
            }
            J::O(m) => {
                out.push('{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    ws(rng, out);
                    write_str(k, rng, 3, out);
                    ws(rng, out);
                    out.push(':');
                    write(v, rng, out);
                }
                out.push('}');
            }
        }
        ws(rng, out);
    }

    const PIECES: [&str; 30] = [
        "word",
        "Word",
        "WORD",
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
        "\u{3000}",
        "\u{85}",
        "\u{130}",
        "\u{212a}",
        "😀",
        "Σ",
        "text",
        "toolCall",
        "panic:",
        "x.rs:12",
        "a-much-longer-identifier-Name",
    ];

    fn text(rng: &mut Rng) -> String {
        let mut s = String::new();
        for _ in 0..rng.below(12) {
            s.push_str(PIECES[rng.below(PIECES.len() as u64) as usize]);
        }
        if rng.chance(30) {
            // Long enough to cross several 64-byte blocks.
            s.push_str(&"Lorem ipsum\tDOLOR \"sit\" amet\n".repeat(rng.below(9) as usize));
        }
        s
    }

    fn one_of(rng: &mut Rng, options: &[&str]) -> String {
        options[rng.below(options.len() as u64) as usize].to_string()
    }

    const NUMBERS: [&str; 12] = [
        "0",
        "-0",
        "12",
        "-7",
        "3.5",
        "1e3",
        "-2.5E-3",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "1e400",
        "0.1",
    ];

    fn scalar(rng: &mut Rng) -> J {
        match rng.below(6) {
            0 | 1 => J::S(text(rng)),
            2 => J::N(NUMBERS[rng.below(NUMBERS.len() as u64) as usize]),
            3 => J::B,
            4 => J::Null,
            _ => J::S(String::new()),
        }
    }

    fn any(rng: &mut Rng, depth: u32) -> J {
        if depth > 3 || rng.chance(500) {
            return scalar(rng);
        }
        let n = rng.below(4) as usize;
        if rng.chance(500) {
            J::A((0..n).map(|_| any(rng, depth + 1)).collect())
        } else {
            J::O(
                (0..n)
                    .map(|i| (format!("k{i}"), any(rng, depth + 1)))
                    .collect(),
            )
        }
    }

    /// A field, sometimes of another type than expected.
    fn field(rng: &mut Rng, good: J) -> J {
        if rng.chance(100) {
            any(rng, 2)
        } else {
            good
        }
    }

    fn block(rng: &mut Rng) -> J {
        let ty = one_of(rng, &["text", "thinking", "toolCall", "image", "other"]);
        // Mostly the fields its type has, sometimes others.
        let own: &[&str] = match ty.as_str() {
            "text" => &["text"],
            "thinking" => &["thinking"],
            "toolCall" => &["name", "arguments"],
            _ => &["data"],
        };
        let mut m = vec![("type".to_string(), field(rng, J::S(ty.clone())))];
        for k in ["text", "thinking", "name", "data", "id", "arguments"] {
            if rng.chance(if own.contains(&k) { 850 } else { 150 }) {
                let v = if k == "arguments" {
                    any(rng, 0)
                } else {
                    let t = J::S(text(rng));
                    field(rng, t)
                };
                m.push((k.to_string(), v));
            }
        }
        shuffle_and_spoil(rng, &mut m);
        J::O(m)
    }

    fn content(rng: &mut Rng) -> J {
        match rng.below(5) {
            0 => J::S(text(rng)),
            1 => any(rng, 1),
            _ => J::A((0..rng.below(4)).map(|_| block(rng)).collect()),
        }
    }

    /// Shuffles members; rarely duplicates one (serde refuses the entry).
    fn shuffle_and_spoil(rng: &mut Rng, m: &mut Vec<(String, J)>) {
        for i in (1..m.len()).rev() {
            m.swap(i, rng.below(i as u64 + 1) as usize);
        }
        if !m.is_empty() && rng.chance(20) {
            let k = m[rng.below(m.len() as u64) as usize].0.clone();
            m.push((k, J::S(text(rng))));
        }
    }

    fn entry(rng: &mut Rng) -> J {
        let ty = one_of(
            rng,
            &[
                "message",
                "message",
                "message",
                "custom_message",
                "branch_summary",
                "compaction",
                "label",
                "other",
            ],
        );
        let mut m = vec![
            ("type".to_string(), field(rng, J::S(ty))),
            ("id".to_string(), J::S("ab12".into())),
        ];
        if rng.chance(900) {
            let role = one_of(
                rng,
                &[
                    "user",
                    "assistant",
                    "assistant",
                    "toolResult",
                    "bashExecution",
                    "custom",
                    "hookMessage",
                    "branchSummary",
                    "compactionSummary",
                    "x",
                ],
            );
            let mut mm = vec![("role".to_string(), field(rng, J::S(role)))];
            mm.push(("content".to_string(), content(rng)));
            for k in ["command", "output", "summary"] {
                if rng.chance(300) {
                    let t = J::S(text(rng));
                    let v = field(rng, t);
                    mm.push((k.to_string(), v));
                }
            }
            if rng.chance(300) {
                mm.push(("usage".to_string(), any(rng, 1)));
            }
            shuffle_and_spoil(rng, &mut mm);
            m.push(("message".to_string(), field(rng, J::O(mm))));
        }
        if rng.chance(300) {
            let t = J::S(text(rng));
            let v = field(rng, t);
            m.push(("summary".to_string(), v));
        }
        if rng.chance(300) {
            m.push(("content".to_string(), content(rng)));
        }
        shuffle_and_spoil(rng, &mut m);
        J::O(m)
    }

    #[test]
    fn skimmed_words_equal_the_serde_paths_words() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut skimmed_n, mut total, mut nonempty) = (0, 0, 0);
        for _ in 0..50_000 {
            let mut line = String::new();
            write(&entry(&mut rng), &mut rng, &mut line);
            let mut bytes = line.into_bytes();
            if rng.chance(20) {
                // Broken lines: cut, or a stray byte.
                let at = rng.below(bytes.len() as u64 + 1) as usize;
                if rng.chance(500) {
                    bytes.truncate(at);
                } else {
                    bytes.insert(at, [b'x', b'"', 0xff, b'}', b'\\'][rng.below(5) as usize]);
                }
            }
            total += 1;
            let slow = slow_words(&bytes);
            if let Some(fast) = skimmed(&bytes) {
                skimmed_n += 1;
                nonempty += usize::from(!fast.is_empty());
                assert_eq!(fast, slow, "{}", String::from_utf8_lossy(&bytes));
            }
        }
        // Most lines are skimmed (the rest have surrogates, duplicates,
        // escaped keys or huge numbers on purpose).
        assert!(skimmed_n * 10 > total * 6, "{skimmed_n} of {total}");
        assert!(
            nonempty * 100 > total * 8,
            "{nonempty} of {total} have words"
        );
    }

    #[test]
    fn usual_lines_are_skimmed() {
        for line in [
            r#"{"type":"message","id":"a","message":{"role":"toolResult","toolCallId":"t","toolName":"read","content":[{"type":"text","text":"\tfn Main() {\n\t\"x\" \\ y\n}"},{"type":"image","data":"QUJD"}],"timestamp":1}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","arguments":{"path":"lib/x.py","offset":53,"limit":1.5e2}}],"usage":{"input":1,"cost":{"total":0.1}}}}"#,
            r#"{"type":"message","message":{"role":"bashExecution","command":"make","output":"ok"}}"#,
            r#"{"type":"compaction","summary":"[User]: x"}"#,
        ] {
            let fast = skimmed(line.as_bytes()).expect("skimmed");
            assert_eq!(fast, slow_words(line.as_bytes()), "{line}");
            assert!(!fast.is_empty());
        }
    }

    #[test]
    fn a_long_piece_seen_before_in_the_file_is_skipped_whole() {
        let body = "error: cannot borrow `x` as mutable at src/main.rs:42 ".repeat(8);
        let result = |text: &str| {
            format!(
                r#"{{"type":"message","message":{{"role":"toolResult","toolCallId":"t","content":[{{"type":"text","text":"{text}"}}]}}}}"#
            )
        };
        let bash = format!(
            r#"{{"type":"message","message":{{"role":"bashExecution","command":"make","output":"{body}"}}}}"#
        );
        let mut seen = SeenPieces::default();
        let mut words = |line: &str| {
            let mut n = 0;
            let ok = skim_part_words(
                line.as_bytes(),
                Parts::ALL,
                &mut Vec::new(),
                &mut seen,
                &mut |_, w| n += usize::from(!w.is_empty()),
            );
            assert!(ok, "{line}");
            n
        };
        let first = words(&result(&body));
        assert!(first > 50);
        assert_eq!(words(&result(&body)), 0, "the same output again");
        // One byte more is another piece; so is the same text as a bash
        // execution's output (other raw JSON); a short piece always counts.
        assert_eq!(words(&result(&format!("{body}x"))), first + 1);
        assert_eq!(words(&bash), first + 1, "make, and the output");
        assert_eq!(words(&bash), 1, "only the command");
        assert_eq!(words(&result("short ok")), 2);
        assert_eq!(words(&result("short ok")), 2);
    }
}
