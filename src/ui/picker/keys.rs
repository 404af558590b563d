//! Picker behaviour: keys, mouse and background results (SPEC §5).

use std::path::PathBuf;

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};

use super::state::{Dialog, PickerState, Scope, StatusKind, LIVE_WINDOW_MS, PERMANENT_GUARD_MS};
use crate::search::Query;
use crate::store::{SessionFile, StoreConfig};
use crate::ui::app::{App, AppEvent, Effect, Outcome};
use crate::ui::input::{Edit, LineInput};

pub fn update(app: &mut App, ev: AppEvent) -> Vec<Effect> {
    let before = app.picker.selected.clone();
    // Typing pins the selection (to the best match, then by identity),
    // however the query was edited.
    let query_before = matches!(ev, AppEvent::Key(_)).then(|| app.picker.query.text().to_string());
    let no_dialog_before = app.picker.dialog == Dialog::None;
    let mut fx = match ev {
        AppEvent::Key(k) if k.kind != KeyEventKind::Release => on_key(app, k),
        AppEvent::Key(_) => Vec::new(),
        AppEvent::Paste(text) => on_paste(&mut app.picker, &text),
        AppEvent::Mouse(m) => on_mouse(app, m),
        AppEvent::Resize(..) => Vec::new(),
        AppEvent::Tick(now) => {
            app.picker.tick(now);
            Vec::new()
        }
        other => on_result(&mut app.picker, &app.store, other),
    };
    let p = &mut app.picker;
    // So does a question about a row (delete, rename): rows arriving
    // meanwhile must not move the selection away from the row asked about.
    if query_before.is_some_and(|q| q != p.query.text())
        || (no_dialog_before && !matches!(p.dialog, Dialog::None | Dialog::Help))
    {
        p.user_moved = true;
    }
    let list_h = super::view::list_rows(p, app.width, app.height);
    p.page = list_h.max(1);
    p.clamp_scroll(list_h);
    // The preview follows the selection, and the query once its results are
    // in (for the match snippet); each (session, query) pair is loaded once.
    let _ = before;
    if super::view::preview_visible(p, app.width) {
        if let Some(path) = p.selected.clone() {
            let want = (path.clone(), p.scored_query.clone());
            if p.preview_requested.as_ref() != Some(&want) {
                p.preview_requested = Some(want);
                fx.push(Effect::LoadPreview {
                    path,
                    query: Query::parse(&p.scored_query),
                });
            }
        }
    }
    fx
}

fn ctrl(k: &KeyEvent) -> bool {
    k.modifiers.contains(KeyModifiers::CONTROL)
}
fn alt(k: &KeyEvent) -> bool {
    k.modifiers.contains(KeyModifiers::ALT)
}

