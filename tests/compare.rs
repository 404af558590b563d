//! `arbor diff` and the comparison model: two branches of one session from
//! their common ancestor, turn by turn, with what their tools did.

use std::path::Path;

use crate::common::{arbor, demo_store, find_session, run, run_ok, terminal_controls};

/// The demo session with two branches after `3ece2523`: fake timers
/// (abandoned, ending at `ece135bc`) and the injected clock (ending at
/// `7ea66ad8`, after a branch summary).
const SESSION: &str = "01a1fd62";

fn diff(store: &Path, args: &[&str]) -> String {
    run_ok(
        arbor()
            .arg("--store")
            .arg(store)
            .args(["diff", SESSION])
            .args(args),
    )
}

#[test]
fn diff_of_the_demo_branches_side_by_side_and_stacked() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    // Not a terminal: 120 columns, side by side.
    let wide = diff(&store, &["ece135bc", "7ea66ad8"]);
    assert!(wide.contains("Common ancestor 3ece2523"), "{wide}");
    assert!(
        wide.contains(
            "tools: A ran 3 tools (edit ×2, bash), B ran 6 (read, edit ×2, write, bash ×2)"
        ),
        "{wide}"
    );
    // User message beside user message.
    let turn1 = wide
        .lines()
        .find(|l| l.starts_with("user: Let's keep it simple"))
        .unwrap_or_else(|| panic!("{wide}"));
    assert!(
        turn1.contains(" │ user: OK, go with the injectable clock"),
        "{turn1}"
    );
    assert!(wide.lines().all(|l| l.chars().count() <= 120), "{wide}");
    insta::assert_snapshot!("diff_demo_120", wide);
    let narrow = diff(&store, &["ece135bc", "7ea66ad8", "--width", "80"]);
    assert!(narrow.lines().all(|l| l.chars().count() <= 80), "{narrow}");
    assert!(
        narrow.contains("A │ user: Let's keep it simple"),
        "{narrow}"
    );
    assert!(
        narrow.contains("B │ user: OK, go with the injectable"),
        "{narrow}"
    );
    insta::assert_snapshot!("diff_demo_80", narrow);
}

#[test]
fn diff_json_has_the_ancestor_then_the_turns_with_both_sides() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let out = diff(&store, &["ece135bc", "7ea66ad8", "--json"]);
    assert_eq!(out.lines().count(), 1, "one object");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys[0], "commonAncestor");
    assert_eq!(keys.last().unwrap().as_str(), "turns");
    assert_eq!(v["commonAncestor"], "3ece2523");
    assert_eq!(v["a"]["id"], "ece135bc");
    assert_eq!(v["b"]["id"], "7ea66ad8");
    let turns = v["turns"].as_array().unwrap();
    // Turn 0: what B has before its first user message (the branch summary).
    assert_eq!(turns[0]["turn"], 0);
    assert!(turns[0]["a"].is_null());
    assert_eq!(turns[0]["b"]["items"][0]["kind"], "summary");
    assert_eq!(turns[1]["a"]["items"][0]["kind"], "user");
    assert_eq!(turns[1]["b"]["items"][0]["kind"], "user");
    assert_eq!(turns[1]["a"]["items"][0]["id"], "2ef18a65");
    assert_eq!(turns[1]["b"]["items"][0]["id"], "08f89399");
    // A tool call carries its arguments and its result.
    let bash = turns[1]["a"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["tool"]["name"] == "bash")
        .unwrap();
    assert_eq!(bash["tool"]["result"]["isError"], true);
    assert_eq!(
        bash["tool"]["arguments"]["command"],
        "npx vitest run src/auth/session.test.ts"
    );
    // Turn 2 exists on B only.
    assert!(turns[2]["a"].is_null());
    assert_eq!(turns.len(), 3);
}

