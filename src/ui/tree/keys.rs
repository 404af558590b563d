//! Tree view behaviour (SPEC §6–7).

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEventKind,
};

use super::state::{Pending, TreeDialog, TreeState};
use crate::session::view::Filter;
use crate::ui::app::{App, AppEvent, Effect, Mode, Outcome};
use crate::ui::input::{Edit, LineInput};

fn ctrl(k: &KeyEvent) -> bool {
    k.modifiers.contains(KeyModifiers::CONTROL)
}
fn alt(k: &KeyEvent) -> bool {
    k.modifiers.contains(KeyModifiers::ALT)
}
fn shift(k: &KeyEvent) -> bool {
    k.modifiers.contains(KeyModifiers::SHIFT)
}

/// Handles an event while the tree view is open.
pub fn update(app: &mut App, ev: AppEvent) -> Vec<Effect> {
    let (w, h) = (app.width, app.height);
    let Mode::Tree(t) = &mut app.mode else {
        return Vec::new();
    };
    let list_h = super::view::list_area(w, h).height as usize;
    t.page = list_h.max(1);
    let fx = match ev {
        AppEvent::Key(k) if k.kind != KeyEventKind::Release => on_key(t, k),
        AppEvent::Paste(text) => on_paste(t, &text),
        AppEvent::Mouse(m) => {
            let area = super::view::list_area(w, h);
            match m.kind {
                MouseEventKind::ScrollUp => move_by(t, -3, false),
                MouseEventKind::ScrollDown => move_by(t, 3, false),
                MouseEventKind::Down(MouseButton::Left)
                    if m.row >= area.y && m.row < area.y + area.height =>
                {
                    let pos = t.scroll + (m.row - area.y) as usize;
                    if pos < t.rows.len() {
                        t.select_row(pos);
                    }
                }
                _ => {}
            }
            Vec::new()
        }
        AppEvent::Tick(now) => {
            t.now_ms = now;
            let shown = t.status.as_ref().map(|(s, _)| s.as_str());
            if t.status_timer.expired(shown, now) {
                t.status = None;
            }
            Vec::new()
        }
        _ => Vec::new(),
    };
    let Mode::Tree(t) = &mut app.mode else {
        return fx;
    };
    t.clamp_scroll(list_h);
    // Leaving the tree: back to the picker, selection untouched there.
    if fx.iter().any(|e| matches!(e, Effect::CloseTree)) {
        app.mode = Mode::Picker;
    }
    fx
}

fn move_by(t: &mut TreeState, delta: isize, wrap: bool) {
    let n = t.rows.len() as isize;
    if n == 0 {
        return;
    }
    let cur = t.selected.unwrap_or(0) as isize;
    let next = if wrap {
        (cur + delta).rem_euclid(n)
    } else {
        (cur + delta).clamp(0, n - 1)
    };
    t.select_row(next as usize);
}

/// Ctrl+← off a foldable row (Atomic's `findBranchSegmentStart("up")`):
/// climb the visible parents to the nearest segment start (the first entry
/// after a fork) above the selection, else to the root.
fn segment_start_up(t: &TreeState, pos: usize) -> usize {
    let mut cur = pos;
    loop {
        let Some(parent) = t.rows[cur].parent_row else {
            return cur;
        };
        if t.rows[parent].visible_children > 1 && cur < pos {
            return cur;
        }
        cur = parent;
    }
}

/// Ctrl+→ off a folded row (`findBranchSegmentStart("down")`): follow the
/// single-child chain to the next fork and land on its first child, or stop
/// at the end of the branch.
fn segment_start_down(t: &TreeState, pos: usize) -> usize {
    let mut cur = pos;
    loop {
        let r = &t.rows[cur];
        // Rows are depth first: a row's first visible child is the next row.
        if r.visible_children == 0 || cur + 1 >= t.rows.len() {
            return cur;
        }
        if r.visible_children > 1 {
            return cur + 1;
        }
        cur += 1;
    }
}

