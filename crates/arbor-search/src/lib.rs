//! The picker's query language (docs/spec.md §5) and ranking, independent of any UI.
//!
//! `word` fuzzy-matches the short fields (name, summary, first message, cwd,
//! id) with nucleo, or matches the message bodies as a substring — a
//! subsequence over a long transcript would match almost anything.
//! `"a phrase"` is a case-insensitive substring with whitespace collapsed;
//! `re:pattern` a case-insensitive regex. All terms must match.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

// The modules other crates name in their paths are public; the raw-line
// prefilter and the scorer are not (the scorer's types are re-exported).
pub mod blocks;
pub mod doc;
pub mod entry_bits;
pub mod hits;
pub mod literals;
pub mod query;
mod rawline;
mod scorer;

pub use arbor_session::normalize::{normalize, normalized};
pub use arbor_session::searchable::{Part, Parts, Scope};
pub use doc::{RowFacts, SearchDoc};
pub use query::{
    rank, rank_order, rank_order_visiting, rank_with_index, tier_score, Filter, Query, Term, Tiers,
    FILTER_KEYS, MAX_TERMS, MIN_BODY_WORD, SCOPE_NAMES,
};
pub use scorer::{BodyHits, Docs, PathsById, Scorer};
