//! What the picker says of the work behind its rows: files being read,
//! the index being built, and why it could not be written.

/// Loading and indexing progress, shown in the header.
#[derive(Debug, Default)]
pub struct Progress {
    /// The files read so far: (done, total).
    pub loading: Option<(usize, usize)>,
    /// The index being built behind the rows: (files done, total).
    pub(crate) indexing: Option<(usize, usize)>,
    /// Why the index could not be written, when it could not.
    pub(crate) index_problem: Option<String>,
}
