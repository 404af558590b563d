//! The delete questions: one session or a marked batch to the trash (asked
//! again when an agent may be writing them), the wait while the trash works,
//! and the permanent delete offered when the trash refuses.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{confirm, first_and_rest};
use crate::ui::app::{Effect, Outcome};
use crate::ui::keymap::{bind, ch, ctrl, key, Answer, Keymap, CANCEL_ID, CONFIRM, QUIT_ID};
use crate::ui::picker::keys::{Action, KEYS};
use crate::ui::picker::state::{
    Dialog, PickerState, StatusKind, LIVE_WINDOW_MS, PERMANENT_GUARD_MS,
};
use crate::ui::text::{sanitize_line, truncate, wrap_styled};
use crate::ui::theme::Theme;

/// While the trash works: only Ctrl+C (quit) is a key.
pub const TRASHING_KEYS: Keymap<Answer> = Keymap(&[bind(
    &[(ctrl('c').as_id(QUIT_ID), Answer::No)],
    "quit arbor",
)]);

/// The permanent-delete question: `y`, typed on purpose, deletes; Enter
/// is not an answer (it was likely meant for the question before).
pub const PERMANENT_KEYS: Keymap<Answer> = Keymap(&[
    bind(
        &[
            (ch('y').as_id(FOREVER_ID), Answer::Yes),
            (ch('Y').quiet().as_id(FOREVER_ID), Answer::Yes),
        ],
        "delete it forever",
    ),
    bind(
        &[
            (key(KeyCode::Esc).as_id(CANCEL_ID), Answer::No),
            (ch('n').quiet().as_id(KEEP_ID), Answer::No),
            (ch('N').quiet().as_id(KEEP_ID), Answer::No),
            (ctrl('c').quiet().as_id(CANCEL_ID), Answer::No),
        ],
        "keep it",
    ),
]);

/// The permanent-delete question's own answers.
const FOREVER_ID: &str = "arbor.picker.deleteForever";
const KEEP_ID: &str = "arbor.picker.keep";

/// `1 session`, `12 sessions`.
pub fn sessions(n: usize) -> String {
    if n == 1 {
        "1 session".into()
    } else {
        format!("{n} sessions")
    }
}

/// A key while a delete question (or the trash's wait) is up.
pub fn on_key(p: &mut PickerState, k: &KeyEvent) -> Option<Vec<Effect>> {
    match &p.dialog.open {
        Dialog::ConfirmDelete { path, live } => {
            let (path, live) = (path.clone(), *live);
            confirm(p, k, |p| {
                if live {
                    // Changed seconds ago: an agent may be writing it. Ask again.
                    let age = p
                        .row_index(&path)
                        .map(|i| p.now_ms - last_change_ms(&p.list.rows[i].info))
                        .unwrap_or(0);
                    p.dialog.open = Dialog::ConfirmLiveDelete { path, age_ms: age };
                    Vec::new()
                } else {
                    trash(p, path)
                }
            })
        }
        Dialog::ConfirmLiveDelete { path, .. } => {
            let path = path.clone();
            confirm(p, k, |p| trash(p, path))
        }
        Dialog::ConfirmBatch { paths, measured } => {
            let paths = paths.clone();
            let measured = measured.clone();
            // Enter waits for the sizes: the question is not complete yet.
            if measured.is_none() && CONFIRM.action(k, true) == Some(Answer::Yes) {
                return None;
            }
            confirm(p, k, |p| match measured {
                Some(m) if !m.live.is_empty() => {
                    p.dialog.open = Dialog::ConfirmLiveBatch {
                        paths,
                        live: m.live,
                    };
                    Vec::new()
                }
                _ => trash_batch(p, paths),
            })
        }
        Dialog::ConfirmLiveBatch { paths, .. } => {
            let paths = paths.clone();
            confirm(p, k, |p| trash_batch(p, paths))
        }
        Dialog::Trashing { .. } | Dialog::TrashingBatch { .. } => TRASHING_KEYS
            .action(k, true)
            .map(|_| vec![Effect::Exit(Outcome::Quit)]),
        Dialog::ConfirmPermanent {
            paths,
            shown_ms,
            moved,
            ..
        } => {
            let (paths, shown_ms, moved) = (paths.clone(), *shown_ms, *moved);
            on_permanent_key(p, k, paths, shown_ms, moved)
        }
        _ => None,
    }
}

/// The permanent-delete question's keys: `y` deletes (once the question
/// could be read), Esc keeps the sessions.
fn on_permanent_key(
    p: &mut PickerState,
    k: &KeyEvent,
    paths: Vec<PathBuf>,
    shown_ms: i64,
    moved: usize,
) -> Option<Vec<Effect>> {
    match PERMANENT_KEYS.action(k, true)? {
        Answer::No => {
            p.dialog.open = Dialog::None;
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
            Some(Vec::new())
        }
        // Keys in the first moments were typed before the question
        // could be read (a second Enter): ignored, as is every key
        // but the deliberate `y`.
        Answer::Yes if p.now_ms - shown_ms < PERMANENT_GUARD_MS => None,
        Answer::Yes => {
            p.dialog.open = Dialog::None;
            p.set_progress("Deleting permanently…");
            Some(match <[PathBuf; 1]>::try_from(paths) {
                Ok([path]) => vec![Effect::DeletePermanently(path)],
                Err(paths) => vec![Effect::DeleteBatch(paths)],
            })
        }
    }
}

