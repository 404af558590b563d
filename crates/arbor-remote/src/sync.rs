//! A sync: the remote's configured folders copied into its mirror by
//! rsync, in up to two passes per group of folders (those under the
//! remote's home, the absolute ones):
//! 1. `--append-verify`: a file that grew is sent from its old end only,
//!    and the whole file's checksum is compared afterwards; when the old
//!    part changed too, rsync sends the file again in full. This pass
//!    also deletes what is gone from the remote (`--delete`), and names
//!    the files it found unchanged (`--info=name2`);
//! 2. only when some mirrored file was neither copied nor unchanged —
//!    rewritten without growing, which the first pass skips — those
//!    files alone (`--files-from`), with rsync's usual delta transfer.
//!
//! The mirror's files are read-only between syncs (0400; made writable
//! for the copy only, as rsync writes an appended file in place), its
//! folders 0700. Nothing outside the configured folders is asked for:
//! rsync is given those folders only (the second pass, files found in
//! their copies), copies no symbolic link (`-rt`, no `-l`/`-L`), and the
//! `--relative` copy keeps each under its own path. A missing folder on
//! the remote is no error (`--ignore-missing-args`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::cancel::SyncCancel;
use crate::mirror::{mirror_dir, HOME_DIR, ROOT_DIR};
use crate::mirror_files::{create_private, set_readonly, Lock};
use crate::remote::folder_parts;
use crate::rsync_run::{self, RunOutcome, FILE_MARK};
use crate::state::{now_ms, read_state, write_state};
use crate::{rewritten, rsh, Remote, RemoteError, SshCommand};

/// What a sync is doing, as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncProgress {
    /// A pass began: `pass` of `of` (two per group of folders).
    Pass { pass: u32, of: u32 },
    /// A file was copied (its path below the mirror's `home/` or `root/`).
    File { path: String },
    /// Bytes of file data handled so far in this pass.
    Bytes { bytes: u64 },
}

/// What a sync copied, summed over its passes (rsync's `--stats`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Files sent (a file sent again in full after a failed append check
    /// counts twice).
    pub files: u64,
    /// File bytes sent as they are (not matched against the copy).
    pub literal_bytes: u64,
    /// Bytes that came over the connection from the remote.
    pub bytes_received: u64,
    /// Bytes sent to the remote (the file list's answers, checksums).
    pub bytes_sent: u64,
    pub elapsed: Duration,
}

