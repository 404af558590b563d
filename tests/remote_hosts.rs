//! Remote sessions in the one list (#56): a remote's mirror, laid out as
//! `arbor-remote` keeps it in the cache (`<cache>/remotes/NAME/home/…`),
//! listed with its host on rows, JSON lines and tables, chosen with
//! `--host` and `host:`; resumed on its own machine (the command checked
//! through a stand-in ssh that runs it in a local shell); written only by
//! the remote's arbor (a stand-in transport running this build locally),
//! and refused when arbor is absent there; the picker's first frame with
//! one remote hanging and one unreachable.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::{self, pty};

/// A local store, a remote's mirror of one folder, and the settings
/// naming the remote.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            dir: tempfile::tempdir().unwrap(),
        }
    }
    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }
    fn cache(&self) -> PathBuf {
        self.dir.path().join("cache")
    }
    fn config(&self) -> PathBuf {
        self.dir.path().join("config.toml")
    }
    /// The copy of the remote `name`'s `~/.atomic/agent/sessions`.
    fn mirror(&self, name: &str) -> PathBuf {
        self.cache()
            .join("remotes")
            .join(name)
            .join("home/.atomic/agent/sessions")
    }
    fn local_store(&self) -> PathBuf {
        self.home().join(".atomic/agent/sessions")
    }
    fn settings(&self, text: &str) {
        std::fs::write(self.config(), text).unwrap();
    }
    fn arbor(&self) -> std::process::Command {
        let mut c = common::arbor();
        c.env("HOME", self.home())
            .env("ARBOR_CACHE_DIR", self.cache())
            .env("ARBOR_CONFIG", self.config())
            .arg("--no-index");
        c
    }
}

fn session(dir: &Path, id: &str, cwd: &str, text: &str, minute: u32) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(format!("2026-01-01T10-{minute:02}-00-000Z_{id}.jsonl"));
    let ts = format!("2026-01-01T10:{minute:02}:00.000Z");
    let header = serde_json::json!({"type": "session", "version": 3, "id": id,
        "timestamp": ts, "cwd": cwd});
    let msg = serde_json::json!({"type": "message", "id": "m1", "parentId": null,
        "timestamp": ts,
        "message": {"role": "user", "content": [{"type": "text", "text": text}]}});
    let label = serde_json::json!({"type": "label", "id": "l1", "parentId": "m1",
        "timestamp": ts, "targetId": "m1", "label": format!("{text} label")});
    std::fs::write(&path, format!("{header}\n{msg}\n{label}\n")).unwrap();
    path
}

