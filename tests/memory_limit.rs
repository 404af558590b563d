//! arbor under an address-space limit (`ulimit -v`): the commands answer
//! as without one, or say they ran out of memory; they never die of
//! SIGABRT, and an abort with the screen up leaves the terminal as it was.
#![cfg(unix)]

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Output};

use crate::common::{self, pty};

/// `cmd` with its address space limited to `kib` KiB, as `ulimit -v kib`
/// sets it.
fn limited(cmd: &mut Command, kib: u64) -> &mut Command {
    // SAFETY: setrlimit is async-signal-safe; nothing is allocated.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: kib * 1024,
                rlim_max: kib * 1024,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
    }
}

fn arbor(root: &Path, cache: &Path, args: &[&str]) -> Command {
    let mut cmd = common::arbor();
    cmd.arg("--store").arg(root).args(args);
    cmd.env("ARBOR_CACHE_DIR", cache);
    cmd
}

/// A limited run's outcome is the unlimited one's, or a clear error.
fn check(what: &str, got: &Output, expected: Option<&str>) {
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(
        got.status.signal(),
        None,
        "{what} died of a signal; stderr:\n{stderr}"
    );
    if got.status.success() {
        if let Some(expected) = expected {
            assert_eq!(String::from_utf8_lossy(&got.stdout), expected, "{what}");
        }
    } else {
        assert_eq!(got.status.code(), Some(1), "{what}; stderr:\n{stderr}");
        assert!(
            stderr.starts_with("arbor: out of memory"),
            "{what} failed without saying it ran out of memory:\n{stderr}"
        );
    }
}

/// `index`, `list --all` and `search` under 300 MB and 200 MB limits on a
/// realistic store: each answers as without a limit (or says it ran out
/// of memory). mimalloc's and the C library's reservations (a 32 MiB
/// segment and a 64 MiB arena per thread) made them abort at both.
#[test]
fn commands_under_an_address_space_limit_answer_as_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("store");
    common::gen_corpus(
        &root,
        &[
            "--profile",
            "realistic",
            "--sessions",
            "40",
            "--seed",
            "7",
            "--max-mb",
            "2",
        ],
    );
    let free_cache = dir.path().join("cache-free");
    common::run_ok(&mut arbor(&root, &free_cache, &["index"]));
    let queries: [&[&str]; 2] = [&["list", "--all"], &["search", "--all", "test"]];
    let expected: Vec<String> = queries
        .iter()
        .map(|args| common::run_ok(&mut arbor(&root, &free_cache, args)))
        .collect();
    assert!(expected.iter().all(|out| out.lines().count() > 5));

    for kib in [300_000, 200_000] {
        let cache = dir.path().join(format!("cache-{kib}"));
        let built = limited(&mut arbor(&root, &cache, &["index"]), kib)
            .output()
            .unwrap();
        check(&format!("index at {kib} KiB"), &built, None);
        for (args, expected) in queries.iter().zip(&expected) {
            let got = limited(&mut arbor(&root, &cache, args), kib)
                .output()
                .unwrap();
            check(&format!("{args:?} at {kib} KiB"), &got, Some(expected));
        }
    }
}

/// The picker made to fail by `ARBOR_TEST_FAIL_ON_SCREEN=how` once the
/// screen is up: it ends, with `status`, on a terminal restored (raw mode
/// off, the alternate screen left), then says `said`.
fn failing_on_the_screen(how: &str, status: u32, said: &[u8]) {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let home = tempfile::tempdir().unwrap();
    let mut cmd = pty::arbor();
    cmd.arg("--store");
    cmd.arg(&root);
    cmd.arg("--all");
    cmd.env("HOME", home.path());
    cmd.env("ARBOR_CACHE_DIR", home.path().join("cache"));
    cmd.env("ARBOR_TEST_FAIL_ON_SCREEN", how);
    cmd.cwd(home.path());
    let mut term = pty::Term::spawn(cmd, 24, 80);
    let got = term.wait_exit(how);
    assert_eq!(got.signal(), None, "{how}: {got:?}");
    assert_eq!(got.exit_code(), status, "{how}: {got:?}");

    let tty = term.master.tty_name().expect("the terminal's name");
    let after = crate::pty_e2e::stty(&tty);
    for flag in ["icanon", "echo", "opost"] {
        assert_eq!(
            crate::pty_e2e::has_flag(&after, flag),
            Some(true),
            "{how}: {flag} restored:\n{after}"
        );
    }
    let out = term.into_output();
    let last = |seq: &[u8]| out.windows(seq.len()).rposition(|w| w == seq);
    let entered = last(b"\x1b[?1049h").expect("the alternate screen was entered");
    let left = last(b"\x1b[?1049l");
    assert!(left > Some(entered), "{how}: the alternate screen was left");
    assert!(last(said) > left, "{how}: the message follows the restore");
}

/// An allocation that fails with the picker on the screen (Rust aborts
/// then): the terminal is restored, arbor says it ran out of memory and
/// exits with status 1, not SIGABRT.
#[test]
fn an_abort_on_the_screen_restores_the_terminal() {
    failing_on_the_screen("oom", 1, b"arbor: out of memory");
}

/// A thread of the picker's that panics (one that cannot start its own
/// threads under a tight limit): the terminal is restored and arbor ends,
/// rather than wait on a restored terminal for rows that never come.
#[test]
fn a_panic_in_a_thread_on_the_screen_ends_arbor() {
    failing_on_the_screen("panic-in-thread", 101, b"a test's panic");
}
