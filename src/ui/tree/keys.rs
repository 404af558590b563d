//! Tree view behaviour (docs/spec.md §6–7): the keys of the tree, of its context
//! and compare views, the mouse and the clock. The questions' and prompts'
//! keys are in [`super::dialogs`].

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

use super::dialogs::{self, on_dialog_key};
use super::state::{TreeDialog, TreeState};
use crate::ui::app::{App, AppEvent, Effect, Mode, Outcome, Step};
use crate::ui::input::Edit;
use crate::ui::keymap::{
    alt, bind, ctrl, key, with, Keymap, Named, Scroll, CANCEL_ID, CONFIRM_ID, FIRST_ID, LAST_ID,
};
use crate::ui::widgets::help_key;
use arbor_session::view::Filter;

/// What the tree's keys do (see [`KEYS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Up,
    Down,
    PageUp,
    PageDown,
    First,
    Last,
    FoldUp,
    UnfoldDown,
    DetailUp,
    DetailDown,
    Continue,
    Label,
    LabelTimes,
    Export,
    Mark,
    Compare,
    Filter(Filter),
    Cycle,
    CycleBack,
    Detail,
    Context,
    Help,
    Back,
}

impl Named for Action {
    /// Atomic's /tree ids where Atomic has the action, arbor's own
    /// (`arbor.tree.*`) where it does not.
    fn id(&self) -> Option<&'static str> {
        Some(match self {
            Action::Up => "tui.select.up",
            Action::Down => "tui.select.down",
            Action::PageUp => "tui.select.pageUp",
            Action::PageDown => "tui.select.pageDown",
            Action::First => FIRST_ID,
            Action::Last => LAST_ID,
            Action::FoldUp => "app.tree.foldOrUp",
            Action::UnfoldDown => "app.tree.unfoldOrDown",
            Action::DetailUp => "arbor.tree.detailUp",
            Action::DetailDown => "arbor.tree.detailDown",
            Action::Continue => CONFIRM_ID,
            Action::Label => "app.tree.editLabel",
            Action::LabelTimes => "app.tree.toggleLabelTimestamp",
            Action::Export => "arbor.tree.export",
            Action::Mark => "arbor.tree.mark",
            Action::Compare => COMPARE_ID,
            Action::Filter(Filter::Default) => "app.tree.filter.default",
            Action::Filter(Filter::NoTools) => "app.tree.filter.noTools",
            Action::Filter(Filter::UserOnly) => "app.tree.filter.userOnly",
            Action::Filter(Filter::LabeledOnly) => "app.tree.filter.labeledOnly",
            Action::Filter(Filter::All) => "app.tree.filter.all",
            Action::Cycle => "app.tree.filter.cycleForward",
            Action::CycleBack => "app.tree.filter.cycleBackward",
            Action::Detail => "arbor.tree.detail",
            Action::Context => CONTEXT_ID,
            Action::Help => "arbor.tree.help",
            Action::Back => CANCEL_ID,
        })
    }
}

/// The ids of the keys that open the context and compare views (which
/// close them too).
const CONTEXT_ID: &str = "arbor.tree.context";
const COMPARE_ID: &str = "arbor.tree.compare";

const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

const CONTROL: KeyModifiers = KeyModifiers::CONTROL;

const ALT: KeyModifiers = KeyModifiers::ALT;

