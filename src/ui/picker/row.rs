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
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::search::doc::FIRST_MESSAGE_SCORED;
use crate::search::SearchDoc;
use crate::session::agent::Agent;
use crate::session::info::{resume_target, SessionInfo, NO_MESSAGES};
use crate::session::reader::Diagnostics;
use crate::util::shared_path::SharedPath;

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

fn boxed(s: Option<String>) -> Option<Box<str>> {
    s.map(String::into_boxed_str)
}

impl Row {
    /// Builds a row; resolves symlinks, so call it off the UI thread.
    pub fn new(info: SessionInfo) -> Row {
        Row::with_dirs(info, &mut Folders::default())
    }

    /// Like [`Row::new`], resolving each folder once across rows: rows of
    /// 10,000 sessions need 10,000 canonical paths, and a full `realpath`
    /// per file cost the first screen tens of milliseconds.
    pub fn with_dirs(info: SessionInfo, dirs: &mut Folders) -> Row {
        let resolved = dirs.canonical(&info.path);
        let canonical = if resolved == *info.path {
            info.path.clone()
        } else {
            resolved.into()
        };
        let parent_canonical = info
            .parent_session_path
            .as_deref()
            .map(|p| dirs.canonical(Path::new(p)));
        let doc = Arc::new(SearchDoc::from_info(&info));
        // What the picker keeps of each session is bounded by what it can
        // show, not by the session's text: the body lives on in the search
        // document (normalized), and of the first prompt the preview shows
        // at most a few lines, of which the document already holds the
        // start (one copy of it, not two: ~40 MB at 100,000 sessions).
        let has_first = info.first_message.is_some();
        let first_rest = info.first_message.and_then(|first| {
            let kept = doc.first_message().map_or(0, str::len);
            let rest = first.get(kept..).filter(|r| !r.is_empty())?;
            let cut = rest
                .char_indices()
                .nth(FIRST_PROMPT_KEPT - FIRST_MESSAGE_SCORED)
                .map_or(rest.len(), |(i, _)| i);
            Some(Box::from(&rest[..cut]))
        });
        let diagnostics =
            (info.diagnostics != Diagnostics::default()).then(|| Box::new(info.diagnostics));
        Row {
            info: RowInfo {
                path: info.path,
                created: info.created.into_boxed_str(),
                modified_ms: info.modified_ms,
                file_mtime_ms: info.file_mtime_ms,
                message_count: info.message_count,
                parent_session_path: boxed(info.parent_session_path),
                last_reply: boxed(info.last_reply),
                git_branch: boxed(info.git_branch),
                models: crate::util::intern::list(info.models.iter().map(String::as_str)),
                total_tokens: info.total_tokens,
                total_cost: info.total_cost,
                diagnostics,
                agent: info.agent,
                internal: info.internal,
            },
            first_rest,
            has_first,
            canonical,
            parent_canonical,
            doc,
        }
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

/// Canonical folders already resolved, for [`Row::with_dirs`].
#[derive(Default)]
pub struct Folders(HashMap<PathBuf, Option<PathBuf>>);

impl Folders {
    /// `path` with symlinks resolved: its folder's canonical form joined
    /// with its name, or the whole path resolved when it is a link itself
    /// (one `lstat`, much cheaper than resolving every component again).
    fn canonical(&mut self, path: &Path) -> PathBuf {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        };
        let dir_canon = self
            .0
            .entry(dir.to_path_buf())
            .or_insert_with(|| dir.canonicalize().ok())
            .clone();
        match dir_canon {
            // A missing folder (a link to another machine's session): kept
            // as written.
            None => path.to_path_buf(),
            Some(d) => {
                let joined = d.join(name);
                if std::fs::symlink_metadata(&joined).is_ok_and(|m| m.file_type().is_symlink()) {
                    joined.canonicalize().unwrap_or(joined)
                } else {
                    joined
                }
            }
        }
    }
}
