//! One session in the picker: what its list row, sorts, filters and the
//! preview's facts need of its [`SessionInfo`], kept compact.
//!
//! The picker holds a row per session for as long as it is open: at
//! 100,000 sessions a `SessionInfo` per row was 512 bytes before any of
//! its text (most of it fields a row never shows: usage by hour, labels as
//! written, the scanner's own bookkeeping), and its id, folder, name and
//! summary were kept twice, once here and once in the search document.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arbor_index::RowView;
use arbor_search::doc::FIRST_MESSAGE_SCORED;
use arbor_search::SearchDoc;
use arbor_session::agent::Agent;
use arbor_session::info::{resume_target, SessionInfo, NO_MESSAGES};
use arbor_session::reader::Diagnostics;
use arbor_store::ListedFolder;
use arbor_util::hash::FxBuild;
use arbor_util::shared_path::SharedPath;

/// The characters of a first prompt a row keeps: the preview's six lines
/// of it at 330 columns.
pub const FIRST_PROMPT_KEPT: usize = 2_000;

/// One session in the picker.
#[derive(Debug, Clone)]
pub struct Row {
    pub info: RowInfo,
    /// The file path with symlinks resolved, to match `parentSession` links
    /// (the path itself, shared, when it has none).
    pub canonical: SharedPath,
    /// The parent session's path, symlinks resolved.
    pub parent_canonical: Option<PathBuf>,
    /// Hashes of the path, `canonical` and `parent_canonical` (see
    /// [`path_hash`]), made with the row: taking in and threading 100,000
    /// rows hashed every path on the UI thread (~80 ms) to find the few
    /// that are parents and place each row.
    pub path_hash: u64,
    pub canonical_hash: u64,
    pub parent_hash: Option<u64>,
    /// The row's search document, which also holds its id, cwd, name,
    /// summary and the start of its first message (see
    /// `SearchDoc::row_name` and its siblings).
    pub doc: Arc<SearchDoc>,
    /// The first message past what the search document keeps, up to
    /// [`FIRST_PROMPT_KEPT`] characters in all.
    first_rest: Option<Box<str>>,
    /// The session has a first message.
    has_first: bool,
}

/// The facts of a session a row shows that its search document does not
/// hold (see [`Row`] for the rest).
#[derive(Debug, Clone)]
pub struct RowInfo {
    pub path: SharedPath,
    /// The header's timestamp, as written.
    pub created: Box<str>,
    pub modified_ms: i64,
    pub file_mtime_ms: i64,
    pub message_count: usize,
    pub parent_session_path: Option<Box<str>>,
    /// Where the session left off (see `SessionInfo::last_reply`).
    pub last_reply: Option<Box<str>>,
    pub git_branch: Option<Box<str>>,
    /// One copy per list of models (see `util::intern`).
    pub models: Arc<[Box<str>]>,
    pub total_tokens: u64,
    pub total_cost: f64,
    /// What the reader skipped or repaired; `None` when nothing.
    pub diagnostics: Option<Box<Diagnostics>>,
    pub agent: Agent,
    pub internal: bool,
}

/// A row's diagnostics, kept only when there is something to say.
fn diagnostics(d: Diagnostics) -> Option<Box<Diagnostics>> {
    (d != Diagnostics::default()).then(|| Box::new(d))
}

impl Row {
    /// Builds a row; resolves symlinks, so call it off the UI thread.
    pub fn new(info: SessionInfo) -> Row {
        Row::with_dirs(info, &Folders::default())
    }

    /// Like [`Row::new`], resolving each folder once across rows: rows of
    /// 10,000 sessions need 10,000 canonical paths, and a full `realpath`
    /// per file cost the first screen tens of milliseconds.
    pub fn with_dirs(info: SessionInfo, dirs: &Folders) -> Row {
        let doc = SearchDoc::from_info(&info);
        // The row's own texts are moved out of the decoded row, not copied.
        let row = RowInfo {
            path: info.path,
            created: info.created.into_boxed_str(),
            modified_ms: info.modified_ms,
            file_mtime_ms: info.file_mtime_ms,
            message_count: info.message_count,
            parent_session_path: info.parent_session_path.map(String::into_boxed_str),
            last_reply: info.last_reply.map(String::into_boxed_str),
            git_branch: info.git_branch.map(String::into_boxed_str),
            models: arbor_util::intern::list(info.models.iter().map(String::as_str)),
            total_tokens: info.total_tokens,
            total_cost: info.total_cost,
            diagnostics: diagnostics(info.diagnostics),
            agent: info.agent,
            internal: info.internal,
        };
        Row::made(row, doc, info.first_message.as_deref(), dirs)
    }

