//! Finding session files without reading them.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::paths::{encode_cwd, Agent, StoreConfig, StoreKind, StoreRoot};
use crate::{Error, Result};

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
    files_in_noting(dir, agent, out, problems, &mut Vec::new());
}

/// [`files_in`], noting for each folder listed the session names in it
/// that are symlinks (the entries' own types say so, at no extra cost).
fn files_in_noting(
    dir: &Path,
    agent: Agent,
    out: &mut Vec<SessionFile>,
    problems: &mut Vec<ScanProblem>,
    listed: &mut Vec<ListedFolder>,
) {
    let mut links = HashSet::new();
    let read = each_entry(dir, &mut |name, kind| {
        if !is_session_name(name) {
            // Claude Code's sub-agent runs of a session, in
            // `<session id>/subagents/` (see `session::foreign`).
            if agent == Agent::Claude && kind == EntryKind::Dir {
                let sub = dir.join(name).join("subagents");
                files_in_noting(&sub, agent, out, problems, listed);
            }
            return;
        }
        if kind == EntryKind::Link {
            links.insert(name.to_os_string());
        }
        // Claude Code's sub-agent transcripts (`agent-<id>.jsonl`) are read
        // as internal sessions of their session (hidden unless asked for);
        // those of its own compaction (`agent-acompact-…`) repeat the
        // session and are left out.
        if agent == Agent::Claude && name.as_encoded_bytes().starts_with(b"agent-acompact") {
            return;
        }
        let path = dir.join(name);
        // The directory entry's own type saves a stat for plain files.
        if kind == EntryKind::File {
            out.push(SessionFile { path, agent });
            return;
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
    });
    if read {
        listed.push(ListedFolder {
            dir: dir.to_path_buf(),
            links,
        });
    }
}

/// What a folder's entry is, as its listing says (without following a
/// symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    File,
    Link,
    Dir,
    Other,
}

/// Calls `f` with each entry of `dir` (but `.` and `..`) and its kind;
/// false when `dir` cannot be listed.
#[cfg(unix)]
fn each_entry(dir: &Path, f: &mut dyn FnMut(&std::ffi::OsStr, EntryKind)) -> bool {
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use std::os::unix::ffi::OsStrExt;
    // The entries as the kernel gives them: std's `read_dir` made a name
    // and a path of every entry, and the listing of 100,000 files was
    // ~90 ms of a picker's load.
    let Ok(fd) = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let Ok(entries) = rustix::fs::Dir::read_from(&fd) else {
        return false;
    };
    for entry in entries {
        // A failed read ends the listing (std's iterator skipped it; a
        // directory stream may give the same error again).
        let Ok(entry) = entry else {
            break;
        };
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let mut kind = entry.file_type();
        if kind == FileType::Unknown {
            // The file system does not say: asked of the entry.
            kind = rustix::fs::statat(&fd, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .map_or(FileType::Unknown, |st| FileType::from_raw_mode(st.st_mode));
        }
        let kind = match kind {
            FileType::RegularFile => EntryKind::File,
            FileType::Symlink => EntryKind::Link,
            FileType::Directory => EntryKind::Dir,
            _ => EntryKind::Other,
        };
        f(std::ffi::OsStr::from_bytes(name), kind);
    }
    true
}

#[cfg(not(unix))]
fn each_entry(dir: &Path, f: &mut dyn FnMut(&std::ffi::OsStr, EntryKind)) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    for ent in rd.flatten() {
        let kind = match ent.file_type() {
            Ok(t) if t.is_file() => EntryKind::File,
            Ok(t) if t.is_symlink() => EntryKind::Link,
            Ok(t) if t.is_dir() => EntryKind::Dir,
            _ => EntryKind::Other,
        };
        f(&ent.file_name(), kind);
    }
    true
}

/// A folder a listing read, and which of its session names are symlinks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedFolder {
    pub dir: PathBuf,
    pub links: HashSet<OsString>,
}

/// What [`list_store`] found.
#[derive(Debug, Default)]
pub struct StoreListing {
    pub files: Vec<SessionFile>,
    pub problems: Vec<ScanProblem>,
    /// Every folder read, in the order listed.
    pub folders: Vec<ListedFolder>,
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
    let listing = list_store(config, scope);
    (listing.files, listing.problems)
}

/// The folder of a per-project root that holds the sessions of `cwd`.
fn project_dir(root: &StoreRoot, cwd: &str) -> PathBuf {
    root.path.join(match root.agent {
        Agent::Claude => super::paths::encode_cwd_claude(cwd),
        _ => encode_cwd(cwd),
    })
}

/// The folders only the sessions of `cwd` are in: its folder in each
/// per-project root (none in a flat or dated root, whose folders hold
/// every project's), whether or not it exists.
pub fn project_dirs_of(config: &StoreConfig, cwd: &str) -> Vec<PathBuf> {
    config
        .roots
        .iter()
        .filter(|r| r.kind == StoreKind::PerProject)
        .map(|r| project_dir(r, cwd))
        .collect()
}