fn on_key(t: &mut TreeState, k: KeyEvent) -> Vec<Effect> {
    if let Some(fx) = on_dialog_key(t, &k) {
        return fx;
    }
    if t.context_view {
        match k.code {
            KeyCode::F(3) | KeyCode::Esc => t.context_view = false,
            KeyCode::Char('c') if ctrl(&k) => return vec![Effect::Exit(Outcome::Quit)],
            KeyCode::Up => t.context_scroll = t.context_scroll.saturating_sub(1),
            KeyCode::Down => t.context_scroll = t.context_scroll.saturating_add(1),
            KeyCode::PageUp => t.context_scroll = t.context_scroll.saturating_sub(t.page as u16),
            KeyCode::PageDown => t.context_scroll = t.context_scroll.saturating_add(t.page as u16),
            KeyCode::Home => t.context_scroll = 0,
            _ => {}
        }
        return Vec::new();
    }
    let page = t.page as isize;
    match k.code {
        KeyCode::Esc => {
            if !t.search.is_empty() {
                // As Atomic: clearing the search also clears the folds.
                t.search.clear();
                t.folded.clear();
                t.rebuild();
            } else if t.from_picker {
                return vec![Effect::CloseTree];
            } else {
                return vec![Effect::Exit(Outcome::Quit)];
            }
        }
        KeyCode::Char('c') if ctrl(&k) => return vec![Effect::Exit(Outcome::Quit)],
        KeyCode::Up if shift(&k) => t.detail_scroll = t.detail_scroll.saturating_sub(1),
        KeyCode::Down if shift(&k) => t.detail_scroll = t.detail_scroll.saturating_add(1),
        KeyCode::Up => move_by(t, -1, true),
        KeyCode::Down => move_by(t, 1, true),
        // While searching the rows are the matches, so these step through
        // them without leaving the search field (n/N would type).
        KeyCode::Char('n') if ctrl(&k) => move_by(t, 1, true),
        KeyCode::Char('p') if ctrl(&k) => move_by(t, -1, true),
        KeyCode::Left if ctrl(&k) || alt(&k) => {
            if let Some(pos) = t.selected {
                let r = &t.rows[pos];
                if r.foldable && !r.folded {
                    t.folded.insert(t.entry_id(r.entry).to_string());
                    t.rebuild();
                } else {
                    let target = segment_start_up(t, pos);
                    t.select_row(target);
                }
            }
        }
        KeyCode::Right if ctrl(&k) || alt(&k) => {
            if let Some(pos) = t.selected {
                if t.rows[pos].folded {
                    let id = t.entry_id(t.rows[pos].entry).to_string();
                    t.folded.remove(&id);
                    t.rebuild();
                } else {
                    let target = segment_start_down(t, pos);
                    t.select_row(target);
                }
            }
        }
        KeyCode::Left | KeyCode::PageUp => move_by(t, -page, false),
        KeyCode::Right | KeyCode::PageDown => move_by(t, page, false),
        KeyCode::Home => t.select_row(0),
        KeyCode::End => t.select_row(t.rows.len().saturating_sub(1)),
        KeyCode::Char(c)
            if ctrl(&k) && matches!(c.to_ascii_lowercase(), 'd' | 't' | 'u' | 'l' | 'a') =>
        {
            let f = match c.to_ascii_lowercase() {
                't' => Filter::NoTools,
                'u' => Filter::UserOnly,
                'l' => Filter::LabeledOnly,
                'a' => Filter::All,
                _ => Filter::Default,
            };
            // Each direct key toggles back to the default filter.
            t.set_filter(if t.filter == f { Filter::Default } else { f });
        }
        KeyCode::Char('o') | KeyCode::Char('O') if ctrl(&k) => {
            let f = if shift(&k) || k.code == KeyCode::Char('O') {
                t.filter.prev()
            } else {
                t.filter.next()
            };
            t.set_filter(f);
        }
        KeyCode::F(1) => t.dialog = TreeDialog::Help,
        KeyCode::Char('?') if t.search.is_empty() && !ctrl(&k) => t.dialog = TreeDialog::Help,
        KeyCode::F(2) => t.detail_on = Some(!t.detail_on.unwrap_or(true)),
        KeyCode::F(3) => {
            t.context_scroll = 0;
            t.open_context();
        }
        KeyCode::Char('L') if !ctrl(&k) && !alt(&k) => {
            if let Some(i) = t.selected_entry() {
                let target = t.entry_id(i).to_string();
                let input = t
                    .loaded
                    .tree
                    .labels
                    .get(&target)
                    .map(|l| LineInput::new(&l.text))
                    .unwrap_or_default();
                t.dialog = TreeDialog::Label { target, input };
            }
        }
        KeyCode::Char('T') if !ctrl(&k) && !alt(&k) => {
            t.label_times = !t.label_times;
        }
        KeyCode::Char('E') if !ctrl(&k) && !alt(&k) => {
            if let Some(i) = t.selected_entry() {
                t.dialog = TreeDialog::Export {
                    entry: t.entry_id(i).to_string(),
                    thinking: false,
                };
            }
        }
        KeyCode::Enter => {
            if let Some(i) = t.selected_entry() {
                if t.is_leaf(i) {
                    t.status = Some(("Already at this point".into(), false));
                } else {
                    t.dialog = TreeDialog::Continue {
                        entry: t.entry_id(i).to_string(),
                    };
                }
            }
        }
        // Everything else edits the search. The keys above are the tree's
        // (←/→, Home/End, Ctrl/Alt+←/→, Ctrl+A/U filters), so here the
        // cursor moves with Ctrl+B/F, Alt+B/F and Ctrl+E.
        _ => {
            if t.search.handle_key(&k) == Edit::Changed {
                // Every search edit clears the folds (Atomic).
                t.folded.clear();
                t.rebuild();
            }
        }
    }
    Vec::new()
}

