//! The list of sessions: a row each (cursor, mark, thread prefix, title,
//! summary, then place, agent, count and age in right-aligned columns),
//! and the `(n/N)` position line.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::LIVE_MS;
use crate::ui::picker::dialogs::delete;
use crate::ui::picker::state::{PickerState, Row, Scope, VisibleRow};
use crate::ui::text::{
    fit, sanitize_line, short_home_in, truncate, truncate_left, truncate_middle, width,
};
use crate::ui::theme::Theme;
use arbor_search::query::new_matcher;
use arbor_util::age;

/// Atomic's texts, which depend on the filters only (a query that matches
/// nothing gets the same hint as an empty folder).
fn empty_text(p: &PickerState) -> String {
    use crate::ui::picker::keys::{Action, KEYS};
    let (scope, named) = (
        KEYS.keys_of(&[Action::Scope]),
        KEYS.keys_of(&[Action::Named]),
    );
    match (p.settings.named_only, p.settings.scope) {
        (false, Scope::Current) => format!("No sessions in current folder. {scope} view all."),
        (false, Scope::All) => "No sessions found".into(),
        (true, Scope::Current) => {
            format!("No named sessions in current folder. {named} show all · {scope} view all.")
        }
        (true, Scope::All) => format!("No named sessions found. Press {named} to show all."),
    }
}

pub fn render_list(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    if area.height == 0 {
        return;
    }
    if p.list.visible.is_empty() {
        render_empty(f, p, theme, area);
        return;
    }
    let mut matcher = new_matcher();
    let mut highlight = |title: &str| p.search.parsed.highlight(title, &mut matcher);
    let selected = p.selected_pos();
    // With a query the count of its results is always shown.
    let counting = p.search.parsed.has_conditions() && !p.list.visible.is_empty();
    // The list's rows, less the position line when they do not all fit.
    let rows = if p.list.visible.len() > area.height as usize || counting {
        area.height.saturating_sub(1) as usize
    } else {
        area.height as usize
    };
    let cols = Columns::new(p, area.width as usize, rows);
    let mut lines = Vec::new();
    for (pos, v) in p
        .list
        .visible
        .iter()
        .enumerate()
        .skip(p.selection.scroll)
        .take(rows)
    {
        let is_sel = selected == Some(pos);
        lines.push(row_line(p, theme, &cols, v, is_sel, &mut highlight));
    }
    if rows < p.list.visible.len() || counting {
        let pos = selected.map_or(p.selection.scroll, |s| s) + 1;
        // Only the screen's rows are known yet: the count follows.
        let text = if p.search.partial {
            format!("  ({pos}/…)")
        } else {
            format!("  ({pos}/{})", p.list.visible.len())
        };
        lines.push(Line::from(Span::styled(text, theme.dim())));
    }
    f.render_widget(Paragraph::new(lines), area);
}

