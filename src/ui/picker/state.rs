//! The picker's state, made of its parts (settings, rows, query,
//! selection, preview, progress, dialog, messages, trash), and what works
//! across them: listing the rows in scope for the query, moving and
//! keeping the selection, marking sessions.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::app::searcher::TimedRows;
use arbor_search::Query;
use arbor_util::hash::FxBuild;

pub use super::dialogs::Modal;
pub use super::flash::{Flash, Status, StatusKind};
pub use super::list::SessionList;
use super::preview::PreviewHits;
pub use super::preview::PreviewPane;
pub use super::progress::Progress;
pub use super::row::Row;
pub use super::search::Search;
pub use super::selection::Selection;
use super::settings::ListSettings;
pub use super::settings::{Scope, Settings, Sort};
pub use super::trash::Trashed;

/// A modal prompt over the list.
#[derive(Debug, Clone, PartialEq)]
pub enum Dialog {
    None,
    /// `Delete session?`; `live` when the file changed in the last seconds.
    ConfirmDelete {
        path: PathBuf,
        live: bool,
    },
    /// Asked again: the session changed moments ago (an agent may be writing it).
    ConfirmLiveDelete {
        path: PathBuf,
        age_ms: i64,
    },
    /// The trash was asked to take the session; keys wait (and are
    /// dropped) until it answers, so none typed ahead can answer the next
    /// question.
    Trashing {
        path: PathBuf,
    },
    /// Trash failed: offer permanent deletion only after this second
    /// question, answered with `y` (never Enter), and not in the first
    /// moments after it appears (`shown_ms`, from the event clock).
    ConfirmPermanent {
        /// One session, or those of a batch the trash refused.
        paths: Vec<PathBuf>,
        reason: String,
        shown_ms: i64,
        /// The others of their batch, in the trash already.
        moved: usize,
    },
    /// Ctrl+D with sessions marked: one question for them all, once their
    /// sizes and change times are read (`measured` is `None` until then,
    /// and Enter waits for it).
    ConfirmBatch {
        paths: Vec<PathBuf>,
        measured: Option<Measured>,
    },
    /// Asked again: some of the batch changed seconds ago.
    ConfirmLiveBatch {
        paths: Vec<PathBuf>,
        live: Vec<(PathBuf, i64)>,
    },
    /// The trash works on a batch; keys wait, as for one session.
    TrashingBatch {
        count: usize,
    },
    Rename {
        path: PathBuf,
        input: crate::ui::input::LineInput,
    },
    /// The renamed session is a version 1/2 file: rewrite it as version 3
    /// (keeping a .bak copy), then rename it?
    ConfirmMigrateRename {
        path: PathBuf,
        name: String,
        version: u32,
    },
    Help,
    /// Ctrl+L: the labels of the sessions in scope, newest first (`None`
    /// while they load); Enter opens the tree at the selected one.
    Labels {
        items: Option<Vec<arbor_session::extras::LabelRow>>,
        selected: usize,
    },
}

/// A batch's files as read just before its question.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub bytes: u64,
    /// Those changed within [`LIVE_WINDOW_MS`] (an agent may be writing
    /// them), with how long ago in ms.
    pub live: Vec<(PathBuf, i64)>,
}

/// A listed row: which session, and its thread prefix (`├─ `, `│  └─ `…).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VisibleRow {
    pub idx: usize,
    pub prefix: String,
}

/// Sessions changed within this window may be in use by a live agent.
pub const LIVE_WINDOW_MS: i64 = arbor_session::bulk::LIVE_WINDOW_MS;

/// The permanent-delete question ignores answers for this long after it
/// appears: a key pressed then was meant for something else.
pub const PERMANENT_GUARD_MS: i64 = 750;

