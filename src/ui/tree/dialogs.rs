//! The tree's questions and prompts, and what their keys do: the label
//! and branch-summary prompts, continue from here (branch or fork), the
//! export question, the migration asked before a write, and the offer to
//! resume after one.

use crossterm::event::{KeyCode, KeyEvent};

use super::state::{Pending, TreeDialog, TreeState};
use crate::ui::app::{Effect, Outcome};
use crate::ui::input::{LineInput, Prompted};
use crate::ui::keymap::{
    bind, ch, ctrl, key, Answer, Keymap, Named, CANCEL_ID, CONFIRM, CONFIRM_ID,
};

/// The Continue box's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    Branch,
    Fork,
    Copy,
    Cancel,
}

impl Named for Choice {
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            Choice::Branch => "arbor.tree.continue.branch",
            Choice::Fork => "arbor.tree.continue.fork",
            Choice::Copy => "arbor.tree.continue.copy",
            Choice::Cancel => CANCEL_ID,
        })
    }
}

/// The Continue box (Enter): a numbered choice; the letters are
/// mnemonics for the numbers.
pub const CONTINUE_KEYS: Keymap<Choice> = Keymap(&[
    bind(
        &[(ch('1'), Choice::Branch), (ch('b').quiet(), Choice::Branch)],
        "branch here, in place",
    ),
    bind(
        &[(ch('2'), Choice::Fork), (ch('f').quiet(), Choice::Fork)],
        "fork to a new session file",
    ),
    bind(
        &[(ch('y'), Choice::Copy)],
        "copy the user message to the clipboard",
    ),
    bind(
        &[
            (ch('3').as_id("arbor.tree.continue.cancel"), Choice::Cancel),
            (key(KeyCode::Esc), Choice::Cancel),
            (ctrl('c').quiet(), Choice::Cancel),
        ],
        "cancel",
    ),
]);

/// The export question's answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportChoice {
    Markdown,
    Html,
    Thinking,
    Cancel,
}

impl Named for ExportChoice {
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            ExportChoice::Markdown => "arbor.tree.export.markdown",
            ExportChoice::Html => "arbor.tree.export.html",
            ExportChoice::Thinking => "arbor.tree.export.thinking",
            ExportChoice::Cancel => CANCEL_ID,
        })
    }
}

/// The export question (`arbor.tree.export`).
pub const EXPORT_KEYS: Keymap<ExportChoice> = Keymap(&[
    bind(
        &[
            (ch('m'), ExportChoice::Markdown),
            (ch('1').quiet(), ExportChoice::Markdown),
        ],
        "Markdown",
    ),
    bind(
        &[
            (ch('h'), ExportChoice::Html),
            (ch('2').quiet(), ExportChoice::Html),
        ],
        "HTML",
    ),
    bind(&[(ch('t'), ExportChoice::Thinking)], "thinking on/off"),
    bind(
        &[
            (key(KeyCode::Esc), ExportChoice::Cancel),
            (
                ch('3').quiet().as_id("arbor.tree.export.cancel"),
                ExportChoice::Cancel,
            ),
            (ctrl('c').quiet(), ExportChoice::Cancel),
        ],
        "cancel",
    ),
]);

/// The offer to resume after a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Resume,
    Copy,
    Stay,
}

impl Named for Offer {
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            Offer::Resume => CONFIRM_ID,
            Offer::Copy => "arbor.tree.offer.copy",
            Offer::Stay => CANCEL_ID,
        })
    }
}

pub const OFFER_KEYS: Keymap<Offer> = Keymap(&[
    bind(&[(key(KeyCode::Enter), Offer::Resume)], "resume"),
    bind(&[(ch('y'), Offer::Copy)], "copy the message"),
    bind(
        &[
            (key(KeyCode::Esc), Offer::Stay),
            (ctrl('c').quiet(), Offer::Stay),
        ],
        "stay",
    ),
]);

