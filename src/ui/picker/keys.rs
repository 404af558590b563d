//! Picker behaviour: keys, mouse and background results (SPEC §5).

use std::path::PathBuf;

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};

use super::state::{
    Dialog, Measured, PickerState, Row, Scope, Sort, StatusKind, LIVE_WINDOW_MS, PERMANENT_GUARD_MS,
};
use crate::app::searcher::{FirstRows, Stage};
use crate::ui::app::{App, AppEvent, Effect, Outcome, Step};
use crate::ui::input::{Edit, LineInput, Prompted};
use crate::ui::keymap::{alt, bind, bind_when_empty, ch, ctrl, key, with, Answer, Keymap, CONFIRM};
use crate::ui::widgets::help_key;
use arbor_search::hits::looks_at_entries;
use arbor_search::Query;
use arbor_store::{SessionFile, StoreConfig};

pub fn update(app: &mut App, ev: AppEvent) -> Step {
    // Typing pins the selection (to the best match, then by identity),
    // however the query was edited.
    let query_before = matches!(ev, AppEvent::Key(_)).then(|| app.picker.query.text().to_string());
    let no_dialog_before = app.picker.dialog == Dialog::None;
    let Step {
        effects: mut fx,
        redraw,
    } = match ev {
        AppEvent::Key(k) if k.kind != KeyEventKind::Release => on_key(app, k).into(),
        AppEvent::Key(_) => Step::none(),
        AppEvent::Paste(text) => on_paste(&mut app.picker, &text).into(),
        AppEvent::Mouse(m) => on_mouse(app, m).into(),
        AppEvent::Resize(..) => Step::redraw(Vec::new()),
        AppEvent::Tick(now) => {
            let ages = super::view::clock_changes_view(
                &app.picker,
                app.width,
                app.height,
                app.frame_ms,
                now,
            );
            let expired = app.picker.tick(now);
            Step {
                effects: Vec::new(),
                redraw: ages || expired,
            }
        }
        other => on_result(&mut app.picker, &app.store, other),
    };
    let p = &mut app.picker;
    // So does a question about a row (delete, rename): rows arriving
    // meanwhile must not move the selection away from the row asked about.
    if query_before.is_some_and(|q| q != p.query.text())
        || (no_dialog_before && !matches!(p.dialog, Dialog::None | Dialog::Help))
    {
        p.hold_selection();
    }
    let list_h = super::view::list_rows(p, app.width, app.height);
    p.page = list_h.max(1);
    p.clamp_scroll(list_h);
    // The preview follows the selection, the query once its results are
    // in (for its list of matches) and the file as it changes; each
    // (session, query, change) is loaded once, and its matches are read
    // once while remembered.
    if super::view::preview_visible(p, app.width) {
        if let Some(r) = p.selected_row() {
            let (path, stamp) = (r.info.path.to_path_buf(), r.info.file_mtime_ms);
            let want = (path.clone(), p.scored_query.clone(), stamp);
            if p.preview_requested.as_ref() != Some(&want) {
                p.preview_requested = Some(want);
                let query = Query::parse(&p.scored_query);
                let hits = (looks_at_entries(&query)
                    && p.cached_hits(&path, &p.scored_query, stamp).is_none())
                .then_some(stamp);
                fx.push(Effect::LoadPreview { path, query, hits });
            }
        }
    }
    p.follow_hits();
    Step {
        effects: fx,
        redraw,
    }
}

