//! The remote shell rsync runs (`-e`): a small script written into the
//! mirror at each sync. It drops the host name rsync passes first (arbor
//! gives rsync a stand-in one, so that any destination ssh takes —
//! `ssh://host:2222`, a config alias — works) and runs:
//! - over ssh: `<ssh words> -o ConnectTimeout=N [-o BatchMode=yes] -- DEST <rsync's words>`;
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

/// Writes the script for `remote` into its mirror folder `dir`; returns
/// its path.
pub(crate) fn write(dir: &Path, remote: &Remote, ssh: &SshCommand) -> Result<PathBuf, RemoteError> {
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
    Ok(path)
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
