//! The preview pane's data, loaded off the UI thread for the selected row.

use std::path::{Path, PathBuf};

use crate::search::doc::original_range;
use crate::search::{normalize, Query, Term};
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
/// Matching is done as the search does it, on the normalized text
/// (lowercased, whitespace runs one space: a phrase may span a newline),
/// and the match is mapped back onto `body`, whose length lowercasing may
/// have changed.
fn find_snippet(body: &str, query: &Query) -> Option<(String, std::ops::Range<usize>)> {
    let mut norm = String::new();
    normalize(body, &mut norm);
    let found = query.terms.iter().find_map(|t| match t {
        Term::Word { lower: w, .. } => norm.find(w.as_str()).map(|s| s..s + w.len()),
        Term::Phrase(p) => norm.find(p.as_str()).map(|s| s..s + p.len()),
        Term::Regex(r) => r
            .find_iter(&norm)
            .find(|m| !m.is_empty())
            .map(|m| m.range()),
    })?;
    let std::ops::Range { start, end } = original_range(body, found)?;
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

#[cfg(test)]
mod tests {
    use super::find_snippet;
    use crate::search::Query;

    /// The snippet's matched text.
    fn matched(body: &str, q: &str) -> Option<String> {
        let (text, r) = find_snippet(body, &Query::parse(q))?;
        Some(text.chars().skip(r.start).take(r.len()).collect())
    }

    #[test]
    fn the_match_survives_text_that_lowercasing_resizes() {
        // Å (U+212B) and K (U+212A) shrink when lowercased, İ grows: the
        // offsets found in the lowercased text are mapped back.
        let body = "Measured in \u{212b}ngstr\u{f6}ms and \u{212a}elvin.\nThen the PARSER broke.\n";
        assert_eq!(matched(body, "parser").as_deref(), Some("PARSER"));
        assert_eq!(
            matched(body, "\"kelvin\"").as_deref(),
            Some("\u{212a}elvin")
        );
        let body = "\u{130}stanbul notes: the Token Refresh failed\n";
        assert_eq!(matched(body, "refresh").as_deref(), Some("Refresh"));
        assert_eq!(matched(body, "re:tok\\w+").as_deref(), Some("Token"));
    }

    #[test]
    fn a_phrase_may_span_a_newline_or_two_messages() {
        let body = "first line ends with token\nrefresh starts the next\n";
        let (text, r) = find_snippet(body, &Query::parse("\"token refresh\"")).unwrap();
        let shown: String = text.chars().skip(r.start).take(r.len()).collect();
        // Drawn on one line: the newline shows as a space.
        assert_eq!(shown, "token refresh");
        assert!(text.starts_with("first line ends with "), "{text:?}");
    }
}
