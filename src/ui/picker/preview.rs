//! The preview pane's data, loaded off the UI thread for the selected row.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use arbor_search::hits::{entry_hits, line_hit, looks_at_entries, EntryHit, LineFilter};
use arbor_search::Query;
use arbor_session::chunked::{Backward, Forward, Line};
use arbor_session::context::message_text;
use arbor_session::entry::id_text;
use arbor_session::open::open_session_file;
use arbor_session::reader::parse_object;
use arbor_session::{Error as SessionError, Header};

#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub path: PathBuf,
    /// `(role, text)` of the last messages on the active branch (each text
    /// cut to what a pane can show).
    pub last_messages: Vec<(String, String)>,
    /// Lines too long to read for the preview, said on screen.
    pub note: Option<String>,
}

/// The preview pane: the preview of the selected session and the lists
/// of matches read for it.
#[derive(Debug, Default)]
pub struct PreviewPane {
    /// The selected session's preview, once read.
    pub(crate) shown: Option<Preview>,
    /// The last preview asked for: (session, query, the file's change time).
    pub(crate) requested: Option<(PathBuf, String, i64)>,
    /// The matching entries of sessions previewed lately, newest last (the
    /// preview's list; see `PickerState::hits`).
    pub(crate) hits_cache: Vec<std::sync::Arc<PreviewHits>>,
    /// The match picked in the preview's list (Alt+N / Alt+P), of the
    /// session and query in `hit_of`; Ctrl+T opens the tree there.
    pub hit_pos: usize,
    pub(crate) hit_of: Option<(PathBuf, String)>,
}

/// The entries of a session that match a query: the preview's list of
/// matches (see [`load_hits`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewHits {
    pub path: PathBuf,
    /// The query as typed.
    pub query: String,
    /// The file's change time the list was asked for (ms): with the path
    /// and the query, what the list is remembered by.
    pub stamp: i64,
    /// The first [`MAX_HITS`] matching entries, in file order.
    pub hits: Vec<EntryHit>,
    /// How many entries match (more than `hits` holds past [`MAX_HITS`]).
    pub total: usize,
    /// Lines too long to read for matches (they may hold some).
    pub unread: Unread,
}

/// Lines of a session left unread for being longer than the preview's
/// limit: how many, and the longest's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Unread {
    pub lines: usize,
    pub biggest: u64,
}

impl Unread {
    fn add(&mut self, len: u64) {
        self.lines += 1;
        self.biggest = self.biggest.max(len);
    }

    /// What the preview says of them: a match may be in them.
    pub fn note(&self) -> Option<String> {
        match self.lines {
            0 => None,
            1 => Some(format!(
                "a line of {} is too long to read here: not searched",
                size(self.biggest)
            )),
            n => Some(format!(
                "{n} lines too long to read here (up to {}): not searched",
                size(self.biggest)
            )),
        }
    }
}

/// Matching entries a preview keeps (each with its snippet); more are
/// counted.
pub const MAX_HITS: usize = 2000;

const LAST_MESSAGES: usize = 4;
/// A pane shows a few lines of each message: more is never kept.
const MESSAGE_CHARS: usize = 2000;

/// How much of a session the preview may hold or read.
#[derive(Debug, Clone)]
pub struct PreviewLimits {
    /// Longer lines are skipped (and said to be), never held whole.
    pub max_line: usize,
    /// Lines read back from the end looking for the last messages.
    pub max_tail: u64,
}

impl Default for PreviewLimits {
    fn default() -> Self {
        PreviewLimits {
            max_line: 4 << 20,
            max_tail: 16 << 20,
        }
    }
}

/// Reads what the preview shows of a session.
pub fn load_preview(path: &Path) -> Result<Preview, String> {
    load_preview_with(path, &PreviewLimits::default()).map(|(p, _)| p)
}

