//! What the picker's deletes put in the trash, for Ctrl+Z to bring back.

use std::collections::HashMap;
use std::path::PathBuf;

use super::row::Row;

#[derive(Debug, Default)]
pub struct Trashed {
    /// What each delete moved to the trash (one session, or a batch),
    /// newest last: Ctrl+Z brings back the last one whole.
    pub(crate) batches: Vec<Vec<PathBuf>>,
    /// The rows of the sessions in the last batches trashed, listed again
    /// the moment their batch is restored (re-reading 1,000 files takes
    /// seconds); the re-read then brings them up to date.
    pub(crate) rows: HashMap<PathBuf, Row>,
}