/// A key: its effects, or `None` when it did nothing (not a key of the
/// screen or of the prompt up, or dropped while a question waits).
fn on_key(app: &mut App, k: KeyEvent) -> Option<Vec<Effect>> {
    let p = &mut app.picker;
    match &mut p.dialog {
        Dialog::Help => {
            let rows = super::view::help_rows();
            let area = ratatui::layout::Rect::new(0, 0, app.width, app.height);
            match help_key(&k, &rows, super::view::HELP_WIDTH, area, p.help_scroll) {
                Some(scroll) if scroll == p.help_scroll => return None,
                Some(scroll) => p.help_scroll = scroll,
                None => p.dialog = Dialog::None,
            }
            return Some(Vec::new());
        }
        Dialog::ConfirmDelete { path, live } => {
            let (path, live) = (path.clone(), *live);
            return confirm(p, &k, |p| {
                if live {
                    // Changed seconds ago: an agent may be writing it. Ask again.
                    let age = p
                        .row_index(&path)
                        .map(|i| p.now_ms - last_change_ms(&p.rows[i].info))
                        .unwrap_or(0);
                    p.dialog = Dialog::ConfirmLiveDelete { path, age_ms: age };
                    Vec::new()
                } else {
                    trash(p, path)
                }
            });
        }
        Dialog::ConfirmLiveDelete { path, .. } => {
            let path = path.clone();
            return confirm(p, &k, |p| trash(p, path));
        }
        Dialog::ConfirmBatch { paths, measured } => {
            let paths = paths.clone();
            let measured = measured.clone();
            // Enter waits for the sizes: the question is not complete yet.
            if measured.is_none() && CONFIRM.action(&k, true) == Some(Answer::Yes) {
                return None;
            }
            return confirm(p, &k, |p| match measured {
                Some(m) if !m.live.is_empty() => {
                    p.dialog = Dialog::ConfirmLiveBatch {
                        paths,
                        live: m.live,
                    };
                    Vec::new()
                }
                _ => trash_batch(p, paths),
            });
        }
        Dialog::ConfirmLiveBatch { paths, .. } => {
            let paths = paths.clone();
            return confirm(p, &k, |p| trash_batch(p, paths));
        }
        Dialog::Trashing { .. } | Dialog::TrashingBatch { .. } => {
            return TRASHING_KEYS
                .action(&k, true)
                .map(|_| vec![Effect::Exit(Outcome::Quit)]);
        }
        Dialog::ConfirmPermanent {
            paths,
            shown_ms,
            moved,
            ..
        } => {
            let (paths, shown_ms, moved) = (paths.clone(), *shown_ms, *moved);
            match PERMANENT_KEYS.action(&k, true)? {
                Answer::No => {
                    p.dialog = Dialog::None;
                    if moved == 0 {
                        p.set_status(StatusKind::Info, "Nothing deleted");
                    } else {
                        p.set_status(
                            StatusKind::Info,
                            format!(
                                "{} moved to trash, {} not deleted · {} undo",
                                sessions(moved),
                                paths.len(),
                                KEYS.keys_of(&[Action::Undo])
                            ),
                        );
                    }
                    return Some(Vec::new());
                }
                // Keys in the first moments were typed before the question
                // could be read (a second Enter): ignored, as is every key
                // but the deliberate `y`.
                Answer::Yes if p.now_ms - shown_ms < PERMANENT_GUARD_MS => return None,
                Answer::Yes => {
                    p.dialog = Dialog::None;
                    p.set_progress("Deleting permanently…");
                    return Some(match <[PathBuf; 1]>::try_from(paths) {
                        Ok([path]) => vec![Effect::DeletePermanently(path)],
                        Err(paths) => vec![Effect::DeleteBatch(paths)],
                    });
                }
            }
        }
        Dialog::ConfirmMigrateRename { path, name, .. } => {
            let (path, name) = (path.clone(), name.clone());
            return confirm(p, &k, |p| {
                p.set_progress("Rewriting as version 3…");
                vec![Effect::MigrateThen {
                    path: path.clone(),
                    then: Box::new(Effect::Rename { path, name }),
                }]
            });
        }
        Dialog::Rename { path, input } => {
            return match input.prompt_key(&k) {
                Prompted::Enter => {
                    let name = input.text().trim().to_string();
                    let path = path.clone();
                    p.dialog = Dialog::None;
                    if name.is_empty() {
                        p.set_status(StatusKind::Info, "Name unchanged (blank names are ignored)");
                        return Some(Vec::new());
                    }
                    Some(vec![Effect::Rename { path, name }])
                }
                Prompted::Cancel => Some(cancel(p)),
                Prompted::Edited => Some(Vec::new()),
                Prompted::Ignored => None,
            };
        }
        Dialog::Labels { items, selected } => {
            let n = items.as_ref().map_or(0, Vec::len);
            let page = super::view::labels_page(app.height);
            let last = n.saturating_sub(1);
            match LABEL_KEYS.action(&k, true)? {
                LabelAction::Up => *selected = selected.saturating_sub(1),
                LabelAction::Down => *selected = (*selected + 1).min(last),
                LabelAction::PageUp => *selected = selected.saturating_sub(page),
                LabelAction::PageDown => *selected = (*selected + page).min(last),
                LabelAction::First => *selected = 0,
                LabelAction::Last => *selected = last,
                LabelAction::Close => p.dialog = Dialog::None,
                LabelAction::Quit => return Some(vec![Effect::Exit(Outcome::Quit)]),
                LabelAction::Open => {
                    let l = items.as_ref().and_then(|v| v.get(*selected)).cloned()?;
                    p.dialog = Dialog::None;
                    app.open_at = Some((l.path.clone(), l.entry_id.clone()));
                    return Some(vec![Effect::OpenTree {
                        path: l.path,
                        agent: l.agent,
                    }]);
                }
            }
            return Some(Vec::new());
        }
        Dialog::None => {}
    }

    match KEYS.action(&k, p.query.is_empty()) {
        Some(action) => return Some(act(app, action)),
        // Everything else edits the query (Home/End stay the list's:
        // Ctrl+A/E go to the query's start and end).
        None => {
            let before = p.query.text().to_string();
            match p.query.handle_key(&k) {
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

/// What the keys do in the list of labels (Ctrl+L).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelAction {
    Up,
    Down,
    PageUp,
    PageDown,
    First,
    Last,
    Open,
    Close,
    Quit,
}

pub const LABEL_KEYS: Keymap<LabelAction> = Keymap(&[
    bind(
        &[
            (key(KeyCode::Up), LabelAction::Up),
            (key(KeyCode::Down), LabelAction::Down),
            (key(KeyCode::PageUp), LabelAction::PageUp),
            (key(KeyCode::PageDown), LabelAction::PageDown),
            (key(KeyCode::Home), LabelAction::First),
            (key(KeyCode::End), LabelAction::Last),
        ],
        "move, first/last",
    ),
    bind(
        &[(key(KeyCode::Enter), LabelAction::Open)],
        "open the tree at the labelled entry",
    ),
    bind(
        &[
            (key(KeyCode::Esc), LabelAction::Close),
            (ctrl('l'), LabelAction::Close),
        ],
        "close",
    ),
    bind(&[(ctrl('c'), LabelAction::Quit)], "quit arbor"),
]);

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
        "move, first/last; wheel; a second click picks",
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
        &[(ch(' '), Action::Mark)],
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
                with(KeyCode::Backspace, KeyModifiers::CONTROL),
                Action::Delete,
            ),
            (ctrl('h'), Action::Delete),
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
        &[(ch('?'), Action::Help)],
        "this help, when the query is empty",
    ),
    bind(
        &[(key(KeyCode::Esc), Action::Quit), (ctrl('c'), Action::Quit)],
        "close",
    ),
]);