/// [`list_session_files`], with the folders read. The folders are read
/// on all cores (most of a listing is the kernel's reading of big
/// folders: ~90 ms for 100,000 files on one); the files come in the order
/// one thread would find them.
pub fn list_store(config: &StoreConfig, scope: &Scope) -> StoreListing {
    let mut dirs: Vec<(PathBuf, Agent)> = Vec::new();
    for root in &config.roots {
        let agent = root.agent;
        let from = dirs.len();
        match root.kind {
            StoreKind::Flat => dirs.push((root.path.clone(), agent)),
            // A rollout's folder says when, not where: every one is read,
            // and the rows' cwd decides.
            StoreKind::Dated => dirs.extend(
                session_dirs(&root.path, root.kind)
                    .into_iter()
                    .map(|d| (d, agent)),
            ),
            StoreKind::PerProject => match scope {
                Scope::All => dirs.extend(project_dirs(&root.path).into_iter().map(|d| (d, agent))),
                Scope::Project(cwd) => {
                    let d = project_dir(root, cwd);
                    if d.is_dir() {
                        dirs.push((d, agent));
                    }
                }
            },
        }
        // In the paths' order (by folder, then by name; roots as given),
        // not the file system's: the index's rows are matched with the
        // files in that order (see `index::refresh::ListedKeys::get_after`),
        // and a listing is the same on every run.
        // Each folder's name compared with a separator after it, as the
        // paths' bytes sort (`a-b/x` before `a/x`).
        let sep = std::path::MAIN_SEPARATOR_STR.as_bytes();
        dirs[from..].sort_unstable_by(|a, b| {
            let (a, b) = (a.0.as_os_str(), b.0.as_os_str());
            let a = a.as_encoded_bytes().iter().chain(sep);
            a.cmp(b.as_encoded_bytes().iter().chain(sep))
        });
    }
    let parts: Vec<StoreListing> = dirs
        .par_iter()
        .map(|(dir, agent)| {
            let mut part = StoreListing::default();
            files_in_noting(
                dir,
                *agent,
                &mut part.files,
                &mut part.problems,
                &mut part.folders,
            );
            part.files.sort_unstable_by(|a, b| {
                let (a, b) = (a.path.as_os_str(), b.path.as_os_str());
                a.as_encoded_bytes().cmp(b.as_encoded_bytes())
            });
            part
        })
        .collect();
    let mut listing = StoreListing {
        files: Vec::with_capacity(parts.iter().map(|p| p.files.len()).sum()),
        ..StoreListing::default()
    };
    for part in parts {
        listing.files.extend(part.files);
        listing.problems.extend(part.problems);
        listing.folders.extend(part.folders);
    }
    listing
}

/// A session by path, id or unique id prefix; ids come from file names only.
pub fn resolve_session(config: &StoreConfig, arg: &str) -> Result<SessionFile> {
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
            return Err(Error::NotAFile {
                path: p.to_path_buf(),
                reason,
            });
        }
    }
    if arg.is_empty() {
        return Err(Error::NotFound(arg.into()));
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
        0 => Err(Error::NotFound(arg.into())),
        1 => Ok(matches[0].clone()),
        n => Err(Error::Ambiguous {
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A folder's listing: plain sessions, a linked one (noted as a link),
    /// and what is named like a session but is not one (a dangling link, a
    /// folder, a FIFO) as problems; other names and `.`/`..` left out;
    /// Claude Code's sub-agent runs found under `<id>/subagents/`.
    #[test]
    fn a_folder_lists_its_sessions_links_and_problems() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("proj");
        std::fs::create_dir(&dir).unwrap();
        let target = tmp.path().join("elsewhere.jsonl");
        std::fs::write(&target, "{}\n").unwrap();
        std::fs::write(dir.join("a.jsonl"), "{}\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        std::os::unix::fs::symlink(&target, dir.join("linked.jsonl")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("gone"), dir.join("dangling.jsonl")).unwrap();
        std::fs::create_dir(dir.join("folder.jsonl")).unwrap();
        let fifo =
            std::ffi::CString::new(dir.join("pipe.jsonl").into_os_string().into_encoded_bytes())
                .unwrap();
        // SAFETY: a path of our own temporary folder.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let sub = dir.join("0b1c").join("subagents");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("agent-x.jsonl"), "{}\n").unwrap();
        std::fs::write(sub.join("agent-acompact-y.jsonl"), "{}\n").unwrap();

        let list = |agent| {
            let (mut out, mut problems, mut listed) = (Vec::new(), Vec::new(), Vec::new());
            files_in_noting(&dir, agent, &mut out, &mut problems, &mut listed);
            let mut files: Vec<String> = out
                .iter()
                .map(|f| f.path.strip_prefix(&dir).unwrap().display().to_string())
                .collect();
            files.sort();
            let mut problems: Vec<(String, String)> = problems
                .iter()
                .map(|p| {
                    let name = p.path.file_name().unwrap().to_string_lossy().into_owned();
                    (name, p.reason.chars().take(14).collect())
                })
                .collect();
            problems.sort();
            (files, problems, listed)
        };
        let (files, problems, listed) = list(Agent::Atomic);
        assert_eq!(files, ["a.jsonl", "linked.jsonl"]);
        assert_eq!(
            problems,
            [
                ("dangling.jsonl".into(), "unreadable lin".into()),
                ("folder.jsonl".into(), "a directory na".into()),
                ("pipe.jsonl".into(), "not a regular ".into()),
            ]
        );
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].dir, dir);
        let mut links: Vec<&OsString> = listed[0].links.iter().collect();
        links.sort();
        assert_eq!(links, ["dangling.jsonl", "linked.jsonl"]);

        let (files, _, listed) = list(Agent::Claude);
        assert_eq!(
            files,
            ["0b1c/subagents/agent-x.jsonl", "a.jsonl", "linked.jsonl"]
        );
        assert_eq!(listed.len(), 2, "the sub-agents' folder is listed too");
        // A folder that cannot be listed is not noted as listed.
        let mut listed = Vec::new();
        files_in_noting(
            &dir.join("none"),
            Agent::Atomic,
            &mut Vec::new(),
            &mut Vec::new(),
            &mut listed,
        );
        assert!(listed.is_empty());
    }
}