fn json_lines(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The hosts the lines name, each once.
fn hosts_of(lines: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut h: Vec<serde_json::Value> = lines.iter().map(|v| v["host"].clone()).collect();
    h.sort_by_key(|v| v.to_string());
    h.dedup();
    h
}

/// One local session and one of `devbox`, both in `/w`.
fn two_hosts() -> (World, PathBuf, PathBuf) {
    let w = World::new();
    w.settings(
        "[[remote]]\nname = \"devbox\"\nssh = \"devbox\"\npaths = [\"~/.atomic/agent/sessions\"]\n",
    );
    let local = session(
        &w.local_store().join("--w--"),
        "0199-local",
        "/w",
        "local work",
        1,
    );
    let remote = session(
        &w.mirror("devbox").join("--w--"),
        "0199-remote",
        "/w",
        "remote work",
        2,
    );
    (w, local, remote)
}

#[test]
fn rows_json_and_filters_carry_the_host() {
    let (w, local, remote) = two_hosts();
    let list = |args: &[&str]| {
        json_lines(&common::run_ok(
            w.arbor().args(["list", "--all", "--json"]).args(args),
        ))
    };
    let all = list(&[]);
    assert_eq!(
        hosts_of(&all),
        [serde_json::json!("devbox"), serde_json::Value::Null]
    );
    let only = |args: &[&str]| -> Vec<String> {
        list(args)
            .iter()
            .map(|v| v["path"].as_str().unwrap().to_string())
            .collect()
    };
    let (l, r) = (local.display().to_string(), remote.display().to_string());
    assert_eq!(only(&["--host", "devbox"]), [r.as_str()]);
    assert_eq!(only(&["--host", "local"]), [l.as_str()]);
    assert_eq!(only(&["--query", "host:devbox"]), [r.as_str()]);
    assert_eq!(only(&["--query", "host:local work"]), [l.as_str()]);
    assert_eq!(only(&["--query", "host:DEVBOX remote"]), [r.as_str()]);
    // search, labels and stats name the host too.
    let found = json_lines(&common::run_ok(
        w.arbor().args(["search", "--all", "--json", "work"]),
    ));
    assert_eq!(
        hosts_of(&found),
        [serde_json::json!("devbox"), serde_json::Value::Null]
    );
    let labels = json_lines(&common::run_ok(
        w.arbor().args(["labels", "--all", "--json"]),
    ));
    assert_eq!(
        hosts_of(&labels),
        [serde_json::json!("devbox"), serde_json::Value::Null]
    );
    let labels = json_lines(&common::run_ok(
        w.arbor()
            .args(["labels", "--all", "--json", "--host", "devbox"]),
    ));
    assert_eq!(labels[0]["label"], "remote work label");
    // An unknown host is an error naming the known ones.
    let out = common::run(w.arbor().args(["list", "--all", "--host", "nope"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--host nope") && err.contains("devbox"),
        "{err}"
    );
}

#[test]
fn tables_have_a_host_column_when_remotes_are_configured() {
    let (w, _, _) = two_hosts();
    let table = common::run_ok(w.arbor().args(["list", "--all"]).env("COLUMNS", "120"));
    let row = |text: &str| {
        table
            .lines()
            .find(|l| l.contains(text))
            .unwrap()
            .to_string()
    };
    assert!(row("remote work").contains(" devbox "), "{table}");
    assert!(row("local work").contains(" local "), "{table}");
    let labels = common::run_ok(w.arbor().args(["labels", "--all"]));
    assert!(labels.lines().next().unwrap().contains("HOST"), "{labels}");
    let stats = common::run_ok(w.arbor().args(["stats", "--all"]));
    assert!(stats.lines().next().unwrap().contains("host"), "{stats}");
    // Without remotes, no column.
    std::fs::write(w.config(), "").unwrap();
    let table = common::run_ok(w.arbor().args(["list", "--all"]).env("COLUMNS", "120"));
    assert!(!table.contains(" local "), "{table}");
}

#[test]
fn a_mirror_file_is_read_like_any_session_and_never_written() {
    let (w, _, remote) = two_hosts();
    let r = remote.to_str().unwrap();
    let shown = common::run_ok(w.arbor().args(["show", r]));
    assert!(shown.contains("remote work"), "{shown}");
    let ctx = common::run_ok(w.arbor().args(["context", r, "--json"]));
    assert!(ctx.contains("remote work"), "{ctx}");
    let md = common::run_ok(w.arbor().args(["export", r]));
    assert!(md.contains("remote work"), "{md}");
    // The id resolves to the mirror too.
    let shown = common::run_ok(w.arbor().args(["show", "0199-remote"]));
    assert!(shown.contains("remote work"), "{shown}");
    let before = std::fs::read(&remote).unwrap();
    // Not live: the trash would ask about a file written seconds ago.
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&remote)
        .unwrap()
        .set_modified(old)
        .unwrap();
    // Through a transport without arbor: refused, naming the host.
    w.settings(&format!(
        "[[remote]]\nname = \"devbox\"\ntransport = \"env -i HOME={} PATH=/usr/bin:/bin\"\npaths = [\"~/.atomic/agent/sessions\"]\n",
        w.dir.path().join("remote-home").display()
    ));
    for args in [
        vec!["rename", r, "new name"],
        vec!["label", r, "m1", "x"],
        vec!["branch", r, "m1"],
        vec!["fork", r, "m1"],
        vec!["trash", r],
    ] {
        let out = common::run(w.arbor().args(&args));
        let err = String::from_utf8_lossy(&out.stderr);
        let said = err.contains("arbor is not installed on devbox")
            || String::from_utf8_lossy(&out.stdout).contains("arbor is not installed on devbox");
        assert!(
            !out.status.success() || args[0] == "trash",
            "{args:?}: {err}"
        );
        assert!(said, "{args:?}: {err}");
    }
    assert_eq!(
        std::fs::read(&remote).unwrap(),
        before,
        "the mirror is as it was"
    );
}

/// `env -i HOME=… PATH=…` as the remote: a shell on this machine whose
/// home is the "remote" home, and whose PATH has this build's arbor.
fn local_transport(remote_home: &Path, bin: &Path) -> String {
    format!(
        "env -i HOME={} PATH={}:/usr/bin:/bin",
        remote_home.display(),
        bin.display()
    )
}

#[test]
fn a_rename_runs_on_the_remote_through_its_arbor() {
    let w = World::new();
    let remote_home = w.dir.path().join("remote-home");
    let original = session(
        &remote_home.join(".atomic/agent/sessions/--w--"),
        "0199-there",
        "/w",
        "work over there",
        3,
    );
    // The mirror as a sync left it.
    let copy = w
        .mirror("devbox")
        .join("--w--")
        .join(original.file_name().unwrap());
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&original, &copy).unwrap();
    let bin = w.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arbor"), bin.join("arbor")).unwrap();
    w.settings(&format!(
        "[[remote]]\nname = \"devbox\"\ntransport = \"{}\"\npaths = [\"~/.atomic/agent/sessions\"]\n",
        local_transport(&remote_home, &bin)
    ));
    let out =
        common::run_ok(
            w.arbor()
                .args(["rename", "--", copy.to_str().unwrap(), "-named there"]),
        );
    assert!(
        !out.trim().is_empty(),
        "the remote's arbor prints the new entry's id"
    );
    let there = std::fs::read_to_string(&original).unwrap();
    assert!(
        there.lines().last().unwrap().contains("\"-named there\""),
        "{there}"
    );
    // Looked for once, remembered.
    let state = std::fs::read_to_string(w.cache().join("remotes/devbox/state.json")).unwrap();
    assert!(state.contains("\"yes\""), "{state}");
    // The mirror came back by a sync (when rsync is here).
    if which("rsync") {
        let copied = std::fs::read_to_string(&copy).unwrap();
        assert_eq!(copied, there, "the mirror is synced after the write");
    }
}

fn which(program: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn script(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Text no shell may run: each part would `touch` a file.
const HOSTILE: &str = "it's \"q\" $(touch pwned1) `touch pwned2`\nline two";

#[test]
fn resume_runs_the_agent_there_in_the_session_folder_exactly() {
    let w = World::new();
    // The session's folder, hostile, exists (the "remote" is this machine).
    let cwd = w.dir.path().join(format!("proj {HOSTILE}"));
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd_s = cwd.to_str().unwrap();
    let folder = arbor_store::encode_cwd(cwd_s);
    let copy = session(
        &w.mirror("devbox").join(&folder),
        "0199-res",
        cwd_s,
        "resume me",
        4,
    );
    let bin = w.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = w.dir.path().join("ssh-args");
    let ran = w.dir.path().join("ran");
    let remote_home = w.dir.path().join("remote-home");
    std::fs::create_dir_all(&remote_home).unwrap();
    // ssh: notes its words, then hands the last to a shell as sshd does.
    script(
        &bin.join("fake-ssh"),
        &format!(
            "#!/bin/sh\nprintf '%s\\0' \"$@\" > '{}'\nfor last; do :; done\ncd '{}' && HOME='{}' exec sh -c \"$last\"\n",
            log.display(),
            remote_home.display(),
            remote_home.display()
        ),
    );
    // The agent there: notes where it runs and what it was given.
    script(
        &bin.join("atomic"),
        &format!(
            "#!/bin/sh\npwd > '{}'\nprintf '%s\\0' \"$@\" >> '{}'\n",
            ran.display(),
            ran.display()
        ),
    );
    w.settings("[[remote]]\nname = \"devbox\"\nssh = \"me@devbox\"\npaths = [\"~/.atomic/agent/sessions\"]\n");
    let path_var = format!("{}:/usr/bin:/bin", bin.display());
    // `--last` in the session's folder resumes its newest session: this one.
    let out = common::run(
        w.arbor()
            .arg("--last")
            .current_dir(&cwd)
            .env("ARBOR_SSH", bin.join("fake-ssh"))
            .env("PATH", &path_var),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let args = std::fs::read_to_string(&log).unwrap();
    let args: Vec<&str> = args.split('\0').collect();
    assert_eq!(args[0], "-t", "a terminal for the agent: {args:?}");
    assert!(args.contains(&"me@devbox"), "{args:?}");
    let ran = std::fs::read_to_string(&ran).unwrap();
    let (dir, argv) = ran.split_once("\n").map_or((ran.as_str(), ""), |x| x);
    // `pwd` printed the folder, newline and all.
    let mut words: Vec<&str> = argv.split('\0').collect();
    let dir = if cwd_s.contains('\n') {
        let (second, rest) = argv.split_once('\n').unwrap();
        words = rest.split('\0').collect();
        format!("{dir}\n{second}")
    } else {
        dir.to_string()
    };
    assert_eq!(dir, cwd_s, "it ran in the session's folder there");
    let want = format!(
        "{}/.atomic/agent/sessions/{folder}/{}",
        remote_home.display(),
        copy.file_name().unwrap().to_str().unwrap()
    );
    assert_eq!(words[..2], ["--session", want.as_str()]);
    for d in [w.dir.path(), &cwd, &remote_home] {
        assert!(!d.join("pwned1").exists() && !d.join("pwned2").exists());
    }
    // Without ssh here, the command is printed instead.
    let out = common::run(
        w.arbor()
            .arg("--last")
            .current_dir(&cwd)
            .env("ARBOR_SSH", "/nonexistent/ssh")
            .env("PATH", &path_var),
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("To resume this session on devbox run:"),
        "{said}"
    );
    assert!(said.contains("/nonexistent/ssh -t"), "{said}");
}

#[test]
fn the_first_frame_does_not_wait_for_a_hanging_or_unreachable_remote() {
    let w = World::new();
    let home = w.home();
    session(
        &w.local_store().join("--w--"),
        "0199-here",
        "/w",
        "the local one",
        5,
    );
    session(
        &w.mirror("hung").join("--w--"),
        "0199-hung",
        "/w",
        "from the hung host",
        6,
    );
    // One remote never answers (a transport that waits until the test
    // ends, with a long timeout), the other cannot be reached at all.
    let stop = w.dir.path().join("stop");
    w.settings(&format!(
        "[[remote]]\nname = \"hung\"\ntransport = \"sh -c 'while [ ! -e {} ]; do sleep 0.2; done' hang\"\n\
         timeout = 600\npaths = [\"~/.atomic/agent/sessions\"]\n\
         [[remote]]\nname = \"gone\"\nssh = \"gone.invalid\"\npaths = [\"~/.atomic/agent/sessions\"]\n",
        stop.display()
    ));
    let mut cmd = pty::arbor();
    let log = w.dir.path().join("log");
    cmd.args(["--all", "--no-index", "--log", log.to_str().unwrap()]);
    cmd.env("HOME", &home);
    cmd.env("ARBOR_CACHE_DIR", w.cache());
    cmd.env("ARBOR_CONFIG", w.config());
    cmd.env("ARBOR_SSH", "false");
    cmd.cwd(w.dir.path());
    let mut term = pty::Term::spawn(cmd, 24, 120);
    let screen = term.wait_for("both rows", |t| {
        t.contains("the local one") && t.contains("from the hung host")
    });
    assert!(screen.contains("@hung never"), "{screen}");
    // Said on the status line, which may wrap.
    let said = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        term.wait_for("the unreachable host said", |t| {
            let words = t.split_whitespace().collect::<Vec<_>>().join(" ");
            // (How it failed is rsync's to say: refused, closed, a broken pipe.)
            words.contains("gone.invalid") && words.contains("none of its sessions is listed yet")
        })
    }));
    if let Err(e) = said {
        eprintln!("LOG: {}", std::fs::read_to_string(&log).unwrap_or_default());
        std::panic::resume_unwind(e);
    }
    // It answers keys while `hung` still syncs.
    term.send(b"local");
    term.wait_for("the query", |t| {
        t.contains("the local one") && !t.contains("from the hung host")
    });
    assert!(!stop.exists() && term.running());
    std::fs::write(&stop, "").unwrap();
    term.send(b"\x03");
    term.wait_exit("ctrl+c");
}

/// 2026-11-29T12:00:00Z: the demo sessions are 1 day to 9 days old.
const NOW: i64 = 1_795_953_600_000;

#[test]
fn picker_rows_of_remotes_carry_their_tag_and_age() {
    use arbor::ui::picker::{HostStatus, Remotes, Row};
    use arbor::ui::theme::Theme;
    use arbor::ui::{App, AppEvent};
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    let dir = common::demo_store();
    let root = dir.path().join("sessions");
    // Two of the demo's projects as two remotes' mirrors.
    arbor_util::hosts::register(&root.join("--home-demo-projects-webapp--"), "devbox");
    arbor_util::hosts::register(&root.join("--home-demo-projects-tidy-csv--"), "laptop");
    let (files, _) = arbor_store::list_session_files(
        &arbor_store::StoreConfig::single(&root, arbor_store::StoreKind::PerProject),
        &arbor_store::Scope::All,
    );
    let rows: Vec<Row> = files
        .iter()
        .map(|f| Row::new(arbor_session::info::scan_info(&f.path).unwrap()))
        .collect();
    let mut app = App::new("/home/demo/projects/webapp".into(), NOW);
    app.width = 110;
    app.height = 30;
    let mut devbox = HostStatus::new("devbox", Some(NOW - 60_000));
    devbox.synced = true;
    app.picker.remotes = Remotes {
        hosts: vec![devbox, HostStatus::new("laptop", Some(NOW - 3 * 3_600_000))],
    };
    common::drive(&mut app, AppEvent::Rows(rows));
    common::drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    common::drive(
        &mut app,
        AppEvent::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Tab,
            crossterm::event::KeyModifiers::NONE,
        )),
    );
    common::drive(
        &mut app,
        AppEvent::RemoteSynced {
            host: "laptop".into(),
            result: Err(
                "laptop could not be reached: ssh: connect to host laptop port 22: \
                         Connection refused"
                    .into(),
            ),
        },
    );
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, &app, &Theme::plain()))
        .unwrap();
    let screen = common::buffer_text(t.backend().buffer());
    assert!(
        screen.contains("@devbox") && !screen.contains("@devbox 1m"),
        "{screen}"
    );
    assert!(screen.contains("@laptop 3h"), "{screen}");
    assert!(screen.contains("as of 3h ago"), "{screen}");
    insta::assert_snapshot!("remote_rows", screen);
    // Wide, with the preview: a remote's row says whose it is and how old
    // the copy here is.
    for c in "host:laptop".chars() {
        common::drive(
            &mut app,
            AppEvent::Key(crossterm::event::KeyEvent::new(
                crossterm::event::KeyCode::Char(c),
                crossterm::event::KeyModifiers::NONE,
            )),
        );
    }
    app.width = 170;
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, &app, &Theme::plain()))
        .unwrap();
    let screen = common::buffer_text(t.backend().buffer());
    assert!(
        screen.contains("host     @laptop · a copy, synced 3h ago"),
        "{screen}"
    );
}

