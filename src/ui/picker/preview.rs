//! The preview pane's data, loaded off the UI thread for the selected row.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::search::{Query, Term};
use crate::session::chunked::{Backward, Forward, Line};
use crate::session::context::message_text;
use crate::session::entry::id_text;
use crate::session::normalize::{normalize, original_range};
use crate::session::open::open_session_file;
use crate::session::reader::parse_object;
use crate::session::{Header, ReadError};

#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    pub path: PathBuf,
    /// The query the snippet was found for.
    pub query: String,
    /// `(role, text)` of the last messages on the active branch (each text
    /// cut to what a pane can show).
    pub last_messages: Vec<(String, String)>,
    /// The first search match in context, with the match's char range.
    pub snippet: Option<(String, std::ops::Range<usize>)>,
    /// Lines too long to read for the preview, said on screen.
    pub note: Option<String>,
}

const LAST_MESSAGES: usize = 4;
const SNIPPET_RADIUS: usize = 70;
/// A pane shows a few lines of each message: more is never kept.
const MESSAGE_CHARS: usize = 2000;
/// Text of the messages before the one searched, for a phrase spanning two
/// messages and for the context before a match.
const CARRY_BYTES: usize = 1024;

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

/// Reads what the preview shows of a session; `query` picks the snippet.
pub fn load_preview(path: &Path, query: &Query) -> Result<Preview, String> {
    load_preview_with(path, query, &PreviewLimits::default(), &|| false).map(|(p, _)| p)
}

/// [`load_preview`] within `limits`, giving up the search for the snippet
/// when `stale` says the answer is no longer wanted. Also returns the bytes
/// read from the file.
///
/// A session can be hundreds of megabytes (a million entries, or one line
/// of 300 MB): it is never read whole. The header comes from the head, the
/// last messages from the tail (walking the active branch back from the
/// leaf, the last entry, as far as `max_tail`), the snippet from a scan
/// that stops at the first match; everything else the pane shows is the
/// list row's.
pub fn load_preview_with(
    path: &Path,
    query: &Query,
    limits: &PreviewLimits,
    stale: &dyn Fn() -> bool,
) -> Result<(Preview, u64), String> {
    let (mut file, mut meta) = open_session_file(path).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| {
        ReadError::Io {
            path: path.to_path_buf(),
            source: e,
        }
        .to_string()
    };
    // Lines too long to hold: where each starts, and its length.
    let mut huge: HashMap<u64, u64> = HashMap::new();
    let mut foreign_read = 0;
    if let Some(agent) = foreign_agent(&file, limits) {
        // Another agent's session: translated as it is read (its lines
        // depend on the ones before) into an unnamed scratch file, in
        // bounded memory (its lines too long to hold are left out, and
        // said to be), then previewed as an Atomic one.
        let mut scratch = crate::session::fileops::scratch_file().map_err(io)?;
        let mut w = std::io::BufWriter::with_capacity(256 << 10, &mut scratch);
        let skipped =
            crate::session::foreign::translate_file(agent, path, &file, limits.max_line, &mut w)
                .map_err(io)?;
        std::io::Write::flush(&mut w).map_err(io)?;
        drop(w);
        foreign_read = meta.len();
        // Marked at offsets past the translation's end: they are only said.
        huge.extend(
            skipped
                .into_iter()
                .map(|(start, len)| (u64::MAX - start, len)),
        );
        file = scratch;
        meta = file.metadata().map_err(io)?;
    }
    let len = meta.len();
    let mut head = Forward::new(&file, 0, len, limits.max_line);
    let header = loop {
        match head.next_line().map_err(io)? {
            None => {
                return Err(ReadError::NotASession {
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
                        ReadError::NotASession {
                            path: path.to_path_buf(),
                            reason: "the first entry is not a session header with a string id",
                        }
                        .to_string()
                    })?;
                }
            }
        }
    };
    let body_start = head.position();
    let mut read = head.bytes_read + foreign_read;

    let mut tail = Backward::new(&file, body_start, len, limits.max_line);
    let last_messages =
        last_messages(&mut tail, &file, header.version < 2, limits, &mut huge).map_err(io)?;
    read += tail.bytes_read;

    let snippet = if query.terms.is_empty() {
        None
    } else {
        let mut scan = Forward::new(&file, body_start, len, limits.max_line);
        let found = snippet_in_file(&mut scan, query, stale, &mut huge).map_err(io)?;
        read += scan.bytes_read;
        found
    };
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
            query: query.raw.clone(),
            last_messages,
            snippet,
            note,
        },
        read,
    ))
}

