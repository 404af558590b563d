//! Mirrors kept by rsync over a real ssh (`common::sshd`, a server on
//! 127.0.0.1) and through a transport command: the first sync, an
//! appended line (only its bytes sent), a rewritten file, a deleted file,
//! a host that refuses or hangs, a host key ssh does not know, and words
//! that reach the remote's shell intact.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use arbor_remote::{mirror_roots, read_state, sync, Remote, RemoteError, SshCommand, SyncReport};

use crate::common::sshd::{free_port, Sshd};

fn ssh_of(server: &Sshd) -> SshCommand {
    let mut s = SshCommand::resolve(Some(&server.ssh_command()), None, None).unwrap();
    // No terminal to ask on: ssh fails instead of asking.
    s.batch = true;
    s
}

/// A remote reaching `server`, copying `folder` (absolute) from it.
fn remote_at(server: &Sshd, folder: &Path) -> Remote {
    Remote {
        name: "devbox".into(),
        dest: Some(server.dest()),
        paths: vec![folder.to_string_lossy().into_owned()],
        timeout_secs: Some(10),
        ..Remote::default()
    }
}

fn run_sync(r: &Remote, cache: &Path, ssh: &SshCommand) -> Result<SyncReport, RemoteError> {
    sync(r, cache, ssh, &mut |_| {})
}

/// The "remote" store: one project with two sessions.
fn remote_store(server: &Sshd) -> PathBuf {
    let root = server.dir.path().join("srv/sessions");
    let proj = root.join("--work-proj--");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("a.jsonl"),
        "{\"type\":\"session\",\"id\":\"a\"}\n".repeat(200),
    )
    .unwrap();
    std::fs::write(
        proj.join("b.jsonl"),
        "{\"type\":\"session\",\"id\":\"b\"}\n",
    )
    .unwrap();
    root
}

fn mirrored(cache: &Path, r: &Remote, rel: &str) -> PathBuf {
    mirror_roots(cache, r)[0].local.join(rel)
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn first_sync_copies_the_folders_private_and_read_only() {
    let Some(server) = Sshd::start_or_skip("first_sync") else {
        return;
    };
    let store = remote_store(&server);
    let cache = tempfile::tempdir().unwrap();
    let r = remote_at(&server, &store);
    let mut files = Vec::new();
    let report = sync(&r, cache.path(), &ssh_of(&server), &mut |p| {
        if let arbor_remote::SyncProgress::File { path } = p {
            files.push(path);
        }
    })
    .unwrap();
    assert_eq!(report.files, 2, "{report:?}");
    files.sort();
    assert!(files[0].ends_with("--work-proj--/a.jsonl"), "{files:?}");
    let a = mirrored(cache.path(), &r, "--work-proj--/a.jsonl");
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(store.join("--work-proj--/a.jsonl")).unwrap()
    );
    assert_eq!(mode(&a), 0o400, "files are read-only");
    assert_eq!(mode(&mirrored(cache.path(), &r, "--work-proj--")), 0o700);
    let top = arbor_remote::mirror_dir(cache.path(), "devbox");
    assert_eq!(mode(&top), 0o700);
    let state = read_state(cache.path(), "devbox");
    assert!(
        state.last_ok_ms.is_some() && state.last_error.is_none(),
        "{state:?}"
    );
    assert_eq!(state.last_ok_ms, state.last_attempt_ms);
    // Nothing changed: nothing sent, and one pass (the second one is for
    // files rewritten without growing).
    let mut passes = 0;
    let again = sync(&r, cache.path(), &ssh_of(&server), &mut |p| {
        passes += u32::from(matches!(p, arbor_remote::SyncProgress::Pass { .. }));
    })
    .unwrap();
    assert_eq!((again.files, again.literal_bytes), (0, 0), "{again:?}");
    assert_eq!(passes, 1);
}