#[test]
fn through_a_real_sshd_the_remote_shell_gets_the_folder_exactly() {
    let Some(server) = crate::common::sshd::Sshd::start_or_skip(
        "through_a_real_sshd_the_remote_shell_gets_the_folder_exactly",
    ) else {
        return;
    };
    let w = World::new();
    let cwd = w.dir.path().join(format!("proj {HOSTILE}"));
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd_s = cwd.to_str().unwrap();
    let folder = arbor_store::encode_cwd(cwd_s);
    // The session on the "remote" (the server's home), and its copy here.
    let there = session(
        &server.home.join(".atomic/agent/sessions").join(&folder),
        "0199-sshd",
        cwd_s,
        "over ssh",
        7,
    );
    let copy = w
        .mirror("devbox")
        .join(&folder)
        .join(there.file_name().unwrap());
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&there, &copy).unwrap();
    w.settings(&format!(
        "[[remote]]\nname = \"devbox\"\nssh = \"{}\"\npaths = [\"~/.atomic/agent/sessions\"]\n",
        server.dest()
    ));
    // The agent there, by an absolute path (the login's PATH is sshd's).
    let ran = w.dir.path().join("ran");
    let agent = w.dir.path().join("agent");
    script(
        &agent,
        &format!(
            "#!/bin/sh\npwd > '{}'\nprintf '%s\\0' \"$@\" >> '{}'\n",
            ran.display(),
            ran.display()
        ),
    );
    let out = common::run(
        w.arbor()
            .arg("--last")
            .arg("--resume-cmd")
            .arg(format!(
                "{} --session {{path}} --in={{cwd}}",
                agent.display()
            ))
            .current_dir(&cwd)
            .env("ARBOR_SSH", server.ssh_command()),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ran = std::fs::read_to_string(&ran).unwrap();
    // `pwd`'s line (the folder holds a newline), then the arguments.
    let (dir, argv) = ran.split_at(cwd_s.len());
    assert_eq!(dir, cwd_s, "it ran in the session's folder there");
    let words: Vec<&str> = argv[1..].split('\0').collect();
    assert_eq!(
        words[..3],
        [
            "--session",
            there.to_str().unwrap(),
            &format!("--in={cwd_s}")
        ]
    );
    for d in [w.dir.path(), &cwd, &server.home] {
        assert!(!d.join("pwned1").exists() && !d.join("pwned2").exists());
    }
    // arbor is not on the server's PATH: a write is refused, naming the host.
    let out = common::run(
        w.arbor()
            .args(["rename", "--", copy.to_str().unwrap(), "x"])
            .env("ARBOR_SSH", server.ssh_command()),
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("arbor is not installed on devbox"), "{err}");
    assert!(!std::fs::read_to_string(&there)
        .unwrap()
        .contains("session_info"));
    // Installed there since: the next write finds it and renames there,
    // and the mirror is synced.
    let bin = server.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arbor"), bin.join("arbor")).unwrap();
    let out = common::run(
        w.arbor()
            .args(["rename", "--", copy.to_str().unwrap(), "named over ssh"])
            .env("ARBOR_SSH", server.ssh_command()),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let renamed = std::fs::read_to_string(&there).unwrap();
    assert!(
        renamed.lines().last().unwrap().contains("named over ssh"),
        "{renamed}"
    );
    assert_eq!(std::fs::read_to_string(&copy).unwrap(), renamed);
}

#[test]
fn a_remote_version_2_session_is_rewritten_there_when_the_picker_renames_it() {
    let w = World::new();
    let remote_home = w.dir.path().join("remote-home");
    let folder = remote_home.join(".atomic/agent/sessions/--w--");
    std::fs::create_dir_all(&folder).unwrap();
    let original = folder.join("2026-01-01T10-04-00-000Z_0199-old.jsonl");
    let ts = "2026-01-01T10:04:00.000Z";
    let header = serde_json::json!({"type": "session", "version": 2, "id": "0199-old",
        "timestamp": ts, "cwd": "/w"});
    let msg = serde_json::json!({"type": "message", "id": "m1", "parentId": null,
        "timestamp": ts,
        "message": {"role": "user", "content": [{"type": "text", "text": "an old one there"}]}});
    std::fs::write(&original, format!("{header}\n{msg}\n")).unwrap();
    let copy = w
        .mirror("devbox")
        .join("--w--")
        .join(original.file_name().unwrap());
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    std::fs::copy(&original, &copy).unwrap();
    let bin = w.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_arbor"), bin.join("arbor")).unwrap();
    w.settings(&format!(
        "[[remote]]\nname = \"devbox\"\ntransport = \"{}\"\npaths = [\"~/.atomic/agent/sessions\"]\n",
        local_transport(&remote_home, &bin)
    ));
    let mut cmd = pty::arbor();
    cmd.args(["--all", "--no-index"]);
    cmd.env("HOME", w.home());
    cmd.env("ARBOR_CACHE_DIR", w.cache());
    cmd.env("ARBOR_CONFIG", w.config());
    cmd.cwd(w.dir.path());
    let mut term = pty::Term::spawn(cmd, 24, 120);
    term.wait_for("the remote row", |t| t.contains("an old one there"));
    term.send(b"\x12");
    term.wait_for("the rename field", |t| t.contains("Rename:"));
    term.send(b"renamed there\r");
    // Asked here, as for a file of this machine: the mirror is not written.
    term.wait_for("the rewrite asked", |t| {
        t.contains("rewrite it as version 3")
    });
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(&original).unwrap()
    );
    term.send(b"\r");
    term.wait_for("renamed", |t| t.contains("Renamed to"));
    let there = std::fs::read_to_string(&original).unwrap();
    assert!(there.contains("\"version\":3"), "{there}");
    assert!(
        there.lines().last().unwrap().contains("renamed there"),
        "{there}"
    );
    assert!(folder
        .join("2026-01-01T10-04-00-000Z_0199-old.jsonl.bak")
        .exists());
    term.send(b"\x03");
    term.wait_exit("ctrl+c");
}