fn trash(p: &mut PickerState, path: PathBuf) -> Vec<Effect> {
    p.dialog.open = Dialog::Trashing { path: path.clone() };
    vec![Effect::Trash(path)]
}

fn trash_batch(p: &mut PickerState, paths: Vec<PathBuf>) -> Vec<Effect> {
    p.dialog.open = Dialog::TrashingBatch { count: paths.len() };
    vec![Effect::TrashBatch(paths)]
}

/// Ctrl+D with marks: the question waits for the files' sizes and change
/// times, read now (the rows' may be seconds old).
pub fn ask_batch(p: &mut PickerState) -> Vec<Effect> {
    let paths = p.marked_paths();
    p.dialog.open = Dialog::ConfirmBatch {
        paths: paths.clone(),
        measured: None,
    };
    vec![Effect::MeasureBatch(paths)]
}

/// When the file last changed: its mtime. (The newest entry's timestamp
/// is whatever the writer claimed, possibly in the future.)
fn last_change_ms(info: &crate::ui::picker::RowInfo) -> i64 {
    info.file_mtime_ms
}

pub fn ask_delete(p: &mut PickerState) -> Vec<Effect> {
    if let Some(r) = p.selected_row() {
        let live = p.now_ms - last_change_ms(&r.info) < LIVE_WINDOW_MS;
        p.dialog.open = Dialog::ConfirmDelete {
            path: r.info.path.to_path_buf(),
            live,
        };
    }
    Vec::new()
}

/// Whether the delete question up is about the session at `path`: the
/// list marks it as Atomic marks one.
pub fn asks_about(p: &PickerState, path: &std::path::Path) -> bool {
    match &p.dialog.open {
        Dialog::ConfirmDelete { path: d, .. }
        | Dialog::ConfirmLiveDelete { path: d, .. }
        | Dialog::Trashing { path: d } => d == path,
        Dialog::ConfirmPermanent { paths, .. } => paths.iter().any(|q| q == path),
        Dialog::ConfirmBatch { .. }
        | Dialog::ConfirmLiveBatch { .. }
        | Dialog::TrashingBatch { .. } => p.selection.marked.contains(path),
        _ => false,
    }
}

/// The permanent-delete question, wrapped to as many lines as it needs:
/// the footer's lines while it is up (the hints give way, as in Atomic
/// while a delete is confirmed).
pub fn permanent_question(
    p: &PickerState,
    theme: &Theme,
    width: u16,
) -> Option<Vec<Line<'static>>> {
    let Dialog::ConfirmPermanent {
        reason,
        paths,
        moved,
        ..
    } = &p.dialog.open
    else {
        return None;
    };
    let one = paths.len() == 1 && *moved == 0;
    let mut question = vec![(
        if one {
            "Delete permanently? This cannot be undone.".to_string()
        } else {
            format!(
                "Delete {} permanently? This cannot be undone.",
                sessions(paths.len())
            )
        },
        theme.error(),
    )];
    let titles = titles_of(p, paths.iter());
    if !titles.is_empty() {
        question.push((titles, theme.dim()));
    }
    let (it, they) = if paths.len() == 1 {
        ("it", "It")
    } else {
        ("them", "They")
    };
    let mut why = format!(
        "{they} could not be moved to the trash: {}.",
        sanitize_line(reason)
    );
    if *moved > 0 {
        why.push_str(&format!(
            " The other {} of the batch are in the trash ({} brings them back).",
            moved,
            KEYS.keys_of(&[Action::Undo])
        ));
    }
    let paragraphs = [
        question,
        vec![(
            format!(
                "Type {} to delete {it} forever · {} keeps {it}",
                PERMANENT_KEYS.keys_of(&[Answer::Yes]),
                PERMANENT_KEYS.keys_of(&[Answer::No])
            ),
            Style::default(),
        )],
        vec![(why, theme.dim())],
    ];
    Some(wrap_styled(&paragraphs, width as usize))
}

