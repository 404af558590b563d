//! Loading a store's list rows, as one stream of [`LoadEvent`]s: through
//! the index (its stored rows first, then what changed on disk; on a cold
//! index a plain scan first and the index built behind it), or from the
//! files alone when the index is off or fails. The picker's loader thread
//! and `arbor list` both consume it; neither reads rows any other way.
//!
//! Two plans share the stream, the fallback scan and the warnings:
//! [`load_screen`] (the picker: the newest rows in tens of milliseconds,
//! the disk looked at after) and [`load_listing`] (`arbor list`: every row
//! of one scope through a single refresh, which is the fastest way to all
//! of them; the screen's plan would read the stored rows twice).
//!
//! - `screen`: the picker's plan (the stored rows first, then the disk);
//! - `listing`: the listings' plans (every row of a scope in one refresh);
//! - `files`: the plain scan, every file read, which both fall back to;
//! - `rows`: how a row read becomes the consumer's row.

mod files;
mod listing;
mod rows;
mod screen;

pub use listing::{
    gather, load_listing, load_listing_holding, load_listing_stored, load_listing_stored_holding,
    READ_ROWS_HELD,
};
pub use rows::{MakeRow, Plain};
pub use screen::{load_screen, load_screen_behind, load_screen_for, StartBuilder, COLD_FILES};

use std::path::PathBuf;
use std::time::Instant;

use arbor_store::ScanProblem;

/// What the loader tells its consumer, in the order it happens.
#[derive(Debug)]
pub enum LoadEvent<R> {
    /// Rows to show: new ones, or newer rows for paths sent before.
    Rows(Vec<R>),
    /// Files looked at so far, of all the files listed.
    Progress { done: usize, total: usize },
    /// A row sent before whose file is gone or is no longer a session.
    Gone(PathBuf),
    /// The index is being built behind rows already sent (files done, of
    /// the files it lacked); `None` once it is complete.
    Indexing(Option<(usize, usize)>),
    /// The newest sessions (the first screen) are sent. A consumer that
    /// draws may hold the loader here until they are on screen: on two
    /// cores the rest of the load would take the CPU the first frame needs.
    FirstScreen,
    /// The loader is about to look at the files (sent once): a watcher in
    /// place when the consumer returns sees every change the load misses.
    Watch,
    /// Something the load went around (it carries on).
    Warning(LoadWarning),
    /// Every row is sent, with the files that could not be listed. On a
    /// cold index this comes once the rows are scanned, with no problems,
    /// and again when the index is built (the rows it brings come between).
    Finished { problems: Vec<ScanProblem> },
}

#[derive(Debug, thiserror::Error)]
pub enum LoadWarning {
    #[error("index unavailable ({0}); reading the files")]
    IndexUnavailable(arbor_index::Error),
    /// The rows are complete, but the index lacks the text of what it
    /// could not write: searches through it miss those sessions.
    #[error("the index could not be updated: {0}")]
    IndexNotUpdated(String),
    /// As `IndexNotUpdated`, for a listing that searches: its rows are
    /// read from the files instead, text and all.
    #[error("the index could not be updated ({0}); searching the files instead")]
    SearchingFiles(String),
    /// What the index lacked was read from the files, to be indexed by a
    /// build behind the answer (see [`arbor_index::behind`]).
    #[error("{}", behind_text(.0))]
    BuildingBehind(arbor_index::behind::Deferred),
    /// A query searches the bodies in the index: it waits for the build
    /// running in that process rather than read every file's text.
    #[error("waiting for the index build in process {0} to end (a query searches the index)")]
    WaitingForBuild(u32),
}

fn behind_text(d: &arbor_index::behind::Deferred) -> String {
    match d.builder {
        Some(pid) => format!(
            "the index is being built (process {pid}); {} were read from their files",
            d.lacked()
        ),
        None => format!("the index lacks {}: read from their files", d.lacked()),
    }
}

/// The consumer, and what the stream has said already.
struct Out<'e, R> {
    emit: &'e mut dyn FnMut(LoadEvent<R>),
    watching: bool,
    started: Instant,
}

impl<R> Out<'_, R> {
    fn send(&mut self, ev: LoadEvent<R>) {
        (self.emit)(ev);
    }

    fn watch(&mut self) {
        if !std::mem::replace(&mut self.watching, true) {
            self.send(LoadEvent::Watch);
        }
    }

    fn warn(&mut self, w: LoadWarning) {
        arbor_util::log::line(format!("loader: {w}"));
        self.send(LoadEvent::Warning(w));
    }

    fn log(&self, what: std::fmt::Arguments) {
        if arbor_util::log::enabled() {
            arbor_util::log::line(format!("loader: {what} at {:?}", self.started.elapsed()));
        }
    }
}