/// The picker's state, by concern.
#[derive(Debug)]
pub struct PickerState {
    pub settings: Settings,
    pub list: SessionList,
    pub search: Search,
    pub selection: Selection,
    pub preview: PreviewPane,
    pub progress: Progress,
    pub dialog: Modal,
    pub flash: Flash,
    pub trash: Trashed,
    /// The remotes whose mirrors are listed, and their syncs.
    pub remotes: super::remotes::Remotes,
    /// The event clock's last time.
    pub now_ms: i64,
}

/// Lists of matches kept (see [`PickerState::remember_hits`]).
pub const HITS_KEPT: usize = 32;

impl PickerState {
    pub fn new(project_cwd: String, now_ms: i64) -> PickerState {
        PickerState {
            settings: Settings::new(project_cwd),
            list: SessionList::default(),
            search: Search::default(),
            selection: Selection::default(),
            preview: PreviewPane::default(),
            progress: Progress::default(),
            dialog: Modal::default(),
            flash: Flash::default(),
            trash: Trashed::default(),
            remotes: super::remotes::Remotes::default(),
            now_ms,
        }
    }

    /// The matching entries of the selected session for the query whose
    /// results are listed, when they have been read (for the file as the
    /// row last saw it).
    pub fn hits(&self) -> Option<&PreviewHits> {
        let r = self.selected_row()?;
        self.cached_hits(
            &r.info.path,
            &self.search.scored_query,
            r.info.file_mtime_ms,
        )
    }

    pub fn cached_hits(&self, path: &Path, query: &str, stamp: i64) -> Option<&PreviewHits> {
        self.preview
            .hits_cache
            .iter()
            .rev()
            .map(|h| &**h)
            .find(|h| h.path == path && h.query == query && h.stamp == stamp)
    }

    /// Keeps a list of matches (the last [`HITS_KEPT`] are kept).
    pub fn remember_hits(&mut self, hits: PreviewHits) {
        self.preview
            .hits_cache
            .retain(|h| !(h.path == hits.path && h.query == hits.query));
        self.preview.hits_cache.push(Arc::new(hits));
        if self.preview.hits_cache.len() > HITS_KEPT {
            self.preview.hits_cache.remove(0);
        }
    }

    /// The picked match starts at the first whenever the selected session
    /// or the query changes.
    pub fn follow_hits(&mut self) {
        let now = self
            .selection
            .selected
            .clone()
            .map(|p| (p, self.search.scored_query.clone()));
        if now != self.preview.hit_of {
            self.preview.hit_of = now;
            self.preview.hit_pos = 0;
        }
    }

    /// The current rows' search documents.
    pub fn docs(&mut self) -> Arc<arbor_search::Docs> {
        let rows = &self.list.rows;
        self.list
            .docs
            .get_or_insert_with(|| {
                Arc::new(arbor_search::Docs(
                    rows.iter()
                        .map(|r| (r.info.path.clone(), r.doc.clone()))
                        .collect(),
                ))
            })
            .clone()
    }

    pub fn selected_row(&self) -> Option<&Row> {
        let p = self.selection.selected.as_ref()?;
        self.row_index(p).map(|i| &self.list.rows[i])
    }

    /// Where `path`'s row is in `rows`.
    pub fn row_index(&self, path: &Path) -> Option<usize> {
        self.list.by_path.find(&self.list.rows, path.as_os_str())
    }

    pub fn selected_pos(&self) -> Option<usize> {
        // By the paths' bytes: comparing `Path`s walks their components,
        // and this looks through every visible row after each search
        // (tens of milliseconds at 100,000 rows).
        let p = self.selection.selected.as_ref()?.as_os_str();
        self.list
            .visible
            .iter()
            .position(|v| self.list.rows[v.idx].info.path.as_os_str() == p)
    }

