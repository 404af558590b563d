//! Two branches of one session side by side: the paths from their common
//! ancestor to two entries, cut into turns (a user message and what
//! followed it) and aligned turn by turn, with what each side's tools did.
//!
//! One model for `arbor diff` and the tree's compare view: [`compare`]
//! builds it, [`layout`] lays it out as rows of plain, sanitized text for
//! a given width (side by side or stacked); the CLI prints the rows, the
//! tree screen styles them.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;
use unicode_width::UnicodeWidthChar;

use crate::entry::{content_text, Entry};
use crate::render::{entry_text, sanitize_block, sanitize_line, tool_call_text, ToolCalls};
use crate::tree::SessionTree;
use crate::Session;

/// What an item of a turn is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    User,
    Assistant,
    /// A tool call, with its result when the branch has one.
    Tool,
    /// A branch summary or a compaction: text standing for earlier ones.
    Summary,
    /// Any other message (a custom message, a bash execution…).
    Other,
}

/// A tool's result, as the branch holds it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub id: String,
    pub is_error: bool,
    pub text: String,
}

/// A tool call made on a branch.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolRun {
    pub name: String,
    pub arguments: Value,
    /// The result, when the branch holds one.
    pub result: Option<ToolResult>,
}

/// One message (or tool call) of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    /// The entry it comes from (a tool call: the assistant message making it).
    pub id: String,
    pub kind: Kind,
    /// The message's text; a tool call's as the tree names it (`[bash: …]`).
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRun>,
}

/// A user message and everything after it up to the next one (the first
/// turn after the ancestor may have no user message).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub items: Vec<Item>,
}

impl Turn {
    pub fn tools(&self) -> impl Iterator<Item = &ToolRun> {
        self.items.iter().filter_map(|i| i.tool.as_ref())
    }

    fn starts_with_user(&self) -> bool {
        self.items.first().is_some_and(|i| i.kind == Kind::User)
    }
}

/// A same call (tool and arguments) whose result differs between the sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResultDiff {
    /// The call as the tree names it.
    pub call: String,
    /// How the results differ, in words.
    pub how: String,
}

/// Turn `n` of each side, and how their tools compare.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnPair {
    /// 0 for what follows the ancestor before either side's first user
    /// message; then 1, 2…
    pub turn: usize,
    pub a: Option<Turn>,
    pub b: Option<Turn>,
    /// `A ran 3 tools (bash ×2, edit), B ran 1 (read)`; `None` when
    /// neither side ran one.
    pub tools: Option<String>,
    pub differing_results: Vec<ResultDiff>,
}

impl TurnPair {
    /// Both sides hold the same messages and calls.
    pub fn same(&self) -> bool {
        match (&self.a, &self.b) {
            (Some(a), Some(b)) => {
                a.items.len() == b.items.len()
                    && a.items.iter().zip(&b.items).all(|(x, y)| same_item(x, y))
            }
            _ => false,
        }
    }
}

impl TurnPair {
    /// The two sides' items aligned: a user message with a user message,
    /// an assistant's with an assistant's, a call with a call (the longest
    /// such pairing that keeps each side's order, same items preferred);
    /// an item with nothing opposite is paired with `None`.
    pub fn aligned(&self) -> Vec<(Option<&Item>, Option<&Item>)> {
        let empty: &[Item] = &[];
        let a = self.a.as_ref().map_or(empty, |t| &t.items[..]);
        let b = self.b.as_ref().map_or(empty, |t| &t.items[..]);
        let (n, m) = (a.len(), b.len());
        // Quadratic: beyond a few thousand cells, pair in order instead.
        if n.saturating_mul(m) > 4_000_000 {
            return (0..n.max(m)).map(|k| (a.get(k), b.get(k))).collect();
        }
        let score = |x: &Item, y: &Item| -> u32 {
            if x.kind != y.kind {
                0
            } else if same_item(x, y) {
                4
            } else if x.tool.as_ref().map(|t| &t.name) == y.tool.as_ref().map(|t| &t.name) {
                3
            } else {
                2
            }
        };
        // best[i][j]: the best pairing of a[i..] with b[j..].
        let mut best = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                let s = score(&a[i], &b[j]);
                let pair = if s > 0 { s + best[i + 1][j + 1] } else { 0 };
                best[i][j] = pair.max(best[i + 1][j]).max(best[i][j + 1]);
            }
        }
        let mut out = Vec::with_capacity(n.max(m));
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m {
                let s = score(&a[i], &b[j]);
                if s > 0 && best[i][j] == s + best[i + 1][j + 1] {
                    out.push((Some(&a[i]), Some(&b[j])));
                    i += 1;
                    j += 1;
                } else if best[i][j] == best[i + 1][j] {
                    out.push((Some(&a[i]), None));
                    i += 1;
                } else {
                    out.push((None, Some(&b[j])));
                    j += 1;
                }
            } else if i < n {
                out.push((Some(&a[i]), None));
                i += 1;
            } else {
                out.push((None, Some(&b[j])));
                j += 1;
            }
        }
        out
    }
}

