//! The picker's messages: the status line (with how long it stays) and
//! the note the start puts in the header.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    Info,
    Success,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub text: String,
    pub kind: StatusKind,
}

/// The messages on screen.
#[derive(Debug, Default)]
pub struct Flash {
    /// The status line, until its time is up (see [`Flash::timer`]).
    pub status: Option<Status>,
    pub(crate) timer: crate::ui::widgets::StatusTimer,
    /// Said in the header from the start (set by the command line).
    pub(crate) note: Option<String>,
}
