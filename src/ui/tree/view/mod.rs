//! Drawing the tree view: the header, the rows (with the detail pane
//! beside them), or the context or compare view instead, the footer, and
//! the boxes over them.

mod boxes;
mod footer;
mod header;
mod list;
mod panes;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::Frame;

use super::state::{TreeDialog, TreeState};
use crate::ui::theme::Theme;
use panes::compare_rows;

pub use boxes::{help_rows, HELP_WIDTH};

const HEADER_ROWS: u16 = 2;

const FOOTER_ROWS: u16 = 3;

pub const DETAIL_MIN_WIDTH: u16 = 110;

pub fn list_area(width: u16, height: u16) -> Rect {
    Rect {
        x: 0,
        y: HEADER_ROWS,
        width,
        height: height.saturating_sub(HEADER_ROWS + FOOTER_ROWS),
    }
}

pub(crate) fn detail_visible(t: &TreeState, width: u16) -> bool {
    t.detail_on.unwrap_or(width >= DETAIL_MIN_WIDTH) && width >= 60
}

/// The rows' pane and the detail pane beside it, when shown (also used
/// to map the mouse).
pub fn panes(t: &TreeState, width: u16, height: u16) -> (Rect, Option<Rect>) {
    let main = list_area(width, height);
    if t.compare.is_none() && !t.context_view && detail_visible(t, width) {
        let [l, r] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .areas(main);
        (l, Some(r))
    } else {
        (main, None)
    }
}

pub fn render(f: &mut Frame, t: &TreeState, theme: &Theme) {
    let area = f.area();
    header::render_header(f, t, theme, area);
    let main = list_area(area.width, area.height);
    if let Some(c) = &t.compare {
        panes::render_compare(f, c, theme, main, area);
    } else if t.context_view {
        panes::render_context(f, t, theme, main);
    } else if let (l, Some(r)) = panes(t, area.width, area.height) {
        list::render_list(f, t, theme, l);
        panes::render_detail(f, t, theme, r);
    } else {
        list::render_list(f, t, theme, main);
    }
    footer::render_footer(f, t, theme, area);
    match &t.dialog {
        TreeDialog::Help => boxes::render_help(f, t, theme, area),
        TreeDialog::Continue { entry } => boxes::render_continue(f, t, theme, area, entry),
        TreeDialog::OfferResume {
            prompt: Some(text),
            copied,
            ..
        } => boxes::render_resend(f, theme, area, text, *copied),
        _ => {}
    }
}
