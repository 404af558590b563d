//! What of each entry is searchable, as which part, and under which `in:`
//! scope of the query language.
//!
//! | part | from | scope | rank |
//! | --- | --- | --- | --- |
//! | [`Part::User`] | a user message's text | `in:user` | first |
//! | [`Part::Assistant`] | an assistant message's text blocks | `in:assistant` | first |
//! | [`Part::Other`] | custom messages (extensions' `custom_message` entries and `custom` messages), branch and compaction summaries | `in:other` | first |
//! | [`Part::ToolCall`] | a tool call's name and argument values; a bash execution's command | `in:tools` | second |
//! | [`Part::ToolOutput`] | a tool result's text; a bash execution's output | `in:tools` | third |
//! | [`Part::Thinking`] | an assistant's thinking blocks | `in:thinking` | third |
//!
//! Images, ids, usage and other metadata are not searchable. One
//! extraction serves both a parsed entry ([`parts_of_entry`]) and a raw
//! line ([`parts_of_line`], what the index reads): one set of serde types,
//! deserialized from either, so the two can never disagree. Every field is
//! read tolerantly: a value of an unexpected type is not searchable text,
//! it never fails the entry.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::jsonscan::Skim;
use crate::line_skim::{skim_line, BlockSpans, LineSpans};

/// Where a piece of searchable text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Part {
    User,
    Assistant,
    Other,
    ToolCall,
    ToolOutput,
    Thinking,
}

impl Part {
    pub const ALL: [Part; 6] = [
        Part::User,
        Part::Assistant,
        Part::Other,
        Part::ToolCall,
        Part::ToolOutput,
        Part::Thinking,
    ];

    /// A small number for storage (the index keeps one word index per part).
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(c: u8) -> Option<Part> {
        Part::ALL.get(usize::from(c)).copied()
    }

    pub fn scope(self) -> Scope {
        match self {
            Part::User => Scope::User,
            Part::Assistant => Scope::Assistant,
            Part::Other => Scope::Other,
            Part::ToolCall | Part::ToolOutput => Scope::Tools,
            Part::Thinking => Scope::Thinking,
        }
    }

    /// Its rank: 0 (conversation text: user, assistant, custom messages,
    /// summaries), 1 (tool calls), 2 (tool output, thinking).
    pub fn tier(self) -> usize {
        match self {
            Part::User | Part::Assistant | Part::Other => 0,
            Part::ToolCall => 1,
            Part::ToolOutput | Part::Thinking => 2,
        }
    }

    /// The user and assistant text: what the index keeps as text.
    pub fn is_text(self) -> bool {
        matches!(self, Part::User | Part::Assistant)
    }

    /// A name for output (`arbor search`'s `part`).
    pub fn name(self) -> &'static str {
        match self {
            Part::User => "user",
            Part::Assistant => "assistant",
            Part::Other => "other",
            Part::ToolCall => "toolCall",
            Part::ToolOutput => "toolOutput",
            Part::Thinking => "thinking",
        }
    }
}

/// An `in:` scope of the query language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Assistant,
    Tools,
    Thinking,
    Other,
}

impl Scope {
    pub const ALL: [Scope; 5] = [
        Scope::User,
        Scope::Assistant,
        Scope::Tools,
        Scope::Thinking,
        Scope::Other,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Assistant => "assistant",
            Scope::Tools => "tools",
            Scope::Thinking => "thinking",
            Scope::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL
            .into_iter()
            .find(|sc| sc.name().eq_ignore_ascii_case(s))
    }
}

/// A set of parts a query looks at (by default all of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parts(u8);

impl Default for Parts {
    fn default() -> Self {
        Parts::ALL
    }
}

impl Parts {
    pub const ALL: Parts = Parts(0b11_1111);
    pub const NONE: Parts = Parts(0);

    pub fn of_scope(s: Scope) -> Parts {
        let mut p = Parts::NONE;
        for part in Part::ALL {
            if part.scope() == s {
                p.0 |= 1 << part.code();
            }
        }
        p
    }

    pub fn one(p: Part) -> Parts {
        Parts(1 << p.code())
    }

    pub fn contains(self, p: Part) -> bool {
        self.0 & (1 << p.code()) != 0
    }

    pub fn intersect(self, o: Parts) -> Parts {
        Parts(self.0 & o.0)
    }

    pub fn union(self, o: Parts) -> Parts {
        Parts(self.0 | o.0)
    }

