//! The preview pane's data, loaded off the UI thread for the selected row.

use std::path::{Path, PathBuf};

use crate::search::{Query, Term};
use crate::session::context::message_text;
use crate::session::{read_session, SessionTree};

#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub path: PathBuf,
    /// The query the snippet was found for.
    pub query: String,
    /// `(role, text)` of the last messages on the active branch.
    pub last_messages: Vec<(String, String)>,
    /// The first search match in context, with the match's char range.
    pub snippet: Option<(String, std::ops::Range<usize>)>,
    pub entry_count: usize,
}

const LAST_MESSAGES: usize = 4;
const SNIPPET_RADIUS: usize = 70;

/// Reads a session for the preview; `query` picks the snippet.
pub fn load_preview(path: &Path, query: &Query) -> Result<Preview, String> {
    let session = read_session(path).map_err(|e| e.to_string())?;
    let tree = SessionTree::build(&session);
    let mut last = Vec::new();
    if let Some(leaf) = tree.leaf {
        for &i in tree.path_to(leaf).iter().rev() {
            let e = &session.entries[i];
            let Some(role) = e.role() else { continue };
            if role != "user" && role != "assistant" {
                continue;
            }
            let text = message_text(e.message());
            if text.trim().is_empty() {
                continue;
            }
            last.push((role.to_string(), text));
            if last.len() == LAST_MESSAGES {
                break;
            }
        }
    }
    last.reverse();

    let snippet = if query.terms.is_empty() {
        None
    } else {
        let mut body = String::new();
        for e in &session.entries {
            if matches!(e.role(), Some("user") | Some("assistant")) {
                body.push_str(&message_text(e.message()));
                body.push('\n');
            }
        }
        find_snippet(&body, query)
    };
    Ok(Preview {
        path: path.to_path_buf(),
        query: query.raw.clone(),
        last_messages: last,
        snippet,
        entry_count: session.entries.len(),
    })
}

/// The first literal match of the query in `body`, with some context.
fn find_snippet(body: &str, query: &Query) -> Option<(String, std::ops::Range<usize>)> {
    let lower = body.to_lowercase();
    // Lowercasing can change byte lengths; only use the fast path when it did not.
    let lower = if lower.len() == body.len() {
        lower
    } else {
        return None;
    };
    let (start, end) = query.terms.iter().find_map(|t| match t {
        Term::Word { lower: w, .. } => lower.find(w.as_str()).map(|s| (s, s + w.len())),
        Term::Phrase(p) => lower.find(p.as_str()).map(|s| (s, s + p.len())),
        Term::Regex(r) => r.find(body).map(|m| (m.start(), m.end())),
    })?;
    if !body.is_char_boundary(start) || !body.is_char_boundary(end) {
        return None;
    }
    let before: String = body[..start]
        .chars()
        .rev()
        .take(SNIPPET_RADIUS)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let matched = &body[start..end];
    let after: String = body[end..].chars().take(SNIPPET_RADIUS).collect();
    let b = crate::session::render::sanitize_line(&before);
    let m = crate::session::render::sanitize_line(matched);
    let a = crate::session::render::sanitize_line(&after);
    let s = b.chars().count();
    let e = s + m.chars().count();
    Some((format!("{b}{m}{a}"), s..e))
}
