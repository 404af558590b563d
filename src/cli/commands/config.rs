//! `arbor config`: the settings in force, each with where it came from;
//! and the settings the picker and the tree start with.

use std::io::Write;

use anyhow::Result;

use crate::cli::Cli;
use crate::settings::{Overrides, Preview, Settings};
use crate::term::sanitize_line;
use crate::ui::picker::{Scope, Sort};

/// What the command line says about settings.
pub(super) fn overrides(cli: &Cli) -> Overrides<'_> {
    // clap fills `--resume-cmd` from `ARBOR_RESUME_CMD` when no flag is given.
    let flag_given = std::env::args_os().any(|a| {
        a.to_str()
            .is_some_and(|a| a == "--resume-cmd" || a.starts_with("--resume-cmd="))
    });
    Overrides {
        config: cli.global.config.as_deref(),
        theme: cli.global.theme.as_deref(),
        all: cli.all,
        resume_cmd: &cli.resume_cmd,
        resume_from_env: !flag_given && !cli.resume_cmd.is_empty(),
    }
}

/// The settings for a screen: read, and their problems said on stderr
/// (one line each) before the screen covers it.
pub(super) fn load_for_screen(cli: &Cli) -> Settings {
    let settings = Settings::from_process(&overrides(cli));
    for w in &settings.warnings {
        eprintln!("arbor: {}", sanitize_line(w));
    }
    settings
}

pub(super) fn config_cmd(cli: &Cli, out: &mut impl Write) -> Result<()> {
    let s = Settings::from_process(&overrides(cli));
    for w in &s.warnings {
        eprintln!("arbor: {}", sanitize_line(w));
    }
    let found = if s.config_path.value.is_file() {
        ""
    } else {
        ", not found"
    };
    writeln!(
        out,
        "config file: {} ({}{found})",
        crate::term::path(&s.config_path.value),
        s.config_path.origin
    )?;
    writeln!(out, "Atomic agent dir: {}", crate::term::path(&s.agent_dir))?;
    writeln!(out)?;
    let mut rows: Vec<(String, String, String)> = vec![
        row("theme", &s.theme_name.value, &s.theme_name.origin),
        (
            "colours".into(),
            match s.color_mode {
                crate::settings::color::ColorMode::TrueColor => "24-bit".into(),
                crate::settings::color::ColorMode::Palette256 => "256".into(),
            },
            "terminal (COLORTERM, TERM)".into(),
        ),
        row("scope", scope_name(s.scope.value), &s.scope.origin),
        row("sort", sort_name(s.sort.value), &s.sort.origin),
        row("preview", preview_name(s.preview.value), &s.preview.origin),
        row(
            "mouse",
            if s.mouse.value { "on" } else { "off" },
            &s.mouse.origin,
        ),
    ];
    for (agent, cmd) in &s.resume {
        rows.push(row(
            &format!("resume.{}", agent.name()),
            &cmd.value,
            &cmd.origin,
        ));
    }
    let ssh_origin = match s.ssh.origin {
        arbor_remote::SshOrigin::Env => crate::settings::Origin::Env("ARBOR_SSH"),
        arbor_remote::SshOrigin::File => crate::settings::Origin::File,
        arbor_remote::SshOrigin::Default => crate::settings::Origin::Default,
    };
    rows.push(row(
        "ssh",
        &arbor_remote::shell_line(&s.ssh.words),
        &ssh_origin,
    ));
    let names: Vec<&str> = s.remotes.iter().map(|r| r.name.as_str()).collect();
    let (remotes, origin) = if names.is_empty() {
        ("none".to_string(), crate::settings::Origin::Default)
    } else {
        (names.join(", "), crate::settings::Origin::File)
    };
    rows.push(row("remotes", &remotes, &origin));
    let key_w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let value_w = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    for (key, value, origin) in rows {
        writeln!(out, "{key:key_w$}  {value:value_w$}  {origin}")?;
    }
    Ok(())
}

fn row(key: &str, value: &str, origin: &crate::settings::Origin) -> (String, String, String) {
    (key.into(), sanitize_line(value), origin.to_string())
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Current => "current",
        Scope::All => "all",
    }
}

fn sort_name(s: Sort) -> &'static str {
    match s {
        Sort::Threaded => "threaded",
        Sort::Recent => "recent",
        Sort::Relevance => "fuzzy",
    }
}

fn preview_name(p: Preview) -> &'static str {
    match p {
        Preview::Auto => "auto",
        Preview::On => "true",
        Preview::Off => "false",
    }
}
