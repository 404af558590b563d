//! The session model: reading, migrating and interpreting one session file.
//!
//! Nothing in here knows about terminals; the CLI, the TUI, the index and the
//! tests all drive the same code.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod agents;
pub mod compare;
mod error;
pub mod export;
pub mod info;
mod model;
mod read;
mod text;
mod write;

// The modules other crates, the tests and the benches use, by their old
// flat paths (`arbor_session::reader::…`).
pub use agents::{agent, foreign, resume_id};
pub use info::extras;
pub use model::{context, entry, tree, types, view};
pub use read::{chunked, jsonscan, lifted, line_skim, open, reader};
pub use text::{escapes, normalize, render, search_text, searchable, words};
pub use write::{bulk, fileops, writer};

// The modules only this crate uses.
pub(crate) use model::{calls, ids};
pub(crate) use read::{load, source};
pub(crate) use write::{own_partial, splice};

// What most callers need, at the top.
pub use agent::Agent;
pub use context::{build_context, ContextFlavor, ContextMessage, ContextPlan, SessionContext};
pub use entry::{Entry, EntryId, Header};
pub use error::{Error, Result};
pub use info::{scan_info, SessionInfo};
pub use reader::{read_session, Diagnostics, Session};
pub use tree::SessionTree;

/// Random test input, the same from run to run (the tests of several
/// modules draw from it).
#[cfg(test)]
mod testgen {
    /// One xorshift step: moves `seed` on and returns it.
    pub(crate) fn xorshift_step(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// A xorshift generator started at `seed`: each call, the next number.
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || xorshift_step(&mut seed)
    }

    /// Up to 69 `y`s, then up to 39 of `pieces`, all drawn by `next`.
    pub(crate) fn random_text(next: &mut impl FnMut() -> u64, pieces: &[&str]) -> String {
        let mut s = "y".repeat((next() % 70) as usize);
        for _ in 0..(next() % 40) {
            s.push_str(pieces[(next() % pieces.len() as u64) as usize]);
        }
        s
    }
}
