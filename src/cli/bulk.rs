//! `arbor trash` and `arbor restore`: many sessions to the system trash
//! and back, each on its own (a failure leaves the others, and is said);
//! nothing is ever deleted for good here.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use serde_json::json;

use super::commands::json_text;
use super::report::{parse_since, rows_of, scope_of};
use super::{GlobalOpts, RestoreArgs, TrashArgs};
use crate::term::{path as shown, sanitize_line as clean};
use crate::ui::trash_text::{restore_error_text, trash_error_text};
use arbor_session::bulk::{self, LIVE_WINDOW_MS};
use arbor_session::info::SessionInfo;
use arbor_store::listing::{filter_rows, read_rows};
use arbor_store::scan::id_from_file_name;
use arbor_store::{resolve_session, StoreConfig};

/// A session chosen to be moved.
struct Candidate {
    path: PathBuf,
    id: String,
    title: String,
    modified_ms: i64,
    bytes: u64,
    /// Why it is not moved (gone, changed seconds ago, the trash failed).
    refused: Option<String>,
    /// Something odd said of it, moved all the same (a file dated in the
    /// future).
    note: Option<String>,
}

impl Candidate {
    fn from_info(r: &SessionInfo) -> Candidate {
        Candidate {
            path: absolute(&r.path),
            id: r.id.clone(),
            title: r.title().to_string(),
            modified_ms: r.modified_ms,
            bytes: 0,
            refused: None,
            note: None,
        }
    }
}

/// When a session was last active: the newest of its last message's time
/// and its file's (a fork made now copies old times; a file written with
/// no believable time has its mtime).
fn last_active_ms(r: &SessionInfo) -> i64 {
    r.modified_ms.max(r.file_mtime_ms)
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// `12k`, `10M`, `1.5G` (powers of 1,000, as sizes are shown), `KiB`,
/// `MiB`, `GiB` (of 1,024), or bytes.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: f64 = match n.parse() {
        Ok(n) => n,
        Err(_) => bail!("--larger-than {s:?}: give a size such as 500k, 10M or 1G"),
    };
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => bail!("--larger-than {s:?}: give a size such as 500k, 10M or 1G"),
    };
    Ok((n * mult) as u64)
}

/// The sessions `a` names, or those its filters choose (oldest first).
fn candidates(
    config: &StoreConfig,
    g: &GlobalOpts,
    a: &TrashArgs,
    now_ms: i64,
) -> Result<Vec<Candidate>> {
    if !a.sessions.is_empty() {
        let mut out = Vec::new();
        for arg in &a.sessions {
            match resolve_session(config, arg) {
                Ok(file) => {
                    let (rows, _) = read_rows(std::slice::from_ref(&file));
                    out.push(match rows.first() {
                        Some(r) => Candidate::from_info(r),
                        // Not readable as a session: still the file named.
                        None => Candidate {
                            path: absolute(&file.path),
                            id: id_from_file_name(&file.path)
                                .unwrap_or_default()
                                .to_string(),
                            title: String::new(),
                            modified_ms: 0,
                            bytes: 0,
                            refused: None,
                            note: None,
                        },
                    });
                }
                Err(e) => out.push(Candidate {
                    path: absolute(Path::new(arg)),
                    id: String::new(),
                    title: String::new(),
                    modified_ms: 0,
                    bytes: 0,
                    refused: Some(e.to_string()),
                    note: None,
                }),
            }
        }
        return Ok(out);
    }
    let cutoff = a
        .older_than
        .as_deref()
        .map(|s| parse_since("--older-than", s, now_ms))
        .transpose()?;
    let min = a.larger_than.as_deref().map(parse_size).transpose()?;
    let scope = scope_of(a.all, a.cwd.as_deref())?;
    let mut rows = rows_of(config, g, &scope, super::report::Rows::All);
    filter_rows(&mut rows, &scope, a.include_internal);
    if rows.is_empty() {
        super::commands::no_sessions_hint(&scope, "looks in every folder");
    }
    rows.retain(|r| cutoff.is_none_or(|c| last_active_ms(r) < c));
    rows.sort_by(|x, y| {
        last_active_ms(x)
            .cmp(&last_active_ms(y))
            .then_with(|| x.path.cmp(&y.path))
    });
    let mut out: Vec<Candidate> = rows.iter().map(Candidate::from_info).collect();
    if let Some(min) = min {
        measure(&mut out, now_ms);
        out.retain(|c| c.refused.is_some() || c.bytes > min);
    }
    Ok(out)
}

