//! Why an rsync run failed, in one line naming the host: ssh's and
//! rsync's messages read for the usual causes (refused, unknown host,
//! host key, login, rsync missing there), else their first line.

use crate::rsync_run::RunOutcome;
use crate::{Remote, RemoteError};

/// rsync's "some files vanished before they could be transferred": a
/// session removed during the copy, which the next sync settles.
const VANISHED: i32 = 24;

pub(crate) fn check(remote: &Remote, o: &RunOutcome) -> Result<(), RemoteError> {
    let host = remote.host();
    if o.timed_out {
        return Err(RemoteError::TimedOut {
            host,
            secs: remote.timeout(),
        });
    }
    if matches!(o.code, Some(0 | VANISHED)) {
        return Ok(());
    }
    let err = o.stderr.as_str();
    let has = |s: &str| err.contains(s);
    let unreachable = |why: &str| RemoteError::Unreachable {
        host: host.clone(),
        why: why.to_string(),
    };
    Err(if has("Host key verification failed") {
        RemoteError::HostKeyUnknown { host }
    } else if has("Connection refused") {
        unreachable("connection refused")
    } else if has("Could not resolve hostname") || has("Name or service not known") {
        unreachable("no such host name")
    } else if has("No route to host") || has("Network is unreachable") {
        unreachable("no route to the host")
    } else if has("timed out") {
        RemoteError::TimedOut {
            host,
            secs: remote.timeout(),
        }
    } else if ssh_login_denied(err) || has("Too many authentication failures") {
        RemoteError::LoginRefused {
            host,
            why: first_line(err, "Permission denied"),
        }
    } else if has("rsync: command not found") || has("rsync: not found") || o.code == Some(127) {
        RemoteError::RsyncMissingRemote { host }
    } else if o.code == Some(255) || has("connection unexpectedly closed") {
        unreachable(&first_line(err, ""))
    } else {
        RemoteError::Rsync {
            host,
            why: match first_line(err, "") {
                l if l.is_empty() => format!(
                    "exit code {}",
                    o.code.map_or("none".into(), |c| c.to_string())
                ),
                l => l,
            },
        }
    })
}

/// ssh's `Permission denied (publickey,password).`, not a file's
/// `Permission denied (13)` from rsync.
fn ssh_login_denied(err: &str) -> bool {
    err.match_indices("Permission denied (")
        .any(|(at, m)| err[at + m.len()..].starts_with(|c: char| c.is_ascii_alphabetic()))
}

/// The first line of `err` holding `want` (any line when empty), without
/// rsync's closing summary, control characters shown as `?` (a remote's
/// file names are not the terminal's business).
fn first_line(err: &str, want: &str) -> String {
    err.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("rsync error:") && l.contains(want))
        .map(|l| {
            l.chars()
                .map(|c| if c.is_control() { '?' } else { c })
                .take(300)
                .collect::<String>()
        })
        .next()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(code: i32, stderr: &str) -> String {
        let r = Remote {
            name: "devbox".into(),
            dest: Some("me@devbox".into()),
            ..Remote::default()
        };
        let o = RunOutcome {
            code: Some(code),
            stderr: stderr.into(),
            ..RunOutcome::default()
        };
        check(&r, &o).unwrap_err().to_string()
    }

    #[test]
    fn usual_causes_are_one_line_naming_the_host() {
        let refused = failed(255, "ssh: connect to host 127.0.0.1 port 1: Connection refused\r\nrsync: connection unexpectedly closed (0 bytes received so far) [Receiver]\nrsync error: unexplained error (code 255)");
        assert_eq!(
            refused,
            "me@devbox could not be reached (connection refused); the last mirror is kept"
        );
        assert!(failed(255, "Host key verification failed.\r\n")
            .starts_with("me@devbox: ssh could not verify"));
        assert!(failed(12, "bash: line 1: rsync: command not found\n")
            .contains("rsync is not installed there"));
        assert!(failed(255, "me@devbox: Permission denied (publickey).\r\n")
            .starts_with("me@devbox refused the login"));
        let file = failed(
            23,
            "rsync: [receiver] open \"/m/a.jsonl\" failed: Permission denied (13)\n",
        );
        assert!(
            file.starts_with("me@devbox: rsync failed: rsync: [receiver] open"),
            "{file}"
        );
        let other = failed(23, "rsync: [sender] read errors mapping \"/x\u{1b}[2J\": Input/output error (5)\nrsync error: some files/attrs were not transferred");
        assert!(other.contains("/x?[2J") && !other.contains('\n'), "{other}");
    }
}