fn on_key(app: &mut App, k: KeyEvent) -> Vec<Effect> {
    let print_mode = app.print_mode;
    let p = &mut app.picker;
    match &mut p.dialog {
        Dialog::Help => {
            p.dialog = Dialog::None;
            return Vec::new();
        }
        Dialog::ConfirmDelete { path, live } => {
            let (path, live) = (path.clone(), *live);
            return confirm(p, &k, |p| {
                if live {
                    // Changed seconds ago: an agent may be writing it. Ask again.
                    let age = p
                        .by_path
                        .get(&path)
                        .map(|&i| p.now_ms - last_change_ms(&p.rows[i].info))
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
        Dialog::Trashing { .. } => {
            return match k.code {
                KeyCode::Char('c') if ctrl(&k) => vec![Effect::Exit(Outcome::Quit)],
                _ => Vec::new(),
            };
        }
        Dialog::ConfirmPermanent { path, shown_ms, .. } => {
            let (path, shown_ms) = (path.clone(), *shown_ms);
            let cancel_key = matches!(
                k.code,
                KeyCode::Esc | KeyCode::Char('n') | KeyCode::Char('N')
            ) || (ctrl(&k) && k.code == KeyCode::Char('c'));
            if cancel_key {
                p.dialog = Dialog::None;
                p.set_status(StatusKind::Info, "Nothing deleted");
                return Vec::new();
            }
            // Keys in the first moments were typed before the question
            // could be read (a second Enter): ignored, as is every key but
            // the deliberate `y`.
            if p.now_ms - shown_ms < PERMANENT_GUARD_MS {
                return Vec::new();
            }
            if matches!(k.code, KeyCode::Char('y') | KeyCode::Char('Y')) && !ctrl(&k) && !alt(&k) {
                p.dialog = Dialog::None;
                p.set_status(StatusKind::Info, "Deleting permanently…");
                return vec![Effect::DeletePermanently(path)];
            }
            return Vec::new();
        }
        Dialog::Rename { path, input } => {
            match k.code {
                KeyCode::Enter => {
                    let name = input.text().trim().to_string();
                    let path = path.clone();
                    p.dialog = Dialog::None;
                    if name.is_empty() {
                        p.set_status(StatusKind::Info, "Name unchanged (blank names are ignored)");
                        return Vec::new();
                    }
                    p.own_writes.insert(path.clone());
                    return vec![Effect::Rename { path, name }];
                }
                KeyCode::Esc => return cancel(p),
                KeyCode::Char('c') if ctrl(&k) => return cancel(p),
                _ => {
                    input.handle_key(&k);
                }
            }
            return Vec::new();
        }
        Dialog::None => {}
    }

    match k.code {
        KeyCode::Esc => return vec![Effect::Exit(Outcome::Quit)],
        KeyCode::Char('c') if ctrl(&k) => return vec![Effect::Exit(Outcome::Quit)],
        KeyCode::Enter => {
            return match p.selected_row() {
                Some(r) if print_mode => vec![Effect::Exit(Outcome::Print(r.info.path.clone()))],
                Some(r) => vec![Effect::Exit(Outcome::Resume {
                    path: r.info.path.clone(),
                    id: r.info.id.clone(),
                    cwd: r.info.cwd.clone(),
                    agent: r.info.agent,
                })],
                None => Vec::new(),
            };
        }
        KeyCode::Tab | KeyCode::BackTab => {
            p.scope = match p.scope {
                Scope::Current => Scope::All,
                Scope::All => Scope::Current,
            };
            p.recompute();
        }
        KeyCode::F(1) => p.dialog = Dialog::Help,
        KeyCode::Char('?') if p.query.is_empty() && !ctrl(&k) && !alt(&k) => {
            p.dialog = Dialog::Help
        }
        KeyCode::F(2) => {
            let on = super::view::preview_visible(p, app.width);
            p.preview_on = Some(!on);
            // Load afresh when it opens again.
            p.preview_requested = None;
        }
        KeyCode::Char('t') if ctrl(&k) => {
            p.user_moved |= p.selected.is_some();
            if let Some(r) = p.selected_row() {
                return vec![Effect::OpenTree {
                    path: r.info.path.clone(),
                    agent: r.info.agent,
                }];
            }
        }
        KeyCode::Char('s') if ctrl(&k) => {
            p.sort = p.sort.next();
            p.recompute();
        }
        KeyCode::Char('n') if ctrl(&k) => {
            p.named_only = !p.named_only;
            p.recompute();
        }
        KeyCode::Char('p') if ctrl(&k) => p.show_paths = !p.show_paths,
        KeyCode::Char('i') if alt(&k) => {
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
        KeyCode::Char('r') if ctrl(&k) => {
            if let Some(r) = p.selected_row() {
                let input = LineInput::new(r.info.display_name().unwrap_or(""));
                p.dialog = Dialog::Rename {
                    path: r.info.path.clone(),
                    input,
                };
            }
        }
        KeyCode::Char('d') if ctrl(&k) => return ask_delete(p),
        KeyCode::Backspace | KeyCode::Char('h') if ctrl(&k) && p.query.is_empty() => {
            return ask_delete(p)
        }
        KeyCode::Char('z') if ctrl(&k) => {
            return match p.trashed.pop() {
                Some(path) => {
                    p.set_status(StatusKind::Info, "Restoring from trash…");
                    vec![Effect::Restore(path)]
                }
                None => {
                    p.set_status(StatusKind::Info, "Nothing to undo");
                    Vec::new()
                }
            };
        }
        KeyCode::Up => p.user_move_by(-1),
        KeyCode::Down => p.user_move_by(1),
        KeyCode::PageUp => p.user_move_by(-(p.page as isize)),
        KeyCode::PageDown => p.user_move_by(p.page as isize),
        KeyCode::Home => p.user_select_pos(0),
        KeyCode::End => p.user_select_pos(p.visible.len().saturating_sub(1)),
        // Everything else edits the query (Home/End stay the list's:
        // Ctrl+A/E go to the query's start and end).
        _ => {
            let before = p.query.text().to_string();
            if p.query.handle_key(&k) == Edit::Changed {
                return query_edited(p, &before);
            }
        }
    }
    Vec::new()
}

/// Pasted text is typed into the field that has the keys (the query when
/// no prompt is up); a question or the help ignores it, so that a paste
/// never answers or triggers anything.
fn on_paste(p: &mut PickerState, text: &str) -> Vec<Effect> {
    match &mut p.dialog {
        Dialog::Rename { input, .. } => {
            input.insert(text);
            Vec::new()
        }
        Dialog::None => {
            let before = p.query.text().to_string();
            p.query.insert(text);
            query_edited(p, &before)
        }
        _ => Vec::new(),
    }
}

/// A yes/no prompt: Enter runs `yes`, Esc or Ctrl+C cancels, and every
/// other key is swallowed while it is up.
fn confirm(
    p: &mut PickerState,
    k: &KeyEvent,
    yes: impl FnOnce(&mut PickerState) -> Vec<Effect>,
) -> Vec<Effect> {
    match k.code {
        KeyCode::Enter => {
            p.dialog = Dialog::None;
            yes(p)
        }
        KeyCode::Esc => cancel(p),
        KeyCode::Char('c') if ctrl(k) => cancel(p),
        _ => Vec::new(),
    }
}

fn trash(p: &mut PickerState, path: PathBuf) -> Vec<Effect> {
    p.dialog = Dialog::Trashing { path: path.clone() };
    vec![Effect::Trash(path)]
}

fn cancel(p: &mut PickerState) -> Vec<Effect> {
    p.dialog = Dialog::None;
    Vec::new()
}

/// When the file last changed: its mtime. (The newest entry's timestamp
/// is whatever the writer claimed, possibly in the future.)
fn last_change_ms(info: &crate::session::info::SessionInfo) -> i64 {
    info.file_mtime_ms
}

fn ask_delete(p: &mut PickerState) -> Vec<Effect> {
    if let Some(r) = p.selected_row() {
        let live = p.now_ms - last_change_ms(&r.info) < LIVE_WINDOW_MS;
        p.dialog = Dialog::ConfirmDelete {
            path: r.info.path.clone(),
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
    if !p.parsed.has_conditions() {
        p.scores = None;
        p.search_incomplete = None;
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
    Effect::Search {
        generation: p.search_gen,
        query: p.parsed.clone(),
        docs: p.docs(),
        index_problem: p.index_problem.clone(),
    }
}

fn on_mouse(app: &mut App, m: crossterm::event::MouseEvent) -> Vec<Effect> {
    let area = super::view::list_area(&app.picker, app.width, app.height);
    let rows = super::view::list_rows(&app.picker, app.width, app.height);
    let p = &mut app.picker;
    if p.dialog != Dialog::None {
        return Vec::new();
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
                        return on_key(app, KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
                    }
                }
            }
        }
        _ => {}
    }
    Vec::new()
}

const INCOMPLETE: &str = "Search incomplete";

fn on_result(p: &mut PickerState, store: &StoreConfig, ev: AppEvent) -> Vec<Effect> {
    match ev {
        AppEvent::Rows(rows) => {
            for r in &rows {
                p.own_writes.remove(&r.info.path);
            }
            p.upsert(rows);
            p.recompute();
            if p.parsed.has_conditions() && p.parsed.error().is_none() {
                // New rows are unscored: score everything again (stale results are dropped).
                p.search_gen += 1;
                return vec![search_effect(p)];
            }
        }
        AppEvent::LoadProgress { done, total } => p.loading = Some((done, total)),
        AppEvent::Indexing(progress) => {
            let finished = progress.is_none() && p.indexing.is_some();
            p.indexing = progress;
            // Bodies were not searchable while the index was being built.
            if finished && p.parsed.has_conditions() && p.parsed.error().is_none() {
                p.search_gen += 1;
                return vec![search_effect(p)];
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
                return vec![search_effect(p)];
            }
        }
        AppEvent::SearchDone {
            generation,
            query,
            docs,
            scores,
            incomplete,
        } => {
            if generation == p.search_gen {
                // Never an incomplete answer shown as complete: the header
                // says so while it lasts, the status line says why.
                // While the index is still being built the header says so
                // already: that is expected, not an error.
                let building = p.loading.is_some() || p.indexing.is_some();
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
                p.set_scores(&docs, scores);
                p.scored_query = query;
                p.recompute();
                if std::mem::take(&mut p.select_first_on_results) {
                    p.select_pos(0);
                    p.scroll = 0;
                }
            }
        }
        AppEvent::FsChanged(paths) => {
            let paths: Vec<SessionFile> = paths
                .into_iter()
                .filter(|x| x.extension().is_some_and(|e| e == "jsonl"))
                .map(|x| store.session_file(&x))
                .collect();
            if !paths.is_empty() {
                return vec![Effect::Rescan(paths)];
            }
        }
        AppEvent::RowGone(path) => {
            if p.by_path.contains_key(&path) {
                p.remove_keeping_place(&path);
            }
        }
        AppEvent::FolderGone(dir) => {
            let gone: Vec<PathBuf> = p
                .rows
                .iter()
                .map(|r| &r.info.path)
                .filter(|path| path.starts_with(&dir))
                .cloned()
                .collect();
            if !gone.is_empty() {
                for path in &gone {
                    p.remove(path);
                }
                p.recompute();
            }
        }
        AppEvent::PreviewLoaded(Ok(preview)) => {
            if p.selected.as_ref() == Some(&preview.path) {
                p.preview = Some(preview);
            }
        }
        AppEvent::PreviewLoaded(Err((path, e))) => {
            if p.selected.as_ref() == Some(&path) {
                p.preview = None;
                p.set_status(StatusKind::Error, format!("Preview failed: {e}"));
            }
        }
        AppEvent::Renamed { path, result } => match result {
            Ok(name) => {
                p.set_status(
                    StatusKind::Success,
                    format!(
                        "Renamed to \u{201c}{}\u{201d}",
                        crate::session::render::sanitize_line(&name)
                    ),
                );
                return vec![Effect::Rescan(vec![store.session_file(&path)])];
            }
            Err(e) => {
                p.own_writes.remove(&path);
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
                    p.trashed.push(path);
                    p.set_status(StatusKind::Success, "Session moved to trash · ctrl+z undo");
                }
                Err(reason) => {
                    p.status = None;
                    p.dialog = Dialog::ConfirmPermanent {
                        path,
                        reason,
                        shown_ms: p.now_ms,
                    };
                }
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
                return vec![Effect::Rescan(vec![store.session_file(&path)])];
            }
            Err(e) => p.set_status(StatusKind::Error, format!("Undo failed: {e}")),
        },
        AppEvent::Key(_)
        | AppEvent::Paste(_)
        | AppEvent::Mouse(_)
        | AppEvent::Resize(..)
        | AppEvent::Tick(_)
        | AppEvent::TreeLoaded { .. }
        | AppEvent::Exported(_)
        | AppEvent::Wrote { .. } => {}
    }
    Vec::new()
}
