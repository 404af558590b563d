//! The tree's two header lines: the title (the view, the session's name,
//! notes on its file) and the search field, or what the view's keys do.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{compare_rows, list_area};
use crate::ui::text::{truncate, width};
use crate::ui::theme::Theme;
use crate::ui::tree::keys::{Action, ContextAction, CONTEXT_KEYS, KEYS};
use crate::ui::tree::state::{CompareView, TreeDialog, TreeState};
use arbor_session::render::sanitize_line;

pub fn render_header(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    f.render_widget(
        Paragraph::new(title_line(t, theme, area.width)),
        Rect { height: 1, ..area },
    );
    let search = if let Some(c) = &t.compare {
        compare_position(c, theme, area)
    } else if t.context_view {
        // Typing does not search here: say what the keys do instead.
        Line::from(Span::styled(
            format!(
                "↑↓ scroll · {} back to the tree · {} help",
                CONTEXT_KEYS.keys_of(&[ContextAction::Close]),
                KEYS.keys_of(&[Action::Help])
            ),
            theme.dim(),
        ))
    } else if t.search.is_empty() {
        Line::from(Span::styled(
            format!("type to search · {} help", KEYS.keys_of(&[Action::Help])),
            theme.dim(),
        ))
    } else {
        search_field(f, t, theme, area)
    };
    f.render_widget(
        Paragraph::new(search),
        Rect {
            y: area.y + 1,
            height: 1,
            ..area
        },
    );
}

/// The session's name; without one, its first prompt (like the picker's
/// row title), else its id.
fn session_name(t: &TreeState) -> String {
    let s = &t.loaded.session;
    t.loaded
        .tree
        .display_name()
        .map(sanitize_line)
        .or_else(|| {
            // No name: the first prompt, like the picker's row title.
            s.entries
                .iter()
                .find(|e| e.role() == Some("user"))
                .map(|e| {
                    sanitize_line(&e.with_raw(|raw| {
                        arbor_session::entry::content_text(
                            raw.get("message").and_then(|m| m.get("content")),
                            " ",
                        )
                    }))
                })
        })
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| s.id().to_string())
}

/// The view and the session's name on the left; on the right, what is
/// special about its file (old version, pi flavour, damage).
fn title_line(t: &TreeState, theme: &Theme, screen_w: u16) -> Line<'static> {
    let s = &t.loaded.session;
    let name = session_name(t);
    let mut right = String::new();
    if s.needs_migration() {
        right.push_str(&format!("v{} file ", s.file_version));
    }
    if t.loaded.flavor == arbor_session::ContextFlavor::Pi {
        right.push_str("pi flavour ");
    }
    if let Some(what) = s.diagnostics.brief() {
        right.push_str(&format!("{what} "));
    }
    let title = if t.compare.is_some() {
        "Compare"
    } else if t.context_view {
        "Context"
    } else {
        "Session Tree"
    };
    let left = format!(
        "{title} · {}",
        truncate(
            &name,
            (screen_w as usize).saturating_sub(width(&right) + 20)
        )
    );
    let pad = (screen_w as usize).saturating_sub(width(&left) + width(&right));
    Line::from(vec![
        Span::styled(left, theme.title()),
        Span::raw(" ".repeat(pad)),
        Span::styled(right, theme.dim()),
    ])
}

/// The compare view's line: which side is which, and where the view is.
fn compare_position(c: &CompareView, theme: &Theme, area: Rect) -> Line<'static> {
    let (rows, first) = compare_rows(c, area.width, area.height);
    let total = rows.len();
    let shown = list_area(area.width, area.height).height as usize;
    let last = (first + shown).min(total);
    Line::from(Span::styled(
        // The position first: it is what a narrow screen must keep.
        format!(
            "lines {}–{last} of {total} · A: the marked entry {} · B: the selected entry {}",
            (first + 1).min(total),
            sanitize_line(&c.a),
            sanitize_line(&c.b),
        ),
        theme.dim(),
    ))
}

/// The search typed, then why nothing matches or that the session is
/// still being read.
fn search_field(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) -> Line<'static> {
    let (shown, col) = t.search.view((area.width as usize).saturating_sub(8));
    // The terminal cursor marks where typing goes, unless a prompt or
    // another view has the keys.
    if t.dialog == TreeDialog::None && !t.context_view && t.compare.is_none() {
        f.set_cursor_position((area.x + 8 + col as u16, area.y + 1));
    }
    let mut spans = vec![
        Span::styled("search: ", theme.accent()),
        Span::raw(shown.to_string()),
    ];
    if let Some(e) = t.query.error() {
        // An invalid regex, an unknown key: nothing matches, and why.
        spans.push(Span::styled(
            format!("  {}", sanitize_line(e)),
            theme.error(),
        ));
    } else if t.search_waiting() {
        spans.push(Span::styled("  (reading the session…)", theme.dim()));
    }
    Line::from(spans)
}