fn act(app: &mut App, action: Action) -> Vec<Effect> {
    let print_mode = app.print_mode;
    let p = &mut app.picker;
    match action {
        Action::Quit => return vec![Effect::Exit(Outcome::Quit)],
        Action::Resume => {
            return match p.selected_row() {
                Some(r) if print_mode => {
                    vec![Effect::Exit(Outcome::Print(r.info.path.to_path_buf()))]
                }
                Some(r) => {
                    let (path, id) = r.resume_target();
                    vec![Effect::Exit(Outcome::Resume {
                        path,
                        id,
                        cwd: r.cwd().to_string(),
                        agent: r.info.agent,
                    })]
                }
                None => Vec::new(),
            };
        }
        Action::Scope => {
            p.scope = match p.scope {
                Scope::Current => Scope::All,
                Scope::All => Scope::Current,
            };
            p.recompute();
        }
        Action::Help => {
            p.dialog = Dialog::Help;
            p.help_scroll = 0;
        }
        Action::Preview => {
            let on = super::view::preview_visible(p, app.width);
            p.preview_on = Some(!on);
            // Load afresh when it opens again.
            p.preview_requested = None;
        }
        Action::Labels => {
            p.dialog = Dialog::Labels {
                items: None,
                selected: 0,
            };
            let scope = match p.scope {
                Scope::All => arbor_store::Scope::All,
                Scope::Current => arbor_store::Scope::Project(p.project_cwd.clone()),
            };
            return vec![Effect::LoadLabels {
                config: app.store.clone(),
                scope,
                include_internal: p.show_internal,
            }];
        }
        Action::Tree => {
            if p.selected.is_some() {
                p.hold_selection();
            }
            if let Some(r) = p.selected_row() {
                let path = r.info.path.to_path_buf();
                // With a query that looks inside sessions, the tree opens
                // searching for it (its filters chose the session): at the
                // match picked in the preview, else at the first.
                if p.query_active() && looks_at_entries(&p.parsed) {
                    app.open_search = Some((path.clone(), p.parsed.without_filters()));
                    let picked = p
                        .hits()
                        .filter(|_| p.scored_query == p.parsed.raw)
                        .and_then(|h| h.hits.get(p.hit_pos));
                    if let Some(h) = picked {
                        app.open_at = Some((path.clone(), h.entry_id.clone()));
                    }
                }
                return vec![Effect::OpenTree {
                    path,
                    agent: r.info.agent,
                }];
            }
        }
        Action::NextMatch | Action::PrevMatch => {
            let visible = super::view::preview_visible(p, app.width);
            let n = p.hits().map_or(0, |h| h.hits.len());
            if n > 0 && visible {
                p.hit_pos = if action == Action::NextMatch {
                    (p.hit_pos + 1) % n
                } else {
                    (p.hit_pos + n - 1) % n
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
        Action::Sort => {
            p.sort = p.sort.next();
            p.recompute();
        }
        Action::Named => {
            p.named_only = !p.named_only;
            p.recompute();
        }
        Action::Paths => p.show_paths = !p.show_paths,
        Action::Internal => {
            p.show_internal = !p.show_internal;
            p.set_status(
                StatusKind::Info,
                if p.show_internal {
                    "Showing internal workflow sessions"
                } else {
                    "Internal workflow sessions hidden"
                },
            );
            p.recompute();
        }
        Action::Rename => {
            if let Some(agent) = p
                .selected_row()
                .map(|r| r.info.agent)
                .filter(|a| a.is_foreign())
            {
                p.set_status(StatusKind::Error, agent.refusal("renamed"));
            } else if let Some(r) = p.selected_row() {
                let input = LineInput::new(r.display_name().unwrap_or(""));
                p.dialog = Dialog::Rename {
                    path: r.info.path.to_path_buf(),
                    input,
                };
            }
        }
        Action::Delete if !p.marked.is_empty() => return ask_batch(p),
        Action::Delete => return ask_delete(p),
        Action::Mark => p.toggle_mark(),
        Action::MarkAll => p.mark_listed(),
        Action::Unmark if p.marked.is_empty() => {
            p.set_status(StatusKind::Info, "No marks to clear")
        }
        Action::Unmark => p.marked.clear(),
        Action::Undo => {
            return match p.trashed.pop().map(<[PathBuf; 1]>::try_from) {
                Some(Ok([path])) => {
                    p.set_progress("Restoring from trash…");
                    vec![Effect::Restore(path)]
                }
                Some(Err(paths)) => {
                    p.set_progress(format!("Restoring {} from trash…", sessions(paths.len())));
                    vec![Effect::RestoreBatch(paths)]
                }
                None => {
                    p.set_status(StatusKind::Info, "Nothing to undo");
                    Vec::new()
                }
            };
        }
        Action::Up => p.user_move_by(-1),
        Action::Down => p.user_move_by(1),
        Action::PageUp => p.user_move_by(-(p.page as isize)),
        Action::PageDown => p.user_move_by(p.page as isize),
        Action::First => p.user_select_pos(0),
        Action::Last => {
            p.user_select_pos(p.visible.len().saturating_sub(1));
            // A partial or interim list's last row is not the answer's,
            // nor is the last row of the query before.
            p.last_on_whole = p.search_partial || p.answer_pending() || p.search_reading.is_some();
        }
    }
    Vec::new()
}

/// Pasted text is typed into the field that has the keys (the query when
/// no prompt is up); a question or the help ignores it, so that a paste
/// never answers or triggers anything.
fn on_paste(p: &mut PickerState, text: &str) -> Option<Vec<Effect>> {
    match &mut p.dialog {
        Dialog::Rename { input, .. } => (input.insert(text) == Edit::Changed).then(Vec::new),
        Dialog::None => {
            let before = p.query.text().to_string();
            (p.query.insert(text) == Edit::Changed).then(|| query_edited(p, &before))
        }
        _ => None,
    }
}

/// A yes/no question ([`CONFIRM`]): Enter runs `yes`, Esc or Ctrl+C
/// cancels, and every other key is dropped while it is up.
fn confirm(
    p: &mut PickerState,
    k: &KeyEvent,
    yes: impl FnOnce(&mut PickerState) -> Vec<Effect>,
) -> Option<Vec<Effect>> {
    Some(match CONFIRM.action(k, true)? {
        Answer::Yes => {
            p.dialog = Dialog::None;
            yes(p)
        }
        Answer::No => cancel(p),
    })
}

/// While the trash works: only Ctrl+C (quit) is a key.
pub const TRASHING_KEYS: Keymap<Answer> = Keymap(&[bind(&[(ctrl('c'), Answer::No)], "quit arbor")]);

/// The permanent-delete question: `y`, typed on purpose, deletes; Enter
/// is not an answer (it was likely meant for the question before).
pub const PERMANENT_KEYS: Keymap<Answer> = Keymap(&[
    bind(
        &[(ch('y'), Answer::Yes), (ch('Y').quiet(), Answer::Yes)],
        "delete it forever",
    ),
    bind(
        &[
            (key(KeyCode::Esc), Answer::No),
            (ch('n').quiet(), Answer::No),
            (ch('N').quiet(), Answer::No),
            (ctrl('c').quiet(), Answer::No),
        ],
        "keep it",
    ),
]);

fn trash(p: &mut PickerState, path: PathBuf) -> Vec<Effect> {
    p.dialog = Dialog::Trashing { path: path.clone() };
    vec![Effect::Trash(path)]
}

fn trash_batch(p: &mut PickerState, paths: Vec<PathBuf>) -> Vec<Effect> {
    p.dialog = Dialog::TrashingBatch { count: paths.len() };
    vec![Effect::TrashBatch(paths)]
}

/// `1 session`, `12 sessions`.
pub fn sessions(n: usize) -> String {
    if n == 1 {
        "1 session".into()
    } else {
        format!("{n} sessions")
    }
}

/// Ctrl+D with marks: the question waits for the files' sizes and change
/// times, read now (the rows' may be seconds old).
fn ask_batch(p: &mut PickerState) -> Vec<Effect> {
    let paths = p.marked_paths();
    p.dialog = Dialog::ConfirmBatch {
        paths: paths.clone(),
        measured: None,
    };
    vec![Effect::MeasureBatch(paths)]
}

fn cancel(p: &mut PickerState) -> Vec<Effect> {
    p.dialog = Dialog::None;
    Vec::new()
}

/// When the file last changed: its mtime. (The newest entry's timestamp
/// is whatever the writer claimed, possibly in the future.)
fn last_change_ms(info: &super::RowInfo) -> i64 {
    info.file_mtime_ms
}

fn ask_delete(p: &mut PickerState) -> Vec<Effect> {
    if let Some(r) = p.selected_row() {
        let live = p.now_ms - last_change_ms(&r.info) < LIVE_WINDOW_MS;
        p.dialog = Dialog::ConfirmDelete {
            path: r.info.path.to_path_buf(),
            live,
        };
    }
    Vec::new()
}

/// After an edit of the query: a search of every row when its text changed
/// (moving the cursor changes nothing).
fn query_edited(p: &mut PickerState, before: &str) -> Vec<Effect> {
    if p.query.text() == before {
        return Vec::new();
    }
    p.parsed = Query::parse_at(p.query.text(), p.now_ms);
    p.search_gen += 1;
    p.select_first_on_results = true;
    p.last_on_whole = false;
    if !p.parsed.has_conditions() {
        p.scores = None;
        p.search_incomplete = None;
        p.search_reading = None;
        p.search_partial = false;
        p.scored_query.clear();
        p.recompute();
        p.select_pos(0);
        return Vec::new();
    }
    if p.parsed.error().is_some() {
        p.recompute();
        return Vec::new();
    }
    vec![search_effect(p)]
}

pub fn search_effect(p: &mut PickerState) -> Effect {
    // The first screen is asked for first where the list ranks the best
    // first (sorted by time, any match may be the newest): two of them,
    // for a list whose height the answer changes and a page down. Only
    // for a query just typed, whose answer puts the selection on its
    // first row: the same query asked again (new rows, the index done)
    // keeps the selection where it is, which a list of two screens may
    // not hold. Not while rows load or the index is built: the rows and
    // the index change under the answer.
    let wanted = p.sort != Sort::Recent
        && p.select_first_on_results
        && p.loading.is_none()
        && p.indexing.is_none();
    let first = wanted.then(|| FirstRows {
        want: 2 * p.page.max(1),
        scoped: p.scoped_times(),
    });
    if first.is_some() {
        p.first_rows_asked();
    }
    Effect::Search {
        generation: p.search_gen,
        query: p.parsed.clone(),
        docs: p.docs(),
        index_problem: p.index_problem.clone(),
        first,
    }
}

/// A mouse event: its effects, or `None` when it did nothing (a move, a
/// click outside the rows, anything while a question is up).
fn on_mouse(app: &mut App, m: crossterm::event::MouseEvent) -> Option<Vec<Effect>> {
    let area = super::view::list_area(&app.picker, app.width, app.height);
    let rows = super::view::list_rows(&app.picker, app.width, app.height);
    let p = &mut app.picker;
    if p.dialog != Dialog::None {
        return None;
    }
    match m.kind {
        MouseEventKind::ScrollUp => p.user_move_by(-3),
        MouseEventKind::ScrollDown => p.user_move_by(3),
        MouseEventKind::Down(MouseButton::Left)
            if m.row >= area.y
                && usize::from(m.row - area.y) < rows
                && m.column < area.x + area.width =>
        {
            {
                let pos = p.scroll + (m.row - area.y) as usize;
                if pos < p.visible.len() {
                    let already = p.selected_pos() == Some(pos);
                    p.user_select_pos(pos);
                    // A click on the selected row picks it, like a double click.
                    if already {
                        return Some(act(app, Action::Resume));
                    }
                }
            }
        }
        _ => return None,
    }
    Some(Vec::new())
}

const INCOMPLETE: &str = "Search incomplete";

/// A background result. Most change what is shown; those that do not
/// (an older search's answer, a preview of a row no longer selected, a
/// change on disk still to be read) leave the frame as it is.
fn on_result(p: &mut PickerState, store: &StoreConfig, ev: AppEvent) -> Step {
    match ev {
        AppEvent::Rows(rows) => {
            p.upsert(rows);
            p.recompute();
            if p.parsed.has_conditions() && p.parsed.error().is_none() {
                // New rows are unscored: score everything again (stale results are dropped).
                p.search_gen += 1;
                return Step::redraw(vec![search_effect(p)]);
            }
        }
        AppEvent::LoadProgress { done, total } => p.loading = Some((done, total)),
        AppEvent::Indexing(progress) => {
            let finished = progress.is_none() && p.indexing.is_some();
            p.indexing = progress;
            // Bodies were not searchable while the index was being built.
            if finished && p.parsed.has_conditions() && p.parsed.error().is_none() {
                p.search_gen += 1;
                return Step::redraw(vec![search_effect(p)]);
            }
        }
        AppEvent::LoadFinished { problems } => {
            p.loading = None;
            if !problems.is_empty() {
                p.set_status(
                    StatusKind::Info,
                    format!(
                        "{} file{} skipped: not readable sessions (arbor list shows why)",
                        problems.len(),
                        if problems.len() == 1 { "" } else { "s" }
                    ),
                );
            }
        }
        AppEvent::IndexIncomplete(reason) => {
            p.index_problem = Some(reason);
            if p.parsed.has_conditions() && p.parsed.error().is_none() {
                p.search_gen += 1;
                return Step::redraw(vec![search_effect(p)]);
            }
        }
        AppEvent::SearchDone {
            generation,
            query,
            docs,
            scores,
            incomplete,
            stage,
        } => {
            let partial = stage == Stage::FirstRows;
            if generation != p.search_gen || (partial && !p.first_rows_fit()) {
                // An older query's, or first rows asked for under settings
                // changed since (the whole answer follows).
                return Step::none();
            }
            // A partial answer holds the screen's rows, final; the rest,
            // its count and what the bodies add come with the whole
            // answer, which says whether it is complete.
            p.search_partial = partial;
            if !partial {
                // Never an incomplete answer shown as complete: the header
                // says so while it lasts, the status line says why.
                // While the index is still being built, or the files it
                // lacks are being read, the header says so already: that
                // is expected, not an error.
                let interim = matches!(stage, Stage::Interim { .. });
                let building = p.loading.is_some() || p.indexing.is_some() || interim;
                match &incomplete {
                    Some(why) if !building && p.incomplete_reported.as_ref() != Some(why) => {
                        p.set_status(StatusKind::Error, format!("{INCOMPLETE}: {why}"));
                        p.incomplete_reported = Some(why.clone());
                    }
                    Some(_) => {}
                    None => {
                        p.incomplete_reported = None;
                        if p.status
                            .as_ref()
                            .is_some_and(|s| s.text.starts_with(INCOMPLETE))
                        {
                            p.status = None;
                        }
                    }
                }
                p.search_incomplete = incomplete;
                p.search_reading = match stage {
                    Stage::Interim { reading } => Some(reading),
                    _ => None,
                };
            }
            p.set_scores(&docs, scores);
            p.scored_query = query;
            p.recompute();
            // An interim answer's best row may not be the whole answer's:
            // the whole one selects its own, unless the selection was
            // moved or a row asked about since.
            let interim_pick = p.first_of_interim.take();
            if std::mem::take(&mut p.select_first_on_results)
                || (interim_pick.is_some() && interim_pick == p.selected)
            {
                p.select_pos(0);
                p.scroll = 0;
            }
            if matches!(stage, Stage::Interim { .. }) {
                p.first_of_interim = p.selected.clone();
            }
            if stage == Stage::Whole && std::mem::take(&mut p.last_on_whole) {
                p.select_pos(p.visible.len().saturating_sub(1));
            }
        }
        AppEvent::FsChanged(paths) => {
            let paths: Vec<SessionFile> = paths
                .into_iter()
                .filter(|x| x.extension().is_some_and(|e| e == "jsonl"))
                .map(|x| store.session_file(&x))
                .collect();
            return Step::quiet(if paths.is_empty() {
                Vec::new()
            } else {
                vec![Effect::Rescan(paths)]
            });
        }
        AppEvent::RowGone(path) => {
            if p.row_index(&path).is_none() {
                return Step::none();
            }
            p.remove_keeping_place(&path);
        }
        AppEvent::FolderGone(dir) => {
            let gone: Vec<PathBuf> = p
                .rows
                .iter()
                .filter(|r| r.info.path.starts_with(&dir))
                .map(|r| r.info.path.to_path_buf())
                .collect();
            if gone.is_empty() {
                return Step::none();
            }
            for path in &gone {
                p.remove(path);
            }
            p.recompute();
        }
        AppEvent::PreviewLoaded(Ok(preview)) => {
            if p.selected.as_ref() != Some(&preview.path) {
                return Step::none();
            }
            p.preview = Some(preview);
        }
        AppEvent::HitsLoaded(Ok(hits)) => {
            let shown = p
                .selected_row()
                .is_some_and(|r| r.info.path == hits.path && p.scored_query == hits.query);
            p.remember_hits(hits);
            if !shown {
                return Step::none();
            }
        }
        AppEvent::HitsLoaded(Err((path, e))) => {
            if p.selected.as_ref() != Some(&path) {
                return Step::none();
            }
            p.set_status(StatusKind::Error, format!("Matches not read: {e}"));
        }
        AppEvent::PreviewLoaded(Err((path, e))) => {
            if p.selected.as_ref() != Some(&path) {
                return Step::none();
            }
            p.preview = None;
            p.set_status(StatusKind::Error, format!("Preview failed: {e}"));
        }
        AppEvent::RenameNeedsMigration {
            path,
            name,
            version,
        } => {
            p.status = None;
            p.dialog = Dialog::ConfirmMigrateRename {
                path,
                name,
                version,
            };
        }
        AppEvent::Renamed { path, result } => match result {
            Ok(name) => {
                p.set_status(
                    StatusKind::Success,
                    format!(
                        "Renamed to \u{201c}{}\u{201d}",
                        arbor_session::render::sanitize_line(&name)
                    ),
                );
                return Step::redraw(vec![Effect::Rescan(vec![store.session_file(&path)])]);
            }
            Err(e) => {
                p.set_status(StatusKind::Error, format!("Rename failed: {e}"));
            }
        },
        AppEvent::Trashed { path, result } => {
            if matches!(&p.dialog, Dialog::Trashing { path: t } if *t == path) {
                p.dialog = Dialog::None;
            }
            match result {
                Ok(()) => {
                    p.remove_keeping_place(&path);
                    p.trashed.push(vec![path]);
                    p.set_status(StatusKind::Success, "Session moved to trash · ctrl+z undo");
                }
                Err(reason) => {
                    p.status = None;
                    p.dialog = Dialog::ConfirmPermanent {
                        paths: vec![path],
                        reason,
                        shown_ms: p.now_ms,
                        moved: 0,
                    };
                }
            }
        }
        AppEvent::BatchMeasured(found) => {
            let Dialog::ConfirmBatch { paths, measured } = &mut p.dialog else {
                // Cancelled meanwhile.
                return Step::none();
            };
            let now = p.now_ms;
            let mut m = Measured {
                bytes: 0,
                live: Vec::new(),
            };
            // Files gone already are no longer asked about.
            let here: std::collections::HashSet<&PathBuf> = found
                .iter()
                .filter_map(|(f, s)| s.is_some().then_some(f))
                .collect();
            paths.retain(|x| here.contains(x));
            for (path, (bytes, mtime)) in found.into_iter().filter_map(|(f, s)| Some((f, s?))) {
                m.bytes += bytes;
                if now - mtime < LIVE_WINDOW_MS {
                    m.live.push((path, now - mtime));
                }
            }
            if paths.is_empty() {
                p.dialog = Dialog::None;
                p.set_status(StatusKind::Info, "The marked sessions are gone already");
            } else {
                *measured = Some(m);
            }
        }
        AppEvent::TrashedBatch { moved, failed } => {
            if matches!(p.dialog, Dialog::TrashingBatch { .. }) {
                p.dialog = Dialog::None;
            }
            let selected_gone = p.selected.as_ref().is_some_and(|s| moved.contains(s));
            let pos = p.selected_pos();
            for path in &moved {
                if let Some(row) = p.remove(path) {
                    p.trashed_rows.insert(path.clone(), row);
                }
            }
            p.recompute();
            if let (true, Some(pos)) = (selected_gone, pos) {
                // The selection stays at its place, as for one session.
                p.select_pos(pos.min(p.visible.len().saturating_sub(1)));
            }
            let n = moved.len();
            if n > 0 {
                p.trashed.push(moved);
                p.set_status(
                    StatusKind::Success,
                    format!(
                        "{} moved to trash · {} undo",
                        sessions(n),
                        KEYS.keys_of(&[Action::Undo])
                    ),
                );
            }
            if let Some((_, reason)) = failed.first() {
                // Never silently gone for good: the trash refused these,
                // and the permanent delete is asked as for one session.
                let reason = reason.clone();
                p.status = None;
                p.dialog = Dialog::ConfirmPermanent {
                    paths: failed.into_iter().map(|(path, _)| path).collect(),
                    reason,
                    shown_ms: p.now_ms,
                    moved: n,
                };
            }
        }
        AppEvent::RestoredBatch { restored, failed } => {
            let n = restored.len();
            match failed.first() {
                None => p.set_status(
                    StatusKind::Success,
                    format!("{} restored from trash", sessions(n)),
                ),
                Some((_, e)) => p.set_status(
                    StatusKind::Error,
                    format!(
                        "Undo: {} of {} restored; {} not: {e}",
                        n,
                        n + failed.len(),
                        failed.len()
                    ),
                ),
            }
            let back: Vec<Row> = restored
                .iter()
                .filter_map(|x| p.trashed_rows.remove(x))
                .collect();
            let mut fx = Vec::new();
            if !back.is_empty() {
                p.upsert(back);
                p.recompute();
                if p.parsed.has_conditions() && p.parsed.error().is_none() {
                    p.search_gen += 1;
                    fx.push(search_effect(p));
                }
            }
            fx.push(Effect::Rescan(
                restored.iter().map(|x| store.session_file(x)).collect(),
            ));
            return Step::redraw(fx);
        }
        AppEvent::DeletedBatch { deleted, failed } => {
            for path in &deleted {
                p.remove(path);
            }
            p.recompute();
            match failed.first() {
                None => p.set_status(
                    StatusKind::Success,
                    format!("{} deleted permanently", sessions(deleted.len())),
                ),
                Some((_, e)) => p.set_status(
                    StatusKind::Error,
                    format!(
                        "{} deleted permanently; {} not: {e}",
                        deleted.len(),
                        failed.len()
                    ),
                ),
            }
        }
        AppEvent::Deleted { path, result } => match result {
            Ok(()) => {
                p.remove_keeping_place(&path);
                p.set_status(StatusKind::Success, "Session deleted permanently");
            }
            Err(e) => p.set_status(StatusKind::Error, format!("Delete failed: {e}")),
        },
        AppEvent::Restored { path, result } => match result {
            Ok(()) => {
                p.set_status(StatusKind::Success, "Session restored from trash");
                return Step::redraw(vec![Effect::Rescan(vec![store.session_file(&path)])]);
            }
            Err(e) => p.set_status(StatusKind::Error, format!("Undo failed: {e}")),
        },
        AppEvent::LabelsLoaded(found) => match &mut p.dialog {
            Dialog::Labels { items, selected } => {
                *items = Some(found);
                *selected = 0;
            }
            // Closed meanwhile.
            _ => return Step::none(),
        },
        AppEvent::Key(_)
        | AppEvent::Paste(_)
        | AppEvent::Mouse(_)
        | AppEvent::Resize(..)
        | AppEvent::Tick(_)
        | AppEvent::TreeLoaded { .. }
        | AppEvent::Exported(_)
        | AppEvent::TreeSearchText { .. }
        | AppEvent::TreeHits { .. }
        | AppEvent::Wrote { .. } => return Step::none(),
    }
    Step::redraw(Vec::new())
}
