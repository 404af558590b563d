//! The picker's keys and mouse, while no dialog is up (a dialog's keys
//! are its own: see [`super::dialogs`]).

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEventKind};
use ratatui::layout::Rect;

use super::dialogs::{self, delete, labels, rename};
use super::state::{Dialog, PickerState, Scope, StatusKind};
use super::update::search::query_edited;
use crate::ui::app::{App, Effect, Outcome};
use crate::ui::input::Edit;
use crate::ui::keymap::{
    alt, bind, bind_when_empty, ch, ctrl, key, with, Keymap, Named, CANCEL_ID, CONFIRM_ID,
    FIRST_ID, LAST_ID,
};
use arbor_search::hits::looks_at_entries;

/// A key: its effects, or `None` when it did nothing (not a key of the
/// screen or of the prompt up, or dropped while a question waits).
pub fn on_key(app: &mut App, k: KeyEvent) -> Option<Vec<Effect>> {
    if app.picker.dialog.open != Dialog::None {
        return dialogs::on_key(app, k);
    }
    let p = &mut app.picker;
    match KEYS.action(&k, p.search.query.is_empty()) {
        Some(action) => return Some(act(app, action)),
        // Everything else edits the query (Home/End stay the list's:
        // Ctrl+A/E go to the query's start and end).
        None => {
            let before = p.search.query.text().to_string();
            match p.search.query.handle_key(&k) {
                Edit::Ignored => return None,
                Edit::Moved => {}
                Edit::Changed => return Some(query_edited(p, &before)),
            }
        }
    }
    Some(Vec::new())
}

/// What the picker's keys do (see [`KEYS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    First,
    Last,
    Resume,
    Scope,
    Sort,
    Named,
    Paths,
    Rename,
    Delete,
    Undo,
    Tree,
    NextMatch,
    PrevMatch,
    Labels,
    Mark,
    MarkAll,
    Unmark,
    Internal,
    Preview,
    Help,
    Quit,
}

impl Named for Action {
    /// Atomic's /resume ids where Atomic has the action, arbor's own
    /// (`arbor.picker.*`) where it does not.
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            Action::Up => "tui.select.up",
            Action::Down => "tui.select.down",
            Action::PageUp => "tui.select.pageUp",
            Action::PageDown => "tui.select.pageDown",
            Action::First => FIRST_ID,
            Action::Last => LAST_ID,
            Action::Resume => CONFIRM_ID,
            Action::Scope => "tui.input.tab",
            Action::Sort => "app.session.toggleSort",
            Action::Named => "app.session.toggleNamedFilter",
            Action::Paths => "app.session.togglePath",
            Action::Rename => "app.session.rename",
            Action::Delete => "app.session.delete",
            Action::Undo => "arbor.picker.undo",
            Action::Tree => "arbor.picker.tree",
            Action::NextMatch => "arbor.picker.nextMatch",
            Action::PrevMatch => "arbor.picker.previousMatch",
            Action::Labels => "arbor.picker.labels",
            Action::Mark => "arbor.picker.mark",
            Action::MarkAll => "arbor.picker.markAll",
            Action::Unmark => "arbor.picker.clearMarks",
            Action::Internal => "arbor.picker.internal",
            Action::Preview => "arbor.picker.preview",
            Action::Help => "arbor.picker.help",
            Action::Quit => CANCEL_ID,
        })
    }
}

