//! Drawing the tree view.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use ratatui::Frame;

use super::state::{TreeDialog, TreeState};
use crate::session::render::sanitize_line;
use crate::session::view::{label_part, row_prefix};
use crate::ui::text::{truncate, width};
use crate::ui::theme::Theme;

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

fn detail_visible(t: &TreeState, width: u16) -> bool {
    t.detail_on.unwrap_or(width >= DETAIL_MIN_WIDTH) && width >= 60
}

pub fn render(f: &mut Frame, t: &TreeState, theme: &Theme) {
    let area = f.area();
    render_header(f, t, theme, area);
    let main = list_area(area.width, area.height);
    if t.context_view {
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
        TreeDialog::Help => render_help(f, theme, area),
        TreeDialog::Continue { entry } => render_continue(f, t, theme, area, entry),
        TreeDialog::OfferResume {
            prompt: Some(text), ..
        } => render_resend(f, theme, area, text),
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
                    sanitize_line(&crate::session::entry::content_text(
                        e.message().and_then(|m| m.get("content")),
                        " ",
                    ))
                })
        })
        .filter(|t| !t.trim().is_empty())
        .unwrap_or_else(|| s.id().to_string());
    let mut right = String::new();
    if s.needs_migration() {
        right.push_str(&format!("v{} file ", s.file_version));
    }
    if t.loaded.flavor == crate::session::ContextFlavor::Pi {
        right.push_str("pi flavour ");
    }
    if let Some(what) = s.diagnostics.brief() {
        right.push_str(&format!("{what} "));
    }
    let title = if t.context_view {
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
    let search = if t.search.is_empty() {
        Line::from(Span::styled("type to search · F1 help", theme.dim()))
    } else {
        let (shown, col) = t.search.view((area.width as usize).saturating_sub(8));
        // The terminal cursor marks where typing goes, unless a prompt or
        // another view has the keys.
        if t.dialog == TreeDialog::None && !t.context_view {
            f.set_cursor_position((area.x + 8 + col as u16, area.y + 1));
        }
        Line::from(vec![
            Span::styled("search: ", theme.accent()),
            Span::raw(shown.to_string()),
        ])
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
    let words = super::detail::search_words(t.search.text());
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
        let e = &t.loaded.session.entries[r.entry];
        let mut spans = vec![Span::styled(row_prefix(&t.rows, pos), theme.dim())];
        if r.folded && !r.connector {
            spans.push(Span::styled("⊞ ", theme.accent()));
        }
        if r.on_active_path {
            spans.push(Span::styled("• ", theme.active_path()));
        }
        let anchor: usize = spans.iter().map(|s| width(&s.content)).sum();
        let label = label_part(e, tree, lt);
        let text = sanitize_line(&crate::session::render::entry_text(e, &calls));
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
            let marks = super::detail::match_positions(&part, &words);
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
    let lines = super::detail::detail_lines(e, label, t.search.text(), theme);
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
            "What the model sees when resuming at {} · {} messages · ~{} tokens · model {} · thinking {}",
            t.entry_id(i),
            ctx.messages.len(),
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
    // Searching, the rows are the matching entries: ↑/↓ step through them.
    if !t.search.text().trim().is_empty() {
        let n = t.rows.len();
        status.push_str(&match n {
            0 => " · no match".to_string(),
            1 => " · 1 match".to_string(),
            n => format!(" · {n} matches"),
        });
    }
    let mut spans = vec![Span::styled(status, theme.dim())];
    let prompt: Option<Line> = match &t.dialog {
        TreeDialog::Label { input, .. } => {
            let (line, col) = crate::ui::input::prompt(
                input,
                Span::styled("Label: ", theme.accent()),
                Span::styled("  enter save (empty removes) · esc cancel", theme.dim()),
                area.width,
            );
            f.set_cursor_position((area.x + col, y));
            Some(line)
        }
        TreeDialog::BranchSummary { input, .. } => {
            let (line, col) = crate::ui::input::prompt(
                input,
                Span::styled("Summary of the abandoned branch (optional): ", theme.accent()),
                Span::styled("  enter branch here · esc cancel", theme.dim()),
                area.width,
            );
            f.set_cursor_position((area.x + col, y));
            Some(line)
        }
        TreeDialog::ConfirmMigrate { .. } => Some(Line::from(vec![
            Span::styled(
                format!(
                    "This is a version {} file: arbor must first rewrite it as version 3 (atomically, keeping a .bak copy). ",
                    t.loaded.session.file_version
                ),
                theme.warning(),
            ),
            Span::raw("enter rewrite · esc cancel"),
        ])),
        TreeDialog::Export { thinking, .. } => Some(Line::from(vec![
            Span::styled("Export the branch ending here to the current folder: ", theme.accent()),
            Span::raw(format!(
                "m Markdown · h HTML · t thinking {} · esc cancel",
                if *thinking { "[on]" } else { "[off]" }
            )),
        ])),
        TreeDialog::OfferResume { what, prompt, .. } => Some(Line::from(vec![
            Span::styled(format!("{what} "), theme.success()),
            Span::raw(if prompt.is_some() {
                "Resume the agent there now? enter resume · y copy the message · esc stay"
            } else {
                "Resume the agent there now? enter resume · esc stay"
            }),
        ])),
        _ => None,
    };
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
    let (h1, h2) = if t.context_view {
        ("↑/↓ PgUp/PgDn scroll · F3/esc back to the tree", "")
    } else {
        (
            "↑/↓ move · ←/→ page · ctrl+←/→ fold/jump · enter continue from here · shift+l label · shift+t label time · shift+e export",
            "ctrl+d/t/u/l/a filter · ctrl+o cycle · F2 detail · F3 context · F1 help · esc back",
        )
    };
    f.render_widget(Paragraph::new(Span::styled(h1, theme.dim())), row(1));
    f.render_widget(Paragraph::new(Span::styled(h2, theme.dim())), row(2));
}

use crate::ui::widgets::centered;

fn render_continue(f: &mut Frame, t: &TreeState, theme: &Theme, area: Rect, entry: &str) {
    let Some(i) = t.loaded.tree.index_of(entry) else {
        return;
    };
    let user = super::keys::user_text(t, entry);
    let mut lines = vec![
        Line::from(Span::styled(truncate(&t.entry_line(i), 70), theme.accent())),
        Line::from(""),
    ];
    if let Some(text) = &user {
        lines.push(Line::from(Span::styled(
            "Continuing before this user message; its text, to re-send or edit:",
            theme.dim(),
        )));
        for l in crate::ui::text::sanitize_block(text).lines().take(6) {
            lines.push(Line::from(format!("  {l}")));
        }
        lines.push(Line::from(Span::styled(
            "  (y copies it to the clipboard)",
            theme.dim(),
        )));
        lines.push(Line::from(""));
    }
    lines.push(Line::from(vec![
        Span::styled(" 1 ", theme.cursor()),
        Span::raw("branch here, in place (append a branch_summary; optional summary)"),
    ]));
    lines.push(Line::from(vec![
        Span::styled(" 2 ", theme.cursor()),
        Span::raw(if user.is_some() {
            "fork to a new session file (root → before this message, labels kept)"
        } else {
            "fork to a new session file (root → here, labels kept)"
        }),
    ]));
    lines.push(Line::from(vec![
        Span::styled(" 3 ", theme.cursor()),
        Span::raw("cancel (esc)"),
    ]));
    let h = lines.len() as u16 + 2;
    let r = centered(area, 78, h);
    crate::ui::widgets::clear_box(f, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(" Continue from here ", theme.title()))
        .border_style(theme.accent());
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        r,
    );
}

