//! The tree's search: as in Atomic, the rows become the matching entries
//! (every word a substring); what matched is marked in the rows and in the
//! detail pane; ↑/↓ (and Ctrl+N/Ctrl+P) step through the matches, wrapping;
//! the status line counts them.

use crate::common;

use std::path::Path;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;
use ratatui::Terminal;

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::tree::TreeState;
use arbor::ui::{App, AppEvent, Effect, Mode};
use arbor_session::Agent;

fn open(path: &Path, w: u16, h: u16) -> App {
    let mut app = App::new("/".into(), 0);
    app.width = w;
    app.height = h;
    let mut queue = vec![Effect::OpenTree {
        path: path.to_path_buf(),
        agent: Agent::Atomic,
    }];
    while let Some(fx) = queue.pop() {
        for ev in perform(fx) {
            queue.extend(
                app.update(ev)
                    .into_iter()
                    // The session's search text is built as the runtime does.
                    .filter(|f| matches!(f, Effect::OpenTree { .. } | Effect::IndexTree(_))),
            );
        }
    }
    assert!(matches!(app.mode, Mode::Tree(_)));
    app
}

fn tree(app: &App) -> &TreeState {
    match &app.mode {
        Mode::Tree(t) => t,
        Mode::Picker => panic!("not in the tree"),
    }
}

/// A key, and the search's reading of which entries match (the runtime
/// does it on a worker) fed back.
fn press(app: &mut App, code: KeyCode, m: KeyModifiers) {
    let mut queue = app.update(AppEvent::Key(KeyEvent::new(code, m)));
    while let Some(fx) = queue.pop() {
        if matches!(fx, Effect::TreeHits { .. }) {
            for ev in perform(fx) {
                queue.extend(app.update(ev));
            }
        }
    }
}

fn key(app: &mut App, code: KeyCode) {
    press(app, code, KeyModifiers::NONE);
}

fn type_text(app: &mut App, s: &str) {
    for c in s.chars() {
        key(app, KeyCode::Char(c));
    }
}

fn selected_id(app: &App) -> String {
    let t = tree(app);
    t.entry_id(t.selected_entry().unwrap()).to_string()
}

/// The screen, each line followed by a line of `~` under the cells drawn
/// highlighted (the plain theme underlines matches) when it has any.
fn screen_marked(app: &App) -> String {
    let mut term = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    term.draw(|f| arbor::ui::render(f, app, &Theme::plain()))
        .unwrap();
    let buf = term.backend().buffer();
    let text = common::buffer_text(buf);
    let mut out = String::new();
    for (y, line) in text.lines().enumerate() {
        out.push_str(line);
        out.push('\n');
        let marks: String = (0..buf.area.width)
            .map(|x| {
                let c = &buf[(x, y as u16)];
                if c.modifier.contains(Modifier::UNDERLINED) {
                    '~'
                } else {
                    ' '
                }
            })
            .collect();
        if marks.contains('~') {
            out.push_str(marks.trim_end());
            out.push('\n');
        }
    }
    out
}

fn status(s: &str) -> &str {
    s.lines()
        .find(|l| l.starts_with('('))
        .expect("a status line")
}

#[test]
fn matches_are_marked_in_rows_and_detail_and_counted() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 140, 36);
    type_text(&mut app, "fake timers");
    let t = tree(&app);
    let n = t.rows.len();
    assert!(n >= 3, "{n} matches");
    let s = screen_marked(&app);
    let k = t.selected.unwrap() + 1;
    assert!(
        status(&s).starts_with(&format!("({k}/{n}) · {n} matches")),
        "{s}"
    );
    // The branch summary row: both words marked where they occur.
    let row = s
        .lines()
        .position(|l| l.contains("[branch summary]: Tried option 1 (fake timers)"))
        .expect("the branch summary row");
    let line: Vec<char> = s.lines().nth(row).unwrap().chars().collect();
    let marks: Vec<char> = s.lines().nth(row + 1).unwrap().chars().collect();
    let at = s
        .lines()
        .nth(row)
        .unwrap()
        .chars()
        .collect::<String>()
        .find("(fake timers)")
        .map(|b| s.lines().nth(row).unwrap()[..b].chars().count())
        .unwrap();
    let marked: String = (at + 1..at + 12)
        .filter(|&i| marks.get(i) == Some(&'~'))
        .map(|i| line[i])
        .collect();
    assert_eq!(marked, "faketimers", "{s}");
    insta::assert_snapshot!("search_highlight", s);

    // No marks without a search.
    key(&mut app, KeyCode::Esc);
    assert!(!screen_marked(&app).contains('~'));
}

