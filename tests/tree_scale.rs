//! The tree screen at scale: it parses only what it draws (entries stay
//! lines of the file through moves, pages, folds, filters and searches),
//! searches through the search text built once per load (with the same
//! rows as reading entry by entry), and a search typed before that text is
//! built waits for it instead of reading every entry on the UI thread.

use crate::common;

use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::{json, Value};

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::tree::{Loaded, TreeState};
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::Agent;

const NOW: i64 = 1_795_953_600_000;

/// A session with branches, labels, tool calls and results, a Greek title.
fn session(dir: &Path, turns: usize) -> PathBuf {
    let mut lines = vec![
        json!({"type": "session", "version": 3, "id": "0199bbbb-0000-7000-8000-000000000001",
        "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/tmp/p"}),
    ];
    let mut parent = Value::Null;
    let mut n = 0;
    let ts = |n: usize| {
        format!(
            "2025-01-01T{:02}:{:02}:{:02}.000Z",
            n / 3600 % 24,
            n / 60 % 60,
            n % 60
        )
    };
    let mut users = Vec::new();
    for t in 0..turns {
        let mut push = |lines: &mut Vec<Value>, parent: &mut Value, body: Value| {
            n += 1;
            let id = format!("e{n}");
            let mut m = body.as_object().unwrap().clone();
            m.insert("id".into(), json!(id));
            m.insert("parentId".into(), parent.clone());
            m.insert("timestamp".into(), json!(ts(n)));
            lines.push(Value::Object(m));
            *parent = json!(id);
            id
        };
        if t % 7 == 6 && users.len() > 2 {
            // Back to an earlier prompt: a fork.
            parent = json!(users[users.len() / 2]);
        }
        let u = push(
            &mut lines,
            &mut parent,
            json!({"type": "message", "message": {"role": "user",
            "content": format!("Turn {t}: fix the ΣΑΣ parser error in module {}", t % 5)}}),
        );
        users.push(u.clone());
        for k in 0..3 {
            let call = format!("call{t}_{k}");
            let tool = ["read", "bash", "grep"][k];
            push(
                &mut lines,
                &mut parent,
                json!({"type": "message", "message": {"role": "assistant",
                "content": [{"type": "toolCall", "id": call, "name": tool,
                    "arguments": {"path": format!("src/m{t}.rs"), "command": "cargo test", "pattern": "Error"}}],
                "stopReason": "toolUse"}}),
            );
            push(
                &mut lines,
                &mut parent,
                json!({"type": "message", "message": {"role": "toolResult",
                "toolCallId": call, "toolName": "read",
                "content": [{"type": "text", "text": format!("line {k}\nwarning: unused Tree{t}")}]}}),
            );
        }
        push(
            &mut lines,
            &mut parent,
            json!({"type": "message", "message": {"role": "assistant",
            "content": [{"type": "text", "text": format!("Done with turn {t}. Ἀλήθεια ΣΑΣ.")}], "stopReason": "stop"}}),
        );
        if t % 5 == 0 {
            push(
                &mut lines,
                &mut parent,
                json!({"type": "label", "targetId": u, "label": format!("Checkpoint ΣΑΣ {t}")}),
            );
        }
    }
    let path = dir.join("s.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn key(app: &mut App, code: KeyCode, m: KeyModifiers) -> Vec<Effect> {
    app.update(AppEvent::Key(KeyEvent::new(code, m)))
}

fn draw(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    common::buffer_text(term.backend().buffer())
}

fn tree(app: &App) -> &TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

/// Opens the tree as the runtime does; the search text's effect is
/// returned, not performed.
fn open(path: &Path) -> (App, Vec<Effect>) {
    let mut app = App::new("/".into(), NOW);
    app.width = 140;
    app.height = 40;
    app.tree_only = true;
    let mut later = Vec::new();
    for ev in perform(Effect::OpenTree {
        path: path.to_path_buf(),
        agent: Agent::Atomic,
    }) {
        later.extend(app.update(ev));
    }
    assert!(matches!(app.mode, Mode::Tree(_)));
    (app, later)
}

fn perform_all(app: &mut App, fx: Vec<Effect>) {
    for f in fx {
        for ev in perform(f) {
            let more = app.update(ev);
            perform_all(app, more);
        }
    }
}

fn parsed(app: &App) -> usize {
    tree(app)
        .loaded
        .session
        .entries
        .iter()
        .filter(|e| e.raw.is_parsed())
        .count()
}

fn rows(app: &App) -> Vec<usize> {
    tree(app).rows.iter().map(|r| r.entry()).collect()
}

#[test]
fn the_tree_parses_only_what_it_draws() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 300);
    let (mut app, later) = open(&path);
    assert!(
        later.iter().any(|f| matches!(f, Effect::IndexTree(_))),
        "{later:?}"
    );
    perform_all(&mut app, later);
    assert!(draw(&app).contains("Session Tree"));
    let none = KeyModifiers::NONE;
    let ctrl = KeyModifiers::CONTROL;
    let keys: Vec<(KeyCode, KeyModifiers)> = vec![
        (KeyCode::Down, none),
        (KeyCode::PageUp, none),
        (KeyCode::Home, none),
        (KeyCode::Right, ctrl),
        (KeyCode::Left, ctrl),
        (KeyCode::Right, ctrl),
        (KeyCode::Char('t'), ctrl),
        (KeyCode::Char('u'), ctrl),
        (KeyCode::Char('l'), ctrl),
        (KeyCode::Char('a'), ctrl),
        (KeyCode::Char('o'), ctrl),
        (KeyCode::Char('d'), ctrl),
        (KeyCode::Char('e'), none),
        (KeyCode::Char('r'), none),
        (KeyCode::Char('r'), none),
        (KeyCode::Backspace, none),
        (KeyCode::Esc, none),
        (KeyCode::End, none),
        (KeyCode::Up, none),
        (KeyCode::F(2), none),
        (KeyCode::Down, none),
        (KeyCode::F(2), none),
    ];
    for (code, m) in keys {
        let fx = key(&mut app, code, m);
        perform_all(&mut app, fx);
        draw(&app);
        assert_eq!(
            parsed(&app),
            0,
            "after {code:?}: entries are read for a frame, not kept parsed"
        );
    }
    let t = tree(&app);
    assert!(t.loaded.session.entries.len() > 2000);
}