#[test]
fn diff_of_an_unknown_entry_fails_with_a_reason() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let out = run(arbor()
        .arg("--store")
        .arg(&store)
        .args(["diff", SESSION, "ece135bc", "nope"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no entry nope"), "{err}");
}

/// A session whose two branches run the same command with different
/// results, with escape sequences in every text the comparison shows.
fn hostile_session(dir: &Path) -> std::path::PathBuf {
    let project = dir.join("sessions").join("--tmp-x--");
    std::fs::create_dir_all(&project).unwrap();
    let path = project.join("2026-11-01T00-00-00-000Z_0000aaaa-0000-7000-8000-000000000001.jsonl");
    let ts = |s: u32| format!("2026-11-01T00:00:{s:02}.000Z");
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[31mred\u{9b}2J\u{202e}";
    let msg = |id: &str, parent: Option<&str>, s: u32, m: serde_json::Value| serde_json::json!({"type":"message","id":id,"parentId":parent,"timestamp":ts(s),"message":m});
    let call = |id: &str, text: &str| {
        serde_json::json!({"role":"assistant","content":[
            {"type":"text","text":text},
            {"type":"toolCall","id":id,"name":"bash","arguments":{"command":format!("npm test {evil}")}}]})
    };
    let result = |id: &str, err: bool, text: &str| {
        serde_json::json!({"role":"toolResult","toolCallId":id,"toolName":"bash",
            "content":[{"type":"text","text":text}],"isError":err})
    };
    let lines = [
        serde_json::json!({"type":"session","version":3,"id":"0000aaaa-0000-7000-8000-000000000001",
            "timestamp":ts(0),"cwd":"/tmp/x"}),
        msg(
            "u0",
            None,
            1,
            serde_json::json!({"role":"user","content":format!("start {evil}")}),
        ),
        msg(
            "a0",
            Some("u0"),
            2,
            serde_json::json!({"role":"assistant","content":[{"type":"text","text":"ok"}]}),
        ),
        msg(
            "ua",
            Some("a0"),
            3,
            serde_json::json!({"role":"user","content":format!("left {evil}")}),
        ),
        msg("aa", Some("ua"), 4, call("ca", &format!("running {evil}"))),
        msg(
            "ra",
            Some("aa"),
            5,
            result("ca", true, &format!("1 failed {evil}")),
        ),
        msg(
            "ub",
            Some("a0"),
            6,
            serde_json::json!({"role":"user","content":format!("right {evil}")}),
        ),
        msg("ab", Some("ub"), 7, call("cb", "running")),
        msg("rb", Some("ab"), 8, result("cb", false, "all passed")),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn diff_names_results_that_differ_and_never_prints_session_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let path = hostile_session(dir.path());
    for width in ["80", "160"] {
        let out = run_ok(
            arbor()
                .arg("diff")
                .arg(&path)
                .args(["ra", "rb", "--width", width]),
        );
        assert_eq!(terminal_controls(&out), Vec::<char>::new(), "{out:?}");
        assert!(!out.contains('\u{202e}'), "bidi override: {out}");
        assert!(out.contains("Common ancestor a0"), "{out}");
        assert!(
            out.contains("tools: A ran 1 tool (bash), B ran 1 (bash)"),
            "{out}"
        );
        // Notes wrap (continuations indented by two).
        let joined = out.replace("\n  ", " ");
        assert!(
            joined.contains("different result: [bash: npm test")
                && joined.contains("(A failed, B succeeded)"),
            "{out}"
        );
    }
    // JSON keeps the text exact, as escapes.
    let out = run_ok(arbor().arg("diff").arg(&path).args(["ra", "rb", "--json"]));
    assert_eq!(terminal_controls(&out), Vec::<char>::new(), "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["turns"][0]["a"]["items"][0]["text"]
        .as_str()
        .unwrap()
        .contains("\u{1b}]0;pwned"));
    assert_eq!(
        v["turns"][0]["differingResults"][0]["how"],
        "A failed, B succeeded"
    );
}

#[test]
fn diff_of_an_entry_and_its_ancestor() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let path = find_session(&store, SESSION);
    // B is on A's path: the ancestor is B itself, B has nothing after it.
    let out = run_ok(
        arbor()
            .arg("diff")
            .arg(&path)
            .args(["7ea66ad8", "e89ed3f9", "--width", "80"]),
    );
    assert!(out.contains("Common ancestor e89ed3f9"), "{out}");
    assert!(
        out.contains("B e89ed3f9: 0 entries, 0 turns, 0 tools"),
        "{out}"
    );
    assert!(out.contains("B │ — no such turn"), "{out}");
    let same = run_ok(
        arbor()
            .arg("diff")
            .arg(&path)
            .args(["7ea66ad8", "7ea66ad8"]),
    );
    assert!(same.contains("The two entries are the same"), "{same}");
}

/// Entry ids as git takes commit ids: a unique prefix names its entry, an
/// ambiguous one fails naming the candidates.
#[test]
fn diff_takes_unique_entry_id_prefixes() {
    let dir = demo_store();
    let store = dir.path().join("sessions");
    let whole = diff(&store, &["ece135bc", "7ea66ad8"]);
    assert_eq!(diff(&store, &["ece1", "7e"]), whole);
    let out = run(arbor()
        .arg("--store")
        .arg(&store)
        .args(["diff", SESSION, "c0", "7ea66ad8"]));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "entry id \"c0\" is ambiguous: 2 entries start with it (c074a644, c09a4c26); give more of it"
        ),
        "{err}"
    );
    // `context --leaf` takes them too.
    let ctx = |leaf: &str| {
        run_ok(
            arbor()
                .arg("--store")
                .arg(&store)
                .args(["context", SESSION, "--leaf", leaf]),
        )
    };
    assert_eq!(ctx("ece1"), ctx("ece135bc"));
    // At the root: one message, said in the singular.
    assert!(
        ctx("1b2ba06b")
            .lines()
            .next()
            .unwrap()
            .contains(" · 1 message · ~"),
        "{}",
        ctx("1b2ba06b")
    );
}