    /// The row of a stored row read in place (see `StoredRow::view`), of
    /// the file at `path` found under a store root of `agent`: what
    /// [`Row::with_dirs`] makes of the decoded row, without the dozen
    /// strings a decoded row is made of and dropped again.
    pub fn of_view(view: &RowView, path: SharedPath, agent: Agent, dirs: &Folders) -> Row {
        // The document first, then the row's own texts: made the other
        // way round, two of seven loads of 100,000 rows ended ~23 MB
        // higher (none of ten this way; the cause is the allocator's).
        let doc = view.search_doc(agent);
        let row = RowInfo {
            path,
            created: view.created.into(),
            modified_ms: view.modified_ms,
            file_mtime_ms: view.file_mtime_ms,
            message_count: view.message_count,
            parent_session_path: view.parent_session_path.map(Box::from),
            last_reply: view.last_reply.map(Box::from),
            git_branch: view.git_branch.map(Box::from),
            models: arbor_util::intern::list(view.models_sorted()),
            total_tokens: view.total_tokens,
            total_cost: view.total_cost,
            diagnostics: diagnostics(view.diagnostics.clone()),
            agent,
            internal: view.internal,
        };
        Row::made(row, doc, view.first_message, dirs)
    }

    /// The row of `info`, its search document `doc` and its first message.
    fn made(info: RowInfo, doc: SearchDoc, first_message: Option<&str>, dirs: &Folders) -> Row {
        let own_hash = path_hash(info.path.as_os_str());
        let (canonical, canonical_hash) = match dirs.resolved(&info.path) {
            Some(resolved) if resolved != *info.path => {
                let hash = path_hash(resolved.as_os_str());
                (resolved.into(), hash)
            }
            _ => (info.path.clone(), own_hash),
        };
        let parent_canonical = info
            .parent_session_path
            .as_deref()
            .map(|p| dirs.canonical(Path::new(p)));
        let mut doc = doc;
        // A stored row's facts are made without its path.
        doc.facts.host = arbor_util::hosts::host_of(&info.path);
        let doc = Arc::new(doc);
        // What the picker keeps of each session is bounded by what it can
        // show, not by the session's text: the body lives on in the search
        // document (normalized), and of the first prompt the preview shows
        // at most a few lines, of which the document already holds the
        // start (one copy of it, not two: ~40 MB at 100,000 sessions).
        let has_first = first_message.is_some();
        let first_rest = first_message.and_then(|first| {
            let kept = doc.first_message().map_or(0, str::len);
            let rest = first.get(kept..).filter(|r| !r.is_empty())?;
            let cut = arbor_util::chars_end(rest, FIRST_PROMPT_KEPT - FIRST_MESSAGE_SCORED);
            Some(Box::from(&rest[..cut]))
        });
        Row {
            info,
            first_rest,
            has_first,
            path_hash: own_hash,
            canonical_hash,
            parent_hash: parent_canonical
                .as_deref()
                .map(|p| path_hash(p.as_os_str())),
            canonical,
            parent_canonical,
            doc,
        }
    }

    /// The remote machine the session is on (`None`: this one's).
    pub fn host(&self) -> Option<&str> {
        self.doc.facts.host.as_deref()
    }

    /// The session id.
    pub fn id(&self) -> &str {
        self.doc.row_id()
    }

    /// The session's working folder.
    pub fn cwd(&self) -> &str {
        self.doc.row_cwd()
    }

    /// The name when set and not cleared.
    pub fn display_name(&self) -> Option<&str> {
        self.doc.row_name()
    }

    /// The summary, when it is fresh (see `SessionInfo::summary`).
    pub fn summary(&self) -> Option<&str> {
        self.doc.row_summary()
    }

    /// The file and id Enter resumes (see `SessionInfo::resume_target`).
    pub fn resume_target(&self) -> (PathBuf, String) {
        resume_target(
            &self.info.path,
            self.id(),
            self.info.internal,
            self.info.agent,
            self.info.parent_session_path.as_deref(),
        )
    }

