//! What a query is matched against: each row's searchable text and the
//! facts its filters test, prepared once per session.

use crate::session::extras::LabelText;
use crate::session::info::SessionInfo;
use crate::session::normalize::normalized;

/// What a query is matched against, prepared once per session.
#[derive(Debug, Clone, Default)]
pub struct SearchDoc {
    /// Short fields, original case (fuzzy matching ignores case itself).
    pub fields: Vec<String>,
    /// The searchable parts, each normalized (lowercased, whitespace runs
    /// collapsed to one space) and separated by `\n` (which a normalized
    /// part never contains, so no match spans two parts): id, name,
    /// summary, cwd, then the message bodies from `body_start` on.
    pub text: String,
    /// Where the bodies start in `text`.
    pub body_start: usize,
    /// What the query's filters (`dir:`, `after:`, …) look at.
    pub facts: RowFacts,
}

/// The facts of a row the query's filters test (see `super::query::Filter`).
#[derive(Debug, Clone, Default)]
pub struct RowFacts {
    /// The cwd, lowercased.
    pub cwd: String,
    pub modified_ms: i64,
    /// The models used, lowercased.
    pub models: Vec<String>,
    pub named: bool,
    pub fork: bool,
    pub agent: crate::session::agent::Agent,
    /// The labels in effect (on an entry the file has), lowercased.
    pub labels: Vec<String>,
}

impl RowFacts {
    pub fn of(info: &SessionInfo) -> RowFacts {
        RowFacts {
            cwd: info.cwd.to_lowercase(),
            modified_ms: info.modified_ms,
            models: info.models.iter().map(|m| m.to_lowercase()).collect(),
            named: info.display_name().is_some(),
            fork: info.parent_session_path.is_some(),
            agent: info.agent,
            labels: info
                .labels
                .iter()
                // A label on an entry the file lacks shows nowhere.
                .filter(|l| l.text != LabelText::Missing)
                .map(|l| l.label.to_lowercase())
                .collect(),
        }
    }
}

impl SearchDoc {
    pub fn from_info(info: &SessionInfo) -> SearchDoc {
        let mut fields = Vec::with_capacity(5);
        if let Some(n) = info.display_name() {
            fields.push(n.to_string());
        }
        if let Some(s) = info.summary() {
            fields.push(s.to_string());
        }
        let first = info.first_message_text();
        let cut = first
            .char_indices()
            .nth(500)
            .map_or(first.len(), |(i, _)| i);
        fields.push(first[..cut].to_string());
        fields.push(info.cwd.clone());
        fields.push(info.id.clone());
        let mut text = String::with_capacity(info.all_text.len() + 256);
        for f in [
            info.id.as_str(),
            info.display_name().unwrap_or(""),
            info.summary().unwrap_or(""),
            info.cwd.as_str(),
        ] {
            text.push_str(&normalized(f));
            text.push('\n');
        }
        let body_start = text.len();
        text.push_str(&normalized(&info.all_text));
        SearchDoc {
            fields,
            text,
            body_start,
            facts: RowFacts::of(info),
        }
    }

    /// The short fields' part of `text`.
    pub fn fields_text(&self) -> &str {
        &self.text[..self.body_start]
    }

    /// The bodies' part of `text` (empty for rows from the index).
    pub fn body_text(&self) -> &str {
        &self.text[self.body_start..]
    }
}