/// The tree's keys: dispatch, the help (F1) and the footer's key names all
/// come from here. Keys not listed go to the search field, so the
/// tree's own ←/→, Home/End, Ctrl/Alt+←/→ and Ctrl+A/U are not the
/// field's here. Every character typed is the search's (`Test` searches
/// `Test`): the commands Atomic gives Shift+L and Shift+T, and arbor's
/// export, mark and compare, are on Alt+letters, which type nothing.
pub const KEYS: Keymap<Action> = Keymap(&[
    bind(
        &[
            (key(KeyCode::Up), Action::Up),
            (key(KeyCode::Down), Action::Down),
            // While searching the rows are the matches: these step
            // through them without leaving the field (n/N would type).
            (ctrl('n').quiet().as_id("arbor.tree.down"), Action::Down),
            (ctrl('p').quiet().as_id("arbor.tree.up"), Action::Up),
        ],
        "move (wraps around); with a search, through its matches",
    ),
    bind(
        &[
            // As Atomic's: the editor's cursor keys page the tree.
            (
                key(KeyCode::Left).as_id("tui.editor.cursorLeft"),
                Action::PageUp,
            ),
            (
                key(KeyCode::Right).as_id("tui.editor.cursorRight"),
                Action::PageDown,
            ),
            (key(KeyCode::PageUp).quiet(), Action::PageUp),
            (key(KeyCode::PageDown).quiet(), Action::PageDown),
        ],
        "page up / down",
    ),
    bind(
        &[
            (key(KeyCode::Home), Action::First),
            (key(KeyCode::End), Action::Last),
        ],
        "first / last",
    ),
    bind(
        &[
            (with(KeyCode::Left, CONTROL), Action::FoldUp),
            (with(KeyCode::Left, ALT).quiet(), Action::FoldUp),
        ],
        "fold a root or branch start, else jump up a branch",
    ),
    bind(
        &[
            (with(KeyCode::Right, CONTROL), Action::UnfoldDown),
            (with(KeyCode::Right, ALT).quiet(), Action::UnfoldDown),
        ],
        "unfold, else jump down to the next branch or its end",
    ),
    bind(
        &[
            (with(KeyCode::Up, SHIFT), Action::DetailUp),
            (with(KeyCode::Down, SHIFT), Action::DetailDown),
        ],
        "scroll the detail pane",
    ),
    bind(
        &[(key(KeyCode::Enter), Action::Continue)],
        "continue from here: branch in place or fork to a new file",
    ),
    bind(
        &[(alt('l'), Action::Label)],
        "edit the label (empty removes it)",
    ),
    bind(&[(alt('t'), Action::LabelTimes)], "show label times"),
    bind(
        &[(alt('e'), Action::Export)],
        "export the branch ending here into the current folder",
    ),
    bind(
        &[(alt('m'), Action::Mark)],
        "mark this entry to compare (again: unmark)",
    ),
    bind(
        &[(alt('c'), Action::Compare)],
        "compare the marked entry's branch with the selected one's",
    ),
    bind(
        &[(ctrl('d'), Action::Filter(Filter::Default))],
        "default filter",
    ),
    bind(
        &[(ctrl('t'), Action::Filter(Filter::NoTools))],
        "no tool results",
    ),
    bind(
        &[(ctrl('u'), Action::Filter(Filter::UserOnly))],
        "user messages only",
    ),
    bind(
        &[(ctrl('l'), Action::Filter(Filter::LabeledOnly))],
        "labeled entries only",
    ),
    bind(&[(ctrl('a'), Action::Filter(Filter::All))], "all entries"),
    bind(&[(ctrl('o'), Action::Cycle)], "cycle the filters"),
    bind(
        &[(ctrl('O'), Action::CycleBack)],
        "cycle the filters backwards",
    ),
    bind(
        &[(key(KeyCode::F(2)), Action::Detail)],
        "detail pane on/off",
    ),
    bind(
        &[(key(KeyCode::F(3)), Action::Context)],
        "context: what the model sees when resuming here",
    ),
    bind(&[(key(KeyCode::F(1)), Action::Help)], "this help"),
    // Ctrl+C is Atomic's cancel too: it never quits from a tree the
    // picker opened.
    bind(
        &[
            (key(KeyCode::Esc), Action::Back),
            (ctrl('c').quiet(), Action::Back),
        ],
        "clear the search, else back to the picker (or quit)",
    ),
]);

/// What the context view's keys do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextAction {
    Scroll(Scroll),
    Close,
}

impl Named for ContextAction {
    fn id(&self) -> Option<&'static str> {
        match self {
            ContextAction::Scroll(s) => s.id(),
            ContextAction::Close => Some(CANCEL_ID),
        }
    }
}

/// The context view's keys (F3): it scrolls; F3 or Esc go back.
pub const CONTEXT_KEYS: Keymap<ContextAction> = Keymap(&[
    bind(
        &[
            (key(KeyCode::Up), ContextAction::Scroll(Scroll::Up)),
            (key(KeyCode::Down), ContextAction::Scroll(Scroll::Down)),
            (key(KeyCode::PageUp), ContextAction::Scroll(Scroll::PageUp)),
            (
                key(KeyCode::PageDown),
                ContextAction::Scroll(Scroll::PageDown),
            ),
            (
                key(KeyCode::Home).quiet(),
                ContextAction::Scroll(Scroll::Top),
            ),
        ],
        "scroll",
    ),
    bind(
        &[
            (key(KeyCode::F(3)).as_id(CONTEXT_ID), ContextAction::Close),
            (key(KeyCode::Esc), ContextAction::Close),
            (ctrl('c').quiet(), ContextAction::Close),
        ],
        "back to the tree",
    ),
]);

/// What the compare view's keys do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareAction {
    Scroll(Scroll),
    Close,
}