/// The picker's keys: dispatch, the help (F1) and the footer's key names
/// all come from here. Keys not listed go to the query's field.
pub const KEYS: Keymap<Action> = Keymap(&[
    bind(
        &[
            (key(KeyCode::Up), Action::Up),
            (key(KeyCode::Down), Action::Down),
            (key(KeyCode::PageUp), Action::PageUp),
            (key(KeyCode::PageDown), Action::PageDown),
            (key(KeyCode::Home), Action::First),
            (key(KeyCode::End), Action::Last),
        ],
        "move, first/last; wheel; a double click picks",
    ),
    bind(
        &[(key(KeyCode::Enter), Action::Resume)],
        "resume the session (--print: print its path)",
    ),
    bind(
        &[
            (key(KeyCode::Tab), Action::Scope),
            (key(KeyCode::BackTab).quiet(), Action::Scope),
        ],
        "current folder ↔ all projects",
    ),
    bind(
        &[(ctrl('s'), Action::Sort)],
        "sort: threaded → recent → relevance",
    ),
    bind(&[(ctrl('n'), Action::Named)], "named sessions only"),
    bind(&[(ctrl('p'), Action::Paths)], "show file paths"),
    bind(&[(ctrl('r'), Action::Rename)], "rename the session"),
    // Space is the query's: a query's words are typed with it. It marks
    // only while the query is empty (as `?` opens the help); Ctrl+Space
    // marks whatever the query holds.
    bind(
        &[(
            with(KeyCode::Char(' '), KeyModifiers::CONTROL),
            Action::Mark,
        )],
        "mark/unmark for a batch delete, then next",
    ),
    bind_when_empty(
        &[(ch(' ').as_id("arbor.picker.markWhenEmpty"), Action::Mark)],
        "mark/unmark, when the query is empty",
    ),
    bind(
        &[(alt('a'), Action::MarkAll), (alt('u'), Action::Unmark)],
        "mark every session listed / clear the marks",
    ),
    bind(
        &[(ctrl('d'), Action::Delete)],
        "delete to the trash (the marked ones, if any)",
    ),
    // Terminals send Ctrl+Backspace as either.
    bind_when_empty(
        &[
            (
                with(KeyCode::Backspace, KeyModifiers::CONTROL).as_id(NONINVASIVE),
                Action::Delete,
            ),
            (ctrl('h').as_id(NONINVASIVE), Action::Delete),
        ],
        "delete to the trash, when the query is empty",
    ),
    bind(
        &[(ctrl('z'), Action::Undo)],
        "undo the last delete or batch (restores all)",
    ),
    bind(
        &[(ctrl('t'), Action::Tree)],
        "branch tree; with a query, at the picked match",
    ),
    bind(
        &[(alt('n'), Action::NextMatch), (alt('p'), Action::PrevMatch)],
        "next / previous match in the preview",
    ),
    bind(
        &[(ctrl('l'), Action::Labels)],
        "labels here; enter opens the tree at one",
    ),
    bind(
        &[(alt('i'), Action::Internal)],
        "show internal workflow sessions",
    ),
    bind(
        &[(key(KeyCode::F(2)), Action::Preview)],
        "preview pane on/off",
    ),
    bind(&[(key(KeyCode::F(1)), Action::Help)], "this help"),
    bind_when_empty(
        &[(ch('?').as_id("arbor.picker.helpWhenEmpty"), Action::Help)],
        "this help, when the query is empty",
    ),
    bind(
        &[(key(KeyCode::Esc), Action::Quit), (ctrl('c'), Action::Quit)],
        "close",
    ),
]);

/// Atomic's delete key for when the query is empty.
const NONINVASIVE: &str = "app.session.deleteNoninvasive";

