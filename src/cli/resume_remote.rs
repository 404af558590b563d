//! Resuming a session of another machine on that machine: the agent's
//! command runs there, in the session's folder, over the user's ssh (`ssh
//! -t DEST -- 'cd CWD && AGENT ARGS'`) or through the remote's transport
//! command (`… sh -c 'cd CWD && AGENT ARGS'`).
//!
//! The command is the same template as a local resume, with the same
//! checks (an id of its agent's shape, no session data beginning an
//! option); the session's file is named by its path on the remote. Every
//! piece of session data is quoted for the remote's POSIX shell as a
//! whole word (`arbor_remote::shell_quote`): a quote, `$(…)`, a backquote
//! or a newline in a folder's name reaches the agent as it is and never
//! runs. The one thing left to the remote shell is a path under the
//! remote's home (`~/…` in the settings), written `"$HOME"/…`.

use std::path::Path;

use anyhow::{bail, Result};

use super::resume::{NotInstalled, Target, TemplateError};
use crate::term::{path as shown_path, sanitize_line, shell_display};
use arbor_remote::{shell_quote, Remote, SshCommand};

/// The remote machine a session is resumed on.
pub struct OnRemote<'a> {
    pub remote: &'a Remote,
    pub ssh: &'a SshCommand,
    /// arbor's cache folder, where the remote's mirror is.
    pub cache: &'a Path,
}

/// The line the remote's shell runs for `t` with `template`, the session
/// file being `path` there: `cd CWD && WORDS` (just the words for a
/// session that recorded no folder).
pub fn remote_line(template: &str, t: &Target, path: &str) -> Result<String, TemplateError> {
    let words = shlex::split(template).ok_or(TemplateError::Unbalanced)?;
    if words.is_empty() {
        return Err(TemplateError::Empty);
    }
    let any = words
        .iter()
        .any(|w| ["{path}", "{id}", "{cwd}"].iter().any(|p| w.contains(p)));
    let mut out = words
        .iter()
        .map(|w| remote_word(w, t, path))
        .collect::<Result<Vec<String>, _>>()?;
    if !any {
        out.push(quoted_value(path, true));
    }
    let command = out.join(" ");
    if t.cwd.is_empty() {
        return Ok(command);
    }
    if t.cwd.starts_with('-') {
        return Err(TemplateError::LooksLikeOption {
            what: "folder",
            shown: sanitize_line(&t.cwd),
        });
    }
    Ok(format!("cd {} && {command}", shell_quote(&t.cwd)))
}

/// One template word for the remote's shell: the template's own text and
/// each placeholder's value quoted apart, side by side (one word to the
/// shell). A value beginning a word may not begin with `-`.
fn remote_word(word: &str, t: &Target, path: &str) -> Result<String, TemplateError> {
    let mut out = String::new();
    let mut literal = String::new();
    let mut rest = word;
    while let Some(i) = rest.find('{') {
        literal.push_str(&rest[..i]);
        let tail = &rest[i..];
        let value = if tail.starts_with("{path}") {
            Some((path, 6, "path"))
        } else if tail.starts_with("{id}") {
            Some((t.id.as_str(), 4, "session id"))
        } else if tail.starts_with("{cwd}") {
            Some((t.cwd.as_str(), 5, "folder"))
        } else {
            None
        };
        let Some((v, n, what)) = value else {
            literal.push('{');
            rest = &tail[1..];
            continue;
        };
        if out.is_empty() && literal.is_empty() && v.starts_with('-') {
            return Err(TemplateError::LooksLikeOption {
                what,
                shown: sanitize_line(v),
            });
        }
        if !literal.is_empty() {
            out.push_str(&shell_quote(&literal));
            literal.clear();
        }
        out.push_str(&quoted_value(v, what == "path"));
        rest = &tail[n..];
    }
    literal.push_str(rest);
    if !literal.is_empty() || out.is_empty() {
        out.push_str(&shell_quote(&literal));
    }
    Ok(out)
}

/// A value quoted whole; a remote path under the remote's home (`~/…`)
/// as `"$HOME"/…`, the one expansion the remote's shell makes.
fn quoted_value(v: &str, is_path: bool) -> String {
    match v.strip_prefix("~/").filter(|_| is_path) {
        Some(rest) => format!("\"$HOME\"/{}", shell_quote(rest)),
        None => shell_quote(v),
    }
}