/// Sizes from the files now; a file gone, or changed in the last seconds
/// (an agent may be writing it), is refused. A file dated well in the
/// future is not "changed seconds ago": it is moved, and that is said.
fn measure(cands: &mut [Candidate], now_ms: i64) {
    for c in cands.iter_mut().filter(|c| c.refused.is_none()) {
        match bulk::size_and_mtime(&c.path) {
            Ok((bytes, mtime)) => {
                c.bytes = bytes;
                let age = now_ms - mtime;
                if age <= -LIVE_WINDOW_MS {
                    // No agent writes it now: its clock, or a copy, dated it so.
                    c.note = Some(format!(
                        "its file is dated in the future ({}); not taken for a sign that an agent is writing it",
                        arbor_session::entry::format_iso_ms(mtime)
                    ));
                } else if age < LIVE_WINDOW_MS {
                    c.refused = Some(format!(
                        "it changed {}s ago; an agent may be writing it",
                        age.max(0) / 1000
                    ));
                }
            }
            Err(e) => c.refused = Some(crate::ui::trash_text::io_reason(&e)),
        }
    }
}

/// A remote's sessions go to the trash there, by its arbor: one call for
/// each remote. Returns the paths that are remotes' (moved or not).
fn trash_on_remotes(
    cands: &mut [Candidate],
    remotes: &crate::app::remotes::Remotes,
    dry_run: bool,
) -> std::collections::HashSet<PathBuf> {
    let mut on_remotes = std::collections::HashSet::new();
    for remote in &remotes.remotes {
        let ps: Vec<PathBuf> = cands
            .iter()
            .filter(|c| c.refused.is_none())
            .filter(|c| {
                remotes
                    .owning(&c.path)
                    .is_some_and(|r| r.name == remote.name)
            })
            .map(|c| c.path.clone())
            .collect();
        on_remotes.extend(ps.iter().cloned());
        if dry_run || ps.is_empty() {
            continue;
        }
        let done = crate::app::remote_write::trash_all(remotes, remote, &ps);
        for (p, why) in done.failed {
            if let Some(c) = cands.iter_mut().find(|c| c.path == p) {
                c.refused = Some(why);
            }
        }
    }
    on_remotes
}

