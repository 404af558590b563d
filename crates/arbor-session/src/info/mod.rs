//! List-row facts of a session in one streaming pass (docs/spec.md §4).
//!
//! This is the hot path of every listing: lines are probed with borrowed
//! `RawValue` fields, so large tool results and images are skipped without
//! being decoded, and no tree is built. The scanner can be resumed on
//! appended bytes, which is how the index and the watcher stay incremental.

pub mod extras;
mod figures;
mod json_row;
mod probe;
mod raw;
mod scan;
mod scanner;

pub use json_row::{JsonDiagnostics, JsonRow};
pub use scan::{
    mtime_ms, read_lines, read_lines_capped, read_whole, scan_foreign, scan_info, scan_info_bytes,
    scan_info_bytes_reference, scan_info_bytes_skimmed, scan_info_seeing, scan_info_with,
    with_read_buffer, LineSeer, Piece, SeenRow,
};
pub use scanner::InfoScanner;

use std::path::{Path, PathBuf};

use crate::entry::format_iso_ms;
use crate::extras::{LabelInfo, Usage};
use crate::reader::Diagnostics;

pub const NO_MESSAGES: &str = "(no messages)";

/// How many characters of the last reply's first line a row keeps (the
/// list shows a third of the screen's width of it).
pub(crate) const LAST_REPLY_CHARS: usize = 200;

/// One row of the session list, plus the preview figures.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct SessionInfo {
    pub path: arbor_util::shared_path::SharedPath,
    pub id: String,
    pub cwd: String,
    /// Trimmed name of the last `session_info` (empty after a clear).
    pub name: Option<String>,
    pub has_name: bool,
    pub created: String,
    pub modified_ms: i64,
    pub message_count: usize,
    pub first_message: Option<String>,
    pub parent_session_path: Option<String>,
    /// Latest session summary and the message id it covers.
    pub summary_candidate: Option<(String, String)>,
    /// Id of the last user/assistant message in file order.
    pub last_message_id: Option<String>,
    /// The first non-blank line of the last assistant message with text, in
    /// file order (trimmed, at most [`LAST_REPLY_CHARS`] characters): where
    /// the session left off.
    #[serde(default)]
    pub last_reply: Option<String>,
    pub internal: bool,
    /// The git branch the session was on, where its agent records it
    /// (Claude Code's `gitBranch`, the newest; Codex's
    /// `session_meta.git.branch`): the header's `gitBranch`.
    #[serde(default)]
    pub git_branch: Option<String>,
    /// User/assistant text, the searchable body of the session.
    pub all_text: String,
    /// The models the assistant used, sorted, each once. (A `Vec`: a
    /// one-model `BTreeSet` allocates a whole node, ~300 bytes a session
    /// in the picker's rows.)
    pub models: Vec<String>,
    pub total_tokens: u64,
    pub total_cost: f64,
    pub diagnostics: Diagnostics,
    /// Header timestamp missing: `modified` falls back to the file mtime.
    pub header_ms: Option<i64>,
    pub newest_message_ms: Option<i64>,
    pub file_mtime_ms: i64,
    /// The agent of the store root the file was found under (set by
    /// whoever was handed the file, never read from its contents).
    #[serde(default)]
    pub agent: crate::agent::Agent,
    /// The labels set in the file, in the order last set.
    #[serde(default)]
    pub labels: Vec<LabelInfo>,
    /// Assistant messages' usage by model and hour, all branches.
    #[serde(default)]
    pub usage: Usage,
}

impl SessionInfo {
    /// The summary, when it is fresh (covers the last user/assistant message).
    pub fn summary(&self) -> Option<&str> {
        let (text, through) = self.summary_candidate.as_ref()?;
        fresh_summary(
            Some((text.as_str(), through.as_str())),
            self.last_message_id.as_deref(),
        )
    }

    /// A stale summary exists (the row shows the placeholder).
    pub fn has_stale_summary(&self) -> bool {
        self.summary_candidate.is_some() && self.summary().is_none()
    }

