//! A branch of a session as a readable document: Markdown, one
//! self-contained HTML file, or the raw entries as JSON Lines.
//!
//! The branch is the root → leaf path, and every entry on it is shown —
//! also what a compaction later replaced in the model's context (the
//! compaction itself is marked where it happened), since an export is a
//! record of the conversation, not of what the model saw last.
//!
//! Session text is untrusted. In HTML all of it is escaped (text nodes and
//! attribute values alike), the page carries no script and a Content
//! Security Policy that forbids any, so nothing in a session can run code or
//! close an element arbor opened. In Markdown, message text stays Markdown
//! but tag-like `<` outside code is written as `&lt;` (raw HTML would
//! otherwise pass through to a viewer) and a code fence left open is
//! closed at the end of its message; tool calls, tool output and other
//! verbatim text go in fences longer than any backtick run they contain.
//! Terminal escape sequences are removed and other control characters
//! dropped, so the output is also safe to print on a terminal.
//!
//! The output depends only on the file: no time of the export, dates from
//! the entries in one fixed UTC format.

mod clean;
mod html;
mod jsonl;
mod light;
mod markdown;
mod spill;
mod walk;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::entry::{Entry, Header};
use crate::reader::{parse_session, Session};
use crate::tree::SessionTree;
use crate::{Error, Result};

use html::Html;
use jsonl::json_lines;
use markdown::Markdown;
use walk::walk;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExportFormat {
    #[default]
    Markdown,
    Html,
    /// The branch's entries as JSON Lines.
    Json,
}

impl ExportFormat {
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Html => "html",
            ExportFormat::Json => "jsonl",
        }
    }

    /// The format a file name asks for (`.html`, `.jsonl`, `.md`, …).
    pub fn from_file_name(name: &str) -> Option<ExportFormat> {
        let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
        match ext.as_str() {
            "md" | "markdown" => Some(ExportFormat::Markdown),
            "html" | "htm" => Some(ExportFormat::Html),
            "jsonl" | "json" => Some(ExportFormat::Json),
            _ => None,
        }
    }
}

