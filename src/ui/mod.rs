//! The terminal UI: a picker (the /resume screen) and a tree view (the /tree
//! screen) over one event loop.
//!
//! State changes only in `App::update`, which takes an `AppEvent` and returns
//! `Effect`s; the runtime performs the effects (I/O, threads) and feeds their
//! results back as events. Widgets render from state.

pub mod app;
pub mod input;
pub mod keymap;
pub mod picker;
pub mod runtime;
mod signals;
pub mod text;
pub mod theme;
pub mod trash_text;
pub mod tree;
pub mod widgets;

pub use app::{App, AppEvent, Effect, Mode, Outcome, Step};

/// Draws whichever screen is open.
pub fn render(f: &mut ratatui::Frame, app: &App, theme: &theme::Theme) {
    match &app.mode {
        Mode::Picker if app.tree_only => {
            let text = match &app.picker.status {
                Some(s) => s.text.clone(),
                None => "Loading session…".to_string(),
            };
            f.render_widget(
                ratatui::widgets::Paragraph::new(text::sanitize_line(&text)),
                f.area(),
            );
        }
        Mode::Picker => picker::render(f, app, theme),
        Mode::Tree(t) => tree::render(f, t, theme),
    }
}
