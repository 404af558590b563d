//! One line of editable text with a cursor: every text field (the picker's
//! query and rename prompt, the tree's search, label and branch-summary
//! prompts) is one of these.
//!
//! A screen matches its own keys first and hands the rest to
//! [`LineInput::handle_key`], so a key the screen uses (the tree's ←/→
//! paging, the picker's Home/End) never edits text there; the other
//! bindings of a field stay available. The cursor moves by grapheme (an
//! accented letter or an emoji sequence is one step), and columns are
//! measured in cells exactly as ratatui draws them, so the terminal cursor
//! lands on the right cell beside wide characters.

use std::cell::Cell;
use std::ops::Range;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keymap::{alt, bind, ctrl, key, with, Answer, Keymap, Named, PROMPT, TEXT};
use ratatui::buffer::CellWidth;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

/// What a key did to a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// Not a key of the field.
    Ignored,
    /// The cursor moved; the text is the same.
    Moved,
    /// The text changed.
    Changed,
}

/// What a key did to a prompt ([`LineInput::prompt_key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompted {
    Enter,
    Cancel,
    Edited,
    /// Neither the prompt's key nor the field's.
    Ignored,
}

/// What an editing key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Left,
    Right,
    WordLeft,
    WordRight,
    Start,
    End,
    DeleteBack,
    DeleteForward,
    DeleteWordBack,
    DeleteWordForward,
    DeleteToStart,
    DeleteToEnd,
    Insert,
}

impl Named for Op {
    /// Atomic's editor ids (`tui.editor.*`): every text field of arbor's
    /// takes them.
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            Op::Left => "tui.editor.cursorLeft",
            Op::Right => "tui.editor.cursorRight",
            Op::WordLeft => "tui.editor.cursorWordLeft",
            Op::WordRight => "tui.editor.cursorWordRight",
            Op::Start => "tui.editor.cursorLineStart",
            Op::End => "tui.editor.cursorLineEnd",
            Op::DeleteBack => "tui.editor.deleteCharBackward",
            Op::DeleteForward => "tui.editor.deleteCharForward",
            Op::DeleteWordBack => "tui.editor.deleteWordBackward",
            Op::DeleteWordForward => "tui.editor.deleteWordForward",
            Op::DeleteToStart => "tui.editor.deleteToLineStart",
            Op::DeleteToEnd => "tui.editor.deleteToLineEnd",
            Op::Insert => return None,
        })
    }
}

/// A field's keys: readline's, as in Atomic's editor. A screen lists the
/// ones it leaves to its field in its help (`Keymap::field_rows`).
pub const KEYS: Keymap<Op> = Keymap(&[
    bind(&[(TEXT, Op::Insert)], "insert text"),
    bind(
        &[
            (key(KeyCode::Left), Op::Left),
            (key(KeyCode::Right), Op::Right),
            (ctrl('b'), Op::Left),
            (ctrl('f'), Op::Right),
        ],
        "cursor: a character left / right",
    ),
    bind(
        &[
            (with(KeyCode::Left, KeyModifiers::CONTROL), Op::WordLeft),
            (with(KeyCode::Right, KeyModifiers::CONTROL), Op::WordRight),
            (with(KeyCode::Left, KeyModifiers::ALT), Op::WordLeft),
            (with(KeyCode::Right, KeyModifiers::ALT), Op::WordRight),
            (alt('b'), Op::WordLeft),
            (alt('f'), Op::WordRight),
        ],
        "cursor: a word left / right",
    ),
    bind(
        &[(key(KeyCode::Home), Op::Start), (ctrl('a'), Op::Start)],
        "cursor: to the start",
    ),
    bind(
        &[(key(KeyCode::End), Op::End), (ctrl('e'), Op::End)],
        "cursor: to the end",
    ),
    bind(
        &[
            (key(KeyCode::Backspace), Op::DeleteBack),
            (key(KeyCode::Delete), Op::DeleteForward),
        ],
        "delete the character before / at the cursor",
    ),
    bind(
        &[
            (ctrl('w'), Op::DeleteWordBack),
            (ctrl('h'), Op::DeleteWordBack),
            (
                with(KeyCode::Backspace, KeyModifiers::CONTROL),
                Op::DeleteWordBack,
            ),
            (
                with(KeyCode::Backspace, KeyModifiers::ALT),
                Op::DeleteWordBack,
            ),
        ],
        "delete the word before the cursor",
    ),
    bind(
        &[
            (alt('d'), Op::DeleteWordForward),
            (
                with(KeyCode::Delete, KeyModifiers::CONTROL),
                Op::DeleteWordForward,
            ),
            (
                with(KeyCode::Delete, KeyModifiers::ALT),
                Op::DeleteWordForward,
            ),
        ],
        "delete the word after the cursor",
    ),
    bind(&[(ctrl('u'), Op::DeleteToStart)], "delete to the start"),
    bind(&[(ctrl('k'), Op::DeleteToEnd)], "delete to the end"),
]);