fn same_item(x: &Item, y: &Item) -> bool {
    x.kind == y.kind && x.text == y.text && x.tool == y.tool
}

/// One side: the entry compared and how far its branch goes past the ancestor.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Side {
    pub id: String,
    /// The entry's one-line text, as the tree shows it.
    pub text: String,
    /// Entries from the ancestor (excluded) to this one (included).
    pub entries: usize,
    pub turns: usize,
    pub tools: usize,
}

/// The comparison of the branches ending at two entries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The deepest entry both paths share; `None` when they start at
    /// different roots.
    pub common_ancestor: Option<String>,
    /// Its one-line text.
    pub ancestor_text: Option<String>,
    pub a: Side,
    pub b: Side,
    pub turns: Vec<TurnPair>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CompareError {
    #[error("no entry {0} in the session")]
    NoEntry(String),
}

/// Compares the branches ending at entries `a` and `b` (ids).
pub fn compare(
    session: &Session,
    tree: &SessionTree,
    a: &str,
    b: &str,
) -> Result<Comparison, CompareError> {
    let ia = tree
        .index_of(a)
        .ok_or_else(|| CompareError::NoEntry(a.to_string()))?;
    let ib = tree
        .index_of(b)
        .ok_or_else(|| CompareError::NoEntry(b.to_string()))?;
    Ok(compare_at(session, tree, ia, ib))
}

/// [`compare`] with entry positions.
pub fn compare_at(session: &Session, tree: &SessionTree, ia: usize, ib: usize) -> Comparison {
    let entries = &session.entries;
    let calls = &session.calls;
    // Entries are read from their lines for this only (`parsed` copies),
    // so the session does not keep every object it compared.
    let text = |i: usize| entry_text(&entries[i].parsed(), calls);
    let pa = tree.path_to(ia);
    let pb = tree.path_to(ib);
    let shared = pa.iter().zip(&pb).take_while(|(x, y)| x == y).count();
    let ancestor = shared.checked_sub(1).map(|k| pa[k]);
    let (ta, tb) = (turns(entries, &pa[shared..]), turns(entries, &pb[shared..]));
    let side = |i: usize, path: &[usize], turns: &[Turn]| Side {
        id: entries[i].id.clone(),
        text: text(i),
        entries: path.len() - shared,
        turns: turns.iter().filter(|t| t.starts_with_user()).count(),
        tools: turns.iter().map(|t| t.tools().count()).sum(),
    };
    let (sa, sb) = (side(ia, &pa, &ta), side(ib, &pb, &tb));
    Comparison {
        common_ancestor: ancestor.map(|i| entries[i].id.clone()),
        ancestor_text: ancestor.map(text),
        a: sa,
        b: sb,
        turns: align(ta, tb),
    }
}

/// Splits a branch into turns: a new one at each user message.
fn turns(entries: &[Entry], path: &[usize]) -> Vec<Turn> {
    // Results by the call they answer, on this branch only.
    let mut results: HashMap<String, ToolResult> = HashMap::new();
    for &i in path {
        if entries[i].role() != Some("toolResult") {
            continue;
        }
        let e = entries[i].parsed();
        let Some(m) = e.message() else { continue };
        if let Some(id) = m.get("toolCallId").and_then(Value::as_str) {
            results.insert(
                id.to_string(),
                ToolResult {
                    id: e.id.clone(),
                    is_error: m.get("isError").and_then(Value::as_bool) == Some(true),
                    text: content_text(m.get("content"), "\n"),
                },
            );
        }
    }
    let mut out: Vec<Turn> = Vec::new();
    for &i in path {
        let e = entries[i].parsed();
        let items = items_of(&e, &results);
        if items.is_empty() {
            continue;
        }
        if e.role() == Some("user") || out.is_empty() {
            out.push(Turn { items: Vec::new() });
        }
        if let Some(t) = out.last_mut() {
            t.items.extend(items);
        }
    }
    out
}

