//! `arbor remote add|list|remove|sync`: the `[[remote]]` tables of the
//! settings file (edited in place, the rest of the file kept) and their
//! mirrors (docs/remotes.md).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use clap::{Args, Subcommand};

use arbor_remote::{Remote, RemoteError, SshCommand, SyncProgress, SyncReport};

use crate::cli::Cli;
use crate::settings::Settings;
use crate::term::sanitize_line;

#[derive(Debug, Args)]
pub struct RemoteArgs {
    #[command(subcommand)]
    pub action: RemoteAction,
}

#[derive(Debug, Subcommand)]
pub enum RemoteAction {
    /// Add a remote to the settings file: `arbor remote add devbox me@devbox`
    /// (with --agent A, only that agent's usual folders are copied)
    Add(AddArgs),
    /// The remotes, each with its mirror's age and last error
    List(ListRemotesArgs),
    /// Remove a remote from the settings file (its mirror is kept unless --purge)
    Remove(RemoveArgs),
    /// Copy the remotes' session folders into their mirrors (all, or those named)
    Sync(SyncArgs),
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The remote's name: letters, digits, '.', '_', '-' (its `@name` tag)
    pub name: String,
    /// The ssh destination as you give it to ssh: an alias of ~/.ssh/config,
    /// user@host, ssh://host:port
    #[arg(required_unless_present = "transport", conflicts_with = "transport")]
    pub dest: Option<String>,
    /// A remote folder to copy instead of the agents' usual ones
    /// (`~/…` or absolute; repeatable)
    #[arg(long = "path", value_name = "DIR")]
    pub paths: Vec<String>,
    /// A command that reaches the remote instead of ssh; the remote
    /// command's words are appended to it: --transport 'docker exec -i box'
    #[arg(long, value_name = "CMD")]
    pub transport: Option<String>,
    /// Seconds a sync may stay silent before it is given up (default 20)
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ListRemotesArgs {
    /// One JSON object per remote
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RemoveArgs {
    pub name: String,
    /// Delete its mirror too
    #[arg(long)]
    pub purge: bool,
}

#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The remotes to sync (default: all)
    pub names: Vec<String>,
    /// One JSON object per remote: its figures, or its error
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn remote(cli: &Cli, args: &RemoteArgs, out: &mut impl Write) -> Result<()> {
    // `add` writes the file, which need not exist yet: no warning for that.
    let settings = match args.action {
        RemoteAction::Add(_) => Settings::from_process(&super::config::overrides(cli)),
        _ => super::config::load_for_screen(cli),
    };
    match &args.action {
        RemoteAction::Add(a) => add(cli, &settings, a, out),
        RemoteAction::List(a) => list(&settings, a, out),
        RemoteAction::Remove(a) => remove(&settings, a, out),
        RemoteAction::Sync(a) => sync(&settings, a, out),
    }
}

fn cache_dir() -> Result<PathBuf> {
    arbor_index::default_dir()
        .context("no cache directory for the mirrors (set ARBOR_CACHE_DIR or XDG_CACHE_HOME)")
}

/// The settings file's text ("" when it does not exist yet).
fn settings_text(path: &Path) -> Result<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", crate::term::path(path))),
    }
}

fn add(cli: &Cli, s: &Settings, a: &AddArgs, out: &mut impl Write) -> Result<()> {
    let remote = Remote {
        name: a.name.clone(),
        dest: a.dest.clone(),
        transport: a.transport.clone(),
        agents: cli.global.agents.clone(),
        paths: a.paths.clone(),
        timeout_secs: a.timeout,
        ssh: None,
    };
    let path = &s.config_path.value;
    let text = settings_text(path)?;
    let edited = arbor_remote::add_remote(&text, &remote, path)?;
    arbor_remote::write_settings(path, &edited)?;
    writeln!(
        out,
        "added the remote {} ({}) to {}; `arbor remote sync {}` copies its sessions",
        remote.name,
        sanitize_line(&remote.host()),
        crate::term::path(path),
        remote.name
    )?;
    Ok(())
}

fn remove(s: &Settings, a: &RemoveArgs, out: &mut impl Write) -> Result<()> {
    let path = &s.config_path.value;
    let text = settings_text(path)?;
    let edited = arbor_remote::remove_remote(&text, &a.name, path)?;
    arbor_remote::write_settings(path, &edited)?;
    let cache = cache_dir()?;
    let mirror = crate::term::path(&arbor_remote::mirror_dir(&cache, &a.name));
    let said = if a.purge {
        if arbor_remote::purge_mirror(&cache, &a.name)? {
            format!("its mirror {mirror} was deleted")
        } else {
            "it had no mirror".to_string()
        }
    } else if arbor_remote::mirror_dir(&cache, &a.name).exists() {
        format!("its mirror {mirror} was kept (`--purge` deletes it)")
    } else {
        "it had no mirror".to_string()
    };
    writeln!(
        out,
        "removed the remote {} from {}; {said}",
        a.name,
        crate::term::path(path)
    )?;
    Ok(())
}