    /// The first message (at most [`FIRST_PROMPT_KEPT`] characters), or
    /// the placeholder of a session without one.
    pub fn first_message_text(&self) -> Cow<'_, str> {
        if !self.has_first {
            return Cow::Borrowed(NO_MESSAGES);
        }
        let head = self.doc.first_message().unwrap_or("");
        match &self.first_rest {
            Some(rest) => Cow::Owned([head, rest].concat()),
            None => Cow::Borrowed(head),
        }
    }

    /// Name, else first message: the row's title.
    pub fn title(&self) -> Cow<'_, str> {
        match self.display_name() {
            Some(name) => Cow::Borrowed(name),
            None => self.first_message_text(),
        }
    }

    /// A session's row made again of what this one keeps (to make a row
    /// of again): what the picker shows is the same, what it does not keep
    /// (usage by hour, labels as written, the summary's message id) is
    /// left empty.
    pub fn into_info(self) -> SessionInfo {
        let first = self
            .has_first
            .then(|| self.first_message_text().into_owned());
        let id = self.id().to_string();
        let cwd = self.cwd().to_string();
        let name = self.display_name().map(str::to_string);
        // A fresh summary is one that covers the last message: the row's
        // own id stands for both.
        let summary = self.summary().map(|s| (s.to_string(), id.clone()));
        let i = self.info;
        SessionInfo {
            path: i.path,
            cwd,
            has_name: name.is_some(),
            name,
            created: i.created.into(),
            modified_ms: i.modified_ms,
            message_count: i.message_count,
            first_message: first,
            parent_session_path: i.parent_session_path.map(String::from),
            last_message_id: summary.as_ref().map(|_| id.clone()),
            summary_candidate: summary,
            id,
            last_reply: i.last_reply.map(String::from),
            internal: i.internal,
            git_branch: i.git_branch.map(String::from),
            models: i.models.iter().map(|m| String::from(&**m)).collect(),
            total_tokens: i.total_tokens,
            total_cost: i.total_cost,
            diagnostics: i.diagnostics.map(|d| *d).unwrap_or_default(),
            file_mtime_ms: i.file_mtime_ms,
            agent: i.agent,
            ..SessionInfo::default()
        }
    }
}

/// The hash of a path's bytes that [`Row::canonical_hash`] holds.
pub fn path_hash(path: &std::ffi::OsStr) -> u64 {
    arbor_util::hash::bytes_hash(path.as_encoded_bytes())
}

/// Canonical folders already resolved, for [`Row::with_dirs`]; clones
/// share what they resolved (the loader makes rows on every core).
#[derive(Default, Clone)]
pub struct Folders(Arc<std::sync::Mutex<HashMap<OsString, Folder, FxBuild>>>);

/// What [`Folders`] knows of one folder.
#[derive(Default)]
struct Folder {
    /// Its canonical form (`None`: it cannot be resolved).
    canonical: Option<Arc<Path>>,
    /// Files of it asked about so far, while it is not listed.
    asked: usize,
    /// Once listed: the names of the symlinks in it.
    links: Option<std::collections::HashSet<OsString>>,
}

/// Past this many files asked about in one folder, the folder is listed
/// once for its links rather than each file looked at: a loader's 100,000
/// rows spent ~300 ms of CPU on an `lstat` per file (a folder's entries
/// come with their types). More than a first screen's rows, which a
/// listing of a big folder (~8 ms for 10,000 files) would delay.
const LIST_FOLDER_AFTER: usize = 256;

impl Folders {
    /// Takes in what a listing of the store found: rows of files in these
    /// folders then know whether they are symlinks without an `lstat` or a
    /// listing of their own (which, at 100,000 sessions, read every big
    /// folder a second time).
    pub fn listed(&self, folders: &[ListedFolder]) {
        let mut known = self.0.lock().unwrap_or_else(|p| p.into_inner());
        for f in folders {
            let folder = known
                .entry(f.dir.as_os_str().to_owned())
                .or_insert_with(|| Folder {
                    canonical: f.dir.canonicalize().ok().map(Arc::from),
                    ..Folder::default()
                });
            folder.links = Some(f.links.clone());
        }
    }

    /// `path` with symlinks resolved: its folder's canonical form joined
    /// with its name, or the whole path resolved when it is a link itself
    /// (known from the folder's listing, or one `lstat`: much cheaper than
    /// resolving every component again).
    fn canonical(&self, path: &Path) -> PathBuf {
        self.resolved(path).unwrap_or_else(|| path.to_path_buf())
    }

