//! A compact binary encoding of list rows, so that loading 10,000 cached
//! rows costs a few milliseconds (JSON would cost tens). `path`, `agent`
//! and `all_text` are not stored: the path is the row's key, the agent comes
//! with the file being listed, and the text lives in the full-text tables.

use std::hash::Hasher;

use arbor_session::extras::{LabelInfo, LabelText, Usage, UsageBucket};
use std::path::Path;

use arbor_search::doc::{RowFacts, RowText, SearchDoc};
use arbor_session::agent::Agent;
use arbor_session::entry::format_iso_ms;
use arbor_session::info::{
    display_name, fresh_summary, path_text, JsonDiagnostics, JsonRow, SessionInfo, NO_MESSAGES,
};
use arbor_session::reader::Diagnostics;

const CODEC_VERSION: u8 = 5;

struct Enc(Vec<u8>);

impl Enc {
    fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn i64(&mut self, v: i64) {
        self.u64(((v << 1) ^ (v >> 63)) as u64);
    }
    fn bool(&mut self, v: bool) {
        self.0.push(v as u8);
    }
    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.0.push(1);
                self.str(s);
            }
            None => self.0.push(0),
        }
    }
    fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(v) => {
                self.0.push(1);
                self.i64(v);
            }
            None => self.0.push(0),
        }
    }

    /// The labels section: their count, then each label.
    fn labels(&mut self, labels: &[LabelInfo]) {
        self.u64(labels.len() as u64);
        for l in labels {
            self.str(&l.entry_id);
            self.str(&l.label);
            self.opt_str(l.time.as_deref());
            match &l.text {
                LabelText::Pending => self.0.push(0),
                LabelText::Missing => self.0.push(1),
                LabelText::Text(t) => {
                    self.0.push(2);
                    self.str(t);
                }
            }
        }
    }

    /// The usage section: the models, then the buckets by hour.
    fn usage(&mut self, usage: &Usage) {
        self.u64(usage.models.len() as u64);
        for m in &usage.models {
            self.str(m);
        }
        self.u64(usage.buckets.len() as u64);
        let mut hour = 0i64;
        for b in &usage.buckets {
            // The model's number and whether the bucket holds copied replies.
            self.u64(u64::from(b.model) << 1 | u64::from(b.copied));
            // Consecutive buckets are hours apart: a small delta.
            self.i64(b.hour.wrapping_sub(hour));
            hour = b.hour;
            for v in [b.messages, b.input, b.output, b.cache_read, b.cache_write] {
                self.u64(v);
            }
            self.0.extend_from_slice(&b.cost.to_bits().to_le_bytes());
        }
    }
}

struct Dec<'a> {
    b: &'a [u8],
    i: usize,
    /// Its strings were found to be UTF-8 before (see [`view_kept`]).
    checked: bool,
}

impl<'a> Dec<'a> {
    fn new(b: &'a [u8]) -> Dec<'a> {
        Dec {
            b,
            i: 0,
            checked: false,
        }
    }
    fn byte(&mut self) -> Option<u8> {
        let v = *self.b.get(self.i)?;
        self.i += 1;
        Some(v)
    }
    fn u64(&mut self) -> Option<u64> {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.byte()?;
            if shift > 63 {
                return None;
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Some(v);
            }
            shift += 7;
        }
    }
    fn f64(&mut self) -> Option<f64> {
        let end = self.i.checked_add(8)?;
        let v = f64::from_bits(u64::from_le_bytes(
            self.b.get(self.i..end)?.try_into().ok()?,
        ));
        self.i = end;
        Some(v)
    }
    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
    fn i64(&mut self) -> Option<i64> {
        let v = self.u64()?;
        Some(((v >> 1) as i64) ^ -((v & 1) as i64))
    }
    fn bool(&mut self) -> Option<bool> {
        match self.byte()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
    fn str(&mut self) -> Option<String> {
        self.str_ref().map(str::to_owned)
    }
    fn str_ref(&mut self) -> Option<&'a str> {
        let n = self.usize()?;
        let s = self.b.get(self.i..self.i.checked_add(n)?)?;
        self.i += n;
        if self.checked {
            // SAFETY: `checked` is only set by `view_kept`, whose caller
            // promises these bytes were read by `view` before, which
            // checked this very string (the same bytes, walked the same way).
            return Some(unsafe { std::str::from_utf8_unchecked(s) });
        }
        simdutf8::basic::from_utf8(s).ok()
    }
    fn opt_str_ref(&mut self) -> Option<Option<&'a str>> {
        Some(if self.bool()? {
            Some(self.str_ref()?)
        } else {
            None
        })
    }
    /// A section behind its length.
    fn section(&mut self) -> Option<&'a [u8]> {
        let n = self.usize()?;
        let s = self.b.get(self.i..self.i.checked_add(n)?)?;
        self.i += n;
        Some(s)
    }
    fn opt_str(&mut self) -> Option<Option<String>> {
        Some(if self.bool()? {
            Some(self.str()?)
        } else {
            None
        })
    }
    fn opt_i64(&mut self) -> Option<Option<i64>> {
        Some(if self.bool()? {
            Some(self.i64()?)
        } else {
            None
        })
    }
}