    /// Adds or replaces rows (by path).
    pub fn upsert(&mut self, rows: Vec<Row>) {
        self.list.docs = None;
        self.list.unfiltered = None;
        self.list.scoped = None;
        // The rows come in a few big batches (the first screen, then the
        // rest): room for a batch at once, not doubling past it.
        self.list.rows.reserve(rows.len());
        self.list.by_path.reserve(rows.len(), &self.list.rows);
        for r in rows {
            match self.list.by_path.find_hashed(
                &self.list.rows,
                r.path_hash,
                r.info.path.as_os_str(),
            ) {
                Some(i) => self.list.rows[i] = r,
                None => {
                    self.list.rows.push(r);
                    self.list
                        .by_path
                        .insert(&self.list.rows, self.list.rows.len() - 1);
                    // Unscored until the next result.
                    if let Some(s) = &mut self.list.scores {
                        s.push(None);
                    }
                }
            }
        }
    }

    /// Takes a search result for the snapshot `docs`; when the rows have
    /// changed since it was taken, scores follow their sessions by path.
    pub fn set_scores(&mut self, docs: &Arc<arbor_search::Docs>, scores: Vec<Option<u32>>) {
        let current = self
            .list
            .docs
            .as_ref()
            .is_some_and(|d| Arc::ptr_eq(d, docs));
        if current && scores.len() == self.list.rows.len() {
            self.list.scores = Some(scores);
            return;
        }
        let by_path: HashMap<&std::ffi::OsStr, u32, FxBuild> = docs
            .0
            .iter()
            .zip(&scores)
            .filter_map(|((p, _), s)| Some((p.as_os_str(), (*s)?)))
            .collect();
        self.list.scores = Some(
            self.list
                .rows
                .iter()
                .map(|r| by_path.get(r.info.path.as_os_str()).copied())
                .collect(),
        );
    }

    /// Removes a session's row; the row, when there was one.
    pub fn remove(&mut self, path: &Path) -> Option<Row> {
        self.list.docs = None;
        self.list.unfiltered = None;
        self.list.scoped = None;
        // A session gone is no longer a batch's.
        self.selection.marked.remove(path);
        let i = self
            .list
            .by_path
            .remove(&self.list.rows, path.as_os_str())?;
        let last = self.list.rows.len() - 1;
        if i < last {
            // The last row moves into its place.
            self.list.by_path.moved(&self.list.rows, last, i);
        }
        let row = self.list.rows.swap_remove(i);
        if let Some(s) = &mut self.list.scores {
            if i < s.len() {
                s.swap_remove(i);
            }
        }
        Some(row)
    }

    /// Removes a session's row; when it was the selected one, the
    /// selection stays at its place in the list (the next row moves up
    /// into it), as in Atomic, rather than jumping to the top.
    pub fn remove_keeping_place(&mut self, path: &Path) {
        let was = (self.selection.selected.as_deref() == Some(path))
            .then(|| self.selected_pos())
            .flatten();
        self.remove(path);
        self.recompute();
        if let Some(pos) = was {
            self.select_pos(pos.min(self.list.visible.len().saturating_sub(1)));
        }
    }

    /// What the list depends on besides the rows and the query.
    fn list_settings(&self) -> ListSettings {
        self.settings.list_settings()
    }

    fn in_scope(&self, r: &Row) -> bool {
        (self.settings.show_internal || !r.info.internal)
            && (!self.settings.named_only || r.display_name().is_some())
            && match self.settings.scope {
                Scope::All => true,
                Scope::Current => r.cwd() == self.settings.project_cwd,
            }
    }

    pub fn query_active(&self) -> bool {
        !self.search.parsed.is_empty()
    }