#[test]
fn an_appended_line_sends_only_its_bytes() {
    let Some(server) = Sshd::start_or_skip("appended_line") else {
        return;
    };
    let store = remote_store(&server);
    let cache = tempfile::tempdir().unwrap();
    let r = remote_at(&server, &store);
    // A megabyte: rsync's usual delta transfer would send the copy's block
    // checksums for it (kilobytes); an append sends none.
    let remote_a = store.join("--work-proj--/a.jsonl");
    std::fs::write(
        &remote_a,
        "{\"type\":\"session\",\"id\":\"a\"}\n".repeat(35_000),
    )
    .unwrap();
    run_sync(&r, cache.path(), &ssh_of(&server)).unwrap();
    let line = "{\"type\":\"message\",\"id\":\"n1\",\"text\":\"one more line\"}\n";
    let before = std::fs::metadata(&remote_a).unwrap().len();
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&remote_a)
        .unwrap();
    std::io::Write::write_all(&mut f, line.as_bytes()).unwrap();
    drop(f);
    let report = run_sync(&r, cache.path(), &ssh_of(&server)).unwrap();
    assert_eq!(report.files, 1, "{report:?}");
    assert_eq!(
        report.literal_bytes,
        line.len() as u64,
        "only the new bytes: {report:?}"
    );
    assert!(
        report.bytes_received < 4096,
        "{report:?} against a file of {before} bytes"
    );
    assert!(
        report.bytes_sent < 1024,
        "no checksums of the copy sent: {report:?}"
    );
    let a = mirrored(cache.path(), &r, "--work-proj--/a.jsonl");
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&remote_a).unwrap()
    );
    assert_eq!(mode(&a), 0o400);
}

#[test]
fn a_rewritten_file_is_copied_whole_and_a_deleted_one_removed() {
    let Some(server) = Sshd::start_or_skip("rewritten_deleted") else {
        return;
    };
    let store = remote_store(&server);
    let cache = tempfile::tempdir().unwrap();
    let r = remote_at(&server, &store);
    let ssh = ssh_of(&server);
    run_sync(&r, cache.path(), &ssh).unwrap();
    let remote_a = store.join("--work-proj--/a.jsonl");
    // Grown, but its old part changed: the append check fails, the file is
    // sent again in full.
    let grown = "{\"type\":\"session\",\"id\":\"A\"}\n".repeat(201);
    std::fs::write(&remote_a, &grown).unwrap();
    run_sync(&r, cache.path(), &ssh).unwrap();
    let a = mirrored(cache.path(), &r, "--work-proj--/a.jsonl");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), grown);
    // Shorter: the append pass skips it, the second pass copies it (it
    // alone: one file).
    std::fs::write(&remote_a, "{\"type\":\"session\",\"id\":\"short\"}\n").unwrap();
    let report = run_sync(&r, cache.path(), &ssh).unwrap();
    assert_eq!(report.files, 1, "{report:?}");
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&remote_a).unwrap()
    );
    // Same size, other bytes.
    std::fs::write(&remote_a, "{\"type\":\"session\",\"id\":\"SHORT\"}\n").unwrap();
    let t = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&remote_a)
        .unwrap()
        .set_modified(t)
        .unwrap();
    run_sync(&r, cache.path(), &ssh).unwrap();
    assert_eq!(
        std::fs::read(&a).unwrap(),
        std::fs::read(&remote_a).unwrap()
    );
    std::fs::remove_file(store.join("--work-proj--/b.jsonl")).unwrap();
    run_sync(&r, cache.path(), &ssh).unwrap();
    assert!(!mirrored(cache.path(), &r, "--work-proj--/b.jsonl").exists());
    assert!(a.exists());
}

#[test]
fn a_refused_connection_keeps_the_last_mirror_and_says_why() {
    let Some(server) = Sshd::start_or_skip("refused") else {
        return;
    };
    let store = remote_store(&server);
    let cache = tempfile::tempdir().unwrap();
    let r = remote_at(&server, &store);
    run_sync(&r, cache.path(), &ssh_of(&server)).unwrap();
    let ok_at = read_state(cache.path(), "devbox").last_ok_ms;
    let closed = server.ssh_command().replace(
        &format!("-p {}", server.port),
        &format!("-p {}", free_port()),
    );
    let mut ssh = SshCommand::resolve(Some(&closed), None, None).unwrap();
    ssh.batch = true;
    let err = run_sync(&r, cache.path(), &ssh).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, RemoteError::Unreachable { .. }), "{msg}");
    assert!(
        msg.starts_with(&server.dest()) && msg.contains("connection refused"),
        "{msg}"
    );
    assert!(!msg.contains('\n'), "{msg}");
    assert!(
        mirrored(cache.path(), &r, "--work-proj--/a.jsonl").exists(),
        "the last mirror is kept"
    );
    let state = read_state(cache.path(), "devbox");
    assert_eq!(state.last_ok_ms, ok_at);
    assert!(state.last_attempt_ms >= ok_at);
    assert_eq!(state.last_error.as_deref(), Some(msg.as_str()));
}

