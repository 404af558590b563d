//! A query answered from the session files rather than the index: each
//! file read once for its row and the query's body matches, and when to
//! do so (a first query leaves the index's build behind its answer).

use rayon::prelude::*;

use arbor_index::behind::Deferred;
use arbor_index::Index;
use arbor_search::hits::{body_mask, parts_beyond_text, text_bits, PartMatcher};
use arbor_search::{BodyHits, Query, Tiers};
use arbor_session::info::SessionInfo;
use arbor_session::line_skim::LineSpans;
use arbor_session::searchable::Parts;
use arbor_session::Error as SessionError;
use arbor_store::listing::scan_file;
use arbor_store::{ScanProblem, SessionFile};

/// Whether a query's listing should answer from the files and leave the
/// index's build behind it, and what it reads: when the index may build
/// behind ([`Index::build_behind`]), holds under half as many files in
/// the listed files' folders as are listed (a project's folder may be
/// missing from an index that holds the others'; in folders by date,
/// Codex's, other projects' files count too, so such a project is
/// indexed first as before), and they hold more than its threshold. Reading every file for a query
/// costs a fraction of building the index first (at 100,000 sessions ~10
/// s against ~55 s; at 10,000 stress sessions ~7 s against ~21 s); once
/// the index holds most files, what it lacks is built here (or waited for)
/// and the query answered from it.
pub fn answer_from_files(index: &Index, files: &[SessionFile]) -> Option<Deferred> {
    let over = index.behind_over()?;
    let held = index.files_held_in_folders_of(files).ok()?;
    if held.saturating_mul(2) >= files.len() {
        return None;
    }
    let bytes: u64 = files
        .par_iter()
        .map(|f| std::fs::metadata(&f.path).map_or(0, |m| m.len()))
        .sum();
    (bytes > over).then(|| Deferred {
        files: files.len(),
        bytes,
        builder: arbor_index::behind::builder(index.path()),
    })
}

/// The rows of `files` (without their text or usage, as a listing reads
/// them) and the body matches of `query` in them, each file read once on
/// all cores: its lines skimmed once for the row, the text and the other
/// parts (reading the rows, then each file's text, then its other parts,
/// read a file three times). The text is matched as the row's `all_text`
/// is (a phrase may span two messages) and counts as the index's text
/// match (rank 0), so the ranking is the index's; it is let go with its
/// file (holding every session's text, a query at 100,000 sessions
/// peaked at ~780 MB). Files that are no session are problems, as a
/// listing says them.
pub fn rows_and_hits(
    files: &[SessionFile],
    query: &Query,
) -> (Vec<SessionInfo>, Vec<ScanProblem>, BodyHits) {
    let parts = parts_beyond_text(query);
    let text = query.parts.covers_text() && body_mask(query) != 0;
    let read: Vec<_> = files
        .par_iter()
        .map(|f| {
            row_and_tiers(f, query, parts, text).map_err(|e| ScanProblem {
                path: f.path.clone(),
                reason: e.to_string(),
            })
        })
        .collect();
    let mut problems = Vec::new();
    let mut hits = BodyHits::default();
    // Collected in place (the results' buffer becomes the rows'): a second
    // buffer of 100,000 rows would be ~30 MB more at the peak.
    let rows = read
        .into_iter()
        .filter_map(|r| match r {
            Ok((row, tiers)) => {
                if tiers != Tiers::default() {
                    hits.insert_shared(row.path.as_os_arc().clone(), tiers);
                }
                Some(row)
            }
            Err(p) => {
                problems.push(p);
                None
            }
        })
        .collect();
    (rows, problems, hits)
}

/// The tiers `query` finds in each of `files` (text and every other part
/// it asks about), each read once on all cores: what the index would have
/// answered for sessions it does not hold yet (the picker's search during
/// a first build); `None` for a file that cannot be read. `None` once
/// `cancel` says a newer query made it stale.
pub fn tiers_from_files(
    files: &[SessionFile],
    query: &Query,
    cancel: &(dyn Fn() -> bool + Sync),
) -> Option<Vec<Option<Tiers>>> {
    let parts = parts_beyond_text(query);
    let text = query.parts.covers_text() && body_mask(query) != 0;
    files
        .par_iter()
        .map(|f| match cancel() {
            true => None,
            false => Some(row_and_tiers(f, query, parts, text).ok().map(|(_, t)| t)),
        })
        .collect()
}

/// One file's row (without text or usage) and the tiers `query` finds in
/// its `parts` and, when `text`, in its user and assistant text.
fn row_and_tiers(
    f: &SessionFile,
    query: &Query,
    parts: Parts,
    text: bool,
) -> Result<(SessionInfo, Tiers), SessionError> {
    let mut m = PartMatcher::new(query, parts);
    let mut info = if f.agent.is_foreign() {
        // Read through a translation: the matcher reads it again.
        let info = scan_file(f, text)?;
        if !parts.is_empty() {
            m.file(&f.path);
        }
        info
    } else {
        let mut each = |line: &[u8], spans: Option<&LineSpans>| {
            if !parts.is_empty() && !m.complete() {
                m.skimmed(line, spans);
            }
        };
        let seen = arbor_session::info::scan_info_seeing(&f.path, text, Some(&mut each))?;
        if !seen.lines_seen && !parts.is_empty() {
            m.file(&f.path);
        }
        let mut info = seen.info;
        info.agent = f.agent;
        info
    };
    let mut tiers = m.tiers;
    if text {
        tiers[0] |= text_bits(query, &info.all_text);
    }
    info.all_text = String::new();
    info.usage = Default::default();
    Ok((info, tiers))
}