/// The items an entry contributes: none for bookkeeping (labels, model
/// changes, names) and for tool results (shown with their call).
fn items_of(e: &Entry, results: &HashMap<String, ToolResult>) -> Vec<Item> {
    let item = |kind, text: String| Item {
        id: e.id.clone(),
        kind,
        text,
        tool: None,
    };
    let no_calls = ToolCalls::default();
    match e.entry_type() {
        "message" => {}
        "branch_summary" | "compaction" => {
            let what = if e.entry_type() == "compaction" {
                "compaction"
            } else {
                "branch summary"
            };
            let summary = e.str_field("summary").unwrap_or("");
            return vec![item(Kind::Summary, format!("[{what}]: {summary}"))];
        }
        "custom_message" => return vec![item(Kind::Other, entry_text(e, &no_calls))],
        _ => return Vec::new(),
    }
    let Some(m) = e.message() else {
        return vec![item(Kind::Other, entry_text(e, &no_calls))];
    };
    match e.role() {
        Some("user") => vec![item(Kind::User, content_text(m.get("content"), "\n"))],
        Some("assistant") => {
            let mut out = Vec::new();
            let text = content_text(m.get("content"), "\n");
            if !text.trim().is_empty() {
                out.push(item(Kind::Assistant, text));
            } else if !has_tool_calls(m) {
                // No text and no call: the tree's words for it.
                let shown = entry_text(e, &no_calls);
                let shown = shown.strip_prefix("assistant: ").unwrap_or(&shown);
                out.push(item(Kind::Assistant, shown.to_string()));
            }
            if let Some(Value::Array(blocks)) = m.get("content") {
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) != Some("toolCall") {
                        continue;
                    }
                    let name = b.get("name").and_then(Value::as_str).unwrap_or("tool");
                    let args = b.get("arguments").cloned().unwrap_or(Value::Null);
                    let result = b
                        .get("id")
                        .and_then(Value::as_str)
                        .and_then(|id| results.get(id))
                        .cloned();
                    out.push(Item {
                        id: e.id.clone(),
                        kind: Kind::Tool,
                        text: tool_call_text(name, &args),
                        tool: Some(ToolRun {
                            name: name.to_string(),
                            arguments: args,
                            result,
                        }),
                    });
                }
            }
            out
        }
        // Shown with the call that made them.
        Some("toolResult") => Vec::new(),
        _ => vec![item(Kind::Other, entry_text(e, &no_calls))],
    }
}

fn has_tool_calls(m: &serde_json::Map<String, Value>) -> bool {
    matches!(m.get("content"), Some(Value::Array(blocks))
        if blocks.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("toolCall")))
}

/// Pairs turn `n` of one side with turn `n` of the other; what comes after
/// the ancestor before a side's first user message is turn 0.
fn align(a: Vec<Turn>, b: Vec<Turn>) -> Vec<TurnPair> {
    let split = |mut t: Vec<Turn>| {
        let lead = (!t.first().is_none_or(Turn::starts_with_user)).then(|| t.remove(0));
        (lead, t)
    };
    let (lead_a, a) = split(a);
    let (lead_b, b) = split(b);
    let mut out = Vec::new();
    if lead_a.is_some() || lead_b.is_some() {
        out.push(pair(0, lead_a, lead_b));
    }
    let n = a.len().max(b.len());
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    for k in 1..=n {
        out.push(pair(k, a.next(), b.next()));
    }
    out
}

fn pair(turn: usize, a: Option<Turn>, b: Option<Turn>) -> TurnPair {
    let runs = |t: &Option<Turn>| -> Vec<ToolRun> {
        t.as_ref()
            .map(|t| t.tools().cloned().collect())
            .unwrap_or_default()
    };
    let (ra, rb) = (runs(&a), runs(&b));
    let tools = (!ra.is_empty() || !rb.is_empty())
        .then(|| format!("A {}, B {}", ran(&ra, true), ran(&rb, false)));
    TurnPair {
        turn,
        a,
        b,
        tools,
        differing_results: differing(&ra, &rb),
    }
}

