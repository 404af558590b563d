//! The list of labels (Ctrl+L): the labels of the sessions in scope,
//! newest first; Enter opens the tree at the labelled entry.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::ui::app::{App, Effect, Outcome, Step};
use crate::ui::keymap::{
    bind, ctrl, key, Keymap, Named, CANCEL_ID, CONFIRM_ID, FIRST_ID, LAST_ID, QUIT_ID,
};
use crate::ui::picker::state::{Dialog, PickerState, Scope};
use crate::ui::text::{fit, sanitize_line, truncate, width};
use crate::ui::theme::Theme;
use arbor_session::extras::LabelRow;
use arbor_util::age;

/// What the keys do in the list of labels (Ctrl+L).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelAction {
    Up,
    Down,
    PageUp,
    PageDown,
    First,
    Last,
    Open,
    Close,
    Quit,
}

impl Named for LabelAction {
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            LabelAction::Up => "tui.select.up",
            LabelAction::Down => "tui.select.down",
            LabelAction::PageUp => "tui.select.pageUp",
            LabelAction::PageDown => "tui.select.pageDown",
            LabelAction::First => FIRST_ID,
            LabelAction::Last => LAST_ID,
            LabelAction::Open => CONFIRM_ID,
            LabelAction::Close => CANCEL_ID,
            LabelAction::Quit => QUIT_ID,
        })
    }
}

pub const LABEL_KEYS: Keymap<LabelAction> = Keymap(&[
    bind(
        &[
            (key(KeyCode::Up), LabelAction::Up),
            (key(KeyCode::Down), LabelAction::Down),
            (key(KeyCode::PageUp), LabelAction::PageUp),
            (key(KeyCode::PageDown), LabelAction::PageDown),
            (key(KeyCode::Home), LabelAction::First),
            (key(KeyCode::End), LabelAction::Last),
        ],
        "move, first/last",
    ),
    bind(
        &[(key(KeyCode::Enter), LabelAction::Open)],
        "open the tree at the labelled entry",
    ),
    bind(
        &[
            (key(KeyCode::Esc), LabelAction::Close),
            // The key that opened it (the picker's).
            (ctrl('l').as_id("arbor.picker.labels"), LabelAction::Close),
        ],
        "close",
    ),
    bind(&[(ctrl('c'), LabelAction::Quit)], "quit arbor"),
]);

/// Ctrl+L: the list opens empty while the labels in scope are read.
pub fn open(app: &mut App) -> Vec<Effect> {
    let p = &mut app.picker;
    p.dialog.open = Dialog::Labels {
        items: None,
        selected: 0,
    };
    let scope = match p.settings.scope {
        Scope::All => arbor_store::Scope::All,
        Scope::Current => arbor_store::Scope::Project(p.settings.project_cwd.clone()),
    };
    vec![Effect::LoadLabels {
        config: app.store.clone(),
        scope,
        include_internal: p.settings.show_internal,
    }]
}

/// The labels read: shown, unless the list was closed meanwhile.
pub fn loaded(p: &mut PickerState, found: Vec<LabelRow>) -> Step {
    match &mut p.dialog.open {
        Dialog::Labels { items, selected } => {
            *items = Some(found);
            *selected = 0;
        }
        // Closed meanwhile.
        _ => return Step::none(),
    }
    Step::redraw(Vec::new())
}

