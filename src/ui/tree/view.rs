//! Drawing the tree view.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use super::keys::{
    Action, Choice, CompareAction, ContextAction, ExportChoice, Offer, COMPARE_KEYS, CONTEXT_KEYS,
    CONTINUE_KEYS, EXPORT_KEYS, KEYS, OFFER_KEYS,
};
use super::state::{TreeDialog, TreeState};
use crate::ui::input;
use crate::ui::keymap::{label, Answer, HelpRow, Scroll, CONFIRM};
use crate::ui::text::{truncate, width, wrap_styled};
use crate::ui::theme::Theme;
use crate::ui::widgets::flow_hints;
use arbor_session::render::sanitize_line;
use arbor_session::view::Filter;
use arbor_session::view::{label_part, row_prefix};

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

pub fn render(f: &mut Frame, t: &TreeState, theme: &Theme) {
    let area = f.area();
    render_header(f, t, theme, area);
    let main = list_area(area.width, area.height);
    if let Some(c) = &t.compare {
        render_compare(f, c, theme, main, area);
    } else if t.context_view {
        render_context(f, t, theme, main);
    } else if detail_visible(t, area.width) {
        let [l, r] = Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
            .areas(main);
        render_list(f, t, theme, l);
        render_detail(f, t, theme, r);
    } else {
        render_list(f, t, theme, main);
    }
    render_footer(f, t, theme, area);
    match &t.dialog {
        TreeDialog::Help => render_help(f, t, theme, area),
        TreeDialog::Continue { entry } => render_continue(f, t, theme, area, entry),
        TreeDialog::OfferResume {
            prompt: Some(text),
            copied,
            ..
        } => render_resend(f, theme, area, text, *copied),
        _ => {}
    }
}

