//! What each command does: the picker's start (the demo store when there
//! are no sessions), `list`, `show`, `context`, `export`, the writes
//! (`label`, `branch`, `rename`, `fork`) and `index`; output is sanitized for
//! a terminal (see `util::term`).
//!
//! - `start`: the picker (and `tree`, `--last`) and what Enter in it does;
//! - `list`: `arbor list` and the listing `search`, `labels`, `stats` share;
//! - `show`: `show`, `context`, `export` and `diff`, which read one session;
//! - `writes`: `label`, `branch`, `rename` and `fork`;
//! - `index`: `arbor index`;
//! - `config`: `arbor config`, and the settings the picker starts with;
//! - `keys`: `arbor keys`;
//! - `remote`: `arbor remote add|list|remove|sync`;
//! - `json`: JSON and output safe for a terminal.

mod config;
mod index;
mod json;
mod keys;
mod list;
pub(crate) mod remote;
mod show;
mod start;
mod writes;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use super::{Cli, Command, GlobalOpts};

pub(super) use json::json_text;
pub(super) use list::{listed_rows, no_sessions_hint};

use arbor_session::{Session, SessionTree};
use arbor_store::paths::{absolute_cwd, ProcessEnv};
use arbor_store::{resolve_session, StoreConfig};

/// The store's roots the command line names, and the mirrors of the
/// configured `remotes` — unless it names a store of its own, when only a
/// remote `--host` names brings them in (asked for by name, it is listed).
pub fn store_config(g: &GlobalOpts, remotes: &crate::app::remotes::Remotes) -> StoreConfig {
    let mut c = StoreConfig::resolve(g.store.as_deref(), g.session_dir.as_deref(), &ProcessEnv);
    let given = g.store.is_some() || g.session_dir.is_some();
    let remote_named = g
        .hosts
        .iter()
        .any(|h| !arbor_util::hosts::same_host(h, None));
    if let ([agent], true) = (g.agents.as_slice(), given) {
        // `--store DIR --agent claude`: DIR is a Claude Code store.
        for r in &mut c.roots {
            r.agent = *agent;
            if *agent == arbor_session::Agent::Codex && g.store.is_some() {
                r.kind = arbor_store::StoreKind::Dated;
            }
        }
    }
    // After the agent of a given store is set: a mirror's roots keep theirs.
    if !given || remote_named {
        remotes.add_mirrors(&mut c);
    }
    c.narrow(&g.agents);
    c.narrow_hosts(&g.hosts);
    c
}

/// Runs a subcommand; the caller prints the error and exits non-zero.
pub fn run(cli: Cli) -> Result<()> {
    // They read no store: a missing one is no reason to fail them.
    match &cli.command {
        Some(Command::Completions(a)) => {
            return super::shell::completions(a, &mut std::io::stdout())
        }
        Some(Command::Man(a)) => return super::shell::man(a, &mut std::io::stdout()),
        _ => {}
    }
    if let Some(p) = &cli.global.log {
        arbor_util::log::init(p)
            .with_context(|| format!("cannot open the log file {}", p.display()))?;
    }
    explicit_store_exists(&cli.global)?;
    let remotes = crate::app::remotes::Remotes::of(&cli.global);
    remotes.check_hosts(&cli.global.hosts)?;
    let config = store_config(&cli.global, &remotes);
    arbor_util::log::line(format!(
        "arbor {} with store roots {:?}",
        env!("CARGO_PKG_VERSION"),
        config.roots
    ));
    let mut out = std::io::stdout().lock();
    match cli.command {
        None => {
            drop(out);
            start::picker(config, &cli)
        }
        Some(Command::List(a)) => list::list(&config, &cli.global, &a, &mut out),
        Some(Command::Search(a)) => super::search::search(&config, &cli.global, &a, &mut out),
        Some(Command::Show(a)) => show::show(&config, &a, &mut out),
        Some(Command::Context(a)) => show::context(&config, &a, &mut out),
        Some(Command::Export(a)) => show::export(&config, &a, &mut out),
        Some(Command::Diff(a)) => show::diff(&config, &a, &mut out),
        Some(Command::Labels(a)) => super::report::labels(&config, &cli.global, &a, &mut out),
        Some(Command::Stats(a)) => super::report::stats(&config, &cli.global, &a, &mut out),
        Some(Command::Trash(a)) => super::bulk::trash(&config, &remotes, &cli.global, &a, &mut out),
        Some(Command::Restore(a)) => super::bulk::restore(&config, &a, &mut out),
        Some(Command::Tree(ref a)) => {
            drop(out);
            start::tree(&config, &cli, a)
        }
        Some(Command::Label(a)) => writes::label(&config, &remotes, &a, &mut out),
        Some(Command::Branch(a)) => writes::branch(&config, &remotes, &a, &mut out),
        Some(Command::Rename(a)) => writes::name_session(&config, &remotes, &a, &mut out),
        Some(Command::Index(a)) => index::index_cmd(&config, &a, &mut out),
        Some(Command::Fork(a)) => writes::fork(&config, &remotes, &a, &mut out),
        Some(Command::Config(_)) => config::config_cmd(&cli, &mut out),
        Some(Command::Keys(a)) => keys::keys(&a, &mut out),
        Some(Command::Remote(ref a)) => remote::remote(&cli, a, &mut out),
        Some(Command::Completions(_) | Command::Man(_)) => Ok(()),
    }
}

/// A store named on the command line must be there: a typo in `--store`
/// would otherwise list nothing and succeed.
fn explicit_store_exists(g: &GlobalOpts) -> Result<()> {
    for (flag, dir) in [("--store", &g.store), ("--session-dir", &g.session_dir)] {
        if let Some(d) = dir.as_deref().filter(|d| !d.is_dir()) {
            let what = if d.exists() {
                "not a folder"
            } else {
                "no such folder"
            };
            anyhow::bail!("{flag} {}: {what}", d.display());
        }
    }
    Ok(())
}

pub fn resolve(config: &StoreConfig, arg: &str) -> Result<PathBuf> {
    Ok(resolve_session(config, arg)?.path)
}

pub fn project_cwd(cwd: Option<&Path>) -> Result<String> {
    let p = match cwd {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(absolute_cwd(&p.display().to_string(), &ProcessEnv))
}

/// Reads a session and its tree, never holding the file whole: entries
/// keep what the tree needs and read their lines from the file when a
/// row, a context or a comparison asks for them.
fn load(path: &Path) -> Result<(Session, SessionTree)> {
    let s = arbor_session::reader::read_session_lean(path)?;
    let t = SessionTree::build(&s);
    Ok((s, t))
}
