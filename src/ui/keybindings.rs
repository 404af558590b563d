//! The user's keybindings in force: read from Atomic's `keybindings.json`
//! ([`super::key_file`]) at start and whenever the file changes, and
//! installed for the screens' tables to read ([`super::keymap::Keymap::rows`]).
//!
//! The bindings in force are held per thread: the event loop's thread
//! installs them (at start, and on `AppEvent::Keys` when the file
//! changes) and draws and dispatches there, and a test that installs
//! some changes no other test's keys.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::keymap::Chord;

/// What a `keybindings.json` says, as far as arbor could read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserKeys {
    /// The file looked for (`None`: no home to look in).
    pub file: Option<PathBuf>,
    /// Whether it was there.
    pub found: bool,
    /// For each id the file binds (old names migrated), the keys it gives.
    pub bound: BTreeMap<String, Vec<Chord>>,
    /// One line for each thing arbor could not use, and each key that
    /// would have done two things on one screen.
    pub problems: Vec<String>,
}

impl UserKeys {
    /// Where a binding of `id` comes from: the file, or arbor's defaults.
    pub fn source(&self, id: Option<&str>) -> String {
        match (id, &self.file) {
            (Some(id), Some(f)) if self.bound.contains_key(id) => f.display().to_string(),
            _ => "default".into(),
        }
    }
}

thread_local! {
    static IN_FORCE: RefCell<Arc<UserKeys>> = RefCell::new(Arc::new(UserKeys::default()));
}

/// The bindings in force on this thread (none: arbor's defaults).
pub fn in_force() -> Arc<UserKeys> {
    IN_FORCE.with(|k| k.borrow().clone())
}

/// Puts `keys` in force on this thread.
pub fn install(keys: Arc<UserKeys>) {
    IN_FORCE.with(|k| *k.borrow_mut() = keys);
}

/// Reads the user's file (see [`super::key_file::location`]) and checks
/// it against every screen: the bindings with every problem said.
pub fn load() -> UserKeys {
    load_from(super::key_file::location())
}

/// [`load`] from a given file.
pub fn load_from(file: Option<PathBuf>) -> UserKeys {
    let mut keys = match &file {
        Some(f) => super::key_file::read(f, &super::key_screens::known_ids()),
        None => UserKeys::default(),
    };
    keys.file = file;
    let clashes = super::key_screens::clashes(&keys);
    keys.problems.extend(clashes);
    keys
}

/// The status line's one line for `keys`' problems (`None`: none).
pub fn summary(keys: &UserKeys) -> Option<String> {
    let first = keys.problems.first()?;
    Some(match keys.problems.len() {
        1 => first.clone(),
        n => format!("{first} (and {} more: arbor keys)", n - 1),
    })
}