/// Pasted text goes into the prompt being edited, else into the search
/// (starting one); the other dialogs and the context view ignore it, so a
/// paste never answers a question.
fn on_paste(t: &mut TreeState, text: &str) -> Vec<Effect> {
    match &mut t.dialog {
        TreeDialog::Label { input, .. } | TreeDialog::BranchSummary { input, .. } => {
            input.insert(text);
        }
        TreeDialog::None if !t.context_view => {
            let changed = t.search.insert(text) == Edit::Changed;
            if changed {
                t.folded.clear();
                t.rebuild();
            }
        }
        _ => {}
    }
    Vec::new()
}

/// Writes go through here: a v1/v2 file must be migrated first, after asking.
fn write(t: &mut TreeState, p: Pending) -> Vec<Effect> {
    if t.loaded.session.needs_migration() {
        t.dialog = TreeDialog::ConfirmMigrate { then: p };
        return Vec::new();
    }
    t.dialog = TreeDialog::None;
    vec![pending_effect(t, p)]
}

pub fn pending_effect(t: &TreeState, p: Pending) -> Effect {
    match p {
        Pending::Label { target, label } => Effect::Label {
            path: t.path.clone(),
            target,
            label,
        },
        Pending::Branch { entry, summary } => Effect::Branch {
            path: t.path.clone(),
            entry,
            summary,
        },
    }
}