/// The rows of `query` typed key by key, through the search text (`app`)
/// and entry by entry (a state that never asked for the search text).
fn both_ways(path: &Path, query: &str) -> (Vec<usize>, Vec<usize>) {
    let (mut fast, later) = open(path);
    perform_all(&mut fast, later);
    let mut slow = App::new("/".into(), NOW);
    slow.width = 140;
    slow.height = 40;
    let loaded = Loaded::read(path, Agent::Atomic).unwrap();
    slow.mode = Mode::Tree(Box::new(TreeState::new(path.to_path_buf(), loaded, NOW)));
    for c in query.chars() {
        key(&mut fast, KeyCode::Char(c), KeyModifiers::NONE);
        key(&mut slow, KeyCode::Char(c), KeyModifiers::NONE);
        assert_eq!(rows(&fast), rows(&slow), "{query:?} at {c:?}");
    }
    (rows(&fast), rows(&slow))
}

#[test]
fn search_through_the_search_text_finds_what_reading_each_entry_finds() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 40);
    for q in [
        "σας checkpoint 3",
        "read: src/m3",
        "toolresult tree3",
        "zzz",
    ] {
        let (fast, slow) = both_ways(&path, q);
        assert_eq!(fast, slow, "{q}");
    }
    // And on the conformance corpus, with its odd shapes.
    let corpus = common::conformance_corpus();
    let mut n = 0;
    for f in walk(corpus.path()) {
        // The multi-megabyte adversarial files take minutes in a debug build.
        let small = std::fs::metadata(&f).is_ok_and(|m| m.len() < 1 << 20);
        if !small || arbor_session::read_session(&f).is_err() {
            continue;
        }
        both_ways(&f, "user [");
        n += 1;
    }
    assert!(n > 20);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|x| x == "jsonl") && p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn a_search_typed_before_the_search_text_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 30);
    let (mut app, later) = open(&path);
    let all = rows(&app);
    for c in "turn 2".chars() {
        key(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
    }
    // Nothing was read entry by entry: the rows wait, and say so.
    assert_eq!(rows(&app), all);
    assert_eq!(parsed(&app), 0);
    let screen = draw(&app);
    assert!(
        screen.contains("search: turn 2  (reading the session…)"),
        "{screen}"
    );
    // The text arrives: the search applies.
    perform_all(&mut app, later);
    let found = rows(&app);
    assert!(found.len() < all.len() && !found.is_empty(), "{found:?}");
    assert!(!draw(&app).contains("reading the session"));
    let (_, slow) = both_ways(&path, "turn 2");
    assert_eq!(found, slow);
}

