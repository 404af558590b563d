//! Atomic's key names (`ctrl+shift+x`, `alt+enter`, `pageUp`, `f5`, `?`),
//! as its `keybindings.json` writes them, read into arbor's chords and
//! written back out (for `arbor keys`).
//!
//! The names are those of Atomic's docs/keybindings.md: modifiers `ctrl`,
//! `shift`, `alt` in any order, then one key; the whole name is read
//! without regard to case. A shifted letter is the capital (terminals send
//! `L` for Shift+L), as arbor's tables hold it.

use crossterm::event::{KeyCode, KeyModifiers};

use super::keymap::{with, Chord};

/// Why a key name could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadKey(pub String);

/// The named keys, as Atomic spells them (lower-cased for lookup).
const NAMED: &[(&str, KeyCode)] = &[
    ("escape", KeyCode::Esc),
    ("esc", KeyCode::Esc),
    ("enter", KeyCode::Enter),
    ("return", KeyCode::Enter),
    ("tab", KeyCode::Tab),
    ("space", KeyCode::Char(' ')),
    ("backspace", KeyCode::Backspace),
    ("delete", KeyCode::Delete),
    ("insert", KeyCode::Insert),
    ("home", KeyCode::Home),
    ("end", KeyCode::End),
    ("pageup", KeyCode::PageUp),
    ("pagedown", KeyCode::PageDown),
    ("up", KeyCode::Up),
    ("down", KeyCode::Down),
    ("left", KeyCode::Left),
    ("right", KeyCode::Right),
];

/// The symbols Atomic names as themselves.
const SYMBOLS: &str = "`-=[]\\;',./!@#$%^&*()_+|~{}:<>?";

/// A key name of Atomic's (`ctrl+r`, `shift+l`, `alt+enter`) as a chord.
pub fn parse(name: &str) -> Result<Chord, BadKey> {
    let lower = name.trim().to_ascii_lowercase();
    // `ctrl++` names the `+` key: the last part is the key even when empty
    // after a split on `+`.
    let (mods_part, key) = match lower.strip_suffix("++") {
        Some(m) => (m, "+"),
        None => match lower.rsplit_once('+') {
            Some((m, k)) => (m, k),
            None => ("", lower.as_str()),
        },
    };
    let mut mods = KeyModifiers::NONE;
    for m in mods_part.split('+').filter(|m| !m.is_empty()) {
        mods |= match m {
            "ctrl" => KeyModifiers::CONTROL,
            "shift" => KeyModifiers::SHIFT,
            "alt" => KeyModifiers::ALT,
            "super" => {
                return Err(BadKey(format!(
                    "\"{name}\": super is not a key arbor can read from a terminal"
                )))
            }
            other => return Err(BadKey(format!("\"{name}\": unknown modifier \"{other}\""))),
        };
    }
    let code = key_code(key).ok_or_else(|| BadKey(format!("\"{name}\": unknown key name")))?;
    chord(code, mods).map_err(|why| BadKey(format!("\"{name}\": {why}")))
}

fn key_code(key: &str) -> Option<KeyCode> {
    if let Some((_, c)) = NAMED.iter().find(|(n, _)| *n == key) {
        return Some(*c);
    }
    if let Some(n) = key.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
        return (1..=12).contains(&n).then_some(KeyCode::F(n));
    }
    let mut chars = key.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) if c.is_ascii_alphanumeric() || SYMBOLS.contains(c) => {
            Some(KeyCode::Char(c))
        }
        _ => None,
    }
}

/// The chord for a key and its modifiers, Shift folded into a letter as
/// the tables hold it.
fn chord(code: KeyCode, mut mods: KeyModifiers) -> Result<Chord, &'static str> {
    let shift = mods.contains(KeyModifiers::SHIFT);
    let code = match code {
        KeyCode::Char(c) if shift && c.is_ascii_alphabetic() => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::Char(c.to_ascii_uppercase())
        }
        KeyCode::Char(' ') => KeyCode::Char(' '),
        // A terminal sends the shifted symbol itself (`?`, not Shift+/).
        KeyCode::Char(_) if shift => return Err(
            "a shifted digit or symbol is typed as the character itself (write `?`, not `shift+/`)",
        ),
        KeyCode::Tab if shift => {
            mods.remove(KeyModifiers::SHIFT);
            KeyCode::BackTab
        }
        c => c,
    };
    Ok(with(code, mods))
}