    /// Recomputes the visible rows; keeps the selection by path.
    pub fn recompute(&mut self) {
        let partial_elsewhere = self.search.partial && !self.first_rows_fit();
        if (partial_elsewhere || self.answer_pending()) && self.list.docs.is_some() {
            // A setting changed while the query's answer is still to come,
            // or under a partial one (its rows are not the first under the
            // new setting, the rest are not scored yet): the list stays as
            // it is until the answer comes. Not when the rows changed since
            // (`docs` is dropped then): the list's positions would be stale.
            return;
        }
        self.list.visible = if self.query_active() {
            if self.search.parsed.error().is_some() {
                Vec::new()
            } else {
                self.ranked()
            }
        } else {
            let settings = self.list_settings();
            match &self.list.unfiltered {
                Some((s, list)) if *s == settings => list.clone(),
                _ => {
                    let cands = self.newest_first(self.scoped_rows());
                    let list = match self.settings.sort {
                        Sort::Threaded => self.thread(cands),
                        Sort::Recent | Sort::Relevance => flat(cands),
                    };
                    self.list.unfiltered = Some((settings, list.clone()));
                    list
                }
            }
        };
        if !self.selection.user_moved || self.selected_pos().is_none() {
            self.selection.selected = self
                .list
                .visible
                .first()
                .map(|v| self.list.rows[v.idx].info.path.to_path_buf());
        }
    }

    /// The rows the scope and the filters of the list keep, in row order.
    fn scoped_rows(&self) -> Vec<usize> {
        (0..self.list.rows.len())
            .filter(|&i| self.in_scope(&self.list.rows[i]))
            .collect()
    }

    /// The rows the query matched, best first, then newest, then by path.
    /// Each is sorted as one number (its score, time and index packed in
    /// 128 bits: comparing tuples that reach into the rows was most of a
    /// result's ~8 ms at 100,000); only rows of equal score and time are
    /// then compared by path.
    fn ranked(&mut self) -> Vec<VisibleRow> {
        self.scoped_times();
        let (Some(scores), Some((_, scoped))) = (&self.list.scores, &self.list.scoped) else {
            return Vec::new();
        };
        let recent = self.settings.sort == Sort::Recent;
        // Ascending order of the key is the list's: the score and the time
        // inverted (highest first), the index last.
        let mut keys: Vec<u128> = scoped
            .iter()
            .filter_map(|&(ms, i)| {
                let s = (*scores.get(i as usize)?)?;
                let s = if recent { 0 } else { s };
                let newest_first = !((ms as u64) ^ (1 << 63));
                Some(u128::from(!s) << 96 | u128::from(newest_first) << 32 | u128::from(i))
            })
            .collect();
        sort_packed(&mut keys, &self.list.rows);
        keys.iter()
            .map(|&k| VisibleRow {
                idx: (k as u32) as usize,
                prefix: String::new(),
            })
            .collect()
    }

    /// The rows in scope (by position) with their times, in row order:
    /// what a search's first rows are looked for in (see `FirstRows`),
    /// and what each answer is ranked from.
    pub fn scoped_times(&mut self) -> TimedRows {
        let settings = self.list_settings();
        match &self.list.scoped {
            Some((s, scoped)) if *s == settings => scoped.clone(),
            _ => {
                let scoped: TimedRows = self
                    .scoped_rows()
                    .into_iter()
                    .map(|i| (self.list.rows[i].info.modified_ms, i as u32))
                    .collect();
                self.list.scoped = Some((settings, scoped.clone()));
                scoped
            }
        }
    }

    /// `rows` newest first, then by path: sorted as packed keys like
    /// [`PickerState::ranked`]'s (comparing through the rows was ~15 ms of
    /// 100,000).
    fn newest_first(&self, rows: Vec<usize>) -> Vec<usize> {
        let mut keys: Vec<u128> = rows
            .into_iter()
            .map(|i| {
                let ms = self.list.rows[i].info.modified_ms;
                u128::from(!((ms as u64) ^ (1 << 63))) << 32 | i as u128
            })
            .collect();
        sort_packed(&mut keys, &self.list.rows);
        keys.into_iter().map(|k| (k as u32) as usize).collect()
    }

