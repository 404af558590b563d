//! A comparison laid out as rows of plain, sanitized text for a given
//! width: side by side when there is room, else stacked.

use unicode_width::UnicodeWidthChar;

use crate::render::{sanitize_block, sanitize_line};

use super::{lines, same_item, Comparison, Item, Kind, Side, ToolRun, TurnPair};

/// What a row of the laid-out comparison is, for styling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// The comparison's header.
    Title,
    /// A turn's heading.
    Heading,
    /// A side's header (`A  <id> …`).
    SideName,
    Item(Kind),
    /// The tools summary and results that differ.
    Note,
    /// Nothing on this side (`—`), blank lines.
    Dim,
}

/// One screen line of the layout: sanitized text cut to its width.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// Across the whole width.
    Full(Tone, String),
    /// Side by side: A's cell, B's cell (each cut to the column), and
    /// whether the two items they belong to are the same.
    Pair {
        a: (Tone, String),
        b: (Tone, String),
        same: bool,
    },
}

/// The column width at which [`layout`] puts the sides side by side.
pub const SIDE_BY_SIDE_MIN: usize = 120;

/// Lines each item shows at most (then `…`): a comparison is read for
/// where the branches part, not for whole transcripts.
pub(crate) const ITEM_LINES: usize = 6;

/// The separator of a side-by-side row, and its width.
const SEP: &str = " │ ";
const SAME: &str = " = ";
const SEP_W: usize = 3;

