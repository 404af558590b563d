//! Reading Atomic's `keybindings.json`: where it is, its old un-namespaced
//! ids migrated as Atomic migrates them, each id's key or list of keys
//! read with Atomic's key syntax. Whatever cannot be read is said in one
//! line and leaves the defaults in force for what it named.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::key_syntax;
use super::keybindings::UserKeys;
use arbor_store::paths::{agent_dir, Env, ProcessEnv};

/// The file's name in an agent dir.
pub const FILE_NAME: &str = "keybindings.json";

/// Where the user's bindings are: in the agent dir the environment names
/// (as the store's is found), else Atomic's `~/.atomic/agent`, else, for
/// a pi-only setup (no `~/.atomic/agent`), pi's `~/.pi/agent`.
pub fn location() -> Option<PathBuf> {
    location_in(&ProcessEnv)
}

pub fn location_in(env: &dyn Env) -> Option<PathBuf> {
    Some(agent_dir(env)?.join(FILE_NAME))
}

/// Atomic's old names for its ids, before they were namespaced (its
/// `keybindings.json` may still use them).
const OLD_NAMES: &[(&str, &str)] = &[
    ("cursorUp", "tui.editor.cursorUp"),
    ("cursorDown", "tui.editor.cursorDown"),
    ("cursorLeft", "tui.editor.cursorLeft"),
    ("cursorRight", "tui.editor.cursorRight"),
    ("cursorWordLeft", "tui.editor.cursorWordLeft"),
    ("cursorWordRight", "tui.editor.cursorWordRight"),
    ("cursorLineStart", "tui.editor.cursorLineStart"),
    ("cursorLineEnd", "tui.editor.cursorLineEnd"),
    ("jumpForward", "tui.editor.jumpForward"),
    ("jumpBackward", "tui.editor.jumpBackward"),
    ("pageUp", "tui.editor.pageUp"),
    ("pageDown", "tui.editor.pageDown"),
    ("deleteCharBackward", "tui.editor.deleteCharBackward"),
    ("deleteCharForward", "tui.editor.deleteCharForward"),
    ("deleteWordBackward", "tui.editor.deleteWordBackward"),
    ("deleteWordForward", "tui.editor.deleteWordForward"),
    ("deleteToLineStart", "tui.editor.deleteToLineStart"),
    ("deleteToLineEnd", "tui.editor.deleteToLineEnd"),
    ("yank", "tui.editor.yank"),
    ("yankPop", "tui.editor.yankPop"),
    ("undo", "tui.editor.undo"),
    ("newLine", "tui.input.newLine"),
    ("submit", "tui.input.submit"),
    ("tab", "tui.input.tab"),
    ("copy", "tui.input.copy"),
    ("selectUp", "tui.select.up"),
    ("selectDown", "tui.select.down"),
    ("selectPageUp", "tui.select.pageUp"),
    ("selectPageDown", "tui.select.pageDown"),
    ("selectConfirm", "tui.select.confirm"),
    ("selectCancel", "tui.select.cancel"),
    ("interrupt", "app.interrupt"),
    ("clear", "app.clear"),
    ("exit", "app.exit"),
    ("suspend", "app.suspend"),
    ("cycleThinkingLevel", "app.thinking.cycle"),
    ("cycleModelForward", "app.model.cycleForward"),
    ("cycleModelBackward", "app.model.cycleBackward"),
    ("selectModel", "app.model.select"),
    ("expandTools", "app.tools.expand"),
    ("toggleThinking", "app.thinking.toggle"),
    ("toggleSessionNamedFilter", "app.session.toggleNamedFilter"),
    ("externalEditor", "app.editor.external"),
    ("followUp", "app.message.followUp"),
    ("dequeue", "app.message.dequeue"),
    ("pasteImage", "app.clipboard.pasteImage"),
    ("newSession", "app.session.new"),
    ("tree", "app.session.tree"),
    ("fork", "app.session.fork"),
    ("resume", "app.session.resume"),
    ("treeFoldOrUp", "app.tree.foldOrUp"),
    ("treeUnfoldOrDown", "app.tree.unfoldOrDown"),
    ("treeEditLabel", "app.tree.editLabel"),
    ("treeToggleLabelTimestamp", "app.tree.toggleLabelTimestamp"),
    ("toggleSessionPath", "app.session.togglePath"),
    ("toggleSessionSort", "app.session.toggleSort"),
    ("renameSession", "app.session.rename"),
    ("deleteSession", "app.session.delete"),
    ("deleteSessionNoninvasive", "app.session.deleteNoninvasive"),
];