/// A chord in Atomic's key syntax (`ctrl+shift+o`, `pageUp`, `shift+tab`):
/// what `keybindings.json` would say for it.
pub fn name(c: &Chord) -> String {
    use super::keymap::Key;
    let Key::Code(code) = c.key else {
        return "(typing)".into();
    };
    let mut s = String::new();
    if c.mods.contains(KeyModifiers::CONTROL) {
        s.push_str("ctrl+");
    }
    let upper = matches!(code, KeyCode::Char(ch) if ch.is_ascii_uppercase());
    if c.mods.contains(KeyModifiers::SHIFT) || upper || code == KeyCode::BackTab {
        s.push_str("shift+");
    }
    if c.mods.contains(KeyModifiers::ALT) {
        s.push_str("alt+");
    }
    let key = match code {
        KeyCode::Char(' ') => "space".to_string(),
        KeyCode::Char(ch) => ch.to_ascii_lowercase().to_string(),
        KeyCode::F(n) => format!("f{n}"),
        KeyCode::BackTab | KeyCode::Tab => "tab".into(),
        KeyCode::PageUp => "pageUp".into(),
        KeyCode::PageDown => "pageDown".into(),
        KeyCode::Esc => "escape".into(),
        other => NAMED.iter().find(|(_, c)| *c == other).map_or_else(
            || format!("{other:?}").to_lowercase(),
            |(n, _)| n.to_string(),
        ),
    };
    s.push_str(&key);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::keymap::{alt, ch, ctrl, key};

    #[test]
    fn atomic_names_read_as_chords() {
        assert_eq!(parse("ctrl+r"), Ok(ctrl('r')));
        assert_eq!(parse("Ctrl+R"), Ok(ctrl('r')));
        assert_eq!(parse("shift+l"), Ok(ch('L')));
        assert_eq!(parse("shift+ctrl+o"), Ok(ctrl('O')));
        assert_eq!(parse("ctrl+shift+o"), Ok(ctrl('O')));
        assert_eq!(
            parse("alt+enter"),
            Ok(with(KeyCode::Enter, KeyModifiers::ALT))
        );
        assert_eq!(parse("pageUp"), Ok(key(KeyCode::PageUp)));
        assert_eq!(parse("escape"), Ok(key(KeyCode::Esc)));
        assert_eq!(parse("esc"), Ok(key(KeyCode::Esc)));
        assert_eq!(parse("shift+tab"), Ok(key(KeyCode::BackTab)));
        assert_eq!(parse("f12"), Ok(key(KeyCode::F(12))));
        assert_eq!(parse("?"), Ok(ch('?')));
        assert_eq!(parse("ctrl+]"), Ok(ctrl(']')));
        assert_eq!(parse("ctrl++"), Ok(ctrl('+')));
        assert_eq!(parse("alt+b"), Ok(alt('b')));
        assert_eq!(parse("space"), Ok(ch(' ')));
        assert_eq!(
            parse("ctrl+backspace"),
            Ok(with(KeyCode::Backspace, KeyModifiers::CONTROL))
        );
    }

    #[test]
    fn bad_names_say_why() {
        for bad in [
            "ctrl+rr", "hyper+x", "f13", "", "ctrl+", "super+k", "shift+/",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(parse("ctrl+rr").unwrap_err().0.contains("unknown key name"));
    }

    #[test]
    fn names_round_trip() {
        for n in [
            "ctrl+r",
            "shift+l",
            "ctrl+shift+o",
            "alt+enter",
            "pageUp",
            "shift+tab",
            "f2",
            "escape",
            "ctrl+left",
            "space",
            "?",
        ] {
            assert_eq!(name(&parse(n).unwrap()), n);
        }
    }
}