#[derive(Debug, Clone, Default)]
pub struct LineInput {
    text: String,
    /// Byte offset, always on a grapheme boundary.
    cursor: usize,
    /// Byte offset of the first grapheme shown when the text is wider than
    /// its field. Drawing adjusts it (the view takes `&self`) and it is
    /// kept between frames, so the text only scrolls when the cursor would
    /// leave the field.
    scroll: Cell<usize>,
}

/// Two fields are equal when their text and cursor are: where the view
/// scrolled to is not part of the value.
impl PartialEq for LineInput {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.cursor == other.cursor
    }
}

impl PartialEq<&str> for LineInput {
    fn eq(&self, other: &&str) -> bool {
        self.text == *other
    }
}

impl PartialEq<str> for LineInput {
    fn eq(&self, other: &str) -> bool {
        self.text == other
    }
}

/// Text as a field holds it: newlines and tabs become spaces (a `\r\n`
/// one space), other control characters and bidirectional overrides are
/// dropped. A field is one line that is drawn as it is, so nothing in it
/// may move the terminal's cursor or reorder what is shown.
pub fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                out.push(' ');
            }
            '\n' | '\t' => out.push(' '),
            c if arbor_session::render::is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// Cells a piece of text takes, as ratatui draws it.
fn cells(s: &str) -> usize {
    s.graphemes(true).map(|g| g.cell_width() as usize).sum()
}

impl LineInput {
    /// A field holding `text` (cleaned), the cursor at its end.
    pub fn new(text: &str) -> LineInput {
        let text = clean(text);
        LineInput {
            cursor: text.len(),
            text,
            scroll: Cell::new(0),
        }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The cursor's byte offset in [`LineInput::text`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        *self = LineInput::new(text);
    }

    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Inserts `s` (cleaned) at the cursor, which ends up after it: a
    /// typed character or a paste.
    pub fn insert(&mut self, s: &str) -> Edit {
        let s = clean(s);
        if s.is_empty() {
            return Edit::Ignored;
        }
        self.text.insert_str(self.cursor, &s);
        self.cursor += s.len();
        self.snap();
        Edit::Changed
    }

    /// Applies an editing key (see [`KEYS`]). A word is a run of
    /// non-blank characters (search terms are separated by blanks).
    pub fn handle_key(&mut self, k: &KeyEvent) -> Edit {
        let Some(op) = KEYS.action(k, self.text.is_empty()) else {
            return Edit::Ignored;
        };
        match op {
            Op::Left => self.move_to(self.prev()),
            Op::Right => self.move_to(self.next()),
            Op::WordLeft => self.move_to(self.word_left()),
            Op::WordRight => self.move_to(self.word_right()),
            Op::Start => self.move_to(0),
            Op::End => self.move_to(self.text.len()),
            Op::DeleteBack => self.delete(self.prev()..self.cursor),
            Op::DeleteForward => self.delete(self.cursor..self.next()),
            Op::DeleteWordBack => self.delete(self.word_left()..self.cursor),
            Op::DeleteWordForward => self.delete(self.cursor..self.word_right()),
            Op::DeleteToStart => self.delete(0..self.cursor),
            Op::DeleteToEnd => self.delete(self.cursor..self.text.len()),
            Op::Insert => match k.code {
                KeyCode::Char(c) => self.insert(c.encode_utf8(&mut [0; 4])),
                _ => Edit::Ignored,
            },
        }
    }

