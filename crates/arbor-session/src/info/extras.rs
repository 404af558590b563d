//! What a session's list row carries beyond the picker's columns: its
//! labels (for `arbor labels`) and the usage of its assistant messages by
//! model and hour (for `arbor stats`). Both are gathered by the list
//! scanner in its one pass and stored in the index with the row.
//!
//! A label's text is the row text of the entry it is on, which lies
//! earlier in the file than the label: the scanner notes where each entry's
//! line starts (a hash of its id and an offset, 16 bytes an entry), and
//! once the pass is done the few labelled lines are read again, one
//! `pread` each. A scan resumed on appended bytes has no offsets for the
//! lines before: a label added then costs one quick pass over the file.

use std::hash::Hasher;
use std::io::{Read, Seek, SeekFrom};

use serde_json::Value;

use crate::entry::{id_text, Entry};
use crate::reader::parse_object;
use crate::render::{entry_text, ToolCalls};
use arbor_util::hash::FxHasher;

/// How many characters of the labelled entry's row text are kept.
pub const LABEL_TEXT_CHARS: usize = 120;

/// A label set in the file (the latest for its entry), as docs/spec.md §3 applies
/// them: in file order, an empty or missing `label` clears.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LabelInfo {
    pub entry_id: String,
    pub label: String,
    /// The label entry's `timestamp`, as written.
    pub time: Option<String>,
    pub text: LabelText,
}

/// The row text of a labelled entry.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum LabelText {
    /// Not looked up yet (the scan that found the label has not finished).
    Pending,
    /// No entry of the file has that id: the label shows nowhere.
    Missing,
    Text(String),
}

/// Usage summed per (model, hour) over a session's assistant messages, all
/// branches included.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Model names (`""`: none given), indexed by [`UsageBucket::model`].
    pub models: Vec<String>,
    /// In the order first met.
    pub buckets: Vec<UsageBucket>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct UsageBucket {
    pub model: u32,
    /// Hours since the Unix epoch (UTC) of the messages' time.
    pub hour: i64,
    pub messages: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
    /// Replies copied into this session by a fork (docs/cli.md, "Labels
    /// and usage"): in a session with a parent session, those older than
    /// its header. The parent holds the same replies, so a report that
    /// counts the parent leaves these out (each reply's money is spent
    /// once).
    #[serde(default)]
    pub copied: bool,
}

/// A label in effect, with what shows it: for `arbor labels` and the
/// picker's list of labels.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelRow {
    pub path: std::path::PathBuf,
    pub agent: crate::agent::Agent,
    pub session_id: String,
    /// The session's title (name, else first message), for the picker.
    pub title: String,
    pub entry_id: String,
    pub label: String,
    /// The label time as ISO UTC (as written when it does not parse).
    pub time: Option<String>,
    /// The labelled entry's row text (empty if it could not be read).
    pub text: String,
    time_ms: i64,
}

/// The labels of `rows` that show somewhere (their entry is in the file),
/// newest first; ties by file, then entry.
pub fn label_rows(rows: &[crate::info::SessionInfo]) -> Vec<LabelRow> {
    use crate::entry::{format_iso_ms, parse_iso_ms};
    let mut out: Vec<LabelRow> = rows
        .iter()
        .flat_map(|r| {
            r.labels
                .iter()
                .filter(|l| l.text != LabelText::Missing)
                .map(move |l| {
                    let ms = l.time.as_deref().and_then(parse_iso_ms);
                    LabelRow {
                        path: r.path.to_path_buf(),
                        agent: r.agent,
                        session_id: r.id.clone(),
                        title: r.title().to_string(),
                        entry_id: l.entry_id.clone(),
                        label: l.label.clone(),
                        time: match ms {
                            Some(ms) => Some(format_iso_ms(ms)),
                            None => l.time.clone(),
                        },
                        text: match &l.text {
                            LabelText::Text(t) => t.clone(),
                            _ => String::new(),
                        },
                        time_ms: ms.unwrap_or(i64::MIN),
                    }
                })
        })
        .collect();
    out.sort_by(|a, b| {
        b.time_ms
            .cmp(&a.time_ms)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.entry_id.cmp(&b.entry_id))
    });
    out
}

/// One assistant message's figures (negative or absent values are 0).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UsageFigures {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
}

pub const HOUR_MS: i64 = 3_600_000;

