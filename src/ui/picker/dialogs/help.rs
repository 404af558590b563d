//! The help (F1): the picker's keys, scrolled in a box over the screen.

use crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::Frame;

use crate::ui::app::{App, Effect};
use crate::ui::input;
use crate::ui::keymap::HelpRow;
use crate::ui::picker::keys::KEYS;
use crate::ui::picker::state::{Dialog, PickerState};
use crate::ui::theme::Theme;
use crate::ui::widgets::help_key;

/// The help box's width.
pub const HELP_WIDTH: u16 = 74;

/// The help's rows: typing, the picker's keys, then the query's editing
/// keys (those the picker leaves to it). The help's own keys are on its last
/// line.
pub fn help_rows() -> Vec<HelpRow> {
    KEYS.help_with_field(
        "search: all words, \"exact phrase\", re:regex; filters dir: model: label: agent: host: is: in:tools after:2d before:2026-11-30",
        "Editing the query",
        &input::KEYS,
    )
}

/// A key while the help is up: it scrolls, or closes it.
pub fn on_key(app: &mut App, k: &KeyEvent) -> Option<Vec<Effect>> {
    let p = &mut app.picker;
    let rows = help_rows();
    let area = Rect::new(0, 0, app.width, app.height);
    match help_key(k, &rows, HELP_WIDTH, area, p.dialog.help_scroll) {
        Some(scroll) if scroll == p.dialog.help_scroll => return None,
        Some(scroll) => p.dialog.help_scroll = scroll,
        None => p.dialog.open = Dialog::None,
    }
    Some(Vec::new())
}

pub fn render(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    crate::ui::widgets::help_overlay(
        f,
        theme,
        area,
        "arbor · keys",
        &help_rows(),
        HELP_WIDTH,
        p.dialog.help_scroll,
    );
}
