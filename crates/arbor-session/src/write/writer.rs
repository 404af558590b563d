//! Appends in Atomic's exact shapes (docs/spec.md §7), and the two whole-file writes
//! (fork, migration), both atomic.
//!
//! Safety rules: the parent of a new entry is the file's last entry re-read
//! at write time; one `write` per line on an `O_APPEND` handle, all or
//! nothing (`fileops::append_line`); a file that ends in a partial line (a
//! writer mid-append) is never glued onto, and the one partial line arbor
//! cuts is a dead one of its own (`own_partial`).

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::entry::{format_iso_ms, Entry};
use crate::fileops;
use crate::ids::{new_entry_id, new_session_id};
use crate::open::open_session_file;
use crate::reader::{parse_object, Session};
use crate::tree::SessionTree;
use crate::{Error, Result};

fn refuse_foreign(session: &Session) -> Result<()> {
    match session.foreign {
        Some(a) => Err(Error::Foreign {
            path: session.path.clone(),
            agent: a.display_name(),
        }),
        None => Ok(()),
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// What an append wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub id: String,
    pub line: String,
}

pub(crate) fn now_iso() -> String {
    format_iso_ms(chrono::Utc::now().timestamp_millis())
}

/// Makes sure the file ends in `\n`; returns Err when the last line is
/// partial, but for a dead partial line arbor's own append left, which is
/// cut off (`Ok(true)`; see `own_partial`).
fn settle_tail(file: &mut File, path: &Path) -> Result<bool> {
    // The partial line as first seen: (where it starts, the file's length).
    let mut first_seen: Option<(Option<u64>, u64)> = None;
    let mut unchanged = true;
    // A writer mid-append finishes within milliseconds; give it a few chances.
    for attempt in 0..5 {
        let len = file.seek(SeekFrom::End(0)).map_err(io_err(path))?;
        if len == 0 {
            return Ok(false);
        }
        let tail_start = len.saturating_sub(64 * 1024);
        file.seek(SeekFrom::Start(tail_start))
            .map_err(io_err(path))?;
        let mut tail = Vec::new();
        file.read_to_end(&mut tail).map_err(io_err(path))?;
        if tail.last() == Some(&b'\n') {
            return Ok(false);
        }
        let line_start = memchr::memrchr(b'\n', &tail).map(|i| i + 1);
        let complete_line = match line_start {
            Some(s) => parse_object(&tail[s..], &mut false).is_some(),
            // The line is longer than the tail window: read it whole.
            None => {
                let mut all = Vec::new();
                file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
                file.read_to_end(&mut all).map_err(io_err(path))?;
                let s = memchr::memrchr(b'\n', &all).map_or(0, |i| i + 1);
                parse_object(&all[s..], &mut false).is_some()
            }
        };
        if complete_line {
            fileops::append(file, b"\n").map_err(io_err(path))?;
            return Ok(false);
        }
        // Only a line that neither grew nor moved while arbor waited is dead.
        let seen = (line_start.map(|s| tail_start + s as u64), len);
        unchanged &= *first_seen.get_or_insert(seen) == seen;
        if attempt < 4 {
            std::thread::sleep(Duration::from_millis(100));
            continue;
        }
        if let (true, Some(s)) = (unchanged, line_start) {
            if crate::own_partial::is_own_partial_line(&tail[s..]) {
                let from = tail_start + s as u64;
                if fileops::cut_dead_partial_line(file, from, len).map_err(io_err(path))? {
                    return Ok(true);
                }
            }
        }
    }
    Err(Error::PartialLastLine {
        path: path.to_path_buf(),
    })
}

/// How often `append_entry` catches up with a file that grew meanwhile.
const APPEND_ATTEMPTS: usize = 50;

/// The file as read so far: how many bytes, the bytes after its last
/// complete line, and the session read from its complete lines
/// (`..parsed`).
struct Snapshot {
    read_len: usize,
    parsed: usize,
    /// The bytes from `parsed` to `read_len` (a line being written).
    tail: Vec<u8>,
    session: Session,
}

impl Snapshot {
    /// Reads through the handle arbor will write with (the same file even
    /// if the path is replaced meanwhile). A file that ends in `\n` (as
    /// after `settle_tail`) is read lean: the entries' facts, never the
    /// file's bytes whole (a label on a session of a million entries).
    fn read(file: &mut File, path: &Path) -> Result<Snapshot> {
        let lean =
            crate::reader::read_session_lean_file(path, file.try_clone().map_err(io_err(path))?)?;
        let len = lean.bytes as usize;
        let mut last = [0u8];
        let ends_whole = len == 0 || {
            file.seek(SeekFrom::Start(len as u64 - 1))
                .map_err(io_err(path))?;
            file.read(&mut last).map_err(io_err(path))? == 1 && last[0] == b'\n'
        };
        if ends_whole && lean.foreign.is_none() {
            return Ok(Snapshot {
                read_len: len,
                parsed: len,
                tail: Vec::new(),
                session: lean,
            });
        }
        drop(lean);
        let mut buf = Vec::new();
        file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
        file.read_to_end(&mut buf).map_err(io_err(path))?;
        let parsed = memchr::memrchr(b'\n', &buf).map_or(0, |i| i + 1);
        let session = crate::reader::parse_session(path, &buf[..parsed])?;
        Ok(Snapshot {
            read_len: buf.len(),
            parsed,
            tail: buf.split_off(parsed),
            session,
        })
    }

    /// Reads what was appended since, and parses its complete lines only
    /// (re-parsing a multi-MB file each time would never catch up with a
    /// busy writer).
    fn catch_up(&mut self, file: &mut File, path: &Path) -> Result<()> {
        file.seek(SeekFrom::Start(self.read_len as u64))
            .map_err(io_err(path))?;
        file.read_to_end(&mut self.tail).map_err(io_err(path))?;
        self.read_len = self.parsed + self.tail.len();
        let done = memchr::memrchr(b'\n', &self.tail).map_or(0, |i| i + 1);
        for (line, _) in crate::reader::lines(&self.tail[..done]) {
            if let Some(obj) = parse_object(line, &mut false) {
                let index = self.session.entries.len() + 1;
                self.session.entries.push(Entry::new(index, obj));
            }
        }
        self.tail.drain(..done);
        self.parsed += done;
        self.session.bytes = self.parsed as u64;
        Ok(())
    }
}

/// Appends one entry built by `make(session, new_id)`; the session is
/// re-read first so the parent is the current last entry.
///
/// Another writer may append while arbor reads and builds its line (found by
/// tests/concurrency.rs: a line started after the tail check got arbor's
/// line glued onto its first half, and lines written meanwhile made the
/// parent stale). So the line is built from the file as it is right before
/// the write: when the file grew since it was read, arbor catches up with
/// the new lines (waiting for a partial one to end) and builds it again.
pub(crate) fn append_entry(
    path: &Path,
    make: impl Fn(&Session, &str) -> Result<Map<String, Value>>,
) -> Result<Written> {
    // Before anything else: another agent's file is not even waited on.
    if let Some(agent) = crate::foreign::detect_path(path) {
        return Err(Error::Foreign {
            path: path.to_path_buf(),
            agent: agent.display_name(),
        });
    }
    let (mut file, _) = fileops::open_to_append(path)?;
    settle_tail(&mut file, path)?;
    let mut snap = Snapshot::read(&mut file, path)?;
    refuse_foreign(&snap.session)?;
    if snap.session.needs_migration() {
        return Err(Error::NeedsMigration {
            path: path.to_path_buf(),
            version: snap.session.file_version,
        });
    }
    for _ in 0..APPEND_ATTEMPTS {
        if snap.parsed < snap.read_len {
            // A line was started after the tail check: wait for its end.
            if settle_tail(&mut file, path)? {
                // A dead line of arbor's was cut off: what was read is stale.
                snap = Snapshot::read(&mut file, path)?;
            } else {
                snap.catch_up(&mut file, path)?;
            }
            continue;
        }
        let session = &snap.session;
        let taken: HashSet<&str> = session.entries.iter().map(|e| e.id.as_str()).collect();
        let id = new_entry_id(&taken);
        let obj = make(session, &id)?;
        let mut line = serde_json::to_string(&Value::Object(obj))
            .map_err(|e| Error::Invalid(e.to_string()))?;
        line.push('\n');
        // Appends only grow a file: the length as read means nothing was
        // added since, so the file still ends in `\n` and the parent is still
        // the last entry. (A window of two system calls remains between this
        // check and the write: O_APPEND has no compare-and-append, and the
        // agents do not lock. It is checked for after the write.)
        let len = file.metadata().map_err(io_err(path))?.len();
        if len == snap.read_len as u64 {
            // One write call: O_APPEND makes it land after whatever is there
            // now; all or nothing (a full disk leaves no half line).
            fileops::append_line(&mut file, line.as_bytes()).map_err(|f| match f.left_at {
                None => Error::NotWritten {
                    path: path.to_path_buf(),
                    source: f.error,
                },
                Some(at) => Error::PartialLeft {
                    path: path.to_path_buf(),
                    source: f.error,
                    at,
                },
            })?;
            // The window cannot be closed, but it can be seen: if another
            // writer started a line in it (one that writes a line in several
            // calls; Atomic writes each line in one), arbor's line follows
            // that partial line and both are unreadable. Say so; never report
            // such a write as done.
            if let Some(at) = glued_onto(&mut file, len, line.as_bytes()).map_err(io_err(path))? {
                return Err(Error::Interleaved {
                    path: path.to_path_buf(),
                    at,
                });
            }
            line.pop();
            return Ok(Written { id, line });
        }
        if len < snap.read_len as u64 {
            // Rewritten meanwhile (not an append): start over.
            snap = Snapshot::read(&mut file, path)?;
            if snap.session.needs_migration() {
                return Err(Error::NeedsMigration {
                    path: path.to_path_buf(),
                    version: snap.session.file_version,
                });
            }
        } else {
            snap.catch_up(&mut file, path)?;
        }
    }
    Err(Error::Busy {
        path: path.to_path_buf(),
    })
}

/// Where the other writer's line starts when `line`, just appended to a
/// file that was `from` bytes long and ended in `\n`, was glued onto a
/// line another program had begun; `None` when it starts a line of its
/// own (whatever others appended before it ended in `\n` too), or cannot
/// be found (unverifiable counts as fine).
fn glued_onto(file: &mut File, from: u64, line: &[u8]) -> std::io::Result<Option<u64>> {
    file.seek(SeekFrom::Start(from))?;
    let mut region = Vec::new();
    file.read_to_end(&mut region)?;
    Ok(match memchr::memmem::find(&region, line) {
        Some(0) | None => None,
        Some(i) if region[i - 1] == b'\n' => None,
        Some(i) => Some(from + memchr::memrchr(b'\n', &region[..i]).map_or(0, |j| j + 1) as u64),
    })
}

fn base(ty: &str, id: &str, parent: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".into(), ty.into());
    m.insert("id".into(), id.into());
    m.insert(
        "parentId".into(),
        parent.map(Value::from).unwrap_or(Value::Null),
    );
    m.insert("timestamp".into(), now_iso().into());
    m
}

fn last_id(s: &Session) -> Option<&str> {
    s.entries.last().map(|e| e.id.as_str())
}

/// Sets (or with `None`/empty, clears) the label of `target`.
pub fn append_label(path: &Path, target: &str, label: Option<&str>) -> Result<Written> {
    append_entry(path, |s, id| {
        if !s.entries.iter().any(|e| e.id == target) {
            return Err(Error::NoSuchEntry {
                path: path.to_path_buf(),
                id: target.to_string(),
            });
        }
        let mut m = base("label", id, last_id(s));
        m.insert("targetId".into(), target.into());
        if let Some(l) = label.map(str::trim).filter(|l| !l.is_empty()) {
            m.insert("label".into(), l.into());
        }
        Ok(m)
    })
}

/// Renames the session (`""` clears the name).
pub fn append_session_name(path: &Path, name: &str) -> Result<Written> {
    append_entry(path, |s, id| {
        let mut m = base("session_info", id, last_id(s));
        m.insert("name".into(), name.trim().into());
        Ok(m)
    })
}

/// Where "continue from here" on `entry` puts the leaf: a user message's
/// parent (its text goes back to the editor), any other entry itself.
pub fn branch_point(session: &Session, entry_id: &str) -> Option<Option<String>> {
    let tree = SessionTree::build(session);
    let i = tree.index_of(entry_id)?;
    let e = &session.entries[i];
    if e.role() == Some("user") {
        Some(tree.parent.of(i).map(|p| session.entries[p].id.to_string()))
    } else {
        Some(Some(e.id.to_string()))
    }
}

/// Moves the leaf: a `branch_summary` child of the branch point.
pub fn append_branch(path: &Path, entry_id: &str, summary: &str) -> Result<Written> {
    append_entry(path, |s, id| {
        let point = branch_point(s, entry_id).ok_or_else(|| Error::NoSuchEntry {
            path: path.to_path_buf(),
            id: entry_id.to_string(),
        })?;
        let mut m = base("branch_summary", id, point.as_deref());
        m.insert(
            "fromId".into(),
            point.clone().unwrap_or_else(|| "root".into()).into(),
        );
        m.insert("summary".into(), summary.into());
        Ok(m)
    })
}

/// File name of a session: `<ISO with ':' and '.' as '-'>_<id>.jsonl`.
pub(crate) fn session_file_name(timestamp: &str, id: &str) -> String {
    format!("{}_{id}.jsonl", timestamp.replace([':', '.'], "-"))
}

/// Writes `bytes` to `path` atomically (see [`fileops::write_atomic`]).
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    fileops::write_atomic(path, bytes).map_err(io_err(path))
}