/// A session file opened for the preview: another agent's session is
/// translated as it is read (its lines depend on the ones before) into an
/// unnamed scratch file, in bounded memory (its lines too long to hold are
/// left out, and noted in `huge`), then previewed as an Atomic one.
/// Returns the file, its length and the bytes of the original read.
fn open_previewed(
    path: &Path,
    limits: &PreviewLimits,
    huge: &mut HashMap<u64, u64>,
) -> Result<(File, u64, u64), String> {
    let (mut file, mut meta) = open_session_file(path).map_err(|e| e.to_string())?;
    let io = io_error(path);
    let mut foreign_read = 0;
    if let Some(agent) = foreign_agent(&file, limits) {
        let mut scratch = arbor_session::fileops::scratch_file().map_err(&io)?;
        let mut w = std::io::BufWriter::with_capacity(256 << 10, &mut scratch);
        let skipped =
            arbor_session::foreign::translate_file(agent, path, &file, limits.max_line, &mut w)
                .map_err(&io)?;
        std::io::Write::flush(&mut w).map_err(&io)?;
        drop(w);
        foreign_read = meta.len();
        // Marked at offsets past the translation's end: they are only said.
        huge.extend(
            skipped
                .into_iter()
                .map(|(start, len)| (u64::MAX - start, len)),
        );
        file = scratch;
        meta = file.metadata().map_err(&io)?;
    }
    Ok((file, meta.len(), foreign_read))
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| {
        SessionError::Read {
            path: path.to_path_buf(),
            source: e,
        }
        .to_string()
    }
}

/// The session's header, read from the head of `file`, and where the
/// entries start; lines too long to hold are noted in `huge`.
fn read_header(
    path: &Path,
    file: &File,
    len: u64,
    limits: &PreviewLimits,
    huge: &mut HashMap<u64, u64>,
) -> Result<(Header, u64, u64), String> {
    let mut head = Forward::new(file, 0, len, limits.max_line);
    let header = loop {
        match head.next_line().map_err(io_error(path))? {
            None => {
                return Err(SessionError::NotASession {
                    path: path.to_path_buf(),
                    reason: "no session header",
                }
                .to_string())
            }
            Some(Line::Huge { start, len }) => {
                huge.insert(start, len);
            }
            Some(Line::Text { bytes, .. }) => {
                if let Some(obj) = parse_object(&bytes, &mut false) {
                    break Header::from_object(obj).ok_or_else(|| {
                        SessionError::NotASession {
                            path: path.to_path_buf(),
                            reason: "the first entry is not a session header with a string id",
                        }
                        .to_string()
                    })?;
                }
            }
        }
    };
    Ok((header, head.position(), head.bytes_read))
}

/// [`load_preview`] within `limits`. Also returns the bytes read from the
/// file.
///
/// A session can be hundreds of megabytes (a million entries, or one line
/// of 300 MB): it is never read whole. The header comes from the head, the
/// last messages from the tail (walking the active branch back from the
/// leaf, the last entry, as far as `max_tail`); everything else the pane
/// shows is the list row's (and the matches, from [`load_hits`]).
pub fn load_preview_with(path: &Path, limits: &PreviewLimits) -> Result<(Preview, u64), String> {
    // Lines too long to hold: where each starts, and its length.
    let mut huge: HashMap<u64, u64> = HashMap::new();
    let (file, len, foreign_read) = open_previewed(path, limits, &mut huge)?;
    let io = io_error(path);
    let (header, body_start, read) = read_header(path, &file, len, limits, &mut huge)?;
    let mut read = read + foreign_read;

    let mut tail = Backward::new(&file, body_start, len, limits.max_line);
    let last_messages =
        last_messages(&mut tail, &file, header.version < 2, limits, &mut huge).map_err(io)?;
    read += tail.bytes_read;
    let note = huge.values().max().map(|&biggest| match huge.len() {
        1 => format!(
            "A line of {} is too long to preview: not read",
            size(biggest)
        ),
        n => format!(
            "{n} lines too long to preview (up to {}): not read",
            size(biggest)
        ),
    });
    Ok((
        Preview {
            path: path.to_path_buf(),
            last_messages,
            note,
        },
        read,
    ))
}

/// The entries of the session at `path` that match `query` (the
/// preview's list of matches): the first [`MAX_HITS`] of them in file
/// order, and how many there are. `None` when `stale` said the answer is
/// no longer wanted. The same test as everywhere ([`line_hit`], the
/// matcher of `arbor search` and the tree), a line at a time: the file is
/// never held, most lines are never parsed, and a line longer than
/// `max_line` is skipped.
pub fn load_hits(
    path: &Path,
    query: &Query,
    limits: &PreviewLimits,
    stale: &dyn Fn() -> bool,
) -> Result<Option<(Vec<EntryHit>, usize)>, String> {
    Ok(load_hits_noting(path, query, limits, stale)?.map(|(hits, total, _)| (hits, total)))
}

