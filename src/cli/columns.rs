//! Plain tables fitted to the terminal (`list`, `labels`, `stats`): the
//! width they may take, and the agent and host columns they share.

use arbor_session::Agent;

/// The cells a plain table may take: the terminal's width when standard
/// output is one, else `COLUMNS` when set, else none — a pipe or a file
/// gets the rows as they always were (fixed widths a script can rely on).
pub fn output_width() -> Option<usize> {
    use std::io::IsTerminal as _;
    let terminal = std::io::stdout()
        .is_terminal()
        .then(|| crossterm::terminal::size().ok())
        .flatten()
        .map(|(w, _)| usize::from(w));
    terminal
        .filter(|&w| w > 0)
        .or_else(|| columns_var(std::env::var("COLUMNS").ok()))
}

/// `COLUMNS` as a width: a positive number, else none.
fn columns_var(v: Option<String>) -> Option<usize> {
    v?.trim().parse::<usize>().ok().filter(|&w| w > 0)
}

/// The agent column's cells: a session's agent, short.
pub fn agent_cell(agent: Agent) -> &'static str {
    match agent {
        Agent::Atomic => "Atomic",
        Agent::Pi => "pi",
        Agent::Claude => "Claude",
        Agent::Codex => "Codex",
    }
}

/// The host column's cells, its separator included: the longest
/// remote's name (or `local`) and two spaces; 0 — no column — when no
/// remote is configured.
pub fn host_width(config: &arbor_store::StoreConfig) -> usize {
    let longest = config
        .roots
        .iter()
        .filter_map(|r| r.host.as_deref())
        .map(str::len)
        .max();
    longest.map_or(0, |w| w.max(arbor_util::hosts::LOCAL.len()) + 2)
}

/// A row's host cell, `width` cells with its separator (nothing when
/// `width` is 0): the remote's name, or `local`.
pub fn host_cell(host: Option<&str>, width: usize) -> String {
    if width == 0 {
        return String::new();
    }
    let name = host.unwrap_or(arbor_util::hosts::LOCAL);
    format!("{name:<w$}  ", w = width - 2)
}

/// The agent column's width: its longest cell.
pub const AGENT_W: usize = 6;

/// The cells left to the column that takes the slack, when the others
/// (separators included) take `used` of `total`; never under `min`, so a
/// very narrow terminal wraps rather than hiding the column.
pub fn slack(total: usize, used: usize, min: usize) -> usize {
    total.saturating_sub(used).max(min)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_is_a_positive_number_or_nothing() {
        assert_eq!(columns_var(Some("120".into())), Some(120));
        assert_eq!(columns_var(Some(" 80\n".into())), Some(80));
        assert_eq!(columns_var(Some("0".into())), None);
        assert_eq!(columns_var(Some("wide".into())), None);
        assert_eq!(columns_var(None), None);
    }

    #[test]
    fn the_slack_column_keeps_its_minimum() {
        assert_eq!(slack(80, 31, 10), 49);
        assert_eq!(slack(20, 31, 10), 10);
    }

    #[test]
    fn every_agent_fits_its_column() {
        for a in [Agent::Atomic, Agent::Pi, Agent::Claude, Agent::Codex] {
            assert!(agent_cell(a).len() <= AGENT_W);
        }
    }
}
