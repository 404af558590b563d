//! Whether a session can be handed to its agent's resume command. A
//! session's id and file name come from its file, so they are data, never
//! one of the agent's options: a Codex rollout whose id is
//! `--dangerously-bypass-approvals-and-sandbox`, or a Claude Code file named
//! `--model=opus.jsonl`, must not choose how the agent runs
//! (docs/other-agents.md). The ids Claude Code and Codex resume by are
//! UUIDs (Claude Code names each session's file `<session id>.jsonl`;
//! Codex's `resume` takes the `session_meta` id, the UUID that ends its
//! rollout's name), so anything else is refused before an argv is built.

use std::path::Path;

use crate::agent::Agent;
use crate::render::sanitize_line;

/// The most of an untrusted id a refusal shows.
const SHOWN_ID_CHARS: usize = 60;

impl Agent {
    /// Whether `id` has the shape of the ids this agent resumes by; `true`
    /// for Atomic and pi, which resume by the session's file.
    pub fn resumes_by_id(self, id: &str) -> bool {
        match self {
            Agent::Atomic | Agent::Pi => true,
            Agent::Claude | Agent::Codex => is_uuid(id),
        }
    }

    /// Why the session at `path` with `id` (its resume target) cannot be
    /// resumed with this agent, as one sentence safe for a terminal;
    /// `None` when it can.
    pub fn resume_refusal(self, path: &Path, id: &str) -> Option<String> {
        if self.resumes_by_id(id) {
            return None;
        }
        Some(format!(
            "{}: its session id \"{}\" is not a {} session id, so arbor will not pass it to {}",
            sanitize_line(&path.to_string_lossy()),
            shown_id(id),
            self.display_name(),
            self.name(),
        ))
    }
}

/// `8-4-4-4-12` hexadecimal digits, as both agents write them (any
/// version, either case).
pub fn is_uuid(id: &str) -> bool {
    let groups: Vec<&str> = id.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The id as a refusal shows it: sanitized, and cut when long.
fn shown_id(id: &str) -> String {
    let mut s = sanitize_line(id);
    if let Some((at, _)) = s.char_indices().nth(SHOWN_ID_CHARS) {
        s.truncate(at);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_uuids_are_claude_code_and_codex_ids() {
        for ok in [
            "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70",
            "019A2D7A-41C4-78B1-B7CC-A45D62A89CD5",
        ] {
            assert!(is_uuid(ok), "{ok}");
            assert!(Agent::Claude.resumes_by_id(ok) && Agent::Codex.resumes_by_id(ok));
        }
        for bad in [
            "--dangerously-skip-permissions",
            "--model=opus",
            "-5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f7",
            "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70 --x",
            "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f7g",
            "5f0c2a1e8b7d4c3e9a102b3c4d5e6f70",
            "",
        ] {
            assert!(!Agent::Claude.resumes_by_id(bad), "{bad}");
            assert!(!Agent::Codex.resumes_by_id(bad), "{bad}");
        }
        assert!(Agent::Atomic.resumes_by_id("--anything"));
        assert!(Agent::Pi.resumes_by_id("--anything"));
    }

    #[test]
    fn a_refusal_names_the_file_and_shows_the_id_safely() {
        let r = Agent::Codex
            .resume_refusal(
                Path::new("/s/rollout.jsonl"),
                "--dangerously-bypass-approvals-and-sandbox",
            )
            .unwrap();
        assert_eq!(
            r,
            "/s/rollout.jsonl: its session id \"--dangerously-bypass-approvals-and-sandbox\" \
             is not a Codex session id, so arbor will not pass it to codex"
        );
        let long = format!("\u{1b}]0;t\u{7}{}", "x".repeat(200));
        let r = Agent::Claude
            .resume_refusal(Path::new("/s/\u{1b}[31m.jsonl"), &long)
            .unwrap();
        assert!(!r.chars().any(crate::render::is_unsafe), "{r:?}");
        assert!(r.contains('…') && r.len() < 200, "{r}");
        assert!(r.contains("not a Claude Code session id"), "{r}");
        assert_eq!(
            Agent::Claude.resume_refusal(
                Path::new("/s/a.jsonl"),
                "5f0c2a1e-8b7d-4c3e-9a10-2b3c4d5e6f70"
            ),
            None
        );
    }
}
