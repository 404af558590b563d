//! The agents whose sessions arbor reads: which one wrote a file, and the
//! translation of other agents' formats into Atomic's, and which ids their
//! resume commands take.

pub mod agent;
pub mod foreign;
pub mod resume_id;
