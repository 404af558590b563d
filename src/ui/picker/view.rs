//! Drawing the picker from its state.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use super::keys::{sessions, Action, LabelAction, KEYS, LABEL_KEYS, PERMANENT_KEYS};
use super::state::{Dialog, PickerState, Row, Scope, StatusKind};
use crate::ui::app::App;
use crate::ui::input;
use crate::ui::keymap::{Answer, HelpRow, CONFIRM};
use crate::ui::text::{
    clip, fit, sanitize_line, short_home_in, truncate, truncate_left, truncate_middle, width,
    wrap_styled,
};
use crate::ui::theme::Theme;
use crate::ui::widgets::flow_hints;
use arbor_search::query::new_matcher;
use arbor_util::age;

const HEADER_ROWS: u16 = 3;
const FOOTER_ROWS: u16 = 3;
/// The preview opens by itself from this width on.
pub const PREVIEW_MIN_WIDTH: u16 = 110;

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
    if p.visible.len() > h {
        h.saturating_sub(1)
    } else {
        h
    }
}

fn footer_rows(p: &PickerState, width: u16, height: u16) -> u16 {
    let n = footer_lines(p, &Theme::plain(), width).0.len() as u16;
    n.clamp(
        FOOTER_ROWS,
        height.saturating_sub(HEADER_ROWS).max(FOOTER_ROWS),
    )
}

pub fn preview_visible(p: &PickerState, width: u16) -> bool {
    p.preview_on.unwrap_or(width >= PREVIEW_MIN_WIDTH) && width >= 60
}