/// Syncs `remote`'s mirror in `cache`; blocking (call it from a thread of
/// its own to keep a screen answering). Its `state.json` records the
/// attempt and, on failure, why; the last mirror is kept as it was.
pub fn sync(
    remote: &Remote,
    cache: &Path,
    ssh: &SshCommand,
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<SyncReport, RemoteError> {
    sync_cancellable(remote, cache, ssh, &SyncCancel::new(), progress)
}

/// [`sync`], stopped (its rsync's process group killed) when `cancel` is.
pub fn sync_cancellable(
    remote: &Remote,
    cache: &Path,
    ssh: &SshCommand,
    cancel: &SyncCancel,
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<SyncReport, RemoteError> {
    remote.validate()?;
    let dir = mirror_dir(cache, &remote.name);
    create_private(&dir)?;
    let _lock = Lock::take(&dir.join(".lock"))?;
    let mut state = read_state(cache, &remote.name);
    state.last_attempt_ms = Some(now_ms());
    let result = copy(remote, &dir, ssh, cancel, progress);
    match &result {
        Ok(_) => {
            state.last_ok_ms = state.last_attempt_ms;
            state.last_error = None;
        }
        Err(e) => state.last_error = Some(e.to_string()),
    }
    let written = write_state(cache, &remote.name, &state);
    let report = result?;
    written?;
    Ok(report)
}

fn copy(
    remote: &Remote,
    dir: &Path,
    ssh: &SshCommand,
    cancel: &SyncCancel,
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<SyncReport, RemoteError> {
    let started = Instant::now();
    let rsh = rsh::write(dir, remote, ssh)?;
    let result = copy_groups(remote, dir, (ssh, cancel), &rsh, progress);
    rsh.close();
    let mut report = result?;
    report.elapsed = started.elapsed();
    Ok(report)
}

/// The passes over each group of folders (under the home, absolute).
fn copy_groups(
    remote: &Remote,
    dir: &Path,
    (ssh, cancel): (&SshCommand, &SyncCancel),
    rsh: &rsh::Rsh,
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<SyncReport, RemoteError> {
    let mut groups: Vec<(&str, &str, Vec<String>)> = Vec::new();
    for (home, top, base) in [(true, HOME_DIR, "."), (false, ROOT_DIR, "/")] {
        let sources: Vec<String> = remote
            .folders()
            .iter()
            .filter_map(|(p, _, _)| folder_parts(p))
            .filter(|(h, _)| *h == home)
            .map(|(_, rest)| if home { rest } else { format!("/{rest}") })
            .collect();
        if !sources.is_empty() {
            groups.push((top, base, sources));
        }
    }
    let of = u32::try_from(groups.len() * 2).unwrap_or(u32::MAX);
    let mut report = SyncReport::default();
    let mut pass = 0;
    let e = rsh::rsync_e(&rsh.script);
    for (top, base, sources) in &groups {
        let dest = dir.join(top);
        create_private(&dest)?;
        set_readonly(&dest, false);
        let mut run = |cmd: Command| -> Result<RunOutcome, RemoteError> {
            pass += 1;
            progress(SyncProgress::Pass { pass, of });
            let timeout = Duration::from_secs(remote.timeout());
            let outcome = rsync_run::run(cmd, timeout, ssh.batch, cancel, progress)
                .map_err(|e| spawn_error(&dest, e))?;
            if cancel.is_cancelled() {
                return Err(RemoteError::Cancelled {
                    host: remote.name.clone(),
                });
            }
            crate::failure::check(remote, &outcome)?;
            add(&mut report, &outcome);
            Ok(outcome)
        };
        let result = (|| {
            let mut cmd = rsync_command(remote, &e);
            cmd.args(["--append-verify", "--delete", "--info=name2"]);
            let first = run(with_paths(
                cmd,
                sources.iter().map(|s| format!("arbor:{s}")),
                &dest,
            ))?;
            let list = dir.join(REWRITTEN_LIST);
            if rewritten::write_list(&dest, &first.seen, &list)? {
                let mut cmd = rsync_command(remote, &e);
                cmd.arg("--from0")
                    .arg(format!("--files-from={}", list.display()));
                run(with_paths(cmd, [format!("arbor:{base}")], &dest))?;
            }
            Ok(())
        })();
        set_readonly(&dest, true);
        result?;
    }
    Ok(report)
}

/// The list of files the second pass copies, in the mirror folder.
const REWRITTEN_LIST: &str = "rewritten.list";

/// rsync with what every pass shares: times kept, the mirror's modes,
/// each file under its remote path (`--relative`), a missing folder no
/// error, the remote shell `rsh`, figures and names on stdout.
fn rsync_command(remote: &Remote, rsh: &str) -> Command {
    let mut cmd = Command::new("rsync");
    cmd.args(["-rt", "-p", "--chmod=D0700,F0600", "--relative"])
        .args(["--ignore-missing-args", "--no-human-readable", "--stats"])
        .arg("--info=progress2")
        .arg(format!("--out-format={FILE_MARK}%n"))
        .arg(format!("--timeout={}", remote.timeout()))
        .arg("-e")
        .arg(rsh);
    cmd
}

/// `cmd` given its sources (`arbor:` is a stand-in host: the remote
/// shell script drops it) and the mirror folder `dest`.
fn with_paths(mut cmd: Command, sources: impl IntoIterator<Item = String>, dest: &Path) -> Command {
    cmd.args(sources);
    let mut d = dest.as_os_str().to_owned();
    d.push("/");
    cmd.arg(d);
    cmd
}

fn spawn_error(dest: &Path, e: std::io::Error) -> RemoteError {
    if e.kind() == std::io::ErrorKind::NotFound {
        RemoteError::RsyncMissingLocal
    } else {
        RemoteError::io(dest, e)
    }
}

fn add(r: &mut SyncReport, o: &RunOutcome) {
    r.files += o.files;
    r.literal_bytes += o.literal_bytes;
    r.bytes_received += o.bytes_received;
    r.bytes_sent += o.bytes_sent;
}