/// Where a fork at an entry ends, as Atomic's `/fork`: before a user
/// message (at its parent; an empty session when it is a root), whose text
/// is given back to send again; at any other entry, at the entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ForkPoint {
    /// The new session's last entry (`None`: no entries).
    pub leaf: Option<usize>,
    /// The user message's text, when forking before one.
    pub prompt: Option<String>,
}

pub(crate) fn fork_point(session: &Session, tree: &SessionTree, i: usize) -> ForkPoint {
    let e = &session.entries[i];
    if e.role() != Some("user") {
        return ForkPoint {
            leaf: Some(i),
            prompt: None,
        };
    }
    ForkPoint {
        leaf: tree.parent.of(i),
        prompt: Some(user_message_text(e)),
    }
}

/// A user message's text as Atomic gives it back: the string, or the text
/// blocks joined.
pub fn user_message_text(e: &crate::entry::Entry) -> String {
    if e.entry_type() != "message" {
        return String::new();
    }
    // Read without keeping the entry parsed.
    e.with_raw(|raw| {
        let m = raw.get("message").and_then(Value::as_object);
        crate::entry::content_text(m.and_then(|m| m.get("content")), "")
    })
}

/// A new session written by `fork`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    pub path: PathBuf,
    pub id: String,
    /// The user message forked before, to send again.
    pub prompt: Option<String>,
}

