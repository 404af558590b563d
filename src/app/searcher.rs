//! One picker search, however it is run: the picker's search worker,
//! `perform(Effect::Search)` (which every picker test drives) and the
//! picker benchmark all call [`Searcher::search`]. It owns the index the
//! bodies are asked of (when one is used) and the scorer's memory of the
//! terms already scored.

use std::sync::Arc;

use arbor_index::Index;
use arbor_search::{BodyHits, Docs, Query, Scorer};

/// The answer to one query over one snapshot of the rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// Each document's relevance (`None`: no match), in the snapshot's order.
    pub scores: Vec<Option<u32>>,
    /// Why some sessions' bodies were not searched; `None` when every one
    /// was (through the index, its own text in memory, or its file).
    pub incomplete: Option<String>,
    /// How much of the answer it is.
    pub stage: Stage,
}

/// How much of the answer to a query an [`Answer`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Only the rows that fill the screen are scored, and they are final
    /// (see [`FirstRows`]); the whole answer follows.
    FirstRows,
    /// Every row scored with what the index holds, while the files of the
    /// sessions it lacks (`reading` of them) are read (a first run's
    /// build under way): its rows may change when the whole answer follows.
    Interim { reading: usize },
    /// The whole answer.
    Whole,
}

/// `answer` with the scores the rows are listed by ([`Query::rank_score`]:
/// Atomic's relevance order of the sessions matched), as `arbor list
/// --query` ranks them. The rows the first answers place early are those
/// arbor's own scores place; the whole answer orders them.
fn listed(query: &Query, docs: &Docs, mut answer: Answer) -> Answer {
    use rayon::prelude::*;
    answer
        .scores
        .par_iter_mut()
        .zip(&docs.0)
        .for_each(|(score, (_, doc))| {
            if let Some(s) = score {
                *s = query.rank_score(doc, *s);
            }
        });
    answer
}

/// Rows (their positions) with their times (ms).
pub type TimedRows = Arc<[(i64, u32)]>;

/// What [`Searcher::placed_answer`] gives.
enum Placed {
    /// A newer query was typed.
    Stale,
    /// No row is placed before the whole answer.
    Nothing,
    Rows(Answer),
}

/// What of an answer the picker shows first: the rows that fill its
/// screen, when the bodies' best ranks place them (see
/// [`Searcher::placed_answer`]) while the rest is looked up. (Finding
/// them from the newest sessions alone no longer can: Atomic's relevance
/// order scores where each term is in every session's text.)
#[derive(Debug, Clone, PartialEq)]
pub struct FirstRows {
    /// How many rows the screen shows.
    pub want: usize,
    /// The rows in scope and their times (ms), in the snapshot's order.
    pub scoped: TimedRows,
}

/// Up to this many sessions the index lacks are read from their files
/// before the screen shows any answer (usually sessions written a moment
/// ago, read in milliseconds); more, and the index's own answer is shown
/// first, said to be incomplete.
const READ_WITHOUT_INTERIM: usize = 16;

/// An index to ask for message bodies, and the scorer for the rest.
#[derive(Default)]
pub struct Searcher {
    index: Option<Index>,
    scorer: Scorer,
    /// Which sessions of a snapshot the index lacked, at a version of
    /// the index: asked once per snapshot, not once per key (a lookup per
    /// session cost ~10 ms a key at 100,000 sessions).
    unindexed: Unindexed,
    /// The snapshot of the last search, while the rows above are not
    /// found for it: the worker makes it when idle, ahead of the first key
    /// that asks the index.
    seen: Option<Arc<Docs>>,
}

impl Searcher {
    /// `None`: every row carries its own text (the loader read the files).
    pub fn new(index: Option<Index>) -> Searcher {
        Searcher {
            index,
            scorer: Scorer::new(),
            unindexed: None,
            seen: None,
        }
    }

    /// Loads what searches need, so the first keystroke does not wait for
    /// it (the worker asks once the rows are in). With the rows' snapshot,
    /// the next idle moments also map the index's paths to them and share
    /// their allocations (see [`Searcher::idle`]) before any key asks.
    pub fn warm(&mut self, docs: Option<&Arc<Docs>>) {
        if let Some(Err(e)) = self.index.as_ref().map(|i| i.warm_search()) {
            arbor_util::log::line(format!("index: loading for search failed: {e}"));
        }
        if let Some(docs) = docs {
            self.seen = Some(docs.clone());
        }
    }

