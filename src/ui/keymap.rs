//! Key tables: a screen's keys, what each does, its help text and when it
//! applies, in one table that drives the screen's dispatch, its help
//! overlay and the key names in its footer hints (so the help cannot
//! drift from what the keys do).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A key as a table names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Code(KeyCode),
    /// Any character typed without Ctrl or Alt (text for a field).
    Text,
}

/// A key with the modifiers held. A character's Shift is part of the
/// character (`L`, `?`), never a modifier here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chord {
    pub key: Key,
    pub mods: KeyModifiers,
    /// Listed in the help but left out of footer hints: another spelling
    /// of a hinted key (shift+tab beside tab) or a key too minor for them.
    pub quiet: bool,
    /// The id a user's `keybindings.json` rebinds this key under, when it
    /// is not its action's own ([`Named::id`]): the tree pages with
    /// `tui.editor.cursorLeft` as well as `tui.select.pageUp`, as Atomic's.
    pub id: Option<&'static str>,
}

/// An action's id in a `keybindings.json` (Atomic's `app.session.rename`,
/// or arbor's own `arbor.picker.undo`); `None` for one no file rebinds.
pub trait Named {
    fn id(&self) -> Option<&'static str>;
}

pub const fn key(code: KeyCode) -> Chord {
    Chord {
        key: Key::Code(code),
        mods: KeyModifiers::NONE,
        quiet: false,
        id: None,
    }
}

pub const fn with(code: KeyCode, mods: KeyModifiers) -> Chord {
    Chord {
        key: Key::Code(code),
        mods,
        quiet: false,
        id: None,
    }
}

pub const fn ch(c: char) -> Chord {
    key(KeyCode::Char(c))
}

pub const fn ctrl(c: char) -> Chord {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub const fn alt(c: char) -> Chord {
    with(KeyCode::Char(c), KeyModifiers::ALT)
}

/// Any typed character.
pub const TEXT: Chord = Chord {
    key: Key::Text,
    mods: KeyModifiers::NONE,
    quiet: false,
    id: None,
};

impl Chord {
    pub const fn quiet(self) -> Chord {
        Chord {
            quiet: true,
            ..self
        }
    }

    /// This key rebound under `id` rather than its action's own.
    pub const fn as_id(self, id: &'static str) -> Chord {
        Chord {
            id: Some(id),
            ..self
        }
    }

    /// Whether `other` is the same key as this (whatever their ids).
    /// Typing is no key of its own: a letter bound to an action is taken
    /// from it, as a screen's keys are from its field.
    pub fn same_key(&self, other: &Chord) -> bool {
        self.key != Key::Text && other.key != Key::Text && self.matches(&other.event())
    }

    /// Whether `k` is this key. Modifiers must be exactly the chord's
    /// (Ctrl+Alt+S is not Ctrl+S); terminals differ in reporting Shift
    /// with characters and with Shift+Tab, so that Shift is dropped
    /// first (a shifted letter becomes upper case).
    pub fn matches(&self, k: &KeyEvent) -> bool {
        let (code, mods) = normalize(k);
        match self.key {
            Key::Code(c) => c == code && mods == self.mods,
            Key::Text => {
                matches!(code, KeyCode::Char(_))
                    && !mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
            }
        }
    }

    /// A key event that is this chord (for tests and for a click that
    /// acts as a key).
    pub fn event(&self) -> KeyEvent {
        let code = match self.key {
            Key::Code(c) => c,
            Key::Text => KeyCode::Char('x'),
        };
        KeyEvent::new(code, self.mods)
    }

    /// Modifiers as shown, an upper-case letter's Shift included.
    fn shown_mods(&self) -> String {
        let mut s = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            s.push_str("ctrl+");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            s.push_str("alt+");
        }
        let upper = matches!(self.key, Key::Code(KeyCode::Char(c)) if c.is_ascii_uppercase());
        if self.mods.contains(KeyModifiers::SHIFT) || upper {
            s.push_str("shift+");
        }
        s
    }

    /// The key's own name, without modifiers.
    fn name(&self) -> String {
        let code = match self.key {
            Key::Text => return "type".into(),
            Key::Code(c) => c,
        };
        match code {
            KeyCode::Char(' ') => "space".into(),
            KeyCode::Char(c) => c.to_ascii_lowercase().to_string(),
            KeyCode::F(n) => format!("F{n}"),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            KeyCode::Enter => "enter".into(),
            KeyCode::Esc => "esc".into(),
            KeyCode::Tab => "tab".into(),
            KeyCode::BackTab => "shift+tab".into(),
            KeyCode::Backspace => "backspace".into(),
            KeyCode::Delete => "delete".into(),
            KeyCode::Insert => "insert".into(),
            other => format!("{other}").to_lowercase(),
        }
    }

    /// Keys written together as `a/b` (`↑/↓`, `ctrl+a/e`) when they
    /// follow each other with the same modifiers; others stand alone.
    fn family(&self) -> u8 {
        match self.key {
            Key::Code(KeyCode::Up | KeyCode::Down | KeyCode::Left | KeyCode::Right) => 1,
            Key::Code(KeyCode::PageUp | KeyCode::PageDown) => 2,
            Key::Code(KeyCode::Home | KeyCode::End) => 3,
            Key::Code(KeyCode::Char(c)) if c.is_alphanumeric() => 4,
            Key::Code(KeyCode::F(_)) => 5,
            Key::Code(KeyCode::Backspace | KeyCode::Delete) => 6,
            _ => 0,
        }
    }

    /// The chord as the help and the hints write it (`ctrl+s`, `shift+l`).
    pub fn label(&self) -> String {
        format!("{}{}", self.shown_mods(), self.name())
    }
}

