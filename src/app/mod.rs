//! The plans the CLI and the picker share: which answer comes from the
//! index and which from the files, and the searcher that keeps the picker's
//! answers current.

pub mod bodies;
pub mod load;
pub mod remote_write;
pub mod remotes;
pub mod searcher;
