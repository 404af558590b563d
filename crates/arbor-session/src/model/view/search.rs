//! The tree's type-to-search: the text an entry is searched by, and the
//! match of a query's words.

use serde_json::Value;

use crate::entry::content_text;
use crate::entry::Entry;
use crate::render::{entry_text, ToolCalls};
use crate::tree::SessionTree;

/// The text searched by type-to-search: what Atomic searches (label, role,
/// message text, command, type words), with the whole message text rather
/// than its first 200 characters, and the row text as shown.
pub fn search_haystack(e: &Entry, tree: &SessionTree, calls: &ToolCalls) -> String {
    let text = search_text(e, calls);
    match tree.labels.get(e.id.as_str()) {
        // Lowercasing the label and the rest apart is lowercasing them
        // joined by a space: a space never makes a final sigma.
        Some(l) => format!("{} {text}", l.text.to_lowercase()),
        None => text,
    }
}

/// [`search_haystack`] without the label (labels change while the text of
/// an entry does not): lowercased. A word of a query never holds a space,
/// so it is in the haystack exactly when it is in the label or in this.
pub fn search_text(e: &Entry, calls: &ToolCalls) -> String {
    search_parts(e, calls).to_lowercase()
}

/// The parts of [`search_text`] joined by spaces, before lowercasing.
fn search_parts(e: &Entry, calls: &ToolCalls) -> String {
    let e = &*e.parsed();
    let mut parts: Vec<String> = Vec::new();
    let field = |k: &str| {
        e.raw
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match e.entry_type() {
        "message" => {
            if let Some(m) = e.message() {
                if let Some(r) = m.get("role").and_then(Value::as_str) {
                    parts.push(r.to_string());
                }
                parts.push(content_text(m.get("content"), " "));
                if let Some(c) = m.get("command").and_then(Value::as_str) {
                    parts.push(c.to_string());
                }
            }
        }
        "custom_message" => {
            parts.push(field("customType"));
            parts.push(content_text(e.raw.get("content"), ""));
        }
        "compaction" => parts.push("compaction".into()),
        ty => {
            // Atomic's type word, then the field that says what it is.
            let words = match ty {
                "branch_summary" => Some(("branch summary", "summary")),
                "session_info" => Some(("title", "name")),
                "model_change" => Some(("model", "modelId")),
                "thinking_level_change" => Some(("thinking", "thinkingLevel")),
                "custom" => Some(("custom", "customType")),
                "label" => Some(("label", "label")),
                _ => None,
            };
            if let Some((word, key)) = words {
                parts.push(word.into());
                parts.push(field(key));
            }
        }
    }
    parts.push(entry_text(e, calls));
    parts.join(" ")
}

/// Every word of `query` is a case-insensitive substring of `hay` (lowercased).
pub fn matches_search(hay: &str, query: &str) -> bool {
    query
        .split_whitespace()
        .all(|w| hay.contains(&w.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The haystack as it was built (label first, all parts joined, then
    /// lowercased) is the label and the search text lowercased apart,
    /// Greek final sigma included.
    #[test]
    fn haystack_is_label_then_search_text() {
        let lines = [
            json!({"type":"message","id":"a","parentId":null,"timestamp":"2025-01-01T00:00:00.000Z",
                "message":{"role":"user","content":"ΣΑΣ ΟΔΟΣ. σοφός Σ"}}),
            json!({"type":"label","id":"b","parentId":"a","targetId":"a","label":"ΟΔΟΣ","timestamp":"2025-01-01T00:00:01.000Z"}),
            json!({"type":"label","id":"c","parentId":"b","targetId":"b","label":"Σ.","timestamp":"2025-01-01T00:00:02.000Z"}),
            json!({"type":"message","id":"d","parentId":"c","timestamp":"2025-01-01T00:00:03.000Z",
                "message":{"role":"bashExecution","command":"ΣΗΜΑ","output":""}}),
            json!({"type":"label","id":"e","parentId":"d","targetId":"d","label":"'Σ'","timestamp":"2025-01-01T00:00:04.000Z"}),
        ];
        let entries: Vec<Entry> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| Entry::new(i + 1, l.as_object().unwrap().clone()))
            .collect();
        let tree = SessionTree::from_entries(&entries);
        let calls = ToolCalls::default();
        for e in &entries {
            let mut parts: Vec<String> = Vec::new();
            if let Some(l) = tree.labels.get(e.id.as_str()) {
                parts.push(l.text.clone());
            }
            parts.push(search_parts(e, &calls));
            let old = parts.join(" ").to_lowercase();
            assert_eq!(search_haystack(e, &tree, &calls), old, "{}", e.id);
        }
    }
}
