//! The shell around arbor: completion scripts and manual pages that name
//! every command and flag the parser takes, and plain `list`, `stats` and
//! `labels` tables fitted to the terminal's width with an agent column.

use crate::common;

use std::path::Path;

use clap::CommandFactory as _;

/// Every visible command of arbor, and every visible long flag of each
/// (global ones included), from the parser itself.
fn commands_and_flags() -> Vec<(String, Vec<String>)> {
    let mut cmd = arbor::cli::Cli::command();
    cmd.build();
    let flags = |c: &clap::Command| -> Vec<String> {
        c.get_arguments()
            .filter(|a| !a.is_hide_set())
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect()
    };
    let mut out = vec![(String::new(), flags(&cmd))];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() != "help" {
            out.push((sub.get_name().to_string(), flags(sub)));
        }
    }
    out
}

#[test]
fn completions_name_every_command_and_flag() {
    let all = commands_and_flags();
    assert!(all.iter().any(|(c, _)| c == "completions"));
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = common::run_ok(common::arbor().args(["completions", shell]));
        for (name, flags) in &all {
            assert!(script.contains(name.as_str()), "{shell}: command {name}");
            for flag in flags {
                // fish names a long flag without its dashes (`-l older-than`).
                let bare = flag.trim_start_matches('-');
                let named = script.contains(flag.as_str())
                    || (shell == "fish" && script.contains(&format!("-l {bare}")));
                assert!(named, "{shell}: {name} {flag}");
            }
        }
    }
    let out = common::run(common::arbor().args(["completions", "tcsh"]));
    assert_eq!(out.status.code(), Some(2));
}

/// roff text as read: `\-` is a `-`, fonts dropped.
fn roff_text(s: &str) -> String {
    s.replace("\\-", "-")
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
}

#[test]
fn man_pages_name_every_command_and_flag() {
    let all = commands_and_flags();
    let page = roff_text(&common::run_ok(common::arbor().arg("man")));
    assert!(
        page.starts_with(".ie") || page.contains(".TH arbor 1"),
        "{page}"
    );
    for (name, _) in &all[1..] {
        assert!(page.contains(name.as_str()), "arbor(1) names {name}");
    }
    for flag in &all[0].1 {
        assert!(page.contains(flag.as_str()), "arbor(1) has {flag}");
    }
    // One page per command, each with its flags.
    let dir = tempfile::tempdir().unwrap();
    let written = common::run_ok(common::arbor().arg("man").arg("--dir").arg(dir.path()));
    assert_eq!(written.lines().count(), all.len(), "{written}");
    for (name, flags) in &all[1..] {
        let file = dir.path().join(format!("arbor-{name}.1"));
        let page = roff_text(&std::fs::read_to_string(&file).unwrap());
        for flag in flags {
            assert!(page.contains(flag.as_str()), "arbor-{name}(1) has {flag}");
        }
    }
    // They read no store: one that is not there does not stop them.
    common::run_ok(common::arbor().args(["--store", "/no/such/store", "man"]));
}

/// A home with an Atomic session (a long title, a label), and the Claude
/// Code and Codex fixture stores, every time moved to 2099 so that ages
/// read `now` whenever the test runs.
fn three_agents_home(home: &Path) {
    let sessions = home.join(".atomic/agent/sessions/--home-u-proj--");
    std::fs::create_dir_all(&sessions).unwrap();
    let lines = [
        r#"{"type":"session","version":3,"id":"019b0000-0000-7000-8000-0000000000a1","timestamp":"2099-01-01T10:00:00.000Z","cwd":"/home/u/proj"}"#,
        r#"{"type":"message","id":"m1","parentId":null,"timestamp":"2099-01-01T10:00:01.000Z","message":{"role":"user","content":"Make the flaky authentication test deterministic by injecting a clock into the session refresher","timestamp":4070944801000}}"#,
        r#"{"type":"message","id":"m2","parentId":"m1","timestamp":"2099-01-01T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Done: the refresher takes a Clock."}],"model":"claude-sonnet-4-5","usage":{"input":1200,"output":340,"cacheRead":51000,"cacheWrite":900,"totalTokens":53440,"cost":{"input":0.0036,"output":0.0051,"cacheRead":0.0153,"cacheWrite":0.0034,"total":0.0274}},"timestamp":4070944802000}}"#,
        r#"{"type":"label","id":"l1","parentId":"m2","timestamp":"2099-01-01T10:05:00.000Z","targetId":"m2","label":"clock-fix"}"#,
    ];
    std::fs::write(
        sessions.join("2099-01-01T10-00-00-000Z_019b0000-0000-7000-8000-0000000000a1.jsonl"),
        lines.join("\n") + "\n",
    )
    .unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents");
    common::copy_dir(&fixtures.join("claude"), &home.join(".claude"));
    common::copy_dir(&fixtures.join("codex"), &home.join(".codex"));
    let mut stack = vec![home.join(".claude"), home.join(".codex")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let t = std::fs::read_to_string(&p).unwrap();
                std::fs::write(&p, t.replace("\"2025-", "\"2099-")).unwrap();
            }
        }
    }
}

/// `list`, `stats` and `labels` as a terminal `columns` wide shows them
/// (`COLUMNS`, standard output being a pipe here).
fn tables(home: &Path, columns: Option<usize>) -> String {
    let mut text = String::new();
    for args in [
        &["list", "--all"][..],
        &["stats", "--all"],
        &["labels", "--all"],
    ] {
        let mut c = common::arbor();
        c.env("HOME", home).arg("--no-index").args(args);
        match columns {
            Some(w) => c.env("COLUMNS", w.to_string()),
            None => c.env_remove("COLUMNS"),
        };
        text.push_str(&format!("$ arbor {}\n", args.join(" ")));
        text.push_str(&common::run_ok(&mut c));
    }
    text
}

#[test]
fn tables_fit_80_and_120_columns_with_an_agent_column() {
    let dir = tempfile::tempdir().unwrap();
    three_agents_home(dir.path());
    for w in [80, 120] {
        let text = tables(dir.path(), Some(w));
        for line in text.lines() {
            let cells = unicode_width::UnicodeWidthStr::width(line);
            assert!(cells <= w, "{cells} > {w}: {line}");
        }
        for agent in ["Atomic", "Claude", "Codex"] {
            assert!(text.contains(agent), "{agent} at {w}:\n{text}");
        }
        insta::assert_snapshot!(format!("tables_{w}"), text);
    }
}

/// On a pipe with no `COLUMNS`, `list` keeps its fixed layout (a 70-cell
/// title, the whole id last) and gains only the agent column before the
/// id: `awk '{print $NF}'` still reads ids.
#[test]
fn a_pipe_keeps_the_fixed_layout() {
    let dir = tempfile::tempdir().unwrap();
    three_agents_home(dir.path());
    let text = tables(dir.path(), None);
    let list: Vec<&str> = text
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("$ "))
        .collect();
    assert!(!list.is_empty());
    for line in &list {
        let id = line.split_whitespace().last().unwrap();
        assert!(id.len() >= 36, "{line}");
        // The title column is 70 cells, then two spaces.
        let title: String = line.chars().take(72).collect();
        assert_eq!(
            unicode_width::UnicodeWidthStr::width(title.as_str()),
            72,
            "{line}"
        );
        assert!(title.ends_with("  "), "{line}");
    }
    assert!(list.iter().any(|l| l.contains("  Atomic  ")));
}
