//! The picker's rows and what is listed of them: every session read, in
//! arrival order and found by path, with the query's scores, the list in
//! its order (scope, filters, sort, threads) and the caches behind it.

use std::sync::Arc;

use super::row::{path_hash, Row};
use super::settings::ListSettings;
use super::state::VisibleRow;
use crate::app::searcher::TimedRows;

#[derive(Debug, Default)]
pub struct SessionList {
    pub rows: Vec<Row>,
    /// Row positions by path.
    pub(super) by_path: RowIndex,
    /// Scores for `Search::scored_query` by row (None until the first
    /// result arrives): `rows[i]` has `scores[i]`, `None` when it does not
    /// match.
    pub(crate) scores: Option<Vec<Option<u32>>>,
    /// The rows listed, in the list's order.
    pub visible: Vec<VisibleRow>,
    /// The rows' search documents as sent to the search worker, kept until
    /// the rows change: the worker's memo of term answers is per snapshot.
    pub(super) docs: Option<Arc<arbor_search::Docs>>,
    /// The list without a query, as last computed, and the settings it was
    /// computed for: clearing a query shows it again without sorting and
    /// threading every row (tens of milliseconds at 100,000). Dropped
    /// whenever the rows change.
    pub(super) unfiltered: Option<(ListSettings, Vec<VisibleRow>)>,
    /// The rows in scope (their time, then their index), for the settings
    /// they were found for: each search result ranks them without looking
    /// at every row again (a cache miss per row at 100,000). Dropped
    /// whenever the rows change.
    pub(super) scoped: Option<(ListSettings, TimedRows)>,
}

/// Where each path's row is in the rows, found by the path's hash made
/// with the row ([`Row::path_hash`]): taking in 100,000 rows hashed their
/// paths on the UI thread (~40 ms); placing a row now reads only its
/// hash, and a path is compared only with the rows of its hash.
#[derive(Default, Debug)]
pub(super) struct RowIndex(hashbrown::HashTable<u32>);

impl RowIndex {
    pub(super) fn find(&self, rows: &[Row], path: &std::ffi::OsStr) -> Option<usize> {
        self.find_hashed(rows, path_hash(path), path)
    }

    /// [`RowIndex::find`] of a path whose hash is known (a row's).
    pub(super) fn find_hashed(
        &self,
        rows: &[Row],
        hash: u64,
        path: &std::ffi::OsStr,
    ) -> Option<usize> {
        self.0
            .find(hash, |&i| rows[i as usize].info.path.as_os_str() == path)
            .map(|&i| i as usize)
    }

    pub(super) fn reserve(&mut self, more: usize, rows: &[Row]) {
        self.0.reserve(more, |&i| rows[i as usize].path_hash);
    }

    /// Adds row `i`, whose path is not in yet.
    pub(super) fn insert(&mut self, rows: &[Row], i: usize) {
        self.0
            .insert_unique(rows[i].path_hash, i as u32, |&j| rows[j as usize].path_hash);
    }

    /// Takes out `path`; where its row was.
    pub(super) fn remove(&mut self, rows: &[Row], path: &std::ffi::OsStr) -> Option<usize> {
        let at = self
            .0
            .find_entry(path_hash(path), |&i| {
                rows[i as usize].info.path.as_os_str() == path
            })
            .ok()?;
        Some(at.remove().0 as usize)
    }

    /// Row `from` is moving to `to`.
    pub(super) fn moved(&mut self, rows: &[Row], from: usize, to: usize) {
        if let Some(at) = self
            .0
            .find_mut(rows[from].path_hash, |&i| i as usize == from)
        {
            *at = to as u32;
        }
    }
}
