//! A translation in progress, and the window of its last lines that later
//! lines may still change.

use std::path::Path;

use serde_json::{Map, Value};

use crate::agent::Agent;
use crate::reader::{lines, parse_object};

use super::claude::Claude;
use super::codex::Codex;

/// A translation in progress: lines in, Atomic lines out as soon as no
/// later line can change them.
pub struct Translator {
    kind: Kind,
}

enum Kind {
    Claude(Box<Claude>),
    Codex(Box<Codex>),
}

impl Translator {
    /// `None` for Atomic and pi, whose files need no translation.
    pub fn new(agent: Agent, path: &Path) -> Option<Translator> {
        let kind = match agent {
            Agent::Claude => Kind::Claude(Box::new(Claude::new(path))),
            Agent::Codex => Kind::Codex(Box::new(Codex::new(path))),
            Agent::Atomic | Agent::Pi => return None,
        };
        Some(Translator { kind })
    }

    /// One line of the foreign file (without its newline), and whether a
    /// newline ended it.
    pub fn feed(&mut self, raw: &[u8], complete: bool) {
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.window().size = raw.len();
        match parse_object(raw, &mut false) {
            Some(o) => match &mut self.kind {
                Kind::Claude(c) => c.line(o),
                Kind::Codex(c) => c.line(o),
            },
            None => self.window().push(Line::Raw(raw.to_vec(), complete)),
        }
        if let Some(h) = self.settled_header() {
            self.window().header(h);
        }
        self.window().flush(WINDOW);
    }

    /// [`Translator::feed`], handing the translated lines that are final to
    /// `f` (each without its newline, and whether it had one).
    pub fn feed_lines(&mut self, raw: &[u8], complete: bool, f: &mut dyn FnMut(&[u8], bool)) {
        self.feed(raw, complete);
        let w = self.window();
        for (l, c) in lines(&w.ready) {
            f(l, c);
        }
        w.ready.clear();
    }

    /// [`Translator::finish`], handing the last lines to `f`.
    pub fn finish_lines(self, f: &mut dyn FnMut(&[u8], bool)) {
        let mut out = Vec::new();
        self.finish(&mut out);
        for (l, c) in lines(&out) {
            f(l, c);
        }
    }

    /// Appends the translated lines that are final to `out`.
    pub fn drain_into(&mut self, out: &mut Vec<u8>) {
        let w = self.window();
        out.append(&mut w.ready);
    }

    /// Appends the rest of the translation to `out`.
    pub fn finish(mut self, out: &mut Vec<u8>) {
        match &mut self.kind {
            Kind::Claude(c) => c.finish(),
            Kind::Codex(c) => c.finish(),
        }
        let h = self.header();
        let w = self.window();
        w.header(h);
        w.flush(0);
        out.append(&mut w.ready);
    }

    /// The git branch the session was last on, where the agent records one.
    pub fn git_branch(&self) -> Option<&str> {
        match &self.kind {
            Kind::Claude(c) => c.git_branch.as_deref(),
            Kind::Codex(c) => c.git_branch.as_deref(),
        }
    }

    fn window(&mut self) -> &mut Window {
        match &mut self.kind {
            Kind::Claude(c) => &mut c.w,
            Kind::Codex(c) => &mut c.w,
        }
    }

    /// The header, once what it says is known (the lines that tell it come
    /// first: Claude Code's first conversational line, Codex's meta).
    fn settled_header(&self) -> Option<Map<String, Value>> {
        let done = match &self.kind {
            Kind::Claude(c) => c.w.header_done || c.cwd.is_none(),
            Kind::Codex(c) => c.w.header_done || c.id.is_none() || c.cwd.is_none(),
        };
        (!done).then(|| self.header())
    }

    fn header(&self) -> Map<String, Value> {
        match &self.kind {
            Kind::Claude(c) => c.header(),
            Kind::Codex(c) => c.header(),
        }
    }
}

/// What a translation produces, in order.
pub(super) enum Line {
    Entry(Map<String, Value>),
    /// An input line that is not an object: copied for the reader to count.
    Raw(Vec<u8>, bool),
}

/// Entries a later line may still change (a streamed reply's usage, a
/// compaction's summary, a token count): lines further back are written.
pub(super) const WINDOW: usize = 64;
/// ... unless they hold more than this (counted by their input's size).
const WINDOW_BYTES: usize = 8 << 20;

/// The translation's last lines, held until no later line can change them.
#[derive(Default)]
pub(super) struct Window {
    pub(super) lines: std::collections::VecDeque<(Line, usize)>,
    /// The position of `lines[0]` in the translation.
    base: usize,
    /// The input bytes behind the lines held.
    held: usize,
    /// The size of the input line being translated.
    size: usize,
    header_done: bool,
    /// Serialized lines, ready to be taken.
    ready: Vec<u8>,
}

impl Window {
    /// The position the next line will have.
    pub(super) fn len(&self) -> usize {
        self.base + self.lines.len()
    }

    pub(super) fn push(&mut self, l: Line) {
        // Several entries from one input line: its size counts once.
        let size = std::mem::take(&mut self.size);
        self.held += size;
        self.lines.push_back((l, size));
    }

    pub(super) fn get_mut(&mut self, at: usize) -> Option<&mut Map<String, Value>> {
        match self.lines.get_mut(at.checked_sub(self.base)?) {
            Some((Line::Entry(e), _)) => Some(e),
            _ => None,
        }
    }

    pub(super) fn header(&mut self, h: Map<String, Value>) {
        if self.header_done {
            return;
        }
        self.header_done = true;
        // Serializing a map of JSON values into memory cannot fail.
        let _ = serde_json::to_writer(&mut self.ready, &Value::Object(h));
        self.ready.push(b'\n');
    }

    /// Writes out all but the last `keep` lines (fewer when they are big),
    /// once the header is out.
    fn flush(&mut self, keep: usize) {
        if !self.header_done {
            return;
        }
        while self.lines.len() > keep || (self.held > WINDOW_BYTES && self.lines.len() > 1) {
            let Some((l, size)) = self.lines.pop_front() else {
                break;
            };
            self.base += 1;
            self.held -= size;
            match l {
                Line::Entry(m) => {
                    let _ = serde_json::to_writer(&mut self.ready, &Value::Object(m));
                    self.ready.push(b'\n');
                }
                Line::Raw(raw, complete) => {
                    self.ready.extend_from_slice(&raw);
                    if complete {
                        self.ready.push(b'\n');
                    }
                }
            }
        }
    }

    /// Runs `add` (which pushes the lines a translation ends with) before
    /// a cut-off last line, which must stay last.
    pub(super) fn before_partial_tail(&mut self, add: impl FnOnce(&mut Self)) {
        let tail = match self.lines.back() {
            Some((Line::Raw(_, false), _)) => self.lines.pop_back(),
            _ => None,
        };
        add(self);
        self.lines.extend(tail);
    }
}