/// Encodes a row (without `path` and `all_text`).
pub fn encode(i: &SessionInfo) -> Vec<u8> {
    // Destructured so that a new field is a compile error here.
    let SessionInfo {
        path: _,
        id,
        cwd,
        name,
        has_name,
        created,
        modified_ms,
        message_count,
        first_message,
        parent_session_path,
        summary_candidate,
        last_message_id,
        last_reply,
        internal,
        git_branch,
        all_text: _,
        models,
        total_tokens,
        total_cost,
        diagnostics,
        header_ms,
        newest_message_ms,
        file_mtime_ms,
        // Not stored: it belongs to the file's store root, not its bytes.
        agent: _,
        labels,
        usage,
    } = i;
    let mut e = Enc(Vec::with_capacity(
        256 + first_message.as_ref().map_or(0, String::len),
    ));
    e.0.push(CODEC_VERSION);
    e.str(id);
    e.str(cwd);
    e.opt_str(name.as_deref());
    e.bool(*has_name);
    e.str(created);
    e.i64(*modified_ms);
    e.u64(*message_count as u64);
    e.opt_str(first_message.as_deref());
    e.opt_str(parent_session_path.as_deref());
    match summary_candidate {
        Some((s, t)) => {
            e.0.push(1);
            e.str(s);
            e.str(t);
        }
        None => e.0.push(0),
    }
    e.opt_str(last_message_id.as_deref());
    e.opt_str(last_reply.as_deref());
    e.bool(*internal);
    e.opt_str(git_branch.as_deref());
    e.u64(models.len() as u64);
    for m in models {
        e.str(m);
    }
    e.u64(*total_tokens);
    e.0.extend_from_slice(&total_cost.to_bits().to_le_bytes());
    e.u64(diagnostics.blank_lines as u64);
    e.u64(diagnostics.skipped_lines as u64);
    e.u64(diagnostics.lossy_lines as u64);
    e.bool(diagnostics.partial_tail);
    e.opt_i64(*header_ms);
    e.opt_i64(*newest_message_ms);
    e.i64(*file_mtime_ms);
    // Labels (for `arbor labels` and the query's `label:`) and usage (for
    // `arbor stats`) go last, each behind its length: a listing decodes the
    // labels (few, and mostly none) and skips the usage without decoding it.
    let mut x = Enc(Vec::new());
    x.labels(labels);
    e.u64(x.0.len() as u64);
    e.0.extend_from_slice(&x.0);
    x.0.clear();
    x.usage(usage);
    e.u64(x.0.len() as u64);
    e.0.extend_from_slice(&x.0);
    e.0
}

/// Decodes a row; `None` when the bytes are not a row of this version.
pub fn decode(b: &[u8]) -> Option<SessionInfo> {
    decode_with(b, true)
}