fn act(app: &mut App, action: Action) -> Vec<Effect> {
    let print_mode = app.print_mode;
    let p = &mut app.picker;
    match action {
        Action::Quit => return vec![Effect::Exit(Outcome::Quit)],
        Action::Resume => return resume(p, print_mode),
        Action::Scope => {
            p.settings.scope = match p.settings.scope {
                Scope::Current => Scope::All,
                Scope::All => Scope::Current,
            };
            p.recompute();
        }
        Action::Help => {
            p.dialog.open = Dialog::Help;
            p.dialog.help_scroll = 0;
        }
        Action::Preview => {
            let on = super::view::preview_visible(p, app.width);
            p.settings.preview_on = Some(!on);
            // Load afresh when it opens again.
            p.preview.requested = None;
        }
        Action::Labels => return labels::open(app),
        Action::Tree => return open_tree(app),
        Action::NextMatch | Action::PrevMatch => {
            let visible = super::view::preview_visible(p, app.width);
            step_match(p, action, visible);
        }
        Action::Sort => {
            p.settings.sort = p.settings.sort.next();
            p.recompute();
        }
        Action::Named => {
            p.settings.named_only = !p.settings.named_only;
            p.recompute();
        }
        Action::Paths => p.settings.show_paths = !p.settings.show_paths,
        Action::Internal => toggle_internal(p),
        Action::Rename => rename::ask(p),
        Action::Delete if !p.selection.marked.is_empty() => return delete::ask_batch(p),
        Action::Delete => return delete::ask_delete(p),
        Action::Mark => p.toggle_mark(),
        Action::MarkAll => p.mark_listed(),
        Action::Unmark if p.selection.marked.is_empty() => {
            p.set_status(StatusKind::Info, "No marks to clear")
        }
        Action::Unmark => p.selection.marked.clear(),
        Action::Undo => return undo(p),
        Action::Up => p.user_move_by(-1),
        Action::Down => p.user_move_by(1),
        Action::PageUp => p.user_move_by(-(p.selection.page as isize)),
        Action::PageDown => p.user_move_by(p.selection.page as isize),
        Action::First => p.user_select_pos(0),
        Action::Last => {
            p.user_select_pos(p.list.visible.len().saturating_sub(1));
            // A partial or interim list's last row is not the answer's,
            // nor is the last row of the query before.
            p.selection.last_on_whole =
                p.search.partial || p.answer_pending() || p.search.reading.is_some();
        }
    }
    Vec::new()
}

/// Enter: the selected session resumed (with `--print`, its path printed);
/// one whose id its agent cannot be given safely stays, the reason said.
fn resume(p: &mut PickerState, print_mode: bool) -> Vec<Effect> {
    match p.selected_row() {
        Some(r) if print_mode => {
            vec![Effect::Exit(Outcome::Print(r.info.path.to_path_buf()))]
        }
        Some(r) => {
            let (mut path, id) = r.resume_target();
            // A remote's Claude Code sub-agent run resumes its parent there,
            // by the parent's id; the path the remote's agent wrote is not
            // this machine's, so the run's own copy names the remote.
            if r.host().is_some() && arbor_util::hosts::host_of(&path).is_none() {
                path = r.info.path.to_path_buf();
            }
            // The file's name: the status line is one line.
            let name = path
                .file_name()
                .map_or(path.as_path(), std::path::Path::new);
            if let Some(why) = r.info.agent.resume_refusal(name, &id) {
                p.set_status(StatusKind::Error, format!("Not resumed: {why}"));
                return Vec::new();
            }
            vec![Effect::Exit(Outcome::Resume {
                path,
                id,
                cwd: r.cwd().to_string(),
                agent: r.info.agent,
            })]
        }
        None => Vec::new(),
    }
}

/// Ctrl+T: the selected session's branch tree.
fn open_tree(app: &mut App) -> Vec<Effect> {
    let p = &mut app.picker;
    if p.selection.selected.is_some() {
        p.hold_selection();
    }
    if let Some(r) = p.selected_row() {
        let path = r.info.path.to_path_buf();
        // With a query that looks inside sessions, the tree opens
        // searching for it (its filters chose the session): at the
        // match picked in the preview, else at the first.
        if p.query_active() && looks_at_entries(&p.search.parsed) {
            app.open_search = Some((path.clone(), p.search.parsed.without_filters()));
            let picked = p
                .hits()
                .filter(|_| p.search.scored_query == p.search.parsed.raw)
                .and_then(|h| h.hits.get(p.preview.hit_pos));
            if let Some(h) = picked {
                app.open_at = Some((path.clone(), h.entry_id.clone()));
            }
        }
        return vec![Effect::OpenTree {
            path,
            agent: r.info.agent,
        }];
    }
    Vec::new()
}