/// Forks root → the fork point of `entry` (see `fork_point`) into a new
/// session file.
///
/// In memory bounded by the longest line, not the session: the source is
/// read lean (each entry's facts and where its line is), and the fork is
/// written a line at a time, each read back from the source, rewritten and
/// let go.
pub fn fork(source: &Path, entry_id: &str, out: Option<&Path>) -> Result<Forked> {
    let session = crate::reader::read_session_lean(source)?;
    refuse_foreign(&session)?;
    let tree = SessionTree::build(&session);
    let Some(target) = tree.index_of(entry_id) else {
        return Err(Error::NoSuchEntry {
            path: source.to_path_buf(),
            id: entry_id.to_string(),
        });
    };
    let point = fork_point(&session, &tree, target);
    let path = point.leaf.map(|l| tree.path_to(l)).unwrap_or_default();

    let id = new_session_id();
    let now = now_iso();
    let header = fork_header(&session, source, &id, &now);

    let dest = fork_destination(source, out, &now, &id)?;
    let mut trimmed = None;
    let mut moved = false;
    let written = fileops::write_atomic_new_with(&dest, |f| {
        let mut w = std::io::BufWriter::with_capacity(256 << 10, f);
        let lines = ForkLines {
            session: &session,
            tree: &tree,
            path: &path,
            now: &now,
        };
        lines.write(header, &mut w, &mut trimmed, &mut moved)?;
        w.flush()
    });
    if moved {
        return Err(Error::Busy {
            path: source.to_path_buf(),
        });
    }
    if let Some(e) = trimmed {
        return Err(Error::Invalid(format!(
            "entry {e} nests JSON too deeply to copy without loss; not forking"
        )));
    }
    written.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            already_exists(&dest)
        } else {
            io_err(&dest)(e)
        }
    })?;
    Ok(Forked {
        path: dest,
        id,
        prompt: point.prompt,
    })
}

