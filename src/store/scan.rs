//! Finding session files without reading them.

use std::path::{Path, PathBuf};

use super::paths::{encode_cwd, Agent, StoreConfig, StoreKind};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    pub path: PathBuf,
    /// Whose session it is: decided by the root it was found under, and
    /// handed on with the file to the scanner, the index and the screens.
    pub agent: Agent,
}

impl SessionFile {
    /// The session id from the file name: `<timestamp>_<id>.jsonl` (Atomic,
    /// pi), `<id>.jsonl` (Claude Code), `rollout-<time>-<id>.jsonl` (Codex,
    /// whose ids are UUIDs: the last 36 characters).
    pub fn id_from_name(&self) -> Option<&str> {
        match self.agent {
            Agent::Atomic | Agent::Pi => id_from_file_name(&self.path),
            Agent::Claude => self.path.file_name()?.to_str()?.strip_suffix(".jsonl"),
            Agent::Codex => {
                let stem = self.path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
                stem.get(stem.len().checked_sub(36)?..)
            }
        }
    }
}

pub fn id_from_file_name(path: &Path) -> Option<&str> {
    let stem = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    stem.split_once('_').map(|(_, id)| id)
}

/// A path that looked like a session but could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanProblem {
    pub path: PathBuf,
    pub reason: String,
}

/// Which projects to list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    All,
    /// One project, by its absolute cwd.
    Project(String),
}

/// Compared as bytes: a name that is not valid UTF-8 is still a session
/// (listed under a lossy display name), never silently left out.
fn is_session_name(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().ends_with(b".jsonl")
}

/// Collects `*.jsonl` regular files (following symlinks) in `dir`.
pub(super) fn files_in(
    dir: &Path,
    agent: Agent,
    out: &mut Vec<SessionFile>,
    problems: &mut Vec<ScanProblem>,
) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for ent in rd.flatten() {
        if !is_session_name(&ent.file_name()) {
            // Claude Code's sub-agent runs of a session, in
            // `<session id>/subagents/` (see `session::foreign`).
            if agent == Agent::Claude && ent.file_type().is_ok_and(|t| t.is_dir()) {
                files_in(&ent.path().join("subagents"), agent, out, problems);
            }
            continue;
        }
        // Claude Code's sub-agent transcripts (`agent-<id>.jsonl`) are read
        // as internal sessions of their session (hidden unless asked for);
        // those of its own compaction (`agent-acompact-…`) repeat the
        // session and are left out.
        if agent == Agent::Claude
            && ent
                .file_name()
                .as_encoded_bytes()
                .starts_with(b"agent-acompact")
        {
            continue;
        }
        let path = ent.path();
        // The directory entry's own type saves a stat for plain files.
        if ent.file_type().is_ok_and(|t| t.is_file()) {
            out.push(SessionFile { path, agent });
            continue;
        }
        // `metadata` follows symlinks: loops and dangling links fail here,
        // FIFOs and directories are not regular files. Opening a FIFO would block.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => out.push(SessionFile { path, agent }),
            Ok(m) if m.is_dir() => problems.push(ScanProblem {
                path,
                reason: "a directory named like a session file".into(),
            }),
            Ok(_) => problems.push(ScanProblem {
                path,
                reason: "not a regular file".into(),
            }),
            Err(e) => problems.push(ScanProblem {
                path,
                reason: format!("unreadable link or file: {e}"),
            }),
        }
    }
}

/// Whether a folder of a per-project root, by its name, can hold sessions.
pub(super) fn is_project_dir_name(name: &str) -> bool {
    name != "tool-results" && name != "artifacts"
}

/// Project folders of a per-project root: real folders and links to folders.
pub(super) fn project_dirs(root: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            is_project_dir_name(name) && std::fs::metadata(p).is_ok_and(|m| m.is_dir())
        })
        .collect();
    dirs.sort();
    dirs
}