/// Every search key's rows are the reference flattening (`view::flatten`,
/// entry by entry) of the entries the filter shows and every term
/// matches: a word where the label or search text holds it or the
/// picker's matcher finds it, any other term where the matcher finds it.
#[test]
fn search_rows_are_the_flattening_of_what_each_term_matches() {
    use arbor_search::Query;
    use arbor_session::view::{flatten, passes_filter, search_haystack, Filter};
    use std::collections::HashSet;
    let dir = tempfile::tempdir().unwrap();
    let path = session(dir.path(), 60);
    for (q, filter) in [
        ("\"parser error\" turn", 'd'),
        ("re:module\\s\\d checkpoint", 'd'),
        ("in:tools unused", 'd'),
        ("\"unused tree1\" warning", 'a'),
        ("σας done", 'a'),
        ("turn 1", 'u'),
        ("checkpoint", 'l'),
    ] {
        let (mut app, later) = open(&path);
        perform_all(&mut app, later);
        let fx = key(&mut app, KeyCode::Char(filter), KeyModifiers::CONTROL);
        perform_all(&mut app, fx);
        for c in q.chars() {
            let fx = key(&mut app, KeyCode::Char(c), KeyModifiers::NONE);
            perform_all(&mut app, fx);
            // Rows that change when an answer arrives keep the selection
            // on screen.
            let t = tree(&app);
            let height = arbor::ui::tree::list_height(app.width, app.height);
            if let Some(sel) = t.selected {
                assert!(
                    (t.scroll..t.scroll + height).contains(&sel),
                    "{q:?} at {c:?}: row {sel} off the screen (scroll {})",
                    t.scroll
                );
            }
        }
        let t = tree(&app);
        let (s, tr) = (&*t.loaded.session, &t.loaded.tree);
        let query = Query::parse(q);
        let bits = arbor_search::hits::session_term_bits(s, &query, &|| false).unwrap_or_default();
        let scoped = q.starts_with("in:");
        let visible = |i: usize| {
            let e = &s.entries[i];
            let labeled = tr.labels.contains_key(e.id.as_str());
            if !passes_filter(e, tr.leaf == Some(i), labeled, t.filter) {
                return false;
            }
            let hay = search_haystack(e, tr, &s.calls);
            query.terms.iter().enumerate().all(|(k, term)| {
                let found = bits.has(i, k);
                match term {
                    arbor_search::Term::Word { lower, .. } if !scoped => {
                        found || hay.contains(lower.as_str())
                    }
                    _ => found,
                }
            })
        };
        let want: Vec<usize> = flatten(&s.entries, tr, &visible, &HashSet::new())
            .iter()
            .map(|r| r.entry())
            .collect();
        assert_eq!(t.filter == Filter::Default, filter == 'd');
        assert!(!want.is_empty(), "{q:?} matches something");
        assert_eq!(rows(&app), want, "{q:?}");
    }
}
