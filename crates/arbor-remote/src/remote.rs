//! A remote as the user wrote it in `[[remote]]`: a name, how to reach it
//! (an ssh destination or a transport command) and which folders to copy.
//! Nothing else is kept: no passwords, no keys (ssh has its own).

use arbor_session::Agent;
use arbor_store::StoreKind;

use crate::RemoteError;

/// How long a sync may stay silent before it is given up, unless the
/// remote sets its own `timeout`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 20;

/// One `[[remote]]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remote {
    /// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}`: a folder name and an `@name` tag.
    pub name: String,
    /// An ssh destination exactly as the user writes it for `ssh`
    /// (`devbox`, `me@host`, `ssh://host:2222`).
    pub dest: Option<String>,
    /// A command used instead of ssh (`docker exec -i NAME`): the remote
    /// command's words are appended to it.
    pub transport: Option<String>,
    /// The agents whose usual folders are copied (empty: all four).
    pub agents: Vec<Agent>,
    /// The remote folders to copy (empty: the agents' usual folders).
    pub paths: Vec<String>,
    /// Seconds a sync may stay silent before it is given up.
    pub timeout_secs: Option<u64>,
    /// This remote's ssh program and options (`ssh_command` in its table);
    /// `ARBOR_SSH` beats it, it beats the top-level `ssh` setting.
    pub ssh: Option<String>,
}

/// An agent's usual session folder (relative to the home folder on the
/// remote) and how it is laid out.
pub fn usual_folder(agent: Agent) -> (&'static str, StoreKind) {
    match agent {
        Agent::Atomic => ("~/.atomic/agent/sessions", StoreKind::PerProject),
        Agent::Pi => ("~/.pi/agent/sessions", StoreKind::PerProject),
        Agent::Claude => ("~/.claude/projects", StoreKind::PerProject),
        Agent::Codex => ("~/.codex/sessions", StoreKind::Dated),
    }
}

const ALL_AGENTS: [Agent; 4] = [Agent::Atomic, Agent::Pi, Agent::Claude, Agent::Codex];

/// Whether `name` may name a remote.
pub fn valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

impl Remote {
    /// Checks what the settings or `arbor remote add` gave: a valid name,
    /// exactly one of `dest` and `transport`, a destination that cannot
    /// be read as an ssh option, folders that are absolute or under `~/`
    /// with no `..` in them.
    pub fn validate(&self) -> Result<(), RemoteError> {
        if !valid_name(&self.name) {
            return Err(RemoteError::BadName(self.name.clone()));
        }
        let bad = |why: &str| RemoteError::BadSetting {
            name: self.name.clone(),
            why: why.to_string(),
        };
        match (&self.dest, &self.transport) {
            (Some(_), Some(_)) => {
                return Err(bad("give an ssh destination or a transport, not both"))
            }
            (None, None) => return Err(bad("an ssh destination or a transport is needed")),
            (Some(d), None)
                if d.is_empty() || d.starts_with('-') || d.contains(char::is_whitespace) =>
            {
                return Err(bad(&format!("{d:?} is not an ssh destination")))
            }
            (None, Some(t)) if shlex::split(t).is_none_or(|w| w.is_empty()) => {
                return Err(bad(&format!(
                    "the transport {t:?} cannot be split into words"
                )))
            }
            _ => {}
        }
        for p in &self.paths {
            if folder_parts(p).is_none() {
                return Err(bad(&format!(
                    "the folder {p:?} must start with / or ~/ and have no . or .. in it"
                )));
            }
        }
        if self.timeout_secs == Some(0) {
            return Err(bad("timeout must be at least 1 second"));
        }
        Ok(())
    }

    /// The host as messages name it: the destination, else the transport.
    pub fn host(&self) -> String {
        match (&self.dest, &self.transport) {
            (Some(d), _) => d.clone(),
            (None, Some(t)) => t.clone(),
            (None, None) => self.name.clone(),
        }
    }

