//! The settings in force and where each came from: arbor's own file
//! (`config_file`, `$XDG_CONFIG_HOME/arbor/config.toml`), the Atomic
//! agent's `settings.json` and theme files (`atomic_agent`,
//! `atomic_theme`, `builtin_themes`), the terminal (`color`), and the
//! command line, which beats them all. `NO_COLOR` beats every theme.
//! docs/settings.md names every setting and every Atomic token read.

pub mod atomic_agent;
pub mod atomic_theme;
pub mod builtin_themes;
pub mod color;
pub mod config_file;
pub mod remotes;

use std::path::{Path, PathBuf};

pub use config_file::Preview;

use crate::ui::picker::{Scope, Sort};
use crate::ui::theme::Theme;
use arbor_session::Agent;
use color::ColorMode;

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Default,
    /// arbor's config file.
    File,
    /// A command-line flag.
    Flag,
    /// An environment variable.
    Env(&'static str),
    /// The Atomic agent's `settings.json`.
    AtomicSettings,
    /// The terminal's background (`COLORFGBG`), with no theme chosen.
    Terminal,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Default => f.write_str("default"),
            Origin::File => f.write_str("file"),
            Origin::Flag => f.write_str("flag"),
            Origin::Env(v) => write!(f, "env {v}"),
            Origin::AtomicSettings => f.write_str("Atomic settings.json"),
            Origin::Terminal => f.write_str("default (terminal background)"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub origin: Origin,
}

fn set<T>(value: T, origin: Origin) -> Setting<T> {
    Setting { value, origin }
}

/// What the command line says about settings.
#[derive(Debug, Default, Clone, Copy)]
pub struct Overrides<'a> {
    /// `--config FILE`.
    pub config: Option<&'a Path>,
    /// `--theme NAME`.
    pub theme: Option<&'a str>,
    /// `--all`.
    pub all: bool,
    /// `--resume-cmd` (or `ARBOR_RESUME_CMD`).
    pub resume_cmd: &'a [String],
    /// The resume commands came from `ARBOR_RESUME_CMD`, not a flag.
    pub resume_from_env: bool,
}

/// Every setting in force.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config_path: Setting<PathBuf>,
    pub agent_dir: PathBuf,
    pub theme_name: Setting<String>,
    pub theme: Theme,
    pub color_mode: ColorMode,
    pub scope: Setting<Scope>,
    pub sort: Setting<Sort>,
    pub preview: Setting<Preview>,
    pub mouse: Setting<bool>,
    /// Each agent's resume command.
    pub resume: Vec<(Agent, Setting<String>)>,
    /// `[[remote]]`: other machines whose sessions are mirrored.
    pub remotes: Vec<arbor_remote::Remote>,
    /// The ssh program and options: `ARBOR_SSH`, else the file's `ssh`.
    pub ssh: arbor_remote::SshCommand,
    /// One line per problem met (a file's error, an unknown key, a broken
    /// theme), to print before the screen opens.
    pub warnings: Vec<String>,
}

/// The agents, in the order their settings are shown.
pub const AGENTS: [Agent; 4] = [Agent::Atomic, Agent::Pi, Agent::Claude, Agent::Codex];

impl Settings {
    /// The settings of this process (its environment and home).
    pub fn from_process(o: &Overrides) -> Settings {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        Settings::load(o, &var, dirs::home_dir().as_deref())
    }

