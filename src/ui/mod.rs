//! The terminal UI: a picker (the /resume screen) and a tree view (the /tree
//! screen) over one event loop.
//!
//! State changes only in `App::update`, which takes an `AppEvent` and returns
//! `Effect`s; the runtime performs the effects (I/O, threads) and feeds their
//! results back as events. Widgets render from state.

pub mod app;
pub mod picker;
pub mod runtime;
pub mod text;
pub mod theme;

pub use app::{App, AppEvent, Effect, Outcome};