/// The key as a table sees it: a character's Shift folded into it.
fn normalize(k: &KeyEvent) -> (KeyCode, KeyModifiers) {
    let mut mods = k.modifiers;
    let code = match k.code {
        KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::Char(c.to_ascii_uppercase())
        }
        KeyCode::BackTab => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        c => c,
    };
    (code, mods)
}

/// Chords written compactly: runs of the same modifiers and kind of key
/// share one prefix (`ctrl+d/t/u`, `↑/↓`); runs are joined by `sep`, or
/// by a space when one of them is several keys already (`↑/↓ PgUp/PgDn`,
/// never `↑/↓/PgUp/PgDn`).
pub fn label<'a>(chords: impl IntoIterator<Item = &'a Chord>, sep: &str) -> String {
    let mut groups: Vec<(String, u8, Vec<String>)> = Vec::new();
    for c in chords {
        let (mods, fam) = (c.shown_mods(), c.family());
        match groups.last_mut() {
            Some((m, f, names)) if *m == mods && *f == fam && fam != 0 => names.push(c.name()),
            _ => groups.push((mods, fam, vec![c.name()])),
        }
    }
    let sep = if groups.iter().any(|g| g.2.len() > 1) {
        " "
    } else {
        sep
    };
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(m, _, names)| format!("{m}{}", names.join("/")))
        .collect();
    parts.join(sep)
}

/// When a binding applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    Always,
    /// Only while the screen's text field (query, search) is empty: the
    /// key is the field's otherwise.
    EmptyField,
}

/// One line of the help: keys, each with its action, under one condition.
#[derive(Debug)]
pub struct Binding<A: 'static> {
    pub keys: &'static [(Chord, A)],
    pub when: When,
    pub help: &'static str,
}

/// A binding that always applies.
pub const fn bind<A>(keys: &'static [(Chord, A)], help: &'static str) -> Binding<A> {
    Binding {
        keys,
        when: When::Always,
        help,
    }
}

/// A binding that applies only while the screen's text field is empty.
pub const fn bind_when_empty<A>(keys: &'static [(Chord, A)], help: &'static str) -> Binding<A> {
    Binding {
        keys,
        when: When::EmptyField,
        help,
    }
}

impl<A> Binding<A> {
    pub fn label(&self) -> String {
        label(self.keys.iter().map(|(c, _)| c), " ")
    }
}