#[test]
fn a_host_that_never_answers_times_out() {
    if crate::common::sshd::find_program("rsync").is_none() {
        eprintln!("hang: skipped: rsync is not installed");
        return;
    }
    // Accepts connections and never says a word.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for c in listener.incoming().take(4) {
            open.push(c);
        }
        std::thread::sleep(std::time::Duration::from_secs(30));
    });
    let cache = tempfile::tempdir().unwrap();
    let r = Remote {
        name: "hung".into(),
        dest: Some("me@127.0.0.1".into()),
        paths: vec!["/srv/sessions".into()],
        timeout_secs: Some(2),
        ..Remote::default()
    };
    let mut ssh = SshCommand::resolve(
        Some(&format!("ssh -F /dev/null -p {port} -o UserKnownHostsFile=/dev/null -o GlobalKnownHostsFile=/dev/null")),
        None,
        None,
    )
    .unwrap();
    ssh.batch = true;
    let err = run_sync(&r, cache.path(), &ssh).unwrap_err();
    assert!(
        matches!(err, RemoteError::TimedOut { secs: 2, .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("me@127.0.0.1 did not answer within 2 s"),
        "{err}"
    );
    assert!(read_state(cache.path(), "hung").last_error.is_some());
    drop(held);
}

#[test]
fn a_transport_that_hangs_is_killed_by_the_watchdog() {
    if crate::common::sshd::find_program("rsync").is_none() {
        eprintln!("transport_hang: skipped: rsync is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("pid");
    let script = d.path().join("hang.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 3600\n",
            pidfile.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = Remote {
        name: "box".into(),
        transport: Some(script.to_string_lossy().into_owned()),
        timeout_secs: Some(1),
        ..Remote::default()
    };
    let ssh = SshCommand {
        batch: true,
        ..SshCommand::default()
    };
    let err = run_sync(&r, d.path(), &ssh).unwrap_err();
    assert!(
        matches!(err, RemoteError::TimedOut { secs: 1, .. }),
        "{err}"
    );
    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let pid = pid.trim().to_string();
    // Whatever the outcome, the process does not outlive the test.
    struct Reap(String);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &self.0])
                .status();
        }
    }
    let _reap = Reap(pid.clone());
    // The hung transport was killed with rsync (its process group).
    let mut gone = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            gone = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone, "the transport process {pid} is still running");
}

