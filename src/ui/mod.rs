//! The terminal UI: a picker (the /resume screen) and a tree view (the /tree
//! screen) over one event loop.
//!
//! State changes only in `App::update`, which takes an `AppEvent` and returns
//! `Effect`s; the runtime performs the effects (I/O, threads) and feeds their
//! results back as events. Widgets render from state.

pub mod app;
pub mod input;
pub mod key_file;
pub mod key_resolve;
pub mod key_screens;
pub mod key_syntax;
pub mod keybindings;
pub mod keymap;
pub mod mouse;
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
            let text = match &app.picker.flash.status {
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
    if let Some(q) = &app.resume_here {
        render_resume_here(f, q, theme);
    }
}

/// The question asked before resuming a session whose folder is gone,
/// over whichever screen asked it: wrapped to the box (paths broken where
/// the line ends), its keys last.
fn render_resume_here(f: &mut ratatui::Frame, q: &app::ResumeHereQuestion, theme: &theme::Theme) {
    use app::RESUME_HERE_KEYS;
    use keymap::Answer;
    let area = f.area();
    let (app::Outcome::Resume { cwd, .. } | app::Outcome::ResumeHere { cwd, .. }) = &q.outcome
    else {
        return;
    };
    let plain = ratatui::style::Style::default();
    let box_w = 72u16.min(area.width.saturating_sub(2));
    // Inside the borders, one column of padding each side.
    let inner = usize::from(box_w.saturating_sub(4)).max(1);
    let paragraphs = [
        vec![(
            "The session's folder no longer exists:".to_string(),
            theme.warning(),
        )],
        vec![(text::sanitize_line(cwd), theme.dim())],
        vec![(
            "Resume it in the current folder instead?".to_string(),
            plain,
        )],
        vec![(text::sanitize_line(&q.here), theme.dim())],
        vec![(String::new(), plain)],
        vec![(
            format!(
                "{} · {}",
                RESUME_HERE_KEYS.hint(&[Answer::Yes], "resume here"),
                RESUME_HERE_KEYS.hint(&[Answer::No], "back")
            ),
            plain,
        )],
    ];
    let lines: Vec<ratatui::text::Line> = text::wrap_styled(&paragraphs, inner)
        .into_iter()
        .map(|mut l| {
            l.spans.insert(0, ratatui::text::Span::raw(" "));
            l
        })
        .collect();
    widgets::text_box(f, theme, area, "Resume elsewhere?", lines, box_w);
}
