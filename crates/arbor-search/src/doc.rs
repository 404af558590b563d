//! What a query is matched against: each row's searchable text and the
//! facts its filters test, prepared once per session.

use arbor_session::extras::{LabelInfo, LabelText};
use arbor_session::info::SessionInfo;
use arbor_session::normalize::push_normalized;
use arbor_util::intern;
use arbor_util::prefetch::{prefetch, prefetch_in};
use nucleo_matcher::Utf32Str;
use std::sync::Arc;

/// The characters of a first message the fuzzy pass scores (and a
/// document keeps).
pub const FIRST_MESSAGE_SCORED: usize = 500;

/// What a query is matched against, prepared once per session.
///
/// A keystroke in the picker scores every session's short fields, so they
/// are laid out for that pass: all of a session's text in one allocation
/// (a string per field scattered the pass's reads over the heap), each
/// field known to be ASCII or not without looking, and the characters
/// nucleo matches a non-ASCII field by decoded once, here, rather than on
/// every key.
#[derive(Debug, Clone, Default)]
pub struct SearchDoc {
    /// The short fields in their original case (fuzzy matching ignores
    /// case itself), back to back; then the searchable parts, each
    /// normalized (lowercased, whitespace runs collapsed to one space) and
    /// followed by `\n` (which a normalized part never contains, so no
    /// match spans two parts): id, name, summary, cwd, then the message
    /// bodies from `body_start` on.
    text: String,
    /// Where each short field ends in `text` (the first starts at 0).
    field_ends: Box<[u32]>,
    /// Bit `i`: field `i` is ASCII.
    ascii: u32,
    /// Bit `i`: nucleo matches field `i` by the characters kept in `chars`
    /// (see [`Field::utf32`]).
    unicode: u32,
    /// The characters nucleo matches in the fields it sees as Unicode (the
    /// first of each grapheme), back to back, and where each field's end
    /// in them (none when no field is seen as Unicode).
    chars: Box<[char]>,
    char_ends: Box<[u32]>,
    /// Per character of `chars`, the ASCII byte nucleo compares an ASCII
    /// word's characters with (lowercased, accents removed), or 0x80 for
    /// one no ASCII character matches: a cheap scan of these finds
    /// whether a compact match can exist before nucleo looks.
    folded: Box<[u8]>,
    /// Where a short document's first message (as typed, cut as the
    /// fields cut it) starts in `text`; it ends at `short_start`.
    lead_start: usize,
    /// Where the normalized parts start in `text`.
    short_start: usize,
    /// Where the bodies start in `text`.
    body_start: usize,
    /// Which of the fields is the first message (cut at
    /// [`FIRST_MESSAGE_SCORED`] characters), if one is.
    first_field: Option<u8>,
    /// Field 0 is the name (in a document made by [`SearchDoc::of_row`]).
    named: bool,
    /// What the query's filters (`dir:`, `after:`, …) look at.
    pub facts: RowFacts,
}

/// One short field of a [`SearchDoc`].
#[derive(Debug, Clone, Copy)]
pub struct Field<'a> {
    pub text: &'a str,
    pub ascii: bool,
    /// The characters nucleo matches, when it sees the field as Unicode.
    chars: Option<&'a [char]>,
    /// Those characters as an ASCII word is compared with them (see
    /// [`SearchDoc`]'s `folded`), when it sees the field as Unicode.
    pub folded: Option<&'a [u8]>,
}

impl<'a> Field<'a> {
    /// The field as nucleo sees it: what `Utf32Str::new` makes of the
    /// text, without decoding it again.
    pub fn utf32(&self) -> Utf32Str<'a> {
        match self.chars {
            Some(c) => Utf32Str::Unicode(c),
            None => Utf32Str::Ascii(self.text.as_bytes()),
        }
    }
}

/// The facts of a row the query's filters test (see `super::query::Filter`).
#[derive(Debug, Clone, Default)]
pub struct RowFacts {
    /// The cwd, lowercased (one copy per folder: see `util::intern`).
    pub cwd: Arc<str>,
    pub modified_ms: i64,
    /// The models used, lowercased (one copy per list of them).
    pub models: Arc<[Box<str>]>,
    pub named: bool,
    pub fork: bool,
    pub agent: arbor_session::agent::Agent,
    /// The labels in effect (on an entry the file has), lowercased.
    pub labels: Vec<String>,
    /// The remote machine the session is on, when it is a mirrored copy
    /// (`None`: this machine's); see `arbor_util::hosts`.
    pub host: Option<Arc<str>>,
}

