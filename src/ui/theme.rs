//! Colours: the roles arbor draws with (title, dim, selected row, …), each
//! taken from one colour token of an Atomic theme (see `settings::theme`
//! and docs/settings.md), so that arbor looks like the user's Atomic.
//! `NO_COLOR` gives no colour at all (a reversed selected row, underlined
//! matches); the arbor-only `ansi` theme gives the terminal's own named
//! colours.

use ratatui::style::{Color, Modifier, Style};

/// The Atomic theme tokens arbor draws with, resolved to colours
/// (`Color::Reset` for Atomic's `""`, the terminal's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    pub accent: Color,
    pub border: Color,
    pub border_accent: Color,
    pub success: Color,
    pub error: Color,
    pub warning: Color,
    pub muted: Color,
    pub dim: Color,
    pub selected_bg: Color,
    pub custom_message_label: Color,
    pub md_heading: Color,
}

impl Palette {
    /// The terminal's named colours: what arbor drew before it read themes.
    pub const ANSI: Palette = Palette {
        accent: Color::Cyan,
        border: Color::Blue,
        border_accent: Color::Magenta,
        success: Color::Green,
        error: Color::Red,
        warning: Color::Yellow,
        muted: Color::DarkGray,
        dim: Color::DarkGray,
        selected_bg: Color::Reset,
        custom_message_label: Color::Magenta,
        md_heading: Color::LightRed,
    };
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// `None`: no colour (`NO_COLOR`).
    palette: Option<Palette>,
    /// The selected row is reversed rather than given `selectedBg` (the
    /// `ansi` theme: the terminal's own palette has no such colour).
    reverse_selection: bool,
}

impl Theme {
    /// The terminal's named colours, or none under `NO_COLOR`.
    pub fn from_env() -> Theme {
        if no_color() {
            Theme::plain()
        } else {
            Theme::ansi()
        }
    }

    /// No colour: what `NO_COLOR` asks for.
    pub fn plain() -> Theme {
        Theme {
            palette: None,
            reverse_selection: true,
        }
    }

    /// The terminal's named colours (the `ansi` theme).
    pub fn ansi() -> Theme {
        Theme {
            palette: Some(Palette::ANSI),
            reverse_selection: true,
        }
    }

    /// An Atomic theme's colours.
    pub fn with_palette(palette: Palette) -> Theme {
        Theme {
            palette: Some(palette),
            reverse_selection: false,
        }
    }

    /// Whether anything is coloured.
    pub fn has_color(&self) -> bool {
        self.palette.is_some()
    }

    fn fg(&self, pick: impl Fn(&Palette) -> Color) -> Style {
        match &self.palette {
            Some(p) => Style::default().fg(pick(p)),
            None => Style::default(),
        }
    }

    pub fn title(&self) -> Style {
        self.fg(|p| p.accent).add_modifier(Modifier::BOLD)
    }
    /// Atomic's `dim`: the tree's prefix, ages, the least important text.
    pub fn dim(&self) -> Style {
        self.fg(|p| p.dim)
    }
    /// Atomic's `muted`: secondary text (hints, counts).
    pub fn muted(&self) -> Style {
        self.fg(|p| p.muted)
    }
    pub fn accent(&self) -> Style {
        self.fg(|p| p.accent)
    }
    /// Named sessions, like Atomic's warning colour.
    pub fn warning(&self) -> Style {
        self.fg(|p| p.warning)
    }
    pub fn error(&self) -> Style {
        self.fg(|p| p.error).add_modifier(Modifier::BOLD)
    }
    pub fn success(&self) -> Style {
        self.fg(|p| p.success)
    }
    /// The selected row: Atomic's `selectedBg` behind it.
    pub fn selected(&self) -> Style {
        match &self.palette {
            Some(p) if !self.reverse_selection => Style::default().bg(p.selected_bg),
            _ => Style::default().add_modifier(Modifier::REVERSED),
        }
    }
    pub fn cursor(&self) -> Style {
        self.fg(|p| p.accent).add_modifier(Modifier::BOLD)
    }
    /// The characters a query matched.
    pub fn highlight(&self) -> Style {
        match &self.palette {
            Some(p) => Style::default()
                .fg(p.border_accent)
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            None => Style::default().add_modifier(Modifier::UNDERLINED),
        }
    }
    /// An entry's label, in Atomic's `warning` as its /tree draws it.
    pub fn label(&self) -> Style {
        self.fg(|p| p.warning)
    }
    pub fn active_path(&self) -> Style {
        self.fg(|p| p.accent)
    }
    /// The tag of a row of another agent than Atomic.
    pub fn agent(&self, agent: arbor_session::Agent) -> Style {
        use arbor_session::Agent;
        match agent {
            Agent::Atomic => self.dim(),
            Agent::Pi => self.fg(|p| p.border),
            Agent::Claude => self.fg(|p| p.md_heading),
            Agent::Codex => self.fg(|p| p.custom_message_label),
        }
    }
}

impl Theme {
    /// A remote's tag on its rows (`@devbox`), coloured as the agents'
    /// tags are; dimmed instead while its mirror is not known to be
    /// current.
    pub fn host(&self, stale: bool) -> Style {
        match stale {
            true => self.dim(),
            false => self.fg(|p| p.border_accent),
        }
    }
}

/// `NO_COLOR` set to anything but the empty string (no-color.org).
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}