/// The status line of a delete question (or of the trash's wait), and
/// the lines it wraps onto; `None` when no such question is up.
pub fn question(
    p: &PickerState,
    theme: &Theme,
    width: u16,
) -> Option<(Line<'static>, Vec<Line<'static>>)> {
    Some(match &p.dialog.open {
        Dialog::ConfirmDelete { path, .. } => (
            Line::from(vec![
                Span::styled("Delete session? ", theme.error()),
                Span::raw(format!("{}  ", confirm_hint())),
                Span::styled(title_of(p, path), theme.dim()),
            ]),
            Vec::new(),
        ),
        // Wrapped like a message: at 80 columns the keys that answer the
        // question would otherwise be cut off.
        Dialog::ConfirmLiveDelete { age_ms, .. } => {
            let question = [vec![
                (
                    format!(
                        "This session changed {}s ago; an agent may be writing it. Delete anyway? ",
                        age_ms / 1000
                    ),
                    theme.error(),
                ),
                (confirm_hint(), Style::default()),
            ]];
            first_and_rest(wrap_styled(&question, width as usize))
        }
        Dialog::Trashing { .. } => (
            Line::from(Span::styled("Moving session to trash…", theme.dim())),
            Vec::new(),
        ),
        Dialog::TrashingBatch { count } => (
            Line::from(Span::styled(
                format!("Moving {} to trash…", sessions(*count)),
                theme.dim(),
            )),
            Vec::new(),
        ),
        Dialog::ConfirmBatch { paths, measured } => {
            first_and_rest(batch_question(p, paths, measured.as_ref(), theme, width))
        }
        Dialog::ConfirmLiveBatch { paths, live } => {
            first_and_rest(live_batch_question(p, paths, live, theme, width))
        }
        _ => return None,
    })
}

/// One question for the batch: how many, how many bytes, and which an
/// agent may be writing.
fn batch_question(
    p: &PickerState,
    paths: &[PathBuf],
    measured: Option<&crate::ui::picker::state::Measured>,
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    let hidden = paths.len() - p.marked_listed().min(paths.len());
    let mut what = match measured {
        Some(m) => arbor_util::human_bytes(m.bytes),
        None => "reading sizes…".to_string(),
    };
    if hidden > 0 {
        what.push_str(&format!("; {hidden} not listed"));
    }
    let mut paragraphs = vec![vec![
        (
            format!("Delete {} ({what})? ", marked_sessions(paths.len())),
            theme.error(),
        ),
        (confirm_hint(), Style::default()),
    ]];
    if let Some(m) = measured.filter(|m| !m.live.is_empty()) {
        paragraphs.push(vec![
            (
                format!(
                    "{} changed in the last seconds; an agent may be writing {}: ",
                    m.live.len(),
                    if m.live.len() == 1 { "it" } else { "them" }
                ),
                theme.warning(),
            ),
            (titles_of(p, m.live.iter().map(|(x, _)| x)), theme.dim()),
        ]);
    }
    wrap_styled(&paragraphs, width as usize)
}

/// The single delete's second question, for the batch.
fn live_batch_question(
    p: &PickerState,
    paths: &[PathBuf],
    live: &[(PathBuf, i64)],
    theme: &Theme,
    width: u16,
) -> Vec<Line<'static>> {
    // Every one of them changed within that many seconds.
    let secs = (live.iter().map(|(_, age)| *age).max().unwrap_or(0) / 1000).max(1);
    let paragraphs = [
        vec![
            (
                format!(
                    "{} of the {} changed in the last {secs}s; an agent may be writing {}. Delete anyway? ",
                    live.len(),
                    sessions(paths.len()),
                    if live.len() == 1 { "it" } else { "them" }
                ),
                theme.error(),
            ),
            (confirm_hint(), Style::default()),
        ],
        vec![(titles_of(p, live.iter().map(|(x, _)| x)), theme.dim())],
    ];
    wrap_styled(&paragraphs, width as usize)
}

/// A delete question's answers (Atomic's words).
fn confirm_hint() -> String {
    format!(
        "{} · {}",
        CONFIRM.hint(&[Answer::Yes], "confirm"),
        CONFIRM.hint(&[Answer::No], "cancel")
    )
}

/// `12 marked sessions`.
fn marked_sessions(n: usize) -> String {
    if n == 1 {
        "1 marked session".into()
    } else {
        format!("{n} marked sessions")
    }
}

/// The titles of up to three sessions, quoted, then how many more.
fn titles_of<'a>(p: &PickerState, paths: impl Iterator<Item = &'a std::path::PathBuf>) -> String {
    let all: Vec<String> = paths
        .map(|x| {
            let t = title_of(p, x);
            if t.is_empty() {
                // Not listed in this picker: its file name says which.
                x.file_name()
                    .map(|n| sanitize_line(&n.to_string_lossy()))
                    .unwrap_or_default()
            } else {
                t
            }
        })
        .collect();
    let mut out: Vec<String> = all
        .iter()
        .take(3)
        .map(|t| format!("\u{201c}{t}\u{201d}"))
        .collect();
    if all.len() > 3 {
        out.push(format!("and {} more", all.len() - 3));
    }
    out.join(", ")
}

fn title_of(p: &PickerState, path: &std::path::Path) -> String {
    p.row_index(path)
        .map(|i| truncate(&sanitize_line(&p.list.rows[i].title()), 50))
        .unwrap_or_default()
}
