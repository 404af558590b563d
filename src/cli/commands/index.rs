//! `arbor index`: files updated one by one, the whole store brought up to
//! date (or rebuilt), and the index's figures.

use std::io::Write;

use anyhow::{bail, Context as _, Result};
use serde_json::json;

use super::json::json_text;
use crate::cli::IndexArgs;
use crate::term::{path as shown, sanitize_line as clean};
use arbor_index::{Index, IndexStats, RefreshStats};
use arbor_store::{list_session_files, Scope, StoreConfig};

/// `arbor index --behind`: the build lock, at a lower priority, unless
/// another process holds it (`false`). A process that only looks at the
/// lock holds it for an instant: it is asked again a few times.
fn take_lock_behind(index: &mut Index) -> Result<bool> {
    arbor_index::behind::lower_priority();
    arbor_index::behind::yield_to_commands(index.path());
    for _ in 0..10 {
        if index.take_build_lock(false)? {
            return Ok(true);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(false)
}

/// `arbor index`: the files named updated one by one, or the whole store
/// brought up to date (unless `--stats`), then the index's figures.
pub(super) fn index_cmd(config: &StoreConfig, a: &IndexArgs, out: &mut impl Write) -> Result<()> {
    let mut index = Index::open_default().context("cannot open the index")?;
    if !a.files.is_empty() {
        return update_files(&mut index, config, a, out);
    }
    if a.behind && !take_lock_behind(&mut index)? {
        // Another process builds it: what this one would.
        return Ok(());
    }
    let mut update = None;
    if !a.stats {
        update = Some(update_store(&mut index, config, a.rebuild)?);
    }
    let s = index.stats()?;
    // Another process's build (`--stats` does not wait for it).
    let building = match update {
        Some(_) => None,
        None => arbor_index::behind::builder(index.path()),
    };
    if a.json {
        return print_json(out, &s, building, update.as_ref());
    }
    print_text(out, &s, building, update.as_ref())
}

/// `arbor index FILE…`: each file's row updated, with the time it took.
fn update_files(
    index: &mut Index,
    config: &StoreConfig,
    a: &IndexArgs,
    out: &mut impl Write,
) -> Result<()> {
    for path in &a.files {
        let t = std::time::Instant::now();
        let row = index.update_file(&config.session_file(path))?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if a.json {
            let v = json!({
                "path": path.to_string_lossy(),
                "ms": ms,
                "row": row.as_ref().map(|r| r.json_row()),
            });
            writeln!(out, "{}", json_text(&v))?;
        } else {
            match &row {
                Some(r) => writeln!(
                    out,
                    "{}: {} messages, updated in {ms:.1} ms",
                    shown(path),
                    r.message_count
                )?,
                None => writeln!(
                    out,
                    "{}: not a session (or gone), updated in {ms:.1} ms",
                    shown(path)
                )?,
            }
        }
    }
    Ok(())
}

/// The whole store brought up to date (the index emptied first when
/// `rebuild`), once the build lock is held; the files skipped are said.
fn update_store(index: &mut Index, config: &StoreConfig, rebuild: bool) -> Result<RefreshStats> {
    if !index.take_build_lock(false)? {
        match arbor_index::behind::builder(index.path()) {
            Some(pid) if pid > 0 => {
                eprintln!("arbor: waiting for the index build in process {pid} to end…")
            }
            _ => eprintln!("arbor: waiting for another process's index build to end…"),
        }
        index.take_build_lock(true)?;
    }
    if rebuild {
        index.clear().context("cannot delete the index")?;
    } else if let Some(what) = index.check_pages().context("cannot check the index")? {
        eprintln!(
            "arbor: the index at {} failed its check ({}); rebuilding it",
            shown(index.path()),
            clean(&what)
        );
    }
    let (files, mut problems) = list_session_files(config, &Scope::All);
    let stats = index.refresh(&files, &mut |_| {})?;
    if let Some(e) = &stats.write_error {
        bail!("the index could not be updated: {e}");
    }
    problems.extend(stats.problems.iter().cloned());
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    for p in &problems {
        eprintln!("arbor: skipped {}: {}", shown(&p.path), clean(&p.reason));
    }
    // The size printed below is then the index's, not its log's too.
    index.settle().context("cannot settle the index's log")?;
    Ok(stats)
}

/// `arbor index --json`: the figures, and the update's when there was one.
fn print_json(
    out: &mut impl Write,
    s: &IndexStats,
    building: Option<u32>,
    update: Option<&RefreshStats>,
) -> Result<()> {
    let mut v = json!({
        "path": s.path.to_string_lossy(),
        "format": s.format,
        "sizeBytes": s.disk_bytes,
        "sessions": s.sessions,
        "notSessions": s.not_sessions,
        "storeBytes": s.store_bytes,
        "textBytes": s.text_bytes,
        "segments": s.segments,
        "lastUpdate": s.last_update,
        "building": building,
    });
    if let Some(u) = update {
        v["update"] = json!({
            "files": u.files,
            "cached": u.cached,
            "appended": u.appended,
            "reparsed": u.reparsed,
            "removed": u.removed,
            "bytesParsed": u.bytes_parsed,
            "seconds": u.elapsed.as_secs_f64(),
        });
    }
    writeln!(out, "{}", json_text(&v))?;
    Ok(())
}

/// `arbor index`'s figures as text, the update's first when there was one.
fn print_text(
    out: &mut impl Write,
    s: &IndexStats,
    building: Option<u32>,
    update: Option<&RefreshStats>,
) -> Result<()> {
    let ratio = if s.store_bytes > 0 {
        s.disk_bytes as f64 * 100.0 / s.store_bytes as f64
    } else {
        0.0
    };
    if let Some(u) = update {
        writeln!(
            out,
            "updated in {:.2} s: {} files, {} unchanged, {} appended, {} read in full, {} removed, {} parsed",
            u.elapsed.as_secs_f64(),
            u.files,
            u.cached,
            u.appended,
            u.reparsed,
            u.removed,
            arbor_util::human_bytes(u.bytes_parsed)
        )?;
    }
    writeln!(out, "index:     {}", shown(&s.path))?;
    writeln!(
        out,
        "size:      {} ({ratio:.1} % of the {} of session files)",
        arbor_util::human_bytes(s.disk_bytes),
        arbor_util::human_bytes(s.store_bytes)
    )?;
    writeln!(
        out,
        "sessions:  {} (+{} files that are not sessions)",
        s.sessions, s.not_sessions
    )?;
    writeln!(
        out,
        "text:      {} searchable",
        arbor_util::human_bytes(s.text_bytes)
    )?;
    writeln!(out, "segments:  {}", s.segments)?;
    writeln!(
        out,
        "updated:   {}",
        clean(s.last_update.as_deref().unwrap_or("never"))
    )?;
    writeln!(out, "format:    {}", clean(&s.format))?;
    if let Some(pid) = building {
        writeln!(out, "building:  now, in process {pid}")?;
    }
    Ok(())
}