    /// Nests forks under the session they were forked from (when listed).
    fn thread(&self, sorted: Vec<usize>) -> Vec<VisibleRow> {
        let rows = &self.list.rows;
        // Only the sessions some row names as its parent are put in the
        // table, found by the hashes made with the rows (this runs on every
        // batch of rows while 100,000 load); keyed by the paths' bytes:
        // hashing a `Path` walks its components.
        let wanted: HashSet<u64, FxBuild> =
            sorted.iter().filter_map(|&i| rows[i].parent_hash).collect();
        let listed: HashMap<&std::ffi::OsStr, usize, FxBuild> = match wanted.is_empty() {
            true => HashMap::default(),
            false => sorted
                .iter()
                .filter(|&&i| wanted.contains(&rows[i].canonical_hash))
                .map(|&i| (rows[i].canonical.as_os_str(), i))
                .collect(),
        };
        let mut children: HashMap<usize, Vec<usize>, FxBuild> = HashMap::default();
        let mut roots = Vec::new();
        for &i in &sorted {
            let parent = rows[i]
                .parent_canonical
                .as_deref()
                .and_then(|p| listed.get(p.as_os_str()).copied())
                .filter(|&p| p != i);
            match parent {
                Some(p) => children.entry(p).or_default().push(i),
                None => roots.push(i),
            }
        }
        let mut out = Vec::with_capacity(sorted.len());
        let mut seen = vec![false; rows.len()];
        // (row, line prefix, continuation prefix); `sorted` is newest first,
        // and so are the children lists built from it.
        let mut stack: Vec<(usize, String, String)> = roots
            .iter()
            .rev()
            .map(|&r| (r, String::new(), String::new()))
            .collect();
        while let Some((i, line, cont)) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue; // a parentSession cycle
            }
            out.push(VisibleRow {
                idx: i,
                prefix: line,
            });
            if let Some(kids) = children.get(&i) {
                let n = kids.len();
                for (k, &c) in kids.iter().enumerate().rev() {
                    let last = k + 1 == n;
                    stack.push((
                        c,
                        format!("{cont}{}", if last { "└─ " } else { "├─ " }),
                        format!("{cont}{}", if last { "   " } else { "│  " }),
                    ));
                }
            }
        }
        // Rows only reachable through a cycle still get listed.
        for &i in &sorted {
            if !seen[i] {
                out.push(VisibleRow {
                    idx: i,
                    prefix: String::new(),
                });
            }
        }
        out
    }

    pub fn select_pos(&mut self, pos: usize) {
        if let Some(v) = self.list.visible.get(pos) {
            self.selection.selected = Some(self.list.rows[v.idx].info.path.to_path_buf());
        }
    }

    /// The selection is the user's from now on (moved, a query typed, a
    /// row asked about): it follows its session, and no answer to come
    /// moves it.
    pub fn hold_selection(&mut self) {
        self.selection.user_moved = true;
        self.selection.first_of_interim = None;
    }

    /// The user moved the selection: from now on it follows its session.
    pub fn user_move_by(&mut self, delta: isize) {
        self.hold_selection();
        self.selection.last_on_whole = false;
        self.move_by(delta);
    }

    pub fn user_select_pos(&mut self, pos: usize) {
        self.hold_selection();
        self.selection.last_on_whole = false;
        self.select_pos(pos);
    }

    /// Whether the query typed is still being answered (the scores are
    /// another query's).
    pub fn answer_pending(&self) -> bool {
        self.query_active()
            && self.search.parsed.error().is_none()
            && self.search.scored_query != self.search.parsed.raw
    }

    /// Notes that the first rows are asked for under the list's settings
    /// as they are now.
    pub fn first_rows_asked(&mut self) {
        self.search.partial_for = Some(self.list_settings());
    }

    /// Whether first rows asked for are still the first under the list's
    /// settings (none changed since they were asked for).
    pub fn first_rows_fit(&self) -> bool {
        self.search.partial_for.as_ref() == Some(&self.list_settings())
    }

    pub fn move_by(&mut self, delta: isize) {
        if self.list.visible.is_empty() {
            return;
        }
        let cur = self.selected_pos().unwrap_or(0) as isize;
        let max = self.list.visible.len() as isize - 1;
        self.select_pos((cur + delta).clamp(0, max) as usize);
    }

    /// Marks the selected session, or unmarks it, then selects the next
    /// (marking a run of sessions is one key per session).
    pub fn toggle_mark(&mut self) {
        let Some(path) = self.selection.selected.clone() else {
            return;
        };
        if !self.selection.marked.remove(&path) {
            self.selection.marked.insert(path);
        }
        self.user_move_by(1);
    }

    /// Marks every session listed (all a query matches, through the
    /// filters and scope).
    pub fn mark_listed(&mut self) {
        let rows = &self.list.rows;
        self.selection.marked.extend(
            self.list
                .visible
                .iter()
                .map(|v| rows[v.idx].info.path.to_path_buf()),
        );
    }

    /// How many marked sessions are listed now.
    pub fn marked_listed(&self) -> usize {
        if self.selection.marked.is_empty() {
            return 0;
        }
        self.list
            .visible
            .iter()
            .filter(|v| {
                self.selection
                    .marked
                    .contains(self.list.rows[v.idx].info.path.as_path())
            })
            .count()
    }

    /// The marked sessions, in list order first, then the others (not
    /// listed now) by path: the order a batch is asked about and trashed.
    pub fn marked_paths(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .list
            .visible
            .iter()
            .map(|v| self.list.rows[v.idx].info.path.as_path())
            .filter(|p| self.selection.marked.contains(*p))
            .map(Path::to_path_buf)
            .collect();
        let listed: HashSet<&PathBuf> = out.iter().collect();
        let mut rest: Vec<PathBuf> = self
            .selection
            .marked
            .iter()
            .filter(|p| !listed.contains(p))
            .cloned()
            .collect();
        rest.sort();
        out.extend(rest);
        out
    }

    /// Keeps the selected row inside the list window of `height` rows.
    pub fn clamp_scroll(&mut self, height: usize) {
        let pos = self.selected_pos().unwrap_or(0);
        self.selection.scroll = crate::ui::widgets::scroll_for(
            pos,
            self.selection.scroll,
            height,
            self.list.visible.len(),
        );
    }

    /// Whether any listed row has a summary or a last reply (the second
    /// column is shown).
    pub fn any_summary(&self) -> bool {
        self.list.visible.iter().any(|v| {
            let r = &self.list.rows[v.idx];
            r.summary().is_some() || r.info.last_reply.is_some()
        })
    }

    pub fn set_status(&mut self, kind: StatusKind, text: impl Into<String>) {
        let text = text.into();
        self.flash.timer.start(&text, self.now_ms);
        self.flash.status = Some(Status { text, kind });
    }

    /// A status that stays until another replaces it (a remote that
    /// could not be reached: its rows are old until it is).
    pub fn set_lasting_status(&mut self, kind: StatusKind, text: impl Into<String>) {
        let text = text.into();
        self.flash.timer.hold(&text);
        self.flash.status = Some(Status { text, kind });
    }

    /// A status for work under way (`Restoring from trash…`): it stays
    /// until the result replaces it.
    pub fn set_progress(&mut self, text: impl Into<String>) {
        let text = text.into();
        self.flash.timer.hold(&text);
        self.flash.status = Some(Status {
            text,
            kind: StatusKind::Info,
        });
    }

    /// `arbor QUERY…`: the query as if typed before any row arrived; the
    /// rows' arrival searches it.
    pub fn start_with_query(&mut self, text: &str) {
        self.search.query.set_text(text);
        self.search.parsed = Query::parse_at(self.search.query.text(), self.now_ms);
        self.selection.select_first_on_results = true;
    }

    /// The clock moved: the status message goes once it has had its time
    /// (then the answer is true).
    pub fn tick(&mut self, now: i64) -> bool {
        self.now_ms = now;
        let shown = self.flash.status.as_ref().map(|s| s.text.as_str());
        let expired = self.flash.timer.expired(shown, now);
        if expired {
            self.flash.status = None;
        }
        expired
    }
}