impl std::str::FromStr for ExportFormat {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "md" | "markdown" => Ok(Self::Markdown),
            "html" => Ok(Self::Html),
            "json" | "jsonl" => Ok(Self::Json),
            other => Err(Error::UnknownFormat(other.to_string())),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportOptions {
    /// Include the assistant's thinking blocks.
    pub thinking: bool,
}

/// The file name arbor picks for an export: `<session id>-<leaf id, 8
/// characters>.<ext>`, reduced to characters safe in any file system.
pub fn default_file_name(session_id: &str, leaf_id: Option<&str>, format: ExportFormat) -> String {
    fn safe(s: &str, max: usize) -> String {
        s.chars()
            .filter(|c| !c.is_control())
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(max)
            .collect()
    }
    let mut name = safe(session_id, 64);
    if name.is_empty() {
        name.push_str("session");
    }
    if let Some(leaf) = leaf_id {
        name.push('-');
        name.push_str(&safe(leaf, 8));
    }
    name.push('.');
    name.push_str(format.extension());
    name
}

/// A rendered export, in pieces (the branch can be tens of megabytes: the
/// pieces are written out rather than copied into one string).
#[derive(Debug, Default)]
pub struct Rendered {
    parts: Vec<String>,
}

impl Rendered {
    fn from_bytes(bytes: Vec<u8>) -> Rendered {
        let text = String::from_utf8(bytes)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        Rendered { parts: vec![text] }
    }

    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        for p in &self.parts {
            w.write_all(p.as_bytes())?;
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.parts.iter().map(String::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Display for Rendered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.parts.iter().try_for_each(|p| f.write_str(p))
    }
}

/// Writes `doc` into `dir` as `file_name`, or as `stem-2.ext`, `stem-3.ext`…
/// when that exists: an existing file is never replaced. Returns the path.
/// When all 999 names are taken, a [`Error::CreateFile`] saying so.
pub fn write_in_dir(dir: &Path, file_name: &str, doc: &Rendered) -> Result<PathBuf> {
    let (stem, ext) = file_name.rsplit_once('.').unwrap_or((file_name, ""));
    for n in 1..=999 {
        let name = match (n, ext) {
            (1, _) => file_name.to_string(),
            (_, "") => format!("{stem}-{n}"),
            _ => format!("{stem}-{n}.{ext}"),
        };
        let path = dir.join(name);
        match crate::fileops::write_new(&path, false, |f| doc.write_to(f)) {
            Ok(()) => return Ok(path),
            Err(Error::CreateFile(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(Error::CreateFile(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{file_name} and 998 numbered variants exist"),
    )))
}

/// Reads `path` and renders the branch ending at the entry `leaf_id` (the
/// session's leaf when `None`), in memory (the tree's export; the command
/// line writes [`Export::write`] out instead).
pub fn export_file(
    path: &Path,
    leaf_id: Option<&str>,
    format: ExportFormat,
    opts: ExportOptions,
) -> Result<Rendered> {
    let export = Export::open(path, leaf_id)?;
    let mut out = Vec::new();
    export
        .write(format, opts, &mut out)
        .map_err(|source| Error::Read {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(Rendered::from_bytes(out))
}

/// [`export_file`] through the full reader only (the reference the lean
/// read is tested against).
#[doc(hidden)]
pub fn export_file_full(
    path: &Path,
    leaf_id: Option<&str>,
    format: ExportFormat,
    opts: ExportOptions,
) -> Result<Rendered> {
    let buf = crate::open::read_session_bytes(path)?;
    let session = parse_session(path, &buf)?;
    drop(buf);
    let tree = SessionTree::build(&session);
    let leaf = find_leaf(path, &tree, leaf_id)?;
    let branch = leaf.map(|l| tree.path_to(l)).unwrap_or_default();
    let get = |i: usize| Some(Cow::Borrowed(&session.entries[i]));
    let may_think = |i: usize| session.entries[i].role() == Some("assistant");
    let mut out = Vec::new();
    let io = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let branch = Branch {
        header: &session.header,
        tree: &tree,
        entries: &branch,
        get: &get,
        raw_line: &|_| None,
        may_think: &may_think,
    };
    render(&branch, format, opts, &mut out).map_err(io)?;
    Ok(Rendered::from_bytes(out))
}

/// The entry `leaf_id` names (an id or a unique id prefix, as the command
/// line takes entries), else the session's leaf.
fn find_leaf(path: &Path, tree: &SessionTree, leaf_id: Option<&str>) -> Result<Option<usize>> {
    match leaf_id {
        Some(id) => match tree.resolve_id(id) {
            Ok(i) => Ok(Some(i)),
            Err(Error::UnknownEntryId(_)) => Err(Error::NoSuchEntry {
                id: id.to_string(),
                path: path.to_path_buf(),
            }),
            Err(source) => Err(Error::AmbiguousEntryIn {
                path: path.to_path_buf(),
                source: Box::new(source),
            }),
        },
        None => Ok(tree.leaf),
    }
}

/// A branch of a session, read and ready to be written: the session is
/// read lean (each entry's facts and where its line is), and the branch's
/// lines are parsed one at a time as they are written out, so that memory
/// follows the longest entry, not the session.
pub struct Export {
    session: Session,
    tree: SessionTree,
    branch: Vec<usize>,
}

impl Export {
    /// Reads `path` and finds the branch ending at `leaf_id` (the
    /// session's leaf when `None`).
    pub fn open(path: &Path, leaf_id: Option<&str>) -> Result<Export> {
        let session = crate::reader::read_session_lean(path)?;
        let tree = SessionTree::build(&session);
        let leaf = find_leaf(path, &tree, leaf_id)?;
        let branch = leaf.map(|l| tree.path_to(l)).unwrap_or_default();
        Ok(Export {
            session,
            tree,
            branch,
        })
    }

    /// Writes the branch to `w` as `format`.
    pub fn write(
        &self,
        format: ExportFormat,
        opts: ExportOptions,
        w: &mut dyn std::io::Write,
    ) -> std::io::Result<()> {
        let entries = &self.session.entries;
        // An entry read from its line is parsed for this use only; one
        // the reader holds parsed (a migrated file) is lent.
        let get = |i: usize| -> Option<Cow<'_, Entry>> {
            let e = &entries[i];
            match e.raw.parse_unparsed() {
                Some(raw) => Some(Cow::Owned(Entry::new(e.index, raw?))),
                None => Some(Cow::Borrowed(e)),
            }
        };
        let raw_line = |i: usize| -> Option<String> {
            // The line read for this use is handed over, not copied (a
            // line of 200 MB was held twice).
            let line = entries[i].raw.unparsed_line_owned()?;
            if !light::is_strict(&line) {
                return None;
            }
            String::from_utf8(line).ok()
        };
        let may_think = |i: usize| entries[i].role() == Some("assistant");
        let branch = Branch {
            header: &self.session.header,
            tree: &self.tree,
            entries: &self.branch,
            get: &get,
            raw_line: &raw_line,
            may_think: &may_think,
        };
        render(&branch, format, opts, w)
    }
}

/// An entry of the branch, parsed on demand.
type GetEntry<'g, 'e> = &'g dyn Fn(usize) -> Option<Cow<'e, Entry>>;

/// An entry's line as it is in the file, when the strict parser takes it
/// as it is (then it can be copied verbatim).
type RawLine<'g> = &'g dyn Fn(usize) -> Option<String>;

/// What an export is written from.
struct Branch<'g, 'e> {
    header: &'g Header,
    tree: &'g SessionTree,
    entries: &'g [usize],
    get: GetEntry<'g, 'e>,
    raw_line: RawLine<'g>,
    may_think: &'g dyn Fn(usize) -> bool,
}

/// Writes `b` to `w` as `format`: JSON Lines a line at a time; Markdown
/// and HTML with their head first, the body (rendered before it) from a
/// scratch file.
fn render(
    b: &Branch<'_, '_>,
    format: ExportFormat,
    opts: ExportOptions,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        ExportFormat::Json => json_lines(b.entries, b.get, b.raw_line, b.may_think, opts, w),
        ExportFormat::Markdown => {
            let mut md = Markdown::default();
            let doc = walk(b.header, b.tree, b.entries, b.get, opts, &mut md)?;
            md.end();
            let mut head = md.head(&doc);
            if !md.out.is_empty() {
                head.push('\n');
            }
            w.write_all(head.as_bytes())?;
            std::mem::take(&mut md.spill).finish(&md.out, w)
        }
        ExportFormat::Html => {
            let mut h = Html::default();
            let doc = walk(b.header, b.tree, b.entries, b.get, opts, &mut h)?;
            h.end();
            w.write_all(h.head(&doc).as_bytes())?;
            std::mem::take(&mut h.spill).finish(&h.out, w)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_format_names_the_known_ones() {
        let e = "pdf".parse::<ExportFormat>().unwrap_err();
        assert_eq!(e.to_string(), "unknown format \"pdf\" (md, html or json)");
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(
            default_file_name("01a2-b", Some("abcdef1234"), ExportFormat::Html),
            "01a2-b-abcdef12.html"
        );
        assert_eq!(
            default_file_name("../x\u{1b}/y", None, ExportFormat::Markdown),
            "___x_y.md"
        );
    }
}