pub fn trash(
    config: &StoreConfig,
    remotes: &crate::app::remotes::Remotes,
    g: &GlobalOpts,
    a: &TrashArgs,
    out: &mut impl Write,
) -> Result<()> {
    let now_ms = chrono::Utc::now().timestamp_millis();
    let mut cands = candidates(config, g, a, now_ms)?;
    measure(&mut cands, now_ms);
    let on_remotes = trash_on_remotes(&mut cands, remotes, a.dry_run);
    let movable: Vec<PathBuf> = cands
        .iter()
        .filter(|c| c.refused.is_none() && !on_remotes.contains(&c.path))
        .map(|c| c.path.clone())
        .collect();
    if !a.dry_run && !movable.is_empty() {
        move_noted(&mut cands, &movable, now_ms);
    }
    let done = if a.dry_run { "would-move" } else { "moved" };
    for c in &cands {
        if a.json {
            let v = json!({
                "path": c.path.to_string_lossy(),
                "sessionId": c.id,
                "bytes": c.bytes,
                "modified": arbor_session::entry::format_iso_ms(c.modified_ms),
                "title": c.title,
                "status": if c.refused.is_some() { "not-moved" } else { done },
                "error": c.refused,
                "note": c.note,
                "host": arbor_util::hosts::host_of(&c.path).as_deref(),
            });
            writeln!(out, "{}", json_text(&v))?;
        } else if c.refused.is_none() {
            writeln!(
                out,
                "{:<10}  {:>9}  {:>4}  {}  {}",
                if a.dry_run { "would move" } else { "moved" },
                arbor_util::human_bytes(c.bytes),
                arbor_util::age(now_ms, c.modified_ms),
                shown(&c.path),
                clean(&c.title).chars().take(60).collect::<String>(),
            )?;
        }
    }
    for c in cands.iter().filter(|c| c.refused.is_none()) {
        if let Some(note) = &c.note {
            eprintln!("arbor: note: {}: {}", shown(&c.path), clean(note));
        }
    }
    let refused: Vec<&Candidate> = cands.iter().filter(|c| c.refused.is_some()).collect();
    for c in &refused {
        eprintln!(
            "arbor: not moved: {}: {}",
            shown(&c.path),
            clean(c.refused.as_deref().unwrap_or_default())
        );
    }
    let ok = cands.len() - refused.len();
    let bytes: u64 = cands
        .iter()
        .filter(|c| c.refused.is_none())
        .map(|c| c.bytes)
        .sum();
    if !a.json {
        let n = plural(ok, "session");
        let size = arbor_util::human_bytes(bytes);
        match (cands.is_empty(), a.dry_run) {
            (true, _) => writeln!(out, "No sessions match.")?,
            (false, true) => writeln!(
                out,
                "Would move {n} ({size}) to the trash (a dry run: nothing moved)."
            )?,
            (false, false) if ok > 0 => writeln!(
                out,
                "Moved {n} ({size}) to the trash; arbor restore brings {} back.",
                if ok == 1 { "it" } else { "them" }
            )?,
            (false, false) => {}
        }
    }
    if !refused.is_empty() {
        bail!(
            "{} of {} not {}",
            plural(refused.len(), "session"),
            cands.len(),
            if a.dry_run {
                "to be moved (see above)"
            } else {
                "moved to the trash (see above)"
            }
        );
    }
    Ok(())
}

/// Moves `movable` with the batch noted as a journal (see
/// `bulk::Journal`); a file the trash refuses is marked so in `cands`.
fn move_noted(cands: &mut [Candidate], movable: &[PathBuf], now_ms: i64) {
    let note = bulk::record_path();
    // A batch cut off earlier: its note made whole, its placeholders
    // gone, before this batch's note replaces it.
    if let Some(note) = &note {
        let _ = bulk::settle(note);
    }
    let mut journal = note.as_deref().and_then(|n| {
        bulk::Journal::begin(n, movable, now_ms)
            .map_err(|e| note_error(n, &e))
            .ok()
    });
    let moved = bulk::trash_all_noted(movable, journal.as_mut());
    for (p, e) in &moved.failed {
        if let Some(c) = cands.iter_mut().find(|c| &c.path == p) {
            c.refused = Some(trash_error_text(e));
        }
    }
    if let (Some(j), Some(n)) = (journal, &note) {
        if let Err(e) = j.finish() {
            note_error(n, &e);
        }
    }
}