/// [`decode`], leaving the usage out unless `extras` (a listing has no use
/// for it; skipping it keeps 10,000 rows cheap to load). Labels are always
/// decoded: the query's `label:` filter looks at them.
pub fn decode_with(b: &[u8], extras: bool) -> Option<SessionInfo> {
    let v = view(b)?;
    let owned = |s: &str| s.to_owned();
    let mut models = Vec::with_capacity(v.model_count.min(64));
    let d = &mut Dec::new(v.models);
    for _ in 0..v.model_count {
        models.push(d.str()?);
    }
    // Written sorted and unique; kept so whatever the bytes say.
    models.sort_unstable();
    models.dedup();
    let labels = decode_labels(&mut Dec::new(v.labels))?;
    let usage = if extras {
        let x = &mut Dec::new(v.usage);
        let usage = decode_usage(x)?;
        if x.i != v.usage.len() {
            return None;
        }
        usage
    } else {
        Default::default()
    };
    Some(SessionInfo {
        path: Default::default(),
        id: owned(v.id),
        cwd: owned(v.cwd),
        name: v.name.map(owned),
        has_name: v.has_name,
        created: owned(v.created),
        modified_ms: v.modified_ms,
        message_count: v.message_count,
        first_message: v.first_message.map(owned),
        parent_session_path: v.parent_session_path.map(owned),
        summary_candidate: v.summary_candidate.map(|(s, t)| (owned(s), owned(t))),
        last_message_id: v.last_message_id.map(owned),
        last_reply: v.last_reply.map(owned),
        internal: v.internal,
        git_branch: v.git_branch.map(owned),
        all_text: String::new(),
        models,
        total_tokens: v.total_tokens,
        total_cost: v.total_cost,
        diagnostics: v.diagnostics,
        header_ms: v.header_ms,
        newest_message_ms: v.newest_message_ms,
        file_mtime_ms: v.file_mtime_ms,
        agent: Default::default(),
        labels,
        usage,
    })
}

/// A stored row read where it lies: its text borrowed from the bytes, its
/// models, labels and usage left encoded. What `arbor list` prints is
/// written from this without building a [`SessionInfo`] (at 100,000
/// sessions, allocating and freeing those rows was most of a warm
/// listing's time).
#[derive(Debug, Clone, PartialEq)]
pub struct RowView<'a> {
    pub id: &'a str,
    pub cwd: &'a str,
    pub name: Option<&'a str>,
    pub has_name: bool,
    pub created: &'a str,
    pub modified_ms: i64,
    pub message_count: usize,
    pub first_message: Option<&'a str>,
    pub parent_session_path: Option<&'a str>,
    pub summary_candidate: Option<(&'a str, &'a str)>,
    pub last_message_id: Option<&'a str>,
    pub last_reply: Option<&'a str>,
    pub internal: bool,
    pub git_branch: Option<&'a str>,
    pub total_tokens: u64,
    pub total_cost: f64,
    pub diagnostics: Diagnostics,
    pub header_ms: Option<i64>,
    pub newest_message_ms: Option<i64>,
    pub file_mtime_ms: i64,
    model_count: usize,
    /// The models' strings, as encoded.
    models: &'a [u8],
    /// The labels' section, as encoded (checked by [`view`]).
    labels: &'a [u8],
    /// The usage's section, as encoded (not checked).
    usage: &'a [u8],
}

