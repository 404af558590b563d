//! The commands that read one session: `show`, `context`, `export` and
//! `diff`.

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Context as _, Result};
use rayon::prelude::*;

use super::json::{escape_c1, json_text, needs_c1_escape, plain, C1Escaped};
use super::{load, resolve};
use crate::cli::{ContextArgs, DiffArgs, ExportArgs, ShowArgs};
use crate::term::{path as shown, sanitize_line as clean};
use arbor_session::view::{flatten_pre, row_line, Filter, FilterBits, Preorder};
use arbor_session::ContextFlavor;
use arbor_session::ContextPlan;
use arbor_store::{resolve_session, StoreConfig};

pub(super) fn show(config: &StoreConfig, a: &ShowArgs, out: &mut impl Write) -> Result<()> {
    let path = resolve(config, &a.session)?;
    let (s, t) = load(&path)?;
    if a.json {
        // A piece at a time: the text is never held whole.
        arbor_session::tree::write_json_pieces(&s, &t, |piece| match needs_c1_escape(piece) {
            true => out.write_all(&escape_c1(std::mem::take(piece))),
            false => out.write_all(piece),
        })?;
        out.write_all(b"\n")?;
        return Ok(());
    }
    let calls = &s.calls;
    let filter = Filter::from_name(&a.filter).unwrap_or_default();
    let pre = Preorder::new(&t);
    let bits = FilterBits::build(&s.entries, &t, &pre);
    let bits = bits.of(filter);
    let mut rows = Vec::new();
    flatten_pre(&mut rows, &mut Vec::new(), &pre, bits, &[]);
    let name = t
        .display_name()
        .map(|n| format!(" — {}", arbor_session::render::sanitize_line(n)));
    writeln!(out, "{}{}", clean(s.id()), name.unwrap_or_default())?;
    // Only rows on stdout (one per /tree row); notes go to stderr.
    // Each row reads its entry's line (neighbours in the file a block at
    // a time): on all cores, in order, a batch at a time (deep rows are
    // long: the whole output is never held).
    let positions: Vec<usize> = (0..rows.len()).collect();
    for batch in positions.chunks(8192) {
        let chunks: Vec<String> = batch
            .par_chunks(256)
            .map(|c| {
                let mut buf = String::new();
                let idx: Vec<usize> = c.iter().map(|&pos| rows[pos].entry()).collect();
                let mut pos = c.iter();
                s.for_each_parsed_at(&idx, |e| {
                    let Some(&pos) = pos.next() else {
                        return;
                    };
                    let line = row_line(&rows, pos, e, &t, calls, None);
                    buf.push_str(line.trim_end());
                    buf.push('\n');
                });
                buf
            })
            .collect();
        for c in chunks {
            out.write_all(c.as_bytes())?;
        }
    }
    if s.entries.is_empty() {
        eprintln!("(no entries in session)");
    } else if rows.is_empty() {
        eprintln!("(no entries found with the {} filter)", a.filter);
    }
    if s.needs_migration() {
        eprintln!("(version {} file, read as version 3)", s.file_version);
    }
    if let Some(what) = s.diagnostics.describe() {
        eprintln!("({what})");
    }
    Ok(())
}

pub(super) fn context(config: &StoreConfig, a: &ContextArgs, out: &mut impl Write) -> Result<()> {
    let file = resolve_session(config, &a.session)?;
    let path = file.path;
    let flavor = match &a.flavor {
        Some(f) => f.parse::<ContextFlavor>().map_err(anyhow::Error::msg)?,
        None => file.agent.flavor(),
    };
    let (s, t) = load(&path)?;
    let leaf = match &a.leaf {
        Some(id) => Some(
            t.resolve_id(id)
                .map_err(|e| anyhow::anyhow!("{}: {e}", shown(&path)))?,
        ),
        None => None,
    };
    // Only the messages' text is shown: each taken out of its message.
    let plan = ContextPlan::new(&s, &t, leaf, flavor).texts_only();
    if a.json {
        // The object of `SessionContext::to_json` with the flavor, written a
        // message at a time (the context is never held whole).
        let mut head = serde_json::Map::new();
        head.insert("leafId".into(), plan.leaf_id().into());
        head.insert(
            "model".into(),
            match &plan.model {
                Some((p, m)) => serde_json::json!({"provider": p, "modelId": m}),
                None => serde_json::Value::Null,
            },
        );
        head.insert("thinkingLevel".into(), plan.thinking_level.clone());
        let head = json_text(&serde_json::Value::Object(head));
        let mut w = std::io::BufWriter::with_capacity(256 << 10, out);
        w.write_all(&head.as_bytes()[..head.len() - 1])?;
        w.write_all(b",\"messages\":[")?;
        let mut first = true;
        let mut result = Ok(());
        plan.for_each_message(|m| {
            if result.is_ok() {
                result = write_context_row(&mut w, &m, std::mem::take(&mut first));
            }
        });
        result?;
        writeln!(
            w,
            "],\"flavor\":{}}}",
            serde_json::Value::from(flavor.name())
        )?;
        w.flush()?;
        return Ok(());
    }
    // The count and the tokens head the messages: a first pass makes
    // them, a second writes the messages out.
    let (mut count, mut tokens) = (0, 0);
    plan.for_each_message(|m| {
        count += 1;
        tokens += m.text.chars().count().div_ceil(4);
    });
    let model = plan
        .model
        .as_ref()
        .map(|(p, m)| format!("{}/{}", plain(p), plain(m)))
        .unwrap_or_else(|| "(none)".into());
    let mut w = std::io::BufWriter::with_capacity(256 << 10, out);
    writeln!(
        w,
        "leaf {} · model {} · thinking {} · {} · ~{} tokens",
        clean(plan.leaf_id().unwrap_or("(none)")),
        clean(&model),
        clean(&plain(&plan.thinking_level)),
        match count {
            1 => "1 message".to_string(),
            n => format!("{n} messages"),
        },
        tokens
    )?;
    let mut i = 0;
    let mut result = Ok(());
    plan.for_each_message(|m| {
        if result.is_err() {
            return;
        }
        result = (|| {
            if Some(i) == plan.boundary {
                writeln!(w, "──── compaction boundary ({}) ────", clean(&m.entry_id))?;
            }
            i += 1;
            writeln!(w, "[{i}] {} ({})", clean(&m.role), clean(&m.entry_id))?;
            writeln!(w, "{}", arbor_session::render::sanitize_block(&m.text))
        })();
    });
    result?;
    w.flush()?;
    Ok(())
}