/// No rows to list: why (still loading, the search incomplete, or the
/// filters' own text).
fn render_empty(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
    // Rows still loading may be this list's (the current folder's
    // come among the others': on a first run, after seconds).
    let text = if p.query_active() && p.search.incomplete.is_some() {
        "No sessions found (search incomplete)".to_string()
    } else if p.progress.loading.is_some() && p.search.parsed.error().is_none() {
        "Loading sessions…".to_string()
    } else if let Some(syncing) = p.remotes.progress().filter(|_| p.list.rows.is_empty()) {
        // Nothing here yet: the remotes' syncs will fill the list.
        format!("No sessions here yet; {syncing} (their sessions appear as they arrive)")
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
}

/// The widths every row on screen shares, so that their columns line up.
struct Columns {
    /// The list's width.
    w: usize,
    /// The count and age columns are as wide as their widest value on
    /// screen (a 12,345-message session, a `10mo` age).
    count_w: usize,
    age_w: usize,
    /// The right-hand part is as wide on every row (cwds and paths differ
    /// in length), so that the title and summary columns start and end in
    /// line.
    right_w: usize,
    /// Whether some row has a summary (a column for them).
    summary_col: bool,
    /// A column for the marks while there are any.
    marking: bool,
}

impl Columns {
    fn new(p: &PickerState, w: usize, rows: usize) -> Columns {
        let drawn = || {
            p.list
                .visible
                .iter()
                .skip(p.selection.scroll)
                .take(rows)
                .map(|v| &p.list.rows[v.idx])
        };
        let count_w = drawn()
            .map(|r| r.info.message_count.to_string().len())
            .fold(4, usize::max);
        let age_w = drawn()
            .map(|r| age(p.now_ms, r.info.modified_ms).len())
            .fold(3, usize::max);
        let mut cols = Columns {
            w,
            count_w,
            age_w,
            right_w: 0,
            summary_col: p.any_summary(),
            marking: !p.selection.marked.is_empty(),
        };
        cols.right_w = drawn().map(|r| cols.right_w_of(p, r)).max().unwrap_or(0);
        cols
    }

    /// The right-hand figures of one row: path, cwd and git branch; the
    /// agent tag (and a remote's, `@devbox`); count and age.
    fn right_of(&self, p: &PickerState, row: &Row) -> (String, String, String) {
        let (w, count_w, age_w) = (self.w, self.count_w, self.age_w);
        let info = &row.info;
        let mut right = String::new();
        if p.settings.show_paths {
            let path = sanitize_line(&short_home_in(
                &info.path.display().to_string(),
                p.settings.home.as_deref(),
            ));
            right.push_str(&format!("{} ", truncate_middle(&path, (w / 2).max(16))));
        }
        if p.settings.scope == Scope::All {
            let cwd = sanitize_line(&short_home_in(row.cwd(), p.settings.home.as_deref()));
            right.push_str(&format!("{} ", truncate_left(&cwd, (w / 6).clamp(10, 30))));
        }
        // The git branch, where the agent recorded one (Claude Code, Codex).
        if let Some(b) = &info.git_branch {
            let b = truncate(&sanitize_line(b), (w / 8).clamp(6, 20));
            right.push_str(&format!("⎇ {b} "));
        }
        // The agent's tag, in its own colour, between the place and the figures.
        let mut agent_tag = info
            .agent
            .tag()
            .map(|t| format!("{t} "))
            .unwrap_or_default();
        if let Some(host) = row.host() {
            agent_tag.push_str(&p.remotes.tag(host, p.now_ms).0);
            agent_tag.push(' ');
        }
        let figures = format!(
            "{:>count_w$} {:>age_w$}",
            info.message_count,
            age(p.now_ms, info.modified_ms)
        );
        (right, agent_tag, figures)
    }

    fn right_w_of(&self, p: &PickerState, row: &Row) -> usize {
        let (r, t, f) = self.right_of(p, row);
        usize::from(is_live(p, row)) * 2 + width(&r) + width(&t) + width(&f)
    }

    /// The title's and the summary's widths, from the room left (`avail`).
    /// The summary's share is of the width before the thread prefix and
    /// tag (`share`), so that it is as wide on every row.
    fn title_and_summary(&self, avail: usize, share: usize) -> (usize, usize) {
        if self.summary_col && avail >= 60 && share / 3 < avail {
            let s = share / 3;
            (avail - s - 1, s)
        } else {
            (avail, 0)
        }
    }
}

/// Written in the last minute: an agent is probably running in it.
fn is_live(p: &PickerState, row: &Row) -> bool {
    (0..LIVE_MS).contains(&(p.now_ms - row.info.file_mtime_ms))
}

/// One session's row.
fn row_line(
    p: &PickerState,
    theme: &Theme,
    cols: &Columns,
    v: &VisibleRow,
    is_sel: bool,
    highlight: &mut dyn FnMut(&str) -> Vec<usize>,
) -> Line<'static> {
    let r = &p.list.rows[v.idx];
    let info = &r.info;
    // The sessions a delete question is about, marked as Atomic marks one.
    let is_deleting = delete::asks_about(p, &info.path);
    let mark = match (
        cols.marking,
        p.selection.marked.contains(info.path.as_path()),
    ) {
        (false, _) => "",
        (true, true) => "✓ ",
        (true, false) => "  ",
    };
    let (mut right, agent_tag, figures) = cols.right_of(p, r);
    right.insert_str(
        0,
        &" ".repeat(cols.right_w.saturating_sub(cols.right_w_of(p, r))),
    );
    let tag = match (info.internal, info.agent) {
        // Claude Code's sub-agent runs (sidechains) are read as internal.
        (true, arbor_session::Agent::Claude) => "[sub-agent] ",
        (true, _) => "[internal] ",
        (false, _) => "",
    };
    let live = is_live(p, r);
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
    let avail = cols.w.saturating_sub(fixed);
    let share = avail + width(&v.prefix) + width(tag);
    let (title_w, summary_w) = cols.title_and_summary(avail, share);
    let mut spans = vec![
        Span::styled(if is_sel { "› " } else { "  " }, theme.cursor()),
        Span::styled(mark, theme.success()),
        Span::styled(v.prefix.clone(), theme.dim()),
        Span::styled(tag, theme.dim()),
    ];
    spans.extend(title_spans(p, r, title_w, is_deleting, theme, highlight));
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
        // A remote's tag after the agent's: dimmed while its mirror is
        // not known to be current.
        let host = r.host().map(|h| p.remotes.tag(h, p.now_ms));
        let host_at = host
            .as_ref()
            .map_or(agent_tag.len(), |(t, _)| agent_tag.len() - t.len() - 1);
        let (own, remote) = agent_tag.split_at(host_at);
        if !own.is_empty() {
            spans.push(Span::styled(own.to_string(), style));
        }
        if let Some((_, stale)) = host {
            let style = match is_deleting {
                true => style,
                false => theme.host(stale),
            };
            spans.push(Span::styled(remote.to_string(), style));
        }
    }
    spans.push(Span::styled(figures, rest_style));
    let mut line = Line::from(spans);
    if is_sel {
        line = line.patch_style(theme.selected());
    }
    line
}

/// The title, cut to `title_w`, the query's matches in it highlighted,
/// then padded to its column.
fn title_spans(
    p: &PickerState,
    r: &Row,
    title_w: usize,
    is_deleting: bool,
    theme: &Theme,
    highlight: &mut dyn FnMut(&str) -> Vec<usize>,
) -> Vec<Span<'static>> {
    let title = truncate(&sanitize_line(&r.title()), title_w);
    let title_style = if is_deleting {
        theme.error()
    } else if r.display_name().is_some() {
        theme.warning()
    } else {
        Style::default()
    };
    let hl = if p.query_active() {
        highlight(&title)
    } else {
        Vec::new()
    };
    let mut spans = crate::ui::text::highlighted(&title, &hl, title_style, theme.highlight());
    let title_pad = title_w.saturating_sub(width(&title));
    spans.push(Span::raw(" ".repeat(title_pad)));
    spans
}
