//! Whose session a file is (Atomic or the legacy pi store) is decided by the
//! store root it was found under and survives every way a row is read
//! again: a rename, the watcher, an index refresh, a plain scan.

use crate::common;

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::Value;

use crate::common::{arbor, run_ok};
use arbor::ui::picker::Row;
use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect, Outcome};
use arbor_session::Agent;
use arbor_store::{list_session_files, Scope, StoreConfig};

const CWD: &str = "/home/u/proj";
const ID: &str = "0199bbbb-0000-7000-8000-000000000001";

/// A session whose context differs by flavour: its compaction has no
/// `verbatim-lines` strategy, so Atomic ignores it and pi applies it.
fn session_text() -> String {
    let msg = |id: &str, parent: &str, role: &str, text: &str, ts: &str| {
        serde_json::json!({
            "type": "message", "id": id, "parentId": parent, "timestamp": ts,
            "message": {"role": role, "content": [{"type": "text", "text": text}]},
        })
        .to_string()
    };
    [
        serde_json::json!({"type": "session", "version": 3, "id": ID,
            "timestamp": "2026-01-01T10:00:00.000Z", "cwd": CWD})
        .to_string(),
        msg(
            "m1",
            "",
            "user",
            "the old question",
            "2026-01-01T10:00:01.000Z",
        )
        .replace("\"parentId\":\"\"", "\"parentId\":null"),
        msg(
            "m2",
            "m1",
            "assistant",
            "the old answer",
            "2026-01-01T10:00:02.000Z",
        ),
        serde_json::json!({"type": "compaction", "id": "c1", "parentId": "m2",
            "timestamp": "2026-01-01T10:00:03.000Z", "summary": "what happened before",
            "firstKeptEntryId": "m2", "tokensBefore": 100})
        .to_string(),
        msg(
            "m3",
            "c1",
            "user",
            "the new question",
            "2026-01-01T10:00:04.000Z",
        ),
    ]
    .join("\n")
        + "\n"
}

/// A home with an Atomic store (one session) and the legacy pi store (one).
struct Homes {
    dir: tempfile::TempDir,
}

impl Homes {
    fn new() -> Homes {
        let dir = tempfile::tempdir().unwrap();
        let h = Homes { dir };
        for root in [h.pi_root(), h.atomic_root()] {
            let folder = root.join("--home-u-proj--");
            std::fs::create_dir_all(&folder).unwrap();
            let id = if root == h.pi_root() {
                ID
            } else {
                "0199aaaa-0000-7000-8000-000000000001"
            };
            let text = session_text().replace(ID, id);
            std::fs::write(
                folder.join(format!("2026-01-01T10-00-00-000Z_{id}.jsonl")),
                text,
            )
            .unwrap();
        }
        h
    }
    fn home(&self) -> &Path {
        self.dir.path()
    }
    fn pi_root(&self) -> PathBuf {
        self.home().join(".pi/agent/sessions")
    }
    fn atomic_root(&self) -> PathBuf {
        self.home().join("atomic/sessions")
    }
    fn pi_file(&self) -> PathBuf {
        self.pi_root()
            .join("--home-u-proj--")
            .join(format!("2026-01-01T10-00-00-000Z_{ID}.jsonl"))
    }
    fn config(&self) -> StoreConfig {
        StoreConfig {
            roots: vec![
                arbor_store::StoreRoot {
                    path: self.atomic_root(),
                    kind: arbor_store::StoreKind::PerProject,
                    agent: Agent::Atomic,
                    host: None,
                },
                arbor_store::StoreRoot {
                    path: self.pi_root(),
                    kind: arbor_store::StoreKind::PerProject,
                    agent: Agent::Pi,
                    host: None,
                },
            ],
        }
    }
    /// arbor with this home: both stores found as a user's would be.
    fn arbor(&self, args: &[&str]) -> String {
        run_ok(
            arbor()
                .env("HOME", self.home())
                .env("ATOMIC_CODING_AGENT_DIR", self.home().join("atomic"))
                .env("ARBOR_CACHE_DIR", self.home().join("cache"))
                .args(args),
        )
    }
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn agent_of<'a>(rows: &'a [Value], id: &str) -> &'a Value {
    &rows.iter().find(|r| r["id"] == id).expect("row listed")["agent"]
}