/// One message of `context --json` (`ContextMessage::to_json`, escaped as
/// `json_text` escapes), serialized from the message's own strings.
fn write_context_row(
    w: &mut impl Write,
    m: &arbor_session::ContextMessage,
    first: bool,
) -> std::io::Result<()> {
    #[derive(serde::Serialize)]
    struct Row<'a> {
        role: &'a str,
        #[serde(rename = "entryId")]
        entry_id: &'a str,
        text: &'a str,
    }
    if !first {
        w.write_all(b",")?;
    }
    let row = Row {
        role: &m.role,
        entry_id: &m.entry_id,
        text: &m.text,
    };
    // Escaped as it is written: a message of hundreds of megabytes is not
    // held again as its JSON.
    let mut out = C1Escaped::new(w);
    serde_json::to_writer(&mut out, &row)?;
    out.finish()
}

pub(super) fn export(config: &StoreConfig, a: &ExportArgs, out: &mut impl Write) -> Result<()> {
    use arbor_session::export::{self, ExportFormat, ExportOptions};
    let format = match (&a.format, &a.out) {
        (Some(f), _) => f.parse::<ExportFormat>().map_err(anyhow::Error::msg)?,
        (None, Some(p)) => p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(ExportFormat::from_file_name)
            .unwrap_or_default(),
        (None, None) => ExportFormat::Markdown,
    };
    let path = resolve(config, &a.session)?;
    let opts = ExportOptions {
        thinking: a.thinking,
    };
    // Read (and the branch found) before anything is created; then
    // written out an entry at a time.
    let doc = export::Export::open(&path, a.leaf.as_deref())?;
    let write = |w: &mut dyn Write| {
        let mut w = std::io::BufWriter::with_capacity(256 << 10, w);
        doc.write(format, opts, &mut w)?;
        w.flush()
    };
    match &a.out {
        None => write(out)?,
        Some(dest) => write_new_file(dest, a.force, |f| write(f))?,
    }
    Ok(())
}

pub(super) fn diff(config: &StoreConfig, a: &DiffArgs, out: &mut impl Write) -> Result<()> {
    use arbor_session::compare::{compare_at, layout};
    let path = resolve(config, &a.session)?;
    let (s, t) = load(&path)?;
    let entry = |id: &str| {
        t.resolve_id(id)
            .map_err(|e| anyhow::anyhow!("{}: {e}", shown(&path)))
    };
    let cmp = compare_at(&s, &t, entry(&a.entry_a)?, entry(&a.entry_b)?);
    if a.json {
        let v = serde_json::to_value(&cmp)?;
        writeln!(out, "{}", json_text(&v))?;
        return Ok(());
    }
    let width = a.width.unwrap_or_else(|| {
        if crate::term::stdout_is_tty() {
            crossterm::terminal::size().map_or(120, |(w, _)| usize::from(w))
        } else {
            120
        }
    });
    // The rows are sanitized by the layout.
    for row in layout(&cmp, width) {
        writeln!(out, "{}", row.plain(width))?;
    }
    Ok(())
}

/// Writes an export to `dest` with `write`, refusing to replace an
/// existing file unless `force`.
pub fn write_new_file(
    dest: &Path,
    force: bool,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    use arbor_session::fileops::write_new;
    use arbor_session::Error as SessionError;
    match write_new(dest, force, write) {
        Ok(()) => Ok(()),
        Err(SessionError::CreateFile(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
            "{} exists; nothing written (--force replaces it)",
            shown(dest)
        ),
        Err(SessionError::CreateFile(e)) => {
            Err(e).with_context(|| format!("cannot create {}", shown(dest)))
        }
        Err(SessionError::FillFile(e)) => {
            Err(e).with_context(|| format!("cannot write {}", shown(dest)))
        }
        Err(e) => Err(e.into()),
    }
}