/// The agent of a file whose first object is in another agent's format.
fn foreign_agent(file: &File, limits: &PreviewLimits) -> Option<crate::session::Agent> {
    let len = file.metadata().ok()?.len();
    let mut head = Forward::new(file, 0, len, limits.max_line);
    loop {
        match head.next_line().ok()?? {
            Line::Huge { .. } => continue,
            Line::Text { bytes, .. } => {
                if let Some(obj) = parse_object(&bytes, &mut false) {
                    return crate::session::foreign::detect(&obj);
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

/// The first match of the query in the user and assistant text, read from
/// the start a line at a time; `None` once `stale`.
fn snippet_in_file(
    scan: &mut Forward,
    query: &Query,
    stale: &dyn Fn() -> bool,
    huge: &mut HashMap<u64, u64>,
) -> std::io::Result<Option<(String, std::ops::Range<usize>)>> {
    let filter = LineFilter::new(query);
    // The text of the last messages read, joined as the search joins them.
    let mut carry = String::new();
    // The last message line not parsed since (a phrase ending in the next
    // one may begin in it).
    let mut unread: Option<Vec<u8>> = None;
    let mut lines = 0u32;
    while let Some(line) = scan.next_line()? {
        lines = lines.wrapping_add(1);
        if lines % 256 == 0 && stale() {
            return Ok(None);
        }
        let bytes = match line {
            Line::Huge { start, len } => {
                huge.insert(start, len);
                carry.clear();
                unread = None;
                continue;
            }
            Line::Text { bytes, .. } => bytes,
        };
        match filter.check(&bytes) {
            Check::NotBody => continue,
            Check::NoMatch => {
                carry.clear();
                unread = Some(bytes);
                continue;
            }
            Check::Maybe => {}
        }
        if carry.is_empty() {
            if let Some(before) = unread.take() {
                push_body_text(&before, &mut carry);
            }
        }
        unread = None;
        if !push_body_text(&bytes, &mut carry) {
            continue;
        }
        if let Some(found) = find_snippet(&carry, query) {
            return Ok(Some(found));
        }
        if carry.len() > CARRY_BYTES {
            let mut cut = carry.len() - CARRY_BYTES;
            while !carry.is_char_boundary(cut) {
                cut += 1;
            }
            carry.drain(..cut);
        }
    }
    Ok(None)
}

/// Appends a user or assistant message's text (and the newline that joins
/// messages); false when the line is no such message.
fn push_body_text(line: &[u8], carry: &mut String) -> bool {
    let Some(obj) = parse_object(line, &mut false) else {
        return false;
    };
    let Some(m) = message_of(&obj) else {
        return false;
    };
    if !matches!(
        m.get("role").and_then(Value::as_str),
        Some("user") | Some("assistant")
    ) {
        return false;
    }
    carry.push_str(&message_text(Some(m)));
    carry.push('\n');
    true
}

enum Check {
    /// Not a user or assistant message.
    NotBody,
    /// A message whose text cannot hold a match (or the end of one).
    NoMatch,
    Maybe,
}

/// Tells from a line's bytes, without parsing it, that it cannot matter to
/// the snippet: most lines of a big session are never parsed.
struct LineFilter {
    /// Finds, ignoring ASCII case, a piece of which the line must hold one
    /// for a match to end in it: each word, and each phrase's last word (a
    /// phrase may begin in the message before). `None`: every message is
    /// read (a regex, or non-ASCII terms).
    pieces: Option<regex::bytes::Regex>,
}

impl LineFilter {
    fn new(query: &Query) -> LineFilter {
        let pieces: Option<Vec<&str>> = query
            .terms
            .iter()
            .map(|t| match t {
                Term::Word { lower, .. } => Some(lower.as_str()),
                Term::Phrase(p) => p.split(' ').rfind(|w| !w.is_empty()),
                Term::Regex(_) => None,
            })
            .map(|p| p.filter(|p| p.is_ascii()))
            .collect();
        let pieces = pieces.filter(|p| !p.is_empty()).and_then(|p| {
            let alternatives: Vec<String> = p.iter().map(|w| regex::escape(w)).collect();
            regex::bytes::Regex::new(&format!("(?i-u){}", alternatives.join("|"))).ok()
        });
        LineFilter { pieces }
    }

    fn check(&self, line: &[u8]) -> Check {
        use memchr::memmem;
        if memmem::find(line, b"\"user\"").is_none()
            && memmem::find(line, b"\"assistant\"").is_none()
        {
            return Check::NotBody;
        }
        let Some(pieces) = &self.pieces else {
            return Check::Maybe;
        };
        // Escapes (`\u…`) and non-ASCII text can hide a match, or make one.
        if !line.is_ascii() || memmem::find(line, b"\\u").is_some() || pieces.is_match(line) {
            Check::Maybe
        } else {
            Check::NoMatch
        }
    }
}

/// The first literal match of the query in `body`, with some context.
/// Matching is done as the search does it, on the normalized text
/// (lowercased, whitespace runs one space: a phrase may span a newline),
/// and the match is mapped back onto `body`, whose length lowercasing may
/// have changed.
fn find_snippet(body: &str, query: &Query) -> Option<(String, std::ops::Range<usize>)> {
    let mut norm = String::new();
    normalize(body, &mut norm);
    let found = query.terms.iter().find_map(|t| match t {
        Term::Word { lower: w, .. } => norm.find(w.as_str()).map(|s| s..s + w.len()),
        Term::Phrase(p) => norm.find(p.as_str()).map(|s| s..s + p.len()),
        Term::Regex(r) => r
            .find_iter(&norm)
            .find(|m| !m.is_empty())
            .map(|m| m.range()),
    })?;
    let std::ops::Range { start, end } = original_range(body, found)?;
    let before: String = body[..start]
        .chars()
        .rev()
        .take(SNIPPET_RADIUS)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let matched = &body[start..end];
    let after: String = body[end..].chars().take(SNIPPET_RADIUS).collect();
    let b = crate::session::render::sanitize_line(&before);
    let m = crate::session::render::sanitize_line(matched);
    let a = crate::session::render::sanitize_line(&after);
    let s = b.chars().count();
    let e = s + m.chars().count();
    Some((format!("{b}{m}{a}"), s..e))
}

#[cfg(test)]
mod tests {
    use super::find_snippet;
    use crate::search::Query;

    /// The snippet's matched text.
    fn matched(body: &str, q: &str) -> Option<String> {
        let (text, r) = find_snippet(body, &Query::parse(q))?;
        Some(text.chars().skip(r.start).take(r.len()).collect())
    }

    #[test]
    fn the_match_survives_text_that_lowercasing_resizes() {
        // Å (U+212B) and K (U+212A) shrink when lowercased, İ grows: the
        // offsets found in the lowercased text are mapped back.
        let body = "Measured in \u{212b}ngstr\u{f6}ms and \u{212a}elvin.\nThen the PARSER broke.\n";
        assert_eq!(matched(body, "parser").as_deref(), Some("PARSER"));
        assert_eq!(
            matched(body, "\"kelvin\"").as_deref(),
            Some("\u{212a}elvin")
        );
        let body = "\u{130}stanbul notes: the Token Refresh failed\n";
        assert_eq!(matched(body, "refresh").as_deref(), Some("Refresh"));
        assert_eq!(matched(body, "re:tok\\w+").as_deref(), Some("Token"));
    }

    #[test]
    fn a_phrase_may_span_a_newline_or_two_messages() {
        let body = "first line ends with token\nrefresh starts the next\n";
        let (text, r) = find_snippet(body, &Query::parse("\"token refresh\"")).unwrap();
        let shown: String = text.chars().skip(r.start).take(r.len()).collect();
        // Drawn on one line: the newline shows as a space.
        assert_eq!(shown, "token refresh");
        assert!(text.starts_with("first line ends with "), "{text:?}");
    }
}
