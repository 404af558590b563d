//! The picker's query: the text typed, as parsed, and how far its search
//! has got (which query the scores are for, whether the answer is whole).

use arbor_search::Query;

use super::settings::ListSettings;

#[derive(Debug, Default)]
pub struct Search {
    /// The query being typed (the text and its cursor).
    pub query: crate::ui::input::LineInput,
    pub parsed: Query,
    /// The query the rows' scores are for (see `SessionList::scores`).
    pub(crate) scored_query: String,
    /// The number of the last search asked for; older answers are dropped.
    pub generation: u64,
    /// Why the last search result did not look at every session's message
    /// bodies (`None`: it did).
    pub incomplete: Option<String>,
    /// The last answer is the index's, while the files of this many
    /// sessions it lacks are read for the whole one.
    pub(crate) reading: Option<usize>,
    /// The reason last put on the status line (said once, not per key).
    pub(crate) incomplete_reported: Option<String>,
    /// The list holds only the first rows of the answer (those that fill
    /// the screen, known early); the rest is being scored.
    pub partial: bool,
    /// The list settings the first rows were last asked under: rows
    /// chosen for one scope or filter are not the first of another.
    pub(super) partial_for: Option<ListSettings>,
}