#[test]
fn pi_sessions_stay_pi_after_a_rename_and_any_refresh() {
    let h = Homes::new();
    let pi = h.pi_file();
    let pi_s = pi.to_str().unwrap();
    let pi_context = h.arbor(&["context", pi_s, "--json", "--flavor", "pi"]);
    let atomic_context = h.arbor(&["context", pi_s, "--json", "--flavor", "atomic"]);
    assert_ne!(
        json_lines(&pi_context)[0]["messages"],
        json_lines(&atomic_context)[0]["messages"],
        "the fixture's context depends on the flavour"
    );
    let check = |when: &str| {
        for no_index in [false, true] {
            let mut args = vec!["list", "--all", "--json"];
            if no_index {
                args.push("--no-index");
            }
            let rows = json_lines(&h.arbor(&args));
            assert_eq!(agent_of(&rows, ID), "pi", "{when} (no index: {no_index})");
            assert_eq!(
                agent_of(&rows, "0199aaaa-0000-7000-8000-000000000001"),
                "atomic",
                "{when}"
            );
        }
        for session in [ID, pi_s] {
            let v = &json_lines(&h.arbor(&["context", session, "--json"]))[0];
            assert_eq!(v["flavor"], "pi", "{when}: {session}");
            assert_eq!(
                v["messages"],
                json_lines(&pi_context)[0]["messages"],
                "{when}"
            );
        }
    };
    check("indexed");
    h.arbor(&["rename", ID, "Renamed"]);
    // The watcher's path (re-reads the appended line), then a full refresh.
    h.arbor(&["index", "--file", pi_s]);
    check("after a rename and the watcher's update");
    h.arbor(&["index"]);
    let rows = json_lines(&h.arbor(&["list", "--all", "--json"]));
    assert_eq!(
        rows.iter().find(|r| r["id"] == ID).unwrap()["name"],
        "Renamed"
    );
    check("after a refresh");
    h.arbor(&["index", "--rebuild"]);
    check("after a rebuild");
    // `index --file` reports the row as its agent's.
    let v = &json_lines(&h.arbor(&["index", "--file", pi_s, "--json"]))[0];
    assert_eq!(v["row"]["agent"], "pi");
}

fn pi_rows(h: &Homes) -> Vec<Row> {
    let (files, _) = list_session_files(&h.config(), &Scope::All);
    files
        .iter()
        .map(|f| Row::new(arbor_store::listing::scan_file(f, true).unwrap()))
        .collect()
}

fn picker(h: &Homes) -> App {
    let mut app = App::new(CWD.into(), 1_795_953_600_000);
    app.width = 120;
    app.height = 20;
    app.store = h.config();
    app.update(AppEvent::Rows(pi_rows(h)));
    app.update(AppEvent::LoadFinished { problems: vec![] });
    app
}

fn select_pi(app: &mut App) {
    for _ in 0..2 {
        if app.picker.selected_row().unwrap().id() == ID {
            return;
        }
        app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::Down,
            KeyModifiers::NONE,
        )));
    }
    assert_eq!(app.picker.selected_row().unwrap().id(), ID);
}

#[test]
fn the_watcher_keeps_pi_rows_pi() {
    let h = Homes::new();
    let mut app = picker(&h);
    let pi = h.pi_file();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&pi)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(
                b"{\"type\":\"session_info\",\"id\":\"n1\",\"parentId\":\"m3\",\"timestamp\":\"2026-01-01T10:00:05.000Z\",\"name\":\"Live\"}\n",
            )
        })
        .unwrap();
    let fx = app.update(AppEvent::FsChanged(vec![pi.clone()]));
    let [Effect::Rescan(files)] = &fx[..] else {
        panic!("{fx:?}")
    };
    assert_eq!(files[0].agent, Agent::Pi);
    for ev in perform(fx[0].clone()) {
        app.update(ev);
    }
    let row = &app.picker.list.rows[app.picker.row_index(&pi).unwrap()];
    assert_eq!(
        (row.info.agent, row.display_name()),
        (Agent::Pi, Some("Live"))
    );
}

#[test]
fn pi_rows_are_tagged_opened_and_resumed_as_pi() {
    let h = Homes::new();
    let mut app = picker(&h);
    select_pi(&mut app);
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, &app, &Theme::plain()))
        .unwrap();
    let text = common::buffer_text(t.backend().buffer());
    let tagged: Vec<&str> = text.lines().filter(|l| l.contains(" pi  ")).collect();
    assert_eq!(tagged.len(), 1, "one row tagged pi:\n{text}");
    assert!(tagged[0].starts_with("›"), "the selected pi row:\n{text}");
    assert!(
        text.lines().any(|l| l.ends_with("│ agent    pi")),
        "the preview says so:\n{text}"
    );
    let fx = app.update(AppEvent::Key(KeyEvent::new(
        KeyCode::Char('t'),
        KeyModifiers::CONTROL,
    )));
    assert!(
        matches!(
            &fx[..],
            [Effect::OpenTree {
                agent: Agent::Pi,
                ..
            }]
        ),
        "{fx:?}"
    );
    let mut app = picker(&h);
    select_pi(&mut app);
    let fx = app.update(AppEvent::Key(KeyEvent::new(
        KeyCode::Enter,
        KeyModifiers::NONE,
    )));
    assert_eq!(
        fx,
        vec![Effect::Exit(Outcome::Resume {
            path: h.pi_file(),
            id: ID.into(),
            cwd: CWD.into(),
            agent: Agent::Pi,
        })]
    );
}
