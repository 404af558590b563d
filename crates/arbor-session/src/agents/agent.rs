//! Which agent wrote a session. It is decided once, by the store root a file
//! was found under (docs/spec.md §1), and then travels with the file through the
//! scanner, the index and every screen: nothing re-derives it from a path.

use crate::context::ContextFlavor;

/// The agent a session belongs to. New agents (Claude Code, Codex) become
/// new variants; every `match` on it then says what changes for them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    #[default]
    Atomic,
    /// The legacy pi store `~/.pi/agent/sessions`.
    Pi,
    /// Claude Code (`~/.claude/projects`), read through `session::foreign`.
    Claude,
    /// Codex (`~/.codex/sessions`), read through `session::foreign`.
    Codex,
}

/// Every agent, in the order `--agent` and the help name them.
pub(crate) const ALL_AGENTS: [Agent; 4] = [Agent::Atomic, Agent::Pi, Agent::Claude, Agent::Codex];

impl Agent {
    /// The name in `arbor list --json` (`"agent"`) and on screen.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Atomic => "atomic",
            Agent::Pi => "pi",
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }

    /// The agent named `name` (as `--agent` and `agent:` take it).
    pub fn from_name(name: &str) -> Option<Agent> {
        ALL_AGENTS
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
    }

    /// Whether its files are in another agent's format: arbor reads them
    /// (translated) but never writes into them.
    pub fn is_foreign(self) -> bool {
        matches!(self, Agent::Claude | Agent::Codex)
    }

    /// The agent's name in a sentence.
    pub fn display_name(self) -> &'static str {
        match self {
            Agent::Atomic => "Atomic",
            Agent::Pi => "pi",
            Agent::Claude => "Claude Code",
            Agent::Codex => "Codex",
        }
    }

    /// What a write key says on one of its sessions when the agent is
    /// foreign: arbor never writes into another agent's files.
    pub fn refusal(self, what: &str) -> String {
        format!(
            "{} sessions cannot be {what} here: its format does not support it (arbor never writes into another agent's files)",
            self.display_name()
        )
    }

    /// Whose rules build the context the model sees on resume.
    pub fn flavor(self) -> ContextFlavor {
        match self {
            Agent::Atomic => ContextFlavor::Atomic,
            Agent::Pi => ContextFlavor::Pi,
            // Their sessions are translated into Atomic's shape.
            Agent::Claude | Agent::Codex => ContextFlavor::Atomic,
        }
    }

    /// The command that resumes one of its sessions (a `--resume-cmd`
    /// template): Atomic and pi take the session file with `--session`
    /// (the path is always absolute, so never an option); Claude Code
    /// (`claude --resume <session id>`, its CLI reference) and Codex
    /// (`codex resume <session id>`, its `resume` subcommand) take the id,
    /// bound to the option (`--resume=<id>`, as Claude Code's own apps call
    /// it) or after the end of options (`--`, which Codex's argument parser,
    /// clap, takes before positionals), so that even an id that got past
    /// [`Agent::resumes_by_id`] could not be read as an option.
    pub fn resume_template(self) -> &'static str {
        match self {
            Agent::Atomic => "atomic --session {path}",
            Agent::Pi => "pi --session {path}",
            Agent::Claude => "claude --resume={id}",
            Agent::Codex => "codex resume -- {id}",
        }
    }

    /// The short tag rows carry; `None` for Atomic, arbor's own agent,
    /// so a store of Atomic sessions looks as Atomic's picker does.
    pub fn tag(self) -> Option<&'static str> {
        match self {
            Agent::Atomic => None,
            Agent::Pi => Some("pi"),
            Agent::Claude => Some("claude"),
            Agent::Codex => Some("codex"),
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
