//! Resuming the picked session with its agent.
//!
//! The command is a template (`--resume-cmd` / `ARBOR_RESUME_CMD`, else the
//! session's agent's own command), split with shell-word rules. Session data
//! (path, id, cwd) only ever becomes whole argv elements or parts of one:
//! nothing is run through a shell, so no quote, `;`, `$(…)` or newline in
//! a session can change what runs. Nor can one choose the program's
//! options: the path is made absolute, a word may not begin with a value
//! that begins with `-`, and an id must have its agent's shape
//! (`Agent::resume_refusal`, which the picker asks too).

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};

use crate::term::{path as shown_path, shell_display};
use arbor_session::Agent;

/// What to resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub path: PathBuf,
    pub id: String,
    pub cwd: String,
    pub agent: Agent,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TemplateError {
    #[error("the resume command is empty")]
    Empty,
    #[error("the resume command has an unclosed quote or a trailing backslash")]
    Unbalanced,
    /// A word would begin with session data that begins with `-`: the
    /// program would read it as one of its options.
    #[error("its {what} \"{shown}\" begins with \"-\"")]
    LooksLikeOption { what: &'static str, shown: String },
}

const PLACEHOLDERS: [&str; 3] = ["{path}", "{id}", "{cwd}"];

/// The argv of `template` for `t`: words split as a POSIX shell splits
/// them (quotes and backslashes, no expansions), then `{path}`, `{id}` and
/// `{cwd}` replaced inside their own word. A template without any
/// placeholder gets the path as a last argument. The path is absolute (a
/// file named `--model=opus.jsonl` is never an option), and a word that
/// would begin with an id or folder beginning with `-` is refused.
pub fn argv(template: &str, t: &Target) -> Result<Vec<OsString>, TemplateError> {
    let words = shlex::split(template).ok_or(TemplateError::Unbalanced)?;
    if words.is_empty() {
        return Err(TemplateError::Empty);
    }
    let any = words
        .iter()
        .any(|w| PLACEHOLDERS.iter().any(|p| w.contains(p)));
    let path = absolute(&t.path);
    let mut out = words
        .iter()
        .map(|w| substitute(w, t, &path))
        .collect::<Result<Vec<OsString>, _>>()?;
    if !any {
        out.push(path.into_os_string());
    }
    Ok(out)
}

/// `p`, or the current folder joined to it when it is relative (then
/// `./`-prefixed when even that is unknown): never a word beginning with `-`.
fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        return p.to_path_buf();
    }
    std::path::absolute(p).unwrap_or_else(|_| Path::new(".").join(p))
}

/// One pass over the word: text substituted in is never looked at again
/// (a path containing `{id}` stays as it is).
fn substitute(word: &str, t: &Target, path: &Path) -> Result<OsString, TemplateError> {
    let mut out = OsString::new();
    let mut rest = word;
    while let Some(i) = rest.find('{') {
        out.push(&rest[..i]);
        let tail = &rest[i..];
        let value: Option<(&OsStr, usize, &'static str)> = if tail.starts_with("{path}") {
            Some((path.as_os_str(), 6, "path"))
        } else if tail.starts_with("{id}") {
            Some((OsStr::new(&t.id), 4, "session id"))
        } else if tail.starts_with("{cwd}") {
            Some((OsStr::new(&t.cwd), 5, "folder"))
        } else {
            None
        };
        match value {
            Some((v, n, what)) => {
                if out.is_empty() && v.as_encoded_bytes().starts_with(b"-") {
                    return Err(TemplateError::LooksLikeOption {
                        what,
                        shown: crate::term::sanitize_line(&v.to_string_lossy()),
                    });
                }
                out.push(v);
                rest = &tail[n..];
            }
            None => {
                out.push("{");
                rest = &tail[1..];
            }
        }
    }
    out.push(rest);
    Ok(out)
}