impl<'a> RowView<'a> {
    /// Name, else first message: the row's title.
    pub fn title(&self) -> &'a str {
        display_name(self.name).unwrap_or(self.first_message.unwrap_or(NO_MESSAGES))
    }

    /// The row of `arbor list --json` for the file at `path`, found under
    /// a store root of `agent`: what [`SessionInfo::json_row`] gives for
    /// the decoded row.
    pub fn json_row(&self, path: &'a Path, agent: Agent) -> JsonRow<'a> {
        JsonRow {
            path: path_text(path),
            id: self.id,
            cwd: self.cwd,
            name: display_name(self.name),
            has_name: self.has_name,
            created: self.created,
            modified: format_iso_ms(self.modified_ms),
            message_count: self.message_count,
            first_message: self.first_message.unwrap_or(NO_MESSAGES),
            parent_session_path: self.parent_session_path,
            summary: fresh_summary(self.summary_candidate, self.last_message_id),
            last_reply: self.last_reply,
            internal: self.internal,
            agent: agent.name(),
            git_branch: self.git_branch,
            diagnostics: JsonDiagnostics::of(&self.diagnostics),
        }
    }

    /// The texts a query matches, as [`RowText::of`] gives them for the
    /// decoded row.
    pub fn row_text(&self) -> RowText<'a> {
        RowText {
            name: display_name(self.name),
            summary: fresh_summary(self.summary_candidate, self.last_message_id),
            first_message: self.first_message.unwrap_or(NO_MESSAGES),
            cwd: self.cwd,
            id: self.id,
        }
    }

    /// The row's search document, as `SearchDoc::from_info` makes it of
    /// the decoded row found under a store root of `agent` (the bodies are
    /// the index's to answer for).
    pub fn search_doc(&self, agent: Agent) -> SearchDoc {
        SearchDoc::of_row(self.row_text(), "", self.facts(agent))
    }

    /// [`RowView::search_doc`] for a query without words
    /// ([`SearchDoc::of_row_short`]).
    pub fn search_doc_short(&self, agent: Agent) -> SearchDoc {
        SearchDoc::of_row_short(self.row_text(), self.facts(agent))
    }

    fn facts(&self, agent: Agent) -> RowFacts {
        RowFacts::new(
            self.row_text(),
            self.modified_ms,
            self.models_sorted().into_iter(),
            self.parent_session_path.is_some(),
            agent,
            &self.labels(),
        )
    }

    /// The models as [`decode_with`] keeps them: sorted, each once,
    /// whatever the bytes say.
    pub fn models_sorted(&self) -> Vec<&'a str> {
        let mut models: Vec<&str> = self.models().collect();
        models.sort_unstable();
        models.dedup();
        models
    }

    /// The models used (as stored: sorted, each once, unless the bytes say
    /// otherwise).
    pub fn models(&self) -> impl Iterator<Item = &'a str> {
        let mut d = Dec::new(self.models);
        (0..self.model_count).map_while(move |_| d.str_ref())
    }

    /// The labels (few, mostly none: decoded when asked for).
    pub fn labels(&self) -> Vec<LabelInfo> {
        decode_labels(&mut Dec::new(self.labels)).unwrap_or_default()
    }

    /// The list row a stored scanner state stands for (`state` is a
    /// scanner before `finish`, which only settles the time): the same as
    /// decoding it and finishing the scanner.
    pub fn finish_state(&mut self) {
        self.modified_ms = self
            .newest_message_ms
            .or(self.header_ms)
            .unwrap_or(self.file_mtime_ms);
    }
}

/// Reads a row in place; `None` exactly when [`decode_with`] without the
/// usage would refuse the bytes.
pub fn view(b: &[u8]) -> Option<RowView<'_>> {
    view_with(Dec::new(b))
}

/// [`view`] again, without checking the strings' UTF-8 a second time (at
/// 100,000 sessions that check is ~30 ms of a listing).
///
/// # Safety
///
/// `b` must be bytes that [`view`] accepted, unchanged since.
pub unsafe fn view_kept(b: &[u8]) -> Option<RowView<'_>> {
    view_with(Dec {
        b,
        i: 0,
        checked: true,
    })
}

