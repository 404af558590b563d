//! Effects that write a session: a rename, a label, a branch summary, a
//! fork, a migration to version 3, an export of a branch.

use std::path::PathBuf;

use crate::app::remote_write::{self, RemoteWrite};
use crate::ui::app::{AppEvent, Effect, WriteKind};

/// `write` run by arbor on the remote owning `path` (see
/// `app::remote_write`); `None` for a session of this machine.
/// `migrate`: the remote's arbor rewrites a version 1/2 file as version 3
/// first (the user said yes to it, as for a file of this machine).
fn on_remote(
    path: &std::path::Path,
    write: &RemoteWrite,
    migrate: bool,
) -> Option<Result<String, String>> {
    let (remotes, remote) = super::super::remote_of(path)?;
    Some(remote_write::run(remotes, remote, path, write, migrate).map_err(|e| format!("{e:#}")))
}

/// The version of a remote's session as its mirrored copy says, when it is
/// older than 3: the rewrite is asked here, before the remote is reached.
fn remote_version_to_migrate(path: &std::path::Path) -> Option<u32> {
    super::super::remote_of(path)?;
    let session = arbor_session::reader::read_session_lean(path).ok()?;
    session.needs_migration().then_some(session.file_version)
}

pub fn rename_session(path: PathBuf, name: String) -> Vec<AppEvent> {
    if let Some(version) = remote_version_to_migrate(&path) {
        return vec![AppEvent::RenameNeedsMigration {
            path,
            name,
            version,
        }];
    }
    rename_with(path, name, false)
}

fn rename_with(path: PathBuf, name: String, migrate: bool) -> Vec<AppEvent> {
    use arbor_session::Error as SessionError;
    let write = RemoteWrite::Rename { name: name.clone() };
    if let Some(result) = on_remote(&path, &write, migrate) {
        let result = result.map(|_| name);
        return vec![AppEvent::Renamed { path, result }];
    }
    let result = match arbor_session::writer::append_session_name(&path, &name) {
        Err(SessionError::NeedsMigration { version, .. }) => {
            return vec![AppEvent::RenameNeedsMigration {
                path,
                name,
                version,
            }]
        }
        r => r.map(|_| name).map_err(|e| e.to_string()),
    };
    vec![AppEvent::Renamed { path, result }]
}

/// `label` set on the entry `target` (`None`: the label removed).
pub fn label(path: PathBuf, target: &str, label: Option<&str>) -> Vec<AppEvent> {
    label_with(path, target, label, false)
}

fn label_with(path: PathBuf, target: &str, label: Option<&str>, migrate: bool) -> Vec<AppEvent> {
    let write = RemoteWrite::Label {
        entry: target.to_string(),
        text: label.map(str::to_string),
    };
    let result = match on_remote(&path, &write, migrate) {
        Some(r) => r.map(|_| None),
        None => arbor_session::writer::append_label(&path, target, label)
            .map(|_| None)
            .map_err(|e| e.to_string()),
    };
    vec![AppEvent::Wrote {
        path,
        what: if label.is_some() {
            WriteKind::Label
        } else {
            WriteKind::LabelRemoved
        },
        result,
    }]
}

pub fn branch(path: PathBuf, entry: &str, summary: &str) -> Vec<AppEvent> {
    branch_with(path, entry, summary, false)
}

fn branch_with(path: PathBuf, entry: &str, summary: &str, migrate: bool) -> Vec<AppEvent> {
    let write = RemoteWrite::Branch {
        entry: entry.to_string(),
        summary: summary.to_string(),
    };
    let result = match on_remote(&path, &write, migrate) {
        Some(r) => r.map(|_| None),
        None => arbor_session::writer::append_branch(&path, entry, summary)
            .map(|_| None)
            .map_err(|e| e.to_string()),
    };
    vec![AppEvent::Wrote {
        path,
        what: WriteKind::Branch,
        result,
    }]
}

pub fn fork(path: PathBuf, entry: &str) -> Vec<AppEvent> {
    fork_with(path, entry, false)
}

fn fork_with(path: PathBuf, entry: &str, migrate: bool) -> Vec<AppEvent> {
    let write = RemoteWrite::Fork {
        entry: entry.to_string(),
    };
    // A remote's fork is written there, beside its source (the remote's
    // arbor prints its path there); the sync brings it here beside the
    // source's copy.
    let result = match on_remote(&path, &write, migrate) {
        Some(r) => r.map(|printed| {
            let name = std::path::Path::new(printed.lines().next().unwrap_or_default().trim())
                .file_name()
                .map(std::ffi::OsStr::to_os_string);
            name.map(|n| path.with_file_name(n))
        }),
        None => arbor_session::writer::fork(&path, entry, None)
            .map(|f| Some(f.path))
            .map_err(|e| e.to_string()),
    };
    vec![AppEvent::Wrote {
        path,
        what: WriteKind::Fork,
        result,
    }]
}

/// The file rewritten as version 3, then `then` performed on it.
pub fn migrate_then(path: PathBuf, then: Effect) -> Vec<AppEvent> {
    if super::super::remote_of(&path).is_some() {
        // A mirror is never written: the remote's arbor rewrites its file.
        return match then {
            Effect::Rename { path, name } => rename_with(path, name, true),
            Effect::Label {
                path,
                target,
                label,
            } => label_with(path, &target, label.as_deref(), true),
            Effect::Branch {
                path,
                entry,
                summary,
            } => branch_with(path, &entry, &summary, true),
            Effect::Fork { path, entry } => fork_with(path, &entry, true),
            other => super::perform(other),
        };
    }
    match arbor_session::writer::migrate_file(&path) {
        Ok(_) => super::perform(then),
        // The picker's rename hears of it as a failed rename.
        Err(e) if matches!(then, Effect::Rename { .. }) => vec![AppEvent::Renamed {
            path,
            result: Err(e.to_string()),
        }],
        Err(e) => vec![AppEvent::Wrote {
            path,
            what: WriteKind::Label,
            result: Err(e.to_string()),
        }],
    }
}

/// The branch ending at `leaf` exported into the current folder.
pub fn export(
    path: &std::path::Path,
    leaf: &str,
    format: arbor_session::export::ExportFormat,
    thinking: bool,
    file_name: &str,
) -> Vec<AppEvent> {
    let result = std::env::current_dir()
        .map_err(|e| format!("cannot read the current folder: {e}"))
        .and_then(|dir| export_branch(path, leaf, format, thinking, file_name, &dir));
    vec![AppEvent::Exported(result)]
}

/// The tree's export: the branch of `path` ending at `leaf`, written into
/// `dir` as `file_name` or a numbered variant of it.
pub fn export_branch(
    path: &std::path::Path,
    leaf: &str,
    format: arbor_session::export::ExportFormat,
    thinking: bool,
    file_name: &str,
    dir: &std::path::Path,
) -> Result<PathBuf, String> {
    use arbor_session::export;
    let doc = export::export_file(path, Some(leaf), format, export::ExportOptions { thinking })
        .map_err(|e| e.to_string())?;
    export::write_in_dir(dir, file_name, &doc)
        .map_err(|e| format!("cannot write into {}: {e}", dir.display()))
}
