//! An entry's JSON object, held from the start or kept as its line and
//! parsed when first read.

use once_cell::race::OnceBox;

use crate::source::LineRef;

use serde_json::{Map, Value};

/// The JSON object of an entry: held from the start (`Raw::from`), or kept
/// as its line of the file and parsed when first dereferenced. Reading it
/// through [`Raw::with`] does not keep the parsed object, so a pass over
/// every entry (search, `arbor show`) costs time, not memory.
pub struct Raw {
    line: Option<LineRef>,
    /// One pointer (a `OnceLock` of a box took two words): a million
    /// entries each hold one.
    parsed: OnceBox<Map<String, Value>>,
}

/// Parses a line as the reader did when it accepted it.
pub(super) fn parse_line(bytes: &[u8]) -> Map<String, Value> {
    let mut lossy = false;
    crate::reader::parse_object(bytes, &mut lossy).unwrap_or_default()
}

/// Parses a line of the file, its bytes let go before the object is used
/// (a huge line never held whole: see [`LineRef::parse`]).
fn parse_ref(line: &LineRef) -> Map<String, Value> {
    line.parse().unwrap_or_default()
}

/// A cell holding `map`.
fn held(map: Map<String, Value>) -> OnceBox<Map<String, Value>> {
    let cell = OnceBox::new();
    // A new cell is empty: this always sets it.
    let _ = cell.set(Box::new(map));
    cell
}

impl From<Map<String, Value>> for Raw {
    fn from(map: Map<String, Value>) -> Raw {
        Raw {
            line: None,
            parsed: held(map),
        }
    }
}

impl Raw {
    pub(crate) fn lazy(line: LineRef) -> Raw {
        Raw {
            line: Some(line),
            parsed: OnceBox::new(),
        }
    }

    /// The line, unless it is too long to read (see `Source::limit_lines`).
    fn readable(&self) -> Option<&LineRef> {
        self.line.as_ref().filter(|l| !l.too_long())
    }

    /// The length of the line, when it is too long to read.
    pub(crate) fn unread_len(&self) -> Option<usize> {
        let line = self.line.as_ref().filter(|l| l.too_long())?;
        Some(line.end - line.start)
    }

    /// Calls `f` with the object, parsing the line for this call only when
    /// it is not held already.
    pub fn with<R>(&self, f: impl FnOnce(&Map<String, Value>) -> R) -> R {
        match (self.parsed.get(), self.readable()) {
            (Some(m), _) => f(m),
            (None, Some(line)) => f(&parse_ref(line)),
            (None, None) => f(&Map::new()),
        }
    }

    /// Where the entry's line is in the file (`None`: held parsed).
    pub(crate) fn line_range(&self) -> Option<(usize, usize)> {
        self.readable().map(|l| (l.start, l.end))
    }

    /// The entry's line as it is in the file, when the object is not
    /// held parsed (a cheap look at the bytes before parsing them).
    pub fn unparsed_line(&self) -> Option<impl std::ops::Deref<Target = [u8]>> {
        match (self.parsed.get(), self.readable()) {
            (None, Some(line)) => Some(line.bytes()),
            _ => None,
        }
    }

    /// The object parsed from the entry's line for this use only (a huge
    /// line a block at a time, never held whole): `None` when the object
    /// is held parsed (or the line too long to read), `Some(None)` when
    /// the line is not an object (any more).
    pub fn parse_unparsed(&self) -> Option<Option<Map<String, Value>>> {
        match (self.parsed.get(), self.readable()) {
            (None, Some(line)) => Some(line.parse()),
            _ => None,
        }
    }

    /// [`Raw::unparsed_line`] as bytes of its own (a line read from the
    /// file is handed over, not copied).
    pub fn unparsed_line_owned(&self) -> Option<Vec<u8>> {
        match (self.parsed.get(), self.readable()) {
            (None, Some(line)) => Some(line.bytes().into_vec()),
            _ => None,
        }
    }

    /// Whether the parsed object is held in memory.
    pub fn is_parsed(&self) -> bool {
        self.parsed.get().is_some()
    }
}

impl std::ops::Deref for Raw {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Map<String, Value> {
        self.parsed.get_or_init(|| {
            Box::new(match self.readable() {
                Some(line) => parse_ref(line),
                None => Map::new(),
            })
        })
    }
}

impl Raw {
    /// Not `Clone`: `entry.raw.clone()` keeps meaning a copy of the object.
    pub(super) fn duplicate(&self) -> Raw {
        Raw {
            line: self.line.clone(),
            parsed: match self.parsed.get() {
                Some(m) => held(m.clone()),
                None => OnceBox::new(),
            },
        }
    }
}

impl PartialEq for Raw {
    fn eq(&self, other: &Raw) -> bool {
        self.with(|a| other.with(|b| a == b))
    }
}

impl PartialEq<Map<String, Value>> for Raw {
    fn eq(&self, other: &Map<String, Value>) -> bool {
        self.with(|a| a == other)
    }
}

impl PartialEq<Raw> for Map<String, Value> {
    fn eq(&self, other: &Raw) -> bool {
        other == self
    }
}

impl std::fmt::Debug for Raw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with(|m| m.fmt(f))
    }
}
