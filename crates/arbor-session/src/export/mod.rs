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

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::fileops::NewFileError;

use crate::entry::{format_iso_ms, parse_iso_ms, Entry, Header};
use crate::jsonscan::Skim;
use crate::reader::{parse_object, parse_session, ReadError};
use crate::render::is_unsafe;
use crate::tree::SessionTree;

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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "md" | "markdown" => Ok(Self::Markdown),
            "html" => Ok(Self::Html),
            "json" | "jsonl" => Ok(Self::Json),
            other => Err(format!("unknown format {other:?} (md, html or json)")),
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

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Read(#[from] ReadError),
    #[error("no entry {id} in {path}")]
    NoEntry { id: String, path: PathBuf },
    /// `--leaf` is a prefix of more than one id.
    #[error("{path}: {source}")]
    AmbiguousEntry {
        path: PathBuf,
        source: crate::tree::EntryIdError,
    },
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
pub fn write_in_dir(dir: &Path, file_name: &str, doc: &Rendered) -> std::io::Result<PathBuf> {
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
            Err(NewFileError::Create(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                continue
            }
            Err(NewFileError::Create(e) | NewFileError::Write(e)) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{file_name} and 998 numbered variants exist"),
    ))
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
) -> Result<Rendered, ExportError> {
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
) -> Result<Rendered, ExportError> {
    export_file_with(path, leaf_id, format, opts, false)
}