    pub fn is_all(self) -> bool {
        self == Parts::ALL
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Both user and assistant text: the index's stored text answers for
    /// them together (it does not tell them apart).
    pub fn covers_text(self) -> bool {
        self.contains(Part::User) && self.contains(Part::Assistant)
    }

    pub fn iter(self) -> impl Iterator<Item = Part> {
        Part::ALL.into_iter().filter(move |p| self.contains(*p))
    }

    pub fn bits(self) -> u8 {
        self.0
    }

    /// These parts ranked above `tier` (see [`Part::tier`]).
    pub fn ranked_above(self, tier: usize) -> Parts {
        self.iter()
            .filter(|p| p.tier() < tier)
            .fold(Parts::NONE, |a, p| a.union(Parts::one(p)))
    }
}

/// Calls `f` with each searchable part of a parsed entry, in order.
pub fn parts_of_entry(raw: &Map<String, Value>, f: &mut dyn FnMut(Part, &str)) {
    if let Ok(v) = EntryView::deserialize(raw) {
        v.parts(f);
    }
}

/// Calls `f` with each searchable part of one line of a session file (not
/// the header: it has none). A line that is not a JSON object has none.
pub fn parts_of_line(line: &[u8], f: &mut dyn FnMut(Part, &str)) {
    let start = line.iter().position(|b| !b.is_ascii_whitespace());
    if start.is_none_or(|s| line[s] != b'{') {
        return;
    }
    if let Ok(v) = serde_json::from_slice::<EntryView>(line) {
        v.parts(f);
    }
}

/// A cheap test of a raw line before [`parts_of_line`]: false when the line
/// certainly has no searchable part besides user/assistant text (so a
/// reader that already has that text can skip parsing it).
pub fn may_have_other_parts(line: &[u8]) -> bool {
    // Every other part is reached through one of these keys or values.
    const KEYS: [&[u8]; 8] = [
        b"\"toolResult\"",
        b"\"toolCall\"",
        b"\"thinking\"",
        b"\"bashExecution\"",
        b"\"summary\"",
        b"\"custom",
        b"\"hookMessage\"",
        b"\\u",
    ];
    KEYS.iter().any(|k| memchr::memmem::find(line, k).is_some())
}

/// The words of each part in `wanted` of one raw line, as [`parts_of_line`]
/// then [`crate::normalize::normalize`] would give them (each part's words
/// once per occurrence, in order, split as `normalize`'s output is split on
/// spaces; an empty word where a text [`parts_of_line`] hands out starts,
/// so that adjacent words are known),
/// but skimmed from the line's bytes: JSON strings are tokenized where they
/// lie (see [`crate::words::literal_words`]), nothing is decoded into a
/// value. Returns false, having emitted nothing, when the line is unusual
/// (not strict JSON, escaped keys, surrogate escapes, a number that may
/// not fit a double, a duplicated field, deep nesting): then ask
/// [`parts_of_line`], which decides.
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
/// ask [`parts_of_line`]).
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

    /// A new piece of `part` starts (what [`parts_of_line`] hands out as
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

#[derive(Deserialize, Default)]
struct EntryView<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    message: Lenient<MessageView<'a>>,
    #[serde(borrow, default)]
    summary: Str<'a>,
    #[serde(borrow, default)]
    content: Content<'a>,
}

#[derive(Deserialize, Default)]
struct MessageView<'a> {
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Content<'a>,
    #[serde(borrow, default)]
    command: Str<'a>,
    #[serde(borrow, default)]
    output: Str<'a>,
    #[serde(borrow, default)]
    summary: Str<'a>,
}

#[derive(Deserialize, Default)]
struct BlockView<'a> {
    #[serde(rename = "type", borrow, default)]
    ty: Str<'a>,
    #[serde(borrow, default)]
    text: Str<'a>,
    #[serde(borrow, default)]
    thinking: Str<'a>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(default)]
    arguments: ArgText,
}