/// `ran 3 tools (bash ×2, edit)`; the second side drops the word `tools`
/// (`B ran 1 (read)`), as one would say it.
fn ran(runs: &[ToolRun], first: bool) -> String {
    if runs.is_empty() {
        return "ran none".into();
    }
    let mut names: Vec<(&str, usize)> = Vec::new();
    for r in runs {
        match names.iter_mut().find(|(n, _)| *n == r.name) {
            Some((_, c)) => *c += 1,
            None => names.push((&r.name, 1)),
        }
    }
    let list: Vec<String> = names
        .iter()
        .map(|(n, c)| {
            if *c > 1 {
                format!("{n} ×{c}")
            } else {
                n.to_string()
            }
        })
        .collect();
    let noun = match (first, runs.len()) {
        (false, _) => "",
        (true, 1) => " tool",
        (true, _) => " tools",
    };
    format!("ran {}{noun} ({})", runs.len(), list.join(", "))
}

/// Calls made on both sides (same tool, same arguments) whose results
/// differ: the n-th such call of one side against the n-th of the other.
fn differing(a: &[ToolRun], b: &[ToolRun]) -> Vec<ResultDiff> {
    let mut used = vec![false; b.len()];
    let mut out = Vec::new();
    for x in a {
        let Some(k) = (0..b.len())
            .find(|&k| !used[k] && b[k].name == x.name && b[k].arguments == x.arguments)
        else {
            continue;
        };
        used[k] = true;
        let y = &b[k];
        let how = match (&x.result, &y.result) {
            (Some(p), Some(q)) if p.is_error != q.is_error => format!(
                "A {}, B {}",
                if p.is_error { "failed" } else { "succeeded" },
                if q.is_error { "failed" } else { "succeeded" }
            ),
            (Some(p), Some(q)) if p.text != q.text => {
                let (lp, lq) = (p.text.lines().count(), q.text.lines().count());
                if lp == lq {
                    format!("outputs differ ({lp} lines each)")
                } else {
                    format!("outputs differ (A {}, B {})", lines(lp), lines(lq))
                }
            }
            (Some(_), None) => "only A has a result".into(),
            (None, Some(_)) => "only B has a result".into(),
            _ => continue,
        };
        out.push(ResultDiff {
            call: tool_call_text(&x.name, &x.arguments),
            how,
        });
    }
    out
}

fn lines(n: usize) -> String {
    if n == 1 {
        "1 line".into()
    } else {
        format!("{n} lines")
    }
}

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
pub const ITEM_LINES: usize = 6;

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
    let all = wrap(&sanitize_block(text.trim_end()), width, 2);
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
    let width = width.max(indent + 4);
    let mut out: Vec<String> = Vec::new();
    for para in text.split('\n') {
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
                    start(&mut line, &mut w, &out);
                }
                line.push(c);
                w += cw;
            }
            empty = false;
        }
        out.push(line);
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

    #[test]
    fn ran_names_counts_in_order_of_first_use() {
        let run = |n: &str| ToolRun {
            name: n.into(),
            arguments: Value::Null,
            result: None,
        };
        let a = [run("bash"), run("edit"), run("bash")];
        assert_eq!(ran(&a, true), "ran 3 tools (bash ×2, edit)");
        assert_eq!(ran(&a[..1], false), "ran 1 (bash)");
        assert_eq!(ran(&[], false), "ran none");
    }

    fn item(kind: Kind, text: &str) -> Item {
        Item {
            id: text.into(),
            kind,
            text: text.into(),
            tool: None,
        }
    }

    #[test]
    fn items_align_by_kind_keeping_order() {
        use Kind::*;
        let a = Turn {
            items: vec![item(User, "u"), item(Assistant, "x"), item(Assistant, "y")],
        };
        let b = Turn {
            items: vec![item(User, "v"), item(Other, "o"), item(Assistant, "y")],
        };
        let p = pair(1, Some(a), Some(b));
        let shown: Vec<(Option<&str>, Option<&str>)> = p
            .aligned()
            .iter()
            .map(|(x, y)| (x.map(|i| i.text.as_str()), y.map(|i| i.text.as_str())))
            .collect();
        // User with user; the same `y` opposite itself, `x` and `o` alone.
        assert_eq!(
            shown,
            vec![
                (Some("u"), Some("v")),
                (Some("x"), None),
                (None, Some("o")),
                (Some("y"), Some("y")),
            ]
        );
        assert!(!p.same());
    }

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
