//! The agents whose sessions arbor reads: which one wrote a file, and the
//! translation of other agents' formats into Atomic's.

pub mod agent;
pub mod foreign;
