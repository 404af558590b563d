//! One crossing of an entry's line for both of its readers in an index
//! build: the list row ([`crate::info::InfoScanner`]) and the searchable
//! parts' words ([`crate::searchable`]). Each used to skim the line on its
//! own, so every tool output was crossed twice; this skim captures the
//! members either reads, and each takes its own from it.
//!
//! A line this skim refuses (not strict JSON, a captured member given
//! twice, deep nesting) goes to each reader's own path, which decides as
//! it always did: the skim refuses every line either reader's own skim
//! refuses, and captures the same raw values when it accepts.

use crate::jsonscan::Skim;

/// Members of a content block (`type`, `text`, `thinking`, `name`,
/// `arguments`), raw.
pub(crate) type BlockSpans<'a> = [Option<&'a str>; 5];
const BLOCK_KEYS: [&[u8]; 5] = [b"type", b"text", b"thinking", b"name", b"arguments"];

/// The members of a line skimmed. The row's own fast path
/// (`info::probe_fast`) reads the first [`ROW_TOP_KEYS`] of them.
pub(crate) const TOP_KEYS: [&[u8]; 10] = [
    b"type",
    b"id",
    b"timestamp",
    b"name",
    b"summary",
    b"summarizedThroughId",
    b"message",
    b"targetId",
    b"label",
    b"content",
];
/// How many of [`TOP_KEYS`] and [`MESSAGE_KEYS`], from the first, the
/// row reads.
pub(crate) const ROW_TOP_KEYS: usize = 9;
pub(crate) const ROW_MESSAGE_KEYS: usize = 5;

/// The members of `message` skimmed (the row's first, see
/// [`ROW_MESSAGE_KEYS`]).
pub(crate) const MESSAGE_KEYS: [&[u8]; 8] = [
    b"role",
    b"content",
    b"timestamp",
    b"usage",
    b"model",
    b"command",
    b"output",
    b"summary",
];
/// The members of `message.usage` the row reads.
pub(crate) const USAGE_KEYS: [&[u8]; 6] = [
    b"totalTokens",
    b"cost",
    b"input",
    b"output",
    b"cacheRead",
    b"cacheWrite",
];

/// The raw JSON values of a line's members (`None`: absent), in the order
/// of the key tables above.
#[derive(Default)]
pub struct LineSpans<'a> {
    pub top: [Option<&'a str>; 10],
    /// `message`'s members, when it is an object.
    pub msg: [Option<&'a str>; 8],
    pub msg_is_object: bool,
    /// `message.usage`'s members, when it is an object.
    pub usage: [Option<&'a str>; 6],
    pub usage_is_object: bool,
    /// `message.usage.cost.total`, when `cost` is an object.
    pub cost_total: Option<&'a str>,
    /// The object elements of `message.content`, when it is an array.
    pub msg_blocks: Vec<BlockSpans<'a>>,
    /// The object elements of the top-level `content`, when an array.
    pub top_blocks: Vec<BlockSpans<'a>>,
    /// A number that may not fit a double was crossed somewhere.
    pub big_number: bool,
}

/// Indices into [`LineSpans::top`].
pub mod top {
    pub const TYPE: usize = 0;
    pub const ID: usize = 1;
    pub const TIMESTAMP: usize = 2;
    pub const NAME: usize = 3;
    pub const SUMMARY: usize = 4;
    pub const SUMMARIZED_THROUGH_ID: usize = 5;
    pub const TARGET_ID: usize = 7;
    pub const LABEL: usize = 8;
    pub const CONTENT: usize = 9;
}

/// Indices into [`LineSpans::msg`].
pub mod msg {
    pub const ROLE: usize = 0;
    pub const CONTENT: usize = 1;
    pub const TIMESTAMP: usize = 2;
    pub const USAGE: usize = 3;
    pub const MODEL: usize = 4;
    pub const COMMAND: usize = 5;
    pub const OUTPUT: usize = 6;
    pub const SUMMARY: usize = 7;
}

/// Indices into [`LineSpans::usage`].
pub mod usage {
    pub const TOTAL_TOKENS: usize = 0;
    pub const COST: usize = 1;
    pub const INPUT: usize = 2;
    pub const OUTPUT: usize = 3;
    pub const CACHE_READ: usize = 4;
    pub const CACHE_WRITE: usize = 5;
}

/// Skims one line (see the module's doc); `None` when it is unusual.
pub fn skim_line(line: &[u8]) -> Option<LineSpans<'_>> {
    let line = simdutf8::basic::from_utf8(line).ok()?;
    let mut s = LineSpans::default();
    let LineSpans {
        top,
        msg,
        msg_is_object,
        usage,
        usage_is_object,
        cost_total,
        msg_blocks,
        top_blocks,
        big_number,
    } = &mut s;
    let mut cost = [None];
    let mut sk = Skim::new(line);
    sk.object_with(0, &TOP_KEYS, top, &mut |key, sk| match key {
        b"message" if sk.peek_nonws() == Some(b'{') => {
            *msg_is_object = true;
            Some(
                sk.object_with(1, &MESSAGE_KEYS, msg, &mut |key, sk| match key {
                    b"content" => blocks(sk, 2, msg_blocks),
                    b"usage" if sk.peek_nonws() == Some(b'{') => {
                        *usage_is_object = true;
                        Some(sk.object_with(2, &USAGE_KEYS, usage, &mut |key, sk| {
                            if key != b"cost" || sk.peek_nonws() != Some(b'{') {
                                return None;
                            }
                            Some(sk.object(3, &[b"total"], &mut cost))
                        }))
                    }
                    _ => None,
                }),
            )
        }
        b"content" => blocks(sk, 1, top_blocks),
        _ => None,
    })?;
    if !sk.at_end() {
        return None;
    }
    *cost_total = cost[0];
    *big_number = sk.saw_big_number();
    Some(s)
}

/// Crosses a `content` array, keeping its object elements' members (not
/// an array: `None`, the value is crossed as any other).
fn blocks<'a>(sk: &mut Skim<'a>, depth: u32, out: &mut Vec<BlockSpans<'a>>) -> Option<Option<()>> {
    if sk.peek_nonws() != Some(b'[') {
        return None;
    }
    Some(sk.array_with(depth, &mut |sk, d| {
        if sk.peek_nonws() == Some(b'{') {
            let mut f = [None; 5];
            sk.object(d + 1, &BLOCK_KEYS, &mut f)?;
            out.push(f);
            Some(())
        } else {
            sk.value(d)
        }
    }))
}
