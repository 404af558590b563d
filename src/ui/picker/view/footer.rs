//! The lines under the list: the status line (or the question up) and the
//! two hint lines.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{footer_rows, HEADER_ROWS};
use crate::ui::picker::dialogs::{delete, first_and_rest, rename};
use crate::ui::picker::keys::{Action, KEYS};
use crate::ui::picker::state::{Dialog, PickerState, StatusKind};
use crate::ui::text::{sanitize_line, width, wrap_styled};
use crate::ui::theme::Theme;
use crate::ui::widgets::flow_hints;

pub fn render_footer(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    let (lines, cursor) = footer_lines(p, theme, area.width);
    let rows = footer_rows(p, area.width, area.height);
    if area.height < HEADER_ROWS + rows {
        return;
    }
    let y = area.y + area.height - rows;
    // The rename field's cursor, on the first footer line.
    if let Some(col) = cursor {
        f.set_cursor_position((area.x + col, y));
    }
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            x: area.x,
            y,
            width: area.width,
            height: rows,
        },
    );
}

/// The lines under the list: the status line and the two hint lines; or
/// the permanent-delete question, first, wrapped to as many lines as it
/// needs (the hints give way, as in Atomic while a delete is confirmed).
/// With the column of the terminal cursor on the first line, for a prompt.
pub fn footer_lines<'a>(
    p: &'a PickerState,
    theme: &Theme,
    width: u16,
) -> (Vec<Line<'a>>, Option<u16>) {
    if let Some(lines) = delete::permanent_question(p, theme, width) {
        return (lines, None);
    }
    let (status_line, mut wrapped, cursor) = status_lines(p, theme, width);
    let mut lines = vec![status_line];
    lines.append(&mut wrapped);
    lines.extend(
        hint_lines(p, width as usize)
            .into_iter()
            .map(|h| Line::from(Span::styled(h, theme.dim()))),
    );
    (lines, cursor)
}

/// The status line, the lines it wraps onto, and the rename field's
/// cursor: the question or prompt up, else the status message.
fn status_lines<'a>(
    p: &'a PickerState,
    theme: &Theme,
    width: u16,
) -> (Line<'a>, Vec<Line<'a>>, Option<u16>) {
    if let Some((first, rest)) = delete::question(p, theme, width) {
        return (first, rest, None);
    }
    match (&p.dialog.open, &p.flash.status) {
        (Dialog::ConfirmMigrateRename { version, .. }, _) => {
            let (first, rest) = rename::migrate_question(*version, theme, width);
            (first, rest, None)
        }
        (Dialog::Rename { input, .. }, _) => {
            let (line, col) = rename::prompt_line(input, theme, width);
            (line, Vec::new(), Some(col))
        }
        // A message is wrapped rather than cut: the end of an error (its
        // reason) is the part that matters.
        (_, Some(s)) => {
            let style = match s.kind {
                StatusKind::Info => theme.dim(),
                StatusKind::Success => theme.success(),
                StatusKind::Error => theme.error(),
            };
            let lines = wrap_styled(&[vec![(sanitize_line(&s.text), style)]], width as usize);
            let (first, rest) = first_and_rest(lines);
            (first, rest, None)
        }
        (_, None) => (Line::from(""), Vec::new(), None),
    }
}

/// Atomic's two hint lines (and F1) as they are where they fit; on a
/// narrower screen, flowed between hints, leaving out the least needed
/// (the help lists them all), never F1.
fn hint_lines(p: &PickerState, cols: usize) -> Vec<String> {
    let hints = [
        KEYS.hint(&[Action::Scope], "scope"),
        "re:<pattern> regex".to_string(),
        "\"phrase\" exact".to_string(),
        KEYS.hint(&[Action::Help], "help"),
        KEYS.hint(&[Action::Sort], "Sort"),
        KEYS.hint(&[Action::Named], "Named"),
        KEYS.hint(&[Action::Delete], "Delete"),
        KEYS.hint(
            &[Action::Paths],
            if p.settings.show_paths {
                "Path (on)"
            } else {
                "Path (off)"
            },
        ),
        KEYS.hint(&[Action::Rename], "Rename"),
    ];
    let atomic = [hints[..4].join(" · "), hints[4..].join(" · ")];
    if atomic.iter().all(|l| width(l) <= cols) {
        atomic.to_vec()
    } else {
        flow_hints(&hints, &[2, 1, 7, 5, 8, 4, 6, 0], 2, cols)
    }
}
