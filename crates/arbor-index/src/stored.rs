//! A listing's unchanged rows kept as the index stores them, and read in
//! place when they are printed.
//!
//! A warm `arbor list` at 100,000 sessions spent most of its time
//! decoding every stored row into a [`SessionInfo`] (a dozen strings
//! each), moving those into order and freeing them after the output: 200
//! MB of short-lived heap. Here each row's bytes are copied once, into
//! big chunks, and the listing reads its fields where they lie
//! ([`RowView`]).

use super::codec::{self, RowView};
use arbor_search::doc::SearchDoc;
use arbor_session::info::SessionInfo;
use arbor_store::scan::SessionFile;

/// Stored rows, back to back in chunks of this size (a bigger row gets a
/// chunk of its own): no chunk is ever moved or grown.
const CHUNK: usize = 8 << 20;

/// Where one row's bytes are.
#[derive(Clone, Copy)]
struct Span {
    chunk: u32,
    at: u32,
    len: u32,
    /// A finished row (`row`), not a scanner's state (`state`).
    is_row: bool,
    /// What a listing sorts and filters by, read when the row was kept.
    modified_ms: i64,
    internal: bool,
}

/// The bytes of stored rows, each checked to read as a row when it was
/// kept.
#[derive(Default)]
pub struct StoredRows {
    chunks: Vec<Vec<u8>>,
    spans: Vec<Span>,
}

impl StoredRows {
    /// Keeps `bytes` (a `row`, or a `state` when `!is_row`) and returns
    /// its number; `None` when they do not read as a row (the file is then
    /// read again, as when a decode fails).
    pub(crate) fn keep(&mut self, bytes: &[u8], is_row: bool) -> Option<u32> {
        let mut v = codec::view(bytes)?;
        if !is_row {
            v.finish_state();
        }
        let fits = |c: &Vec<u8>| c.capacity() - c.len() >= bytes.len();
        if !self.chunks.last().is_some_and(fits) {
            self.chunks.push(Vec::with_capacity(CHUNK.max(bytes.len())));
        }
        let chunk = self.chunks.len() - 1;
        let c = &mut self.chunks[chunk];
        let span = Span {
            chunk: chunk as u32,
            at: c.len() as u32,
            len: bytes.len() as u32,
            is_row,
            modified_ms: v.modified_ms,
            internal: v.internal,
        };
        c.extend_from_slice(bytes);
        self.spans.push(span);
        Some((self.spans.len() - 1) as u32)
    }

    /// Row `k` as the listing prints it.
    fn view(&self, k: u32) -> Option<RowView<'_>> {
        let s = *self.spans.get(k as usize)?;
        let bytes = self.chunks.get(s.chunk as usize)?;
        let bytes = bytes.get(s.at as usize..(s.at as usize).checked_add(s.len as usize)?)?;
        // SAFETY: `keep` stored only bytes that `codec::view` accepted, and
        // the chunks are never written again where a row lies.
        let mut v = unsafe { codec::view_kept(bytes) }?;
        if !s.is_row {
            v.finish_state();
        }
        Some(v)
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }
}

/// The rows a refresh found unchanged, as stored: which file each is the
/// row of, and its bytes.
#[derive(Default)]
pub struct Unchanged {
    pub(crate) rows: StoredRows,
    /// (the file's position in the files refreshed, its row in `rows`).
    pub(crate) of_file: Vec<(u32, u32)>,
}

/// One row of a listing: read in place from the index, or a row just read
/// from its file.
// Made one at a time as rows are printed, never held in bulk: a box would
// only add an allocation per row.
#[allow(clippy::large_enum_variant)]
pub enum ListRow<'a> {
    Stored {
        view: RowView<'a>,
        file: &'a SessionFile,
    },
    Read(&'a SessionInfo),
}

impl<'a> ListRow<'a> {
    pub fn modified_ms(&self) -> i64 {
        match self {
            ListRow::Stored { view, .. } => view.modified_ms,
            ListRow::Read(i) => i.modified_ms,
        }
    }