#[test]
fn with_no_local_sessions_the_syncs_fill_the_picker() {
    if !which("rsync") {
        eprintln!("empty_local: skipped: rsync is not installed");
        return;
    }
    let w = World::new();
    let remote_home = w.dir.path().join("remote-home");
    session(
        &remote_home.join(".atomic/agent/sessions/--w--"),
        "0199-there",
        "/w",
        "from the box",
        3,
    );
    // No local session at all, no mirror yet. The transport waits for
    // `go` before it lets rsync through (a shell on this machine whose home
    // is the "remote" home).
    let go = w.dir.path().join("go");
    w.settings(&format!(
        "[[remote]]\nname = \"box\"\n\
         transport = \"sh -c 'while [ ! -e {} ]; do sleep 0.2; done; exec env -i HOME={} PATH=/usr/bin:/bin \\\"$@\\\"' box\"\n\
         paths = [\"~/.atomic/agent/sessions\"]\n",
        go.display(),
        remote_home.display()
    ));
    let mut cmd = pty::arbor();
    cmd.args(["--no-index"]);
    cmd.env("HOME", w.home());
    cmd.env("ARBOR_CACHE_DIR", w.cache());
    cmd.env("ARBOR_CONFIG", w.config());
    cmd.cwd(w.dir.path());
    let mut term = pty::Term::spawn(cmd, 24, 120);
    let screen = term.wait_for("the empty list saying the sync", |t| {
        t.contains("No sessions here yet; syncing box")
    });
    assert!(!screen.contains("Demo store"), "{screen}");
    std::fs::write(&go, "").unwrap();
    term.wait_for("the remote's row", |t| t.contains("from the box"));
    term.send(b"\x03");
    term.wait_exit("ctrl+c");
}