/// Sorts keys that hold a row's index in their low 32 bits and its order
/// above them; rows of equal order are then sorted by path.
fn sort_packed(keys: &mut [u128], rows: &[Row]) {
    keys.sort_unstable();
    let index = |k: &u128| (*k as u32) as usize;
    let mut start = 0;
    while start < keys.len() {
        let head = keys[start] >> 32;
        let end = keys[start..]
            .iter()
            .position(|k| k >> 32 != head)
            .map_or(keys.len(), |n| start + n);
        if end - start > 1 {
            keys[start..end]
                .sort_by(|a, b| rows[index(a)].info.path.cmp(&rows[index(b)].info.path));
        }
        start = end;
    }
}

fn flat(v: Vec<usize>) -> Vec<VisibleRow> {
    v.into_iter()
        .map(|idx| VisibleRow {
            idx,
            prefix: String::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_session::info::SessionInfo;

    proptest::proptest! {
        /// The packed sort ranks as the rows' own order does: best score
        /// first (every score alike when sorted by time), then newest, then
        /// by path; rows out of scope or unmatched left out.
        #[test]
        fn results_rank_by_score_then_time_then_path(
            rows in proptest::collection::vec(
                (proptest::option::of(0u32..4), -2i64..3, 0u8..6, proptest::bool::ANY),
                0..40,
            ),
            recent in proptest::bool::ANY,
        ) {
            let mut p = PickerState::new("/w".into(), 0);
            p.settings.scope = Scope::All;
            p.settings.sort = if recent { Sort::Recent } else { Sort::Relevance };
            let made: Vec<Row> = rows
                .iter()
                .enumerate()
                .map(|(i, &(_, ms, name, internal))| {
                    Row::new(SessionInfo {
                        // Names collide; the index keeps the paths apart.
                        path: PathBuf::from(format!("/s/{name}-{i}.jsonl")).into(),
                        modified_ms: ms * 1000,
                        internal,
                        ..Default::default()
                    })
                })
                .collect();
            p.upsert(made);
            p.search.parsed = Query::parse("x");
            let by_path: HashMap<PathBuf, Option<u32>> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| (PathBuf::from(format!("/s/{}-{i}.jsonl", r.2)), r.0))
                .collect();
            let scores: Vec<Option<u32>> =
                p.list.rows.iter().map(|r| by_path[r.info.path.as_path()]).collect();
            p.list.scores = Some(scores.clone());
            p.recompute();
            let got: Vec<usize> = p.list.visible.iter().map(|v| v.idx).collect();
            let mut want: Vec<usize> = (0..p.list.rows.len())
                .filter(|&i| !p.list.rows[i].info.internal && scores[i].is_some())
                .collect();
            let key = |i: usize| (if recent { 0 } else { scores[i].unwrap_or(0) }, p.list.rows[i].info.modified_ms);
            want.sort_by(|&a, &b| {
                key(b).cmp(&key(a)).then_with(|| p.list.rows[a].info.path.cmp(&p.list.rows[b].info.path))
            });
            proptest::prop_assert_eq!(got, want);
        }

        /// Rows added, replaced and removed in any order are each found by
        /// their path, and a path removed is not.
        #[test]
        fn rows_are_found_by_path_through_adds_and_removals(
            ops in proptest::collection::vec((proptest::bool::ANY, 0usize..30), 0..80),
        ) {
            let mut p = PickerState::new("/w".into(), 0);
            let path = |n: usize| PathBuf::from(format!("/s/{n}.jsonl"));
            let mut want: HashSet<usize> = HashSet::new();
            for (add, n) in ops {
                if add {
                    p.upsert(vec![Row::new(SessionInfo {
                        path: path(n).into(),
                        ..Default::default()
                    })]);
                    want.insert(n);
                } else {
                    proptest::prop_assert_eq!(p.remove(&path(n)).is_some(), want.remove(&n));
                }
                proptest::prop_assert_eq!(p.list.rows.len(), want.len());
                for n in 0..30 {
                    let at = p.row_index(&path(n));
                    proptest::prop_assert_eq!(at.is_some(), want.contains(&n));
                    if let Some(i) = at {
                        proptest::prop_assert_eq!(p.list.rows[i].info.path.to_path_buf(), path(n));
                    }
                }
            }
        }

        /// The list without a query, threaded, is what a plain reading of
        /// the rows gives: newest first (then by path), each fork under the
        /// parent it names when that parent is listed (newest fork first),
        /// cycles and self-parents broken, every row once.
        #[test]
        fn threaded_list_nests_forks_under_listed_parents(
            rows in proptest::collection::vec(
                (-2i64..3, proptest::option::of(0usize..50)),
                0..40,
            ),
        ) {
            let path = |i: usize| format!("/s/{}.jsonl", i % 45);
            let mut p = PickerState::new("/w".into(), 0);
            p.settings.scope = Scope::All;
            p.settings.sort = Sort::Threaded;
            // Names repeat past 45 rows: a later row replaces the earlier.
            let made: Vec<Row> = rows
                .iter()
                .enumerate()
                .map(|(i, &(ms, parent))| {
                    Row::new(SessionInfo {
                        path: PathBuf::from(path(i)).into(),
                        modified_ms: ms * 1000,
                        parent_session_path: parent.map(path),
                        ..Default::default()
                    })
                })
                .collect();
            p.upsert(made);
            p.recompute();
            let got: Vec<(String, String)> = p
                .list.visible
                .iter()
                .map(|v| (p.list.rows[v.idx].info.path.display().to_string(), v.prefix.clone()))
                .collect();

            let n = p.list.rows.len();
            let mut order: Vec<usize> = (0..n).collect();
            order.sort_by(|&a, &b| {
                p.list.rows[b].info.modified_ms.cmp(&p.list.rows[a].info.modified_ms)
                    .then_with(|| p.list.rows[a].info.path.cmp(&p.list.rows[b].info.path))
            });
            let parent_of = |i: usize| {
                let want = p.list.rows[i].info.parent_session_path.as_deref()?;
                (0..n).find(|&j| j != i && p.list.rows[j].info.path.as_os_str() == want)
            };
            let mut want = Vec::new();
            let mut seen = vec![false; n];
            // Depth first from each root, newest first, by recursion.
            struct Walk<'a> {
                order: &'a [usize],
                parent_of: &'a dyn Fn(usize) -> Option<usize>,
                rows: &'a [Row],
            }
            impl Walk<'_> {
                fn go(&self, i: usize, (line, cont): (String, &str), seen: &mut [bool], out: &mut Vec<(String, String)>) {
                    if std::mem::replace(&mut seen[i], true) {
                        return;
                    }
                    out.push((self.rows[i].info.path.display().to_string(), line));
                    let kids: Vec<usize> =
                        self.order.iter().copied().filter(|&c| (self.parent_of)(c) == Some(i)).collect();
                    for (k, &c) in kids.iter().enumerate() {
                        let (l, c2) = if k + 1 == kids.len() { ("└─ ", "   ") } else { ("├─ ", "│  ") };
                        self.go(c, (format!("{cont}{l}"), &format!("{cont}{c2}")), seen, out);
                    }
                }
            }
            let w = Walk { order: &order, parent_of: &parent_of, rows: &p.list.rows };
            for &r in order.iter().filter(|&&r| parent_of(r).is_none()) {
                w.go(r, (String::new(), ""), &mut seen, &mut want);
            }
            for &r in &order {
                if !seen[r] {
                    want.push((p.list.rows[r].info.path.display().to_string(), String::new()));
                }
            }
            proptest::prop_assert_eq!(got, want);
        }
    }
}