/// A screen's default keys, in the order they are tried (and listed). The
/// keys in force are these with the user's `keybindings.json` applied
/// ([`Keymap::rows`]): dispatch, help and hints all read those.
#[derive(Debug)]
pub struct Keymap<A: 'static>(pub &'static [Binding<A>]);

/// A key of a table as it is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<A> {
    pub chord: Chord,
    pub action: A,
    /// The id it is bound under (`None`: no file rebinds it).
    pub id: Option<&'static str>,
    /// Given by the user's file rather than arbor's defaults.
    pub user: bool,
}

/// A row of a table (a line of its help) as it is in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row<A> {
    pub keys: Vec<Entry<A>>,
    pub when: When,
    pub help: &'static str,
}

impl<A> Row<A> {
    /// The row's keys as the help writes them.
    pub fn label(&self) -> String {
        if self.keys.is_empty() {
            return "(no key)".into();
        }
        label(self.keys.iter().map(|e| &e.chord), " ")
    }
}

impl<A: Copy + PartialEq + Named> Keymap<A> {
    /// The table in force: the defaults with the user's bindings applied.
    pub fn rows(&self) -> Vec<Row<A>> {
        super::key_resolve::resolve(self.0, &super::keybindings::in_force()).rows
    }

    /// The action `k` stands for, with the screen's field empty or not.
    /// A key bound as itself comes before typing (a user may bind a
    /// character to an editing action).
    pub fn action(&self, k: &KeyEvent, field_empty: bool) -> Option<A> {
        let rows = self.rows();
        let keys = || {
            rows.iter()
                .filter(|r| r.when == When::Always || field_empty)
                .flat_map(|r| &r.keys)
                .filter(|e| e.chord.matches(k))
        };
        keys()
            .find(|e| e.chord.key != Key::Text)
            .or_else(|| keys().next())
            .map(|e| e.action)
    }

    /// Whether `k` is one of this table's keys whatever the field holds
    /// (a text field under it never sees it).
    pub fn takes(&self, k: &KeyEvent) -> bool {
        self.taker(k).is_some()
    }

    /// The key of this table that takes `k` whatever the field holds.
    pub fn taker(&self, k: &KeyEvent) -> Option<Entry<A>> {
        self.rows()
            .iter()
            .filter(|r| r.when == When::Always)
            .flat_map(|r| &r.keys)
            .find(|e| e.chord.matches(k))
            .copied()
    }

    /// The footer hint for `actions`: the names of their keys (quiet ones
    /// and those of conditional bindings left out), then `text`.
    pub fn hint(&self, actions: &[A], text: &str) -> String {
        format!("{} {text}", self.keys_of(actions))
    }

    /// The names of the keys bound to `actions`, as hints write them.
    pub fn keys_of(&self, actions: &[A]) -> String {
        let keys = self.hinted(actions);
        if keys.is_empty() {
            return "(no key)".into();
        }
        label(&keys, "/")
    }

    /// The keys bound to `actions` that hints name: not quiet, and not of
    /// a conditional binding.
    pub fn hinted(&self, actions: &[A]) -> Vec<Chord> {
        self.rows()
            .iter()
            .filter(|r| r.when == When::Always)
            .flat_map(|r| &r.keys)
            .filter(|e| !e.chord.quiet && actions.contains(&e.action))
            .map(|e| e.chord)
            .collect()
    }

    /// The help's rows: keys and what they do.
    pub fn help_rows(&self) -> Vec<HelpRow> {
        self.rows()
            .iter()
            .map(|r| HelpRow {
                keys: r.label(),
                text: r.help.to_string(),
            })
            .collect()
    }

    /// A screen's help: what typing does, this table's keys, then under
    /// `heading` the editing keys it leaves to its text field.
    pub fn help_with_field<F: Copy + PartialEq + Named>(
        &self,
        typing: &str,
        heading: &str,
        field: &Keymap<F>,
    ) -> Vec<HelpRow> {
        let mut rows = vec![HelpRow::typing(typing)];
        rows.extend(self.help_rows());
        rows.push(HelpRow::heading(heading));
        rows.extend(self.field_rows(field));
        rows
    }