/// `app.tree.editLabel`: the label prompt, holding the entry's label.
pub fn ask_label(t: &mut TreeState) {
    if let Some(i) = t.selected_entry() {
        let target = t.entry_id(i).to_string();
        let input = t
            .loaded
            .tree
            .labels
            .get(&target)
            .map(|l| LineInput::new(&l.text))
            .unwrap_or_default();
        t.dialog = TreeDialog::Label { target, input };
    }
}

/// `arbor.tree.export`: the export question, for the branch ending at the selection.
pub fn ask_export(t: &mut TreeState) {
    if let Some(i) = t.selected_entry() {
        t.dialog = TreeDialog::Export {
            entry: t.entry_id(i).to_string(),
            thinking: false,
        };
    }
}

/// Enter: the Continue box, unless the selection is the branch's end.
pub fn ask_continue(t: &mut TreeState) {
    if let Some(i) = t.selected_entry() {
        if t.is_leaf(i) {
            t.status = Some(("Already at this point".into(), false));
        } else {
            t.dialog = TreeDialog::Continue {
                entry: t.entry_id(i).to_string(),
            };
        }
    }
}

/// A key while a question or prompt is up: its effects, or `None` when it
/// is not one of the question's keys (or the prompt's field's).
pub fn on_dialog_key(t: &mut TreeState, k: &KeyEvent) -> Option<Vec<Effect>> {
    match &t.dialog {
        TreeDialog::None | TreeDialog::Help => None,
        TreeDialog::Label { .. } | TreeDialog::BranchSummary { .. } => on_prompt_key(t, k),
        TreeDialog::Continue { entry } => {
            let entry = entry.clone();
            on_continue_key(t, k, entry)
        }
        TreeDialog::Export { .. } => on_export_key(t, k),
        TreeDialog::ConfirmMigrate { then } => {
            let then = then.clone();
            on_migrate_key(t, k, then)
        }
        TreeDialog::OfferResume { .. } => on_offer_key(t, k),
    }
}

/// The label or branch-summary prompt: Enter writes it.
fn on_prompt_key(t: &mut TreeState, k: &KeyEvent) -> Option<Vec<Effect>> {
    let (TreeDialog::Label { input, .. } | TreeDialog::BranchSummary { input, .. }) = &mut t.dialog
    else {
        return None;
    };
    match input.prompt_key(k) {
        Prompted::Enter => {
            let text = input.text().trim().to_string();
            let pending = match &t.dialog {
                // Empty removes the label.
                TreeDialog::Label { target, .. } => Pending::Label {
                    target: target.clone(),
                    label: (!text.is_empty()).then_some(text),
                },
                TreeDialog::BranchSummary { entry, .. } => Pending::Branch {
                    entry: entry.clone(),
                    summary: text,
                },
                _ => return None,
            };
            Some(write(t, pending))
        }
        Prompted::Cancel => {
            t.dialog = TreeDialog::None;
            Some(Vec::new())
        }
        Prompted::Edited => Some(Vec::new()),
        Prompted::Ignored => None,
    }
}

/// The Continue box: branch here, fork, copy the user message, cancel.
fn on_continue_key(t: &mut TreeState, k: &KeyEvent, entry: String) -> Option<Vec<Effect>> {
    match CONTINUE_KEYS.action(k, true)? {
        Choice::Branch => {
            // Before a user message: its text is offered again
            // once the move is written.
            t.resend = user_text(t, &entry);
            t.dialog = TreeDialog::BranchSummary {
                entry,
                input: LineInput::default(),
            };
        }
        Choice::Fork => {
            // The fork ends before a user message (Atomic's /fork);
            // its text is offered with the new session.
            t.resend = user_text(t, &entry);
            t.dialog = TreeDialog::None;
            t.set_progress("Forking…");
            return Some(vec![Effect::Fork {
                path: t.path.clone(),
                entry,
            }]);
        }
        Choice::Copy => {
            let text = user_text(t, &entry)?;
            // OSC 52 has no answer: arbor cannot know whether the
            // terminal honoured it, so it says what it did.
            t.status = Some((
                "Message sent to the terminal's clipboard (OSC 52)".into(),
                false,
            ));
            return Some(vec![Effect::Copy(text)]);
        }
        Choice::Cancel => t.dialog = TreeDialog::None,
    }
    Some(Vec::new())
}