    /// A key for a one-line prompt over this field: [`PROMPT`]'s (Enter
    /// takes the text, Esc drops it), else an editing key.
    pub fn prompt_key(&mut self, k: &KeyEvent) -> Prompted {
        match PROMPT.action(k, true) {
            Some(Answer::Yes) => Prompted::Enter,
            Some(Answer::No) => Prompted::Cancel,
            None if self.handle_key(k) == Edit::Ignored => Prompted::Ignored,
            None => Prompted::Edited,
        }
    }

    fn move_to(&mut self, to: usize) -> Edit {
        self.cursor = to;
        Edit::Moved
    }

    fn delete(&mut self, range: Range<usize>) -> Edit {
        if range.is_empty() {
            return Edit::Moved;
        }
        self.text.replace_range(range.clone(), "");
        self.cursor = range.start;
        self.snap();
        Edit::Changed
    }

    /// Puts the cursor back on a grapheme boundary when an edit joined
    /// graphemes (a combining mark typed after a letter): the next one.
    fn snap(&mut self) {
        self.cursor = self
            .text
            .grapheme_indices(true)
            .map(|(i, _)| i)
            .find(|&i| i >= self.cursor)
            .unwrap_or(self.text.len());
    }

    fn prev(&self) -> usize {
        self.text[..self.cursor]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next(&self) -> usize {
        self.text[self.cursor..]
            .graphemes(true)
            .next()
            .map_or(self.cursor, |g| self.cursor + g.len())
    }

    /// The start of the word before the cursor (blanks before it skipped).
    fn word_left(&self) -> usize {
        let before = &self.text[..self.cursor];
        let end = before.trim_end().len();
        before[..end].rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        })
    }

    /// The end of the word after the cursor (blanks before it skipped).
    fn word_right(&self) -> usize {
        let after = &self.text[self.cursor..];
        let start = after.len() - after.trim_start().len();
        let rest = &after[start..];
        self.cursor + start + rest.find(char::is_whitespace).unwrap_or(rest.len())
    }

    /// What a field `width` cells wide shows: the visible text and the
    /// cursor's column in it. Scrolls the minimum that keeps the cursor
    /// (and the character under it) inside, and shows as much text as fits.
    pub fn view(&self, width: usize) -> (&str, usize) {
        let width = width.max(1);
        let cur = self.cursor;
        let mut scroll = self.scroll.get().min(cur);
        if !self.text.is_char_boundary(scroll) {
            scroll = 0;
        }
        let under = self.text[cur..]
            .graphemes(true)
            .next()
            .map_or(1, |g| (g.cell_width() as usize).max(1));
        // Right: the cursor's cell must fit.
        while scroll < cur && cells(&self.text[scroll..cur]) + under > width {
            scroll += self.text[scroll..]
                .graphemes(true)
                .next()
                .map_or(0, str::len);
        }
        // Left: after a deletion, show more text when it now fits (the
        // end-of-text cursor cell included).
        while scroll > 0 {
            let prev = self.text[..scroll]
                .grapheme_indices(true)
                .next_back()
                .map_or(0, |(i, _)| i);
            if cells(&self.text[prev..]) + 1 > width {
                break;
            }
            scroll = prev;
        }
        self.scroll.set(scroll);
        let col = cells(&self.text[scroll..cur]);
        // Whole graphemes only: one that does not fit is not drawn.
        let mut end = scroll;
        let mut used = 0;
        for g in self.text[scroll..].graphemes(true) {
            let w = g.cell_width() as usize;
            if used + w > width {
                break;
            }
            used += w;
            end += g.len();
        }
        (&self.text[scroll..end], col)
    }
}

/// A prompt's hint: its keys ([`PROMPT`]'s), Enter doing `yes`.
pub fn prompt_hint(yes: &str) -> String {
    format!(
        "  {} · {}",
        PROMPT.hint(&[Answer::Yes], yes),
        PROMPT.hint(&[Answer::No], "cancel")
    )
}

