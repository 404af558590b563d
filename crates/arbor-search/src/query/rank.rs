//! Ranking rows by a query: the ones it keeps, best first, newest first
//! among equals.

use super::fuzzy::Fuzzy;
use super::Query;
use crate::doc::SearchDoc;
use arbor_session::info::SessionInfo;
use std::path::PathBuf;

/// Keeps the rows that match, best first, ties newest first. Bodies are
/// searched in each row's `all_text` (rows read without the index).
pub fn rank(query: &Query, rows: Vec<SessionInfo>) -> Vec<SessionInfo> {
    rank_with_index(query, rows, None)
}

/// The final ranking, shared by `arbor list --query` and the picker.
/// `body_hits` is the index's answer (`Index::search`) for
/// these rows, whose `all_text` is then empty; `None` searches each row's
/// own `all_text`. Both give the same result for the same sessions.
pub fn rank_with_index(
    query: &Query,
    rows: Vec<SessionInfo>,
    body_hits: Option<&crate::BodyHits>,
) -> Vec<SessionInfo> {
    if !query.has_conditions() && query.error().is_none() {
        return rows;
    }
    let order = rank_order(
        query,
        rows.len(),
        |i| {
            let r = &rows[i];
            Some((SearchDoc::from_info(r), &*r.path))
        },
        body_hits,
    );
    // Rows are big: move each kept row once.
    let mut rows = rows;
    order
        .into_iter()
        .map(|i| std::mem::take(&mut rows[i]))
        .collect()
}

/// Which of `n` rows `query` keeps, best first ([`Query::rank_score`]:
/// Atomic's relevance order), then the most recent (by
/// the document's time), ties in the order given; `row(i)` is row `i`'s
/// document and path (for its body hits), `None` for a row to leave out.
/// Every row, in order, for a query without conditions.
pub fn rank_order<'a>(
    query: &Query,
    n: usize,
    row: impl Fn(usize) -> Option<(SearchDoc, &'a std::path::Path)> + Sync,
    body_hits: Option<&crate::BodyHits>,
) -> Vec<usize> {
    rank_order_visiting(query, n, None, row, body_hits)
}

/// [`rank_order`], the rows' documents made in the order `visit` gives
/// (a permutation of `0..n`) rather than `0..n`: rows stored apart from
/// their order are then read from memory as they lie (at 100,000
/// sessions a phrase's ranking took ~10 % less than in the listing's
/// order). The result is the same.
pub fn rank_order_visiting<'a>(
    query: &Query,
    n: usize,
    visit: Option<&[usize]>,
    row: impl Fn(usize) -> Option<(SearchDoc, &'a std::path::Path)> + Sync,
    body_hits: Option<&crate::BodyHits>,
) -> Vec<usize> {
    if !query.has_conditions() && query.error().is_none() {
        return (0..n).collect();
    }
    use rayon::prelude::*;
    // The index reports absolute paths: relative row paths are joined to
    // the working directory (looked up once, not per row).
    let cwd = std::env::current_dir().ok();
    let key = |p: &std::path::Path| -> Option<PathBuf> {
        let cwd = cwd.as_ref()?;
        std::path::absolute(cwd.join(p)).ok()
    };
    let score = |fz: &mut Fuzzy, i: usize| {
        let (doc, path) = row(i)?;
        let bits = body_hits.map(|h| {
            h.tiers(path)
                .or_else(|| {
                    if path.is_relative() {
                        key(path).and_then(|a| h.tiers(&a))
                    } else {
                        None
                    }
                })
                .unwrap_or_default()
        });
        query
            .score_with(&doc, fz, bits)
            .map(|s| (query.rank_score(&doc, s), doc.facts.modified_ms))
    };
    let scored: Vec<Option<(u32, i64)>> = match visit.filter(|v| v.len() == n) {
        None => (0..n).into_par_iter().map_init(Fuzzy::new, score).collect(),
        Some(visit) => {
            let found: Vec<(usize, Option<(u32, i64)>)> = visit
                .par_iter()
                .map_init(Fuzzy::new, |fz, &i| (i, score(fz, i)))
                .collect();
            let mut scored = vec![None; n];
            for (i, s) in found {
                if let Some(slot) = scored.get_mut(i) {
                    *slot = s;
                }
            }
            scored
        }
    };
    let mut order: Vec<usize> = (0..n).filter(|&i| scored[i].is_some()).collect();
    order.sort_by(|&a, &b| scored[b].cmp(&scored[a]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::tests::doc;

    /// Rows visited in another order (as a listing's rows lie in memory)
    /// rank exactly as in their own: ties (same score, same time) keep the
    /// order given, whatever order the documents were made in.
    #[test]
    fn visiting_order_changes_no_ranking() {
        let rows: Vec<(SearchDoc, PathBuf)> = (0..40)
            .map(|i| {
                let name = match i % 4 {
                    0 => "token refresh",
                    1 => "refresh the token",
                    2 => "tokens",
                    _ => "nothing here",
                };
                let mut d = doc(name, if i % 5 == 0 { "token in the body" } else { "" });
                d.facts.modified_ms = (i % 3) as i64;
                (d, PathBuf::from(format!("/s/{i}.jsonl")))
            })
            .collect();
        let row = |i: usize| Some((rows[i].0.clone(), rows[i].1.as_path()));
        for q in ["token", "\"token refresh\"", "re:tok\\w+", "refresh token"] {
            let query = Query::parse(q);
            let plain = rank_order(&query, rows.len(), row, None);
            assert!(!plain.is_empty(), "{q}");
            let backwards: Vec<usize> = (0..rows.len()).rev().collect();
            let mut shuffled: Vec<usize> = (0..rows.len()).collect();
            shuffled.sort_by_key(|&i| (i * 17) % 40);
            for visit in [backwards, shuffled] {
                let v = rank_order_visiting(&query, rows.len(), Some(&visit), row, None);
                assert_eq!(v, plain, "{q}");
            }
        }
    }
}
