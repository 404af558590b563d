//! A sync: the remote's configured folders copied into its mirror by
//! rsync, in two passes per group of folders (those under the remote's
//! home, the absolute ones):
//! 1. `--append-verify`: a file that grew is sent from its old end only,
//!    and the whole file's checksum is compared afterwards; when the old
//!    part changed too, rsync sends the file again in full;
//! 2. a plain pass: a file that was rewritten without growing (the first
//!    pass skips a file not longer than its copy) is sent again.
//!
//! Both passes delete what is gone from the remote (`--delete`). The
//! mirror's files are read-only between syncs (0400; made writable for
//! the copy only, as rsync writes an appended file in place), its
//! folders 0700. Nothing outside the configured folders is asked for:
//! rsync is given those folders only, copies no symbolic link (`-rt`, no
//! `-l`/`-L`), and the `--relative` copy keeps each under its own path.
//! A missing folder on the remote is no error (`--ignore-missing-args`).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::mirror::{mirror_dir, HOME_DIR, ROOT_DIR};
use crate::remote::folder_parts;
use crate::rsync_run::{self, RunOutcome, FILE_MARK};
use crate::state::{now_ms, read_state, write_state};
use crate::{private_dir, readonly, rsh, Remote, RemoteError, SshCommand};

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
    remote.validate()?;
    let dir = mirror_dir(cache, &remote.name);
    private_dir::create(&dir)?;
    let _lock = crate::lock::Lock::take(&dir.join(".lock"))?;
    let mut state = read_state(cache, &remote.name);
    state.last_attempt_ms = Some(now_ms());
    let result = copy(remote, &dir, ssh, progress);
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
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<SyncReport, RemoteError> {
    let started = Instant::now();
    let rsh = rsh::write(dir, remote, ssh)?;
    let result = copy_groups(remote, dir, ssh, &rsh, progress);
    rsh.close();
    let mut report = result?;
    report.elapsed = started.elapsed();
    Ok(report)
}

/// The passes over each group of folders (under the home, absolute).
fn copy_groups(
    remote: &Remote,
    dir: &Path,
    ssh: &SshCommand,
    rsh: &rsh::Rsh,
    progress: &mut dyn FnMut(SyncProgress),
) -> Result<SyncReport, RemoteError> {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for (home, top) in [(true, HOME_DIR), (false, ROOT_DIR)] {
        let sources: Vec<String> = remote
            .folders()
            .iter()
            .filter_map(|(p, _, _)| folder_parts(p))
            .filter(|(h, _)| *h == home)
            .map(|(_, rest)| if home { rest } else { format!("/{rest}") })
            .collect();
        if !sources.is_empty() {
            groups.push((top, sources));
        }
    }
    let of = u32::try_from(groups.len() * 2).unwrap_or(u32::MAX);
    let mut report = SyncReport::default();
    let mut pass = 0;
    for (top, sources) in &groups {
        let dest = dir.join(top);
        private_dir::create(&dest)?;
        readonly::set(&dest, false);
        let result = (|| {
            for append in [true, false] {
                pass += 1;
                progress(SyncProgress::Pass { pass, of });
                let cmd = rsync_command(remote, &rsh::rsync_e(&rsh.script), sources, &dest, append);
                let outcome = rsync_run::run(
                    cmd,
                    Duration::from_secs(remote.timeout()),
                    ssh.batch,
                    progress,
                )
                .map_err(|e| spawn_error(&dest, e))?;
                crate::failure::check(remote, &outcome)?;
                add(&mut report, &outcome);
            }
            Ok(())
        })();
        readonly::set(&dest, true);
        result?;
    }
    Ok(report)
}

fn rsync_command(
    remote: &Remote,
    rsh: &str,
    sources: &[String],
    dest: &Path,
    append: bool,
) -> Command {
    let mut cmd = Command::new("rsync");
    cmd.args(["-rt", "-p", "--chmod=D0700,F0600", "--relative", "--delete"])
        .args(["--ignore-missing-args", "--no-human-readable", "--stats"])
        .arg("--info=progress2")
        .arg(format!("--out-format={FILE_MARK}%n"))
        .arg(format!("--timeout={}", remote.timeout()))
        .arg("-e")
        .arg(rsh);
    if append {
        cmd.arg("--append-verify");
    }
    // `arbor:` is a stand-in host: the remote shell script drops it.
    cmd.args(sources.iter().map(|s| format!("arbor:{s}")));
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
