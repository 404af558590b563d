//! `arbor remote add|list|remove|sync`: the settings file edited in place
//! (comments and other lines kept), the mirror's age and last error
//! listed, a mirror kept on remove unless `--purge`, and a sync over a
//! real sshd (`common::sshd`) with its failure said in one line.

use std::path::Path;
use std::process::Command;

use crate::common::{self, sshd::Sshd};

const SETTINGS: &str =
    "# my settings\ntheme = \"dark\" # kept\n\n[resume]\nclaude = \"claude --resume={id}\"\n";

fn arbor(config: &Path, cache: &Path) -> Command {
    let mut c = common::arbor();
    c.arg("--config").arg(config).env("ARBOR_CACHE_DIR", cache);
    c
}

#[test]
fn add_list_remove_keep_the_rest_of_the_settings_file() {
    let d = tempfile::tempdir().unwrap();
    let (config, cache) = (d.path().join("config.toml"), d.path().join("cache"));
    std::fs::write(&config, SETTINGS).unwrap();
    let out = common::run_ok(arbor(&config, &cache).args([
        "remote",
        "add",
        "devbox",
        "me@devbox",
        "--agent",
        "atomic",
        "--path",
        "~/work/sessions",
        "--timeout",
        "5",
    ]));
    assert!(
        out.starts_with("added the remote devbox (me@devbox)"),
        "{out}"
    );
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(text.starts_with(SETTINGS), "{text}");
    assert!(text.ends_with(
        "[[remote]]\nname = \"devbox\"\nssh = \"me@devbox\"\nagents = [\"atomic\"]\npaths = [\"~/work/sessions\"]\ntimeout = 5\n"
    ), "{text}");
    common::run_ok(arbor(&config, &cache).args([
        "remote",
        "add",
        "box",
        "--transport",
        "docker exec -i box",
    ]));
    let listed = common::run_ok(arbor(&config, &cache).args(["remote", "list"]));
    assert_eq!(
        listed,
        "devbox\tme@devbox\tnever synced\nbox\tdocker exec -i box\tnever synced\n"
    );
    let shown = common::run_ok(
        arbor(&config, &cache)
            .env("ARBOR_SSH", "ssh -4 -F '/a b'")
            .arg("config"),
    );
    assert!(
        shown.lines().any(|l| l.starts_with("ssh ")
            && l.contains("ssh -4 -F '/a b'")
            && l.ends_with("env ARBOR_SSH")),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("remotes ") && l.contains("devbox, box") && l.ends_with("file")),
        "{shown}"
    );
    let json = common::run_ok(arbor(&config, &cache).args(["remote", "list", "--json"]));
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["name"], "devbox");
    assert_eq!(first["paths"], serde_json::json!(["~/work/sessions"]));
    assert_eq!(first["timeout"], 5);
    assert_eq!(first["last_ok_ms"], serde_json::Value::Null);
    // A second remote of the same name, a name that is no folder name, a
    // destination that ssh would read as an option: refused, file unchanged.
    let before = std::fs::read_to_string(&config).unwrap();
    for args in [
        &["remote", "add", "devbox", "other"][..],
        &["remote", "add", "../x", "host"],
        &["remote", "add", "x", "--", "-oProxyCommand=sh"],
    ] {
        let o = arbor(&config, &cache).args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).lines().count(),
            1,
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
    // A mirror is kept unless --purge.
    let mirror = arbor_remote::mirror_dir(&cache, "devbox");
    std::fs::create_dir_all(mirror.join("home")).unwrap();
    let out = common::run_ok(arbor(&config, &cache).args(["remote", "remove", "devbox"]));
    assert!(out.contains("was kept (`--purge` deletes it)"), "{out}");
    assert!(mirror.exists());
    let o = arbor(&config, &cache)
        .args(["remote", "remove", "devbox"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("no remote named \"devbox\""));
    std::fs::create_dir_all(arbor_remote::mirror_dir(&cache, "box")).unwrap();
    let out = common::run_ok(arbor(&config, &cache).args(["remote", "remove", "box", "--purge"]));
    assert!(out.contains("was deleted"), "{out}");
    assert!(!arbor_remote::mirror_dir(&cache, "box").exists());
    assert_eq!(
        std::fs::read_to_string(&config).unwrap().trim_end(),
        SETTINGS.trim_end()
    );
}

#[test]
fn sync_over_ssh_then_a_failure_listed_with_the_mirror_kept() {
    let Some(server) = Sshd::start_or_skip("remote_cli_sync") else {
        return;
    };
    let store = server.dir.path().join("srv/sessions/--p--");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(
        store.join("s.jsonl"),
        "{\"type\":\"session\",\"id\":\"s\"}\n",
    )
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let (config, cache) = (d.path().join("config.toml"), d.path().join("cache"));
    let folder = server.dir.path().join("srv/sessions");
    common::run_ok(
        arbor(&config, &cache)
            .args(["remote", "add", "devbox", &server.dest(), "--path"])
            .arg(&folder),
    );
    let out = common::run_ok(
        arbor(&config, &cache)
            .env("ARBOR_SSH", server.ssh_command())
            .args(["remote", "sync"]),
    );
    assert!(out.starts_with("devbox: 1 file copied"), "{out}");
    let mirrored = arbor_remote::mirror_dir(&cache, "devbox")
        .join("root")
        .join(folder.strip_prefix("/").unwrap())
        .join("--p--/s.jsonl");
    assert!(mirrored.is_file());
    let again = common::run_ok(
        arbor(&config, &cache)
            .env("ARBOR_SSH", server.ssh_command())
            .args(["remote", "sync", "--json"]),
    );
    let v: serde_json::Value = serde_json::from_str(again.trim()).unwrap();
    assert_eq!(
        (v["name"].as_str(), v["files"].as_u64()),
        (Some("devbox"), Some(0)),
        "{v}"
    );
    assert!(
        v["bytes_received"].as_u64() > Some(0) && v["error"].is_null(),
        "{v}"
    );
    let json = common::run_ok(arbor(&config, &cache).args(["remote", "list", "--json"]));
    let v: serde_json::Value = serde_json::from_str(json.trim()).unwrap();
    assert!(v["last_ok_ms"].is_i64() && v["last_error"].is_null(), "{v}");
    // The same host on a port where nothing listens.
    let closed = server.ssh_command().replace(
        &format!("-p {}", server.port),
        &format!("-p {}", common::sshd::free_port()),
    );
    let o = arbor(&config, &cache)
        .env("ARBOR_SSH", closed)
        .args(["remote", "sync", "devbox"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    let first = err
        .lines()
        .find(|l| l.starts_with("arbor: remote devbox:"))
        .unwrap_or_default();
    assert!(
        first.contains(&server.dest()) && first.contains("connection refused"),
        "{err}"
    );
    assert!(mirrored.is_file(), "the last mirror is kept");
    let listed = common::run_ok(arbor(&config, &cache).args(["remote", "list"]));
    assert!(
        listed.contains("synced just now; last sync failed: ")
            && listed.contains("connection refused"),
        "{listed}"
    );
    let o = arbor(&config, &cache)
        .args(["remote", "sync", "nosuch"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("no remote named \"nosuch\""));
}