/// Whether `c` is a grapheme of its own whatever surrounds it, in a text
/// of such characters: none of them joins the one before or after it
/// (no combining mark, joiner, variation selector, prepended or spacing
/// mark, regional indicator or Hangul jamo; not a carriage return, which
/// joins a line feed). Latin, Greek, Cyrillic, CJK, kana, Hangul syllables,
/// punctuation, symbols and most emoji are. Splitting a text into
/// graphemes was a fifth of making a search document with such a field
/// (Chinese or Korean first messages); a text of these needs no split.
fn own_grapheme(c: char) -> bool {
    matches!(c,
        '\0'..='\u{0C}' | '\u{0E}'..='\u{2FF}'
        | '\u{370}'..='\u{3FF}'
        | '\u{400}'..='\u{482}' | '\u{48A}'..='\u{4FF}'
        | '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205E}'
        | '\u{2070}'..='\u{20CF}' | '\u{2100}'..='\u{2BFF}'
        | '\u{3000}'..='\u{3029}' | '\u{3030}'..='\u{303F}'
        | '\u{3041}'..='\u{3096}' | '\u{309B}'..='\u{30FF}'
        | '\u{4E00}'..='\u{9FFF}' | '\u{AC00}'..='\u{D7A3}'
        | '\u{FF01}'..='\u{FF60}'
        | '\u{1F300}'..='\u{1F3FA}' | '\u{1F400}'..='\u{1F64F}'
        | '\u{1F680}'..='\u{1F6FF}' | '\u{1F900}'..='\u{1F9FF}')
}

/// The byte an ASCII word's character is compared with for `c`, as nucleo
/// compares them (ignoring case, with accents removed: `É` is `e`), or
/// 0x80, which no ASCII character is.
fn fold(c: char) -> u8 {
    use nucleo_matcher::chars::{normalize, to_lower_case};
    let c = if c.is_ascii() {
        c.to_ascii_lowercase()
    } else {
        to_lower_case(normalize(c))
    };
    if c.is_ascii() {
        c as u8
    } else {
        0x80
    }
}

impl RowFacts {
    pub fn of(info: &SessionInfo) -> RowFacts {
        let mut facts = RowFacts::new(
            RowText::of(info),
            info.modified_ms,
            info.models.iter().map(String::as_str),
            info.parent_session_path.is_some(),
            info.agent,
            &info.labels,
        );
        facts.host = arbor_util::hosts::host_of(&info.path);
        facts
    }

    /// The facts of a row wherever it lives (decoded, or read in place
    /// from the index).
    pub fn new<'a>(
        text: RowText,
        modified_ms: i64,
        models: impl Iterator<Item = &'a str> + Clone,
        fork: bool,
        agent: arbor_session::agent::Agent,
        labels: &[LabelInfo],
    ) -> RowFacts {
        // Few folders and model lists among many rows: each lowercased once.
        RowFacts {
            cwd: intern::lowercase(text.cwd),
            modified_ms,
            models: intern::list_lowercase(models),
            named: text.name.is_some(),
            fork,
            agent,
            labels: labels
                .iter()
                // A label on an entry the file lacks shows nowhere.
                .filter(|l| l.text != LabelText::Missing)
                .map(|l| l.label.to_lowercase())
                .collect(),
            host: None,
        }
    }
}

/// The texts of a row a query matches, borrowed from wherever it lives.
#[derive(Clone, Copy)]
pub struct RowText<'a> {
    /// The name when set and not cleared.
    pub name: Option<&'a str>,
    /// The summary when fresh.
    pub summary: Option<&'a str>,
    /// The first message, or the placeholder when there is none.
    pub first_message: &'a str,
    pub cwd: &'a str,
    pub id: &'a str,
}

impl RowText<'_> {
    pub fn of(info: &SessionInfo) -> RowText<'_> {
        RowText {
            name: info.display_name(),
            summary: info.summary(),
            first_message: info.first_message_text(),
            cwd: &info.cwd,
            id: &info.id,
        }
    }
}