#[test]
fn arrows_and_ctrl_n_p_step_through_the_matches() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 30);
    let shown: Vec<String> = {
        let t = tree(&app);
        t.rows
            .iter()
            .map(|r| t.entry_id(r.entry()).to_string())
            .collect()
    };
    type_text(&mut app, "vitest");
    let t = tree(&app);
    let n = t.rows.len();
    assert!(n >= 4, "{n} matches");
    // Every row is a match: its haystack holds the word (as in Atomic), or
    // the picker's matcher finds it in the entry (a tool call's arguments).
    let ids: Vec<String> = t
        .rows
        .iter()
        .map(|r| t.entry_id(r.entry()).to_string())
        .collect();
    let hits = arbor_search::hits::entry_hits(
        &t.loaded.session.entries,
        &arbor_search::Query::parse("vitest"),
    );
    let mut beyond_atomic = 0;
    for r in &t.rows {
        let e = &t.loaded.session.entries[r.entry()];
        let calls = arbor_session::render::collect_tool_calls(&t.loaded.session.entries);
        let hay = arbor_session::view::search_haystack(e, &t.loaded.tree, &calls);
        let hit = hits.iter().any(|h| h.entry_id == e.id);
        assert!(hay.contains("vitest") || hit, "{}", e.id);
        beyond_atomic += usize::from(!hay.contains("vitest"));
    }
    // And every entry the matcher finds is a row, when the filter shows it.
    for h in hits.iter().filter(|h| shown.contains(&h.entry_id)) {
        assert!(ids.contains(&h.entry_id), "{}", h.entry_id);
    }
    eprintln!("{beyond_atomic} of {n} rows match beyond Atomic's haystack");
    // From the first match: ↓ walks them in order and wraps; ↑ goes back.
    key(&mut app, KeyCode::Home);
    let mut seen = vec![selected_id(&app)];
    for k in 1..n {
        key(&mut app, KeyCode::Down);
        seen.push(selected_id(&app));
        let s = screen_marked(&app);
        assert!(
            status(&s).starts_with(&format!("({}/{n}) · {n} matches", k + 1)),
            "{s}"
        );
    }
    assert_eq!(seen, ids);
    key(&mut app, KeyCode::Down);
    assert_eq!(selected_id(&app), ids[0], "wraps to the first match");
    key(&mut app, KeyCode::Up);
    assert_eq!(selected_id(&app), ids[n - 1], "and back to the last");
    // Ctrl+N / Ctrl+P do the same without leaving the search field…
    press(&mut app, KeyCode::Char('n'), KeyModifiers::CONTROL);
    assert_eq!(selected_id(&app), ids[0]);
    press(&mut app, KeyCode::Char('n'), KeyModifiers::CONTROL);
    assert_eq!(selected_id(&app), ids[1]);
    press(&mut app, KeyCode::Char('p'), KeyModifiers::CONTROL);
    assert_eq!(selected_id(&app), ids[0]);
    assert_eq!(tree(&app).search.text(), "vitest");
    // …while a plain n types.
    key(&mut app, KeyCode::Char('n'));
    assert_eq!(tree(&app).search.text(), "vitestn");
    key(&mut app, KeyCode::Backspace);
    // Esc clears the search; the selection stays on the match.
    press(&mut app, KeyCode::Char('n'), KeyModifiers::CONTROL);
    let at = selected_id(&app);
    key(&mut app, KeyCode::Esc);
    assert_eq!(selected_id(&app), at);
    assert!(!status(&screen_marked(&app)).contains("match"));
}

#[test]
fn no_match_says_so() {
    let store = common::demo_store();
    let path = common::find_session(&store.path().join("sessions"), "01a1fd62");
    let mut app = open(&path, 100, 30);
    type_text(&mut app, "zzzqqq");
    let s = screen_marked(&app);
    assert!(s.contains("No entries found"), "{s}");
    assert!(status(&s).starts_with("(0/0) · no match"), "{s}");
}