    /// The help's rows for the editing keys of a text field under this
    /// table: the field's own bindings, less the keys this table takes
    /// for itself. Typing is left to the screen to describe
    /// ([`HelpRow::typing`]).
    pub fn field_rows<F: Copy + PartialEq + Named>(&self, field: &Keymap<F>) -> Vec<HelpRow> {
        field
            .rows()
            .iter()
            .filter_map(|r| {
                let keys: Vec<&Chord> = r
                    .keys
                    .iter()
                    .map(|e| &e.chord)
                    .filter(|c| c.key != Key::Text && !self.takes(&c.event()))
                    .collect();
                (!keys.is_empty()).then(|| HelpRow {
                    keys: label(keys, " "),
                    text: r.help.to_string(),
                })
            })
            .collect()
    }

    /// Rows of `field` whose keys this table takes only some of, leaving
    /// one of the row's actions without a key: its help text would then
    /// describe a key the field does not have here. Tables are written so
    /// that there are none (a test checks).
    pub fn partly_taken<F: Copy + PartialEq + Named>(&self, field: &Keymap<F>) -> Vec<String> {
        field
            .rows()
            .iter()
            .filter(|r| {
                r.keys.iter().any(|e| {
                    r.keys
                        .iter()
                        .filter(|x| x.action == e.action)
                        .all(|x| self.takes(&x.chord.event()))
                }) && !r.keys.iter().all(|e| self.takes(&e.chord.event()))
            })
            .map(Row::label)
            .collect()
    }

    /// This table's help as a Markdown table ([`markdown`]).
    pub fn markdown(&self) -> String {
        markdown(&self.help_rows())
    }
}

/// One row of a help overlay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpRow {
    pub keys: String,
    pub text: String,
}

impl HelpRow {
    /// What typing does on a screen.
    pub fn typing(text: &str) -> HelpRow {
        HelpRow {
            keys: TEXT.label(),
            text: text.to_string(),
        }
    }

    /// A heading row (keys empty).
    pub fn heading(text: &str) -> HelpRow {
        HelpRow {
            keys: String::new(),
            text: text.to_string(),
        }
    }
}

/// A help's rows as a Markdown table, as `docs/` shows a screen's keys:
/// the keys as the help overlay names them, in code spans, then the help
/// text; a heading row becomes a bold row of its own. `tests/keymap_docs.rs`
/// compares this with the blocks in `docs/` (so the docs cannot drift from
/// the tables either).
pub fn markdown(rows: &[HelpRow]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("| key | action |\n| --- | --- |\n");
    for r in rows {
        if r.keys.is_empty() {
            out.push_str(&format!("| **{}** | |\n", cell(&r.text)));
        } else {
            out.push_str(&format!("| `{}` | {} |\n", cell(&r.keys), cell(&r.text)));
        }
    }
    out
}

/// A move of a view over its lines: by one, by a page, to an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scroll {
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
}

impl Scroll {
    /// The first line shown, `at`, moved by this over pages of `page`
    /// lines, never past `max`.
    pub fn apply(self, at: usize, page: usize, max: usize) -> usize {
        let page = page.max(1);
        let to = match self {
            Scroll::Up => at.saturating_sub(1),
            Scroll::Down => at.saturating_add(1),
            Scroll::PageUp => at.saturating_sub(page),
            Scroll::PageDown => at.saturating_add(page),
            Scroll::Top => 0,
            Scroll::Bottom => max,
        };
        to.min(max)
    }
}

/// The answer to a question or a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Yes,
    No,
}

/// Atomic's ids for a list's or a question's Enter and Esc.
pub const CONFIRM_ID: &str = "tui.select.confirm";
pub const CANCEL_ID: &str = "tui.select.cancel";

/// Answers are bound per key (`y` is not Enter): see each table.
impl Named for Answer {
    fn id(&self) -> Option<&'static str> {
        None
    }
}