/// Lays the comparison out for `width` columns: side by side from
/// [`SIDE_BY_SIDE_MIN`] columns, else stacked (A's turn above B's, each
/// line tagged with its side: `A │ `, or `A = ` for an item the same on
/// both sides).
pub fn layout(c: &Comparison, width: usize) -> Vec<Row> {
    let width = width.max(20);
    let wide = width >= SIDE_BY_SIDE_MIN;
    let mut rows = Vec::new();
    let full = |tone, s: &str| Row::Full(tone, cut(&sanitize_line(s), width));
    rows.push(full(
        Tone::Title,
        &match (&c.common_ancestor, &c.ancestor_text) {
            (Some(id), Some(text)) => format!("Common ancestor {id} · {}", one_line(text)),
            _ => "No common ancestor: the entries are under different roots".into(),
        },
    ));
    let side_line = |tag: &str, s: &Side| {
        format!(
            "{tag} {}: {}, {}, {} · {}",
            s.id,
            count(s.entries, "entry", "entries"),
            count(s.turns, "turn", "turns"),
            count(s.tools, "tool", "tools"),
            one_line(&s.text)
        )
    };
    let (la, lb) = (side_line("A", &c.a), side_line("B", &c.b));
    if wide {
        let col = (width - SEP_W) / 2;
        rows.push(Row::Pair {
            a: (Tone::SideName, cut(&sanitize_line(&la), col)),
            b: (Tone::SideName, cut(&sanitize_line(&lb), col)),
            same: false,
        });
    } else {
        rows.push(full(Tone::SideName, &la));
        rows.push(full(Tone::SideName, &lb));
    }
    if c.a.id == c.b.id {
        rows.push(full(
            Tone::Note,
            "The two entries are the same: nothing to compare",
        ));
        return rows;
    }
    for t in &c.turns {
        rows.push(Row::Full(Tone::Dim, String::new()));
        let mut head = if t.turn == 0 {
            "── After the ancestor, before a user message ".to_string()
        } else {
            format!("── Turn {} ", t.turn)
        };
        if t.same() {
            head.push_str("(the same on both sides) ");
        }
        let fill = width.saturating_sub(text_width(&head));
        head.push_str(&"─".repeat(fill));
        rows.push(full(Tone::Heading, &head));
        if wide {
            side_by_side(&mut rows, t, width);
        } else {
            stacked(&mut rows, t, width);
        }
        // Notes are wrapped, never cut: they are the comparison's point.
        let mut note = |text: String| {
            for l in wrap(&sanitize_line(&text), width, 2) {
                rows.push(Row::Full(Tone::Note, l));
            }
        };
        if let Some(tools) = &t.tools {
            note(format!("tools: {tools}"));
        }
        for d in &t.differing_results {
            note(format!(
                "different result: {} ({})",
                one_line(&d.call),
                d.how
            ));
        }
    }
    if c.turns.is_empty() {
        rows.push(Row::Full(Tone::Dim, String::new()));
        rows.push(full(
            Tone::Note,
            "One entry is an ancestor of the other, with no messages between them",
        ));
    }
    rows
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn side_by_side(rows: &mut Vec<Row>, t: &TurnPair, width: usize) {
    let col = (width - SEP_W) / 2;
    let blank = (Tone::Dim, String::new());
    let missing = vec![(Tone::Dim, "— no such turn".to_string())];
    let mut pairs = t.aligned();
    if pairs.is_empty() {
        pairs.push((None, None));
    }
    for (k, (x, y)) in pairs.into_iter().enumerate() {
        let same = matches!((x, y), (Some(x), Some(y)) if same_item(x, y));
        // A side that has no such turn says so once.
        let cell = |i: Option<&Item>, absent: bool| match i {
            Some(i) => item_lines(i, col),
            None if absent && k == 0 => missing.clone(),
            None => Vec::new(),
        };
        let ca = cell(x, t.a.is_none());
        let cb = cell(y, t.b.is_none());
        for r in 0..ca.len().max(cb.len()) {
            rows.push(Row::Pair {
                a: ca.get(r).cloned().unwrap_or_else(|| blank.clone()),
                b: cb.get(r).cloned().unwrap_or_else(|| blank.clone()),
                same,
            });
        }
    }
}

fn stacked(rows: &mut Vec<Row>, t: &TurnPair, width: usize) {
    // Each line tagged with its side: `A │ …`, so a scrolled screen still
    // says whose it is.
    // An item the same on both sides (paired with its twin, as side by
    // side marks it) is tagged `A = …` / `B = …`.
    let same: std::collections::HashSet<*const Item> = t
        .aligned()
        .into_iter()
        .filter_map(|(x, y)| Some((x?, y?)))
        .filter(|(x, y)| same_item(x, y))
        .flat_map(|(x, y)| [x as *const Item, y as *const Item])
        .collect();
    let inner = width.saturating_sub(4);
    for (tag, side) in [("A", &t.a), ("B", &t.b)] {
        match side {
            None => rows.push(Row::Full(Tone::Dim, format!("{tag} │ — no such turn"))),
            Some(turn) => {
                for i in &turn.items {
                    let sep = if same.contains(&(i as *const Item)) {
                        '='
                    } else {
                        '│'
                    };
                    for (tone, text) in item_lines(i, inner) {
                        rows.push(Row::Full(tone, format!("{tag} {sep} {text}")));
                    }
                }
            }
        }
    }
}

/// An item as at most [`ITEM_LINES`] lines of `width`: its role, its
/// text wrapped (continuations indented); a tool call with its result.
fn item_lines(i: &Item, width: usize) -> Vec<(Tone, String)> {
    let tone = Tone::Item(i.kind);
    let text = match (i.kind, &i.tool) {
        (Kind::User, _) => format!("user: {}", i.text),
        (Kind::Assistant, _) => format!("assistant: {}", i.text),
        (Kind::Tool, Some(run)) => format!("{} → {}", one_line(&i.text), result_words(run)),
        _ => i.text.clone(),
    };
    let mut out = Vec::new();
    let all = wrap_at_most(&sanitize_block(text.trim_end()), width, 2, ITEM_LINES);
    let more = all.len() > ITEM_LINES;
    for (k, l) in all.into_iter().take(ITEM_LINES).enumerate() {
        if more && k + 1 == ITEM_LINES {
            let w = width.saturating_sub(2);
            out.push((tone, format!("{} …", cut(&l, w).trim_end())));
        } else {
            out.push((tone, l));
        }
    }
    out
}

fn result_words(run: &ToolRun) -> String {
    match &run.result {
        None => "no result".into(),
        Some(r) => {
            let n = r.text.lines().count();
            let first = r.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let verdict = if r.is_error { "error" } else { "ok" };
            match n {
                0 => verdict.to_string(),
                1 => format!("{verdict}: {}", first.trim()),
                _ => format!("{verdict}, {}: {}", lines(n), first.trim()),
            }
        }
    }
}

/// Text on one line (newlines and tabs as spaces, runs of spaces kept).
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r', '\t'], " ")
}

fn text_width(s: &str) -> usize {
    s.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `s` cut to `width` columns (a wide character that would cross the
/// edge is dropped).
pub fn cut(s: &str, width: usize) -> String {
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > width {
            break;
        }
        w += cw;
        out.push(c);
    }
    out
}

/// Word wrap of (sanitized) text into lines of `width` columns; a word
/// longer than a line is broken; lines after the first are indented by
/// `indent`.
fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    wrap_at_most(text, width, indent, usize::MAX)
}