    pub fn timeout(&self) -> u64 {
        self.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS)
    }

    /// The remote folders copied, with the agent and layout of each: the
    /// configured ones (a usual folder keeps its agent; another one is the
    /// first listed agent's, Atomic's when none is), else the usual
    /// folders of `agents` (of all four when none is listed).
    pub fn folders(&self) -> Vec<(String, Agent, StoreKind)> {
        if self.paths.is_empty() {
            let agents: &[Agent] = if self.agents.is_empty() {
                &ALL_AGENTS
            } else {
                &self.agents
            };
            return agents
                .iter()
                .map(|&a| {
                    let (p, kind) = usual_folder(a);
                    (p.to_string(), a, kind)
                })
                .collect();
        }
        let fallback = self.agents.first().copied().unwrap_or(Agent::Atomic);
        self.paths
            .iter()
            .map(|p| {
                let clean = p.trim_end_matches('/');
                match ALL_AGENTS.iter().find(|&&a| usual_folder(a).0 == clean) {
                    Some(&a) => (clean.to_string(), a, usual_folder(a).1),
                    None => (clean.to_string(), fallback, usual_folder(fallback).1),
                }
            })
            .collect()
    }
}

/// Where a remote folder sits: under the home folder (`~/x/y`, as
/// `Some((true, "x/y"))`) or absolute (`/x/y`, as `Some((false, "x/y"))`);
/// `None` for any other form, or with `.` or `..` or an empty part, so
/// that a configured folder names exactly one place and nothing above it.
pub(crate) fn folder_parts(p: &str) -> Option<(bool, String)> {
    let p = p.trim_end_matches('/');
    let (home, rest) = if let Some(r) = p.strip_prefix("~/") {
        (true, r)
    } else if let Some(r) = p.strip_prefix('/') {
        (false, r)
    } else {
        return None;
    };
    let ok = !rest.is_empty()
        && rest
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    ok.then(|| (home, rest.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ssh(name: &str, dest: &str) -> Remote {
        Remote {
            name: name.into(),
            dest: Some(dest.into()),
            ..Remote::default()
        }
    }

    #[test]
    fn names_are_folder_and_tag_safe() {
        for ok in ["devbox", "a", "box-1.local_2", &"x".repeat(64)] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "-x", ".x", "a/b", "a b", "..", "é", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_destination_is_never_an_option() {
        assert!(ssh("d", "me@host").validate().is_ok());
        assert!(ssh("d", "ssh://host:2222").validate().is_ok());
        assert!(ssh("d", "-oProxyCommand=sh").validate().is_err());
        let both = Remote {
            transport: Some("docker exec -i c".into()),
            ..ssh("d", "h")
        };
        assert!(both.validate().is_err());
    }

    #[test]
    fn folders_are_confined() {
        assert_eq!(
            folder_parts("~/.atomic/agent/sessions/"),
            Some((true, ".atomic/agent/sessions".into()))
        );
        assert_eq!(folder_parts("/srv/s"), Some((false, "srv/s".into())));
        for bad in [
            "~", "~/", "/", "rel/x", "~/a/../b", "/a/./b", "~user/x", "/a//b",
        ] {
            assert_eq!(folder_parts(bad), None, "{bad}");
        }
    }

    #[test]
    fn usual_folders_follow_the_agents() {
        let mut r = ssh("d", "h");
        assert_eq!(r.folders().len(), 4);
        r.agents = vec![Agent::Codex];
        assert_eq!(
            r.folders(),
            vec![("~/.codex/sessions".into(), Agent::Codex, StoreKind::Dated)]
        );
        r.paths = vec!["~/.claude/projects/".into(), "/srv/sessions".into()];
        assert_eq!(
            r.folders(),
            vec![
                (
                    "~/.claude/projects".into(),
                    Agent::Claude,
                    StoreKind::PerProject
                ),
                ("/srv/sessions".into(), Agent::Codex, StoreKind::Dated),
            ]
        );
    }
}