#[test]
fn an_unknown_host_key_is_refused_never_accepted() {
    let Some(server) = Sshd::start_or_skip("host_key") else {
        return;
    };
    let store = remote_store(&server);
    let cache = tempfile::tempdir().unwrap();
    let r = remote_at(&server, &store);
    let empty = server.dir.path().join("empty_known_hosts");
    std::fs::write(&empty, "").unwrap();
    let mut ssh = SshCommand::resolve(Some(&server.ssh_command_with(&empty)), None, None).unwrap();
    ssh.batch = true;
    let err = run_sync(&r, cache.path(), &ssh).unwrap_err();
    assert!(matches!(err, RemoteError::HostKeyUnknown { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(&empty).unwrap(),
        "",
        "no key was added"
    );
    assert!(!mirrored(cache.path(), &r, "--work-proj--/a.jsonl").exists());
}

#[test]
fn hostile_words_reach_the_remote_shell_intact() {
    let Some(server) = Sshd::start_or_skip("shell_quote") else {
        return;
    };
    let marker = server.dir.path().join("pwned");
    let words = [
        "it's \"quoted\"".to_string(),
        format!("$(touch {})", marker.display()),
        format!("`touch {}`", marker.display()),
        "two\nlines; echo x".to_string(),
        "*".to_string(),
        String::new(),
        "~/x $HOME".to_string(),
    ];
    let r = remote_at(&server, Path::new("/srv"));
    for w in &words {
        let argv = vec!["printf".to_string(), "[%s]".to_string(), w.clone()];
        let out = arbor_remote::remote_command(&r, &ssh_of(&server), &argv, false)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{w:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), format!("[{w}]"));
    }
    assert!(!marker.exists(), "a word was run by the remote shell");
}

#[test]
fn a_transport_command_syncs_the_usual_folders_from_its_home() {
    if crate::common::sshd::find_program("rsync").is_none() {
        eprintln!("transport: skipped: rsync is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let home = d.path().join("container-home");
    let sessions = home.join(".atomic/agent/sessions/--p--");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("s.jsonl"), "{\"type\":\"session\"}\n").unwrap();
    let codex = home.join(".codex/sessions/2026/12/07");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("rollout.jsonl"), "{}\n").unwrap();
    // Stands in for `docker exec -i NAME`: drops `exec -i NAME`, runs the
    // rest with the container's home.
    let fake = d.path().join("fake-docker");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nshift 3\nHOME='{}' exec \"$@\"\n",
            home.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = Remote {
        name: "box".into(),
        transport: Some(format!("{} exec -i box", fake.display())),
        ..Remote::default()
    };
    let cache = d.path().join("cache");
    let ssh = SshCommand {
        batch: true,
        ..SshCommand::default()
    };
    let report = run_sync(&r, &cache, &ssh).unwrap();
    assert_eq!(report.files, 2, "{report:?}");
    let roots = mirror_roots(&cache, &r);
    let atomic = roots
        .iter()
        .find(|m| m.agent == arbor_session::Agent::Atomic)
        .unwrap();
    assert!(atomic.local.join("--p--/s.jsonl").is_file());
    let codex_root = roots
        .iter()
        .find(|m| m.agent == arbor_session::Agent::Codex)
        .unwrap();
    assert!(codex_root.local.join("2026/12/07/rollout.jsonl").is_file());
    assert_eq!(
        arbor_remote::remote_path(&cache, &r, &atomic.local.join("--p--/s.jsonl")).as_deref(),
        Some("~/.atomic/agent/sessions/--p--/s.jsonl")
    );
    // A grown file is appended to its read-only copy (as any user: the
    // copy is made writable for the sync only).
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(sessions.join("s.jsonl"))
        .unwrap();
    std::io::Write::write_all(&mut f, b"{\"type\":\"message\"}\n").unwrap();
    drop(f);
    let report = run_sync(&r, &cache, &ssh).unwrap();
    assert_eq!((report.files, report.literal_bytes), (1, 19), "{report:?}");
    let copy = atomic.local.join("--p--/s.jsonl");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(sessions.join("s.jsonl")).unwrap()
    );
    assert_eq!(
        std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777,
        0o400
    );
    // Nothing but the configured folders: the home's other files stay
    // there, and links inside a folder (to a file or a folder outside it)
    // are neither followed nor copied.
    std::fs::write(home.join(".atomic/agent/auth.json"), "secret").unwrap();
    let sessions_root = home.join(".atomic/agent/sessions");
    std::os::unix::fs::symlink(
        home.join(".atomic/agent/auth.json"),
        sessions_root.join("--p--/link.jsonl"),
    )
    .unwrap();
    std::os::unix::fs::symlink(home.join(".atomic/agent"), sessions_root.join("--agent--"))
        .unwrap();
    run_sync(&r, &cache, &ssh).unwrap();
    let mirror = arbor_remote::mirror_dir(&cache, "box");
    assert!(!mirror.join("home/.atomic/agent/auth.json").exists());
    assert!(std::fs::symlink_metadata(atomic.local.join("--p--/link.jsonl")).is_err());
    assert!(std::fs::symlink_metadata(atomic.local.join("--agent--")).is_err());
}

#[test]
fn a_cancelled_sync_kills_its_hung_transport_at_once() {
    if crate::common::sshd::find_program("rsync").is_none() {
        eprintln!("transport_cancel: skipped: rsync is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("pid");
    let script = d.path().join("hang.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > '{}.tmp' && mv '{0}.tmp' '{0}'\nexec sleep 3600\n",
            pidfile.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The watchdog would wait an hour: only the cancel can end this run.
    let r = Remote {
        name: "box".into(),
        transport: Some(script.to_string_lossy().into_owned()),
        timeout_secs: Some(3600),
        ..Remote::default()
    };
    let ssh = SshCommand {
        batch: true,
        ..SshCommand::default()
    };
    let cancel = arbor_remote::SyncCancel::new();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let cache = d.path().to_path_buf();
    let handle = cancel.clone();
    std::thread::spawn(move || {
        let result = arbor_remote::sync_cancellable(&r, &cache, &ssh, &handle, &mut |_| {});
        let _ = done_tx.send(result);
    });
    let mut pid = String::new();
    for _ in 0..400 {
        pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
        if !pid.trim().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let pid = pid.trim().to_string();
    assert!(!pid.is_empty(), "the transport never started");
    struct Reap(String);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = std::process::Command::new("kill")
                .args(["-9", &self.0])
                .status();
        }
    }
    let _reap = Reap(pid.clone());
    cancel.cancel();
    // A generous bound, not a timing figure: without the cancel the run
    // lasts an hour.
    let result = done_rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the cancelled sync did not end");
    let err = result.unwrap_err();
    assert!(matches!(err, RemoteError::Cancelled { .. }), "{err}");
    // Killed with rsync's group: gone (or a zombie) once the kill lands.
    let mut gone = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            gone = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone, "the transport process {pid} is still running");
}
