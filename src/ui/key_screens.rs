//! Every key table of arbor's screens in one list: the ids a
//! `keybindings.json` may bind, the clashes a user's bindings make on a
//! screen, and the table in force that `arbor keys` prints.

use std::collections::BTreeSet;

use super::key_file::FILE_NAME;
use super::key_resolve::resolve;
use super::key_syntax;
use super::keybindings::UserKeys;
use super::keymap::{Chord, Keymap, Named, When};

/// One binding in force: an id's keys on a screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub id: Option<&'static str>,
    pub keys: Vec<Chord>,
    /// The help's text for the row it is in.
    pub help: &'static str,
    /// From the user's file.
    pub user: bool,
    /// Only while the screen's text field is empty.
    pub when_empty: bool,
}

/// A screen's table, whatever its actions.
pub trait Table {
    /// The bindings of the table as `user` leaves them.
    fn lines(&self, user: &UserKeys) -> Vec<Line>;
    /// What `user`'s bindings clash with, in this table.
    fn clash_lines(&self, screen: &str, user: &UserKeys) -> Vec<String>;
    /// Whether `c` is one of this table's keys whatever the field holds:
    /// the id that has it.
    fn holder(&self, c: &Chord, user: &UserKeys) -> Option<Option<&'static str>>;
}

impl<A: Copy + PartialEq + Named> Table for Keymap<A> {
    fn lines(&self, user: &UserKeys) -> Vec<Line> {
        let mut out: Vec<Line> = Vec::new();
        for row in resolve(self.0, user).rows {
            let start = out.len();
            for e in &row.keys {
                match out[start..].iter_mut().find(|l| l.id == e.id) {
                    Some(l) => l.keys.push(e.chord),
                    None => out.push(Line {
                        id: e.id,
                        keys: vec![e.chord],
                        help: row.help,
                        user: e.user,
                        when_empty: row.when == When::EmptyField,
                    }),
                }
            }
        }
        // An id bound to no key still has a line.
        for (id, given) in &user.bound {
            if given.is_empty() {
                if let Some((help, when)) = self.0.iter().find_map(|b| {
                    b.keys
                        .iter()
                        .any(|(c, a)| c.id.or_else(|| a.id()) == Some(id.as_str()))
                        .then_some((b.help, b.when))
                }) {
                    let id = ids_of(self).into_iter().find(|i| *i == id.as_str());
                    out.push(Line {
                        id,
                        keys: Vec::new(),
                        help,
                        user: true,
                        when_empty: when == When::EmptyField,
                    });
                }
            }
        }
        out
    }

    fn clash_lines(&self, screen: &str, user: &UserKeys) -> Vec<String> {
        resolve(self.0, user)
            .clashes
            .iter()
            .map(|c| {
                format!(
                    "{FILE_NAME}: {} is both {} and {} in the {screen}; it does {}",
                    key_syntax::name(&c.key),
                    id_name(c.kept),
                    id_name(c.lost),
                    id_name(c.kept),
                )
            })
            .collect()
    }

    fn holder(&self, c: &Chord, user: &UserKeys) -> Option<Option<&'static str>> {
        resolve(self.0, user)
            .rows
            .iter()
            .filter(|r| r.when == When::Always)
            .flat_map(|r| &r.keys)
            .find(|e| e.chord.same_key(c))
            .map(|e| e.id)
    }
}

fn id_name(id: Option<&str>) -> &str {
    id.unwrap_or("a fixed key")
}

/// The ids a table's defaults name.
fn ids_of<A: Copy + Named>(map: &Keymap<A>) -> Vec<&'static str> {
    map.0
        .iter()
        .flat_map(|b| b.keys)
        .filter_map(|(c, a)| c.id.or_else(|| a.id()))
        .collect()
}