impl SearchDoc {
    pub fn from_info(info: &SessionInfo) -> SearchDoc {
        SearchDoc::of_row(RowText::of(info), &info.all_text, RowFacts::of(info))
    }

    /// The document of a row's texts, its message bodies' text `body`
    /// (empty when the index answers for the bodies) and its facts.
    pub fn of_row(t: RowText, body: &str, facts: RowFacts) -> SearchDoc {
        let first = t.first_message;
        let cut = arbor_util::chars_end(first, FIRST_MESSAGE_SCORED);
        let first_field = u8::from(t.name.is_some()) + u8::from(t.summary.is_some());
        let fields = [
            t.name,
            t.summary,
            Some(&first[..cut]),
            Some(t.cwd),
            Some(t.id),
        ];
        let short = [t.id, t.name.unwrap_or(""), t.summary.unwrap_or(""), t.cwd];
        let mut doc = SearchDoc::new(fields.into_iter().flatten(), short, body, facts);
        doc.first_field = Some(first_field);
        doc.named = t.name.is_some();
        doc
    }

    /// [`SearchDoc::of_row`] without the fields a word is fuzzy matched
    /// in: what a query of phrases and regexes alone looks at (the short
    /// texts and the facts) and gets the same score from. Ranking a
    /// listing of 100,000 sessions by a phrase made most of its documents'
    /// cost in those fields (a first message's characters, graphemes).
    pub fn of_row_short(t: RowText, facts: RowFacts) -> SearchDoc {
        let short = [t.id, t.name.unwrap_or(""), t.summary.unwrap_or(""), t.cwd];
        let first = t.first_message;
        let lead = &first[..arbor_util::chars_end(first, FIRST_MESSAGE_SCORED)];
        let mut doc = SearchDoc::build([], lead, short, "", facts);
        doc.named = t.name.is_some();
        doc
    }

