//! The picker's selection, kept by session (path) rather than by position,
//! with the list's scroll, the sessions marked for a batch, and what an
//! answer still to come may do to the selection.

use std::collections::HashSet;
use std::path::PathBuf;

#[derive(Debug)]
pub struct Selection {
    pub selected: Option<PathBuf>,
    /// The user has moved the selection, typed or acted on a row: from then
    /// on the selection follows its session. Until then it is row 0 of
    /// whatever is listed, so rows arriving above it (a session changed
    /// while arbor was closed) never leave Enter on an older one.
    pub user_moved: bool,
    pub(crate) scroll: usize,
    /// List height of the last frame, for paging.
    pub page: usize,
    /// Sessions marked for a batch delete, by path: they stay marked
    /// whatever the query, the scope or a reload lists.
    pub marked: HashSet<PathBuf>,
    /// Select the best match when the next search result arrives.
    pub(crate) select_first_on_results: bool,
    /// The row an interim answer selected as its best (see
    /// `index::searcher::Stage::Interim`): the next answer selects its own
    /// best instead, while nothing moved the selection from there.
    pub(crate) first_of_interim: Option<PathBuf>,
    /// End was pressed on a partial list: the whole answer's last row is
    /// selected when it comes (unless the selection moved since).
    pub(crate) last_on_whole: bool,
}

impl Default for Selection {
    fn default() -> Selection {
        Selection {
            selected: None,
            user_moved: false,
            scroll: 0,
            page: 10,
            marked: HashSet::new(),
            select_first_on_results: false,
            first_of_interim: None,
            last_on_whole: false,
        }
    }
}