fn render_header(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    let s = &t.loaded.session;
    let name = t
        .loaded
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
        .unwrap_or_else(|| s.id().to_string());
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
            (area.width as usize).saturating_sub(width(&right) + 20)
        )
    );
    let pad = (area.width as usize).saturating_sub(width(&left) + width(&right));
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(left, theme.title()),
            Span::raw(" ".repeat(pad)),
            Span::styled(right, theme.dim()),
        ])),
        Rect { height: 1, ..area },
    );
    let search = if let Some(c) = &t.compare {
        // Which side is which, and where the view is.
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
    } else if t.context_view {
        // Typing does not search here: say what the keys do instead.
        Line::from(Span::styled(
            "↑↓ scroll · Esc back to the tree · F1 help",
            theme.dim(),
        ))
    } else if t.search.is_empty() {
        Line::from(Span::styled("type to search · F1 help", theme.dim()))
    } else {
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

/// Columns of the selection gutter (`› `), which never pans.
const GUTTER: usize = 2;

/// Atomic's horizontal viewport (`tree-selector-viewport.ts`): rows pan left
/// together, only when the selected row's content would start too far right
/// to show a useful part of it; it then starts a little in from the left.
/// `rows` = (body width, anchor column) of the rows on screen; returns the
/// columns to skip.
pub fn pan_offset(rows: &[(usize, usize)], selected: Option<usize>, view_width: usize) -> usize {
    let max_body = rows.iter().map(|r| r.0).max().unwrap_or(0);
    let max_scroll = max_body.saturating_sub(view_width);
    let Some(anchor) = selected.and_then(|i| rows.get(i)).map(|r| r.1) else {
        return 0;
    };
    if max_scroll == 0 {
        return 0;
    }
    let min_visible = (view_width / 3).clamp(4, 20);
    if anchor + min_visible <= view_width {
        return 0;
    }
    let context = (view_width / 4).clamp(2, 12);
    max_scroll.min(anchor.saturating_sub(context))
}

/// The part of `spans` between columns `from` and `from + width`; a wide
/// character cut by either edge becomes a space.
fn slice_spans(spans: Vec<Span<'static>>, from: usize, width: usize) -> Vec<Span<'static>> {
    use unicode_width::UnicodeWidthChar;
    let end = from + width;
    let mut out = Vec::new();
    let mut col = 0;
    for sp in spans {
        let mut text = String::new();
        for c in sp.content.chars() {
            let w = c.width().unwrap_or(0);
            let (start, stop) = (col, col + w);
            col = stop;
            if stop <= from || start >= end {
                if w == 0 && start >= from && start < end {
                    text.push(c);
                }
                continue;
            }
            if start < from || stop > end {
                text.push_str(&" ".repeat(stop.min(end) - start.max(from)));
            } else {
                text.push(c);
            }
        }
        if !text.is_empty() {
            out.push(Span::styled(text, sp.style));
        }
    }
    out
}

fn render_list(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    if t.rows.is_empty() {
        f.render_widget(
            Paragraph::new(Span::styled("  No entries found", theme.dim())),
            area,
        );
        return;
    }
    let calls = t.calls_ref();
    let tree = &t.loaded.tree;
    let fmt = |ts: &str| t.label_time(ts);
    let lt: Option<&dyn Fn(&str) -> String> = if t.label_times { Some(&fmt) } else { None };
    // Each visible row's body (everything after the selection gutter) and
    // where its own content starts, as Atomic builds them.
    let mut bodies: Vec<(usize, Vec<Span<'static>>, usize)> = Vec::new();
    for (pos, r) in t
        .rows
        .iter()
        .enumerate()
        .skip(t.scroll)
        .take(area.height as usize)
    {
        let e = &t.loaded.session.entries[r.entry()];
        let mut spans = vec![Span::styled(row_prefix(&t.rows, pos), theme.dim())];
        if r.folded() && !r.connector() {
            spans.push(Span::styled("⊞ ", theme.accent()));
        }
        // The entry marked to compare (Shift+M).
        if t.mark.as_deref() == Some(e.id.as_str()) {
            spans.push(Span::styled("◆ ", theme.warning()));
        }
        if r.on_active_path() {
            spans.push(Span::styled("• ", theme.active_path()));
        }
        let anchor: usize = spans.iter().map(|s| width(&s.content)).sum();
        let label = label_part(e, tree, lt);
        let text = sanitize_line(&arbor_session::render::entry_text(e, calls));
        let style = match e.role() {
            Some("user") => theme.accent(),
            Some("assistant") => Style::default(),
            _ => theme.dim(),
        };
        // What matched the search is marked in the label and the text.
        for (part, st) in [(label, theme.label()), (text, style)] {
            if part.is_empty() {
                continue;
            }
            let marks = super::detail::query_marks(&part, &t.query);
            spans.extend(crate::ui::text::highlighted(
                &part,
                &marks,
                st,
                theme.highlight(),
            ));
        }
        bodies.push((pos, spans, anchor));
    }
    let view_width = (area.width as usize).saturating_sub(GUTTER);
    let geometry: Vec<(usize, usize)> = bodies
        .iter()
        .map(|(_, sp, a)| (sp.iter().map(|s| width(&s.content)).sum(), *a))
        .collect();
    let sel_idx = bodies.iter().position(|b| Some(b.0) == t.selected);
    let pan = pan_offset(&geometry, sel_idx, view_width);
    let mut lines = Vec::new();
    for (pos, spans, _) in bodies {
        let sel = t.selected == Some(pos);
        // Panned: `«` in the gutter says the rows are shifted left.
        let gutter = match (sel, pan > 0) {
            (true, false) => "› ",
            (true, true) => "›«",
            (false, false) => "  ",
            (false, true) => " «",
        };
        let mut line_spans = vec![Span::styled(gutter, theme.cursor())];
        line_spans.extend(slice_spans(spans, pan, view_width));
        let mut line = Line::from(line_spans);
        if sel {
            line = line.patch_style(theme.selected());
        }
        lines.push(line);
    }
    f.render_widget(Paragraph::new(lines), area);
}

fn render_detail(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    let block = Block::default()
        .borders(Borders::LEFT)
        .border_style(theme.dim());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(i) = t.selected_entry() else { return };
    let e = &t.loaded.session.entries[i];
    let label = t.loaded.tree.labels.get(&e.id).map(|l| l.text.as_str());
    let lines = super::detail::detail_lines(e, label, &t.query, theme);
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((t.detail_scroll, 0)),
        Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        },
    );
}

fn render_context(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
    let (Some(i), Some(ctx)) = (t.selected_entry(), t.context.as_ref()) else {
        f.render_widget(Paragraph::new("No entry selected"), area);
        return;
    };
    let mut lines: Vec<Line> = Vec::new();
    let model = ctx
        .model
        .as_ref()
        .map(|(p, m)| {
            format!(
                "{}/{}",
                p.as_str().unwrap_or("?"),
                m.as_str().unwrap_or("?")
            )
        })
        .unwrap_or_else(|| "(none)".into());
    lines.push(Line::from(Span::styled(
        sanitize_line(&format!(
            "What the model sees when resuming at {} · {} · ~{} tokens · model {} · thinking {}",
            t.entry_id(i),
            match ctx.messages.len() {
                1 => "1 message".to_string(),
                n => format!("{n} messages"),
            },
            ctx.estimated_tokens(),
            model,
            ctx.thinking_level.as_str().unwrap_or("?"),
        )),
        theme.dim(),
    )));
    lines.push(Line::from(""));
    for (k, m) in ctx.messages.iter().enumerate() {
        if Some(k) == ctx.boundary {
            lines.push(Line::from(Span::styled(
                format!("──── compaction boundary ({}): earlier entries reach the model only as this summary ────", m.entry_id),
                theme.warning(),
            )));
        }
        lines.push(Line::from(vec![
            Span::styled(format!("{} ", m.role), theme.accent()),
            Span::styled(format!("({})", m.entry_id), theme.dim()),
        ]));
        for l in crate::ui::text::sanitize_block(&m.text).lines().take(40) {
            lines.push(Line::from(format!("  {l}")));
        }
        if Some(k) == ctx.boundary {
            lines.push(Line::from(Span::styled(
                "──── end of compaction summary ────",
                theme.warning(),
            )));
        }
    }
    f.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((t.context_scroll, 0)),
        area,
    );
}