impl Usage {
    /// Counts one assistant message of `model` at `ms`, `copied` from the
    /// parent session or not (see [`UsageBucket::copied`]).
    pub fn add(&mut self, model: &str, ms: i64, f: UsageFigures, copied: bool) {
        let hour = ms.div_euclid(HOUR_MS);
        let m = match self.models.iter().position(|x| x == model) {
            Some(m) => m as u32,
            None => {
                self.models.push(model.to_string());
                (self.models.len() - 1) as u32
            }
        };
        // Messages come in time order, mostly: the bucket is nearly always
        // the last one.
        let b = match self
            .buckets
            .iter()
            .rposition(|b| b.model == m && b.hour == hour && b.copied == copied)
        {
            Some(b) => &mut self.buckets[b],
            None => {
                self.buckets.push(UsageBucket {
                    model: m,
                    hour,
                    copied,
                    ..Default::default()
                });
                let last = self.buckets.len() - 1;
                &mut self.buckets[last]
            }
        };
        b.messages += 1;
        b.input += f.input;
        b.output += f.output;
        b.cache_read += f.cache_read;
        b.cache_write += f.cache_write;
        b.cost += f.cost;
    }

    pub fn model(&self, b: &UsageBucket) -> &str {
        self.models.get(b.model as usize).map_or("", String::as_str)
    }
}

/// Applies one `label` entry (`label`: `None` or empty clears).
pub(crate) fn apply_label(
    labels: &mut Vec<LabelInfo>,
    target: String,
    label: Option<String>,
    time: Option<String>,
) {
    let pos = labels.iter().position(|l| l.entry_id == target);
    match label.filter(|l| !l.is_empty()) {
        Some(label) => {
            // A renamed label keeps the text already found for its entry.
            let text = pos.map_or(LabelText::Pending, |p| labels.remove(p).text);
            labels.push(LabelInfo {
                entry_id: target,
                label,
                time,
                text,
            });
        }
        None => {
            if let Some(p) = pos {
                labels.remove(p);
            }
        }
    }
}

/// The key an entry id is found by: a hash of the id as the tree keys it.
pub(crate) fn id_hash(id: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(id.as_bytes());
    h.finish()
}

/// The key of an entry from its raw `id` JSON text (`None`: no id).
pub(crate) fn raw_id_hash(raw: &str) -> Option<u64> {
    if raw.starts_with('"') && !raw.contains('\\') && raw.len() >= 2 {
        return Some(id_hash(&raw[1..raw.len() - 1]));
    }
    let v: Value = crate::reader::parse_json_lenient(raw)?;
    id_text(&v).map(|s| id_hash(&s))
}

/// Where a scan found each entry's line: per entry one `u64`, the top 24
/// bits of its id's hash over the line's byte offset (40 bits: files up
/// to a terabyte). A match is only a candidate: the line is read and its
/// id compared. The vectors are reused from scan to scan on each thread,
/// so a cold scan of thousands of files does not fault in fresh memory
/// for each (that cost a tenth of the scan's time).
#[derive(Debug, Default)]
pub(crate) struct Offsets(Vec<u64>);

const OFFSET_BITS: u32 = 40;

thread_local! {
    static SPARE: std::cell::RefCell<Vec<Vec<u64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Offsets {
    /// Notes an entry; false when its offset is beyond what is kept.
    #[inline]
    pub fn push(&mut self, id_hash: u64, offset: u64) -> bool {
        if offset >> OFFSET_BITS != 0 {
            return false;
        }
        if self.0.capacity() == 0 {
            self.0 = SPARE
                .with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.pop()))
                .unwrap_or_default();
        }
        self.0
            .push((id_hash >> OFFSET_BITS << OFFSET_BITS) | offset);
        true
    }

    /// Offsets of the lines whose id may hash to `id_hash`, last first.
    fn candidates(&self, id_hash: u64) -> impl Iterator<Item = u64> + '_ {
        let top = id_hash >> OFFSET_BITS;
        self.0
            .iter()
            .rev()
            .filter(move |&&v| v >> OFFSET_BITS == top)
            .map(|&v| v & ((1 << OFFSET_BITS) - 1))
    }
}

impl Clone for Offsets {
    fn clone(&self) -> Self {
        Offsets(self.0.clone())
    }
}

impl Drop for Offsets {
    fn drop(&mut self) {
        let mut v = std::mem::take(&mut self.0);
        // Keep a few of a reasonable size (a 16 MiB one came from a huge file).
        if v.capacity() == 0 || v.capacity() > 2 << 20 {
            return;
        }
        v.clear();
        SPARE.with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < 4 {
                    s.push(v);
                }
            }
        });
    }
}