fn export_file_with(
    path: &Path,
    leaf_id: Option<&str>,
    format: ExportFormat,
    opts: ExportOptions,
    two_pass: bool,
) -> Result<Rendered, ExportError> {
    let buf = crate::open::read_session_bytes(path)?;
    let find_leaf = |tree: &SessionTree| -> Result<Option<usize>, ExportError> {
        match leaf_id {
            // An id or a unique id prefix, as the CLI takes entries.
            Some(id) => match tree.resolve_id(id) {
                Ok(i) => Ok(Some(i)),
                Err(crate::tree::EntryIdError::NotFound(_)) => Err(ExportError::NoEntry {
                    id: id.to_string(),
                    path: path.to_path_buf(),
                }),
                Err(source) => Err(ExportError::AmbiguousEntry {
                    path: path.to_path_buf(),
                    source,
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

/// The fields [`SessionTree`] is built from.
const TREE_KEYS: [&str; 7] = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "targetId",
    "label",
    "name",
];

/// A session's entries with only the tree's fields, and where each line is.
struct Light {
    header: Header,
    entries: Vec<Entry>,
    /// Byte range of each entry's line, and whether the strict parser read
    /// it as it is (then its text is exactly the entry).
    lines: Vec<(usize, usize, bool)>,
}

/// The first pass over a version 3 file: the same lines as the reader
/// keeps, each entry holding only [`TREE_KEYS`], so that
/// [`SessionTree::from_entries`] builds exactly the tree a full read gives.
/// A line the skimmer refuses (invalid UTF-8, a BOM, escaped or duplicate
/// keys, surrogates, deep nesting, what only JavaScript accepts) is parsed
/// as the reader parses it. `None` when the file needs the full reader (no header, or a
/// version that needs migrating).
fn light_scan(buf: &[u8]) -> Option<Light> {
    let mut header: Option<Header> = None;
    let mut entries = Vec::new();
    let mut lines = Vec::new();
    let base = buf.as_ptr() as usize;
    for (line, _) in crate::reader::lines(buf) {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let start = line.as_ptr() as usize - base;
        let end = start + line.len();
        if header.is_none() {
            let mut lossy = false;
            let Some(obj) = parse_object(line, &mut lossy) else {
                continue;
            };
            let h = Header::from_object(obj)?;
            if h.version < 3 {
                return None;
            }
            header = Some(h);
            continue;
        }
        // The list scanner's skimmer validates exactly as strict serde_json
        // does and captures the fields' raw text without decoding the rest.
        let probe = simdutf8::basic::from_utf8(line).ok().and_then(|text| {
            let keys = TREE_KEYS.map(str::as_bytes);
            let mut out: [Option<&str>; 7] = [None; 7];
            let mut sk = Skim::new(text);
            sk.object(0, &keys, &mut out)?;
            sk.at_end().then_some(out)
        });
        let raw: Map<String, Value> = match &probe {
            Some(fields) => {
                let mut m = Map::new();
                for (k, v) in TREE_KEYS.iter().zip(fields) {
                    if let Some(v) = v.and_then(|v| serde_json::from_str::<Value>(v).ok()) {
                        m.insert((*k).to_string(), v);
                    }
                }
                m
            }
            None => {
                let mut lossy = false;
                let Some(obj) = parse_object(line, &mut lossy) else {
                    continue;
                };
                TREE_KEYS
                    .iter()
                    .filter_map(|k| Some(((*k).to_string(), obj.get(*k)?.clone())))
                    .collect()
            }
        };
        entries.push(Entry::new(entries.len() + 1, raw));
        lines.push((start, end, probe.is_some()));
    }
    Some(Light {
        header: header?,
        entries,
        lines,
    })
}

fn json_lines<'e>(
    branch: &[usize],
    get: GetEntry<'_, 'e>,
    raw_line: &dyn Fn(usize) -> Option<&'e str>,
    opts: ExportOptions,
    size: usize,
) -> String {
    let mut out = String::with_capacity(size);
    for &i in branch {
        let Some(e) = get(i) else {
            continue;
        };
        let stripped = !opts.thinking && has_thinking(&e);
        if !stripped {
            if let Some(line) = raw_line(i) {
                push_json_escaped(&mut out, line.trim());
                out.push('\n');
                continue;
            }
        }
        let line = if stripped {
            let mut raw = e.raw.clone();
            if let Some(Value::Array(blocks)) =
                raw.get_mut("message").and_then(|m| m.get_mut("content"))
            {
                blocks.retain(|b| block_type(b) != "thinking");
            }
            serde_json::to_string(&raw)
        } else {
            serde_json::to_string(&*e.raw)
        };
        if let Ok(line) = line {
            push_json_escaped(&mut out, &line);
            out.push('\n');
        }
    }
    out
}

/// DEL and C1 controls, which serde_json leaves raw (and some terminals
/// obey), as `\u` escapes; they only occur inside strings, where the escape
/// means the same.
fn push_json_escaped(out: &mut String, s: &str) {
    if !s.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
}

fn has_thinking(e: &Entry) -> bool {
    e.role() == Some("assistant")
        && matches!(
            e.message().and_then(|m| m.get("content")),
            Some(Value::Array(b)) if b.iter().any(|b| block_type(b) == "thinking")
        )
}

fn block_type(b: &Value) -> &str {
    b.get("type").and_then(Value::as_str).unwrap_or("")
}

fn str_of(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("")
}

/// `2026-11-25 13:30:26 UTC`, from an entry's ISO timestamp (or a number of
/// milliseconds). `None` when there is no readable time.
fn when(v: Option<&Value>) -> Option<String> {
    let ms = match v? {
        Value::String(s) => parse_iso_ms(s)?,
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite())? as i64,
        _ => return None,
    };
    let iso = format_iso_ms(ms);
    // 2026-11-25T13:30:26.867Z → 2026-11-25 13:30:26 UTC
    Some(format!("{} {} UTC", &iso[..10], &iso[11..19]))
}

/// Text with terminal escape sequences removed and the other characters the
/// terminal sanitizer refuses (controls but newlines and tabs, bidi
/// overrides, embeddings, isolates and marks) dropped; CR and CRLF become
/// newlines. So the document reads as what it contains, and can be printed.
pub fn clean_text(s: &str) -> Cow<'_, str> {
    let needs = s.chars().any(|c| c != '\n' && c != '\t' && is_unsafe(c));
    if !needs {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' => {
                if it.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\u{1b}' => match it.peek() {
                // CSI: parameters and intermediates, then one final byte.
                Some('[') => {
                    it.next();
                    for c in it.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&c) {
                            break;
                        }
                    }
                }
                // OSC, DCS, SOS, PM, APC: up to BEL or ST (ESC \).
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    it.next();
                    while let Some(c) = it.next() {
                        if c == '\u{7}' || c == '\u{9c}' {
                            break;
                        }
                        if c == '\u{1b}' && it.peek() == Some(&'\\') {
                            it.next();
                            break;
                        }
                    }
                }
                Some(_) => {
                    it.next();
                }
                None => {}
            },
            '\u{9b}' => {
                for c in it.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            c if is_unsafe(c) => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// One line of text (for headings and summaries): whitespace runs become one
/// space.
fn one_line(s: &str) -> String {
    clean_text(s)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn first_chars(s: &str, max: usize) -> String {
    if s.chars().count() > max {
        let mut t: String = s.chars().take(max).collect();
        t.push('…');
        t
    } else {
        s.to_string()
    }
}

/// What kind of block an entry becomes (CSS classes in HTML).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    User,
    Assistant,
    Custom,
    BranchSummary,
    Compaction,
}

impl Kind {
    fn class(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Assistant => "assistant",
            Kind::Custom => "custom",
            Kind::BranchSummary => "branch-summary",
            Kind::Compaction => "compaction",
        }
    }
}

