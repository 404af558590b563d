//! The rename prompt, and the question asked when an older file must be
//! rewritten before it can be renamed.

use crossterm::event::KeyEvent;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{cancel, confirm, first_and_rest};
use crate::ui::app::Effect;
use crate::ui::input::{self, LineInput, Prompted};
use crate::ui::keymap::{Answer, CONFIRM};
use crate::ui::picker::state::{Dialog, PickerState, StatusKind};
use crate::ui::text::wrap_styled;
use crate::ui::theme::Theme;

/// Ctrl+R: the prompt, holding the session's name; a foreign agent's
/// session is refused.
pub fn ask(p: &mut PickerState) {
    if let Some(agent) = p
        .selected_row()
        .map(|r| r.info.agent)
        .filter(|a| a.is_foreign())
    {
        p.set_status(StatusKind::Error, agent.refusal("renamed"));
    } else if let Some(r) = p.selected_row() {
        let input = LineInput::new(r.display_name().unwrap_or(""));
        p.dialog.open = Dialog::Rename {
            path: r.info.path.to_path_buf(),
            input,
        };
    }
}

/// A key while the prompt or the rewrite question is up.
pub fn on_key(p: &mut PickerState, k: &KeyEvent) -> Option<Vec<Effect>> {
    match &mut p.dialog.open {
        Dialog::ConfirmMigrateRename { path, name, .. } => {
            let (path, name) = (path.clone(), name.clone());
            confirm(p, k, |p| {
                p.set_progress("Rewriting as version 3…");
                vec![Effect::MigrateThen {
                    path: path.clone(),
                    then: Box::new(Effect::Rename { path, name }),
                }]
            })
        }
        Dialog::Rename { path, input } => match input.prompt_key(k) {
            Prompted::Enter => {
                let name = input.text().trim().to_string();
                let path = path.clone();
                p.dialog.open = Dialog::None;
                if name.is_empty() {
                    p.set_status(StatusKind::Info, "Name unchanged (blank names are ignored)");
                    return Some(Vec::new());
                }
                Some(vec![Effect::Rename { path, name }])
            }
            Prompted::Cancel => Some(cancel(p)),
            Prompted::Edited => Some(Vec::new()),
            Prompted::Ignored => None,
        },
        _ => None,
    }
}

/// The footer's line while the prompt is up, and the column of its cursor.
pub fn prompt_line<'a>(input: &'a LineInput, theme: &Theme, width: u16) -> (Line<'a>, u16) {
    crate::ui::input::prompt(
        input,
        Span::styled("Rename: ", theme.accent()),
        Span::styled(input::prompt_hint("save"), theme.dim()),
        width,
    )
}

/// A rename refused by an older file: the way out, asked (the status
/// line, and the lines it wraps onto).
pub fn migrate_question(
    version: u32,
    theme: &Theme,
    width: u16,
) -> (Line<'static>, Vec<Line<'static>>) {
    let question = [vec![
        (
            format!(
                "A version {version} session: rewrite it as version 3 (the original kept as .bak) to rename it? "
            ),
            theme.warning(),
        ),
        (
            format!(
                "{} · {}",
                CONFIRM.hint(&[Answer::Yes], "rewrite and rename"),
                CONFIRM.hint(&[Answer::No], "cancel")
            ),
            Style::default(),
        ),
    ]];
    first_and_rest(wrap_styled(&question, width as usize))
}
