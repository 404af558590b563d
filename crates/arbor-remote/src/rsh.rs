//! The remote shell rsync runs (`-e`): a small script written into the
//! mirror at each sync. It drops the host name rsync passes first (arbor
//! gives rsync a stand-in one, so that any destination ssh takes —
//! `ssh://host:2222`, a config alias — works) and runs:
//! - over ssh: `<ssh words> -o ConnectTimeout=N [-o BatchMode=yes] <shared connection> -- DEST <rsync's words>`;
//!   the remote's login shell reads the words, in the home folder;
//! - through a transport: `<transport words> sh -c 'cd && exec <rsync's words>'`,
//!   so that the words are read by a shell in the home folder there too.
//!
//! Every word is quoted for `sh`; nothing of the user's is run through a
//! shell that they did not write as one.

use std::path::{Path, PathBuf};

use crate::command::{home_dir, ssh_options};
use crate::{shell_quote, Remote, RemoteError, SshCommand};

pub(crate) const SCRIPT: &str = "rsh.sh";

/// The script written for one sync.
pub(crate) struct Rsh {
    pub script: PathBuf,
    /// The ssh command that ends the shared connection, when there is one.
    pub close: Option<Vec<String>>,
}

impl Rsh {
    /// Ends the shared connection (a sync's last pass is over), so that
    /// no ssh process outlives the sync.
    pub(crate) fn close(&self) {
        let Some(words) = &self.close else { return };
        let _ = std::process::Command::new(&words[0])
            .args(&words[1..])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// Writes the script for `remote` into its mirror folder `dir`.
pub(crate) fn write(dir: &Path, remote: &Remote, ssh: &SshCommand) -> Result<Rsh, RemoteError> {
    let mut close = None;
    let line = match &remote.transport {
        Some(t) => {
            let words = shlex::split(t).ok_or_else(|| RemoteError::BadSetting {
                name: remote.name.clone(),
                why: format!("the transport {t:?} cannot be split into words"),
            })?;
            format!("{} sh -c \"cd && exec $*\"", quoted(&words))
        }
        None => {
            let mut words = ssh.words_for(remote, home_dir().as_deref())?;
            words.extend(ssh_options(remote, ssh));
            words.push("--".into());
            words.push(remote.dest.clone().unwrap_or_default());
            let shared = shared_connection(dir, &words);
            let at = words.len() - 2;
            if let Some(path_option) = shared.get(3) {
                // `<ssh words> -o ControlPath=… -O exit -- DEST`
                let mut c = words[..at].to_vec();
                c.extend(["-o".into(), path_option.clone(), "-O".into(), "exit".into()]);
                c.extend_from_slice(&words[at..]);
                close = Some(c);
            }
            words.splice(at..at, shared);
            format!("{} \"$@\"", quoted(&words))
        }
    };
    let text = format!(
        "#!/bin/sh\n# rsync's remote shell for the remote {} (written by arbor at each sync)\nshift\nexec {line}\n",
        remote.name
    );
    let path = dir.join(SCRIPT);
    arbor_session::fileops::write_atomic(&path, text.as_bytes())
        .map_err(|e| RemoteError::io(&path, e))?;
    Ok(Rsh {
        script: path,
        close,
    })
}

/// One ssh connection for a sync's passes (each rsync run is a login;
/// the handshake was half of a sync with nothing to copy): the first
/// pass's ssh becomes a master on a socket in the private mirror folder
/// and lingers a few seconds for the next. Left out where the socket's
/// path would be too long for a Unix socket.
fn shared_connection(dir: &Path, words: &[String]) -> Vec<String> {
    // The socket is named by what it connects to (another destination or
    // ssh command is another socket); ssh adds 17 characters while it
    // makes it, and `sun_path` holds 104 to 108 bytes.
    let path = format!("{}/cm-{:016x}", dir.display(), fnv1a(&words.join("\0")));
    if path.len() + 17 > 103 {
        return Vec::new();
    }
    [
        "-o".to_string(),
        "ControlMaster=auto".to_string(),
        "-o".to_string(),
        format!("ControlPath={}", path.replace('%', "%%")),
        "-o".to_string(),
        "ControlPersist=5".to_string(),
    ]
    .to_vec()
}

/// FNV-1a, 64 bits: a name, not a secret.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The `-e` value that runs the script: rsync splits it into words
/// itself, reading a doubled quote inside quotes as one.
pub(crate) fn rsync_e(script: &Path) -> String {
    format!("sh '{}'", script.to_string_lossy().replace('\'', "''"))
}

fn quoted(words: &[String]) -> String {
    words
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}
