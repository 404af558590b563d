//! The picker's dialogs, each with its keys and its drawing: the delete
//! and trash questions, the rename prompt, the list of labels, the help.

pub mod delete;
pub mod help;
pub mod labels;
pub mod rename;

use crossterm::event::KeyEvent;

use super::state::{Dialog, PickerState};
use crate::ui::app::{App, Effect};
use crate::ui::keymap::{Answer, CONFIRM};

/// The dialog up over the list, if any.
#[derive(Debug)]
pub struct Modal {
    pub open: Dialog,
    /// The first line of the help shown (when it is taller than the screen).
    pub(crate) help_scroll: usize,
}

impl Default for Modal {
    fn default() -> Modal {
        Modal {
            open: Dialog::None,
            help_scroll: 0,
        }
    }
}

/// A key while a dialog is up: its effects, or `None` when it did nothing
/// (not a key of the dialog, or dropped while a question waits).
pub fn on_key(app: &mut App, k: KeyEvent) -> Option<Vec<Effect>> {
    match &app.picker.dialog.open {
        Dialog::Help => help::on_key(app, &k),
        Dialog::ConfirmDelete { .. }
        | Dialog::ConfirmLiveDelete { .. }
        | Dialog::ConfirmBatch { .. }
        | Dialog::ConfirmLiveBatch { .. }
        | Dialog::Trashing { .. }
        | Dialog::TrashingBatch { .. }
        | Dialog::ConfirmPermanent { .. } => delete::on_key(&mut app.picker, &k),
        Dialog::ConfirmMigrateRename { .. } | Dialog::Rename { .. } => {
            rename::on_key(&mut app.picker, &k)
        }
        Dialog::Labels { .. } => labels::on_key(app, &k),
        // No dialog: the keys are the screen's (see `keys::on_key`).
        Dialog::None => None,
    }
}

/// A yes/no question ([`CONFIRM`]): Enter runs `yes`, Esc or Ctrl+C
/// cancels, and every other key is dropped while it is up.
fn confirm(
    p: &mut PickerState,
    k: &KeyEvent,
    yes: impl FnOnce(&mut PickerState) -> Vec<Effect>,
) -> Option<Vec<Effect>> {
    Some(match CONFIRM.action(k, true)? {
        Answer::Yes => {
            p.dialog.open = Dialog::None;
            yes(p)
        }
        Answer::No => cancel(p),
    })
}

fn cancel(p: &mut PickerState) -> Vec<Effect> {
    p.dialog.open = Dialog::None;
    Vec::new()
}

/// A wrapped question's first line, and the lines it wraps onto.
pub fn first_and_rest(
    mut lines: Vec<ratatui::text::Line<'static>>,
) -> (
    ratatui::text::Line<'static>,
    Vec<ratatui::text::Line<'static>>,
) {
    let first = lines.remove(0);
    (first, lines)
}