/// Whether a folder's name is a dated root's level (`YYYY`, `MM`, `DD`).
pub(super) fn is_date_name(name: &std::ffi::OsStr) -> bool {
    name.to_str()
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The year and month folders of a dated root: where a new day (or
/// month, or year) folder appears.
pub(super) fn dated_parents(root: &Path) -> Vec<PathBuf> {
    let sub = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .map(|rd| {
                rd.flatten()
                    .filter(|e| {
                        is_date_name(&e.file_name()) && e.file_type().is_ok_and(|t| t.is_dir())
                    })
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for y in sub(root) {
        out.extend(sub(&y));
        out.push(y);
    }
    out
}

/// The day folders of a dated root (`YYYY/MM/DD`), oldest first.
pub(super) fn dated_dirs(root: &Path) -> Vec<PathBuf> {
    let sub = |d: &Path| -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(d) else {
            return Vec::new();
        };
        let mut v: Vec<PathBuf> = rd
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
                    && e.file_type().is_ok_and(|t| t.is_dir())
            })
            .map(|e| e.path())
            .collect();
        v.sort();
        v
    };
    let mut out = Vec::new();
    for y in sub(root) {
        for m in sub(&y) {
            out.extend(sub(&m));
        }
    }
    out
}

/// The folders of a root that hold its session files.
pub fn session_dirs(root: &Path, kind: StoreKind) -> Vec<PathBuf> {
    match kind {
        StoreKind::Flat => vec![root.to_path_buf()],
        StoreKind::PerProject => project_dirs(root),
        StoreKind::Dated => {
            let mut v = vec![root.to_path_buf()];
            v.extend(dated_dirs(root));
            v
        }
    }
}

/// Whether the store holds at least one session file (stops at the first:
/// the picker asks before its first frame).
pub fn has_session_files(config: &StoreConfig) -> bool {
    let in_dir = |dir: &Path| -> bool {
        std::fs::read_dir(dir).is_ok_and(|rd| {
            rd.flatten().any(|e| {
                is_session_name(&e.file_name())
                    && std::fs::metadata(e.path()).is_ok_and(|m| m.is_file())
            })
        })
    };
    config.roots.iter().any(|root| {
        session_dirs(&root.path, root.kind)
            .iter()
            .any(|d| in_dir(d))
    })
}

/// All session files of a store in the given scope (for a project scope the
/// caller still compares each header's cwd: the folder encoding is lossy).
pub fn list_session_files(
    config: &StoreConfig,
    scope: &Scope,
) -> (Vec<SessionFile>, Vec<ScanProblem>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for root in &config.roots {
        match root.kind {
            StoreKind::Flat => files_in(&root.path, root.agent, &mut files, &mut problems),
            // A rollout's folder says when, not where: every one is read,
            // and the rows' cwd decides.
            StoreKind::Dated => {
                for d in session_dirs(&root.path, root.kind) {
                    files_in(&d, root.agent, &mut files, &mut problems);
                }
            }
            StoreKind::PerProject => match scope {
                Scope::All => {
                    for d in project_dirs(&root.path) {
                        files_in(&d, root.agent, &mut files, &mut problems);
                    }
                }
                Scope::Project(cwd) => {
                    let d = root.path.join(match root.agent {
                        Agent::Claude => super::paths::encode_cwd_claude(cwd),
                        _ => encode_cwd(cwd),
                    });
                    if d.is_dir() {
                        files_in(&d, root.agent, &mut files, &mut problems);
                    }
                }
            },
        }
    }
    (files, problems)
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResolveError {
    #[error("no session matches {0:?} (give a path, a session id or a unique id prefix)")]
    NotFound(String),
    #[error("{} is not a session file: {reason}", path.display())]
    NotAFile { path: PathBuf, reason: String },
    #[error("{query:?} is ambiguous: {count} sessions match ({examples})")]
    Ambiguous {
        query: String,
        count: usize,
        examples: String,
    },
}

/// A session by path, id or unique id prefix; ids come from file names only.
pub fn resolve_session(config: &StoreConfig, arg: &str) -> Result<SessionFile, ResolveError> {
    let p = Path::new(arg);
    if p.is_file() {
        return Ok(config.session_file(p));
    }
    // A path that exists but is no regular file (a directory, a FIFO, a
    // broken or looping link) gets its own reason instead of a misleading
    // "no session matches". Only for arguments that look like paths, so an
    // id prefix that happens to name something in the cwd still resolves.
    let looks_like_path = arg.ends_with(".jsonl") || arg.contains(std::path::MAIN_SEPARATOR);
    if looks_like_path {
        if let Ok(lm) = std::fs::symlink_metadata(p) {
            let reason = match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => "it is a directory".to_string(),
                Ok(_) => "it is not a regular file".to_string(),
                Err(e) if lm.file_type().is_symlink() => format!("unreadable link: {e}"),
                Err(e) => e.to_string(),
            };
            return Err(ResolveError::NotAFile {
                path: p.to_path_buf(),
                reason,
            });
        }
    }
    if arg.is_empty() {
        return Err(ResolveError::NotFound(arg.into()));
    }
    let (files, _) = list_session_files(config, &Scope::All);
    let exact: Vec<&SessionFile> = files
        .iter()
        .filter(|f| f.id_from_name() == Some(arg))
        .collect();
    let matches: Vec<&SessionFile> = if exact.is_empty() {
        files
            .iter()
            .filter(|f| f.id_from_name().is_some_and(|id| id.starts_with(arg)))
            .collect()
    } else {
        exact
    };
    match matches.len() {
        0 => Err(ResolveError::NotFound(arg.into())),
        1 => Ok(matches[0].clone()),
        n => Err(ResolveError::Ambiguous {
            query: arg.into(),
            count: n,
            examples: matches
                .iter()
                .take(3)
                .filter_map(|f| f.id_from_name())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}