impl Named for CompareAction {
    fn id(&self) -> Option<&'static str> {
        match self {
            CompareAction::Scroll(s) => s.id(),
            CompareAction::Close => Some(CANCEL_ID),
        }
    }
}

/// The compare view's keys (`arbor.tree.compare`, Alt+C): it scrolls; Esc goes back to the
/// tree, the mark and the selection as they were.
pub const COMPARE_KEYS: Keymap<CompareAction> = Keymap(&[
    bind(
        &[
            (key(KeyCode::Up), CompareAction::Scroll(Scroll::Up)),
            (key(KeyCode::Down), CompareAction::Scroll(Scroll::Down)),
            (key(KeyCode::PageUp), CompareAction::Scroll(Scroll::PageUp)),
            (
                key(KeyCode::PageDown),
                CompareAction::Scroll(Scroll::PageDown),
            ),
            (key(KeyCode::Home), CompareAction::Scroll(Scroll::Top)),
            (key(KeyCode::End), CompareAction::Scroll(Scroll::Bottom)),
        ],
        "scroll",
    ),
    bind(
        &[
            (key(KeyCode::Esc), CompareAction::Close),
            (alt('c').quiet().as_id(COMPARE_ID), CompareAction::Close),
            (ctrl('c').quiet(), CompareAction::Close),
        ],
        "back to the tree",
    ),
]);

/// Handles an event while the tree view is open.
pub fn update(app: &mut App, ev: AppEvent) -> Step {
    let (w, h, frame_ms) = (app.width, app.height, app.frame_ms);
    let Mode::Tree(t) = &mut app.mode else {
        return Step::none();
    };
    let list_h = super::view::list_area(w, h).height as usize;
    t.page = list_h.max(1);
    // A double click, told apart before the event is taken apart.
    let ev_kind = match &ev {
        AppEvent::DoubleClick(_) => Some(true),
        AppEvent::Mouse(_) => Some(false),
        _ => None,
    };
    let step: Step = match ev {
        AppEvent::Key(k) if k.kind != KeyEventKind::Release => on_key(t, k, w, h).into(),
        AppEvent::Paste(text) => on_paste(t, &text).into(),
        AppEvent::Mouse(m) | AppEvent::DoubleClick(m) => {
            let double = matches!(ev_kind, Some(true));
            let in_compare = t.compare.is_some() && t.dialog == TreeDialog::None;
            let step = if in_compare {
                on_compare_mouse(t, m, w, h)
            } else {
                on_mouse(t, m, w, h, double)
            };
            match step {
                Some(step) => step,
                // Neither the wheel nor a click on a row: nothing changed.
                None => return Step::none(),
            }
        }
        AppEvent::Tick(now) => on_tick(t, now, frame_ms),
        _ => Step::none(),
    };
    let Mode::Tree(t) = &mut app.mode else {
        return step;
    };
    t.clamp_scroll(list_h);
    // Leaving the tree: back to the picker, selection untouched there.
    if step.effects.iter().any(|e| matches!(e, Effect::CloseTree)) {
        app.mode = Mode::Picker;
    }
    step
}

/// The wheel over the compare view scrolls it; `None` for anything else.
fn on_compare_mouse(t: &mut TreeState, m: MouseEvent, w: u16, h: u16) -> Option<Step> {
    let step = match m.kind {
        MouseEventKind::ScrollUp => -3,
        MouseEventKind::ScrollDown => 3,
        _ => return None,
    };
    let max = compare_max_scroll(t, w, h);
    if let Some(c) = &mut t.compare {
        c.scroll = c.scroll.saturating_add_signed(step).min(max);
    }
    Some(Step::redraw(Vec::new()))
}

/// The wheel moves the selection over the rows and scrolls the detail
/// pane over it; a click on a row selects it, a double click does what
/// Enter does there; `None` for anything else (or while a box is up).
fn on_mouse(t: &mut TreeState, m: MouseEvent, w: u16, h: u16, double: bool) -> Option<Step> {
    if t.dialog != TreeDialog::None {
        return None;
    }
    let (list, detail) = super::view::panes(t, w, h);
    let at = ratatui::layout::Position::new(m.column, m.row);
    let over_detail = detail.is_some_and(|d| d.contains(at));
    match m.kind {
        MouseEventKind::ScrollUp if over_detail => {
            t.detail_scroll = t.detail_scroll.saturating_sub(3);
        }
        MouseEventKind::ScrollDown if over_detail => {
            t.detail_scroll = t.detail_scroll.saturating_add(3);
        }
        MouseEventKind::ScrollUp => move_by(t, -3, false),
        MouseEventKind::ScrollDown => move_by(t, 3, false),
        MouseEventKind::Down(MouseButton::Left) if list.contains(at) => {
            let pos = t.scroll + (m.row - list.y) as usize;
            if pos >= t.rows.len() {
                return None;
            }
            t.select_row(pos);
            if double {
                return Some(Step::redraw(act(t, Action::Continue, w)));
            }
        }
        _ => return None,
    }
    Some(Step::redraw(Vec::new()))
}

