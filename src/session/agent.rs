//! Which agent wrote a session. It is decided once, by the store root a file
//! was found under (SPEC §1), and then travels with the file through the
//! scanner, the index and every screen: nothing re-derives it from a path.

use super::context::ContextFlavor;

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
}

impl Agent {
    /// The name in `arbor list --json` (`"agent"`) and on screen.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Atomic => "atomic",
            Agent::Pi => "pi",
        }
    }

    /// Whose rules build the context the model sees on resume.
    pub fn flavor(self) -> ContextFlavor {
        match self {
            Agent::Atomic => ContextFlavor::Atomic,
            Agent::Pi => ContextFlavor::Pi,
        }
    }

    /// The command that resumes one of its sessions (a `--resume-cmd`
    /// template): both agents take the session file with `--session`.
    pub fn resume_template(self) -> &'static str {
        match self {
            Agent::Atomic => "atomic --session {path}",
            Agent::Pi => "pi --session {path}",
        }
    }

    /// The short tag rows carry; `None` for Atomic, arbor's own agent,
    /// so a store of Atomic sessions looks as Atomic's picker does.
    pub fn tag(self) -> Option<&'static str> {
        match self {
            Agent::Atomic => None,
            Agent::Pi => Some("pi"),
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