/// The compare view's rows on a `width` × `height` screen, and the first
/// one shown: its scroll, held back when a resize left fewer rows below.
fn compare_rows(
    c: &super::state::CompareView,
    width: u16,
    height: u16,
) -> (Vec<arbor_session::compare::Row>, usize) {
    let rows = arbor_session::compare::layout(&c.cmp, width as usize);
    let shown = list_area(width, height).height as usize;
    let first = c.scroll.min(rows.len().saturating_sub(shown));
    (rows, first)
}

/// The compare view: the comparison's rows for this width, from its
/// scroll (the rows are sanitized by the layout).
fn render_compare(
    f: &mut Frame,
    c: &super::state::CompareView,
    theme: &Theme,
    area: Rect,
    screen: Rect,
) {
    use arbor_session::compare::{Kind, Row, Tone};
    let style = |tone: Tone| match tone {
        Tone::Title => theme.title(),
        Tone::Heading | Tone::SideName => theme.accent(),
        Tone::Item(Kind::User) => theme.accent(),
        Tone::Item(Kind::Assistant) => Style::default(),
        Tone::Item(Kind::Summary) => theme.label(),
        Tone::Item(Kind::Tool | Kind::Other) | Tone::Dim => theme.dim(),
        Tone::Note => theme.warning(),
    };
    let width = area.width as usize;
    let col = width.saturating_sub(3) / 2;
    let (rows, first) = compare_rows(c, screen.width, screen.height);
    let lines: Vec<Line> = rows
        .into_iter()
        .skip(first)
        .take(area.height as usize)
        .map(|row| match row {
            Row::Full(tone, text) => Line::from(Span::styled(text, style(tone))),
            Row::Pair { a, b, same } => {
                let pad = col.saturating_sub(crate::ui::text::width(&a.1));
                Line::from(vec![
                    Span::styled(a.1, style(a.0)),
                    Span::raw(" ".repeat(pad)),
                    Span::styled(if same { " = " } else { " │ " }, theme.dim()),
                    Span::styled(b.1, style(b.0)),
                ])
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

fn render_footer(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
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
    }
    let mut spans = vec![Span::styled(status, theme.dim())];
    let field = match &t.dialog {
        TreeDialog::Label { input, .. } => Some((input, "Label: ", "save (empty removes)")),
        TreeDialog::BranchSummary { input, .. } => Some((
            input,
            "Summary of the abandoned branch (optional): ",
            "branch here",
        )),
        _ => None,
    };
    let prompt: Option<Line> = field.map(|(input, label, yes)| {
        let (line, col) = crate::ui::input::prompt(
            input,
            Span::styled(label, theme.accent()),
            Span::styled(crate::ui::input::prompt_hint(yes), theme.dim()),
            area.width,
        );
        f.set_cursor_position((area.x + col, y));
        line
    });
    // A question and its keys, over the footer's rows (the hints give way):
    // wrapped, so the keys that answer it are never cut off at the edge.
    let question: Option<(String, Style, String)> = match &t.dialog {
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
    };
    if let Some((text, style, keys)) = question {
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
        None => {
            if let Some((msg, err)) = &t.status {
                spans.push(Span::raw("  "));
                spans.push(Span::styled(
                    sanitize_line(msg),
                    if *err { theme.error() } else { theme.success() },
                ));
            }
            Line::from(spans)
        }
    };
    f.render_widget(Paragraph::new(status_line), row(0));
    for (i, h) in hint_lines(t, area.width as usize).into_iter().enumerate() {
        f.render_widget(
            Paragraph::new(Span::styled(h, theme.dim())),
            row(1 + i as u16),
        );
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

fn render_continue(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect, entry: &str) {
    let Some(i) = t.loaded.tree.index_of(entry) else {
        return;
    };
    let user = super::keys::user_text(t, entry);
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
            text.push_str(&format!(" ({})", label(keys[1..].iter().copied(), "/")));
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
fn render_resend(f: &mut Frame, theme: &Theme, area: Rect, text: &str, copied: bool) {
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

fn render_help(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect) {
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