    pub fn load(
        o: &Overrides,
        var: &dyn Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Settings {
        let mut warnings = Vec::new();
        let config_path = config_path(o, var, home);
        let file = read_config(&config_path, &mut warnings);
        let agent_dir = atomic_agent::agent_dir(var, home);
        let color_mode = color::color_mode(var);
        let (theme_name, theme) =
            choose_theme(o, &file, &agent_dir, color_mode, var, &mut warnings);
        let scope = if o.all {
            set(Scope::All, Origin::Flag)
        } else {
            from_file(file.scope, Scope::Current)
        };
        let resume = AGENTS
            .iter()
            .map(|&agent| (agent, resume_for(agent, o, &file)))
            .collect();
        let ssh = arbor_remote::SshCommand::resolve(
            var("ARBOR_SSH").as_deref(),
            file.ssh.as_deref(),
            home,
        )
        .unwrap_or_else(|e| {
            warnings.push(format!("{e}; plain ssh is used"));
            arbor_remote::SshCommand::default()
        });
        Settings {
            config_path,
            agent_dir,
            theme_name,
            theme,
            color_mode,
            scope,
            sort: from_file(file.sort, Sort::Threaded),
            preview: from_file(file.preview, Preview::Auto),
            mouse: from_file(file.mouse, true),
            resume,
            remotes: file.remotes,
            ssh,
            warnings,
        }
    }

    /// The resume commands as `--resume-cmd` takes them (`AGENT=CMD`),
    /// for the agents whose command is not their own default.
    pub fn resume_cmds(&self) -> Vec<String> {
        self.resume
            .iter()
            .filter(|(_, s)| s.origin != Origin::Default)
            .map(|(a, s)| format!("{}={}", a.name(), s.value))
            .collect()
    }

    /// The picker's preview setting: `None` follows the terminal's width.
    pub fn preview_on(&self) -> Option<bool> {
        match self.preview.value {
            Preview::Auto => None,
            Preview::On => Some(true),
            Preview::Off => Some(false),
        }
    }
}

/// The file's value, else the default.
fn from_file<T>(v: Option<T>, default: T) -> Setting<T> {
    match v {
        Some(v) => set(v, Origin::File),
        None => set(default, Origin::Default),
    }
}

/// `--config`, else `ARBOR_CONFIG`, else `$XDG_CONFIG_HOME/arbor/config.toml`
/// (`~/.config/arbor/config.toml`).
fn config_path(
    o: &Overrides,
    var: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Setting<PathBuf> {
    if let Some(p) = o.config {
        return set(p.to_path_buf(), Origin::Flag);
    }
    if let Some(p) = var("ARBOR_CONFIG") {
        return set(PathBuf::from(p), Origin::Env("ARBOR_CONFIG"));
    }
    let base = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| home.map(|h| h.join(".config")))
        .unwrap_or_else(|| PathBuf::from(".config"));
    set(base.join("arbor").join("config.toml"), Origin::Default)
}

/// The file's settings; a missing file at the default place is no
/// problem, one named by `--config` or `ARBOR_CONFIG` is.
fn read_config(path: &Setting<PathBuf>, warnings: &mut Vec<String>) -> config_file::FileSettings {
    match std::fs::read_to_string(&path.value) {
        Ok(text) => {
            let read = config_file::parse(&path.value, &text);
            warnings.extend(read.problems);
            read.settings
        }
        Err(e) => {
            if e.kind() != std::io::ErrorKind::NotFound || path.origin != Origin::Default {
                warnings.push(format!(
                    "cannot read the config file {} ({}): {e}; using the defaults",
                    crate::term::path(&path.value),
                    path.origin
                ));
            }
            config_file::FileSettings::default()
        }
    }
}

/// `NO_COLOR`, else `--theme`, the config file's `theme`, Atomic's
/// `settings.json`, the terminal's background. A theme that cannot be
/// loaded is one warning, and the terminal's default theme.
fn choose_theme(
    o: &Overrides,
    file: &config_file::FileSettings,
    agent_dir: &Path,
    mode: ColorMode,
    var: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<String>,
) -> (Setting<String>, Theme) {
    if var("NO_COLOR").is_some() {
        return (set("none".into(), Origin::Env("NO_COLOR")), Theme::plain());
    }
    let chosen = if let Some(t) = o.theme {
        Some(set(t.to_string(), Origin::Flag))
    } else if let Some(t) = &file.theme {
        Some(set(t.clone(), Origin::File))
    } else {
        match atomic_agent::settings_theme(agent_dir) {
            Ok(t) => t.map(|t| set(t, Origin::AtomicSettings)),
            Err(why) => {
                warnings.push(why);
                None
            }
        }
    };
    let fallback = color::background_theme(var);
    let load_default =
        || atomic_theme::load(fallback, agent_dir, mode).unwrap_or_else(|_| Theme::ansi());
    match chosen {
        Some(name) => match atomic_theme::load(&name.value, agent_dir, mode) {
            Ok(theme) => (name, theme),
            Err(why) => {
                warnings.push(format!("{why}; using the {fallback} theme"));
                (set(fallback.to_string(), Origin::Terminal), load_default())
            }
        },
        None => (set(fallback.to_string(), Origin::Terminal), load_default()),
    }
}

/// An agent's resume command: the command line's, the file's, its own.
fn resume_for(agent: Agent, o: &Overrides, file: &config_file::FileSettings) -> Setting<String> {
    if let Some(t) = crate::cli::resume::template_for(o.resume_cmd, agent) {
        let origin = if o.resume_from_env {
            Origin::Env("ARBOR_RESUME_CMD")
        } else {
            Origin::Flag
        };
        return set(t.to_string(), origin);
    }
    match file.resume.iter().rev().find(|(a, _)| *a == agent) {
        Some((_, cmd)) => set(cmd.clone(), Origin::File),
        None => set(agent.resume_template().to_string(), Origin::Default),
    }
}