/// The fork's header: a new id and time, the source's cwd and flags, and the
/// source as its parent session.
fn fork_header(session: &Session, source: &Path, id: &str, now: &str) -> Map<String, Value> {
    let mut header = Map::new();
    header.insert("type".into(), "session".into());
    header.insert("version".into(), 3.into());
    header.insert("id".into(), id.into());
    header.insert("timestamp".into(), now.into());
    header.insert(
        "cwd".into(),
        session.header.cwd().unwrap_or_default().into(),
    );
    let abs_source = std::path::absolute(source).unwrap_or_else(|_| source.to_path_buf());
    header.insert(
        "parentSession".into(),
        abs_source.display().to_string().into(),
    );
    for k in ["internal", "workflow"] {
        if let Some(v) = session.header.raw.get(k) {
            header.insert(k.into(), v.clone());
        }
    }
    header
}

/// What a fork copies: the entries of `path` (root → fork point).
struct ForkLines<'a> {
    session: &'a Session,
    tree: &'a SessionTree,
    path: &'a [usize],
    now: &'a str,
}

impl ForkLines<'_> {
    /// Writes the header, the entries of the path but its labels (each hung
    /// from its nearest kept ancestor), then a new label line for each kept
    /// entry that has a label. An entry the reader had to cut (JSON nested
    /// too deeply) stops it: its id goes to `trimmed`, and an error out; so
    /// does a line no longer where it was read (`moved`).
    fn write(
        &self,
        header: Map<String, Value>,
        w: &mut impl std::io::Write,
        trimmed: &mut Option<String>,
        moved: &mut bool,
    ) -> std::io::Result<()> {
        let (entries, tree) = (&self.session.entries, self.tree);
        let is_label = |i: usize| entries[i].entry_type() == "label";

        // A kept entry whose parent was a dropped label hangs from that label's parent.
        let kept_parent = |i: usize| {
            let mut p = tree.parent.of(i);
            while let Some(x) = p {
                if !is_label(x) {
                    break;
                }
                p = tree.parent.of(x);
            }
            p.map(|x| entries[x].id.as_str())
        };

        writeln!(w, "{}", Value::Object(header))?;
        let mut last: Option<String> = None;
        let mut taken: HashSet<&str> = HashSet::new();
        let mut kept = Vec::new();
        for &i in self.path {
            if is_label(i) {
                continue;
            }
            let e = &entries[i];
            // Parsed for this line only (its bytes let go before it is
            // written out): the entries are never all held.
            let mut raw = match e.raw.parse_unparsed() {
                // Read back from the file by where the line was: a file
                // rewritten in place since (an editor's save) has something
                // else there, which must not be copied as this entry.
                Some(obj) => match obj {
                    Some(obj) if obj.get("id").and_then(Value::as_str) == Some(e.id.as_str()) => {
                        obj
                    }
                    _ => {
                        *moved = true;
                        return Err(std::io::Error::other("the session changed under arbor"));
                    }
                },
                None => e.with_raw(Map::clone),
            };
            if is_trimmed(&raw) {
                *trimmed = Some(e.id.to_string());
                return Err(std::io::Error::other("an entry nests JSON too deeply"));
            }
            raw.insert(
                "parentId".into(),
                kept_parent(i).map(Value::from).unwrap_or(Value::Null),
            );
            serde_json::to_writer(&mut *w, &Value::Object(raw))?;
            w.write_all(b"\n")?;
            taken.insert(&e.id);
            kept.push(i);
            last = Some(e.id.to_string());
        }
        let mut new_ids = Vec::new();
        for &k in &kept {
            let kid = &entries[k].id;
            let Some(label) = tree.labels.get(kid.as_str()) else {
                continue;
            };
            let lid = loop {
                let id = new_entry_id(&taken);
                if !new_ids.contains(&id) {
                    break id;
                }
            };
            let line = json!({
                "type": "label",
                "id": lid,
                "parentId": last,
                "timestamp": label.timestamp.clone().unwrap_or_else(|| self.now.to_string()),
                "targetId": kid,
                "label": label.text,
            });
            writeln!(w, "{line}")?;
            last = Some(lid.clone());
            new_ids.push(lid);
        }
        Ok(())
    }
}