/// The local command that resumes `t` on the remote, and how it is shown.
pub fn command(
    template: Option<&str>,
    t: &Target,
    on: &OnRemote,
) -> Result<(std::process::Command, String)> {
    let host = &on.remote.name;
    if let Some(why) = t.agent.resume_refusal(&t.path, &t.id) {
        bail!(why);
    }
    // The file's path on the remote; a Claude Code sub-agent run resumes
    // its parent, named by the path the remote's agent wrote.
    let path = match arbor_remote::remote_path(on.cache, on.remote, &t.path) {
        Some(p) => p,
        None if t.path.is_absolute() => t.path.to_string_lossy().into_owned(),
        None => bail!(
            "{} is not in the copy of {host}'s sessions; not resumed",
            shown_path(&t.path)
        ),
    };
    let template = template.unwrap_or(t.agent.resume_template());
    let line = match remote_line(template, t, &path) {
        Err(e @ TemplateError::LooksLikeOption { .. }) => bail!(
            "{}: {e}, so arbor will not pass it to the command on {host}: it would be read as an option",
            shown_path(&t.path)
        ),
        r => r?,
    };
    let cmd = match &on.remote.transport {
        Some(_) => arbor_remote::remote_command(
            on.remote,
            on.ssh,
            &["sh".to_string(), "-c".to_string(), line],
            true,
        ),
        None => {
            // The line goes to the remote's shell as it is: ssh joins its
            // words with spaces, so it is one argument, already quoted.
            let mut cmd = arbor_remote::remote_command(on.remote, on.ssh, &[], true);
            cmd.arg(line);
            cmd
        }
    };
    let shown = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(shell_display)
        .collect::<Vec<_>>()
        .join(" ");
    Ok((cmd, shown))
}

/// Runs the agent on `t` on its remote; prints the command when the ssh
/// program (or the transport's) is not installed here.
pub fn resume(template: Option<&str>, t: &Target, on: &OnRemote) -> Result<()> {
    let (mut cmd, shown) = command(template, t, on)?;
    let program = shell_display(cmd.get_program());
    let host = &on.remote.name;
    match cmd.status() {
        Ok(st) if st.success() => Ok(()),
        Ok(st) => bail!("{program} (resuming on {host}) exited with {st}"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!(
                "{program} is not installed here. To resume this session on {host} run:\n  {shown}"
            );
            Err(NotInstalled.into())
        }
        Err(e) => bail!("cannot run {shown}: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_session::Agent;

    fn target(cwd: &str) -> Target {
        Target {
            path: "/c/remotes/d/home/s/a.jsonl".into(),
            id: "0199".into(),
            cwd: cwd.into(),
            agent: Agent::Atomic,
        }
    }

    /// What a POSIX shell makes of `line`: the words `printf` gets.
    fn shell_words(line: &str, home: &str) -> Vec<String> {
        let script = line
            .replacen("cd ", "printf '%s\\0' ", 1)
            .replace(" && ", " ");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{script} | tr '\\0' '\\036'"))
            .env("HOME", home)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        text.split('\u{1e}').map(str::to_string).collect()
    }

    #[test]
    fn session_data_reaches_the_remote_shell_as_whole_words() {
        let cwd = "/w/it's \"q\" $(touch pwned) `x`\nnext";
        let t = target(cwd);
        let line = remote_line(
            "atomic --session {path}",
            &t,
            "~/.atomic/agent/sessions/--w--/a b.jsonl",
        )
        .unwrap();
        let words = shell_words(&line, "/home/me");
        assert_eq!(
            words[..4],
            [
                cwd,
                "atomic",
                "--session",
                "/home/me/.atomic/agent/sessions/--w--/a b.jsonl"
            ]
        );
        assert!(!std::path::Path::new("pwned").exists());
    }

    #[test]
    fn a_value_may_not_begin_an_option_there_either() {
        let mut t = target("/w");
        t.id = "--yolo".into();
        assert!(matches!(
            remote_line("agent {id}", &t, "/s/a.jsonl"),
            Err(TemplateError::LooksLikeOption { .. })
        ));
        assert_eq!(
            remote_line("agent --id={id}", &t, "/s/a.jsonl").unwrap(),
            "cd /w && agent --id=--yolo"
        );
        assert!(remote_line("agent", &target("-rf"), "/s/a.jsonl").is_err());
        assert_eq!(
            remote_line("agent", &target(""), "/s/a b.jsonl").unwrap(),
            "agent '/s/a b.jsonl'"
        );
    }
}