    /// Does a little of the work searches would otherwise wait for (see
    /// [`Index::check_text`]), about a millisecond of it; the caller asks
    /// again while it returns true and nothing else is waiting.
    pub fn idle(&mut self) -> bool {
        /// About a millisecond of reading and summing here.
        const BUDGET: usize = 4 << 20;
        let Some(index) = self.index.as_ref() else {
            return false;
        };
        // Once per snapshot: the first key that asks the index for bodies
        // (a word's third character) would otherwise look every session up.
        if let Some(docs) = self.seen.take() {
            // Where the sessions an answer names are among the rows, with
            // the rows' paths shared by the index (before the count below,
            // whose set of paths is then made of the shared ones).
            learn_paths(&mut self.scorer, index, &docs);
            if let Err(e) = unindexed_memo(index, &docs, &mut self.unindexed) {
                arbor_util::log::line(format!("index: finding unindexed sessions failed: {e}"));
            }
            return true;
        }
        index.check_text(BUDGET)
    }

    /// Scores `docs` against `query`: the short fields are scored while the
    /// index answers the bodies. `index_problem`: the loader could not write
    /// the index (so its answer may be old). `None` when `cancel` says a
    /// newer query made this one stale.
    pub fn search(
        &mut self,
        query: &Query,
        docs: &Arc<Docs>,
        index_problem: Option<&str>,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Answer> {
        self.search_first(query, docs, index_problem, cancel, None, &mut |_| {})
    }

    /// [`Searcher::search`], giving `early` the rows that fill the screen
    /// first when it can (a [`Stage::FirstRows`] answer) and `first` asks
    /// for them: from the bodies' best ranks; and, while the files of many sessions the
    /// index lacks are read, the index's own answer ([`Stage::Interim`]).
    pub fn search_first(
        &mut self,
        query: &Query,
        docs: &Arc<Docs>,
        index_problem: Option<&str>,
        cancel: &(dyn Fn() -> bool + Sync),
        first: Option<&FirstRows>,
        early: &mut (dyn FnMut(Answer) + Send),
    ) -> Option<Answer> {
        // A snapshot not seen yet: the idle moments after this search map
        // the index's paths to its rows (before `lacks_some` below finds
        // what the index lacks of it, which would hide that it is new).
        if !self
            .unindexed
            .as_ref()
            .is_some_and(|(d, _, _)| Arc::ptr_eq(d, docs))
        {
            self.seen = Some(docs.clone());
        }
        // The rows the bodies' best ranks place, before the rest (tool
        // output, thinking) is looked up: only when the index holds every
        // session (those it lacks could outrank them).
        if first.is_some() {
            let placed = if self.lacks_some(docs) {
                Placed::Nothing
            } else {
                self.placed_answer(query, docs, cancel)
            };
            match placed {
                Placed::Stale => return None,
                Placed::Rows(answer) => early(answer),
                Placed::Nothing => {}
            }
        }
        let Searcher {
            index,
            scorer,
            unindexed,
            ..
        } = self;
        // The fuzzy pass beside the index's half, on the pool the caller
        // runs on (the picker keeps its searches off the pool a first run's
        // index build holds).
        let mut prepared = false;
        let mut bodies = rayon::in_place_scope(|s| {
            s.spawn(|_| prepared = scorer.prepare(query, docs, cancel));
            search_bodies_memo(
                index.as_ref(),
                query,
                docs,
                index_problem,
                cancel,
                unindexed,
            )
        })?;
        if !prepared {
            return None;
        }
        if let Some(why) = &bodies.incomplete {
            arbor_util::log::line(format!("search: incomplete: {why}"));
        }
        if !bodies.unindexed.is_empty() {
            // Many files to read (a first run's build under way): the
            // index's answer first, said to be incomplete, so the screen
            // follows the keys, then the whole one.
            if bodies.unindexed.len() > READ_WITHOUT_INTERIM {
                early(listed(
                    query,
                    docs,
                    Answer {
                        scores: scorer.score(query, docs, bodies.hits.as_ref()),
                        incomplete: bodies.incomplete.clone(),
                        stage: Stage::Interim {
                            reading: bodies.unindexed.len(),
                        },
                    },
                ));
            }
            bodies.read_unindexed(query, docs, cancel)?;
        }
        Some(listed(
            query,
            docs,
            Answer {
                scores: scorer.score(query, docs, bodies.hits.as_ref()),
                incomplete: bodies.incomplete,
                stage: Stage::Whole,
            },
        ))
    }

    /// Whether the index lacks sessions of `docs` (as far as it knows:
    /// it finds them out once per snapshot and version of the index).
    fn lacks_some(&mut self, docs: &Arc<Docs>) -> bool {
        let Some(index) = self.index.as_ref() else {
            return false;
        };
        unindexed_memo(index, docs, &mut self.unindexed).map_or(true, |rows| !rows.is_empty())
    }

    /// The rows the bodies' best ranks place (see [`Scorer::score_placed`]):
    /// the index is asked for the conversation text and tool calls alone,
    /// beside the fields pass, and then for the rest (tool output and
    /// thinking: a word's first lookup there scans ~250 MB of terms at
    /// 100,000 sessions), starting from that answer.
    fn placed_answer(
        &mut self,
        query: &Query,
        docs: &Arc<Docs>,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Placed {
        let Searcher { index, scorer, .. } = self;
        let Some(index) = index.as_ref() else {
            return Placed::Nothing;
        };
        let best = query.parts.ranked_above(2);
        if query.error().is_some()
            || best == query.parts
            || best.is_empty()
            || !query.terms.iter().any(|t| t.searches_body())
            || index.remembers(query)
        {
            return Placed::Nothing;
        }
        let mut prepared = false;
        let hits = rayon::in_place_scope(|s| {
            s.spawn(|_| prepared = scorer.prepare(query, docs, cancel));
            index.search_cancellable(&query.with_parts(best), cancel)
        });
        match hits {
            _ if !prepared => Placed::Stale,
            Err(arbor_index::Error::Cancelled) => Placed::Stale,
            Ok(Some(hits)) => match scorer.score_placed(query, docs, &hits) {
                Some(scores) => Placed::Rows(Answer {
                    scores,
                    incomplete: None,
                    stage: Stage::FirstRows,
                }),
                None => Placed::Nothing,
            },
            // The whole search says what failed.
            Ok(None) | Err(_) => Placed::Nothing,
        }
    }
}

/// Maps the index's paths to the rows of `docs` for `scorer` (see
/// [`Scorer::learn_paths`]).
fn learn_paths(scorer: &mut Scorer, index: &Index, docs: &Arc<Docs>) {
    let mut failed = None;
    scorer.learn_paths(docs, |f| match index.share_paths(f) {
        Ok(table) => Some(table),
        Err(e) => {
            failed = Some(e);
            None
        }
    });
    if let Some(e) = failed {
        arbor_util::log::line(format!("index: reading the sessions' paths failed: {e}"));
    }
}

/// The message-body half of one picker search.
#[derive(Debug, Default)]
pub struct BodySearch {
    /// The index's answer (see `Scorer::score`), and what the files of
    /// the sessions it lacks add to it.
    pub hits: Option<BodyHits>,
    /// Why some sessions' bodies were not searched; `None` when every one
    /// was (through the index, its own text in memory, or its file).
    pub incomplete: Option<String>,
    /// The rows (places in the snapshot) without their own text that the
    /// index does not hold: not searched until [`BodySearch::read_unindexed`].
    unindexed: Arc<[u32]>,
}

impl BodySearch {
    /// Searches the files of the sessions the index lacks (a first run's
    /// build not done yet, a file written since), as the index would
    /// have: the answer is then complete. `None` once `cancel` says a
    /// newer query made it stale.
    fn read_unindexed(
        &mut self,
        query: &Query,
        docs: &Docs,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<()> {
        if self.unindexed.is_empty() {
            return Some(());
        }
        let rows: Vec<&(
            arbor_util::shared_path::SharedPath,
            Arc<arbor_search::SearchDoc>,
        )> = self
            .unindexed
            .iter()
            .filter_map(|&d| docs.0.get(d as usize))
            .collect();
        let files: Vec<arbor_store::SessionFile> = rows
            .iter()
            .map(|(path, doc)| arbor_store::SessionFile {
                path: path.to_path_buf(),
                agent: doc.facts.agent,
            })
            .collect();
        let tiers = super::bodies::tiers_from_files(&files, query, cancel)?;
        let hits = self.hits.get_or_insert_with(BodyHits::default);
        let mut unread = 0usize;
        for ((path, _), t) in rows.into_iter().zip(tiers) {
            match t {
                Some(t) if t != arbor_search::Tiers::default() => {
                    hits.insert_shared(path.as_os_arc().clone(), t);
                }
                Some(_) => {}
                None => unread += 1,
            }
        }
        self.unindexed = Arc::from([]);
        // A file gone or unreadable since it was listed.
        self.incomplete = match unread {
            0 => None,
            1 => Some("1 session could not be read".to_string()),
            n => Some(format!("{n} sessions could not be read")),
        };
        Some(())
    }
}

/// The bodies of `docs`. Rows without their own text rely on the index,
/// and on their files where the index lacks them; whenever it cannot
/// answer for all of them (it failed, or it could not be written:
/// `index_problem`) the answer says so rather than pass for "no body
/// hits". `None` when `cancel` says a newer query made this one stale.
pub fn search_bodies(
    index: Option<&Index>,
    query: &Query,
    docs: &Docs,
    index_problem: Option<&str>,
    cancel: &(dyn Fn() -> bool + Sync),
) -> Option<BodySearch> {
    let mut unindexed = |index: &Index| index.unindexed(without_text(docs)).map(Arc::from);
    let mut bodies = search_bodies_with(index, query, docs, index_problem, cancel, &mut unindexed)?;
    bodies.read_unindexed(query, docs, cancel)?;
    Some(bodies)
}

/// [`search_bodies`] but for the sessions the index lacks, remembering
/// which they are per snapshot and version of the index in `memo`.
fn search_bodies_memo(
    index: Option<&Index>,
    query: &Query,
    docs: &Arc<Docs>,
    index_problem: Option<&str>,
    cancel: &(dyn Fn() -> bool + Sync),
    memo: &mut Unindexed,
) -> Option<BodySearch> {
    let mut unindexed = |index: &Index| unindexed_memo(index, docs, memo);
    search_bodies_with(index, query, docs, index_problem, cancel, &mut unindexed)
}

/// The rows of a snapshot the index lacks, at a version of the index.
type Unindexed = Option<(Arc<Docs>, i64, Arc<[u32]>)>;

/// Which rows the index lacks (see [`unindexed_memo`]).
type FindUnindexed<'a> = dyn FnMut(&Index) -> Result<Arc<[u32]>, arbor_index::Error> + 'a;

/// The rows of `docs` that rely on the index for their text (the loader
/// read none of their own), with their places.
fn without_text(docs: &Docs) -> impl Iterator<Item = (u32, &std::path::Path)> {
    docs.0
        .iter()
        .enumerate()
        .filter(|(_, (_, d))| d.body_text().is_empty())
        .map(|(i, (p, _))| (i as u32, p.as_path()))
}

/// Which rows of `docs` without their own text the index lacks,
/// remembered in `memo` per snapshot and version of the index.
fn unindexed_memo(
    index: &Index,
    docs: &Arc<Docs>,
    memo: &mut Unindexed,
) -> Result<Arc<[u32]>, arbor_index::Error> {
    let version = index.data_version()?;
    if let Some((d, v, rows)) = memo.as_ref() {
        if Arc::ptr_eq(d, docs) && *v == version {
            return Ok(rows.clone());
        }
    }
    let rows: Arc<[u32]> = Arc::from(index.unindexed(without_text(docs))?);
    *memo = Some((docs.clone(), version, rows.clone()));
    Ok(rows)
}

fn search_bodies_with(
    index: Option<&Index>,
    query: &Query,
    docs: &Docs,
    index_problem: Option<&str>,
    cancel: &(dyn Fn() -> bool + Sync),
    unindexed: &mut FindUnindexed<'_>,
) -> Option<BodySearch> {
    let asks_bodies = query.error().is_none() && query.terms.iter().any(|t| t.searches_body());
    // Without an index every row carries its user and assistant text (the
    // loader read it); the files give the other parts.
    let Some(index) = index.filter(|_| asks_bodies) else {
        if index.is_none() && asks_bodies {
            let paths: Vec<std::path::PathBuf> =
                docs.0.iter().map(|(p, _)| p.to_path_buf()).collect();
            return Some(BodySearch {
                hits: arbor_search::hits::file_hits(query, &paths),
                ..Default::default()
            });
        }
        return Some(BodySearch::default());
    };
    let failed = |e: arbor_index::Error| BodySearch {
        incomplete: Some(format!("the index could not be searched ({e})")),
        ..Default::default()
    };
    // Which sessions the index lacks, found before it is searched: a batch
    // that another process's build commits in between is then in both
    // (its files' tiers are the index's), never in neither.
    let unindexed = match index_problem {
        Some(_) => Arc::from([]),
        None => match unindexed(index) {
            Ok(rows) => rows,
            Err(e) => return Some(failed(e)),
        },
    };
    let hits = match index.search_cancellable(query, cancel) {
        Ok(h) => h,
        Err(arbor_index::Error::Cancelled) => return None,
        // Damage found as it was read (a segment failing its checksum):
        // every row the index stood for is searched in its file instead,
        // so the answer is whole, and the index is started again by the
        // next process that opens it.
        Err(e) if e.is_damage() && index_problem.is_none() => {
            arbor_util::log::line(format!("search: {e}: searching the files instead"));
            let all: Vec<u32> = without_text(docs).map(|(i, _)| i).collect();
            return Some(BodySearch {
                hits: None,
                incomplete: Some(format!("{e}: searching the files instead")),
                unindexed: Arc::from(all),
            });
        }
        Err(e) => return Some(failed(e)),
    };
    if let Some(why) = index_problem {
        return Some(BodySearch {
            hits,
            incomplete: Some(format!("the index could not be written ({why})")),
            ..Default::default()
        });
    }
    let incomplete = match unindexed.len() {
        0 => None,
        1 => Some("1 session is not in the index yet: reading its file".to_string()),
        n => Some(format!(
            "{n} sessions are not in the index yet: reading their files"
        )),
    };
    Some(BodySearch {
        hits,
        incomplete,
        unindexed,
    })
}