/// The template for a session of `agent` among `--resume-cmd`'s: the last
/// `AGENT=CMD` naming it, else the last without an agent's name; `None`:
/// the agent's own command.
pub fn template_for(cmds: &[String], agent: Agent) -> Option<&str> {
    let split = |c: &str| -> Option<(Agent, usize)> {
        let (name, _) = c.split_once('=')?;
        Agent::from_name(name.trim()).map(|a| (a, name.len() + 1))
    };
    cmds.iter()
        .rev()
        .find_map(|c| match split(c) {
            Some((a, at)) if a == agent => Some(&c[at..]),
            _ => None,
        })
        .or_else(|| {
            cmds.iter()
                .rev()
                .find(|c| split(c).is_none())
                .map(String::as_str)
        })
}

/// Asks the person at the terminal a yes/no question; `None` when there is
/// no terminal to ask on.
pub type Ask<'a> = &'a mut dyn FnMut(&str) -> Option<bool>;

/// Where the agent will run: the session's cwd, or — when that folder is
/// gone and the person agrees — the current folder. `Ok(None)`: cancelled.
pub fn choose_dir(t: &Target, ask: Ask) -> Result<Option<PathBuf>> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    // A session that recorded no folder runs here, as the agent would.
    if t.cwd.is_empty() {
        return Ok(Some(here));
    }
    let dir = Path::new(&t.cwd);
    if dir.is_dir() {
        return Ok(Some(dir.to_path_buf()));
    }
    let question = format!(
        "The session's folder {} no longer exists.\nResume it in the current folder {} instead? [y/N] ",
        shell_display(OsStr::new(&t.cwd)),
        shell_display(here.as_os_str()),
    );
    match ask(&question) {
        Some(true) => Ok(Some(here)),
        Some(false) => Ok(None),
        None => bail!(
            "the session's folder {} no longer exists, and there is no terminal to ask \
             whether to resume in the current folder",
            shell_display(OsStr::new(&t.cwd))
        ),
    }
}

/// The agent to resume with is not installed: said on stdout with the
/// command to run instead; the binary exits with status 127 and no more.
#[derive(Debug, thiserror::Error)]
#[error("the agent is not installed")]
pub struct NotInstalled;

/// Runs the agent on `t` (the template, or the agent's own command) in the
/// chosen folder; prints the command when the agent is not installed.
pub fn resume(template: Option<&str>, t: &Target, ask: Ask) -> Result<()> {
    if let Some(why) = t.agent.resume_refusal(&t.path, &t.id) {
        bail!(why);
    }
    let template = template.unwrap_or(t.agent.resume_template());
    let argv = match argv(template, t) {
        Err(e @ TemplateError::LooksLikeOption { .. }) => {
            let program = shlex::split(template)
                .and_then(|w| w.into_iter().next())
                .unwrap_or_default();
            bail!(
                "{}: {e}, so arbor will not pass it to {}: it would be read as an option",
                shown_path(&t.path),
                crate::term::sanitize_line(&program)
            )
        }
        r => r?,
    };
    let Some(dir) = choose_dir(t, ask)? else {
        eprintln!("arbor: not resumed");
        return Ok(());
    };
    let shown = format!(
        "cd {} && {}",
        shell_display(dir.as_os_str()),
        argv.iter()
            .map(|w| shell_display(w))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let program = shell_display(&argv[0]);
    let mut cmd = std::process::Command::new(&argv[0]);
    cmd.args(&argv[1..]).current_dir(&dir);
    match cmd.status() {
        Ok(st) if st.success() => Ok(()),
        Ok(st) => bail!("{program} exited with {st}"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("{program} is not installed here. To resume this session run:\n  {shown}");
            // Status 127, as a shell gives a command it cannot find.
            Err(NotInstalled.into())
        }
        Err(e) => Err(e).with_context(|| format!("cannot run {shown} ({})", shown_path(&dir))),
    }
}

/// The question on the terminal itself (`/dev/tty`: stdin and stdout may
/// be redirected), or on stdin/stderr when only they are a terminal.
pub fn ask_on_terminal(question: &str) -> Option<bool> {
    use std::io::{BufRead, BufReader, IsTerminal, Write};
    let answer = |line: &str| matches!(line.trim().to_lowercase().as_str(), "y" | "yes");
    if let Ok(tty) = crate::term::open_tty(true) {
        let mut w = &tty;
        w.write_all(question.as_bytes()).ok()?;
        w.flush().ok()?;
        let mut line = String::new();
        BufReader::new(&tty).read_line(&mut line).ok()?;
        return Some(answer(&line));
    }
    if std::io::stdin().is_terminal() {
        eprint!("{question}");
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).ok()?;
        return Some(answer(&line));
    }
    None
}