/// Atomic's ids that name no action of arbor's, and why: a file that
/// binds them is Atomic's as much as arbor's, so they are passed over
/// without a word.
pub const NOT_HONOURED: &[(&str, &str)] = &[
    (
        "tui.editor.cursorUp",
        "arbor's text fields are one line: ↑ moves the list",
    ),
    (
        "tui.editor.cursorDown",
        "arbor's text fields are one line: ↓ moves the list",
    ),
    (
        "tui.editor.jumpForward",
        "arbor's fields have no jump to a character",
    ),
    (
        "tui.editor.jumpBackward",
        "arbor's fields have no jump to a character",
    ),
    ("tui.editor.pageUp", "arbor's text fields are one line"),
    ("tui.editor.pageDown", "arbor's text fields are one line"),
    ("tui.editor.yank", "arbor's fields keep no kill ring"),
    ("tui.editor.yankPop", "arbor's fields keep no kill ring"),
    ("tui.editor.undo", "arbor's fields keep no undo history"),
    ("tui.input.newLine", "arbor's text fields are one line"),
    (
        "tui.input.submit",
        "arbor's prompts submit with tui.select.confirm, as Atomic's tree label prompt does",
    ),
    ("tui.input.copy", "arbor has no text selection to copy"),
    (
        "app.interrupt",
        "Atomic's editor: nothing runs in arbor to interrupt",
    ),
    ("app.clear", "Atomic's editor"),
    ("app.exit", "Atomic's editor"),
    (
        "app.suspend",
        "Atomic's editor (arbor's Ctrl+Z is the picker's undo)",
    ),
    ("app.thinking.cycle", "Atomic's model settings"),
    ("app.thinking.toggle", "Atomic's chat view"),
    ("app.model.cycleForward", "Atomic's model settings"),
    ("app.model.cycleBackward", "Atomic's model settings"),
    ("app.model.select", "Atomic's model settings"),
    ("app.tools.expand", "Atomic's chat view"),
    ("app.editor.external", "Atomic's editor"),
    ("app.message.followUp", "Atomic's message queue"),
    ("app.message.dequeue", "Atomic's message queue"),
    ("app.clipboard.pasteImage", "Atomic's editor"),
    (
        "app.session.new",
        "a command of Atomic's editor, not a key of /resume or /tree",
    ),
    (
        "app.session.tree",
        "a command of Atomic's editor (arbor's picker opens the tree with arbor.picker.tree)",
    ),
    (
        "app.session.fork",
        "a command of Atomic's editor (arbor forks from the tree's Enter)",
    ),
    (
        "app.session.resume",
        "a command of Atomic's editor: arbor is the resume screen",
    ),
    ("app.models.save", "Atomic's scoped models selector"),
    ("app.models.enableAll", "Atomic's scoped models selector"),
    ("app.models.clearAll", "Atomic's scoped models selector"),
    (
        "app.models.toggleProvider",
        "Atomic's scoped models selector",
    ),
    ("app.models.reorderUp", "Atomic's scoped models selector"),
    ("app.models.reorderDown", "Atomic's scoped models selector"),
];

/// Reads `path`: the bindings of the ids in `known` (arbor's), and a
/// line for each thing that could not be used.
pub fn read(path: &Path, known: &BTreeSet<&'static str>) -> UserKeys {
    let mut keys = UserKeys {
        file: Some(path.to_path_buf()),
        ..UserKeys::default()
    };
    let name = FILE_NAME;
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return keys,
        Err(e) => {
            keys.problems.push(format!(
                "{name}: cannot be read ({e}); the default keys are in force"
            ));
            return keys;
        }
    };
    keys.found = true;
    let value: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            keys.problems.push(format!(
                "{name}: not valid JSON ({e}); the default keys are in force"
            ));
            return keys;
        }
    };
    let Some(obj) = value.as_object() else {
        keys.problems.push(format!(
            "{name}: not an object of action ids and keys; the default keys are in force"
        ));
        return keys;
    };
    for (given, v) in obj {
        let id = OLD_NAMES
            .iter()
            .find(|(old, _)| old == given)
            .map_or(given.as_str(), |(_, new)| new);
        // Both the old name and the new: the new one's keys (Atomic).
        if id != given && obj.contains_key(id) {
            continue;
        }
        if !known.contains(id) {
            if !NOT_HONOURED.iter().any(|(n, _)| *n == id) {
                keys.problems.push(format!(
                    "{name}: unknown action id \"{given}\" (`arbor keys` lists arbor's)"
                ));
            }
            continue;
        }
        match read_keys(v) {
            Ok(chords) => {
                keys.bound.insert(id.to_string(), chords);
            }
            Err(why) => keys
                .problems
                .push(format!("{name}: {id}: {why}; it keeps its default keys")),
        }
    }
    keys
}

/// An id's value: one key name or a list of them.
fn read_keys(v: &serde_json::Value) -> Result<Vec<super::keymap::Chord>, String> {
    let names: Vec<&str> = match v {
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Array(a) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .ok_or("a list holding something else than key names")
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("neither a key name nor a list of them".into()),
    };
    let mut chords = Vec::new();
    for n in names {
        let c = key_syntax::parse(n).map_err(|e| e.0)?;
        // Atomic drops repeats.
        if !chords.contains(&c) {
            chords.push(c);
        }
    }
    Ok(chords)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct FakeEnv(Vec<(&'static str, String)>, PathBuf);

    impl Env for FakeEnv {
        fn var(&self, key: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
        }
        fn home(&self) -> Option<PathBuf> {
            Some(self.1.clone())
        }
    }

    #[test]
    fn the_file_is_in_the_agent_dir_else_pis() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().to_path_buf();
        let env = FakeEnv(vec![("PI_CODING_AGENT_DIR", "/agent".into())], h.clone());
        assert_eq!(
            location_in(&env),
            Some(PathBuf::from("/agent/keybindings.json"))
        );
        let env = FakeEnv(Vec::new(), h.clone());
        let atomic = h.join(".atomic/agent/keybindings.json");
        // Neither installed: Atomic's place (where a file would go).
        assert_eq!(location_in(&env), Some(atomic.clone()));
        // pi only: pi's.
        std::fs::create_dir_all(h.join(".pi/agent")).unwrap();
        assert_eq!(
            location_in(&env),
            Some(h.join(".pi/agent/keybindings.json"))
        );
        // Atomic there too: Atomic's.
        std::fs::create_dir_all(h.join(".atomic/agent")).unwrap();
        assert_eq!(location_in(&env), Some(atomic));
    }
}
