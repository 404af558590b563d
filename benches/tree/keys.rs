//! Key → frame timings in the open tree, per kind of key: moves, folds,
//! filters, a search, a label.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect, Mode};

use crate::in_process::{drive, drive_all};
use crate::measure::{cpu_ms, ms, Stat};

/// Times keys in the open tree, per kind of key.
pub(crate) struct KeyTimer<'t> {
    pub(crate) term: &'t mut Terminal<TestBackend>,
    pub(crate) theme: &'t Theme,
    pub(crate) keys: Vec<(&'static str, Stat)>,
    pub(crate) keys_cpu: Vec<(&'static str, Stat)>,
    pub(crate) background: Vec<(&'static str, Stat)>,
}

impl KeyTimer<'_> {
    /// Key → frame: `update` and a draw, as the event loop runs them; the
    /// effects it asks for run on other threads, timed apart (a label
    /// written, the file read again, its search text built).
    fn time(&mut self, app: &mut App, name: &'static str, ev: AppEvent) {
        let theme = self.theme;
        let t = Instant::now();
        let c = cpu_ms();
        let fx = app.update(ev);
        self.term
            .draw(|f| arbor::ui::render(f, app, theme))
            .expect("draw");
        record(&mut self.keys, name, ms(t.elapsed()));
        record(&mut self.keys_cpu, name, cpu_ms() - c);
        if fx
            .iter()
            .any(|f| !matches!(f, Effect::Exit(_) | Effect::CloseTree | Effect::Copy(_)))
        {
            let t = Instant::now();
            let later = drive(app, fx);
            self.term
                .draw(|f| arbor::ui::render(f, app, theme))
                .expect("draw");
            record(
                &mut self.background,
                "effects → frame (label written, file re-read)",
                ms(t.elapsed()),
            );
            if !later.is_empty() {
                let t = Instant::now();
                drive_all(app, later);
                record(
                    &mut self.background,
                    "search text rebuilt after a reload",
                    ms(t.elapsed()),
                );
            }
        }
    }

    /// Moves: a row, a page, to either end; `n` of each.
    pub(crate) fn moves(&mut self, app: &mut App, n: usize) {
        for _ in 0..n {
            self.time(app, "move ↓", plain(KeyCode::Down));
        }
        for _ in 0..n {
            self.time(app, "move ↑", plain(KeyCode::Up));
        }
        for _ in 0..n / 2 {
            self.time(app, "page ↑/↓", plain(KeyCode::PageUp));
            self.time(app, "page ↑/↓", plain(KeyCode::PageDown));
        }
        for _ in 0..n / 2 {
            self.time(app, "Home/End", plain(KeyCode::Home));
            self.time(app, "Home/End", plain(KeyCode::End));
        }
    }

    /// Folds and unfolds the `n` forks nearest the top, one after the
    /// other; then jumps between branches from the end.
    pub(crate) fn folds(&mut self, app: &mut App, n: usize) {
        let forks: Vec<usize> = match &app.mode {
            Mode::Tree(t) => t
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.foldable())
                .map(|(p, _)| p)
                .take(n)
                .collect(),
            Mode::Picker => Vec::new(),
        };
        for &p in &forks {
            if let Mode::Tree(t) = &mut app.mode {
                t.select_row(p);
            }
            self.time(
                app,
                "fold (ctrl+←)",
                key(KeyCode::Left, KeyModifiers::CONTROL),
            );
            self.time(
                app,
                "unfold (ctrl+→)",
                key(KeyCode::Right, KeyModifiers::CONTROL),
            );
        }
        app.update(plain(KeyCode::End));
        for _ in 0..n / 2 {
            self.time(
                app,
                "branch jump (ctrl+←/→)",
                key(KeyCode::Left, KeyModifiers::CONTROL),
            );
            self.time(
                app,
                "branch jump (ctrl+←/→)",
                key(KeyCode::Right, KeyModifiers::CONTROL),
            );
        }
    }

    /// Each filter on and off, and the filter cycle.
    pub(crate) fn filters(&mut self, app: &mut App, runs: usize) {
        for _ in 0..runs.max(3) {
            for (name, c) in [
                ("filter no-tools (ctrl+t, twice)", 't'),
                ("filter user-only (ctrl+u, twice)", 'u'),
                ("filter labeled-only (ctrl+l, twice)", 'l'),
                ("filter all (ctrl+a, twice)", 'a'),
                ("filter default (ctrl+d)", 'd'),
            ] {
                self.time(app, name, ctrl(c));
                if c != 'd' {
                    self.time(app, name, ctrl(c));
                }
            }
            for _ in 0..5 {
                self.time(app, "filter cycle (ctrl+o)", ctrl('o'));
            }
        }
    }

    /// A search typed, backspaced and cleared.
    pub(crate) fn searches(&mut self, app: &mut App, runs: usize) {
        // ARBOR_BENCH_SKIP_SEARCH=1: for a build whose search is too slow to wait for.
        let searches = if std::env::var_os("ARBOR_BENCH_SKIP_SEARCH").is_some() {
            0
        } else {
            runs.max(3)
        };
        for _ in 0..searches {
            for c in "error tree".chars() {
                self.time(app, "search: a typed character", plain(KeyCode::Char(c)));
            }
            for _ in 0..4 {
                self.time(app, "search: backspace", plain(KeyCode::Backspace));
            }
            self.time(app, "search: esc clears", plain(KeyCode::Esc));
        }
    }

    /// A label typed in its dialog and written.
    pub(crate) fn labels(&mut self, app: &mut App, runs: usize) {
        for _ in 0..runs.max(3) {
            self.time(app, "label: dialog keys", plain(KeyCode::Char('L')));
            self.time(app, "label: dialog keys", plain(KeyCode::Char('x')));
            // Enter writes the label (an effect) and reloads the grown file.
            self.time(app, "label: enter", plain(KeyCode::Enter));
        }
    }
}

fn key(code: KeyCode, m: KeyModifiers) -> AppEvent {
    AppEvent::Key(KeyEvent::new(code, m))
}
fn plain(code: KeyCode) -> AppEvent {
    key(code, KeyModifiers::NONE)
}
fn ctrl(c: char) -> AppEvent {
    key(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn record(v: &mut Vec<(&'static str, Stat)>, name: &'static str, d: f64) {
    match v.iter_mut().find(|(n, _)| *n == name) {
        Some((_, s)) => s.0.push(d),
        None => v.push((name, Stat(vec![d]))),
    }
}