/// A second passed: the status message expires, label times change day.
fn on_tick(t: &mut TreeState, now: i64, frame_ms: i64) -> Step {
    t.now_ms = now;
    let shown = t.status.as_ref().map(|(s, _)| s.as_str());
    let expired = t.status_timer.expired(shown, now);
    if expired {
        t.status = None;
    }
    // Label times read `HH:MM` today, `M/D HH:MM` before.
    let dated = t.label_times && t.label_day_changed(frame_ms, now);
    Step {
        effects: Vec::new(),
        redraw: expired || dated,
    }
}

/// The last first-row of the compare view: its rows at this width, less a
/// screen.
fn compare_max_scroll(t: &TreeState, width: u16, height: u16) -> usize {
    let shown = super::view::list_area(width, height).height as usize;
    t.compare.as_ref().map_or(0, |c| {
        arbor_session::compare::layout(&c.cmp, width as usize)
            .len()
            .saturating_sub(shown)
    })
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
        let Some(parent) = t.rows[cur].parent_row() else {
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

/// A key: its effects, or `None` when it did nothing (not a key of the
/// view, the field or the question up).
fn on_key(t: &mut TreeState, k: KeyEvent, width: u16, height: u16) -> Option<Vec<Effect>> {
    if t.dialog == TreeDialog::Help {
        let rows = super::view::help_rows();
        let area = ratatui::layout::Rect::new(0, 0, width, height);
        match help_key(&k, &rows, super::view::HELP_WIDTH, area, t.help_scroll) {
            Some(scroll) if scroll == t.help_scroll => return None,
            Some(scroll) => t.help_scroll = scroll,
            None => t.dialog = TreeDialog::None,
        }
        return Some(Vec::new());
    }
    if t.dialog != TreeDialog::None {
        return on_dialog_key(t, &k);
    }
    if t.compare.is_some() {
        let max = compare_max_scroll(t, width, height);
        let page = t.page;
        match COMPARE_KEYS.action(&k, true)? {
            CompareAction::Close => t.compare = None,
            CompareAction::Scroll(s) => {
                let c = t.compare.as_mut()?;
                // A resize may have left the scroll past the end.
                let at = s.apply(c.scroll.min(max), page, max);
                if at == c.scroll {
                    return None;
                }
                c.scroll = at;
            }
        }
        return Some(Vec::new());
    }
    if t.context_view {
        match CONTEXT_KEYS.action(&k, true)? {
            ContextAction::Close => t.context_view = false,
            ContextAction::Scroll(s) => {
                let at = s.apply(t.context_scroll.into(), t.page, u16::MAX.into());
                t.context_scroll = u16::try_from(at).unwrap_or(u16::MAX);
            }
        }
        return Some(Vec::new());
    }
    match KEYS.action(&k, t.search.is_empty()) {
        Some(action) => Some(act(t, action, width)),
        // Everything else edits the search.
        None => match t.search.handle_key(&k) {
            Edit::Ignored => None,
            Edit::Moved => Some(Vec::new()),
            Edit::Changed => {
                // Every search edit clears the folds (Atomic).
                t.folded.clear();
                t.rebuild();
                Some(Vec::new())
            }
        },
    }
}

fn act(t: &mut TreeState, action: Action, width: u16) -> Vec<Effect> {
    let page = t.page as isize;
    match action {
        Action::Back => return back(t),
        Action::DetailUp => t.detail_scroll = t.detail_scroll.saturating_sub(1),
        Action::DetailDown => t.detail_scroll = t.detail_scroll.saturating_add(1),
        Action::Up => move_by(t, -1, true),
        Action::Down => move_by(t, 1, true),
        Action::FoldUp => fold_up(t),
        Action::UnfoldDown => unfold_down(t),
        Action::PageUp => move_by(t, -page, false),
        Action::PageDown => move_by(t, page, false),
        Action::First => t.select_row(0),
        Action::Last => t.select_row(t.rows.len().saturating_sub(1)),
        // Each direct key toggles back to the default filter.
        Action::Filter(f) => t.set_filter(if t.filter == f { Filter::Default } else { f }),
        Action::Cycle => t.set_filter(t.filter.next()),
        Action::CycleBack => t.set_filter(t.filter.prev()),
        Action::Help => {
            t.dialog = TreeDialog::Help;
            t.help_scroll = 0;
        }
        // From what is on screen: below the pane's default width it starts
        // hidden, so the first F2 there must show it.
        Action::Detail => t.detail_on = Some(!super::view::detail_visible(t, width)),
        Action::Context => {
            t.context_scroll = 0;
            t.open_context();
        }
        Action::Label if t.loaded.session.foreign.is_some() => {
            refuse(t, "labelled");
        }
        Action::Continue if t.loaded.session.foreign.is_some() => {
            refuse(t, "branched or forked");
        }
        Action::Label => dialogs::ask_label(t),
        Action::LabelTimes => t.label_times = !t.label_times,
        Action::Mark => toggle_mark(t),
        Action::Compare => compare(t),
        Action::Export => dialogs::ask_export(t),
        Action::Continue => dialogs::ask_continue(t),
    }
    Vec::new()
}

/// Esc: the search cleared, else back to the picker (or out of arbor).
fn back(t: &mut TreeState) -> Vec<Effect> {
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
    Vec::new()
}

/// Ctrl+←: the selected branch folded, else up to its segment's start.
fn fold_up(t: &mut TreeState) {
    if let Some(pos) = t.selected {
        let r = &t.rows[pos];
        if r.foldable() && !r.folded() {
            t.folded.insert(t.entry_id(r.entry()).to_string());
            t.rebuild();
        } else {
            let target = segment_start_up(t, pos);
            t.select_row(target);
        }
    }
}

/// Ctrl+→: the selected branch unfolded, else down to the next segment.
fn unfold_down(t: &mut TreeState) {
    if let Some(pos) = t.selected {
        if t.rows[pos].folded() {
            let id = t.entry_id(t.rows[pos].entry()).to_string();
            t.folded.remove(&id);
            t.rebuild();
        } else {
            let target = segment_start_down(t, pos);
            t.select_row(target);
        }
    }
}

/// Alt+M (`arbor.tree.mark`): the selected entry marked to compare, or the mark removed.
fn toggle_mark(t: &mut TreeState) {
    if let Some(i) = t.selected_entry() {
        let id = t.entry_id(i).to_string();
        if t.mark.as_deref() == Some(id.as_str()) {
            t.mark = None;
            t.status = Some(("Mark removed".into(), false));
        } else {
            t.status = Some((
                format!(
                    "Marked {id}: select another entry, {} compares the two branches",
                    KEYS.keys_of(&[Action::Compare])
                ),
                false,
            ));
            t.mark = Some(id);
        }
    }
}

/// Alt+C (`arbor.tree.compare`): the marked entry's branch compared with the selected one's.
fn compare(t: &mut TreeState) {
    let selected = t.selected_entry().map(|i| t.entry_id(i).to_string());
    match (t.mark.clone(), selected) {
        (None, _) | (_, None) => {
            t.status = Some((
                format!(
                    "Mark an entry first ({}), then select another and compare",
                    KEYS.keys_of(&[Action::Mark])
                ),
                false,
            ))
        }
        (Some(a), Some(b)) if a == b => {
            t.status = Some((
                "Select another entry than the marked one to compare".into(),
                false,
            ))
        }
        (Some(a), Some(b)) => {
            // The marking hint has done its job.
            t.status = None;
            t.compare = None;
            t.open_compare(&a, &b);
        }
    }
}

/// Says on the status line that another agent's session takes no writes.
fn refuse(t: &mut TreeState, what: &str) {
    if let Some(agent) = t.loaded.session.foreign {
        t.status = Some((agent.refusal(what), true));
    }
}

/// Pasted text goes into the prompt being edited, else into the search
/// (starting one); the other dialogs and the context view ignore it, so a
/// paste never answers a question.
fn on_paste(t: &mut TreeState, text: &str) -> Option<Vec<Effect>> {
    match &mut t.dialog {
        TreeDialog::Label { input, .. } | TreeDialog::BranchSummary { input, .. } => {
            (input.insert(text) == Edit::Changed).then(Vec::new)
        }
        TreeDialog::None if !t.context_view && t.compare.is_none() => {
            let changed = t.search.insert(text) == Edit::Changed;
            if changed {
                t.folded.clear();
                t.rebuild();
            }
            changed.then(Vec::new)
        }
        _ => None,
    }
}