/// The document's facts, shown at its top.
struct DocInfo {
    title: String,
    rows: Vec<(&'static str, String)>,
}

/// Where `walk` writes: Markdown or HTML.
trait Sink {
    /// A message-like section: a heading (title, time, label) then blocks.
    fn section(&mut self, kind: Kind, title: &str, time: Option<&str>, label: Option<&str>);
    /// Prose of a message (Markdown in the source).
    fn text(&mut self, text: &str);
    /// A folded verbatim block: tool calls, tool output, long summaries.
    fn fold(
        &mut self,
        title: &str,
        time: Option<&str>,
        label: Option<&str>,
        lang: &str,
        body: &str,
    );
    fn thinking(&mut self, text: &str);
    fn image(&mut self, mime: &str, data: &str);
    /// A one-line remark (model change, error, …).
    fn note(&mut self, text: &str, time: Option<&str>);
}

/// Renders the branch into `s`; returns the document's facts (its head is
/// written last, since the title and models come from the branch).
fn walk<'e>(
    header: &Header,
    tree: &SessionTree,
    branch: &[usize],
    get: GetEntry<'_, 'e>,
    opts: ExportOptions,
    s: &mut dyn Sink,
) -> DocInfo {
    // Tool names by call id, from the calls made so far on this branch.
    let mut calls: HashMap<String, String> = HashMap::new();
    let mut first_user: Option<String> = None;
    let mut models: Vec<String> = Vec::new();
    for &i in branch {
        let Some(e) = get(i) else {
            continue;
        };
        let e: &Entry = &e;
        if let Some(m) = e.message() {
            if e.role() == Some("assistant") {
                let model = one_line(str_of(m.get("model")));
                if !model.is_empty() && !models.contains(&model) {
                    models.push(model);
                }
                if let Some(Value::Array(blocks)) = m.get("content") {
                    for b in blocks.iter().filter(|b| block_type(b) == "toolCall") {
                        if let (Some(id), Some(name)) = (
                            b.get("id").and_then(Value::as_str),
                            b.get("name").and_then(Value::as_str),
                        ) {
                            calls.insert(id.to_string(), name.to_string());
                        }
                    }
                }
            } else if e.role() == Some("user") && first_user.is_none() {
                let t = crate::entry::content_text(m.get("content"), " ");
                if !t.trim().is_empty() {
                    first_user = Some(t);
                }
            }
        }
        let time = when(e.raw.get("timestamp"));
        let time = time.as_deref();
        let label = tree.labels.get(&e.id).map(|l| one_line(&l.text));
        let label = label.as_deref();
        match e.entry_type() {
            "message" => message(e, time, label, &calls, opts, s),
            "custom_message" => {
                let title = format!("Custom message: {}", str_of(e.raw.get("customType")));
                s.section(Kind::Custom, &one_line(&title), time, label);
                content(e.raw.get("content"), s);
            }
            "branch_summary" => {
                let summary = str_of(e.raw.get("summary"));
                s.section(Kind::BranchSummary, "Branch summary", time, label);
                if summary.trim().is_empty() {
                    s.note("Branched here (no summary of the abandoned branch).", None);
                } else {
                    s.text(summary);
                }
            }
            "compaction" => compaction(e, time, label, s),
            "model_change" => {
                let provider = str_of(e.raw.get("provider"));
                let model = str_of(e.raw.get("modelId"));
                let m = if provider.is_empty() {
                    model.to_string()
                } else {
                    format!("{provider}/{model}")
                };
                s.note(&format!("Model: {}", one_line(&m)), time);
            }
            "thinking_level_change" => {
                let level = match e.raw.get("thinkingLevel") {
                    Some(Value::String(l)) => l.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                s.note(&format!("Thinking level: {}", one_line(&level)), time);
            }
            "session_info" => {
                let name = one_line(str_of(e.raw.get("name")));
                if name.is_empty() {
                    s.note("Session name cleared", time);
                } else {
                    s.note(&format!("Session named: {name}"), time);
                }
            }
            // Labels show on their targets; extension state, summaries for
            // the picker and settings are not part of the conversation.
            _ => {}
        }
    }
    let title = tree
        .display_name()
        .map(one_line)
        .or_else(|| first_user.map(|t| first_chars(&one_line(&t), 80)))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| one_line(&header.id));
    let mut rows = vec![("Session", one_line(&header.id))];
    if let Some(cwd) = header.cwd() {
        rows.push(("Directory", one_line(cwd)));
    }
    if let Some(t) = when(header.raw.get("timestamp")) {
        rows.push(("Started", t));
    }
    if let Some(&leaf) = branch.last() {
        let id = get(leaf).map(|e| one_line(&e.id)).unwrap_or_default();
        let mut b = format!("{} entries, root → {id}", branch.len());
        if tree.leaf != Some(leaf) {
            b.push_str(" (not the session's current leaf)");
        }
        rows.push(("Branch", b));
    }
    if !models.is_empty() {
        rows.push(("Models", models.join(", ")));
    }
    DocInfo { title, rows }
}