/// Where the lines of a session file can be read again.
pub trait LineSource {
    /// The line starting at byte `off`, without its newline.
    fn line_at(&mut self, off: u64) -> std::io::Result<Vec<u8>>;
    /// Calls `f(line, offset)` for every line, in order.
    fn each_line(&mut self, f: &mut dyn FnMut(&[u8], u64)) -> std::io::Result<()>;
}

impl LineSource for &[u8] {
    fn line_at(&mut self, off: u64) -> std::io::Result<Vec<u8>> {
        let rest = self.get(off as usize..).unwrap_or_default();
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        Ok(rest[..end].to_vec())
    }

    fn each_line(&mut self, f: &mut dyn FnMut(&[u8], u64)) -> std::io::Result<()> {
        let base = self.as_ptr() as usize;
        for (line, _) in crate::reader::lines(self) {
            f(line, (line.as_ptr() as usize - base) as u64);
        }
        Ok(())
    }
}

impl LineSource for std::fs::File {
    fn line_at(&mut self, off: u64) -> std::io::Result<Vec<u8>> {
        self.seek(SeekFrom::Start(off))?;
        let mut out = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = match self.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if n == 0 {
                return Ok(out);
            }
            if let Some(i) = memchr::memchr(b'\n', &chunk[..n]) {
                out.extend_from_slice(&chunk[..i]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
        }
    }

    fn each_line(&mut self, f: &mut dyn FnMut(&[u8], u64)) -> std::io::Result<()> {
        self.seek(SeekFrom::Start(0))?;
        crate::info::with_read_buffer(|buf| {
            crate::info::read_lines(self, buf, |line, complete, end| {
                let start = end - line.len() as u64 - u64::from(complete);
                f(line, start);
                true
            })
        })
        .map(|_| ())
    }
}

/// The entry a line holds, when it is one.
fn entry_of(line: &[u8]) -> Option<Entry> {
    let mut lossy = false;
    parse_object(line, &mut lossy).map(|raw| Entry::new(0, raw))
}

/// Finds entries by id: through the offsets the scan noted, or (when they
/// do not cover the file) through the offsets of one pass of its own.
struct Finder<'a> {
    offsets: std::borrow::Cow<'a, Offsets>,
}

impl<'a> Finder<'a> {
    fn new(
        offsets: &'a Offsets,
        complete: bool,
        src: &mut dyn LineSource,
    ) -> std::io::Result<Finder<'a>> {
        if complete {
            return Ok(Finder {
                offsets: std::borrow::Cow::Borrowed(offsets),
            });
        }
        // Every entry's id, skimmed; the first object is the header.
        let mut all = Offsets::default();
        let mut header = true;
        src.each_line(&mut |line, off| {
            if line.iter().all(u8::is_ascii_whitespace) {
                return;
            }
            let Some(id) = line_id(line) else {
                return;
            };
            if std::mem::take(&mut header) {
                return;
            }
            if let Some(h) = id {
                all.push(h, off);
            }
        })?;
        Ok(Finder {
            offsets: std::borrow::Cow::Owned(all),
        })
    }

    /// The last entry with this id (as the tree keys duplicates).
    fn find(&self, id: &str, src: &mut dyn LineSource) -> std::io::Result<Option<Entry>> {
        for off in self.offsets.candidates(id_hash(id)) {
            if let Some(e) = entry_of(&src.line_at(off)?) {
                if e.id == id {
                    return Ok(Some(e));
                }
            }
        }
        Ok(None)
    }
}

/// `None` when the line is not a JSON object (the reader skips it), else
/// the hash of its `id` (`None` without one): skimmed from the text when
/// the line is plain, else parsed as the reader parses it.
fn line_id(line: &[u8]) -> Option<Option<u64>> {
    let skimmed = simdutf8::basic::from_utf8(line).ok().and_then(|text| {
        let mut out: [Option<&str>; 1] = [None];
        let mut sk = crate::jsonscan::Skim::new(text);
        sk.object(0, &[b"id"], &mut out)?;
        sk.at_end().then_some(out[0])
    });
    match skimmed {
        Some(raw) => Some(raw.and_then(raw_id_hash)),
        None => {
            let mut lossy = false;
            let raw = parse_object(line, &mut lossy)?;
            Some(raw.get("id").and_then(id_text).map(|s| id_hash(&s)))
        }
    }
}