/// [`load_hits`], and the lines it could not read for their length.
pub fn load_hits_noting(
    path: &Path,
    query: &Query,
    limits: &PreviewLimits,
    stale: &dyn Fn() -> bool,
) -> Result<Option<(Vec<EntryHit>, usize, Unread)>, String> {
    if !looks_at_entries(query) {
        return Ok(Some((Vec::new(), 0, Unread::default())));
    }
    let mut huge = HashMap::new();
    let (file, len, _) = open_previewed(path, limits, &mut huge)?;
    let io = io_error(path);
    let (header, body_start, _) = read_header(path, &file, len, limits, &mut HashMap::new())?;
    if header.version < 3 {
        // Entry ids of a version 1 or 2 file are made when it is read (as
        // the tree reads it): read it so (such files are old and small).
        let session = arbor_session::read_session(path).map_err(|e| e.to_string())?;
        let hits = entry_hits(&session.entries, query);
        let total = hits.len();
        let hits = hits.into_iter().take(MAX_HITS).collect();
        return Ok(Some((hits, total, Unread::default())));
    }
    // Lines another agent's translation left out.
    let mut unread = Unread::default();
    huge.values().for_each(|&len| unread.add(len));
    let mut scan = Forward::new(&file, body_start, len, limits.max_line);
    let mut filter = LineFilter::new(query);
    let mut norm = String::new();
    let (mut hits, mut total, mut index) = (Vec::new(), 0usize, 0usize);
    while let Some(line) = scan.next_line().map_err(&io)? {
        index += 1;
        if index % 256 == 0 && stale() {
            return Ok(None);
        }
        let bytes = match line {
            Line::Text { bytes, .. } => bytes,
            Line::Huge { len, .. } => {
                unread.add(len);
                continue;
            }
        };
        if let Some(h) = line_hit(index, &bytes, query, &mut filter, &mut norm) {
            total += 1;
            if hits.len() < MAX_HITS {
                hits.push(h);
            }
        }
    }
    Ok(Some((hits, total, unread)))
}

/// The agent of a file whose first object is in another agent's format.
fn foreign_agent(file: &File, limits: &PreviewLimits) -> Option<arbor_session::Agent> {
    let len = file.metadata().ok()?.len();
    let mut head = Forward::new(file, 0, len, limits.max_line);
    loop {
        match head.next_line().ok()?? {
            Line::Huge { .. } => continue,
            Line::Text { bytes, .. } => {
                if let Some(obj) = parse_object(&bytes, &mut false) {
                    return arbor_session::foreign::detect(&obj);
                }
            }
        }
    }
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MB", bytes >> 20)
    } else {
        format!("{} KB", bytes.div_ceil(1 << 10))
    }
}

/// An entry seen on the way back from the end.
struct Seen {
    parent: Option<String>,
    /// `(role, text)` when it is a user or assistant message with text.
    message: Option<(String, String)>,
}

