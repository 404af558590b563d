//! How a row the loader read becomes the consumer's row.

use arbor_index::StoredRow;
use arbor_session::info::SessionInfo;
use arbor_store::ListedFolder;
use arbor_util::shared_path::SharedPath;

/// Turns a row the loader read into the consumer's row. Called on the
/// loader's worker threads, all with the one cache.
pub trait MakeRow: Sync {
    type Row: Send;
    type Cache: Default + Send + Sync;
    fn make(&self, info: SessionInfo, cache: &Self::Cache) -> Self::Row;

    /// The row of a stored row whose file is at `path`; `None` when its
    /// bytes do not read as a row. By default decoded and made as read.
    fn make_stored(
        &self,
        row: StoredRow<'_>,
        path: SharedPath,
        cache: &Self::Cache,
    ) -> Option<Self::Row> {
        Some(self.make(row.info(path)?, cache))
    }

    /// Told, before the stored rows past the first screen are made, which
    /// folders the store's listing read (and the symlinks in them).
    fn folders_listed(&self, _folders: &[ListedFolder], _cache: &Self::Cache) {}
}

/// Rows as read.
pub struct Plain;

impl MakeRow for Plain {
    type Row = SessionInfo;
    type Cache = ();
    fn make(&self, info: SessionInfo, _: &()) -> SessionInfo {
        info
    }
}

/// Rows as a listing keeps them: without their usage by hour, which no
/// listing prints or filters by (`arbor stats` reads it through
/// [`Plain`]). A listing without the index holds every session's row
/// until it sorts them: at 100,000 sessions it peaked at ~300 MB.
pub(super) struct Listed;

impl MakeRow for Listed {
    type Row = SessionInfo;
    type Cache = ();
    fn make(&self, mut info: SessionInfo, _: &()) -> SessionInfo {
        info.usage = Default::default();
        info
    }
}
