//! The detail pane: one entry in full.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::{Map, Value};

use crate::ui::text::sanitize_block;
use crate::ui::theme::Theme;
use arbor_search::Query;
use arbor_session::entry::Entry;

/// Text shown per block: multi-megabyte tool output would make every frame slow.
const MAX_BLOCK_BYTES: usize = 64 * 1024;

fn push_text<'a>(out: &mut Vec<Line<'a>>, text: &str, style: Style, search: &Query, theme: &Theme) {
    if text.len() > MAX_BLOCK_BYTES {
        let mut cut = MAX_BLOCK_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        push_text(out, &text[..cut], style, search, theme);
        out.push(Line::from(Span::styled(
            format!(
                "… {} KB more not shown (arbor show / context print it all)",
                (text.len() - cut) / 1024
            ),
            theme.dim(),
        )));
        return;
    }
    for l in sanitize_block(text).lines() {
        if search.terms.is_empty() {
            out.push(Line::from(Span::styled(l.to_string(), style)));
            continue;
        }
        let positions = query_marks(l, search);
        out.push(Line::from(crate::ui::text::highlighted(
            l,
            &positions,
            style,
            theme.highlight(),
        )));
    }
}

/// Positions (in characters) of `text` (shown text: sanitized) covered
/// by a match of a term of `query` ([`arbor_search::hits::match_ranges`]:
/// words anywhere, case-insensitively; phrases and regexes as the search
/// matches them), ascending.
pub fn query_marks(text: &str, query: &Query) -> Vec<usize> {
    let ranges = arbor_search::hits::match_ranges(query, text);
    if ranges.is_empty() {
        return Vec::new();
    }
    // Merged into disjoint ranges (they come sorted by start).
    let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
    for r in ranges {
        match merged.last_mut() {
            Some(m) if r.start <= m.end => m.end = m.end.max(r.end),
            _ => merged.push(r),
        }
    }
    let mut out = Vec::new();
    let mut m = merged.iter().peekable();
    for (ci, (bi, _)) in text.char_indices().enumerate() {
        while m.peek().is_some_and(|x| x.end <= bi) {
            m.next();
        }
        if m.peek().is_some_and(|x| x.start <= bi) {
            out.push(ci);
        }
    }
    out
}

fn image_line(b: &Value) -> String {
    let mime = b.get("mimeType").and_then(Value::as_str).unwrap_or("image");
    let len = b.get("data").and_then(Value::as_str).map_or(0, str::len);
    // base64: 4 characters carry 3 bytes.
    let kb = (len * 3 / 4).div_ceil(1024);
    format!("[image {mime}, {kb} KB]")
}

fn blocks<'a>(out: &mut Vec<Line<'a>>, content: Option<&Value>, search: &Query, theme: &Theme) {
    match content {
        Some(Value::String(s)) => push_text(out, s, Style::default(), search, theme),
        Some(Value::Array(bs)) => {
            for b in bs {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => push_text(
                        out,
                        b.get("text").and_then(Value::as_str).unwrap_or(""),
                        Style::default(),
                        search,
                        theme,
                    ),
                    Some("thinking") => {
                        out.push(Line::from(Span::styled("thinking:", theme.dim())));
                        push_text(
                            out,
                            b.get("thinking").and_then(Value::as_str).unwrap_or(""),
                            theme.dim(),
                            search,
                            theme,
                        );
                    }
                    Some("toolCall") => {
                        let name = b.get("name").and_then(Value::as_str).unwrap_or("?");
                        out.push(Line::from(Span::styled(
                            format!("tool call: {}", arbor_session::render::sanitize_line(name)),
                            theme.accent(),
                        )));
                        let args = b
                            .get("arguments")
                            .map(|a| serde_json::to_string_pretty(a).unwrap_or_default())
                            .unwrap_or_default();
                        push_text(out, &args, Style::default(), search, theme);
                    }
                    Some("image") => out.push(Line::from(Span::styled(image_line(b), theme.dim()))),
                    Some(other) => out.push(Line::from(Span::styled(
                        format!("[{}]", arbor_session::render::sanitize_line(other)),
                        theme.dim(),
                    ))),
                    None => {}
                }
            }
        }
        Some(other) if !other.is_null() => {
            push_text(out, &other.to_string(), theme.dim(), search, theme)
        }
        _ => {}
    }
}

