//! The boxes over the tree: continue from here (branch or fork), the
//! message to send again once the agent resumes, and the help.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::Frame;

use crate::ui::input;
use crate::ui::keymap::{label, HelpRow};
use crate::ui::text::{truncate, wrap_styled};
use crate::ui::theme::Theme;
use crate::ui::tree::dialogs::{user_text, Choice, Offer, CONTINUE_KEYS, OFFER_KEYS};
use crate::ui::tree::keys::KEYS;
use crate::ui::tree::state::TreeState;

pub fn render_continue(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect, entry: &str) {
    let Some(i) = t.loaded.tree.index_of(entry) else {
        return;
    };
    let user = user_text(t, entry);
    let box_w = 78u16.min(area.width.saturating_sub(2));
    let inner = boxed_width(box_w);
    let mut lines = pad_lines(
        vec![Line::from(Span::styled(
            truncate(&t.entry_line(i), inner),
            theme.accent(),
        ))],
        "",
    );
    lines.push(Line::from(""));
    if let Some(text) = &user {
        lines.extend(pad_lines(
            wrap_styled(
                &[vec![(
                    "Continuing before this user message; its text, to re-send or edit:"
                        .to_string(),
                    theme.dim(),
                )]],
                inner,
            ),
            "",
        ));
        // Room for the rest: the choices (3), blank lines and the border.
        let room = usize::from(area.height)
            .saturating_sub(lines.len() + 2 + 3 + 2)
            .clamp(1, 6);
        lines.extend(message_lines(text, inner, room, theme));
        lines.extend(pad_lines(
            vec![Line::from(Span::styled(
                format!(
                    "  ({} copies it to the clipboard)",
                    CONTINUE_KEYS.keys_of(&[Choice::Copy])
                ),
                theme.dim(),
            ))],
            "",
        ));
        lines.push(Line::from(""));
    }
    // The choice's number, then what it does (other keys for it after).
    let choice = |c: Choice, text: &str| {
        let keys = CONTINUE_KEYS.hinted(&[c]);
        let mut text = text.to_string();
        if keys.len() > 1 {
            text.push_str(&format!(" ({})", label(&keys[1..], "/")));
        }
        Line::from(vec![
            Span::styled(
                format!(" {} ", keys.first().map(|k| k.label()).unwrap_or_default()),
                theme.cursor(),
            ),
            Span::raw(text),
        ])
    };
    lines.push(choice(
        Choice::Branch,
        "branch here, in place (append a branch_summary; optional summary)",
    ));
    lines.push(choice(
        Choice::Fork,
        if user.is_some() {
            "fork to a new session file (root → before this message, labels kept)"
        } else {
            "fork to a new session file (root → here, labels kept)"
        },
    ));
    lines.push(choice(Choice::Cancel, "cancel"));
    crate::ui::widgets::text_box(f, theme, area, "Continue from here", lines, box_w);
}

/// The text width inside a box `box_w` wide: its border and a column of
/// padding each side.
fn boxed_width(box_w: u16) -> usize {
    usize::from(box_w.saturating_sub(4)).max(1)
}

/// Lines inside a box: a column of padding, then `indent`.
fn pad_lines(lines: Vec<Line<'static>>, indent: &str) -> Vec<Line<'static>> {
    lines
        .into_iter()
        .map(|mut l| {
            l.spans.insert(0, Span::raw(format!(" {indent}")));
            l
        })
        .collect()
}

/// A user message in a box: each of its lines wrapped to `inner` less an
/// indent of two, at most `room` screen lines (the last then says how many
/// more there are).
fn message_lines(text: &str, inner: usize, room: usize, theme: &Theme) -> Vec<Line<'static>> {
    let body = crate::ui::text::sanitize_block(text);
    let mut message: Vec<Line<'static>> = Vec::new();
    for l in body.lines() {
        message.extend(wrap_styled(
            &[vec![(l.to_string(), Style::default())]],
            inner.saturating_sub(2).max(1),
        ));
    }
    let room = room.max(1);
    if message.len() > room {
        let more = message.len() - (room - 1);
        message.truncate(room - 1);
        message.push(Line::from(Span::styled(
            format!("… {more} more lines"),
            theme.dim(),
        )));
    }
    pad_lines(message, "  ")
}

/// After a branch or fork before a user message: its text, to send again
/// once the agent resumes (Atomic puts it back in its editor), wrapped to
/// the box (at most [`RESEND_LINES`] lines, fewer on a short screen), with
/// a column of padding inside the border; once `y` copied it, the box
/// says so.
pub fn render_resend(f: &mut Frame, theme: &Theme, area: Rect, text: &str, copied: bool) {
    let box_w = 78u16.min(area.width.saturating_sub(2));
    let inner = boxed_width(box_w);
    let head = pad_lines(
        wrap_styled(
            &[vec![(
                "The session continues before this user message; its text, to send again:"
                    .to_string(),
                theme.dim(),
            )]],
            inner,
        ),
        "",
    );
    let keys = pad_lines(
        wrap_styled(
            &[vec![(
                format!(
                    "{} resume the agent there · {} copy the message · {} stay",
                    OFFER_KEYS.keys_of(&[Offer::Resume]),
                    OFFER_KEYS.keys_of(&[Offer::Copy]),
                    OFFER_KEYS.keys_of(&[Offer::Stay]),
                ),
                Style::default(),
            )]],
            inner,
        ),
        "",
    );
    // Head, message, the copied line (or a blank), keys, the border.
    let fixed = head.len() + 1 + keys.len() + 2;
    let room = usize::from(area.height)
        .saturating_sub(fixed)
        .clamp(1, RESEND_LINES);
    let mut lines = head;
    lines.extend(message_lines(text, inner, room, theme));
    lines.push(if copied {
        // OSC 52 has no answer: what arbor did, not what the terminal did.
        Line::from(Span::styled(
            " ✓ Sent to the terminal's clipboard (OSC 52)",
            theme.success(),
        ))
    } else {
        Line::from("")
    });
    lines.extend(keys);
    crate::ui::widgets::text_box(f, theme, area, "Your message", lines, box_w);
}

/// The message lines the resend box shows at most (then `… N more lines`).
pub const RESEND_LINES: usize = 8;

/// The help box's width.
pub const HELP_WIDTH: u16 = 80;

/// The help's rows: typing, the tree's keys, then the search's editing
/// keys (those the tree leaves to it). The help's own keys are on its
/// last line.
pub fn help_rows() -> Vec<HelpRow> {
    KEYS.help_with_field(
        "search: every term must match (words, \"phrases\", re:regex, in:scope)",
        "Editing the search",
        &input::KEYS,
    )
}

pub fn render_help(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    crate::ui::widgets::help_overlay(
        f,
        theme,
        area,
        "arbor tree · keys",
        &help_rows(),
        HELP_WIDTH,
        t.help_scroll,
    );
}