/// Where the fork goes: `out`, else a new file beside the source; never over
/// an existing file.
fn fork_destination(source: &Path, out: Option<&Path>, now: &str, id: &str) -> Result<PathBuf> {
    let dest = match out {
        Some(p) => p.to_path_buf(),
        None => source
            .parent()
            .unwrap_or(Path::new("."))
            .join(session_file_name(now, id)),
    };
    // A link, even dangling, counts: arbor never writes through one.
    if dest.symlink_metadata().is_ok() {
        return Err(already_exists(&dest));
    }
    Ok(dest)
}

fn already_exists(dest: &Path) -> Error {
    Error::Invalid(format!(
        "{} already exists; not overwriting it",
        dest.display()
    ))
}

/// Rewrites a v1/v2 file as v3 (atomically, keeping `<file>.bak`).
/// Only called after the user agreed.
///
/// Only what the migration means changes (the header's `version`, entry ids
/// and parent links, compaction pointers, the `hookMessage` role): each line
/// is edited in place, so every other value keeps its exact text (numbers,
/// escapes, key order, even invalid UTF-8), and lines the reader skips stay
/// where they were. The `.bak` is the original's bytes with its mtime.
pub fn migrate_file(path: &Path) -> Result<PathBuf> {
    use crate::reader::{lines, migrate_v1, migrate_v2};
    use crate::splice::splice_object_line;

    // A link is refused before anything is written (the .bak included).
    fileops::refuse_symlink(path).map_err(io_err(path))?;
    let (mut file, meta) = open_session_file(path)?;
    let mut original = Vec::new();
    file.read_to_end(&mut original).map_err(io_err(path))?;
    let session = crate::reader::parse_session(path, &original)?;
    refuse_foreign(&session)?;

    // The same walk as the reader's: the first object is the header, every
    // later object an entry, anything else is kept as it is.
    enum Line<'a> {
        Verbatim(&'a [u8]),
        Object(&'a [u8], usize),
    }
    let mut layout = Vec::new();
    let mut old: Vec<Map<String, Value>> = Vec::new();
    let mut rest = &original[..];
    for (line, newline) in lines(&original) {
        let whole = &rest[..line.len() + usize::from(newline)];
        rest = &rest[whole.len()..];
        let blank = line.iter().all(u8::is_ascii_whitespace);
        match (!blank).then(|| parse_object(line, &mut false)).flatten() {
            Some(obj) => {
                layout.push(Line::Object(whole, old.len()));
                old.push(obj);
            }
            None => layout.push(Line::Verbatim(whole)),
        }
    }
    if old.is_empty() {
        return Err(Error::Invalid(format!(
            "{} has no session header",
            path.display()
        )));
    }
    let mut new = old.clone();
    new[0].insert("version".into(), 3.into());
    if session.file_version < 2 {
        migrate_v1(session.id(), &mut new[1..]);
    }
    if session.file_version < 3 {
        migrate_v2(&mut new[1..]);
    }

    let mut bytes = Vec::with_capacity(original.len() + 48 * old.len());
    for (n, l) in layout.iter().enumerate() {
        match *l {
            Line::Verbatim(text) => bytes.extend_from_slice(text),
            Line::Object(text, i) => {
                let (body, end) = match text.strip_suffix(b"\n") {
                    Some(body) => (body, &b"\n"[..]),
                    None => (text, &b""[..]),
                };
                let edited = splice_object_line(body, &old[i], &new[i]).map_err(|_| {
                    Error::Invalid(format!(
                        "line {} of {} cannot be rewritten without changing it; not migrating",
                        n + 1,
                        path.display()
                    ))
                })?;
                bytes.extend_from_slice(&edited);
                bytes.extend_from_slice(end);
            }
        }
    }

    let bak = PathBuf::from(format!("{}.bak", path.display()));
    // Dated as the original: a backup dated today would hide when the
    // session was last used.
    fileops::write_backup(&bak, &original, &meta).map_err(io_err(&bak))?;
    write_atomic(path, &bytes)?;
    Ok(bak)
}

/// Whether the reader cut a too-deep subtree out of this entry's object.
fn is_trimmed(raw: &Map<String, Value>) -> bool {
    fn walk(v: &Value) -> bool {
        match v {
            Value::String(s) => s == crate::reader::DEEP_PLACEHOLDER,
            Value::Array(a) => a.iter().any(walk),
            Value::Object(m) => m.values().any(walk),
            _ => false,
        }
    }
    raw.values().any(walk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glued(before: &[u8], others: &[u8], line: &[u8]) -> Option<u64> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut all = before.to_vec();
        all.extend_from_slice(others);
        all.extend_from_slice(line);
        std::fs::write(&path, &all).unwrap();
        let mut f = File::open(&path).unwrap();
        glued_onto(&mut f, before.len() as u64, line).unwrap()
    }

    #[test]
    fn sees_a_line_joined_onto_a_partial_one() {
        let line = b"{\"type\":\"label\",\"id\":\"0badc0de\"}\n";
        assert_eq!(glued(b"{\"h\":1}\n", b"", line), None);
        assert_eq!(glued(b"{\"h\":1}\n", b"{\"a\":2}\n{\"b\":3}\n", line), None);
        // The damaged line is the other writer's, from where it started.
        assert_eq!(glued(b"{\"h\":1}\n", b"{\"type\":\"mess", line), Some(8));
        assert_eq!(glued(b"{\"h\":1}\n", b"{\"a\":2}\n{\"ty", line), Some(16));
    }

    /// Issue #11.7: the report of that race says what happened to the other
    /// program's line, not that nothing else changed.
    #[test]
    fn the_interleaving_report_says_the_other_line_was_damaged() {
        let e = Error::Interleaved {
            path: PathBuf::from("/s/x.jsonl"),
            at: 16,
        }
        .to_string();
        assert!(!e.contains("nothing else changed"), "{e}");
        assert!(e.contains("at byte 16"), "{e}");
        assert!(
            e.contains("the other program's line was split around it"),
            "{e}"
        );
        assert!(e.contains("arbor's entry was not saved"), "{e}");
    }

    /// A fork reads each line back from the source by where it was: a
    /// source rewritten in place meanwhile stops the fork instead of
    /// copying whatever is there now as the entry.
    #[test]
    fn a_fork_stops_when_the_source_changed_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let line = |id: &str, parent: &str| {
            format!(
                "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n"
            )
        };
        let header = "{\"type\":\"session\",\"version\":3,\"id\":\"s1\",\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"cwd\":\"/w\"}\n";
        let text = format!(
            "{header}{}{}",
            line("aaaa0001", "null"),
            line("aaaa0002", "\"aaaa0001\"")
        );
        std::fs::write(&path, &text).unwrap();
        let session = crate::reader::read_session_lean(&path).unwrap();
        let tree = SessionTree::build(&session);
        let leaf = tree.index_of("aaaa0002").unwrap();
        let fork_path = tree.path_to(leaf);
        let lines = ForkLines {
            session: &session,
            tree: &tree,
            path: &fork_path,
            now: "2026-01-02T00:00:00.000Z",
        };
        let write = || {
            let (mut out, mut trimmed, mut moved) = (Vec::new(), None, false);
            let r = lines.write(Map::new(), &mut out, &mut trimmed, &mut moved);
            (r.is_ok(), moved)
        };
        assert_eq!(write(), (true, false));
        // The same bytes but other ids, written over the same file.
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all(text.replace("aaaa", "bbbb").as_bytes())
            .unwrap();
        drop(f);
        assert_eq!(write(), (false, true));
    }
}