    /// The name when set and not cleared.
    pub fn display_name(&self) -> Option<&str> {
        display_name(self.name.as_deref())
    }

    pub fn first_message_text(&self) -> &str {
        self.first_message.as_deref().unwrap_or(NO_MESSAGES)
    }

    /// Name, else first message: the row title.
    pub fn title(&self) -> &str {
        self.display_name()
            .unwrap_or_else(|| self.first_message_text())
    }

    pub fn modified(&self) -> String {
        format_iso_ms(self.modified_ms)
    }

    fn recompute_modified(&mut self) {
        self.modified_ms = self
            .newest_message_ms
            .or(self.header_ms)
            .unwrap_or(self.file_mtime_ms);
    }

    /// The file and id Enter resumes: the session's own, except for a
    /// Claude Code sub-agent run (an internal session of its session, see
    /// `session::foreign`), which Claude Code cannot resume alone: its
    /// session's.
    pub fn resume_target(&self) -> (PathBuf, String) {
        resume_target(
            &self.path,
            &self.id,
            self.internal,
            self.agent,
            self.parent_session_path.as_deref(),
        )
    }

    /// The row of `arbor list --json` (one JSON Lines line), borrowed from
    /// this one.
    pub fn json_row(&self) -> JsonRow<'_> {
        self.json_row_at(self.path.to_string_lossy())
    }

    /// [`SessionInfo::json_row`] with the path as text given.
    fn json_row_at<'a>(&'a self, path: std::borrow::Cow<'a, str>) -> JsonRow<'a> {
        JsonRow {
            path,
            id: &self.id,
            cwd: &self.cwd,
            name: self.display_name(),
            has_name: self.has_name,
            created: &self.created,
            modified: self.modified(),
            message_count: self.message_count,
            first_message: self.first_message_text(),
            parent_session_path: self.parent_session_path.as_deref(),
            summary: self.summary(),
            last_reply: self.last_reply.as_deref(),
            internal: self.internal,
            agent: self.agent.name(),
            git_branch: self.git_branch.as_deref(),
            diagnostics: JsonDiagnostics::of(&self.diagnostics),
        }
    }

    /// Appends the `arbor list --json` line, with its `\n`.
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        self.json_row_fast().write_line(out);
    }

    /// [`SessionInfo::json_row`] with the path checked as UTF-8 by
    /// `simdutf8` (`to_string_lossy` walks it in chunks).
    fn json_row_fast(&self) -> JsonRow<'_> {
        self.json_row_at(path_text(&self.path))
    }
}

/// A summary's text when it covers the last user or assistant message
/// (`candidate`: its text and the id it runs through).
pub fn fresh_summary<'a>(
    candidate: Option<(&'a str, &'a str)>,
    last_message_id: Option<&str>,
) -> Option<&'a str> {
    let (text, through) = candidate?;
    (last_message_id == Some(through)).then_some(text)
}

/// See [`SessionInfo::resume_target`]: the session at `path` with `id`,
/// or for a Claude Code sub-agent run its `parent` session.
pub fn resume_target(
    path: &Path,
    id: &str,
    internal: bool,
    agent: crate::agent::Agent,
    parent: Option<&str>,
) -> (PathBuf, String) {
    if let (true, crate::agent::Agent::Claude, Some(parent)) = (internal, agent, parent) {
        let p = PathBuf::from(parent);
        if let Some(id) = p.file_stem().and_then(|s| s.to_str()) {
            return (p.clone(), id.to_string());
        }
    }
    (path.to_path_buf(), id.to_string())
}

/// A path as the JSON row's text (lossy where it is not UTF-8), checked
/// by `simdutf8` (`to_string_lossy` walks it in chunks).
pub fn path_text(path: &Path) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(path.as_os_str().as_encoded_bytes()) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => path.to_string_lossy(),
    }
}

/// A name when set and not cleared.
pub fn display_name(name: Option<&str>) -> Option<&str> {
    name.filter(|n| !n.is_empty())
}
