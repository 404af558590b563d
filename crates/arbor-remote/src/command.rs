//! Running a command on a remote: the ssh program and its options (as
//! git's `GIT_SSH_COMMAND` sets them), quoting for the remote's shell,
//! and the command line that reaches the remote over ssh or a transport.

use std::path::Path;
use std::process::Command;

use crate::{Remote, RemoteError};

/// Where the ssh command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SshOrigin {
    /// `ARBOR_SSH`: beats every setting, a remote's own too.
    Env,
    /// The top-level `ssh` setting.
    File,
    /// Plain `ssh`.
    Default,
}

/// The ssh program and its options, split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCommand {
    pub words: Vec<String>,
    pub origin: SshOrigin,
    /// `BatchMode=yes`: ssh never asks (no password, no host key
    /// question) and fails instead; for syncs with no terminal to ask on.
    pub batch: bool,
}

impl Default for SshCommand {
    fn default() -> Self {
        SshCommand {
            words: vec!["ssh".into()],
            origin: SshOrigin::Default,
            batch: false,
        }
    }
}

impl SshCommand {
    /// `ARBOR_SSH` (`env`), else the setting (`file`), else `ssh`; split
    /// with shell-word rules, a leading `~/` in a word made `home`'s.
    pub fn resolve(
        env: Option<&str>,
        file: Option<&str>,
        home: Option<&Path>,
    ) -> Result<SshCommand, RemoteError> {
        let (text, origin) = match (env, file) {
            (Some(e), _) if !e.trim().is_empty() => (e, SshOrigin::Env),
            (_, Some(f)) if !f.trim().is_empty() => (f, SshOrigin::File),
            _ => return Ok(SshCommand::default()),
        };
        Ok(SshCommand {
            words: split_words(text, home)?,
            origin,
            batch: false,
        })
    }

    /// The words for `remote`: its own `ssh_command` unless `ARBOR_SSH` is
    /// set.
    pub fn words_for(
        &self,
        remote: &Remote,
        home: Option<&Path>,
    ) -> Result<Vec<String>, RemoteError> {
        match (&remote.ssh, self.origin) {
            (Some(own), SshOrigin::File | SshOrigin::Default) if !own.trim().is_empty() => {
                split_words(own, home)
            }
            _ => Ok(self.words.clone()),
        }
    }
}

fn split_words(text: &str, home: Option<&Path>) -> Result<Vec<String>, RemoteError> {
    let words = shlex::split(text).ok_or(RemoteError::BadSshCommand(
        text.to_string(),
        "a quote is not closed",
    ))?;
    if words.is_empty() {
        return Err(RemoteError::BadSshCommand(text.to_string(), "it is empty"));
    }
    Ok(words
        .into_iter()
        .map(|w| match (w.strip_prefix("~/"), home) {
            (Some(rest), Some(h)) => h.join(rest).to_string_lossy().into_owned(),
            _ => w,
        })
        .collect())
}

/// `word` quoted for a POSIX shell, so that it reaches the program as it
/// is: quotes, `$(…)`, backquotes, globs and newlines included. Plain
/// words are left bare for readability.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./=:@%+,".contains(&b));
    if plain {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// `argv` as one line for a POSIX shell (what ssh hands the remote's
/// login shell).
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command that runs `argv` on `remote`: over ssh, `ssh [-t] -o
/// ConnectTimeout=N -- DEST '<argv quoted>'` (the remote's shell reads
/// the line; `-t` for a terminal); through a transport, its words and
/// then `argv` as they are (no shell between; whether it has a terminal
/// is the transport's own option, `docker exec -it`).
pub fn remote_command(remote: &Remote, ssh: &SshCommand, argv: &[String], tty: bool) -> Command {
    let home = home_dir();
    if let Some(t) = &remote.transport {
        let words = shlex::split(t).unwrap_or_default();
        let mut cmd = Command::new(words.first().map_or("false", String::as_str));
        cmd.args(words.iter().skip(1)).args(argv);
        return cmd;
    }
    let words = ssh
        .words_for(remote, home.as_deref())
        .unwrap_or_else(|_| ssh.words.clone());
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    if tty {
        cmd.arg("-t");
    }
    cmd.args(ssh_options(remote, ssh));
    cmd.arg("--")
        .arg(remote.dest.as_deref().unwrap_or_default());
    if !argv.is_empty() {
        cmd.arg(shell_line(argv));
    }
    cmd
}

/// The options arbor adds: a connection timeout, and `BatchMode` when
/// nothing may be asked. Never one that weakens host key checking.
pub(crate) fn ssh_options(remote: &Remote, ssh: &SshCommand) -> Vec<String> {
    let mut out = vec!["-o".into(), format!("ConnectTimeout={}", remote.timeout())];
    if ssh.batch {
        out.extend(["-o".into(), "BatchMode=yes".into()]);
    }
    out
}

pub(crate) fn home_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(std::path::PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_what_a_shell_would_read() {
        assert_eq!(shell_quote("plain/path-1.jsonl"), "plain/path-1.jsonl");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$(rm -rf ~)"), "'$(rm -rf ~)'");
        assert_eq!(shell_quote("a\nb"), "'a\nb'");
        assert_eq!(shell_quote("~/x"), "'~/x'");
    }

    #[test]
    fn the_env_beats_every_setting() {
        let home = Path::new("/h");
        let s =
            SshCommand::resolve(Some("ssh -F ~/.ssh/work"), Some("ssh -4"), Some(home)).unwrap();
        assert_eq!(s.words, ["ssh", "-F", "/h/.ssh/work"]);
        assert_eq!(s.origin, SshOrigin::Env);
        let own = Remote {
            ssh: Some("ssh -6".into()),
            ..Remote::default()
        };
        assert_eq!(
            s.words_for(&own, Some(home)).unwrap(),
            ["ssh", "-F", "/h/.ssh/work"]
        );
        let f = SshCommand::resolve(None, Some("ssh -4"), None).unwrap();
        assert_eq!(f.words_for(&own, None).unwrap(), ["ssh", "-6"]);
        assert_eq!(
            SshCommand::resolve(None, None, None).unwrap().words,
            ["ssh"]
        );
        assert!(SshCommand::resolve(Some("ssh 'x"), None, None).is_err());
    }

    #[test]
    fn the_ssh_command_line_ends_with_the_destination_and_one_quoted_line() {
        let r = Remote {
            name: "d".into(),
            dest: Some("me@host".into()),
            ..Remote::default()
        };
        let cmd = remote_command(
            &r,
            &SshCommand::default(),
            &["cd".into(), "a b".into()],
            true,
        );
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(cmd.get_program(), "ssh");
        assert_eq!(
            args,
            ["-t", "-o", "ConnectTimeout=20", "--", "me@host", "cd 'a b'"]
        );
        let t = Remote {
            name: "c".into(),
            transport: Some("docker exec -i box".into()),
            ..Remote::default()
        };
        let cmd = remote_command(&t, &SshCommand::default(), &["a b".into()], false);
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(cmd.get_program(), "docker");
        assert_eq!(args, ["exec", "-i", "box", "a b"]);
    }
}
