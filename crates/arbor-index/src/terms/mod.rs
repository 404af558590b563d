//! The word index: which sessions contain which whitespace-separated tokens.
//!
//! Session text is normalized (lowercased, whitespace runs collapsed to one
//! space) and split on spaces. A *segment* holds a sorted term dictionary and,
//! per term, the ids of the files whose text contains it. Segments are
//! immutable; new text makes a new segment, and small segments are merged.
//!
//! The dictionary is one byte string `\n term \n term \n … \n`, so substring
//! questions about terms are answered with one `memmem` scan each:
//! "contains w" finds `w`, "ends with w" finds `w\n`, "starts with w" finds
//! `\nw`, "is w" finds `\nw\n`. Since a token never contains a space, a word
//! is a substring of a text exactly when it is a substring of one of its terms.

mod builder;
mod encoding;
mod merge;
mod pairs;
mod segment;
mod termset;
#[cfg(test)]
mod tokens;

pub use builder::{Encoded, SegmentBuilder};
pub use encoding::decode_postings;
#[cfg(test)]
pub(crate) use encoding::pack_starts;
#[cfg(test)]
pub use merge::merge;
pub use merge::{merge_to_files, Merged};
pub use pairs::{
    pair_key, pair_left, pair_right, pair_side_word, pair_sides, PairSet, Sides, EMPTY_SIDE,
};
pub use segment::{Match, Segment, TermBytes};
pub use termset::TermSet;
#[cfg(test)]
pub use tokens::distinct_pair_ranges;
#[cfg(test)]
pub use tokens::distinct_tokens;

#[cfg(test)]
mod tests;
