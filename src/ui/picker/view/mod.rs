//! Drawing the picker from its state: the header (title, toggles, notes,
//! the query), the list, the preview beside it, the footer (status,
//! questions, hints), and a dialog's box over them.

mod footer;
mod header;
mod list;
mod preview;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::Frame;

use super::dialogs::{help, labels};
use super::state::{Dialog, PickerState};
use crate::ui::app::App;
use crate::ui::theme::Theme;
use arbor_util::age;

pub use super::dialogs::help::help_rows;

const HEADER_ROWS: u16 = 3;
const FOOTER_ROWS: u16 = 3;
/// The preview opens by itself from this width on.
pub const PREVIEW_MIN_WIDTH: u16 = 110;

/// A session whose file changed this recently (by the picker's clock) is
/// marked live.
const LIVE_MS: i64 = 60_000;

/// Where the list rows are drawn (also used to map mouse clicks): between
/// the header and the footer, which grows when a question needs the room.
pub fn list_area(p: &PickerState, width: u16, height: u16) -> Rect {
    Rect {
        x: 0,
        y: HEADER_ROWS,
        width,
        height: height.saturating_sub(HEADER_ROWS + footer_rows(p, width, height)),
    }
}

/// How many sessions the list shows at once: its area, less the
/// `(n/N)` position line Atomic adds when they do not all fit.
pub fn list_rows(p: &PickerState, width: u16, height: u16) -> usize {
    let h = list_area(p, width, height).height as usize;
    if p.list.visible.len() > h {
        h.saturating_sub(1)
    } else {
        h
    }
}

fn footer_rows(p: &PickerState, width: u16, height: u16) -> u16 {
    let n = footer::footer_lines(p, &Theme::plain(), width).0.len() as u16;
    n.clamp(
        FOOTER_ROWS,
        height.saturating_sub(HEADER_ROWS).max(FOOTER_ROWS),
    )
}

pub fn preview_visible(p: &PickerState, width: u16) -> bool {
    p.settings.preview_on.unwrap_or(width >= PREVIEW_MIN_WIDTH) && width >= 60
}

/// The list's pane and the preview's beside it, when it is shown (also
/// used to map the mouse).
pub fn panes(p: &PickerState, width: u16, height: u16) -> (Rect, Option<Rect>) {
    let full = list_area(p, width, height);
    if preview_visible(p, width) {
        let [l, r] = Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
            .areas(full);
        (l, Some(r))
    } else {
        (full, None)
    }
}

pub fn render(f: &mut Frame, app: &App, theme: &Theme) {
    let p = &app.picker;
    let area = f.area();
    let (list, preview) = panes(p, area.width, area.height);
    header::render_header(f, p, theme, area);
    list::render_list(f, p, theme, list);
    if let Some(r) = preview {
        preview::render_preview(f, p, theme, r);
    }
    footer::render_footer(f, p, theme, area);
    if p.dialog.open == Dialog::Help {
        help::render(f, p, theme, area);
    }
    if let Dialog::Labels { items, selected } = &p.dialog.open {
        labels::render(f, p, theme, area, items.as_deref(), *selected);
    }
}

/// Whether the clock moving from `then` to `now` changes the frame: an
/// age shown in the list or the preview (`5m` → `6m`).
pub fn clock_changes_view(p: &PickerState, width: u16, height: u16, then: i64, now: i64) -> bool {
    let changed = |ms: i64| age(then, ms) != age(now, ms);
    // The live marker goes a minute after the file's last change.
    let live = |at: i64, ms: i64| (0..LIVE_MS).contains(&(at - ms));
    let rows = list_rows(p, width, height);
    let listed = p
        .list
        .visible
        .iter()
        .skip(p.selection.scroll)
        .take(rows)
        .any(|v| {
            let info = &p.list.rows[v.idx].info;
            changed(info.modified_ms)
                || live(then, info.file_mtime_ms) != live(now, info.file_mtime_ms)
        });
    let previewed = preview_visible(p, width)
        && p.selected_row().is_some_and(|r| {
            changed(r.info.modified_ms)
                || arbor_session::entry::parse_iso_ms(&r.info.created).is_some_and(changed)
        });
    listed || previewed
}