/// Every screen's table, named as `arbor keys` and the clash lines name
/// them; a screen with a text field is followed by the field's table.
pub fn screens() -> Vec<(&'static str, &'static dyn Table)> {
    use super::{app, input, keymap, picker, tree, widgets};
    vec![
        ("picker", &picker::KEYS),
        ("text fields", &input::KEYS),
        ("picker's labels list", &picker::LABEL_KEYS),
        ("permanent delete question", &picker::PERMANENT_KEYS),
        ("picker while trashing", &picker::TRASHING_KEYS),
        ("tree", &tree::KEYS),
        ("tree's context view", &tree::CONTEXT_KEYS),
        ("tree's compare view", &tree::COMPARE_KEYS),
        ("tree's continue box", &tree::CONTINUE_KEYS),
        ("tree's export question", &tree::EXPORT_KEYS),
        ("tree's offer to resume", &tree::OFFER_KEYS),
        ("questions", &keymap::CONFIRM),
        ("prompts", &keymap::PROMPT),
        ("resume elsewhere question", &app::RESUME_HERE_KEYS),
        ("help", &widgets::HELP_KEYS),
    ]
}

/// Every id arbor binds a key under, on any screen.
pub fn known_ids() -> BTreeSet<&'static str> {
    use super::{app, input, keymap, picker, tree, widgets};
    let mut ids = BTreeSet::new();
    ids.extend(ids_of(&picker::KEYS));
    ids.extend(ids_of(&input::KEYS));
    ids.extend(ids_of(&picker::LABEL_KEYS));
    ids.extend(ids_of(&picker::PERMANENT_KEYS));
    ids.extend(ids_of(&picker::TRASHING_KEYS));
    ids.extend(ids_of(&tree::KEYS));
    ids.extend(ids_of(&tree::CONTEXT_KEYS));
    ids.extend(ids_of(&tree::COMPARE_KEYS));
    ids.extend(ids_of(&tree::CONTINUE_KEYS));
    ids.extend(ids_of(&tree::EXPORT_KEYS));
    ids.extend(ids_of(&tree::OFFER_KEYS));
    ids.extend(ids_of(&keymap::CONFIRM));
    ids.extend(ids_of(&keymap::PROMPT));
    ids.extend(ids_of(&app::RESUME_HERE_KEYS));
    ids.extend(ids_of(&widgets::HELP_KEYS));
    ids
}

/// One line for each key `user`'s bindings make do two things on one
/// screen, and each editing key of theirs a screen's own key hides from
/// its text field.
pub fn clashes(user: &UserKeys) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (name, table) in screens() {
        for l in table.clash_lines(name, user) {
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    let field = super::input::KEYS.lines(user);
    let defaults = super::input::KEYS.lines(&UserKeys::default());
    // A default editing key a screen takes is the screen's by design
    // (its help lists it there); one the user chose is said.
    let chosen = |l: &Line, k: &Chord| {
        !defaults
            .iter()
            .any(|d| d.id == l.id && d.keys.iter().any(|dk| dk.same_key(k)))
    };
    for (screen, table) in [
        ("picker", &super::picker::KEYS as &dyn Table),
        ("tree", &super::tree::KEYS),
    ] {
        // A key the user gave the screen that was one of its field's.
        for l in table.lines(user).iter().filter(|l| l.user && !l.when_empty) {
            for k in &l.keys {
                if let Some(f) = field
                    .iter()
                    .find(|f| f.id.is_some() && f.keys.iter().any(|fk| fk.same_key(k)))
                {
                    out.push(format!(
                        "{FILE_NAME}: {} is both {} and {} in the {screen}'s text field; there it does {}",
                        key_syntax::name(k),
                        id_name(l.id),
                        id_name(f.id),
                        id_name(l.id),
                    ));
                }
            }
        }
        for l in field.iter().filter(|l| l.user) {
            for k in l.keys.iter().filter(|k| chosen(l, k)) {
                if let Some(by) = table.holder(k, user) {
                    out.push(format!(
                        "{FILE_NAME}: {} is both {} and the {screen}'s {}; in the {screen} it does {}",
                        key_syntax::name(k),
                        id_name(l.id),
                        id_name(by),
                        id_name(by),
                    ));
                }
            }
        }
    }
    out
}