fn list(s: &Settings, a: &ListRemotesArgs, out: &mut impl Write) -> Result<()> {
    let cache = cache_dir()?;
    let now = arbor_remote::now_ms();
    if s.remotes.is_empty() && !a.json {
        writeln!(
            out,
            "no remotes (add one with `arbor remote add NAME DEST`)"
        )?;
    }
    for r in &s.remotes {
        let st = arbor_remote::read_state(&cache, &r.name);
        if a.json {
            let v = serde_json::json!({
                "name": r.name,
                "ssh": r.dest,
                "transport": r.transport,
                "agents": r.agents.iter().map(|a| a.name()).collect::<Vec<_>>(),
                "paths": r.folders().iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
                "timeout": r.timeout(),
                "mirror": arbor_remote::mirror_dir(&cache, &r.name),
                "last_ok_ms": st.last_ok_ms,
                "last_attempt_ms": st.last_attempt_ms,
                "age_secs": st.last_ok_ms.map(|t| (now - t).max(0) / 1000),
                "last_error": st.last_error,
            });
            writeln!(out, "{}", super::json_text(&v))?;
            continue;
        }
        let synced = match st.last_ok_ms {
            Some(t) => match arbor_util::age(now, t) {
                a if a == "now" => "synced just now".into(),
                a => format!("synced {a} ago"),
            },
            None => "never synced".into(),
        };
        let error = st
            .last_error
            .as_deref()
            .map(|e| format!("; last sync failed: {}", sanitize_line(e)))
            .unwrap_or_default();
        writeln!(
            out,
            "{}\t{}\t{synced}{error}",
            r.name,
            sanitize_line(&r.host())
        )?;
    }
    Ok(())
}

fn sync(s: &Settings, a: &SyncArgs, out: &mut impl Write) -> Result<()> {
    let cache = cache_dir()?;
    for n in &a.names {
        if !s.remotes.iter().any(|r| &r.name == n) {
            return Err(RemoteError::NoSuchRemote(n.clone()).into());
        }
    }
    let chosen: Vec<&Remote> = s
        .remotes
        .iter()
        .filter(|r| a.names.is_empty() || a.names.contains(&r.name))
        .collect();
    if chosen.is_empty() {
        bail!("no remotes to sync (add one with `arbor remote add NAME DEST`)");
    }
    // In a terminal, ssh may ask (a passphrase, a host key it does not
    // know); elsewhere it must fail rather than wait for an answer.
    let ssh = SshCommand {
        batch: !std::io::stdin().is_terminal(),
        ..s.ssh.clone()
    };
    let mut failed = 0;
    for r in &chosen {
        let result = sync_one(r, &cache, &ssh);
        if a.json {
            writeln!(out, "{}", super::json_text(&sync_json(r, &result)))?;
        }
        match result {
            Ok(rep) if !a.json => writeln!(out, "{}", summary(r, &rep))?,
            Ok(_) => {}
            Err(e) => {
                failed += 1;
                eprintln!(
                    "arbor: remote {}: {}",
                    r.name,
                    sanitize_line(&e.to_string())
                );
            }
        }
    }
    if failed > 0 {
        bail!(
            "{failed} of {} remotes could not be synced; their last mirrors are kept",
            chosen.len()
        );
    }
    Ok(())
}

fn sync_json(r: &Remote, result: &Result<SyncReport, RemoteError>) -> serde_json::Value {
    match result {
        Ok(rep) => serde_json::json!({
            "name": r.name,
            "files": rep.files,
            "literal_bytes": rep.literal_bytes,
            "bytes_received": rep.bytes_received,
            "bytes_sent": rep.bytes_sent,
            "elapsed_ms": u64::try_from(rep.elapsed.as_millis()).unwrap_or(u64::MAX),
            "error": null,
        }),
        Err(e) => serde_json::json!({ "name": r.name, "error": e.to_string() }),
    }
}

fn summary(r: &Remote, rep: &SyncReport) -> String {
    format!(
        "{}: {} file{} copied, {} received, {} sent, in {:.1} s",
        r.name,
        rep.files,
        if rep.files == 1 { "" } else { "s" },
        arbor_util::human_bytes(rep.bytes_received),
        arbor_util::human_bytes(rep.bytes_sent),
        rep.elapsed.as_secs_f64()
    )
}

/// One remote's sync, its progress on one rewritten stderr line when
/// stderr is a terminal.
fn sync_one(r: &Remote, cache: &Path, ssh: &SshCommand) -> Result<SyncReport, RemoteError> {
    let tty = std::io::stderr().is_terminal();
    let mut err = std::io::stderr();
    let (mut files, mut pass, mut of, mut bytes) = (0u64, 0u32, 0u32, 0u64);
    let mut draw = |files: u64, pass: u32, of: u32, bytes: u64| {
        if tty {
            let _ = write!(
                err,
                "\r\x1b[2K{}: pass {pass}/{of}, {files} file{} copied, {}",
                r.name,
                if files == 1 { "" } else { "s" },
                arbor_util::human_bytes(bytes)
            );
        }
    };
    if !tty {
        eprintln!(
            "arbor: syncing the remote {} ({})",
            r.name,
            sanitize_line(&r.host())
        );
    }
    let result = arbor_remote::sync(r, cache, ssh, &mut |p| {
        match p {
            SyncProgress::Pass { pass: p, of: o } => (pass, of) = (p, o),
            SyncProgress::File { .. } => files += 1,
            SyncProgress::Bytes { bytes: b } => bytes = b,
        }
        draw(files, pass, of, bytes);
    });
    if tty {
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
    result
}
