//! The tree's footer: the status line (position, filter, marks, matches,
//! the last message), or the prompt up, and the key hints; a question
//! takes all its rows.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{FOOTER_ROWS, HEADER_ROWS};
use crate::ui::keymap::{Answer, Scroll, CONFIRM};
use crate::ui::text::{truncate, wrap_styled};
use crate::ui::theme::Theme;
use crate::ui::tree::dialogs::{ExportChoice, Offer, EXPORT_KEYS, OFFER_KEYS};
use crate::ui::tree::keys::{
    Action, CompareAction, ContextAction, COMPARE_KEYS, CONTEXT_KEYS, KEYS,
};
use crate::ui::tree::state::{TreeDialog, TreeState};
use crate::ui::widgets::flow_hints;
use arbor_session::render::sanitize_line;
use arbor_session::view::Filter;

pub fn render_footer(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    if area.height < HEADER_ROWS + FOOTER_ROWS {
        return;
    }
    let y = area.y + area.height - FOOTER_ROWS;
    let row = |i: u16| Rect {
        x: area.x,
        y: y + i,
        width: area.width,
        height: 1,
    };
    let prompt = prompt_line(f, t, theme, area, y);
    // A question and its keys, over the footer's rows (the hints give way):
    // wrapped, so the keys that answer it are never cut off at the edge.
    if let Some((text, style, keys)) = question(t, theme) {
        let lines = question_lines(
            &text,
            style,
            &keys,
            area.width as usize,
            FOOTER_ROWS as usize,
        );
        f.render_widget(
            Paragraph::new(lines),
            Rect {
                height: FOOTER_ROWS,
                ..row(0)
            },
        );
        return;
    }
    let status_line = match prompt {
        Some(p) => p,
        None => status_line(t, theme),
    };
    f.render_widget(Paragraph::new(status_line), row(0));
    for (i, h) in hint_lines(t, area.width as usize).into_iter().enumerate() {
        f.render_widget(
            Paragraph::new(Span::styled(h, theme.dim())),
            row(1 + i as u16),
        );
    }
}

/// The position, the filter and marks, how many entries match, then the
/// last message.
fn status_line(t: &TreeState, theme: &Theme) -> Line<'static> {
    let mut status = if t.rows.is_empty() {
        "(0/0)".to_string()
    } else {
        format!("({}/{})", t.selected.map_or(0, |p| p + 1), t.rows.len())
    };
    if let Some(tag) = t.filter.tag() {
        status.push_str(&format!(" [{tag}]"));
    }
    if t.label_times {
        status.push_str(" [+label time]");
    }
    if t.mark.is_some() {
        status.push_str(" [◆ marked]");
    }
    // Searching, the rows are the matching entries: ↑/↓ step through them
    // (not yet while the search waits for the session's search text).
    if !t.search.text().trim().is_empty() && !t.search_waiting() {
        let n = t.rows.len();
        status.push_str(&match n {
            0 => " · no match".to_string(),
            1 => " · 1 match".to_string(),
            n => format!(" · {n} matches"),
        });
        if let Some(p) = t.preview_differs() {
            status.push_str(&format!(" · preview {p}"));
        }
    }
    let mut spans = vec![Span::styled(status, theme.dim())];
    if let Some((msg, err)) = &t.status {
        spans.push(Span::raw("  "));
        spans.push(Span::styled(
            sanitize_line(msg),
            if *err { theme.error() } else { theme.success() },
        ));
    }
    Line::from(spans)
}

/// The label or branch-summary prompt, when one is up, with the terminal
/// cursor put in its field (on row `y`).
fn prompt_line<'a>(
    f: &mut Frame,
    t: &'a TreeState,
    theme: &Theme,
    area: Rect,
    y: u16,
) -> Option<Line<'a>> {
    let field = match &t.dialog {
        TreeDialog::Label { input, .. } => Some((input, "Label: ", "save (empty removes)")),
        TreeDialog::BranchSummary { input, .. } => Some((
            input,
            "Summary of the abandoned branch (optional): ",
            "branch here",
        )),
        _ => None,
    };
    field.map(|(input, label, yes)| {
        let (line, col) = crate::ui::input::prompt(
            input,
            Span::styled(label, theme.accent()),
            Span::styled(crate::ui::input::prompt_hint(yes), theme.dim()),
            area.width,
        );
        f.set_cursor_position((area.x + col, y));
        line
    })
}

/// The question up, if any: its text and style, then its keys.
fn question(t: &TreeState, theme: &Theme) -> Option<(String, Style, String)> {
    match &t.dialog {
        TreeDialog::ConfirmMigrate { .. } => Some((
            format!(
                "This is a version {} file: arbor must first rewrite it as version 3 (atomically, keeping a .bak copy).",
                t.loaded.session.file_version
            ),
            theme.warning(),
            format!(
                "{} · {}",
                CONFIRM.hint(&[Answer::Yes], "rewrite"),
                CONFIRM.hint(&[Answer::No], "cancel")
            ),
        )),
        TreeDialog::Export { thinking, .. } => Some((
            "Export the branch ending here to the current folder:".to_string(),
            theme.accent(),
            [
                EXPORT_KEYS.hint(&[ExportChoice::Markdown], "Markdown"),
                EXPORT_KEYS.hint(&[ExportChoice::Html], "HTML"),
                EXPORT_KEYS.hint(
                    &[ExportChoice::Thinking],
                    if *thinking {
                        "thinking [on]"
                    } else {
                        "thinking [off]"
                    },
                ),
                EXPORT_KEYS.hint(&[ExportChoice::Cancel], "cancel"),
            ]
            .join(" · "),
        )),
        TreeDialog::OfferResume { what, prompt, .. } => Some((
            what.clone(),
            theme.success(),
            format!(
                "Resume the agent there now? {}",
                offer_hint(prompt.is_some())
            ),
        )),
        _ => None,
    }
}