/// A field narrower than this drops the prompt's hint to make room.
const MIN_FIELD: usize = 20;

/// A one-line prompt `width` cells wide: `label`, the field, and `hint`
/// when a usable field still fits beside it. Returns the line and the
/// cursor's column in it.
pub fn prompt<'a>(
    input: &'a LineInput,
    label: Span<'a>,
    hint: Span<'a>,
    width: u16,
) -> (Line<'a>, u16) {
    let width = width as usize;
    let label_w = label.width();
    let mut field = width.saturating_sub(label_w);
    let with_hint = field.saturating_sub(hint.width()) >= MIN_FIELD;
    if with_hint {
        field -= hint.width();
    }
    let (shown, col) = input.view(field);
    let mut spans = vec![label, Span::raw(shown)];
    if with_hint {
        spans.push(hint);
    }
    let col = (label_w + col).min(width.saturating_sub(1));
    (Line::from(spans), col as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }
    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }
    fn alt(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT)
    }
    fn typed(s: &str) -> LineInput {
        let mut i = LineInput::default();
        for c in s.chars() {
            i.handle_key(&key(KeyCode::Char(c)));
        }
        i
    }
    /// The text with `|` at the cursor.
    fn shown(i: &LineInput) -> String {
        format!("{}|{}", &i.text[..i.cursor], &i.text[i.cursor..])
    }

    #[test]
    fn typing_inserts_at_the_cursor() {
        let mut i = typed("helo");
        assert_eq!(i.handle_key(&key(KeyCode::Left)), Edit::Moved);
        assert_eq!(i.handle_key(&key(KeyCode::Char('l'))), Edit::Changed);
        assert_eq!(shown(&i), "hell|o");
        i.handle_key(&key(KeyCode::Home));
        i.handle_key(&key(KeyCode::Char('>')));
        assert_eq!(shown(&i), ">|hello");
        i.handle_key(&key(KeyCode::End));
        i.handle_key(&key(KeyCode::Char('!')));
        assert_eq!(shown(&i), ">hello!|");
    }

    #[test]
    fn readline_keys_move_and_delete() {
        let mut i = typed("one two  three");
        i.handle_key(&ctrl('a'));
        assert_eq!(shown(&i), "|one two  three");
        i.handle_key(&ctrl('f'));
        assert_eq!(shown(&i), "o|ne two  three");
        i.handle_key(&alt('f'));
        assert_eq!(shown(&i), "one| two  three");
        i.handle_key(&KeyEvent::new(KeyCode::Right, KeyModifiers::CONTROL));
        assert_eq!(shown(&i), "one two|  three");
        i.handle_key(&alt('f'));
        assert_eq!(shown(&i), "one two  three|");
        i.handle_key(&KeyEvent::new(KeyCode::Left, KeyModifiers::ALT));
        assert_eq!(shown(&i), "one two  |three");
        i.handle_key(&alt('b'));
        assert_eq!(shown(&i), "one |two  three");
        i.handle_key(&ctrl('b'));
        assert_eq!(shown(&i), "one| two  three");
        i.handle_key(&ctrl('e'));
        assert_eq!(shown(&i), "one two  three|");

        // Ctrl+W: the word before the cursor (and blanks between them).
        let mut i = typed("one two  three");
        for _ in 0..7 {
            i.handle_key(&key(KeyCode::Left));
        }
        assert_eq!(shown(&i), "one two|  three");
        i.handle_key(&ctrl('w'));
        assert_eq!(shown(&i), "one |  three");
        i.handle_key(&key(KeyCode::Delete));
        assert_eq!(shown(&i), "one | three");
        i.handle_key(&alt('d'));
        assert_eq!(shown(&i), "one |");
        i.handle_key(&KeyEvent::new(KeyCode::Backspace, KeyModifiers::ALT));
        assert_eq!(shown(&i), "|");
        assert_eq!(i.handle_key(&key(KeyCode::Backspace)), Edit::Moved);

        let mut i = typed("abc def");
        i.handle_key(&alt('b'));
        i.handle_key(&ctrl('k'));
        assert_eq!(shown(&i), "abc |");
        i.handle_key(&key(KeyCode::Left));
        i.handle_key(&ctrl('u'));
        assert_eq!(shown(&i), "| ");
        i.handle_key(&key(KeyCode::Delete));
        assert_eq!(shown(&i), "|");
    }

    #[test]
    fn graphemes_are_one_step() {
        // e + combining acute, a family emoji (ZWJ sequence), a wide CJK char.
        let mut i = typed("e\u{301}👨\u{200d}👩\u{200d}👧日");
        i.handle_key(&key(KeyCode::Left));
        assert_eq!(shown(&i), "e\u{301}👨\u{200d}👩\u{200d}👧|日");
        i.handle_key(&key(KeyCode::Left));
        assert_eq!(shown(&i), "e\u{301}|👨\u{200d}👩\u{200d}👧日");
        i.handle_key(&key(KeyCode::Backspace));
        assert_eq!(shown(&i), "|👨\u{200d}👩\u{200d}👧日");
        i.handle_key(&key(KeyCode::Delete));
        assert_eq!(shown(&i), "|日");
        // A combining mark typed after a letter joins it: the cursor stays after both.
        let mut i = typed("ae");
        i.handle_key(&key(KeyCode::Char('\u{301}')));
        assert_eq!(shown(&i), "ae\u{301}|");
        i.handle_key(&key(KeyCode::Left));
        assert_eq!(shown(&i), "a|e\u{301}");
    }

    #[test]
    fn pasted_and_prefilled_text_is_one_clean_line() {
        assert_eq!(clean("a\nb\r\nc\td\re"), "a b c d e");
        assert_eq!(clean("x\u{1b}[31my\u{7}\u{202e}z"), "x[31myz");
        let mut i = typed("ab");
        i.handle_key(&key(KeyCode::Left));
        assert_eq!(i.insert("1\n2"), Edit::Changed);
        assert_eq!(shown(&i), "a1 2|b");
        assert_eq!(i.insert("\u{7}"), Edit::Ignored);
        assert_eq!(
            shown(&LineInput::new("name\nwith newline")),
            "name with newline|"
        );
    }

    #[test]
    fn the_view_scrolls_to_keep_the_cursor_in_the_field() {
        let mut i = typed("abcdefghij");
        // Fits: all of it, the cursor after the end.
        assert_eq!(i.view(11), ("abcdefghij", 10));
        // Too wide: the end shows, with a cell for the cursor.
        assert_eq!(i.view(5), ("ghij", 4));
        // Moving left keeps the view until the cursor reaches its edge.
        for _ in 0..3 {
            i.handle_key(&key(KeyCode::Left));
        }
        assert_eq!(i.view(5), ("ghij", 1));
        for _ in 0..3 {
            i.handle_key(&key(KeyCode::Left));
        }
        assert_eq!(i.view(5), ("efghi", 0));
        i.handle_key(&ctrl('a'));
        assert_eq!(i.view(5), ("abcde", 0));
        i.handle_key(&ctrl('e'));
        assert_eq!(i.view(5), ("ghij", 4));
        // After a deletion, as much as fits is shown again.
        i.handle_key(&ctrl('u'));
        assert_eq!(i.view(5), ("", 0));
    }

    #[test]
    fn wide_characters_are_measured_in_cells() {
        let mut i = typed("日本語です");
        assert_eq!(i.view(20), ("日本語です", 10));
        i.handle_key(&key(KeyCode::Left));
        i.handle_key(&key(KeyCode::Left));
        assert_eq!(i.view(20), ("日本語です", 6));
        // 7 cells: the cursor's wide character must fit too.
        i.handle_key(&ctrl('e'));
        assert_eq!(i.view(7), ("語です", 6));
        i.handle_key(&key(KeyCode::Left));
        assert_eq!(i.view(7), ("語です", 4));
        i.handle_key(&ctrl('a'));
        // A wide character that would be cut at the edge is left out.
        assert_eq!(i.view(7), ("日本語", 0));
        let i = typed("a\u{301}b");
        assert_eq!(i.view(10), ("a\u{301}b", 2));
    }
}
