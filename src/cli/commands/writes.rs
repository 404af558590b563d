//! The writes: `label`, `branch`, `rename` (an entry appended) and `fork`
//! (a new session file).

use std::io::Write;
use std::path::Path;

use anyhow::{bail, Result};

use super::{load, resolve};
use crate::app::remote_write::RemoteWrite;
use crate::app::remotes::Remotes;
use crate::cli::{BranchArgs, ForkArgs, LabelArgs, RenameArgs};
use crate::term::{for_stdout, path as shown};
use arbor_session::writer;
use arbor_session::Error as SessionError;
use arbor_store::StoreConfig;

/// `arbor label`: sets or clears an entry's label.
pub(super) fn label(
    config: &StoreConfig,
    remotes: &Remotes,
    a: &LabelArgs,
    out: &mut impl Write,
) -> Result<()> {
    let path = resolve(config, &a.session)?;
    if !a.clear && a.text.as_deref().is_none_or(|t| t.trim().is_empty()) {
        bail!("give the label text, or --clear to remove the label");
    }
    let text = if a.clear { None } else { a.text.as_deref() };
    let entry = entry_arg(&path, &a.entry)?;
    let write = RemoteWrite::Label {
        entry: entry.clone(),
        text: text.map(str::to_string),
    };
    if on_remote(remotes, &path, &write, a.write.migrate, out)? {
        return Ok(());
    }
    append(out, &path, a.write.migrate, || {
        writer::append_label(&path, &entry, text)
    })
}

/// `arbor branch`: a branch summary at an entry.
pub(super) fn branch(
    config: &StoreConfig,
    remotes: &Remotes,
    a: &BranchArgs,
    out: &mut impl Write,
) -> Result<()> {
    let path = resolve(config, &a.session)?;
    let entry = entry_arg(&path, &a.entry)?;
    let write = RemoteWrite::Branch {
        entry: entry.clone(),
        summary: a.summary.clone(),
    };
    if on_remote(remotes, &path, &write, a.write.migrate, out)? {
        return Ok(());
    }
    append(out, &path, a.write.migrate, || {
        writer::append_branch(&path, &entry, &a.summary)
    })
}

/// `arbor rename`: the session's name.
pub(super) fn name_session(
    config: &StoreConfig,
    remotes: &Remotes,
    a: &RenameArgs,
    out: &mut impl Write,
) -> Result<()> {
    let path = resolve(config, &a.session)?;
    let write = RemoteWrite::Rename {
        name: a.name.clone(),
    };
    if on_remote(remotes, &path, &write, a.write.migrate, out)? {
        return Ok(());
    }
    append(out, &path, a.write.migrate, || {
        writer::append_session_name(&path, &a.name)
    })
}

/// `arbor fork`: a new session of the path to an entry; prints its path.
pub(super) fn fork(
    config: &StoreConfig,
    remotes: &Remotes,
    a: &ForkArgs,
    out: &mut impl Write,
) -> Result<()> {
    let path = resolve(config, &a.session)?;
    let entry = entry_arg(&path, &a.entry)?;
    if remotes.owning(&path).is_some() && a.out.is_some() {
        bail!("--out names a file here; a fork of a remote's session is written there, beside it");
    }
    let write = RemoteWrite::Fork {
        entry: entry.clone(),
    };
    if on_remote(remotes, &path, &write, false, out)? {
        return Ok(());
    }
    let forked = writer::fork(&path, &entry, a.out.as_deref())?;
    writeln!(out, "{}", for_stdout(&forked.path.to_string_lossy()))?;
    // As Atomic's /fork: the new session ends before the user
    // message, whose text is handed back to send again.
    if let Some(text) = &forked.prompt {
        eprintln!("Forked before the user message; its text, to send again:");
        for l in arbor_session::render::sanitize_block(text).lines() {
            eprintln!("  {l}");
        }
    }
    Ok(())
}

/// A write to a remote's session, run by arbor there (see
/// `app::remote_write`), its answer printed; `false` for a session of
/// this machine.
fn on_remote(
    remotes: &Remotes,
    path: &Path,
    write: &RemoteWrite,
    migrate: bool,
    out: &mut impl Write,
) -> Result<bool> {
    let Some(remote) = remotes.owning(path) else {
        return Ok(false);
    };
    let said = crate::app::remote_write::run(remotes, remote, path, write, migrate)?;
    if !said.is_empty() {
        writeln!(out, "{said}")?;
    }
    Ok(true)
}

/// Runs an append (after the one-time rewrite of an older file, when
/// `migrate` allows it) and prints the new entry's id.
fn append(
    out: &mut impl Write,
    path: &Path,
    migrate: bool,
    write: impl Fn() -> Result<writer::Written, SessionError>,
) -> Result<()> {
    let written = match write() {
        Err(SessionError::NeedsMigration { version, .. }) if migrate => {
            let bak = writer::migrate_file(path)?;
            eprintln!(
                "arbor: rewrote {} from version {version} to version 3 (original kept as {})",
                shown(path),
                shown(&bak)
            );
            write()?
        }
        Err(SessionError::NeedsMigration { version, .. }) => bail!(
            "{} is a version {version} session: add --migrate to rewrite it as version 3 first \
             (the original is kept as .bak)",
            shown(Path::new(path.file_name().unwrap_or(path.as_os_str())))
        ),
        other => other?,
    };
    writeln!(out, "{}", written.id)?;
    Ok(())
}

/// The entry a write's argument names: a unique id prefix made whole, as
/// `diff` and `context --leaf` take them. An id found nowhere (or a file
/// that does not read) is handed on as given: the writer says why.
fn entry_arg(path: &Path, given: &str) -> Result<String> {
    let Ok((s, t)) = load(path) else {
        return Ok(given.to_string());
    };
    match t.resolve_id(given) {
        Ok(i) => Ok(s.entries[i].id.to_string()),
        Err(SessionError::UnknownEntryId(_)) => Ok(given.to_string()),
        Err(e) => bail!("{}: {e}", shown(path)),
    }
}