#[test]
fn a_remote_named_by_host_is_listed_beside_a_given_store() {
    let (w, local, remote) = two_hosts();
    let paths = |args: &[&str]| -> Vec<String> {
        let store = w.local_store();
        json_lines(&common::run_ok(
            w.arbor()
                .args(["list", "--all", "--json", "--store"])
                .arg(&store)
                .args(args),
        ))
        .iter()
        .map(|v| v["path"].as_str().unwrap().to_string())
        .collect()
    };
    let (l, r) = (local.display().to_string(), remote.display().to_string());
    // The store given is what is listed; a remote asked for by name too.
    assert_eq!(paths(&[]), [l.as_str()]);
    assert_eq!(paths(&["--host", "devbox"]), [r.as_str()]);
    assert_eq!(paths(&["--host", "local"]), [l.as_str()]);
    assert_eq!(
        paths(&["--host", "devbox", "--host", "local"]),
        [r.as_str(), l.as_str()]
    );
}

/// Sets a file's time an hour back (a file changed seconds ago is taken
/// for one an agent is writing, and not moved).
fn an_hour_old(p: &Path) {
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

/// Two sessions on `devbox` (an hour old) and their mirror; the remote's
/// arbor is this build, each of its runs noted in the returned file.
fn remote_pair() -> (World, Vec<PathBuf>, Vec<PathBuf>, PathBuf) {
    let w = World::new();
    let remote_home = w.dir.path().join("remote-home");
    let mut originals = Vec::new();
    let mut copies = Vec::new();
    for (id, minute) in [("0199-one", 3), ("0199-two", 4)] {
        let original = session(
            &remote_home.join(".atomic/agent/sessions/--w--"),
            id,
            "/w",
            "work over there",
            minute,
        );
        an_hour_old(&original);
        let copy = w
            .mirror("devbox")
            .join("--w--")
            .join(original.file_name().unwrap());
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(&original, &copy).unwrap();
        an_hour_old(&copy);
        originals.push(original);
        copies.push(copy);
    }
    let bin = w.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let calls = w.dir.path().join("calls");
    script(
        &bin.join("arbor"),
        &format!(
            "#!/bin/sh\necho \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
            calls.display(),
            env!("CARGO_BIN_EXE_arbor")
        ),
    );
    w.settings(&format!(
        "[[remote]]\nname = \"devbox\"\ntransport = \"{}\"\npaths = [\"~/.atomic/agent/sessions\"]\n",
        local_transport(&remote_home, &bin)
    ));
    (w, originals, copies, calls)
}

#[test]
fn a_batch_of_a_remotes_sessions_goes_to_its_trash_in_one_call() {
    let (w, originals, copies, calls) = remote_pair();
    let out = common::run(w.arbor().args(["trash", "--json", "--"]).args(&copies));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for o in &originals {
        assert!(
            !o.exists(),
            "{} is still on the remote: {said}",
            o.display()
        );
    }
    let lines = json_lines(&said);
    assert!(
        lines
            .iter()
            .all(|v| v["status"] == "moved" && v["host"] == "devbox"),
        "{said}"
    );
    // One run of arbor there for the two.
    let ran = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(ran.lines().collect::<Vec<_>>(), ["trash"], "{ran}");
    // Restoring is the remote's to do: refused here, saying where and how.
    let out = common::run(w.arbor().args(["restore", "--"]).arg(&copies[0]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("in the trash on devbox") && err.contains("`arbor restore` on devbox"),
        "{err}"
    );
}

#[test]
fn the_pickers_marked_remote_rows_go_to_its_trash_in_one_call() {
    let (w, originals, _copies, calls) = remote_pair();
    let mut cmd = pty::arbor();
    cmd.args(["--all", "--no-index"]);
    cmd.env("HOME", w.home());
    cmd.env("ARBOR_CACHE_DIR", w.cache());
    cmd.env("ARBOR_CONFIG", w.config());
    cmd.cwd(w.dir.path());
    let mut term = pty::Term::spawn(cmd, 24, 120);
    term.wait_for("the two rows", |t| {
        t.matches("work over there").count() >= 2 && t.contains("@devbox")
    });
    // Mark the listed (alt+a), delete them (ctrl+d), confirm.
    term.send(b"\x1ba");
    term.send(b"\x04");
    term.wait_for("the question", |t| t.contains("marked sessions"));
    term.send(b"\r");
    term.wait_for("the rows gone", |t| !t.contains("work over there"));
    for o in &originals {
        assert!(!o.exists(), "{} is still on the remote", o.display());
    }
    let ran = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(ran.lines().collect::<Vec<_>>(), ["trash"], "{ran}");
    // The undo is the remote's to do: said, with the command to run there.
    term.send(b"\x1a");
    term.wait_for("the undo refused", |t| {
        let words = t.split_whitespace().collect::<Vec<_>>().join(" ");
        words.contains("in the trash on devbox") && words.contains("arbor restore")
    });
    term.send(b"\x03");
    term.wait_exit("ctrl+c");
}

#[test]
fn quitting_the_picker_stops_a_hung_sync() {
    if !which("rsync") {
        eprintln!("quit_hung: skipped: rsync is not installed");
        return;
    }
    let w = World::new();
    session(
        &w.local_store().join("--w--"),
        "0199-here",
        "/w",
        "the local one",
        5,
    );
    // A transport that never answers; its timeout would be ten minutes.
    let pidfile = w.dir.path().join("pid");
    let hang = w.dir.path().join("hang.sh");
    script(
        &hang,
        &format!(
            "#!/bin/sh\necho $$ > '{0}.tmp' && mv '{0}.tmp' '{0}'\nexec sleep 3600\n",
            pidfile.display()
        ),
    );
    w.settings(&format!(
        "[[remote]]\nname = \"hung\"\ntransport = \"{}\"\ntimeout = 600\n\
         paths = [\"~/.atomic/agent/sessions\"]\n",
        hang.display()
    ));
    let mut cmd = pty::arbor();
    cmd.args(["--all", "--no-index"]);
    cmd.env("HOME", w.home());
    cmd.env("ARBOR_CACHE_DIR", w.cache());
    cmd.env("ARBOR_CONFIG", w.config());
    cmd.cwd(w.dir.path());
    let mut term = pty::Term::spawn(cmd, 24, 120);
    term.wait_for("the row and the sync", |t| {
        t.contains("the local one") && t.contains("syncing hung")
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
    term.send(b"\x1b");
    term.wait_exit("esc");
    // Killed with rsync's group before arbor exited: gone, or a zombie
    // about to be reaped.
    let mut gone = false;
    for _ in 0..100 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.is_empty() || stat.contains(") Z ") {
            gone = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(gone, "the hung transport {pid} outlived the picker");
}