pub fn render(f: &mut Frame, app: &App, theme: &Theme) {
    let p = &app.picker;
    let area = f.area();
    let full = list_area(p, area.width, area.height);
    let (list, preview) = if preview_visible(p, area.width) {
        let [l, r] = Layout::horizontal([Constraint::Percentage(58), Constraint::Percentage(42)])
            .areas(full);
        (l, Some(r))
    } else {
        (full, None)
    };
    render_header(f, p, theme, area);
    render_list(f, p, theme, list);
    if let Some(r) = preview {
        render_preview(f, p, theme, r);
    }
    render_footer(f, p, theme, area);
    if p.dialog == Dialog::Help {
        render_help(f, p, theme, area);
    }
    if let Dialog::Labels { items, selected } = &p.dialog {
        render_labels(f, p, theme, area, items.as_deref(), *selected);
    }
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

fn render_labels(
    f: &mut Frame,
    p: &PickerState,
    theme: &Theme,
    area: Rect,
    items: Option<&[arbor_session::extras::LabelRow]>,
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
            "  No labels in these sessions (shift+l in the tree sets one)",
            theme.dim(),
        ))),
        Some(v) => {
            let top = selected.saturating_sub(page.saturating_sub(1));
            for (i, l) in v.iter().enumerate().skip(top).take(page) {
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
                let style = if i == selected {
                    theme.selected()
                } else {
                    Style::default()
                };
                lines.push(Line::from(Span::styled(fit(&line, inner), style)));
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

fn render_header(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    // Atomic's title line: the title on the left; scope (or the loading
    // progress in its place), name filter and sort on the right.
    let title = match p.scope {
        Scope::Current => "Resume Session (Current Folder)",
        Scope::All => "Resume Session (All)",
    };
    let mut right: Vec<Span> = Vec::new();
    if let Some((done, total)) = p.loading {
        // Before the store is listed the count is unknown.
        let progress = if total == 0 {
            "Loading…".to_string()
        } else {
            format!("Loading {done}/{total}")
        };
        right.push(Span::styled("○ Current Folder | ", theme.dim()));
        right.push(Span::styled(progress, theme.accent()));
    } else {
        let on = |yes: bool| if yes { theme.accent() } else { theme.dim() };
        let (cur, all) = match p.scope {
            Scope::Current => ("◉ Current Folder", "○ All"),
            Scope::All => ("○ Current Folder", "◉ All"),
        };
        right.push(Span::styled(cur, on(p.scope == Scope::Current)));
        right.push(Span::styled(" | ", theme.dim()));
        right.push(Span::styled(all, on(p.scope == Scope::All)));
    }
    right.push(Span::styled("  Name: ", theme.dim()));
    right.push(Span::styled(
        if p.named_only { "Named" } else { "All" },
        theme.accent(),
    ));
    right.push(Span::styled("  Sort: ", theme.dim()));
    right.push(Span::styled(p.sort.label(), theme.accent()));
    let w = area.width as usize;
    let right = clip_spans(right, w);
    let right_w: usize = right.iter().map(|s| width(&s.content)).sum();
    // Cut without an ellipsis, as Atomic cuts the title.
    let left = clip(title, w.saturating_sub(right_w + 1));
    let pad = w.saturating_sub(width(&left) + right_w);
    let mut line = vec![
        Span::styled(left, theme.title()),
        Span::raw(" ".repeat(pad)),
    ];
    line.extend(right);
    // The header's three lines: title and toggles, notes, the query.
    let row = |i: u16| Rect {
        y: area.y + i,
        height: 1,
        ..area
    };
    f.render_widget(Paragraph::new(Line::from(line)), row(0));
    // Where Atomic leaves a blank line: what arbor adds (the index being
    // built, the demo store note, internal sessions shown).
    let mut notes: Vec<Span> = Vec::new();
    if !p.marked.is_empty() {
        // Marks the list does not show (another query, scope or filter)
        // are still in the batch: said, so that it holds no surprise.
        let hidden = p.marked.len() - p.marked_listed();
        let mut text = format!("✓ {} marked", p.marked.len());
        if hidden > 0 {
            text.push_str(&format!(" ({hidden} not listed)"));
        }
        notes.push(Span::styled(text, theme.success()));
        notes.push(Span::styled(
            format!(
                "{} · {}",
                KEYS.hint(&[Action::Delete], "delete them"),
                KEYS.hint(&[Action::Unmark], "clear")
            ),
            theme.dim(),
        ));
    }
    if let Some((done, total)) = p.indexing {
        notes.push(Span::styled(
            format!("Indexing {done}/{total}"),
            theme.dim(),
        ));
    }
    // Never an incomplete answer shown as complete (see `search_bodies`).
    if p.query_active() && p.search_incomplete.is_some() {
        let text = match p.search_reading {
            Some(n) => format!("Search incomplete: reading {n} files"),
            None => "Search incomplete".to_string(),
        };
        notes.push(Span::styled(text, theme.warning()));
    }
    if let Some(n) = &p.note {
        notes.push(Span::styled(sanitize_line(n), theme.dim()));
    }
    if p.show_internal {
        notes.push(Span::styled("Internal: shown", theme.warning()));
    }
    let mut spans = Vec::new();
    for (i, n) in notes.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", theme.dim()));
        }
        spans.push(n);
    }
    f.render_widget(Paragraph::new(Line::from(spans)), row(1));
    // The field's text is clean by construction (see `ui::input::clean`).
    let (shown, col) = p.query.view((area.width as usize).saturating_sub(2));
    let mut q = vec![
        Span::styled("> ", theme.accent()),
        Span::raw(shown.to_string()),
    ];
    if let Some(err) = p.parsed.error() {
        // Cut with an ellipsis: an error cut at the edge reads as whole.
        let room = (area.width as usize).saturating_sub(2 + width(shown) + 2);
        q.push(Span::styled(
            format!("  {}", truncate(&sanitize_line(err), room)),
            theme.error(),
        ));
    }
    f.render_widget(Paragraph::new(Line::from(q)), row(2));
    // The terminal's own cursor, where typing goes (and where an input
    // method composes); none while a question or the help is up.
    if p.dialog == Dialog::None {
        f.set_cursor_position((area.x + 2 + col as u16, area.y + 2));
    }
}

/// Spans cut to `max` cells in all.
fn clip_spans(spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    let mut left = max;
    let mut out = Vec::new();
    for s in spans {
        let t = clip(&s.content, left);
        left -= width(&t);
        let done = t.len() < s.content.len();
        out.push(Span::styled(t, s.style));
        if done {
            break;
        }
    }
    out
}

