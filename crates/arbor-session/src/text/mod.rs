//! An entry's text: its one-line rendering and sanitizing, the normal form
//! and words of searchable text, and what of an entry is searchable.

pub mod escapes;
pub mod normalize;
pub mod render;
pub mod search_text;
pub mod searchable;
pub mod words;