    /// A document of `fields` (fuzzy matched), the `short` texts (matched
    /// as substrings) and the message bodies' text `body`.
    pub fn new<'a>(
        fields: impl IntoIterator<Item = &'a str>,
        short: impl IntoIterator<Item = &'a str>,
        body: &str,
        facts: RowFacts,
    ) -> SearchDoc {
        SearchDoc::build(fields, "", short, body, facts)
    }

    /// [`SearchDoc::new`], keeping `lead` (a short document's first
    /// message, as typed) after the fields for [`SearchDoc::atomic_lead`].
    fn build<'a>(
        fields: impl IntoIterator<Item = &'a str>,
        lead: &str,
        short: impl IntoIterator<Item = &'a str>,
        body: &str,
        facts: RowFacts,
    ) -> SearchDoc {
        let (fields, short): (Vec<&str>, Vec<&str>) =
            (fields.into_iter().collect(), short.into_iter().collect());
        // Normalizing keeps a text's length but for a few lowercase forms
        // longer than their capitals: a little room, no regrowth.
        let room = fields
            .iter()
            .chain(&short)
            .map(|f| f.len() + 1)
            .sum::<usize>()
            + body.len()
            + lead.len();
        let mut text = String::with_capacity(room + room / 16 + 16);
        let mut field_ends = Vec::with_capacity(fields.len());
        let (mut ascii, mut unicode) = (0u32, 0u32);
        let mut chars = Vec::new();
        let mut folded = Vec::new();
        let mut char_ends = Vec::new();
        for (i, f) in fields.into_iter().take(32).enumerate() {
            text.push_str(f);
            field_ends.push(text.len() as u32);
            if f.is_ascii() {
                ascii |= 1 << i;
            } else {
                // As `Utf32Str::new` does: Unicode unless every grapheme
                // starts with an ASCII character.
                let from = chars.len();
                if f.chars().all(own_grapheme) {
                    chars.extend(f.chars());
                } else {
                    chars.extend(nucleo_matcher::chars::graphemes(f));
                }
                if chars[from..].iter().all(char::is_ascii) {
                    chars.truncate(from);
                } else {
                    unicode |= 1 << i;
                    folded.extend(chars[from..].iter().map(|&c| fold(c)));
                }
            }
            char_ends.push(chars.len() as u32);
        }
        let lead_start = text.len();
        text.push_str(lead);
        let short_start = text.len();
        for f in short {
            push_normalized(f, &mut text);
            text.push('\n');
        }
        let body_start = text.len();
        push_normalized(body, &mut text);
        if unicode == 0 {
            char_ends.clear();
        }
        SearchDoc {
            text,
            field_ends: field_ends.into_boxed_slice(),
            ascii,
            unicode,
            chars: chars.into_boxed_slice(),
            char_ends: char_ends.into_boxed_slice(),
            folded: folded.into_boxed_slice(),
            lead_start,
            short_start,
            body_start,
            first_field: None,
            named: false,
            facts,
        }
    }

    /// The first message as the fields keep it (its first
    /// [`FIRST_MESSAGE_SCORED`] characters; the placeholder when there is
    /// none), for a document made by [`SearchDoc::of_row`].
    pub fn first_message(&self) -> Option<&str> {
        let i = usize::from(self.first_field?);
        self.fields().nth(i).map(|f| f.text)
    }

    /// What Atomic's search text of the session starts with, as kept:
    /// the id, the name and the first message (its first
    /// [`FIRST_MESSAGE_SCORED`] characters; empty when there is none). As
    /// typed for a document made by [`SearchDoc::of_row`]; the id and name
    /// normalized for another.
    pub fn atomic_lead(&self) -> (&str, Option<&str>, &str) {
        if self.first_field.is_some() {
            let first = self
                .first_message()
                .filter(|f| *f != arbor_session::info::NO_MESSAGES)
                .unwrap_or("");
            return (self.row_id(), self.row_name(), first);
        }
        let mut short = self.fields_text().split('\n');
        let id = short.next().unwrap_or("");
        let name = short.next().filter(|n| self.named && !n.is_empty());
        let lead = &self.text[self.lead_start..self.short_start];
        let first = if lead == arbor_session::info::NO_MESSAGES {
            ""
        } else {
            lead
        };
        (id, name, first)
    }

    /// Short field `i`'s text.
    fn field_text(&self, i: usize) -> Option<&str> {
        let end = *self.field_ends.get(i)? as usize;
        let start = i.checked_sub(1).map_or(0, |p| self.field_ends[p] as usize);
        self.text.get(start..end)
    }

    // The texts of the row a document was made of by `of_row`, each on its
    // own (the picker's rows keep no other copy of them): the scope and
    // name filters ask them of every row, and every frame asks the listed
    // rows for a summary.

    /// The row's name; `None` without one, or for another document.
    pub fn row_name(&self) -> Option<&str> {
        (self.first_field.is_some() && self.named)
            .then(|| self.field_text(0))
            .flatten()
    }

    /// The row's fresh summary; `None` without one, or for another document.
    pub fn row_summary(&self) -> Option<&str> {
        let first = usize::from(self.first_field?);
        (first > usize::from(self.named))
            .then(|| self.field_text(first - 1))
            .flatten()
    }

    /// The row's cwd; empty for another document.
    pub fn row_cwd(&self) -> &str {
        self.first_field
            .and_then(|f| self.field_text(usize::from(f) + 1))
            .unwrap_or("")
    }

    /// The row's session id; empty for another document.
    pub fn row_id(&self) -> &str {
        self.first_field
            .and_then(|f| self.field_text(usize::from(f) + 2))
            .unwrap_or("")
    }

    /// Asks for the cache lines a scoring pass reads first (the fields'
    /// ends and the start of the text), so that a pass over every session
    /// does not wait on a miss at each (see [`SearchDoc::prefetch_header`]).
    #[inline]
    pub fn prefetch_text(&self) {
        prefetch(&self.field_ends, 0);
        prefetch(self.text.as_bytes(), 0);
        prefetch(self.text.as_bytes(), 64);
    }

    /// Asks for the document itself, ahead of [`SearchDoc::prefetch_text`]
    /// (which reads it to find the text).
    #[inline]
    pub fn prefetch_header(doc: &Arc<SearchDoc>) {
        for line in 0..std::mem::size_of::<SearchDoc>().div_ceil(64) {
            prefetch_in(&**doc, line * 64);
        }
    }

    /// The short fields, in order.
    pub fn fields(&self) -> impl Iterator<Item = Field<'_>> {
        (0..self.field_ends.len()).map(move |i| {
            let start = i.checked_sub(1).map_or(0, |p| self.field_ends[p] as usize);
            let text = &self.text[start..self.field_ends[i] as usize];
            let range = (self.unicode & (1 << i) != 0).then(|| {
                let from = i.checked_sub(1).map_or(0, |p| self.char_ends[p] as usize);
                from..self.char_ends[i] as usize
            });
            Field {
                text,
                ascii: self.ascii & (1 << i) != 0,
                chars: range.clone().map(|r| &self.chars[r]),
                folded: range.map(|r| &self.folded[r]),
            }
        })
    }

    /// The normalized short texts' part of the text.
    pub fn fields_text(&self) -> &str {
        &self.text[self.short_start..self.body_start]
    }

    /// The bodies' part of the text (empty for rows from the index).
    pub fn body_text(&self) -> &str {
        &self.text[self.body_start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character taken as its own grapheme is one beside itself, an
    /// ASCII letter, a line feed and an emoji: nucleo's split into
    /// graphemes gives each back.
    #[test]
    fn characters_taken_as_their_own_graphemes_are() {
        let own: Vec<char> = (0..=0x1F_FFFFu32)
            .filter_map(char::from_u32)
            .filter(|&c| own_grapheme(c))
            .collect();
        assert!(own.len() > 30_000, "{}", own.len());
        for &c in &own {
            let text: String = ['a', c, c, '\n', c, '\u{1F600}', c, 'b'].iter().collect();
            let split: Vec<char> = nucleo_matcher::chars::graphemes(&text).collect();
            assert_eq!(
                split,
                text.chars().collect::<Vec<_>>(),
                "U+{:04X}",
                c as u32
            );
        }
        // And what joins is not taken: a combining mark, a joiner, a
        // variation selector, a skin tone, a carriage return.
        for c in [
            '\u{301}',
            '\u{200D}',
            '\u{FE0F}',
            '\u{1F3FD}',
            '\r',
            '\u{1100}',
        ] {
            assert!(!own_grapheme(c), "U+{:04X}", c as u32);
        }
    }

    proptest::proptest! {
        /// A text of characters taken as their own graphemes splits into
        /// those characters, whichever follow which.
        #[test]
        fn texts_of_own_graphemes_split_into_their_characters(
            text in proptest::collection::vec(
                proptest::prop_oneof![
                    0x20u32..0x2FF, 0x370u32..0x4FF, 0x2010u32..0x2BFF, 0x3000u32..0x30FF,
                    0x4E00u32..0x9FFF, 0xAC00u32..0xD7A3, 0xFF01u32..0xFF60, 0x1F300u32..0x1F9FF,
                ],
                0..40,
            ),
        ) {
            let text: String = text
                .into_iter()
                .filter_map(char::from_u32)
                .filter(|&c| own_grapheme(c))
                .collect();
            let split: Vec<char> = nucleo_matcher::chars::graphemes(&text).collect();
            proptest::prop_assert_eq!(split, text.chars().collect::<Vec<_>>());
        }
    }

    proptest::proptest! {
        /// Each field is what it was given, and nucleo sees it as it sees
        /// the text itself (combining marks, emoji, CJK, ASCII).
        #[test]
        fn fields_are_kept_as_nucleo_sees_them(
            fields in proptest::collection::vec("([a-zA-Z /_-]|é|e\u{301}|\u{301}|日本|👍🏽|Ω){0,12}", 0..6),
        ) {
            let doc = SearchDoc::new(
                fields.iter().map(String::as_str),
                ["ID", "Name  x"],
                "Body",
                RowFacts::default(),
            );
            let got: Vec<Field> = doc.fields().collect();
            proptest::prop_assert_eq!(got.len(), fields.len());
            for (f, want) in got.iter().zip(&fields) {
                proptest::prop_assert_eq!(f.text, want.as_str());
                proptest::prop_assert_eq!(f.ascii, want.is_ascii());
                let mut buf = Vec::new();
                proptest::prop_assert!(f.utf32() == Utf32Str::new(want, &mut buf));
            }
            proptest::prop_assert_eq!(doc.fields_text(), "id\nname x\n");
            proptest::prop_assert_eq!(doc.body_text(), "body");
        }
    }
}