fn view_with(mut d: Dec<'_>) -> Option<RowView<'_>> {
    let b = d.b;
    if d.byte()? != CODEC_VERSION {
        return None;
    }
    let id = d.str_ref()?;
    let cwd = d.str_ref()?;
    let name = d.opt_str_ref()?;
    let has_name = d.bool()?;
    let created = d.str_ref()?;
    let modified_ms = d.i64()?;
    let message_count = d.usize()?;
    let first_message = d.opt_str_ref()?;
    let parent_session_path = d.opt_str_ref()?;
    let summary_candidate = if d.bool()? {
        Some((d.str_ref()?, d.str_ref()?))
    } else {
        None
    };
    let last_message_id = d.opt_str_ref()?;
    let last_reply = d.opt_str_ref()?;
    let internal = d.bool()?;
    let git_branch = d.opt_str_ref()?;
    let model_count = d.usize()?;
    let models_at = d.i;
    for _ in 0..model_count {
        d.str_ref()?;
    }
    let models = &b[models_at..d.i];
    let total_tokens = d.u64()?;
    let total_cost = d.f64()?;
    let diagnostics = Diagnostics {
        blank_lines: d.usize()?,
        skipped_lines: d.usize()?,
        lossy_lines: d.usize()?,
        partial_tail: d.bool()?,
    };
    let header_ms = d.opt_i64()?;
    let newest_message_ms = d.opt_i64()?;
    let file_mtime_ms = d.i64()?;
    let labels = d.section()?;
    // Checked here (labels are few, mostly none: no allocation), so that
    // a view is had exactly when a decode is.
    let x = &mut Dec::new(labels);
    decode_labels(x)?;
    if x.i != labels.len() {
        return None;
    }
    let usage = d.section()?;
    if d.i != b.len() {
        return None;
    }
    Some(RowView {
        id,
        cwd,
        name,
        has_name,
        created,
        modified_ms,
        message_count,
        first_message,
        parent_session_path,
        summary_candidate,
        last_message_id,
        last_reply,
        internal,
        git_branch,
        total_tokens,
        total_cost,
        diagnostics,
        header_ms,
        newest_message_ms,
        file_mtime_ms,
        model_count,
        models,
        labels,
        usage,
    })
}

/// Labels, as [`encode`] writes them.
fn decode_labels(d: &mut Dec) -> Option<Vec<LabelInfo>> {
    let n = d.usize()?;
    let mut labels = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        labels.push(LabelInfo {
            entry_id: d.str()?,
            label: d.str()?,
            time: d.opt_str()?,
            text: match d.byte()? {
                0 => LabelText::Pending,
                1 => LabelText::Missing,
                2 => LabelText::Text(d.str()?),
                _ => return None,
            },
        });
    }
    Some(labels)
}

/// Usage, as [`encode`] writes it.
fn decode_usage(d: &mut Dec) -> Option<Usage> {
    let n = d.usize()?;
    let mut usage = Usage {
        models: Vec::with_capacity(n.min(1024)),
        buckets: Vec::new(),
    };
    for _ in 0..n {
        usage.models.push(d.str()?);
    }
    let n = d.usize()?;
    usage.buckets.reserve(n.min(1 << 16));
    let mut hour = 0i64;
    for _ in 0..n {
        let word = d.u64()?;
        let copied = word & 1 == 1;
        let model = u32::try_from(word >> 1).ok()?;
        if model as usize >= usage.models.len() {
            return None;
        }
        hour = hour.wrapping_add(d.i64()?);
        let mut v = [0u64; 5];
        for x in &mut v {
            *x = d.u64()?;
        }
        let [messages, input, output, cache_read, cache_write] = v;
        usage.buckets.push(UsageBucket {
            model,
            hour,
            messages,
            input,
            output,
            cache_read,
            cache_write,
            cost: d.f64()?,
            copied,
        });
    }
    Some(usage)
}

pub use arbor_util::hash::{FxBuild, FxHasher};