impl Named for Scroll {
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            Scroll::Up => "tui.select.up",
            Scroll::Down => "tui.select.down",
            Scroll::PageUp => "tui.select.pageUp",
            Scroll::PageDown => "tui.select.pageDown",
            Scroll::Top => FIRST_ID,
            Scroll::Bottom => LAST_ID,
        })
    }
}

/// arbor's id for the keys that quit arbor from a list or while it works.
pub const QUIT_ID: &str = "arbor.quit";

/// arbor's ids for Home and End in every list and scrolled view.
pub const FIRST_ID: &str = "arbor.select.first";
pub const LAST_ID: &str = "arbor.select.last";

/// A yes/no question (Atomic's `tui.select.confirm` / `cancel`); other
/// keys are ignored while it is up.
pub const CONFIRM: Keymap<Answer> = Keymap(&[
    bind(
        &[(key(KeyCode::Enter).as_id(CONFIRM_ID), Answer::Yes)],
        "yes",
    ),
    bind(
        &[
            (key(KeyCode::Esc).as_id(CANCEL_ID), Answer::No),
            (ctrl('c').as_id(CANCEL_ID), Answer::No),
        ],
        "no",
    ),
]);

/// A one-line prompt: Enter takes the text, Esc drops it; other keys
/// edit the field.
pub const PROMPT: Keymap<Answer> = Keymap(&[
    bind(
        &[(key(KeyCode::Enter).as_id(CONFIRM_ID), Answer::Yes)],
        "save",
    ),
    bind(
        &[
            (key(KeyCode::Esc).as_id(CANCEL_ID), Answer::No),
            (ctrl('c').quiet().as_id(CANCEL_ID), Answer::No),
        ],
        "cancel",
    ),
]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_share_prefixes_within_a_kind() {
        let c = [
            ctrl('d'),
            ctrl('t'),
            ctrl('u'),
            with(KeyCode::Left, KeyModifiers::CONTROL),
        ];
        assert_eq!(label(&c, "/"), "ctrl+d/t/u ctrl+←");
        let c = [
            key(KeyCode::Up),
            key(KeyCode::Down),
            key(KeyCode::PageUp),
            key(KeyCode::PageDown),
            key(KeyCode::Home),
            key(KeyCode::End),
        ];
        assert_eq!(label(&c, " "), "↑/↓ PgUp/PgDn Home/End");
        assert_eq!(label(&[key(KeyCode::Esc), ctrl('c')], "/"), "esc/ctrl+c");
        assert_eq!(ch('L').label(), "shift+l");
        assert_eq!(ctrl('O').label(), "ctrl+shift+o");
        assert_eq!(key(KeyCode::BackTab).label(), "shift+tab");
    }

    #[test]
    fn shift_is_part_of_a_character() {
        let ev = |code, mods| KeyEvent::new(code, mods);
        assert!(ch('L').matches(&ev(KeyCode::Char('L'), KeyModifiers::SHIFT)));
        assert!(ch('L').matches(&ev(KeyCode::Char('l'), KeyModifiers::SHIFT)));
        assert!(ch('?').matches(&ev(KeyCode::Char('?'), KeyModifiers::SHIFT)));
        assert!(ctrl('O').matches(&ev(
            KeyCode::Char('o'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT
        )));
        assert!(!ctrl('o').matches(&ev(
            KeyCode::Char('o'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT
        )));
        assert!(key(KeyCode::BackTab).matches(&ev(KeyCode::BackTab, KeyModifiers::SHIFT)));
        // Other modifiers make another key.
        assert!(!ctrl('s').matches(&ev(
            KeyCode::Char('s'),
            KeyModifiers::CONTROL | KeyModifiers::ALT
        )));
        assert!(TEXT.matches(&ev(KeyCode::Char('A'), KeyModifiers::SHIFT)));
        assert!(!TEXT.matches(&ev(KeyCode::Char('a'), KeyModifiers::CONTROL)));
    }
}
