//! One rsync run, watched: its output read as it comes (each file copied,
//! the byte count, the closing `--stats`), and the run killed when it
//! stays silent longer than the remote's timeout, so that a host that
//! accepts a connection and never answers cannot hold a sync forever.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::cancel::SyncCancel;
use crate::SyncProgress;

/// Marks the lines `--out-format` prints (one per file copied).
pub(crate) const FILE_MARK: &str = "arbor-file: ";

/// What one run did.
#[derive(Debug, Default)]
pub(crate) struct RunOutcome {
    /// The exit code (`None`: killed by a signal or by the watchdog).
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stderr: String,
    pub files: u64,
    pub literal_bytes: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// The files named copied or unchanged, as rsync writes names
    /// (`\\#ooo` for a byte it does not print).
    pub seen: Vec<String>,
}

/// Runs `cmd`, reporting progress, killing it after `timeout` of silence.
pub(crate) fn run(
    mut cmd: Command,
    timeout: Duration,
    own_group: bool,
    cancel: &SyncCancel,
    progress: &mut dyn FnMut(SyncProgress),
) -> std::io::Result<RunOutcome> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    if own_group {
        // A hung transport is killed with rsync (the whole group); only
        // when nothing may be asked on the terminal, which a process
        // outside the terminal's group could not read from.
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    cancel.started(child.id(), own_group);
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    let mut out = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no stdout"))?;
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut err = child
        .stderr
        .take()
        .ok_or_else(|| std::io::Error::other("no stderr"))?;
    let (err_tx, err_rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = err.by_ref().take(64 * 1024).read_to_end(&mut text);
        // Drained past the first 64 KiB so that rsync never blocks on it.
        let _ = std::io::copy(&mut err, &mut std::io::sink());
        let _ = err_tx.send(String::from_utf8_lossy(&text).into_owned());
    });
    let mut outcome = RunOutcome::default();
    let mut pending = Vec::new();
    loop {
        match rx.recv_timeout(timeout) {
            Ok(bytes) => {
                pending.extend_from_slice(&bytes);
                take_lines(&mut pending, &mut outcome, progress);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                outcome.timed_out = true;
                kill(&mut child, own_group);
                break;
            }
        }
    }
    cancel.finished(child.id());
    let status = child.wait()?;
    // A process rsync started that outlived it (a transport not killed
    // with it) may hold the pipes open: after a timeout the readers are
    // left to end on their own, and stderr is waited for briefly only.
    let stderr_wait = if outcome.timed_out {
        Duration::from_millis(200)
    } else {
        let _ = reader.join();
        Duration::from_secs(5)
    };
    pending.push(b'\n');
    take_lines(&mut pending, &mut outcome, progress);
    outcome.code = status.code();
    outcome.stderr = err_rx.recv_timeout(stderr_wait).unwrap_or_default();
    Ok(outcome)
}

fn kill(child: &mut Child, own_group: bool) {
    if own_group {
        crate::cancel::kill(child.id(), true);
    }
    let _ = child.kill();
}

/// Reads the complete lines (ended by `\n` or, for the byte count
/// `--info=progress2` rewrites in place, `\r`) out of `pending`.
fn take_lines(pending: &mut Vec<u8>, o: &mut RunOutcome, progress: &mut dyn FnMut(SyncProgress)) {
    while let Some(end) = pending.iter().position(|&b| b == b'\n' || b == b'\r') {
        let line: Vec<u8> = pending.drain(..=end).collect();
        let line = String::from_utf8_lossy(&line[..end]);
        read_line(line.trim(), o, progress);
    }
}

fn read_line(line: &str, o: &mut RunOutcome, progress: &mut dyn FnMut(SyncProgress)) {
    // rsync may write a message right after a byte count, with no line
    // break between: `0  0%  0.00kB/s  0:00:00 (xfr#0, to-chk=5/7)NAME is uptodate`.
    let line = match progress2_bytes(line).and(line.find("-chk=")) {
        Some(at) => match line[at..].find(')') {
            Some(end) if !line[at + end + 1..].trim().is_empty() => {
                read_line(&line[..at + end + 1], o, progress);
                line[at + end + 1..].trim()
            }
            _ => line,
        },
        None => line,
    };
    if let Some(name) = line.strip_prefix(FILE_MARK.trim_end()) {
        let name = name.trim_start();
        if !name.ends_with('/') {
            o.seen.push(name.to_string());
            progress(SyncProgress::File {
                path: name.to_string(),
            });
        }
        return;
    }
    if let Some(name) = line.strip_suffix(" is uptodate") {
        o.seen.push(name.to_string());
        return;
    }
    let stat = |prefix: &str| {
        line.strip_prefix(prefix).and_then(|rest| {
            rest.split_whitespace()
                .next()
                .and_then(|n| n.replace([',', '.'], "").parse::<u64>().ok())
        })
    };
    if let Some(n) = stat("Number of regular files transferred:") {
        o.files += n;
    } else if let Some(n) = stat("Literal data:") {
        o.literal_bytes += n;
    } else if let Some(n) = stat("Total bytes received:") {
        o.bytes_received += n;
    } else if let Some(n) = stat("Total bytes sent:") {
        o.bytes_sent += n;
    } else if let Some(bytes) = progress2_bytes(line) {
        progress(SyncProgress::Bytes { bytes });
    }
}

/// The byte count of a `--info=progress2` line (`1234  45%  1.2MB/s …`).
fn progress2_bytes(line: &str) -> Option<u64> {
    let mut words = line.split_whitespace();
    let bytes = words.next()?.replace(',', "").parse().ok()?;
    words.next()?.ends_with('%').then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_right_after_a_byte_count_is_read() {
        let mut o = RunOutcome::default();
        let mut seen = Vec::new();
        let mut text = format!(
            "  0   0%    0.00kB/s    0:00:00 (xfr#0, to-chk=5/7)a/b.jsonl is uptodate\n\
             \r  10   1%    0.00kB/s    0:00:00 (xfr#1, to-chk=4/7){FILE_MARK}a/c (x).jsonl\n"
        )
        .into_bytes();
        take_lines(&mut text, &mut o, &mut |p| seen.push(p));
        assert_eq!(o.seen, ["a/b.jsonl", "a/c (x).jsonl"]);
        assert_eq!(seen[0], SyncProgress::Bytes { bytes: 0 });
    }

    #[test]
    fn stats_and_progress_are_read() {
        let mut seen = Vec::new();
        let mut o = RunOutcome::default();
        let mut text = format!(
            "{FILE_MARK}home/.atomic/\n{FILE_MARK}home/a b.jsonl\n  1,024  50%  1.00MB/s  0:00:00 (xfr#1, to-chk=0/2)\r\
             Number of regular files transferred: 2\nLiteral data: 1,234 bytes\nTotal bytes sent: 99\nTotal bytes received: 2,000\n"
        )
        .into_bytes();
        take_lines(&mut text, &mut o, &mut |p| seen.push(p));
        assert_eq!(
            seen,
            vec![
                SyncProgress::File {
                    path: "home/a b.jsonl".into()
                },
                SyncProgress::Bytes { bytes: 1024 }
            ]
        );
        assert_eq!(
            (o.files, o.literal_bytes, o.bytes_sent, o.bytes_received),
            (2, 1234, 99, 2000)
        );
    }
}