/// The export question: a format exports, `t` toggles the thinking.
fn on_export_key(t: &mut TreeState, k: &KeyEvent) -> Option<Vec<Effect>> {
    use arbor_session::export::{default_file_name, ExportFormat};
    let TreeDialog::Export { entry, thinking } = &mut t.dialog else {
        return None;
    };
    let format = match EXPORT_KEYS.action(k, true)? {
        ExportChoice::Markdown => ExportFormat::Markdown,
        ExportChoice::Html => ExportFormat::Html,
        ExportChoice::Thinking => {
            *thinking = !*thinking;
            return Some(Vec::new());
        }
        ExportChoice::Cancel => {
            t.dialog = TreeDialog::None;
            return Some(Vec::new());
        }
    };
    let (leaf, thinking) = (entry.clone(), *thinking);
    let file_name = default_file_name(t.loaded.session.id(), Some(&leaf), format);
    t.dialog = TreeDialog::None;
    t.set_progress("Exporting…");
    Some(vec![Effect::Export {
        path: t.path.clone(),
        leaf,
        format,
        thinking,
        file_name,
    }])
}

/// The migration asked before a write to a version 1/2 file.
fn on_migrate_key(t: &mut TreeState, k: &KeyEvent, then: Pending) -> Option<Vec<Effect>> {
    match CONFIRM.action(k, true)? {
        Answer::Yes => {
            t.dialog = TreeDialog::None;
            Some(vec![Effect::MigrateThen {
                path: t.path.clone(),
                then: Box::new(pending_effect(t, then)),
            }])
        }
        Answer::No => {
            t.dialog = TreeDialog::None;
            t.status = Some(("Nothing written".into(), false));
            Some(Vec::new())
        }
    }
}

/// The offer to resume after a write: resume, copy the message, stay.
fn on_offer_key(t: &mut TreeState, k: &KeyEvent) -> Option<Vec<Effect>> {
    let TreeDialog::OfferResume {
        path,
        id,
        cwd,
        what,
        prompt,
        copied,
    } = &mut t.dialog
    else {
        return None;
    };
    let text = prompt.clone();
    let (path, id, cwd, what) = (path.clone(), id.clone(), cwd.clone(), what.clone());
    match OFFER_KEYS.action(k, true)? {
        Offer::Copy => {
            let text = text?;
            // Said in the box (the status line is under it).
            *copied = true;
            Some(vec![Effect::Copy(text)])
        }
        Offer::Resume => {
            t.dialog = TreeDialog::None;
            Some(vec![Effect::Exit(Outcome::Resume {
                path,
                id,
                cwd,
                agent: t.loaded.agent,
            })])
        }
        Offer::Stay => {
            // Declined: what was done stays said (for a while).
            t.dialog = TreeDialog::None;
            t.status = Some((what, false));
            Some(Vec::new())
        }
    }
}

/// Writes go through here: a v1/v2 file must be migrated first, after asking.
fn write(t: &mut TreeState, p: Pending) -> Vec<Effect> {
    if t.loaded.session.needs_migration() {
        t.dialog = TreeDialog::ConfirmMigrate { then: p };
        return Vec::new();
    }
    t.dialog = TreeDialog::None;
    vec![pending_effect(t, p)]
}

pub fn pending_effect(t: &TreeState, p: Pending) -> Effect {
    match p {
        Pending::Label { target, label } => Effect::Label {
            path: t.path.clone(),
            target,
            label,
        },
        Pending::Branch { entry, summary } => Effect::Branch {
            path: t.path.clone(),
            entry,
            summary,
        },
    }
}

/// The text of a user message (what Atomic puts back in the editor).
pub fn user_text(t: &TreeState, id: &str) -> Option<String> {
    let i = t.loaded.tree.index_of(id)?;
    let e = &t.loaded.session.entries[i];
    (e.role() == Some("user")).then(|| arbor_session::writer::user_message_text(e))
}