/// The lines of key hints under the tree (or the context or compare view).
fn hint_lines(t: &TreeState, width: usize) -> Vec<String> {
    if t.compare.is_some() {
        let mut lines = flow_hints(
            &[
                COMPARE_KEYS.hint(
                    &[
                        CompareAction::Scroll(Scroll::Up),
                        CompareAction::Scroll(Scroll::Down),
                        CompareAction::Scroll(Scroll::PageUp),
                        CompareAction::Scroll(Scroll::PageDown),
                        CompareAction::Scroll(Scroll::Top),
                        CompareAction::Scroll(Scroll::Bottom),
                    ],
                    "scroll",
                ),
                COMPARE_KEYS.hint(&[CompareAction::Close], "back to the tree"),
            ],
            &[],
            1,
            width,
        );
        if width >= arbor_session::compare::SIDE_BY_SIDE_MIN {
            lines.push("`=` between the sides: the same message or call".to_string());
        }
        lines
    } else if t.context_view {
        flow_hints(
            &[
                CONTEXT_KEYS.hint(
                    &[
                        ContextAction::Scroll(Scroll::Up),
                        ContextAction::Scroll(Scroll::Down),
                        ContextAction::Scroll(Scroll::PageUp),
                        ContextAction::Scroll(Scroll::PageDown),
                    ],
                    "scroll",
                ),
                CONTEXT_KEYS.hint(&[ContextAction::Close], "back to the tree"),
            ],
            &[],
            2,
            width,
        )
    } else {
        let hints = [
            KEYS.hint(&[Action::Up, Action::Down], "move"),
            KEYS.hint(&[Action::PageUp, Action::PageDown], "page"),
            KEYS.hint(&[Action::FoldUp, Action::UnfoldDown], "fold/jump"),
            KEYS.hint(&[Action::Continue], "continue from here"),
            KEYS.hint(&[Action::Label], "label"),
            KEYS.hint(&[Action::LabelTimes], "label time"),
            KEYS.hint(&[Action::Export], "export"),
            KEYS.hint(&[Action::Mark, Action::Compare], "mark/compare"),
            KEYS.hint(
                &[
                    Action::Filter(Filter::Default),
                    Action::Filter(Filter::NoTools),
                    Action::Filter(Filter::UserOnly),
                    Action::Filter(Filter::LabeledOnly),
                    Action::Filter(Filter::All),
                ],
                "filter",
            ),
            KEYS.hint(&[Action::Cycle], "cycle"),
            KEYS.hint(&[Action::Detail], "detail"),
            KEYS.hint(&[Action::Context], "context"),
            KEYS.hint(&[Action::Help], "help"),
            KEYS.hint(&[Action::Back], "back"),
        ];
        // Left out first when the lines are too narrow (the help lists
        // them all): mark/compare, label time, cycle, context, detail, export, page,
        // fold/jump, label, filter, back; never the help key.
        flow_hints(&hints, &[7, 5, 9, 11, 10, 6, 1, 2, 4, 8, 13], 2, width)
    }
}

/// A question then its keys, word-wrapped into at most `rows` lines of
/// `width`; when that is too few, the question is cut (ending in `…`),
/// never the keys.
fn question_lines(
    text: &str,
    style: Style,
    keys: &str,
    width: usize,
    rows: usize,
) -> Vec<Line<'static>> {
    let whole = [vec![
        (text.to_string(), style),
        (keys.to_string(), Style::default()),
    ]];
    let lines = wrap_styled(&whole, width);
    if lines.len() <= rows {
        return lines;
    }
    let mut keys = wrap_styled(&[vec![(keys.to_string(), Style::default())]], width);
    keys.truncate(rows);
    let room = rows - keys.len();
    let mut head = wrap_styled(&[vec![(text.to_string(), style)]], width);
    head.truncate(room);
    if let Some(last) = head.last_mut() {
        let shown: String = last.spans.iter().map(|s| s.content.as_ref()).collect();
        *last = Line::from(Span::styled(truncate(&format!("{shown} …"), width), style));
    }
    head.extend(keys);
    head
}

/// The offer to resume: its keys (copying only when there is a message).
fn offer_hint(with_message: bool) -> String {
    let mut hints = vec![OFFER_KEYS.hint(&[Offer::Resume], "resume")];
    if with_message {
        hints.push(OFFER_KEYS.hint(&[Offer::Copy], "copy the message"));
    }
    hints.push(OFFER_KEYS.hint(&[Offer::Stay], "stay"));
    hints.join(" · ")
}