    /// [`Folders::canonical`], `None` when that is `path` itself (most
    /// files: no path is made for them).
    fn resolved(&self, path: &Path) -> Option<PathBuf> {
        let Some((dir, name)) = arbor_util::dir_and_name(path) else {
            return path.canonicalize().ok();
        };
        let (dir_canon, listed_link) = {
            // A poisoned lock only means another row's thread panicked:
            // what it holds is still right.
            let mut known = self.0.lock().unwrap_or_else(|p| p.into_inner());
            // Keyed by the folder's bytes, copied once per folder.
            if !known.contains_key(dir.as_os_str()) {
                let folder = Folder {
                    canonical: dir.canonicalize().ok().map(Arc::from),
                    ..Folder::default()
                };
                known.insert(dir.as_os_str().to_owned(), folder);
            }
            let folder = known.get_mut(dir.as_os_str())?;
            if folder.links.is_none() && folder.canonical.is_some() {
                folder.asked += 1;
                if folder.asked > LIST_FOLDER_AFTER {
                    folder.links = symlinks_in(dir);
                }
            }
            // A listing notes the links among session names only.
            let listed_link = folder
                .links
                .as_ref()
                .filter(|_| name.as_encoded_bytes().ends_with(b".jsonl"))
                .map(|l| l.contains(name));
            (folder.canonical.clone(), listed_link)
        };
        // A missing folder (a link to another machine's session): kept as
        // written.
        let canon_dir = dir_canon?;
        // The path with its folder resolved, made only when that differs
        // from the path (its folder as written, joined to its name once).
        let exact = dir.as_os_str().len() + 1 + name.len() == path.as_os_str().len();
        let moved =
            (!exact || canon_dir.as_os_str() != dir.as_os_str()).then(|| canon_dir.join(name));
        let at = moved.as_deref().unwrap_or(path);
        let is_link = listed_link.unwrap_or_else(|| {
            std::fs::symlink_metadata(at).is_ok_and(|m| m.file_type().is_symlink())
        });
        if is_link {
            let at = moved.unwrap_or_else(|| path.to_path_buf());
            Some(at.canonicalize().unwrap_or(at))
        } else {
            moved
        }
    }
}

/// The names of the symlinks in `dir` (`None` when it cannot be listed).
#[cfg(unix)]
fn symlinks_in(dir: &Path) -> Option<std::collections::HashSet<OsString>> {
    use rustix::fs::{FileType, Mode, OFlags};
    use std::os::unix::ffi::OsStrExt;
    // The entries as the kernel gives them, no allocation per entry (std's
    // `read_dir` made one for each of 100,000 names: ~50 ms).
    let fd = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let mut links = std::collections::HashSet::new();
    for entry in rustix::fs::Dir::read_from(&fd).ok()? {
        let entry = entry.ok()?;
        let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
        let link = match entry.file_type() {
            FileType::Symlink => true,
            // The file system does not say: asked of the file.
            FileType::Unknown => rustix::fs::statat(
                &fd,
                entry.file_name(),
                rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
            )
            .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink),
            _ => false,
        };
        if link {
            links.insert(name.to_os_string());
        }
    }
    Some(links)
}