fn note_error(note: &Path, e: &std::io::Error) {
    eprintln!(
        "arbor: cannot note the batch in {} ({}); arbor restore PATH… still brings each back",
        shown(note),
        crate::ui::trash_text::io_reason(e)
    );
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

const NO_BATCH: &str = "no batch to restore: arbor has moved none to the trash here (name the sessions: arbor restore PATH|ID…)";

/// What `arbor restore` brings back: the paths named (or the sessions in
/// the trash whose id starts so), or the last batch noted.
fn to_restore(config: &StoreConfig, a: &RestoreArgs) -> Result<Vec<PathBuf>> {
    if a.sessions.is_empty() {
        let Some(note) = bulk::record_path() else {
            bail!(NO_BATCH);
        };
        // A batch cut off: what it did move, found first.
        return match bulk::settle(&note) {
            Ok(Some(paths)) if !paths.is_empty() => Ok(paths),
            Ok(_) => bail!(NO_BATCH),
            Err(e) => bail!("cannot list the trash: {}", restore_error_text(&e)),
        };
    }
    let mut trashed: Option<Vec<PathBuf>> = None;
    let mut out = Vec::new();
    for arg in &a.sessions {
        let looks_like_path = arg.ends_with(".jsonl") || arg.contains(std::path::MAIN_SEPARATOR);
        if looks_like_path {
            out.push(absolute(Path::new(arg)));
            continue;
        }
        if trashed.is_none() {
            trashed = Some(bulk::trashed_sessions().map_err(|e| {
                anyhow::anyhow!("cannot list the trash: {}", restore_error_text(&e))
            })?);
        }
        let all = trashed.as_deref().unwrap_or_default();
        let id = |p: &PathBuf| config.session_file(p).id_from_name().map(str::to_string);
        let mut found: Vec<&PathBuf> = all
            .iter()
            .filter(|p| id(p).as_deref() == Some(arg))
            .collect();
        if found.is_empty() {
            found = all
                .iter()
                .filter(|p| id(p).is_some_and(|i| i.starts_with(arg.as_str())))
                .collect();
        }
        found.sort();
        found.dedup();
        match found.as_slice() {
            [one] => out.push((*one).clone()),
            [] => bail!("no session in the trash has the id {}", clean(arg)),
            many => bail!(
                "{} sessions in the trash have ids starting with {}; give more of it",
                many.len(),
                clean(arg)
            ),
        }
    }
    Ok(out)
}

pub fn restore(config: &StoreConfig, a: &RestoreArgs, out: &mut impl Write) -> Result<()> {
    let paths = to_restore(config, a)?;
    // A remote's session went to the trash on its own machine.
    for p in &paths {
        if let Some(host) = arbor_util::hosts::host_of(&absolute(p)) {
            bail!(
                "{}: {}",
                shown(p),
                crate::ui::runtime::remote_restore_text(&host)
            );
        }
    }
    let result = bulk::restore_all(&paths)
        .map_err(|e| anyhow::anyhow!("cannot list the trash: {}", restore_error_text(&e)))?;
    let failed: Vec<(PathBuf, String)> = result
        .failed
        .iter()
        .map(|(p, e)| (p.clone(), restore_error_text(e)))
        .collect();
    for p in &paths {
        let error = failed.iter().find(|(f, _)| f == p).map(|(_, e)| e.clone());
        let status = match &error {
            Some(_) => "not-restored",
            None if result.in_place.contains(p) => "in-place",
            None => "restored",
        };
        if a.json {
            let v = json!({
                "path": p.to_string_lossy(),
                "status": status,
                "error": error,
            });
            writeln!(out, "{}", json_text(&v))?;
        } else if error.is_none() {
            let what = if status == "in-place" {
                "in place"
            } else {
                "restored"
            };
            writeln!(out, "{what:<8}  {}", shown(p))?;
        }
    }
    for (p, e) in &failed {
        eprintln!("arbor: not restored: {}: {}", shown(p), clean(e));
    }
    if a.sessions.is_empty() {
        // The note keeps what may still come back (a file in the way, say).
        let left: Vec<PathBuf> = result
            .failed
            .iter()
            .filter(|(_, e)| !matches!(e, arbor_session::fileops::RestoreError::NotInTrash))
            .map(|(p, _)| p.clone())
            .collect();
        if let Some(note) = bulk::record_path() {
            let now_ms = chrono::Utc::now().timestamp_millis();
            if let Err(e) = bulk::update_record(&note, &left, now_ms) {
                eprintln!(
                    "arbor: cannot update the note {}: {}",
                    shown(&note),
                    crate::ui::trash_text::io_reason(&e)
                );
            }
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {} not restored (see above)",
            plural(failed.len(), "session"),
            paths.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("500").unwrap(), 500);
        assert_eq!(parse_size("12k").unwrap(), 12_000);
        assert_eq!(parse_size("1.5M").unwrap(), 1_500_000);
        assert_eq!(parse_size("2GB").unwrap(), 2_000_000_000);
        assert_eq!(parse_size("1KiB").unwrap(), 1024);
        assert!(parse_size("ten").is_err());
        assert!(parse_size("5 parsecs").is_err());
    }
}
