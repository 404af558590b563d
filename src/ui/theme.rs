//! Colours: ANSI named colours only, so the terminal's own palette (dark or
//! light) decides the exact shade; `NO_COLOR` turns them off entirely.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    pub color: bool,
}

impl Theme {
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    pub fn plain() -> Theme {
        Theme { color: false }
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::default().fg(c)
        } else {
            Style::default()
        }
    }

    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn dim(&self) -> Style {
        if self.color {
            Style::default().fg(Color::DarkGray)
        } else {
            Style::default()
        }
    }
    pub fn accent(&self) -> Style {
        self.fg(Color::Cyan)
    }
    /// Named sessions, like Atomic's warning colour.
    pub fn warning(&self) -> Style {
        self.fg(Color::Yellow)
    }
    pub fn error(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }
    pub fn success(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
    pub fn cursor(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }
    pub fn highlight(&self) -> Style {
        if self.color {
            Style::default()
                .fg(Color::Magenta)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::default().add_modifier(Modifier::UNDERLINED)
        }
    }
    pub fn label(&self) -> Style {
        self.fg(Color::Green)
    }
    pub fn active_path(&self) -> Style {
        self.fg(Color::Cyan)
    }
    /// The tag of a row of another agent than Atomic.
    pub fn agent(&self, agent: arbor_session::Agent) -> Style {
        use arbor_session::Agent;
        match agent {
            Agent::Atomic => self.dim(),
            Agent::Pi => self.fg(Color::Blue),
            Agent::Claude => self.fg(Color::LightRed),
            Agent::Codex => self.fg(Color::Magenta),
        }
    }
}