/// Alt+N / Alt+P: the next or previous match in the preview, or why
/// nothing moved.
fn step_match(p: &mut PickerState, action: Action, visible: bool) {
    let n = p.hits().map_or(0, |h| h.hits.len());
    if n > 0 && visible {
        p.preview.hit_pos = if action == Action::NextMatch {
            (p.preview.hit_pos + 1) % n
        } else {
            (p.preview.hit_pos + n - 1) % n
        };
    } else {
        // Say why nothing moved.
        let why = if !p.query_active() {
            "Type a query: its matching entries are listed in the preview".to_string()
        } else if !visible {
            format!(
                "{} shows the matching entries of the selected session",
                KEYS.keys_of(&[Action::Preview])
            )
        } else {
            "No matching entries to step through".to_string()
        };
        p.set_status(StatusKind::Info, why);
    }
}

fn toggle_internal(p: &mut PickerState) {
    p.settings.show_internal = !p.settings.show_internal;
    p.set_status(
        StatusKind::Info,
        if p.settings.show_internal {
            "Showing internal workflow sessions"
        } else {
            "Internal workflow sessions hidden"
        },
    );
    p.recompute();
}

/// Ctrl+Z: the last delete (one session or a batch) back from the trash.
fn undo(p: &mut PickerState) -> Vec<Effect> {
    match p.trash.batches.pop().map(<[PathBuf; 1]>::try_from) {
        Some(Ok([path])) => {
            p.set_progress("Restoring from trash…");
            vec![Effect::Restore(path)]
        }
        Some(Err(paths)) => {
            p.set_progress(format!(
                "Restoring {} from trash…",
                delete::sessions(paths.len())
            ));
            vec![Effect::RestoreBatch(paths)]
        }
        None => {
            p.set_status(StatusKind::Info, "Nothing to undo");
            Vec::new()
        }
    }
}

/// Pasted text is typed into the field that has the keys (the query when
/// no prompt is up); a question or the help ignores it, so that a paste
/// never answers or triggers anything.
pub fn on_paste(p: &mut PickerState, text: &str) -> Option<Vec<Effect>> {
    match &mut p.dialog.open {
        Dialog::Rename { input, .. } => (input.insert(text) == Edit::Changed).then(Vec::new),
        Dialog::None => {
            let before = p.search.query.text().to_string();
            (p.search.query.insert(text) == Edit::Changed).then(|| query_edited(p, &before))
        }
        _ => None,
    }
}

/// A mouse event: its effects, or `None` when it did nothing (a move, a
/// click outside the rows, anything while a question is up). The wheel
/// moves the selection over the list and steps through the preview's
/// matches over the preview; a click selects the row under it, a double
/// click (`double`) resumes it as Enter does.
pub fn on_mouse(
    app: &mut App,
    m: crossterm::event::MouseEvent,
    double: bool,
) -> Option<Vec<Effect>> {
    let (list, preview) = super::view::panes(&app.picker, app.width, app.height);
    let rows = super::view::list_rows(&app.picker, app.width, app.height);
    let p = &mut app.picker;
    if p.dialog.open != Dialog::None {
        return None;
    }
    let over = |r: Rect| r.contains(ratatui::layout::Position::new(m.column, m.row));
    let over_preview = preview.is_some_and(over);
    match m.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown if over_preview => {
            let n = p.hits().map_or(0, |h| h.hits.len());
            if n == 0 {
                return None;
            }
            let up = m.kind == MouseEventKind::ScrollUp;
            let at = p.preview.hit_pos.min(n - 1);
            p.preview.hit_pos = if up {
                at.saturating_sub(1)
            } else {
                (at + 1).min(n - 1)
            };
        }
        MouseEventKind::ScrollUp => p.user_move_by(-3),
        MouseEventKind::ScrollDown => p.user_move_by(3),
        MouseEventKind::Down(MouseButton::Left)
            if over(list) && usize::from(m.row - list.y) < rows =>
        {
            let pos = p.selection.scroll + (m.row - list.y) as usize;
            if pos >= p.list.visible.len() {
                return None;
            }
            p.user_select_pos(pos);
            if double {
                return Some(act(app, Action::Resume));
            }
        }
        _ => return None,
    }
    Some(Vec::new())
}