/// After a branch or fork before a user message: its text, to send again
/// once the agent resumes (Atomic puts it back in its editor).
fn render_resend(f: &mut Frame, theme: &Theme, area: Rect, text: &str) {
    let mut lines = vec![Line::from(Span::styled(
        "The session continues before this user message; its text, to send again:",
        theme.dim(),
    ))];
    let body = crate::ui::text::sanitize_block(text);
    let all: Vec<&str> = body.lines().collect();
    // One screen line per message line (cut, not wrapped), so the box's
    // height is known.
    for l in all.iter().take(8) {
        lines.push(Line::from(format!("  {}", truncate(l, 72))));
    }
    if all.len() > 8 {
        lines.push(Line::from(Span::styled(
            format!("  … {} more lines", all.len() - 8),
            theme.dim(),
        )));
    }
    lines.push(Line::from(""));
    lines.push(Line::from(vec![
        Span::styled(" enter ", theme.cursor()),
        Span::raw("resume the agent there · "),
        Span::styled("y ", theme.cursor()),
        Span::raw("copy the message · "),
        Span::styled("esc ", theme.cursor()),
        Span::raw("stay"),
    ]));
    let h = lines.len() as u16 + 2;
    let r = centered(area, 78, h);
    crate::ui::widgets::clear_box(f, r);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(" Your message ", theme.title()))
        .border_style(theme.accent());
    f.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        r,
    );
}

pub const HELP: &[(&str, &str)] = &[
    ("↑/↓", "move (wraps around)"),
    ("←/→ PgUp/PgDn", "page up / down; Home/End first/last"),
    (
        "ctrl+← / alt+←",
        "fold a root or branch start, else jump up a branch",
    ),
    (
        "ctrl+→ / alt+→",
        "unfold, else jump down to the next branch or its end",
    ),
    (
        "type / backspace",
        "search (every word must match); esc clears",
    ),
    (
        "↑/↓ ctrl+n/p",
        "searching: step through the matching entries",
    ),
    (
        "ctrl+b/f alt+b/f",
        "move in the search; ctrl+e its end; ctrl+w/k delete",
    ),
    (
        "enter",
        "continue from here: branch in place or fork to a new file",
    ),
    ("shift+l", "edit the label (empty removes it)"),
    ("shift+t", "show label times"),
    (
        "shift+e",
        "export the branch ending here into the current folder",
    ),
    ("ctrl+d", "default filter"),
    ("ctrl+t", "no tool results"),
    ("ctrl+u", "user messages only"),
    ("ctrl+l", "labeled entries only"),
    ("ctrl+a", "all entries"),
    ("ctrl+o / ctrl+shift+o", "cycle the filters"),
    ("F2", "detail pane on/off; shift+↑/↓ scrolls it"),
    ("F3", "context: what the model sees when resuming here"),
    ("F1 or ?", "this help (? when the search is empty)"),
    ("esc / ctrl+c", "back to the picker (or quit) / quit"),
];

fn render_help(f: &mut Frame, theme: &Theme, area: Rect) {
    let rows: Vec<crate::ui::keymap::HelpRow> = HELP
        .iter()
        .map(|(k, t)| crate::ui::keymap::HelpRow {
            keys: k.to_string(),
            text: t.to_string(),
        })
        .collect();
    crate::ui::widgets::help_overlay(f, theme, area, "arbor tree · keys", &rows, 80, 0);
}