    pub fn path(&self) -> &'a std::path::Path {
        match self {
            ListRow::Stored { file, .. } => &file.path,
            ListRow::Read(i) => &i.path,
        }
    }

    pub fn internal(&self) -> bool {
        match self {
            ListRow::Stored { view, .. } => view.internal,
            ListRow::Read(i) => i.internal,
        }
    }

    pub fn cwd(&self) -> &'a str {
        match self {
            ListRow::Stored { view, .. } => view.cwd,
            ListRow::Read(i) => &i.cwd,
        }
    }

    pub fn id(&self) -> &'a str {
        match self {
            ListRow::Stored { view, .. } => view.id,
            ListRow::Read(i) => &i.id,
        }
    }

    /// The agent of the store root the file was found under.
    pub fn agent(&self) -> arbor_session::agent::Agent {
        match self {
            ListRow::Stored { file, .. } => file.agent,
            ListRow::Read(i) => i.agent,
        }
    }

    pub fn message_count(&self) -> usize {
        match self {
            ListRow::Stored { view, .. } => view.message_count,
            ListRow::Read(i) => i.message_count,
        }
    }

    /// Name, else first message: the row's title.
    pub fn title(&self) -> &'a str {
        match self {
            ListRow::Stored { view, .. } => view.title(),
            ListRow::Read(i) => i.title(),
        }
    }

    /// What a query is matched against (the bodies are the index's to
    /// answer for a stored row).
    pub fn search_doc(&self) -> SearchDoc {
        match self {
            ListRow::Stored { view, file } => view.search_doc(file.agent),
            ListRow::Read(i) => SearchDoc::from_info(i),
        }
    }

    /// What a query of phrases and regexes alone is matched against, with
    /// the same result ([`SearchDoc::of_row_short`]; a row read from its
    /// file keeps its whole document, for its bodies).
    pub fn search_doc_short(&self) -> SearchDoc {
        match self {
            ListRow::Stored { view, file } => view.search_doc_short(file.agent),
            ListRow::Read(i) => SearchDoc::from_info(i),
        }
    }

    /// Appends the `arbor list --json` line, with its `\n`.
    pub fn write_json_line(&self, out: &mut Vec<u8>) {
        match self {
            ListRow::Stored { view, file } => view.json_row(&file.path, file.agent).write_line(out),
            ListRow::Read(i) => i.write_json_line(out),
        }
    }
}

/// A listing's rows: those the index had unchanged, as stored, and those
/// read from their files.
#[derive(Default)]
pub struct Listing {
    /// Every file listed (the stored rows' paths and agents).
    pub files: Vec<SessionFile>,
    pub unchanged: Unchanged,
    pub read: Vec<SessionInfo>,
    /// A query's body matches, found as the rows were read from their
    /// files (without an index to search): see
    /// `index::bodies::rows_and_hits`.
    pub hits: Option<arbor_search::BodyHits>,
}

/// A row of a [`Listing`], small enough to sort: what a listing sorts and
/// filters by, and where the row is.
#[derive(Clone, Copy)]
pub struct RowKey {
    pub modified_ms: i64,
    pub internal: bool,
    /// Below the count of stored rows: one of `unchanged.of_file`; from
    /// there on, one of `read`.
    at: u32,
}

impl Listing {
    /// A listing of rows read (or decoded) already, in their order.
    pub fn of_rows(read: Vec<SessionInfo>) -> Listing {
        Listing {
            read,
            ..Default::default()
        }
    }

    /// Every row's key: the stored ones first, then those read.
    pub fn keys(&self) -> Vec<RowKey> {
        let stored = &self.unchanged.of_file;
        let mut keys = Vec::with_capacity(stored.len() + self.read.len());
        for (n, &(_, k)) in stored.iter().enumerate() {
            if let Some(s) = self.unchanged.rows.spans.get(k as usize) {
                keys.push(RowKey {
                    modified_ms: s.modified_ms,
                    internal: s.internal,
                    at: n as u32,
                });
            }
        }
        for (n, r) in self.read.iter().enumerate() {
            keys.push(RowKey {
                modified_ms: r.modified_ms,
                internal: r.internal,
                at: (stored.len() + n) as u32,
            });
        }
        keys
    }

    /// The file a row is of.
    pub fn path(&self, key: RowKey) -> &std::path::Path {
        let stored = &self.unchanged.of_file;
        match stored.get(key.at as usize) {
            Some(&(f, _)) => self
                .files
                .get(f as usize)
                .map_or(std::path::Path::new(""), |f| &f.path),
            None => self
                .read
                .get(key.at as usize - stored.len())
                .map_or(std::path::Path::new(""), |r| &r.path),
        }
    }

    /// Where `key`'s row lies in memory, in the order rows were kept
    /// (rows read from their files after the stored ones): visiting rows
    /// in this order reads them as they lie.
    pub fn placement(&self, key: RowKey) -> usize {
        let stored = &self.unchanged.of_file;
        match stored.get(key.at as usize) {
            Some(&(_, k)) => k as usize,
            None => self.unchanged.rows.len() + key.at as usize,
        }
    }

    /// The row itself (a stored one read in place: its bytes were checked
    /// when it was kept, so this is `None` only for a key of another
    /// listing).
    pub fn row(&self, key: RowKey) -> Option<ListRow<'_>> {
        let stored = &self.unchanged.of_file;
        match stored.get(key.at as usize) {
            Some(&(f, k)) => Some(ListRow::Stored {
                view: self.unchanged.rows.view(k)?,
                file: self.files.get(f as usize)?,
            }),
            None => self
                .read
                .get(key.at as usize - stored.len())
                .map(ListRow::Read),
        }
    }
}