fn message(
    e: &Entry,
    time: Option<&str>,
    label: Option<&str>,
    calls: &HashMap<String, String>,
    opts: ExportOptions,
    s: &mut dyn Sink,
) {
    let Some(m) = e.message() else {
        return;
    };
    match str_of(m.get("role")) {
        "user" => {
            s.section(Kind::User, "User", time, label);
            content(m.get("content"), s);
        }
        "assistant" => {
            let model = one_line(str_of(m.get("model")));
            let title = if model.is_empty() {
                "Assistant".to_string()
            } else {
                format!("Assistant · {model}")
            };
            s.section(Kind::Assistant, &title, time, label);
            match m.get("content") {
                Some(Value::String(t)) => s.text(t),
                Some(Value::Array(blocks)) => {
                    for b in blocks {
                        match block_type(b) {
                            "text" => s.text(str_of(b.get("text"))),
                            "thinking" if opts.thinking => s.thinking(str_of(b.get("thinking"))),
                            "toolCall" => {
                                let name = one_line(str_of(b.get("name")));
                                let args = b
                                    .get("arguments")
                                    .map(|a| serde_json::to_string_pretty(a).unwrap_or_default())
                                    .unwrap_or_default();
                                s.fold(&format!("Tool call: {name}"), None, None, "json", &args);
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            if str_of(m.get("stopReason")) == "aborted" {
                s.note("(aborted)", None);
            } else if let Some(err) = m.get("errorMessage").and_then(Value::as_str) {
                s.note(&format!("Error: {}", one_line(err)), None);
            }
        }
        "toolResult" => {
            let call = str_of(m.get("toolCallId"));
            let name = calls
                .get(call)
                .map(String::as_str)
                .or_else(|| m.get("toolName").and_then(Value::as_str))
                .unwrap_or("tool");
            let mut title = format!("Tool result: {}", one_line(name));
            if m.get("isError") == Some(&Value::Bool(true)) {
                title.push_str(" (error)");
            }
            let (text, images) = content_parts(m.get("content"));
            s.fold(&title, time, label, "text", &text);
            for (mime, data) in images {
                s.image(mime, data);
            }
        }
        "bashExecution" => {
            let cmd = one_line(str_of(m.get("command")));
            let mut body = str_of(m.get("output")).to_string();
            if let Some(code) = m.get("exitCode").and_then(Value::as_i64) {
                if !body.is_empty() && !body.ends_with('\n') {
                    body.push('\n');
                }
                let _ = write!(body, "(exit code {code})");
            }
            s.fold(&format!("Bash: $ {cmd}"), time, label, "text", &body);
        }
        "custom" => {
            let title = format!("Custom message: {}", str_of(m.get("customType")));
            s.section(Kind::Custom, &one_line(&title), time, label);
            content(m.get("content"), s);
        }
        "branchSummary" => {
            s.section(Kind::BranchSummary, "Branch summary", time, label);
            s.text(str_of(m.get("summary")));
        }
        "compactionSummary" => {
            s.section(Kind::Compaction, "Compaction summary", time, label);
            s.fold("Summary", None, None, "text", str_of(m.get("summary")));
        }
        other => {
            let title = format!("Message: {other}");
            s.section(Kind::Custom, &one_line(&title), time, label);
            content(m.get("content"), s);
        }
    }
}

fn compaction(e: &Entry, time: Option<&str>, label: Option<&str>, s: &mut dyn Sink) {
    let mut title = "Compaction".to_string();
    if let Some(t) = e.raw.get("tokensBefore").and_then(Value::as_f64) {
        let _ = write!(title, " · {}k tokens before", (t / 1000.0).round() as i64);
    }
    let strategy = e
        .raw
        .get("details")
        .and_then(|d| d.get("strategy"))
        .and_then(Value::as_str);
    if let Some(st) = strategy {
        let _ = write!(title, " · {}", one_line(st));
    }
    s.section(Kind::Compaction, &title, time, label);
    let kept = match e.raw.get("firstKeptEntryId").and_then(Value::as_str) {
        Some(id) => format!("kept from entry {}", one_line(id)),
        None => "nothing kept".to_string(),
    };
    s.note(
        &format!("The agent's context was compacted here ({kept}); the entries above stay in this export."),
        None,
    );
    let summary = match e.raw.get("summary") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    if !summary.is_empty() {
        s.fold("Summary", None, None, "text", &summary);
    }
}

/// A `content` value's text blocks joined, and its images.
fn content_parts(v: Option<&Value>) -> (String, Vec<(&str, &str)>) {
    let mut text = String::new();
    let mut images = Vec::new();
    match v {
        Some(Value::String(t)) => text.push_str(t),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match block_type(b) {
                    "text" => {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(str_of(b.get("text")));
                    }
                    "image" => images.push((str_of(b.get("mimeType")), str_of(b.get("data")))),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    (text, images)
}

/// A user or custom message's content: text blocks as prose, images.
fn content(v: Option<&Value>, s: &mut dyn Sink) {
    match v {
        Some(Value::String(t)) => s.text(t),
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match block_type(b) {
                    "text" => s.text(str_of(b.get("text"))),
                    "image" => s.image(str_of(b.get("mimeType")), str_of(b.get("data"))),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn image_kb(data: &str) -> usize {
    // base64: 4 characters carry 3 bytes.
    (data.len() * 3 / 4).div_ceil(1024)
}

// ---------------------------------------------------------------- Markdown

#[derive(Default)]
struct Markdown {
    out: String,
}

/// Inline text that Markdown shows literally (headings, labels, names):
/// the characters that can start emphasis, links, code, HTML, entities,
/// tables or a heading's closing sequence are backslash-escaped (every
/// place this goes is already inside a paragraph, heading or list item, so
/// line-start markers such as `-` or `1.` need nothing).
fn md_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '#' | '&' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        if c == ch {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// A fence opener or closer: up to three spaces, then three or more of
/// one fence character. Returns (character, length, rest of the line).
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.len() - rest.trim_start_matches(ch).len();
    (n >= 3).then(|| (ch, n, &rest[n..]))
}

/// `<` that would start a tag or comment in a Markdown viewer's HTML.
fn tag_like(next: Option<char>) -> bool {
    next.is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'))
}

/// A line of prose with tag-like `<` escaped outside code spans.
fn md_prose_line(line: &str, out: &mut String) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            let n = chars[i..].iter().take_while(|&&c| c == '`').count();
            // A code span closes on a run of exactly n backticks.
            let mut j = i + n;
            let mut close = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let m = chars[j..].iter().take_while(|&&c| c == '`').count();
                    if m == n {
                        close = Some(j + m);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            let end = close.unwrap_or(i + n);
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        if c == '\\' && i + 1 < chars.len() {
            out.push(c);
            out.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '<' && tag_like(chars.get(i + 1).copied()) {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
        i += 1;
    }
}

/// Message text as Markdown: escaped as described in the module docs, with
/// `prefix` before every line (`> ` in a quote).
fn md_block(text: &str, prefix: &str, out: &mut String) {
    let text = clean_text(text);
    let text = text.trim_end();
    let mut open: Option<(char, usize)> = None;
    for line in text.split('\n') {
        out.push_str(prefix);
        match open {
            Some((ch, n)) => {
                out.push_str(line);
                if let Some((c, m, rest)) = fence_of(line) {
                    if c == ch && m >= n && rest.trim().is_empty() {
                        open = None;
                    }
                }
            }
            None => {
                if let Some((c, n, rest)) = fence_of(line) {
                    // A backtick fence's info string cannot hold a backtick.
                    if !(c == '`' && rest.contains('`')) {
                        open = Some((c, n));
                        out.push_str(line);
                        out.push('\n');
                        continue;
                    }
                }
                md_prose_line(line, out);
            }
        }
        out.push('\n');
    }
    if let Some((ch, n)) = open {
        out.push_str(prefix);
        out.extend(std::iter::repeat_n(ch, n));
        out.push('\n');
    }
}

impl Markdown {
    fn blank(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    fn fenced(&mut self, lang: &str, body: &str) {
        let body = clean_text(body);
        let n = (longest_run(&body, '`') + 1).max(3);
        let fence = "`".repeat(n);
        self.blank();
        let _ = writeln!(self.out, "{fence}{lang}");
        self.out.push_str(body.trim_end_matches('\n'));
        self.out.push('\n');
        let _ = writeln!(self.out, "{fence}");
    }

    fn heading(&mut self, level: usize, title: &str, time: Option<&str>, label: Option<&str>) {
        self.blank();
        self.out.push_str(&"#".repeat(level));
        self.out.push(' ');
        self.out.push_str(&md_inline(title));
        if let Some(t) = time {
            let _ = write!(self.out, " · {}", md_inline(t));
        }
        if let Some(l) = label {
            let _ = write!(self.out, " · 🏷 {}", md_inline(l));
        }
        self.out.push('\n');
    }
}

impl Markdown {
    fn head(&self, doc: &DocInfo) -> String {
        let mut out = format!("# {}\n\n", md_inline(&doc.title));
        for (k, v) in &doc.rows {
            let _ = writeln!(out, "- **{k}:** {}", md_inline(v));
        }
        out
    }

    fn end(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }
}

impl Sink for Markdown {
    fn section(&mut self, kind: Kind, title: &str, time: Option<&str>, label: Option<&str>) {
        self.blank();
        self.out.push_str("---\n");
        let title = match kind {
            Kind::Compaction | Kind::BranchSummary => format!("⟲ {title}"),
            _ => title.to_string(),
        };
        self.heading(2, &title, time, label);
    }

    fn text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.blank();
        md_block(text, "", &mut self.out);
    }

    fn fold(
        &mut self,
        title: &str,
        time: Option<&str>,
        label: Option<&str>,
        lang: &str,
        body: &str,
    ) {
        self.heading(4, title, time, label);
        self.fenced(lang, body);
    }

    fn thinking(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.heading(4, "Thinking", None, None);
        self.blank();
        md_block(text, "> ", &mut self.out);
    }

    fn image(&mut self, mime: &str, data: &str) {
        self.blank();
        let _ = writeln!(
            self.out,
            "*\\[image {}, {} KB\\]*",
            md_inline(&one_line(mime)),
            image_kb(data)
        );
    }

    fn note(&mut self, text: &str, time: Option<&str>) {
        self.blank();
        match time {
            Some(t) => {
                let _ = writeln!(self.out, "*{} · {}*", md_inline(text), md_inline(t));
            }
            None => {
                let _ = writeln!(self.out, "*{}*", md_inline(text));
            }
        }
    }
}

// -------------------------------------------------------------------- HTML

#[derive(Default)]
struct Html {
    out: String,
    in_section: bool,
}

/// Escapes text for an HTML text node. Session text only ever goes into
/// text nodes (an image's `src` is built from a checked type and checked
/// base64), but quotes are escaped too, so that this stays right in an
/// attribute value.
fn esc(s: &str, out: &mut String) {
    let s = clean_text(s);
    let mut rest: &str = &s;
    while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&#39;",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

const CSS: &str = "
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--dim:#656d76;--line:#d0d7de;--user:#eef4ff;--asst:#f6f8fa;--mark:#fff8c5;--tool:#f6f8fa;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--dim:#8d96a0;--line:#30363d;--user:#132339;--asst:#161b22;--mark:#3b2e05;--tool:#161b22;--accent:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif}
main{max-width:60rem;margin:0 auto;padding:1.5rem 1rem 4rem}
h1{font-size:1.4rem;margin:0 0 .5rem}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;color:var(--dim);margin:0 0 1.5rem;font-size:.9rem}
dl.meta dt{font-weight:600}dl.meta dd{margin:0;overflow-wrap:anywhere}
section{border:1px solid var(--line);border-radius:8px;padding:.6rem .9rem;margin:.8rem 0;background:var(--asst)}
section.user{background:var(--user)}
section.compaction,section.branch-summary{background:var(--mark);border-style:dashed}
.head{display:flex;flex-wrap:wrap;gap:.6rem;align-items:baseline;font-size:.85rem;color:var(--dim);margin-bottom:.3rem}
.head .who{font-weight:600;color:var(--fg)}
.label{border:1px solid var(--accent);color:var(--accent);border-radius:1rem;padding:0 .5rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.note{color:var(--dim);font-style:italic;font-size:.85rem;margin:.3rem 0}
details{border:1px solid var(--line);border-radius:6px;background:var(--tool);margin:.4rem 0;padding:.2rem .6rem}
details summary{cursor:pointer;font-size:.85rem;color:var(--dim)}
details.thinking .text{color:var(--dim);font-style:italic}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:.4rem 0}
img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:4px}
";

impl Html {
    fn close_section(&mut self) {
        if self.in_section {
            self.out.push_str("</section>\n");
            self.in_section = false;
        }
    }

    fn meta(&mut self, time: Option<&str>, label: Option<&str>) {
        if let Some(t) = time {
            self.out.push_str("<span class=\"time\">");
            esc(t, &mut self.out);
            self.out.push_str("</span>");
        }
        if let Some(l) = label {
            self.out.push_str("<span class=\"label\">");
            esc(l, &mut self.out);
            self.out.push_str("</span>");
        }
    }

    /// Outside a section (a tool result after its call, a note between
    /// messages): attach to the section before, or stand alone.
    fn ensure_section(&mut self) {
        if !self.in_section {
            self.out.push_str("<section class=\"tool\">\n");
            self.in_section = true;
        }
    }
}

/// Image types a browser shows without running anything (no SVG).
fn safe_image_mime(mime: &str) -> bool {
    matches!(
        mime,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
}

fn is_base64(data: &str) -> bool {
    !data.is_empty()
        && data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

impl Html {
    fn head(&self, doc: &DocInfo) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
             <meta name=\"generator\" content=\"arbor\">\n<title>",
        );
        esc(&doc.title, &mut out);
        out.push_str("</title>\n<style>");
        out.push_str(CSS);
        out.push_str("</style>\n</head>\n<body>\n<main>\n<h1>");
        esc(&doc.title, &mut out);
        out.push_str("</h1>\n<dl class=\"meta\">\n");
        for (k, v) in &doc.rows {
            let _ = write!(out, "<dt>{k}</dt><dd>");
            esc(v, &mut out);
            out.push_str("</dd>\n");
        }
        out.push_str("</dl>\n");
        out
    }

    fn end(&mut self) {
        self.close_section();
        self.out.push_str("</main>\n</body>\n</html>\n");
    }
}

impl Sink for Html {
    fn section(&mut self, kind: Kind, title: &str, time: Option<&str>, label: Option<&str>) {
        self.close_section();
        let _ = write!(
            self.out,
            "<section class=\"{}\">\n<div class=\"head\"><span class=\"who\">",
            kind.class()
        );
        if matches!(kind, Kind::Compaction | Kind::BranchSummary) {
            self.out.push_str("⟲ ");
        }
        esc(title, &mut self.out);
        self.out.push_str("</span>");
        self.meta(time, label);
        self.out.push_str("</div>\n");
        self.in_section = true;
    }

    fn text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.ensure_section();
        self.out.push_str("<div class=\"text\">");
        esc(text.trim_end(), &mut self.out);
        self.out.push_str("</div>\n");
    }

    fn fold(
        &mut self,
        title: &str,
        time: Option<&str>,
        label: Option<&str>,
        _lang: &str,
        body: &str,
    ) {
        self.ensure_section();
        self.out.push_str("<details><summary>");
        esc(title, &mut self.out);
        if time.is_some() || label.is_some() {
            self.out.push(' ');
            self.meta(time, label);
        }
        self.out.push_str("</summary><pre>");
        esc(body.trim_end_matches('\n'), &mut self.out);
        self.out.push_str("</pre></details>\n");
    }

    fn thinking(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.ensure_section();
        self.out.push_str(
            "<details class=\"thinking\"><summary>Thinking</summary><div class=\"text\">",
        );
        esc(text.trim_end(), &mut self.out);
        self.out.push_str("</div></details>\n");
    }

    fn image(&mut self, mime: &str, data: &str) {
        self.ensure_section();
        if safe_image_mime(mime) && is_base64(data) {
            // Both checked above: nothing here needs escaping.
            let _ = writeln!(
                self.out,
                "<p><img alt=\"image\" src=\"data:{mime};base64,{data}\"></p>"
            );
        } else {
            self.out.push_str("<p class=\"note\">[image ");
            esc(&one_line(mime), &mut self.out);
            let _ = writeln!(self.out, ", {} KB]</p>", image_kb(data));
        }
    }

    fn note(&mut self, text: &str, time: Option<&str>) {
        let standalone = time.is_some();
        if standalone {
            self.close_section();
        }
        self.out.push_str("<p class=\"note\">");
        esc(text, &mut self.out);
        if let Some(t) = time {
            self.out.push_str(" · ");
            esc(t, &mut self.out);
        }
        self.out.push_str("</p>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_text_drops_escapes_and_controls() {
        let s = "a\x1b[31mred\x1b[0m b\x1b]0;title\x07c\r\nd\re\u{202e}f\u{9b}2Jg\x00h";
        assert_eq!(clean_text(s), "ared bc\nd\nefgh");
        assert!(matches!(clean_text("plain\ttext\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn markdown_prose_escapes_tags_outside_code() {
        let mut out = String::new();
        md_block(
            "Use `Vec<String>` not Vec<String>; a < b.\n```rust\nlet x: Vec<u8>;\n```\n<script>x</script>",
            "",
            &mut out,
        );
        assert_eq!(
            out,
            "Use `Vec<String>` not Vec&lt;String>; a < b.\n```rust\nlet x: Vec<u8>;\n```\n&lt;script>x&lt;/script>\n"
        );
    }

    #[test]
    fn markdown_closes_an_open_fence() {
        let mut out = String::new();
        md_block("before\n````text\nnever closed ```\n", "", &mut out);
        assert_eq!(out, "before\n````text\nnever closed ```\n````\n");
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
