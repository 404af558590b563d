//! A change to a remote's session, made on the machine that owns it:
//! `arbor` there runs the write (rename, label, branch, fork, trash) on
//! the session's own file, then the mirror is synced. arbor's copy is
//! never written (see `fileops::mirror_refusal`). Whether arbor is
//! installed on the remote is asked once (`command -v arbor` over ssh or
//! the transport) and remembered in the mirror's state; without it the
//! write is refused with a sentence naming the host.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use super::remotes::Remotes;
use arbor_remote::{ArborOnRemote, Remote};

/// A write, as the remote's arbor takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteWrite {
    Rename { name: String },
    Label { entry: String, text: Option<String> },
    Branch { entry: String, summary: String },
    Fork { entry: String },
    Trash,
}

impl RemoteWrite {
    /// What the command line of arbor says, without the session.
    fn verb(&self) -> &'static str {
        match self {
            RemoteWrite::Rename { .. } => "rename",
            RemoteWrite::Label { .. } => "label",
            RemoteWrite::Branch { .. } => "branch",
            RemoteWrite::Fork { .. } => "fork",
            RemoteWrite::Trash => "trash",
        }
    }

    /// arbor's arguments on the remote for the session at `path` there:
    /// options first, then `--`, so that no name, label or id can be read
    /// as one.
    pub fn args(&self, path: &str, migrate: bool) -> Vec<String> {
        let mut out = vec![self.verb().to_string()];
        if migrate && !matches!(self, RemoteWrite::Fork { .. } | RemoteWrite::Trash) {
            out.push("--migrate".into());
        }
        match self {
            RemoteWrite::Label { text: None, .. } => out.push("--clear".into()),
            RemoteWrite::Branch { summary, .. } => out.push(format!("--summary={summary}")),
            _ => {}
        }
        out.push("--".into());
        out.push(path.to_string());
        match self {
            RemoteWrite::Rename { name } => out.push(name.clone()),
            RemoteWrite::Label { entry, text } => {
                out.push(entry.clone());
                out.extend(text.clone());
            }
            RemoteWrite::Branch { entry, .. } | RemoteWrite::Fork { entry } => {
                out.push(entry.clone())
            }
            RemoteWrite::Trash => {}
        }
        out
    }
}

/// A mirrored path as the remote's arbor is given it, run in the remote's
/// home: `~/x` as `x` (no shell expands a quoted `~`), an absolute path
/// as it is.
fn path_from_home(remote_path: &str) -> &str {
    remote_path.strip_prefix("~/").unwrap_or(remote_path)
}

/// The remote's arbor: remembered once found, else asked for (and
/// remembered). `None`: not installed there. Its absence is asked again
/// at each write, so that installing arbor there is noticed at once.
pub fn arbor_on(remotes: &Remotes, remote: &Remote) -> Result<Option<String>> {
    let cache = remotes
        .cache
        .as_deref()
        .context("arbor has no cache folder")?;
    let mut state = arbor_remote::read_state(cache, &remote.name);
    if let Some(ArborOnRemote::Yes { program }) = &state.arbor_on_remote {
        return Ok(Some(program.clone()));
    }
    let mut ssh = remotes.ssh.clone();
    ssh.batch = true;
    let argv = ["sh", "-c", "command -v arbor"].map(String::from);
    let out = arbor_remote::remote_command(remote, &ssh, &argv, false)
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot reach {} to look for arbor there", remote.name))?;
    let program = String::from_utf8_lossy(&out.stdout).trim().to_string();
    // `command -v` fails (1) for a program it does not find; ssh's own
    // failure (255) says nothing about arbor.
    let found = match out.status.code() {
        Some(0) if !program.is_empty() => ArborOnRemote::Yes { program },
        Some(1) | Some(127) => ArborOnRemote::No,
        _ => bail!(
            "cannot reach {} to look for arbor there: {}",
            remote.name,
            crate::term::sanitize_line(String::from_utf8_lossy(&out.stderr).trim())
        ),
    };
    state.arbor_on_remote = Some(found.clone());
    // Only a note: a state that cannot be written is asked again next time.
    let _ = arbor_remote::write_state(cache, &remote.name, &state);
    Ok(match found {
        ArborOnRemote::Yes { program } => Some(program),
        ArborOnRemote::No => None,
    })
}

/// Runs `write` on the session mirrored at `local` with the remote's
/// arbor, then syncs the mirror; returns what arbor printed there.
pub fn run(
    remotes: &Remotes,
    remote: &Remote,
    local: &Path,
    write: &RemoteWrite,
    migrate: bool,
) -> Result<String> {
    let host = &remote.name;
    let cache = remotes
        .cache
        .as_deref()
        .context("arbor has no cache folder")?;
    let Some(remote_path) = arbor_remote::remote_path(cache, remote, local) else {
        bail!(
            "{} is not in the copy of {host}'s sessions",
            local.display()
        );
    };
    let out = run_there(
        remotes,
        remote,
        write.verb(),
        write.args(path_from_home(&remote_path), migrate),
        false,
    )?;
    Ok(String::from_utf8_lossy(&out).trim_end().to_string())
}