#[cfg(test)]
mod tests {

    #[test]
    fn per_agent_templates() {
        let cmds: Vec<String> = [
            "all {path}",
            "claude=c1 {id}",
            "codex = x {id}",
            "claude=c2 {id}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(template_for(&cmds, Agent::Claude), Some("c2 {id}"));
        assert_eq!(template_for(&cmds, Agent::Codex), Some(" x {id}"));
        assert_eq!(template_for(&cmds, Agent::Atomic), Some("all {path}"));
        assert_eq!(template_for(&cmds[1..], Agent::Pi), None);
        assert_eq!(template_for(&[], Agent::Claude), None);
        // `NAME=…` with a name that is no agent's is a whole template.
        let env = vec!["FOO=1 atomic --session {path}".to_string()];
        assert_eq!(template_for(&env, Agent::Claude), Some(env[0].as_str()));
    }

    use super::*;

    fn target(path: &str, id: &str, cwd: &str) -> Target {
        Target {
            path: path.into(),
            id: id.into(),
            cwd: cwd.into(),
            agent: Agent::Atomic,
        }
    }

    fn strs(v: Vec<OsString>) -> Vec<String> {
        v.into_iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn templates_split_like_a_shell() {
        let t = target("/s/a b.jsonl", "id1", "/w");
        assert_eq!(
            strs(argv("atomic --session {path}", &t).unwrap()),
            ["atomic", "--session", "/s/a b.jsonl"]
        );
        assert_eq!(
            strs(argv(r#"sh -c "echo a; echo b" arbor {path}"#, &t).unwrap()),
            ["sh", "-c", "echo a; echo b", "arbor", "/s/a b.jsonl"]
        );
        assert_eq!(
            strs(argv("my-agent 'two words'", &t).unwrap()),
            ["my-agent", "two words", "/s/a b.jsonl"],
            "no placeholder: the path is appended"
        );
        assert_eq!(
            strs(argv("x --id={id} --in {cwd}", &t).unwrap()),
            ["x", "--id=id1", "--in", "/w"],
            "any placeholder: nothing appended"
        );
        assert_eq!(argv("  ", &t), Err(TemplateError::Empty));
        assert_eq!(argv("a 'b", &t), Err(TemplateError::Unbalanced));
    }

    #[test]
    fn substituted_text_is_never_split_or_substituted_again() {
        let t = target("/s/{id}; rm -rf ~.jsonl", "$(touch x) `y` 'q\"\n", "{path}");
        assert_eq!(
            strs(argv("run {path} {id}{cwd} {unknown}", &t).unwrap()),
            [
                "run",
                "/s/{id}; rm -rf ~.jsonl",
                "$(touch x) `y` 'q\"\n{path}",
                "{unknown}"
            ]
        );
    }

    #[test]
    fn each_agent_resumes_with_its_own_command() {
        let mut t = target("/p.jsonl", "i", "/");
        assert_eq!(
            strs(argv(t.agent.resume_template(), &t).unwrap()),
            ["atomic", "--session", "/p.jsonl"]
        );
        t.agent = Agent::Pi;
        assert_eq!(
            strs(argv(t.agent.resume_template(), &t).unwrap()),
            ["pi", "--session", "/p.jsonl"]
        );
        t.id = "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70".into();
        t.agent = Agent::Claude;
        assert_eq!(
            strs(argv(t.agent.resume_template(), &t).unwrap()),
            ["claude", "--resume=5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70"]
        );
        t.agent = Agent::Codex;
        assert_eq!(
            strs(argv(t.agent.resume_template(), &t).unwrap()),
            [
                "codex",
                "resume",
                "--",
                "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70"
            ]
        );
    }

    #[test]
    fn session_data_never_begins_an_option() {
        // A relative path is made absolute: `--model=opus.jsonl` is a file.
        let rel = target("--model=opus.jsonl", "i", "/");
        let got = strs(argv("atomic --session {path}", &rel).unwrap());
        assert!(
            Path::new(&got[2]).is_absolute() && got[2].ends_with("/--model=opus.jsonl"),
            "{got:?}"
        );
        assert!(strs(argv("x", &rel).unwrap())[1].starts_with('/'));
        // An id or folder beginning with `-` may not begin a word…
        let t = target("/p.jsonl", "--dangerously-skip-permissions", "-rf");
        for template in ["x {id}", "x {cwd}", "x {cwd}{id}"] {
            assert!(
                matches!(
                    argv(template, &t),
                    Err(TemplateError::LooksLikeOption { .. })
                ),
                "{template}"
            );
        }
        // …but may follow text of the template's own.
        assert_eq!(
            strs(argv("x --id={id} -C{cwd}", &t).unwrap()),
            ["x", "--id=--dangerously-skip-permissions", "-C-rf"]
        );
    }

    #[test]
    fn a_refused_session_never_runs_its_agent() {
        let mut t = target(
            "/p.jsonl",
            "--dangerously-bypass-approvals-and-sandbox",
            "/",
        );
        let mut never = |_: &str| -> Option<bool> { panic!("asked") };
        t.agent = Agent::Codex;
        // A template that would fail loudly if it ran.
        let err = resume(Some("/nonexistent/arbor-agent {id}"), &t, &mut never).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/p.jsonl: its session id \"--dangerously-bypass-approvals-and-sandbox\" is not a \
             Codex session id, so arbor will not pass it to codex"
        );
        t.agent = Agent::Atomic;
        let err = resume(Some("/nonexistent/arbor-agent {id}"), &t, &mut never).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/p.jsonl: its session id \"--dangerously-bypass-approvals-and-sandbox\" begins with \
             \"-\", so arbor will not pass it to /nonexistent/arbor-agent: it would be read as an option"
        );
    }

    #[test]
    fn a_missing_folder_asks_before_running_elsewhere() {
        let gone = target("/p.jsonl", "i", "/nonexistent/arbor/folder\u{1b}]0;x\u{7}");
        let mut asked = Vec::new();
        let here = std::env::current_dir().unwrap();
        let mut yes = |q: &str| {
            asked.push(q.to_string());
            Some(true)
        };
        assert_eq!(choose_dir(&gone, &mut yes).unwrap(), Some(here.clone()));
        assert!(asked[0].contains("no longer exists"), "{asked:?}");
        assert!(
            !asked[0].contains('\u{1b}') && asked[0].contains("\\x1b"),
            "the folder is shown escaped: {asked:?}"
        );
        assert_eq!(choose_dir(&gone, &mut |_| Some(false)).unwrap(), None);
        assert!(choose_dir(&gone, &mut |_| None).is_err());
        let there = target("/p.jsonl", "i", "/");
        let mut never = |_: &str| -> Option<bool> { panic!("asked about an existing folder") };
        assert_eq!(choose_dir(&there, &mut never).unwrap(), Some("/".into()));
        let none = target("/p.jsonl", "i", "");
        assert_eq!(choose_dir(&none, &mut never).unwrap(), Some(here));
    }
}