/// Fills in the text of the labels still `Pending`. `offsets` are where
/// the scan found each entry; `complete` when they cover the whole file.
pub(crate) fn resolve_label_texts(
    labels: &mut [LabelInfo],
    offsets: &Offsets,
    complete: bool,
    src: &mut dyn LineSource,
) -> std::io::Result<()> {
    if !labels.iter().any(|l| l.text == LabelText::Pending) {
        return Ok(());
    }
    let finder = Finder::new(offsets, complete, src)?;
    for l in labels.iter_mut().filter(|l| l.text == LabelText::Pending) {
        l.text = match finder.find(&l.entry_id, src)? {
            None => LabelText::Missing,
            Some(e) => {
                let call = tool_call_of(&e, &finder, src)?;
                let mut calls = ToolCalls::default();
                if let Some((id, name, args)) = call {
                    calls.insert_value(&id, &name, args);
                }
                LabelText::Text(short(&entry_text(&e, &calls)))
            }
        };
    }
    Ok(())
}

/// For a tool result: the call that made it, from its parent (or an
/// ancestor a few steps up), so that its text names the call as /tree does.
fn tool_call_of(
    e: &Entry,
    finder: &Finder,
    src: &mut dyn LineSource,
) -> std::io::Result<Option<(String, String, Value)>> {
    if e.role() != Some("toolResult") {
        return Ok(None);
    }
    let Some(call_id) = e
        .message()
        .and_then(|m| m.get("toolCallId"))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let mut parent = e.parent_id.clone();
    for _ in 0..64 {
        let Some(p) = parent else {
            break;
        };
        let Some(pe) = finder.find(&p, src)? else {
            break;
        };
        if pe.role() == Some("assistant") {
            if let Some(Value::Array(blocks)) = pe.message().and_then(|m| m.get("content")) {
                for b in blocks {
                    if b.get("type").and_then(Value::as_str) == Some("toolCall")
                        && b.get("id").and_then(Value::as_str) == Some(call_id)
                    {
                        if let Some(name) = b.get("name").and_then(Value::as_str) {
                            let args = b.get("arguments").cloned().unwrap_or(Value::Null);
                            return Ok(Some((call_id.to_string(), name.to_string(), args)));
                        }
                    }
                }
            }
        }
        parent = pe.parent_id.clone();
    }
    Ok(None)
}

/// One line of at most [`LABEL_TEXT_CHARS`] characters.
fn short(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > LABEL_TEXT_CHARS {
        let mut t: String = one.chars().take(LABEL_TEXT_CHARS - 1).collect();
        t.push('…');
        t
    } else {
        one
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_apply_in_order_and_keep_found_text() {
        let mut l = Vec::new();
        apply_label(&mut l, "a".into(), Some("one".into()), None);
        l[0].text = LabelText::Text("user: hi".into());
        apply_label(&mut l, "b".into(), Some("two".into()), None);
        apply_label(&mut l, "a".into(), Some("renamed".into()), Some("t".into()));
        assert_eq!(l.len(), 2);
        assert_eq!(
            (l[1].entry_id.as_str(), l[1].label.as_str()),
            ("a", "renamed")
        );
        assert_eq!(l[1].text, LabelText::Text("user: hi".into()));
        apply_label(&mut l, "b".into(), Some(String::new()), None);
        apply_label(&mut l, "zzz".into(), None, None);
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn usage_buckets_by_model_and_hour() {
        let mut u = Usage::default();
        let f = |c| UsageFigures {
            input: 1,
            output: 2,
            cache_read: 3,
            cache_write: 4,
            cost: c,
        };
        u.add("m1", 10, f(0.5), false);
        u.add("m1", HOUR_MS - 1, f(0.25), false);
        u.add("m2", HOUR_MS, f(1.0), false);
        u.add("m1", -1, f(1.0), false);
        assert_eq!(u.models, vec!["m1", "m2"]);
        let b: Vec<(u32, i64, u64, f64)> = u
            .buckets
            .iter()
            .map(|b| (b.model, b.hour, b.messages, b.cost))
            .collect();
        assert_eq!(b, vec![(0, 0, 2, 0.75), (1, 1, 1, 1.0), (0, -1, 1, 1.0)]);
    }

    #[test]
    fn short_is_one_line_and_bounded() {
        assert_eq!(short("a\n  b\tc"), "a b c");
        let long = "x".repeat(500);
        assert_eq!(short(&long).chars().count(), LABEL_TEXT_CHARS);
    }
}
