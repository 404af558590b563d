//! Two branches of one session side by side: the paths from their common
//! ancestor to two entries, cut into turns (a user message and what
//! followed it) and aligned turn by turn, with what each side's tools did.
//!
//! One model for `arbor diff` and the tree's compare view: [`compare`]
//! builds it, [`layout`] lays it out as rows of plain, sanitized text for
//! a given width (side by side or stacked); the CLI prints the rows, the
//! tree screen styles them.

mod layout;

pub use layout::{cut, layout, Row, Tone, SIDE_BY_SIDE_MIN};

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::entry::{content_text, Entry};
use crate::render::{entry_text, tool_call_text, ToolCalls};
use crate::tree::SessionTree;
use crate::Session;
use crate::{Error, Result};

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
    /// Shared by every call shown with it: a tool's output of hundreds of
    /// megabytes is held once, not once more per copy of the result.
    #[serde(serialize_with = "shared_text")]
    pub text: std::sync::Arc<String>,
}

fn shared_text<S: serde::Serializer>(t: &std::sync::Arc<String>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(t)
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

/// Compares the branches ending at entries `a` and `b` (ids).
pub fn compare(session: &Session, tree: &SessionTree, a: &str, b: &str) -> Result<Comparison> {
    let ia = tree
        .index_of(a)
        .ok_or_else(|| Error::NoEntryInSession(a.to_string()))?;
    let ib = tree
        .index_of(b)
        .ok_or_else(|| Error::NoEntryInSession(b.to_string()))?;
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
        id: entries[i].id.to_string(),
        text: text(i),
        entries: path.len() - shared,
        turns: turns.iter().filter(|t| t.starts_with_user()).count(),
        tools: turns.iter().map(|t| t.tools().count()).sum(),
    };
    let (sa, sb) = (side(ia, &pa, &ta), side(ib, &pb, &tb));
    Comparison {
        common_ancestor: ancestor.map(|i| entries[i].id.to_string()),
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
        // The message taken out of its line's object, its text out of the
        // message (a tool's output of hundreds of megabytes is not held
        // twice over).
        let e = &entries[i];
        let m = match e.raw.parse_unparsed() {
            Some(raw) => raw.and_then(|mut raw| raw.shift_remove("message")),
            None => e.with_raw(|raw| raw.get("message").cloned()),
        };
        let Some(m) = m.filter(Value::is_object) else {
            continue;
        };
        if let Some(id) = m
            .get("toolCallId")
            .and_then(Value::as_str)
            .map(str::to_string)
        {
            let is_error = m.get("isError").and_then(Value::as_bool) == Some(true);
            let text = crate::context::take_content_text(m);
            results.insert(
                id,
                ToolResult {
                    id: e.id.to_string(),
                    is_error,
                    text: std::sync::Arc::new(text),
                },
            );
        }
    }
    let mut out: Vec<Turn> = Vec::new();
    for &i in path {
        if entries[i].role() == Some("toolResult") && entries[i].entry_type() == "message" {
            // Shown with the call that made it (see `items_of`): not read
            // again.
            continue;
        }
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
        id: e.id.to_string(),
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
                        id: e.id.to_string(),
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

    pub(super) fn item(kind: Kind, text: &str) -> Item {
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
}