fn on_dialog_key(t: &mut TreeState, k: &KeyEvent) -> Option<Vec<Effect>> {
    let cancel = k.code == KeyCode::Esc || (ctrl(k) && k.code == KeyCode::Char('c'));
    match &mut t.dialog {
        TreeDialog::None => None,
        TreeDialog::Help => {
            t.dialog = TreeDialog::None;
            Some(Vec::new())
        }
        TreeDialog::Label { target, input } => {
            if cancel {
                t.dialog = TreeDialog::None;
                return Some(Vec::new());
            }
            match k.code {
                KeyCode::Enter => {
                    let target = target.clone();
                    let text = input.text().trim().to_string();
                    // Empty removes the label.
                    let label = (!text.is_empty()).then_some(text);
                    return Some(write(t, Pending::Label { target, label }));
                }
                _ => {
                    input.handle_key(k);
                }
            }
            Some(Vec::new())
        }
        TreeDialog::Continue { entry } => {
            let entry = entry.clone();
            match k.code {
                KeyCode::Char('1') | KeyCode::Char('b') => {
                    // Before a user message: its text is offered again
                    // once the move is written.
                    t.resend = user_text(t, &entry);
                    t.dialog = TreeDialog::BranchSummary {
                        entry,
                        input: LineInput::default(),
                    };
                }
                KeyCode::Char('2') | KeyCode::Char('f') => {
                    // The fork ends before a user message (Atomic's /fork);
                    // its text is offered with the new session.
                    t.resend = user_text(t, &entry);
                    t.dialog = TreeDialog::None;
                    t.status = Some(("Forking…".into(), false));
                    return Some(vec![Effect::Fork {
                        path: t.path.clone(),
                        entry,
                    }]);
                }
                KeyCode::Char('y') => {
                    if let Some(text) = user_text(t, &entry) {
                        // OSC 52 has no answer: arbor cannot know whether
                        // the terminal honoured it, so it says what it did.
                        t.status = Some((
                            "Message sent to the terminal's clipboard (OSC 52)".into(),
                            false,
                        ));
                        return Some(vec![Effect::Copy(text)]);
                    }
                }
                KeyCode::Char('3') | KeyCode::Esc => t.dialog = TreeDialog::None,
                KeyCode::Char('c') if ctrl(k) => t.dialog = TreeDialog::None,
                _ => {}
            }
            Some(Vec::new())
        }
        TreeDialog::Export { entry, thinking } => {
            use crate::session::export::{default_file_name, ExportFormat};
            let format = match k.code {
                KeyCode::Char('m') | KeyCode::Char('1') => ExportFormat::Markdown,
                KeyCode::Char('h') | KeyCode::Char('2') => ExportFormat::Html,
                KeyCode::Char('t') => {
                    *thinking = !*thinking;
                    return Some(Vec::new());
                }
                _ => {
                    if cancel || k.code == KeyCode::Char('3') {
                        t.dialog = TreeDialog::None;
                    }
                    return Some(Vec::new());
                }
            };
            let (leaf, thinking) = (entry.clone(), *thinking);
            let file_name = default_file_name(t.loaded.session.id(), Some(&leaf), format);
            t.dialog = TreeDialog::None;
            t.status = Some(("Exporting…".into(), false));
            Some(vec![Effect::Export {
                path: t.path.clone(),
                leaf,
                format,
                thinking,
                file_name,
            }])
        }
        TreeDialog::BranchSummary { entry, input } => {
            if cancel {
                t.dialog = TreeDialog::None;
                return Some(Vec::new());
            }
            match k.code {
                KeyCode::Enter => {
                    let p = Pending::Branch {
                        entry: entry.clone(),
                        summary: input.text().trim().to_string(),
                    };
                    return Some(write(t, p));
                }
                _ => {
                    input.handle_key(k);
                }
            }
            Some(Vec::new())
        }
        TreeDialog::ConfirmMigrate { then } => {
            let then = then.clone();
            match k.code {
                KeyCode::Enter => {
                    t.dialog = TreeDialog::None;
                    Some(vec![Effect::MigrateThen {
                        path: t.path.clone(),
                        then: Box::new(pending_effect(t, then)),
                    }])
                }
                _ if cancel => {
                    t.dialog = TreeDialog::None;
                    t.status = Some(("Nothing written".into(), false));
                    Some(Vec::new())
                }
                _ => Some(Vec::new()),
            }
        }
        TreeDialog::OfferResume {
            path,
            id,
            cwd,
            what,
            prompt,
        } => {
            let (path, id, cwd, what) = (path.clone(), id.clone(), cwd.clone(), what.clone());
            match k.code {
                KeyCode::Char('y') if prompt.is_some() => {
                    let text = prompt.clone().unwrap_or_default();
                    t.status = Some(("Message copied to the clipboard".into(), false));
                    Some(vec![Effect::Copy(text)])
                }
                KeyCode::Enter => {
                    t.dialog = TreeDialog::None;
                    Some(vec![Effect::Exit(Outcome::Resume {
                        path,
                        id,
                        cwd,
                        agent: t.loaded.agent,
                    })])
                }
                _ if cancel => {
                    // Declined: what was done stays said (for a while).
                    t.dialog = TreeDialog::None;
                    t.status = Some((what, false));
                    Some(Vec::new())
                }
                _ => Some(Vec::new()),
            }
        }
    }
}

/// The text of a user message (what Atomic puts back in the editor).
pub fn user_text(t: &TreeState, id: &str) -> Option<String> {
    let i = t.loaded.tree.index_of(id)?;
    let e = &t.loaded.session.entries[i];
    (e.role() == Some("user")).then(|| crate::session::writer::user_message_text(e))
}