/// The user and assistant messages with text on the path from the leaf
/// (the last entry) back towards the root, as the tree builds it: an id
/// taken twice is the later entry's, an entry whose parent is unknown is a
/// root, and the path ends at the first entry of a cycle (as far as the
/// entries read show one). In a version 1 file, every entry is the
/// previous one's child.
fn last_messages(
    tail: &mut Backward,
    file: &File,
    linear: bool,
    limits: &PreviewLimits,
    huge: &mut HashMap<u64, u64>,
) -> std::io::Result<Vec<(String, String)>> {
    let mut seen: HashMap<String, Seen> = HashMap::new();
    // The path walked so far, leaf first: each entry's message, if shown.
    let mut path: Vec<Option<(String, String)>> = Vec::new();
    let mut on_path: HashMap<String, usize> = HashMap::new();
    let mut shown = 0;
    // The next entry of the path, once the leaf is known.
    let mut want: Option<String> = None;
    let mut leaf_known = false;
    let mut parsed = 0u64;
    while shown < LAST_MESSAGES && parsed <= limits.max_tail {
        let Some(line) = tail.next_line()? else { break };
        let (key, entry) = match line {
            Line::Huge { start, len } => {
                huge.insert(start, len);
                // Its ids are at its start, in the agents' line shape.
                let mut prefix = vec![0u8; 512];
                let n = read_prefix(file, start, &mut prefix)?;
                prefix.truncate(n);
                match huge_line_ids(&prefix) {
                    Some((id, parent)) => (
                        id,
                        Seen {
                            parent,
                            message: None,
                        },
                    ),
                    // A linear file's path just goes on before it.
                    None if linear => continue,
                    // The leaf's: where the path goes is unknown.
                    None if !leaf_known => break,
                    None => continue,
                }
            }
            Line::Text { start, bytes, .. } => {
                parsed += bytes.len() as u64;
                // Not an object: garbage, or a writer's partial last line.
                let Some(obj) = parse_object(&bytes, &mut false) else {
                    continue;
                };
                let key = obj
                    .get("id")
                    .and_then(id_text)
                    .unwrap_or_else(|| format!("#at{start}"));
                let parent = obj.get("parentId").and_then(id_text);
                (
                    key,
                    Seen {
                        parent,
                        message: shown_message(&obj),
                    },
                )
            }
        };
        if linear {
            shown += usize::from(entry.message.is_some());
            path.push(entry.message);
            continue;
        }
        if !leaf_known {
            leaf_known = true;
            want = Some(key.clone());
        }
        // Read backwards, the first entry with an id is the file's last.
        seen.entry(key).or_insert(entry);
        let mut ended = false;
        // Through every entry known (also past the messages shown: a cycle
        // closing there would cut them off the path).
        while let Some(id) = want.take() {
            if let Some(&at) = on_path.get(&id) {
                // A cycle: its entries are roots, the path ends at the first.
                for dropped in path.drain(at + 1..) {
                    shown -= usize::from(dropped.is_some());
                }
                ended = true;
                break;
            }
            let Some(e) = seen.get_mut(&id) else {
                want = Some(id);
                break;
            };
            let message = e.message.take();
            shown += usize::from(message.is_some());
            path.push(message);
            want = e.parent.take().filter(|p| *p != id);
            on_path.insert(id, path.len() - 1);
            ended = want.is_none();
        }
        if ended {
            break;
        }
    }
    let mut out: Vec<(String, String)> = path.into_iter().flatten().take(LAST_MESSAGES).collect();
    out.reverse();
    Ok(out)
}

fn read_prefix(file: &File, at: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(at))?;
    let mut done = 0;
    while done < buf.len() {
        match f.read(&mut buf[done..])? {
            0 => break,
            n => done += n,
        }
    }
    Ok(done)
}

/// `id` and `parentId` from the start of a line too long to parse, when it
/// begins as the agents write entries: `{"type":…,"id":…,"parentId":…`.
fn huge_line_ids(prefix: &[u8]) -> Option<(String, Option<String>)> {
    static SHAPE: std::sync::OnceLock<Option<regex::bytes::Regex>> = std::sync::OnceLock::new();
    let re = SHAPE
        .get_or_init(|| {
            regex::bytes::Regex::new(
                r#"^\s*\{\s*"type"\s*:\s*"[^"\\]*"\s*,\s*"id"\s*:\s*"([^"\\]*)"\s*,\s*"parentId"\s*:\s*(?:null|"([^"\\]*)")"#,
            )
            .ok()
        })
        .as_ref()?;
    let c = re.captures(prefix)?;
    let text = |i: usize| {
        c.get(i)
            .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
            .map(str::to_string)
    };
    Some((text(1)?, text(2)))
}

/// `(role, text)` of a user or assistant message with text, cut to what a
/// pane shows.
fn shown_message(obj: &Map<String, Value>) -> Option<(String, String)> {
    let m = message_of(obj)?;
    let role = m.get("role").and_then(Value::as_str)?;
    if role != "user" && role != "assistant" {
        return None;
    }
    let mut text = message_text(Some(m));
    if text.trim().is_empty() {
        return None;
    }
    if let Some((cut, _)) = text.char_indices().nth(MESSAGE_CHARS) {
        text.truncate(cut);
    }
    Some((role.to_string(), text))
}

fn message_of(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    if obj.get("type").and_then(Value::as_str) != Some("message") {
        return None;
    }
    obj.get("message").and_then(Value::as_object)
}