/// Runs `arbor ARGS` on `remote` (in its home), then syncs the mirror;
/// returns what it printed. `verb` names the write in a refusal. With
/// `per_session`, a failure that printed something (a line for each
/// session, some not moved) is returned as it is, for the caller to read.
fn run_there(
    remotes: &Remotes,
    remote: &Remote,
    verb: &str,
    args: Vec<String>,
    per_session: bool,
) -> Result<Vec<u8>> {
    let host = &remote.name;
    let cache = remotes
        .cache
        .as_deref()
        .context("arbor has no cache folder")?;
    let Some(program) = arbor_on(remotes, remote)? else {
        bail!(
            "arbor is not installed on {host}, so it cannot {verb} a session there; \
             arbor never changes its copy of {host}'s sessions"
        );
    };
    // In the remote's home, where `~/…` paths start.
    let mut argv = vec![
        "sh".to_string(),
        "-c".to_string(),
        "cd && exec \"$@\"".to_string(),
        "arbor-write".to_string(),
        program,
    ];
    argv.extend(args);
    let mut ssh = remotes.ssh.clone();
    ssh.batch = true;
    let out = arbor_remote::remote_command(remote, &ssh, &argv, false)
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run arbor on {host}"))?;
    let said = |b: &[u8]| crate::term::sanitize_line(String::from_utf8_lossy(b).trim());
    if !out.status.success() && (!per_session || out.stdout.is_empty()) {
        let why = said(&out.stderr);
        let why = why.strip_prefix("arbor: ").unwrap_or(&why);
        bail!("on {host}: {why}");
    }
    // The change comes back the way every change does: by the mirror.
    if let Err(e) = arbor_remote::sync(remote, cache, &ssh, &mut |_| {}) {
        let said = format!("the change was made on {host}, but the copy here is not updated: {e}");
        // Never onto the picker's screen: its next sync brings the change.
        if arbor_util::log::screen_up() {
            arbor_util::log::line(said);
        } else {
            eprintln!("arbor: {said}");
        }
    }
    Ok(out.stdout)
}

/// What a batch of a remote's sessions came to: those moved to the trash
/// there, and those not (with why), by their paths here.
#[derive(Debug, Default)]
pub struct RemoteBatch {
    pub moved: Vec<PathBuf>,
    pub failed: Vec<(PathBuf, String)>,
}

/// Moves the mirrored sessions `locals` (all of `remote`) to the trash on
/// the remote, in one call of its arbor (`arbor trash --json`, whose line
/// for each session says whether it moved), then one sync.
pub fn trash_all(remotes: &Remotes, remote: &Remote, locals: &[PathBuf]) -> RemoteBatch {
    let mut batch = RemoteBatch::default();
    let Some(cache) = remotes.cache.as_deref() else {
        let why = "arbor has no cache folder".to_string();
        batch.failed = locals.iter().map(|p| (p.clone(), why.clone())).collect();
        return batch;
    };
    // The remote's path of each, as its arbor will name it back.
    let mut there: Vec<(String, PathBuf)> = Vec::new();
    for local in locals {
        match arbor_remote::remote_path(cache, remote, local) {
            Some(r) => there.push((r, local.clone())),
            None => batch.failed.push((
                local.clone(),
                format!("it is not in the copy of {}'s sessions", remote.name),
            )),
        }
    }
    if there.is_empty() {
        return batch;
    }
    let mut args = vec!["trash".to_string(), "--json".to_string(), "--".to_string()];
    args.extend(there.iter().map(|(r, _)| path_from_home(r).to_string()));
    let said = match run_there(remotes, remote, "trash", args, true) {
        Ok(out) => String::from_utf8_lossy(&out).into_owned(),
        Err(e) => {
            let why = format!("{e:#}");
            batch
                .failed
                .extend(there.into_iter().map(|(_, l)| (l, why.clone())));
            return batch;
        }
    };
    let lines: Vec<serde_json::Value> = said
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    for (remote_path, local) in there {
        let wanted = path_from_home(&remote_path);
        // The remote's arbor prints absolute paths: matched by their end.
        let line = lines.iter().find(|v| {
            v["path"]
                .as_str()
                .is_some_and(|p| p == wanted || p.ends_with(&format!("/{wanted}")))
        });
        match line {
            Some(v) if v["status"] == "moved" => batch.moved.push(local),
            Some(v) => {
                let why = v["error"].as_str().unwrap_or("not moved");
                let why = crate::term::sanitize_line(why);
                batch
                    .failed
                    .push((local, format!("on {}: {why}", remote.name)));
            }
            None => batch.failed.push((
                local,
                format!("on {}: arbor there did not say it moved", remote.name),
            )),
        }
    }
    batch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_from_the_user_is_read_as_an_option_there() {
        let w = RemoteWrite::Rename {
            name: "--rm".into(),
        };
        assert_eq!(
            w.args("s/a.jsonl", true),
            ["rename", "--migrate", "--", "s/a.jsonl", "--rm"]
        );
        let w = RemoteWrite::Label {
            entry: "e1".into(),
            text: None,
        };
        assert_eq!(
            w.args("/s/a.jsonl", false),
            ["label", "--clear", "--", "/s/a.jsonl", "e1"]
        );
        let w = RemoteWrite::Branch {
            entry: "e1".into(),
            summary: "-x".into(),
        };
        assert_eq!(
            w.args("a", false),
            ["branch", "--summary=-x", "--", "a", "e1"]
        );
        assert_eq!(RemoteWrite::Trash.args("a", true), ["trash", "--", "a"]);
        assert_eq!(path_from_home("~/.atomic/x"), ".atomic/x");
        assert_eq!(path_from_home("/srv/x"), "/srv/x");
    }
}