/// Every line of the detail pane for `e`.
pub fn detail_lines<'a>(
    e: &Entry,
    label: Option<&str>,
    search: &Query,
    theme: &Theme,
) -> Vec<Line<'a>> {
    // Parsed for this frame only (the pane follows the selection).
    let e = &*e.parsed();
    let mut out = Vec::new();
    let ty = e.entry_type();
    let head = match e.role() {
        Some(r) => format!("{ty} · {r}"),
        None => ty.to_string(),
    };
    out.push(Line::from(vec![
        Span::styled(arbor_session::render::sanitize_line(&head), theme.title()),
        Span::styled(
            format!("  {}  {}", e.id, e.timestamp().unwrap_or("")),
            theme.dim(),
        ),
    ]));
    if let Some(l) = label {
        out.push(Line::from(Span::styled(
            format!("[{}]", arbor_session::render::sanitize_line(l)),
            theme.label(),
        )));
    }
    out.push(Line::from(""));
    if let Some(m) = e.message() {
        message_lines(&mut out, m, search, theme);
        return out;
    }
    match ty {
        "compaction" | "branch_summary" | "session_summary" => {
            push_text(
                &mut out,
                e.str_field("summary").unwrap_or(""),
                Style::default(),
                search,
                theme,
            );
            if let Some(k) = e.str_field("firstKeptEntryId") {
                out.push(Line::from(Span::styled(
                    format!("first kept entry {k}"),
                    theme.dim(),
                )));
            }
        }
        "custom_message" => blocks(&mut out, e.raw.get("content"), search, theme),
        _ => {
            let json =
                serde_json::to_string_pretty(&Value::Object(e.raw.clone())).unwrap_or_default();
            push_text(&mut out, &json, theme.dim(), search, theme);
        }
    }
    out
}

/// A message entry's lines, by its role.
fn message_lines<'a>(
    out: &mut Vec<Line<'a>>,
    m: &Map<String, Value>,
    search: &Query,
    theme: &Theme,
) {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    match role {
        "assistant" => assistant_lines(out, m, search, theme),
        "toolResult" => {
            let name = m.get("toolName").and_then(Value::as_str).unwrap_or("tool");
            let err = m.get("isError") == Some(&Value::Bool(true));
            out.push(Line::from(Span::styled(
                format!(
                    "{}{}",
                    arbor_session::render::sanitize_line(name),
                    if err { " (error)" } else { "" }
                ),
                if err { theme.error() } else { theme.accent() },
            )));
            blocks(out, m.get("content"), search, theme);
        }
        "bashExecution" => {
            let cmd = m.get("command").and_then(Value::as_str).unwrap_or("");
            push_text(out, &format!("$ {cmd}"), theme.accent(), search, theme);
            push_text(
                out,
                m.get("output").and_then(Value::as_str).unwrap_or(""),
                Style::default(),
                search,
                theme,
            );
            if let Some(code) = m.get("exitCode").and_then(Value::as_i64) {
                out.push(Line::from(Span::styled(
                    format!("exit code {code}"),
                    theme.dim(),
                )));
            }
        }
        "branchSummary" | "compactionSummary" => push_text(
            out,
            m.get("summary").and_then(Value::as_str).unwrap_or(""),
            Style::default(),
            search,
            theme,
        ),
        _ => blocks(out, m.get("content"), search, theme),
    }
}

/// An assistant message: model, stop reason, usage and error, then its
/// blocks.
fn assistant_lines<'a>(
    out: &mut Vec<Line<'a>>,
    m: &Map<String, Value>,
    search: &Query,
    theme: &Theme,
) {
    let model = m.get("model").and_then(Value::as_str).unwrap_or("?");
    let provider = m.get("provider").and_then(Value::as_str).unwrap_or("?");
    let stop = m.get("stopReason").and_then(Value::as_str).unwrap_or("?");
    out.push(Line::from(Span::styled(
        arbor_session::render::sanitize_line(&format!("model {provider}/{model} · stop {stop}")),
        theme.dim(),
    )));
    if let Some(u) = m.get("usage") {
        let n = |k: &str| u.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        let cost = u
            .get("cost")
            .and_then(|c| c.get("total"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        out.push(Line::from(Span::styled(
            format!(
                "usage in {} · out {} · cache read {} · cache write {} · total {} · ${cost:.4}",
                n("input"),
                n("output"),
                n("cacheRead"),
                n("cacheWrite"),
                n("totalTokens")
            ),
            theme.dim(),
        )));
    }
    if let Some(err) = m.get("errorMessage").and_then(Value::as_str) {
        out.push(Line::from(Span::styled(
            format!("error: {}", arbor_session::render::sanitize_line(err)),
            theme.error(),
        )));
    }
    out.push(Line::from(""));
    blocks(out, m.get("content"), search, theme);
}