/// [`wrap`] stopped once it has more than `max` lines that are not blank
/// (an item shows a few lines: a message of megabytes is not wrapped whole).
fn wrap_at_most(text: &str, width: usize, indent: usize, max: usize) -> Vec<String> {
    let width = width.max(indent + 4);
    let mut out: Vec<String> = Vec::new();
    // Lines not blank so far: each is counted as it is pushed.
    let shown = std::cell::Cell::new(0usize);
    let full = |out: &Vec<String>| {
        if out.last().is_some_and(|l| !l.trim().is_empty()) {
            shown.set(shown.get() + 1);
        }
        shown.get() > max
    };
    'text: for para in text.split('\n') {
        let mut line = String::new();
        let mut w = 0;
        let pad = |out: &Vec<String>| if out.is_empty() { 0 } else { indent };
        let start = |line: &mut String, w: &mut usize, out: &Vec<String>| {
            *line = " ".repeat(pad(out));
            *w = pad(out);
        };
        start(&mut line, &mut w, &out);
        let mut empty = true;
        for word in para.split(' ') {
            let ww = text_width(word);
            let gap = usize::from(!empty);
            if !empty && w + gap + ww > width {
                out.push(std::mem::take(&mut line));
                if full(&out) {
                    break 'text;
                }
                start(&mut line, &mut w, &out);
                empty = true;
            }
            if !empty {
                line.push(' ');
                w += 1;
            }
            for c in word.chars() {
                let cw = c.width().unwrap_or(0);
                if w + cw > width {
                    out.push(std::mem::take(&mut line));
                    if full(&out) {
                        break 'text;
                    }
                    start(&mut line, &mut w, &out);
                }
                line.push(c);
                w += cw;
            }
            empty = false;
        }
        out.push(line);
        if full(&out) {
            break 'text;
        }
    }
    // Blank lines inside a message say little in a comparison.
    out.retain(|l| !l.trim().is_empty());
    for l in &mut out {
        l.truncate(l.trim_end().len());
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out
}

impl Row {
    /// The row as plain text for `width` columns (the CLI's output).
    pub fn plain(&self, width: usize) -> String {
        match self {
            Row::Full(_, s) => s.trim_end().to_string(),
            Row::Pair { a, b, same } => {
                let col = (width.max(20) - SEP_W) / 2;
                let pad = col.saturating_sub(text_width(&a.1));
                let sep = if *same { SAME } else { SEP };
                format!("{}{}{sep}{}", a.1, " ".repeat(pad), b.1)
                    .trim_end()
                    .to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::tests::item;
    use crate::compare::{pair, Turn};

    /// An item the same on both sides is marked `=` stacked as it is side
    /// by side (between the columns).
    #[test]
    fn items_the_same_on_both_sides_are_marked_stacked_too() {
        use Kind::*;
        let a = Turn {
            items: vec![item(User, "u"), item(Assistant, "x"), item(Assistant, "y")],
        };
        let b = Turn {
            items: vec![item(User, "v"), item(Other, "o"), item(Assistant, "y")],
        };
        let side = |id: &str| Side {
            id: id.into(),
            text: String::new(),
            entries: 3,
            turns: 1,
            tools: 0,
        };
        let c = Comparison {
            common_ancestor: Some("r".into()),
            ancestor_text: Some("root".into()),
            a: side("a"),
            b: side("b"),
            turns: vec![pair(1, Some(a), Some(b))],
        };
        let text = |width: usize| -> Vec<String> {
            layout(&c, width)
                .iter()
                .map(|r| r.plain(width))
                .skip_while(|l| !l.starts_with("── Turn 1"))
                .skip(1)
                .collect()
        };
        assert_eq!(
            text(80),
            [
                "A │ user: u",
                "A │ assistant: x",
                "A = assistant: y",
                "B │ user: v",
                "B │ o",
                "B = assistant: y",
            ]
        );
        let wide = text(120);
        assert!(
            wide.iter()
                .any(|l| l.starts_with("assistant: y ") && l.ends_with(" = assistant: y")),
            "{wide:?}"
        );
        assert!(
            wide.iter()
                .any(|l| l.starts_with("user: u ") && l.ends_with(" │ user: v")),
            "{wide:?}"
        );
    }

    #[test]
    fn wrap_breaks_words_and_indents() {
        assert_eq!(wrap("aaa bbb ccc", 7, 2), vec!["aaa bbb", "  ccc"]);
        assert_eq!(wrap("abcdefghij", 6, 2), vec!["abcdef", "  ghij"]);
        assert_eq!(wrap("", 10, 2), vec![""]);
    }
}
