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
mod walk;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::entry::{Entry, Header};
use crate::reader::{parse_object, parse_session};
use crate::tree::SessionTree;
use crate::{Error, Result};

use html::Html;
use jsonl::json_lines;
use light::light_scan;
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
/// session's leaf when `None`).
///
/// A version 3 file is read in two passes, so that a session of tens of
/// megabytes never sits in memory as parsed JSON: the first pass takes
/// only the fields the tree is built from (see [`light_scan`]), the second
/// parses the branch's lines one at a time as they are written out. Other
/// files (v1/v2, which need migrating) are read whole.
pub fn export_file(
    path: &Path,
    leaf_id: Option<&str>,
    format: ExportFormat,
    opts: ExportOptions,
) -> Result<Rendered> {
    export_file_with(path, leaf_id, format, opts, true)
}

/// [`export_file`] through the full reader only (the reference the
/// two-pass read is tested against).
#[doc(hidden)]
pub fn export_file_full(
    path: &Path,
    leaf_id: Option<&str>,
    format: ExportFormat,
    opts: ExportOptions,
) -> Result<Rendered> {
    export_file_with(path, leaf_id, format, opts, false)
}

fn export_file_with(
    path: &Path,
    leaf_id: Option<&str>,
    format: ExportFormat,
    opts: ExportOptions,
    two_pass: bool,
) -> Result<Rendered> {
    let buf = crate::open::read_session_bytes(path)?;
    let find_leaf = |tree: &SessionTree| -> Result<Option<usize>> {
        match leaf_id {
            // An id or a unique id prefix, as the CLI takes entries.
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
    };
    if let Some(light) = two_pass.then(|| light_scan(&buf)).flatten() {
        let tree = SessionTree::from_entries(&light.entries);
        let leaf = find_leaf(&tree)?;
        let branch = leaf.map(|l| tree.path_to(l)).unwrap_or_default();
        let get = |i: usize| -> Option<Cow<'_, Entry>> {
            let (start, end, _) = light.lines[i];
            let mut lossy = false;
            let raw = parse_object(&buf[start..end], &mut lossy)?;
            Some(Cow::Owned(Entry::new(light.entries[i].index, raw)))
        };
        // A line the strict parser took as it is can be copied verbatim.
        let raw_line = |i: usize| -> Option<&str> {
            let (start, end, strict) = light.lines[i];
            strict
                .then(|| std::str::from_utf8(&buf[start..end]).ok())
                .flatten()
        };
        return Ok(render(
            &light.header,
            &tree,
            &branch,
            &get,
            &raw_line,
            format,
            opts,
            buf.len(),
        ));
    }
    let session = parse_session(path, &buf)?;
    let size = buf.len();
    drop(buf);
    let tree = SessionTree::build(&session);
    let leaf = find_leaf(&tree)?;
    let branch = leaf.map(|l| tree.path_to(l)).unwrap_or_default();
    let get = |i: usize| Some(Cow::Borrowed(&session.entries[i]));
    Ok(render(
        &session.header,
        &tree,
        &branch,
        &get,
        &|_| None,
        format,
        opts,
        size,
    ))
}

/// An entry of the branch, parsed on demand.
type GetEntry<'g, 'e> = &'g dyn Fn(usize) -> Option<Cow<'e, Entry>>;

/// `size`: the file's size, which the output is reserved at (growing a
/// string of tens of megabytes by doubling costs more than writing it).
#[allow(clippy::too_many_arguments)]
fn render<'e>(
    header: &Header,
    tree: &SessionTree,
    branch: &[usize],
    get: GetEntry<'_, 'e>,
    raw_line: &dyn Fn(usize) -> Option<&'e str>,
    format: ExportFormat,
    opts: ExportOptions,
    size: usize,
) -> Rendered {
    match format {
        ExportFormat::Json => Rendered {
            parts: vec![json_lines(branch, get, raw_line, opts, size)],
        },
        ExportFormat::Markdown => {
            let mut md = Markdown::default();
            md.out.reserve(size);
            let doc = walk(header, tree, branch, get, opts, &mut md);
            md.end();
            let mut head = md.head(&doc);
            if !md.out.is_empty() {
                head.push('\n');
            }
            Rendered {
                parts: vec![head, md.out],
            }
        }
        ExportFormat::Html => {
            let mut h = Html::default();
            h.out.reserve(size + size / 8);
            let doc = walk(header, tree, branch, get, opts, &mut h);
            h.end();
            Rendered {
                parts: vec![h.head(&doc), h.out],
            }
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