/// A key while the list is up.
pub fn on_key(app: &mut App, k: &KeyEvent) -> Option<Vec<Effect>> {
    let p = &mut app.picker;
    let Dialog::Labels { items, selected } = &mut p.dialog.open else {
        return None;
    };
    let n = items.as_ref().map_or(0, Vec::len);
    let page = labels_page(app.height);
    let last = n.saturating_sub(1);
    match LABEL_KEYS.action(k, true)? {
        LabelAction::Up => *selected = selected.saturating_sub(1),
        LabelAction::Down => *selected = (*selected + 1).min(last),
        LabelAction::PageUp => *selected = selected.saturating_sub(page),
        LabelAction::PageDown => *selected = (*selected + page).min(last),
        LabelAction::First => *selected = 0,
        LabelAction::Last => *selected = last,
        LabelAction::Close => p.dialog.open = Dialog::None,
        LabelAction::Quit => return Some(vec![Effect::Exit(Outcome::Quit)]),
        LabelAction::Open => {
            let l = items.as_ref().and_then(|v| v.get(*selected)).cloned()?;
            p.dialog.open = Dialog::None;
            app.open_at = Some((l.path.clone(), l.entry_id.clone()));
            return Some(vec![Effect::OpenTree {
                path: l.path,
                agent: l.agent,
            }]);
        }
    }
    Some(Vec::new())
}

/// The labels box's height for a screen `height` rows high.
fn labels_box_height(height: u16) -> u16 {
    height.saturating_sub(4).max(5)
}

/// Label rows the box shows at once (a page for PgUp/PgDn).
pub fn labels_page(height: u16) -> usize {
    // Borders and the key line.
    usize::from(labels_box_height(height).saturating_sub(3)).max(1)
}

pub fn render(
    f: &mut Frame,
    p: &PickerState,
    theme: &Theme,
    area: Rect,
    items: Option<&[LabelRow]>,
    selected: usize,
) {
    // As tall as the labels need, up to the screen.
    let page = labels_page(area.height).min(items.map_or(1, |v| v.len().max(1)));
    let r = crate::ui::widgets::centered(area, 120, page as u16 + 3);
    crate::ui::widgets::clear_box(f, r);
    let inner = r.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = Vec::new();
    let title = match items {
        None => " Labels · loading… ".to_string(),
        Some(v) => format!(" Labels · {} ", v.len()),
    };
    match items {
        None => lines.push(Line::from(Span::styled(
            "  Reading the labels…",
            theme.dim(),
        ))),
        Some([]) => lines.push(Line::from(Span::styled(
            format!(
                "  No labels in these sessions ({} in the tree sets one)",
                crate::ui::tree::KEYS.keys_of(&[crate::ui::tree::Action::Label])
            ),
            theme.dim(),
        ))),
        Some(v) => {
            let top = selected.saturating_sub(page.saturating_sub(1));
            for (i, l) in v.iter().enumerate().skip(top).take(page) {
                lines.push(label_line(p, l, i == selected, inner, theme));
            }
        }
    }
    while lines.len() < page {
        lines.push(Line::from(""));
    }
    lines.push(Line::from(Span::styled(
        format!(
            " {} · {} · {}",
            LABEL_KEYS.hint(&[LabelAction::Up, LabelAction::Down], "move"),
            LABEL_KEYS.hint(&[LabelAction::Open], "open the tree there"),
            LABEL_KEYS.hint(&[LabelAction::Close], "close"),
        ),
        theme.dim(),
    )));
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, theme.title()))
        .border_style(theme.accent());
    f.render_widget(Paragraph::new(lines).block(block), r);
}

/// One label's row: how long ago, the label, the session's title, then
/// the labelled entry's text in what room is left.
fn label_line(
    p: &PickerState,
    l: &LabelRow,
    is_selected: bool,
    inner: usize,
    theme: &Theme,
) -> Line<'static> {
    let when = l
        .time
        .as_deref()
        .and_then(arbor_session::entry::parse_iso_ms)
        .map(|ms| age(p.now_ms, ms))
        .unwrap_or_default();
    let left = format!(
        " {:>4}  {}  {}  ",
        when,
        fit(&sanitize_line(&l.label), 20),
        fit(&sanitize_line(&l.title), 28),
    );
    let rest = inner.saturating_sub(width(&left));
    let line = format!("{left}{}", truncate(&sanitize_line(&l.text), rest));
    let style = if is_selected {
        theme.selected()
    } else {
        Style::default()
    };
    Line::from(Span::styled(fit(&line, inner), style))
}
