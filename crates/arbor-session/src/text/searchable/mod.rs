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

mod skim;
mod views;

pub use skim::{part_words_of, skim_part_words, SeenPieces};

use serde::Deserialize;
use serde_json::{Map, Value};

use views::EntryView;

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
