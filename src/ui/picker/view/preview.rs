//! The preview pane, laid out line by line (nothing is left to wrap, so
//! what each part takes is known): the session's facts a line each, then
//! with a query the list of its matching entries (before anything long
//! can push it out of view), the first prompt (a few lines), and the last
//! messages of the active branch in what room is left.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;

use crate::ui::picker::keys::{Action, KEYS};
use crate::ui::picker::matches;
use crate::ui::picker::state::{PickerState, Row};
use crate::ui::text::{sanitize_line, truncate, truncate_middle, wrap_styled};
use crate::ui::theme::Theme;
use arbor_util::age;

/// Lines of the first prompt the preview shows (fewer with a query: the
/// list of matches comes first).
const FIRST_PROMPT_LINES: usize = 6;
const FIRST_PROMPT_LINES_QUERY: usize = 2;

pub fn render_preview(f: &mut Frame, p: &PickerState, theme: &Theme, area: Rect) {
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
    let mut lines = fact_lines(p, r, theme, w);
    // The matching entries, when the query looks inside sessions.
    let query = arbor_search::Query::parse(&p.search.scored_query);
    let matching = p.query_active() && arbor_search::hits::looks_at_entries(&query);
    if matching {
        lines.push(Line::from(""));
        let above = lines.len();
        lines.extend(match_lines(p, theme, w, h, above));
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
    lines.extend(last_message_lines(p, r, theme, w));
    f.render_widget(
        Paragraph::new(lines),
        Rect {
            x: inner.x + 1,
            width: inner.width.saturating_sub(1),
            ..inner
        },
    );
}

/// The session's facts, a line each: title, cwd, branch, agent, dates,
/// count, models, usage, parent, and what is wrong with the file.
fn fact_lines(p: &PickerState, r: &Row, theme: &Theme, w: usize) -> Vec<Line<'static>> {
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
    if let Some(host) = host_line(p, r, theme, value_w) {
        lines.push(Line::from(vec![label("host"), host]));
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
    lines.extend(lineage_lines(r, theme, value_w, label));
    if let Some(what) = info.diagnostics.as_ref().and_then(|d| d.describe()) {
        lines.push(Line::from(Span::styled(truncate(&what, w), theme.error())));
    }
    lines
}

/// Whose fork or sub-agent run the session is, and whether it is internal.
fn lineage_lines(
    r: &Row,
    theme: &Theme,
    value_w: usize,
    label: impl Fn(&str) -> Span<'static>,
) -> Vec<Line<'static>> {
    let info = &r.info;
    let mut lines = Vec::new();
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
    lines
}

/// The list of matching entries (`above`: the lines over it), or that
/// they are being read, or that there are none.
fn match_lines(
    p: &PickerState,
    theme: &Theme,
    w: usize,
    h: usize,
    above: usize,
) -> Vec<Line<'static>> {
    match p.hits() {
        None => vec![Line::from(Span::styled(
            "Matches · searching…",
            theme.dim(),
        ))],
        // A line too long to read may hold the match: said, never
        // taken for no match.
        Some(hits) if hits.hits.is_empty() => match hits.unread.note() {
            Some(note) => vec![Line::from(Span::styled(
                format!("Matches · none in the entries read; {note}"),
                theme.warning(),
            ))],
            None => vec![Line::from(Span::styled(
                "Matches · none in its entries (its name, folder or id matched)",
                theme.dim(),
            ))],
        },
        Some(hits) => {
            let pos = p.preview.hit_pos.min(hits.hits.len() - 1);
            let keys = format!(
                "{} step · {} tree",
                KEYS.keys_of(&[Action::NextMatch, Action::PrevMatch]),
                KEYS.keys_of(&[Action::Tree])
            );
            let mut lines = vec![matches::heading(hits, pos, &keys, theme)];
            // The list takes what room there is, less a few lines for
            // the first prompt under it.
            let budget = h.saturating_sub(above + lines.len() + 3).max(3);
            lines.extend(matches::lines(hits, pos, w, budget, theme));
            if let Some(note) = hits.unread.note() {
                lines.push(Line::from(Span::styled(
                    format!("Also {note}"),
                    theme.warning(),
                )));
            }
            lines
        }
    }
}

/// The last messages of the active branch, once the preview is read.
fn last_message_lines(p: &PickerState, r: &Row, theme: &Theme, w: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from("")];
    let loaded = p
        .preview
        .shown
        .as_ref()
        .filter(|pv| pv.path == *r.info.path);
    let Some(pv) = loaded else {
        lines.push(Line::from(Span::styled("Loading…", theme.dim())));
        return lines;
    };
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
    lines
}

/// A remote's session: its host's tag (dimmed while the copy here is not
/// known to be current) and how old that copy is.
fn host_line(p: &PickerState, r: &Row, theme: &Theme, w: usize) -> Option<Span<'static>> {
    let name = r.host()?;
    let (tag, stale) = p.remotes.tag(name, p.now_ms);
    let copy = match p.remotes.get(name).and_then(|h| h.last_ok_ms) {
        Some(ms) => match age(p.now_ms, ms) {
            a if a == "now" => format!("@{name} · a copy, synced just now"),
            a => format!("@{name} · a copy, synced {a} ago"),
        },
        None => format!("{tag} · a copy, not synced yet"),
    };
    Some(Span::styled(truncate(&copy, w), theme.host(stale)))
}

fn fmt_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

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

/// `1234567` → `1,234,567`.
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