/// Atomic's texts, which depend on the filters only (a query that matches
/// nothing gets the same hint as an empty folder).
fn empty_text(p: &PickerState) -> &'static str {
    match (p.named_only, p.scope) {
        (false, Scope::Current) => "No sessions in current folder. tab view all.",
        (false, Scope::All) => "No sessions found",
        (true, Scope::Current) => {
            "No named sessions in current folder. ctrl+n show all · tab view all."
        }
        (true, Scope::All) => "No named sessions found. Press ctrl+n to show all.",
    }
}

fn render_list(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    if area.height == 0 {
        return;
    }
    if p.visible.is_empty() {
        // Rows still loading may be this list's (the current folder's
        // come among the others': on a first run, after seconds).
        let text = if p.query_active() && p.search_incomplete.is_some() {
            "No sessions found (search incomplete)"
        } else if p.loading.is_some() && p.parsed.error().is_none() {
            "Loading sessions…"
        } else {
            empty_text(p)
        };
        f.render_widget(
            Paragraph::new(Span::styled(text, theme.dim())),
            Rect {
                x: area.x + 2,
                width: area.width.saturating_sub(2),
                height: 1,
                ..area
            },
        );
        return;
    }
    let w = area.width as usize;
    let summary_col = p.any_summary();
    let mut matcher = new_matcher();
    let selected = p.selected_pos();
    // With a query the count of its results is always shown.
    let counting = p.parsed.has_conditions() && !p.visible.is_empty();
    // The list's rows, less the position line when they do not all fit.
    let rows = if p.visible.len() > area.height as usize || counting {
        area.height.saturating_sub(1) as usize
    } else {
        area.height as usize
    };
    // The sessions a delete question is about, marked as Atomic marks one.
    let deleting = |path: &std::path::Path| match &p.dialog {
        Dialog::ConfirmDelete { path: d, .. }
        | Dialog::ConfirmLiveDelete { path: d, .. }
        | Dialog::Trashing { path: d } => d == path,
        Dialog::ConfirmPermanent { paths, .. } => paths.iter().any(|q| q == path),
        Dialog::ConfirmBatch { .. }
        | Dialog::ConfirmLiveBatch { .. }
        | Dialog::TrashingBatch { .. } => p.marked.contains(path),
        _ => false,
    };
    // The count and age columns are as wide as their widest value on
    // screen (a 12,345-message session, a `10mo` age), so that every row's
    // columns line up.
    let drawn = || {
        p.visible
            .iter()
            .skip(p.scroll)
            .take(rows)
            .map(|v| &p.rows[v.idx])
    };
    let count_w = drawn()
        .map(|r| r.info.message_count.to_string().len())
        .fold(4, usize::max);
    let age_w = drawn()
        .map(|r| age(p.now_ms, r.info.modified_ms).len())
        .fold(3, usize::max);
    // The right-hand figures of one row: path, cwd, agent tag, count, age.
    let right_of = |row: &Row| {
        let info = &row.info;
        let mut right = String::new();
        if p.show_paths {
            let path = sanitize_line(&short_home_in(
                &info.path.display().to_string(),
                p.home.as_deref(),
            ));
            right.push_str(&format!("{} ", truncate_middle(&path, (w / 2).max(16))));
        }
        if p.scope == Scope::All {
            let cwd = sanitize_line(&short_home_in(row.cwd(), p.home.as_deref()));
            right.push_str(&format!("{} ", truncate_left(&cwd, (w / 6).clamp(10, 30))));
        }
        // The git branch, where the agent recorded one (Claude Code, Codex).
        if let Some(b) = &info.git_branch {
            let b = truncate(&sanitize_line(b), (w / 8).clamp(6, 20));
            right.push_str(&format!("⎇ {b} "));
        }
        // The agent's tag, in its own colour, between the place and the figures.
        let agent_tag = info
            .agent
            .tag()
            .map(|t| format!("{t} "))
            .unwrap_or_default();
        let figures = format!(
            "{:>count_w$} {:>age_w$}",
            info.message_count,
            age(p.now_ms, info.modified_ms)
        );
        (right, agent_tag, figures)
    };
    // Written in the last minute: an agent is probably running in it.
    let is_live = |row: &Row| (0..LIVE_MS).contains(&(p.now_ms - row.info.file_mtime_ms));
    // The right-hand part is as wide on every row (cwds and paths differ in
    // length), so that the title and summary columns start and end in line.
    let right_w_of = |row: &Row| {
        let (r, t, f) = right_of(row);
        usize::from(is_live(row)) * 2 + width(&r) + width(&t) + width(&f)
    };
    let right_w = drawn().map(right_w_of).max().unwrap_or(0);
    // A column for the marks while there are any.
    let marking = !p.marked.is_empty();
    let mut lines = Vec::new();
    for (pos, v) in p.visible.iter().enumerate().skip(p.scroll).take(rows) {
        let r = &p.rows[v.idx];
        let info = &r.info;
        let is_sel = selected == Some(pos);
        let is_deleting = deleting(&info.path);
        let mark = match (marking, p.marked.contains(info.path.as_path())) {
            (false, _) => "",
            (true, true) => "✓ ",
            (true, false) => "  ",
        };
        let (mut right, agent_tag, figures) = right_of(r);
        right.insert_str(0, &" ".repeat(right_w.saturating_sub(right_w_of(r))));
        let tag = match (info.internal, info.agent) {
            // Claude Code's sub-agent runs (sidechains) are read as internal.
            (true, arbor_session::Agent::Claude) => "[sub-agent] ",
            (true, _) => "[internal] ",
            (false, _) => "",
        };
        let live = is_live(r);
        let live_mark = if live { "● " } else { "" };
        let fixed = 2
            + width(mark)
            + width(&v.prefix)
            + width(tag)
            + 1
            + width(live_mark)
            + width(&right)
            + width(&agent_tag)
            + width(&figures);
        let avail = w.saturating_sub(fixed);
        // The summary's share is of the width before the thread prefix and
        // tag, so that it is as wide on every row.
        let share = avail + width(&v.prefix) + width(tag);
        let (title_w, summary_w) = if summary_col && avail >= 60 && share / 3 < avail {
            let s = share / 3;
            (avail - s - 1, s)
        } else {
            (avail, 0)
        };
        let title = truncate(&sanitize_line(&r.title()), title_w);
        let title_style = if is_deleting {
            theme.error()
        } else if r.display_name().is_some() {
            theme.warning()
        } else {
            Style::default()
        };
        let hl = if p.query_active() {
            p.parsed.highlight(&title, &mut matcher)
        } else {
            Vec::new()
        };
        let mut spans = vec![
            Span::styled(if is_sel { "› " } else { "  " }, theme.cursor()),
            Span::styled(mark, theme.success()),
            Span::styled(v.prefix.clone(), theme.dim()),
            Span::styled(tag, theme.dim()),
        ];
        spans.extend(crate::ui::text::highlighted(
            &title,
            &hl,
            title_style,
            theme.highlight(),
        ));
        let title_pad = title_w.saturating_sub(width(&title));
        spans.push(Span::raw(" ".repeat(title_pad)));
        if summary_w > 0 {
            spans.push(Span::raw(" "));
            // The summary, else where the session left off.
            let (text, style) = match (r.summary(), &info.last_reply) {
                (Some(s), _) => (s, theme.accent()),
                (None, Some(reply)) => (&**reply, theme.dim()),
                (None, None) => ("", theme.dim()),
            };
            spans.push(Span::styled(fit(&sanitize_line(text), summary_w), style));
        }
        spans.push(Span::raw(" "));
        if live {
            spans.push(Span::styled(live_mark, theme.success()));
        }
        let rest_style = if is_deleting {
            theme.error()
        } else {
            theme.dim()
        };
        spans.push(Span::styled(right, rest_style));
        if !agent_tag.is_empty() {
            let style = if is_deleting {
                theme.error()
            } else {
                theme.agent(info.agent)
            };
            spans.push(Span::styled(agent_tag, style));
        }
        spans.push(Span::styled(figures, rest_style));
        let mut line = Line::from(spans);
        if is_sel {
            line = line.patch_style(theme.selected());
        }
        lines.push(line);
    }
    if rows < p.visible.len() || counting {
        let pos = selected.map_or(p.scroll, |s| s) + 1;
        // Only the screen's rows are known yet: the count follows.
        let text = if p.search_partial {
            format!("  ({pos}/…)")
        } else {
            format!("  ({pos}/{})", p.visible.len())
        };
        lines.push(Line::from(Span::styled(text, theme.dim())));
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// A session whose file changed this recently (by the picker's clock) is
/// marked live.
const LIVE_MS: i64 = 60_000;

fn fmt_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// Lines of the first prompt the preview shows (fewer with a query: the
/// list of matches comes first).
const FIRST_PROMPT_LINES: usize = 6;
const FIRST_PROMPT_LINES_QUERY: usize = 2;

/// At most `max` of `lines`, the last ending in `…` when some were left out.
fn at_most(mut lines: Vec<Line<'static>>, max: usize) -> Vec<Line<'static>> {
    if lines.len() > max {
        lines.truncate(max);
        if let Some(last) = lines.last_mut() {
            last.spans.push(Span::raw("…"));
        }
    }
    lines
}

/// The preview pane, laid out line by line (nothing is left to wrap, so
/// what each part takes is known): the session's facts a line each, then
/// with a query the list of its matching entries (before anything long
/// can push it out of view), the first prompt (a few lines), and the last
/// messages of the active branch in what room is left.
fn render_preview(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    let block = Block::default()
        .borders(Borders::LEFT)
        .border_style(theme.dim());
    let inner = block.inner(area);
    f.render_widget(block, area);
    let Some(r) = p.selected_row() else {
        return;
    };
    let w = inner.width.saturating_sub(1) as usize;
    let h = inner.height as usize;
    let info = &r.info;
    let mut lines: Vec<Line> = Vec::new();
    let label = |k: &str| Span::styled(format!("{k:<9}"), theme.dim());
    let value_w = w.saturating_sub(9);
    let fact = |k: &str, v: String| Line::from(vec![label(k), Span::raw(truncate(&v, value_w))]);
    lines.push(Line::from(Span::styled(
        truncate(&sanitize_line(&r.title()), w),
        if r.display_name().is_some() {
            theme.warning()
        } else {
            theme.title()
        },
    )));
    lines.push(Line::from(vec![
        label("cwd"),
        Span::raw(truncate_middle(&sanitize_line(r.cwd()), value_w)),
    ]));
    if let Some(b) = &info.git_branch {
        lines.push(Line::from(vec![
            label("branch"),
            Span::raw(truncate(&sanitize_line(b), value_w)),
        ]));
    }
    if info.agent.tag().is_some() {
        lines.push(Line::from(vec![
            label("agent"),
            Span::styled(info.agent.display_name(), theme.agent(info.agent)),
        ]));
    }
    // Both dates the same way: when, and how long ago.
    let when = |ms: i64| format!("{} ({})", fmt_time(ms), age(p.now_ms, ms));
    let created = match arbor_session::entry::parse_iso_ms(&info.created) {
        Some(ms) => when(ms),
        None => sanitize_line(&info.created),
    };
    lines.push(fact("created", created));
    lines.push(fact("modified", when(info.modified_ms)));
    lines.push(fact("messages", info.message_count.to_string()));
    if !info.models.is_empty() {
        let models: Vec<String> = info.models.iter().map(|m| sanitize_line(m)).collect();
        lines.push(fact("models", models.join(", ")));
    }
    lines.push(fact(
        "usage",
        format!(
            "{} tokens · ${:.2}",
            group(info.total_tokens),
            info.total_cost
        ),
    ));
    let sub_agent = info.internal && info.agent == arbor_session::Agent::Claude;
    if let Some(parent) = &info.parent_session_path {
        lines.push(Line::from(vec![
            label(if sub_agent { "run by" } else { "fork of" }),
            Span::raw(truncate_middle(&sanitize_line(parent), value_w)),
        ]));
    }
    if info.internal {
        lines.push(Line::from(Span::styled(
            if sub_agent {
                "sub-agent run (sidechain) of a Claude Code session"
            } else {
                "internal workflow session"
            },
            theme.warning(),
        )));
    }
    if let Some(what) = info.diagnostics.as_ref().and_then(|d| d.describe()) {
        lines.push(Line::from(Span::styled(truncate(&what, w), theme.error())));
    }
    // The matching entries, when the query looks inside sessions.
    let query = arbor_search::Query::parse(&p.scored_query);
    let matching = p.query_active() && arbor_search::hits::looks_at_entries(&query);
    if matching {
        lines.push(Line::from(""));
        match p.hits() {
            None => lines.push(Line::from(Span::styled(
                "Matches · searching…",
                theme.dim(),
            ))),
            Some(hits) if hits.hits.is_empty() => lines.push(Line::from(Span::styled(
                "Matches · none in its entries (its name, folder or id matched)",
                theme.dim(),
            ))),
            Some(hits) => {
                let pos = p.hit_pos.min(hits.hits.len() - 1);
                let keys = format!(
                    "{} step · {} tree",
                    KEYS.keys_of(&[Action::NextMatch, Action::PrevMatch]),
                    KEYS.keys_of(&[Action::Tree])
                );
                lines.push(super::matches::heading(hits, pos, &keys, theme));
                // The list takes what room there is, less a few lines for
                // the first prompt under it.
                let budget = h.saturating_sub(lines.len() + 3).max(3);
                lines.extend(super::matches::lines(hits, pos, w, budget, theme));
            }
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(Span::styled("First prompt", theme.dim())));
    let prompt = wrap_styled(
        &[vec![(
            sanitize_line(&r.first_message_text()),
            Style::default(),
        )]],
        w,
    );
    let max = if matching {
        FIRST_PROMPT_LINES_QUERY
    } else {
        FIRST_PROMPT_LINES
    };
    lines.extend(at_most(prompt, max));
    let loaded = p.preview.as_ref().filter(|pv| pv.path == *info.path);
    if let Some(pv) = loaded {
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled(
            "Last messages (active branch)",
            theme.dim(),
        )));
        for (role, text) in &pv.last_messages {
            let t = truncate(&sanitize_line(text), w.saturating_mul(3));
            lines.extend(wrap_styled(
                &[vec![
                    (format!("{role}:"), theme.accent()),
                    (t, Style::default()),
                ]],
                w,
            ));
        }
        if let Some(note) = &pv.note {
            lines.extend(wrap_styled(&[vec![(note.clone(), theme.warning())]], w));
        }
    } else {
        lines.push(Line::from(""));
        lines.push(Line::from(Span::styled("Loading…", theme.dim())));
    }
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        },
    );
}

fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn render_footer(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
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
fn footer_lines<'a>(p: &'a PickerState, theme: &Theme, width: u16) -> (Vec<Line<'a>>, Option<u16>) {
    if let Dialog::ConfirmPermanent {
        reason,
        paths,
        moved,
        ..
    } = &p.dialog
    {
        let one = paths.len() == 1 && *moved == 0;
        let mut question = vec![(
            if one {
                "Delete permanently? This cannot be undone.".to_string()
            } else {
                format!(
                    "Delete {} permanently? This cannot be undone.",
                    sessions(paths.len())
                )
            },
            theme.error(),
        )];
        let titles = titles_of(p, paths.iter());
        if !titles.is_empty() {
            question.push((titles, theme.dim()));
        }
        let (it, they) = if paths.len() == 1 {
            ("it", "It")
        } else {
            ("them", "They")
        };
        let mut why = format!(
            "{they} could not be moved to the trash: {}.",
            sanitize_line(reason)
        );
        if *moved > 0 {
            why.push_str(&format!(
                " The other {} of the batch are in the trash ({} brings them back).",
                moved,
                KEYS.keys_of(&[Action::Undo])
            ));
        }
        let paragraphs = [
            question,
            vec![(
                format!(
                    "Type {} to delete {it} forever · {} keeps {it}",
                    PERMANENT_KEYS.keys_of(&[Answer::Yes]),
                    PERMANENT_KEYS.keys_of(&[Answer::No])
                ),
                Style::default(),
            )],
            vec![(why, theme.dim())],
        ];
        return (wrap_styled(&paragraphs, width as usize), None);
    }
    let mut cursor = None;
    let mut wrapped = Vec::new();
    let status_line = match (&p.dialog, &p.status) {
        (Dialog::ConfirmDelete { path, .. }, _) => Line::from(vec![
            Span::styled("Delete session? ", theme.error()),
            Span::raw(format!("{}  ", confirm_hint())),
            Span::styled(title_of(p, path), theme.dim()),
        ]),
        // Wrapped like a message: at 80 columns the keys that answer the
        // question would otherwise be cut off.
        (Dialog::ConfirmLiveDelete { age_ms, .. }, _) => {
            let question = [vec![
                (
                    format!(
                        "This session changed {}s ago; an agent may be writing it. Delete anyway? ",
                        age_ms / 1000
                    ),
                    theme.error(),
                ),
                (confirm_hint(), Style::default()),
            ]];
            let mut lines = wrap_styled(&question, width as usize);
            let first = lines.remove(0);
            wrapped = lines;
            first
        }
        // A rename refused by an older file: the way out, asked.
        (Dialog::ConfirmMigrateRename { version, .. }, _) => {
            let question = [vec![
                (
                    format!(
                        "A version {version} session: rewrite it as version 3 (the original kept as .bak) to rename it? "
                    ),
                    theme.warning(),
                ),
                (
                    format!(
                        "{} · {}",
                        CONFIRM.hint(&[Answer::Yes], "rewrite and rename"),
                        CONFIRM.hint(&[Answer::No], "cancel")
                    ),
                    Style::default(),
                ),
            ]];
            let mut lines = wrap_styled(&question, width as usize);
            let first = lines.remove(0);
            wrapped = lines;
            first
        }
        (Dialog::Trashing { .. }, _) => {
            Line::from(Span::styled("Moving session to trash…", theme.dim()))
        }
        (Dialog::TrashingBatch { count }, _) => Line::from(Span::styled(
            format!("Moving {} to trash…", sessions(*count)),
            theme.dim(),
        )),
        // One question for the batch: how many, how many bytes, and
        // which an agent may be writing.
        (Dialog::ConfirmBatch { paths, measured }, _) => {
            let hidden = paths.len() - p.marked_listed().min(paths.len());
            let mut what = match measured {
                Some(m) => arbor_util::human_bytes(m.bytes),
                None => "reading sizes…".to_string(),
            };
            if hidden > 0 {
                what.push_str(&format!("; {hidden} not listed"));
            }
            let mut paragraphs = vec![vec![
                (
                    format!("Delete {} ({what})? ", marked_sessions(paths.len())),
                    theme.error(),
                ),
                (confirm_hint(), Style::default()),
            ]];
            if let Some(m) = measured.as_ref().filter(|m| !m.live.is_empty()) {
                paragraphs.push(vec![
                    (
                        format!(
                            "{} changed in the last seconds; an agent may be writing {}: ",
                            m.live.len(),
                            if m.live.len() == 1 { "it" } else { "them" }
                        ),
                        theme.warning(),
                    ),
                    (titles_of(p, m.live.iter().map(|(x, _)| x)), theme.dim()),
                ]);
            }
            let mut lines = wrap_styled(&paragraphs, width as usize);
            let first = lines.remove(0);
            wrapped = lines;
            first
        }
        // The single delete's second question, for the batch.
        (Dialog::ConfirmLiveBatch { paths, live }, _) => {
            // Every one of them changed within that many seconds.
            let secs = (live.iter().map(|(_, age)| *age).max().unwrap_or(0) / 1000).max(1);
            let paragraphs = [
                vec![
                    (
                        format!(
                            "{} of the {} changed in the last {secs}s; an agent may be writing {}. Delete anyway? ",
                            live.len(),
                            sessions(paths.len()),
                            if live.len() == 1 { "it" } else { "them" }
                        ),
                        theme.error(),
                    ),
                    (confirm_hint(), Style::default()),
                ],
                vec![(titles_of(p, live.iter().map(|(x, _)| x)), theme.dim())],
            ];
            let mut lines = wrap_styled(&paragraphs, width as usize);
            let first = lines.remove(0);
            wrapped = lines;
            first
        }
        (Dialog::Rename { input, .. }, _) => {
            let (line, col) = crate::ui::input::prompt(
                input,
                Span::styled("Rename: ", theme.accent()),
                Span::styled(input::prompt_hint("save"), theme.dim()),
                width,
            );
            cursor = Some(col);
            line
        }
        // A message is wrapped rather than cut: the end of an error (its
        // reason) is the part that matters.
        (_, Some(s)) => {
            let style = match s.kind {
                StatusKind::Info => theme.dim(),
                StatusKind::Success => theme.success(),
                StatusKind::Error => theme.error(),
            };
            let mut lines = wrap_styled(&[vec![(sanitize_line(&s.text), style)]], width as usize);
            let first = lines.remove(0);
            wrapped = lines;
            first
        }
        (_, None) => Line::from(""),
    };
    let mut lines = vec![status_line];
    lines.append(&mut wrapped);
    lines.extend(
        hint_lines(p, width as usize)
            .into_iter()
            .map(|h| Line::from(Span::styled(h, theme.dim()))),
    );
    (lines, cursor)
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
            if p.show_paths {
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

/// A delete question's answers (Atomic's words).
fn confirm_hint() -> String {
    format!(
        "{} · {}",
        CONFIRM.hint(&[Answer::Yes], "confirm"),
        CONFIRM.hint(&[Answer::No], "cancel")
    )
}

/// `12 marked sessions`.
fn marked_sessions(n: usize) -> String {
    if n == 1 {
        "1 marked session".into()
    } else {
        format!("{n} marked sessions")
    }
}

/// The titles of up to three sessions, quoted, then how many more.
fn titles_of<'a>(p: &PickerState, paths: impl Iterator<Item = &'a std::path::PathBuf>) -> String {
    let all: Vec<String> = paths
        .map(|x| {
            let t = title_of(p, x);
            if t.is_empty() {
                // Not listed in this picker: its file name says which.
                x.file_name()
                    .map(|n| sanitize_line(&n.to_string_lossy()))
                    .unwrap_or_default()
            } else {
                t
            }
        })
        .collect();
    let mut out: Vec<String> = all
        .iter()
        .take(3)
        .map(|t| format!("\u{201c}{t}\u{201d}"))
        .collect();
    if all.len() > 3 {
        out.push(format!("and {} more", all.len() - 3));
    }
    out.join(", ")
}

fn title_of(p: &PickerState, path: &std::path::Path) -> String {
    p.row_index(path)
        .map(|i| truncate(&sanitize_line(&p.rows[i].title()), 50))
        .unwrap_or_default()
}

/// The help box's width.
pub const HELP_WIDTH: u16 = 74;

/// The help's rows: typing, the picker's keys, then the query's editing
/// keys (those the picker leaves to it). The help's own keys are on its last
/// line.
pub fn help_rows() -> Vec<HelpRow> {
    KEYS.help_with_field(
        "search: all words, \"exact phrase\", re:regex; filters dir: model: label: agent: is: in:tools after:2d before:2026-11-30",
        "Editing the query",
        &input::KEYS,
    )
}

fn render_help(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    crate::ui::widgets::help_overlay(
        f,
        theme,
        area,
        "arbor · keys",
        &help_rows(),
        HELP_WIDTH,
        p.help_scroll,
    );
}

/// Whether the clock moving from `then` to `now` changes the frame: an
/// age shown in the list or the preview (`5m` → `6m`).
pub fn clock_changes_view(p: &PickerState, width: u16, height: u16, then: i64, now: i64) -> bool {
    let changed = |ms: i64| age(then, ms) != age(now, ms);
    // The live marker goes a minute after the file's last change.
    let live = |at: i64, ms: i64| (0..LIVE_MS).contains(&(at - ms));
    let rows = list_rows(p, width, height);
    let listed = p.visible.iter().skip(p.scroll).take(rows).any(|v| {
        let info = &p.rows[v.idx].info;
        changed(info.modified_ms) || live(then, info.file_mtime_ms) != live(now, info.file_mtime_ms)
    });
    let previewed = preview_visible(p, width)
        && p.selected_row().is_some_and(|r| {
            changed(r.info.modified_ms)
                || arbor_session::entry::parse_iso_ms(&r.info.created).is_some_and(changed)
        });
    listed || previewed
}