/// The names of the symlinks in `dir` (`None` when it cannot be listed).
#[cfg(not(unix))]
fn symlinks_in(dir: &Path) -> Option<std::collections::HashSet<OsString>> {
    let entries = std::fs::read_dir(dir).ok()?;
    Some(
        entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_symlink()))
            .map(|e| e.file_name())
            .collect(),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A folder of many sessions is listed once for its links: each path
    /// resolves as a fresh `Folders` (an `lstat` of the file) resolves it,
    /// links to files elsewhere included, whichever comes first.
    #[test]
    fn a_listed_folder_resolves_links_as_one_file_at_a_time_does() {
        let tmp = tempfile::tempdir().unwrap();
        let (store, elsewhere) = (tmp.path().join("store"), tmp.path().join("elsewhere"));
        std::fs::create_dir_all(&store).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        let target = elsewhere.join("real.jsonl");
        std::fs::write(&target, "{}\n").unwrap();
        let mut paths = Vec::new();
        let is_link = |i: usize| i % 50 == 7;
        for i in 0..3 * LIST_FOLDER_AFTER {
            let p = store.join(format!("s{i:04}.jsonl"));
            if is_link(i) {
                std::os::unix::fs::symlink(&target, &p).unwrap();
            } else {
                std::fs::write(&p, "{}\n").unwrap();
            }
            paths.push(p);
        }
        // Reached through a link to the folder, too.
        let via = tmp.path().join("via");
        std::os::unix::fs::symlink(&store, &via).unwrap();
        paths.extend((0..2 * LIST_FOLDER_AFTER).map(|i| via.join(format!("s{i:04}.jsonl"))));

        let shared = Folders::default();
        let real = target.canonicalize().unwrap();
        let mut links = 0;
        for p in &paths {
            let got = shared.canonical(p);
            assert_eq!(got, Folders::default().canonical(p), "{}", p.display());
            assert_eq!(got, p.canonicalize().unwrap(), "{}", p.display());
            links += usize::from(got == real);
        }
        // The folder was listed (past the first files) and found the links.
        let known = shared.0.lock().unwrap();
        let listed = &known[store.as_os_str()];
        let in_store = (0..3 * LIST_FOLDER_AFTER).filter(|&i| is_link(i)).count();
        assert!(
            listed.links.as_ref().is_some_and(|l| l.len() == in_store),
            "{:?}",
            listed.links
        );
        let via_links = (0..2 * LIST_FOLDER_AFTER).filter(|&i| is_link(i)).count();
        assert_eq!(links, in_store + via_links);
    }

    /// Folders told what the store's listing found resolve every path as
    /// a file-by-file look does, from the first file on (no listing of
    /// their own): links to files elsewhere, a dangling link (a listing
    /// problem) and a name that is no session's.
    #[test]
    fn folders_told_by_the_store_listing_resolve_as_one_file_at_a_time_does() {
        use arbor_store::{list_store, Agent, Scope, StoreConfig, StoreKind, StoreRoot};
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("sessions");
        let (a, b) = (root.join("--a--"), root.join("--b--"));
        let elsewhere = tmp.path().join("elsewhere");
        for d in [&a, &b, &elsewhere] {
            std::fs::create_dir_all(d).unwrap();
        }
        let target = elsewhere.join("real.jsonl");
        std::fs::write(&target, "{}\n").unwrap();
        let mut paths = Vec::new();
        for (n, dir) in [&a, &b].into_iter().enumerate() {
            for i in 0..40 {
                let p = dir.join(format!("s{i:02}.jsonl"));
                if i % 9 == n + 1 {
                    std::os::unix::fs::symlink(&target, &p).unwrap();
                } else {
                    std::fs::write(&p, "{}\n").unwrap();
                }
                paths.push(p);
            }
        }
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), a.join("dangling.jsonl")).unwrap();
        std::os::unix::fs::symlink(&target, b.join("notes.txt")).unwrap();
        paths.push(b.join("notes.txt"));
        let config = StoreConfig {
            roots: vec![StoreRoot {
                path: root,
                kind: StoreKind::PerProject,
                agent: Agent::Atomic,
                host: None,
            }],
        };
        let listing = list_store(&config, &Scope::All);
        assert_eq!(listing.files.len(), 80, "{:?}", listing.problems);
        assert_eq!(listing.problems.len(), 1, "the dangling link");
        let links: usize = listing.folders.iter().map(|f| f.links.len()).sum();
        assert_eq!(
            links,
            5 + 5 + 1,
            "the dangling one too: {:?}",
            listing.folders
        );
        let told = Folders::default();
        told.listed(&listing.folders);
        let real = target.canonicalize().unwrap();
        let mut resolved_links = 0;
        for p in &paths {
            let got = told.canonical(p);
            assert_eq!(got, Folders::default().canonical(p), "{}", p.display());
            assert_eq!(got, p.canonicalize().unwrap(), "{}", p.display());
            resolved_links += usize::from(got == real);
        }
        assert_eq!(
            resolved_links,
            5 + 5 + 1,
            "five links per folder and the text file"
        );
        let known = told.0.lock().unwrap();
        assert!(
            known.values().all(|f| f.asked == 0),
            "no folder counted asks"
        );
    }

    /// Clones share what they resolved (the loader's threads each hold one).
    #[test]
    fn clones_share_the_folders_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.jsonl");
        std::fs::write(&p, "{}\n").unwrap();
        let a = Folders::default();
        let b = a.clone();
        b.canonical(&p);
        assert!(a.0.lock().unwrap().contains_key(tmp.path().as_os_str()));
    }
}