impl EntryView<'_> {
    fn parts(&self, f: &mut dyn FnMut(Part, &str)) {
        let mut emit = |p: Part, s: &str| {
            if !s.is_empty() {
                f(p, s)
            }
        };
        match self.ty.get() {
            Some("message") => {
                let Some(m) = &self.message.0 else { return };
                match m.role.get() {
                    Some("user") => emit(Part::User, &m.content.text()),
                    Some("assistant") => {
                        // Text blocks first, as one part (the index keeps
                        // them so), then the others in order.
                        emit(Part::Assistant, &m.content.text());
                        if let Content::Blocks(bs) = &m.content {
                            for b in bs.iter().flatten() {
                                match b.ty.get() {
                                    Some("thinking") => {
                                        emit(Part::Thinking, b.thinking.get().unwrap_or(""))
                                    }
                                    Some("toolCall") => {
                                        let name = b.name.get().unwrap_or("");
                                        let args = b.arguments.0.as_str();
                                        if args.is_empty() {
                                            emit(Part::ToolCall, name);
                                        } else {
                                            emit(Part::ToolCall, &format!("{name} {args}"));
                                        }
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                    Some("toolResult") => emit(Part::ToolOutput, &m.content.text()),
                    Some("bashExecution") => {
                        emit(Part::ToolCall, m.command.get().unwrap_or(""));
                        emit(Part::ToolOutput, m.output.get().unwrap_or(""));
                    }
                    // `hookMessage` is what the reader migrates to `custom`.
                    Some("custom" | "hookMessage") => emit(Part::Other, &m.content.text()),
                    Some("branchSummary" | "compactionSummary") => {
                        emit(Part::Other, m.summary.get().unwrap_or(""))
                    }
                    _ => {}
                }
            }
            Some("custom_message") => emit(Part::Other, &self.content.text()),
            Some("branch_summary" | "compaction") => {
                emit(Part::Other, self.summary.get().unwrap_or(""))
            }
            _ => {}
        }
    }
}

/// A string, or nothing when the value is of another type.
#[derive(Default)]
struct Str<'a>(Option<Cow<'a, str>>);

impl Str<'_> {
    fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

/// Drains a value of a type that is not wanted.
fn ignore_seq<'de, A: SeqAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn ignore_map<'de, A: MapAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de: 'a, 'a> serde::Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Str(Some(Cow::Owned(v))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Str(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_seq(a).map(|_| Str(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_map(a).map(|_| Str(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// `T` when the value is an object, else nothing.
struct Lenient<T>(Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Lenient<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(a)).map(|t| Lenient(Some(t)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_seq(a).map(|_| Lenient(None))
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Lenient(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A `content` value: a string, or blocks (non-objects among them are
/// nothing), or nothing.
#[derive(Default)]
enum Content<'a> {
    #[default]
    None,
    Text(Cow<'a, str>),
    Blocks(Vec<Option<BlockView<'a>>>),
}

impl Content<'_> {
    /// The text: the string, or the text blocks joined by a space (as the
    /// list row and the index gather it).
    fn text(&self) -> Cow<'_, str> {
        match self {
            Content::None => Cow::Borrowed(""),
            Content::Text(t) => Cow::Borrowed(t),
            Content::Blocks(bs) => {
                let mut texts = bs
                    .iter()
                    .flatten()
                    .filter(|b| b.ty.get() == Some("text"))
                    .filter_map(|b| b.text.get());
                let Some(first) = texts.next() else {
                    return Cow::Borrowed("");
                };
                let Some(second) = texts.next() else {
                    return Cow::Borrowed(first);
                };
                let mut out = format!("{first} {second}");
                for t in texts {
                    out.push(' ');
                    out.push_str(t);
                }
                Cow::Owned(out)
            }
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(b) = a.next_element::<Lenient<BlockView<'de>>>()? {
                    out.push(b.0);
                }
                Ok(Content::Blocks(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
                ignore_map(a).map(|_| Content::None)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
        }
        d.deserialize_any(V)
    }
}

/// The values of a tool call's arguments (strings and numbers, nested ones
/// included, keys left out), separated by spaces: command lines, paths,
/// patterns.
#[derive(Default)]
struct ArgText(String);

impl<'de> Deserialize<'de> for ArgText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = String::new();
        Collect(&mut out).deserialize(d)?;
        Ok(ArgText(out))
    }
}

struct Collect<'s>(&'s mut String);

impl Collect<'_> {
    fn push(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        if !self.0.is_empty() {
            self.0.push(' ');
        }
        self.0.push_str(s);
    }
}

impl<'de> DeserializeSeed<'de> for Collect<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Collect<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_str<E>(mut self, v: &str) -> Result<(), E> {
        self.push(v);
        Ok(())
    }
    fn visit_i64<E>(mut self, v: i64) -> Result<(), E> {
        self.push(&v.to_string());
        Ok(())
    }
    fn visit_u64<E>(mut self, v: u64) -> Result<(), E> {
        self.push(&v.to_string());
        Ok(())
    }
    fn visit_f64<E>(mut self, v: f64) -> Result<(), E> {
        self.push(&v.to_string());
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_element_seed(Collect(&mut *self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while a.next_key::<IgnoredAny>()?.is_some() {
            a.next_value_seed(Collect(&mut *self.0))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(line: &str) -> Vec<(Part, String)> {
        let mut out = Vec::new();
        parts_of_line(line.as_bytes(), &mut |p, s| out.push((p, s.to_string())));
        let map: Map<String, Value> = serde_json::from_str(line).unwrap();
        let mut from_entry = Vec::new();
        parts_of_entry(&map, &mut |p, s| from_entry.push((p, s.to_string())));
        assert_eq!(out, from_entry, "line and entry paths agree");
        out
    }

    #[test]
    fn every_kind_of_text_is_a_part() {
        let got = parts(
            r#"{"type":"message","id":"a","message":{"role":"assistant","content":[
                {"type":"thinking","thinking":"hmm\nlet me see"},
                {"type":"text","text":"Hello"},
                {"type":"toolCall","id":"t","name":"bash","arguments":{"command":"ls -la","n":[1,{"deep":"x"}],"b":true}},
                {"type":"text","text":"there"}]}}"#,
        );
        assert_eq!(
            got,
            vec![
                (Part::Assistant, "Hello there".into()),
                (Part::Thinking, "hmm\nlet me see".into()),
                (Part::ToolCall, "bash ls -la 1 x".into()),
            ]
        );
        assert_eq!(
            parts(
                r#"{"type":"message","message":{"role":"toolResult","content":[{"type":"image","data":"QUJD"},{"type":"text","text":"panic: \u00e9"}]}}"#
            ),
            vec![(Part::ToolOutput, "panic: é".into())]
        );
        assert_eq!(
            parts(
                r#"{"type":"message","message":{"role":"bashExecution","command":"make","output":"ok"}}"#
            ),
            vec![
                (Part::ToolCall, "make".into()),
                (Part::ToolOutput, "ok".into())
            ]
        );
        assert_eq!(
            parts(r#"{"type":"custom_message","customType":"x","content":"Injected"}"#),
            vec![(Part::Other, "Injected".into())]
        );
        assert_eq!(
            parts(r#"{"type":"branch_summary","summary":"tried A"}"#),
            vec![(Part::Other, "tried A".into())]
        );
        assert_eq!(
            parts(r#"{"type":"compaction","summary":"[User]: x"}"#),
            vec![(Part::Other, "[User]: x".into())]
        );
        assert_eq!(
            parts(r#"{"type":"message","message":{"role":"user","content":"hi"}}"#),
            vec![(Part::User, "hi".into())]
        );
    }

    #[test]
    fn unexpected_types_are_not_text_and_fail_nothing() {
        assert_eq!(
            parts(
                r#"{"type":"message","message":{"role":"user","content":[5,"x",{"type":"text","text":7},{"type":"text","text":"ok"}]}}"#
            ),
            vec![(Part::User, "ok".into())]
        );
        assert!(parts(r#"{"type":"message","message":"text"}"#).is_empty());
        assert!(parts(r#"{"type":5,"summary":"x"}"#).is_empty());
        assert!(parts(r#"{"type":"label","label":"x"}"#).is_empty());
        let mut n = 0;
        parts_of_line(b"[\"message\"]", &mut |_, _| n += 1);
        parts_of_line(b"not json", &mut |_, _| n += 1);
        assert_eq!(n, 0);
    }

    #[test]
    fn the_cheap_test_never_skips_a_line_with_other_parts() {
        for line in [
            r#"{"type":"message","message":{"role":"toolResult","content":"x"}}"#,
            r#"{"type":"message","message":{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}}"#,
            r#"{"type":"branch_summary","summary":"x"}"#,
            r#"{"type":"custom_message","content":"x"}"#,
            r#"{"t\u0079pe":"branch_summary","summary":"x"}"#,
        ] {
            let mut other = false;
            parts_of_line(line.as_bytes(), &mut |p, _| other |= !p.is_text());
            assert!(other && may_have_other_parts(line.as_bytes()), "{line}");
        }
        assert!(!may_have_other_parts(
            br#"{"type":"message","message":{"role":"user","content":"hi"}}"#
        ));
    }

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
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
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

    #[test]
    fn scopes_cover_their_parts() {
        assert!(Parts::of_scope(Scope::Tools).contains(Part::ToolOutput));
        assert!(Parts::of_scope(Scope::Tools).contains(Part::ToolCall));
        assert!(!Parts::of_scope(Scope::Tools).contains(Part::Thinking));
        assert!(Parts::ALL.covers_text());
        assert!(!Parts::of_scope(Scope::User).covers_text());
        let all = Scope::ALL
            .into_iter()
            .fold(Parts::NONE, |p, s| p.union(Parts::of_scope(s)));
        assert!(all.is_all());
        for p in Part::ALL {
            assert_eq!(Part::from_code(p.code()), Some(p));
        }
    }
}