/// A 64-bit fingerprint of some bytes (stored as SQLite's signed integer).
pub fn fingerprint(bytes: &[u8]) -> i64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SessionInfo {
        SessionInfo {
            path: Default::default(),
            id: "0199-id".into(),
            cwd: "/home/ü".into(),
            name: Some("n".into()),
            has_name: true,
            created: "2026-01-01T00:00:00.000Z".into(),
            modified_ms: -5,
            message_count: 300,
            first_message: Some("hello ✓".into()),
            parent_session_path: None,
            summary_candidate: Some(("s".into(), "a1".into())),
            last_message_id: Some("a1".into()),
            last_reply: Some("Done: ✓".into()),
            internal: true,
            git_branch: Some("feat/ü".into()),
            all_text: String::new(),
            models: ["m1".to_string(), "m2".to_string()].into_iter().collect(),
            total_tokens: u64::MAX,
            total_cost: 0.125,
            diagnostics: Diagnostics {
                blank_lines: 1,
                skipped_lines: 2,
                lossy_lines: 3,
                partial_tail: true,
            },
            header_ms: Some(1_767_225_600_000),
            newest_message_ms: None,
            file_mtime_ms: 42,
            agent: Default::default(),
            labels: vec![
                LabelInfo {
                    entry_id: "e1".into(),
                    label: "✅ done".into(),
                    time: Some("2026-01-01T00:00:00.000Z".into()),
                    text: LabelText::Text("user: hi".into()),
                },
                LabelInfo {
                    entry_id: "e2".into(),
                    label: "x".into(),
                    time: None,
                    text: LabelText::Missing,
                },
                LabelInfo {
                    entry_id: "e3".into(),
                    label: "y".into(),
                    time: None,
                    text: LabelText::Pending,
                },
            ],
            usage: Usage {
                models: vec!["".into(), "m1".into()],
                buckets: vec![
                    UsageBucket {
                        model: 1,
                        hour: 493_000,
                        messages: 3,
                        input: 1,
                        output: 2,
                        cache_read: u64::MAX,
                        cache_write: 4,
                        cost: 0.1 + 0.2,
                        copied: false,
                    },
                    UsageBucket {
                        model: 0,
                        hour: -7,
                        ..Default::default()
                    },
                    UsageBucket {
                        model: 1,
                        hour: 493_001,
                        messages: 1,
                        copied: true,
                        ..Default::default()
                    },
                ],
            },
        }
    }

    #[test]
    fn round_trip() {
        let i = sample();
        let b = encode(&i);
        // A listing's decode leaves the usage out, nothing else.
        let lite = decode_with(&b, false).unwrap();
        assert!(lite.usage == Usage::default());
        assert_eq!(
            SessionInfo {
                usage: i.usage.clone(),
                ..lite
            },
            i
        );
        assert_eq!(decode(&b), Some(i));
        assert_eq!(decode(&b[..b.len() - 1]), None);
        assert_eq!(decode(&[9, 1, 2]), None);
    }

    /// A row read in place is had exactly when a decode is, and prints
    /// what the decoded row prints: on the sample, a scanner's state of it
    /// and every cut and one-byte change of their bytes.
    #[test]
    fn a_view_is_the_decoded_row() {
        let path = Path::new("/s/p/a.jsonl");
        let agent = Agent::Claude;
        let mut stale = sample();
        stale.last_message_id = Some("later".into());
        stale.name = Some(String::new());
        stale.first_message = None;
        let mut checked = 0;
        for row in [sample(), stale] {
            let b = encode(&row);
            let mut variants = vec![b.clone()];
            variants.extend((0..b.len()).map(|n| b[..n].to_vec()));
            for k in 0..b.len() {
                for v in [0u8, 1, 0x7f, 0x80, 0xc3, 0xff] {
                    let mut m = b.clone();
                    m[k] = v;
                    variants.push(m);
                }
            }
            for bytes in &variants {
                let decoded = decode_with(bytes, false);
                let viewed = view(bytes);
                assert_eq!(decoded.is_some(), viewed.is_some(), "{bytes:?}");
                let (Some(mut info), Some(v)) = (decoded, viewed) else {
                    continue;
                };
                // SAFETY: `view` accepted these bytes just above.
                assert_eq!(unsafe { view_kept(bytes) }, Some(v.clone()));
                info.path = path.into();
                info.agent = agent;
                for is_row in [true, false] {
                    let (mut info, mut v) = (info.clone(), v.clone());
                    if !is_row {
                        v.finish_state();
                        info = arbor_session::info::InfoScanner::resume(info)
                            .finish()
                            .unwrap();
                    }
                    let (mut want, mut got) = (Vec::new(), Vec::new());
                    info.write_json_line(&mut want);
                    v.json_row(path, agent).write_line(&mut got);
                    assert_eq!(
                        String::from_utf8_lossy(&got),
                        String::from_utf8_lossy(&want)
                    );
                    assert_eq!(v.title(), info.title());
                    assert_eq!(
                        (v.modified_ms, v.internal),
                        (info.modified_ms, info.internal)
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
