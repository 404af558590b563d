//! A remote's background sync as the picker shows it: its progress on the
//! status line, then the mirror marked current, or the sentence saying the
//! host could not be reached (its last mirror stays listed, with its age).
//! The files a sync changed reach the list through the watcher, as any
//! change on disk does.

use super::super::state::{PickerState, StatusKind};
use crate::ui::app::Step;

pub fn syncing(p: &mut PickerState, host: &str, files: u64) -> Step {
    if let Some(h) = p.remotes.get_mut(host) {
        h.syncing = Some(files);
    }
    show_progress(p);
    Step::redraw(Vec::new())
}

pub fn synced(p: &mut PickerState, host: &str, result: Result<u64, String>) -> Step {
    let now = p.now_ms;
    let Some(h) = p.remotes.get_mut(host) else {
        return Step::none();
    };
    h.syncing = None;
    match result {
        Ok(_) => {
            h.synced = true;
            h.failed = None;
            h.last_ok_ms = Some(now);
            if !show_progress(p) && p.remotes.hosts.iter().all(|h| h.failed.is_none()) {
                // The progress line is done with; a failure's stays.
                p.flash.status = None;
            }
        }
        Err(why) => {
            let listed = match h.last_ok_ms {
                Some(ms) => format!(
                    "its sessions are listed as of {} ago",
                    arbor_util::age(now, ms)
                ),
                None => "none of its sessions is listed yet".to_string(),
            };
            // One line: the error's first (the log has it whole).
            let first = why.lines().next().unwrap_or_default().trim_end_matches('.');
            let text = format!("{first}; {listed}");
            h.failed = Some(why);
            p.set_lasting_status(StatusKind::Error, text);
        }
    }
    Step::redraw(Vec::new())
}

/// The syncs under way on the status line; `false` when none is.
fn show_progress(p: &mut PickerState) -> bool {
    match p.remotes.progress() {
        Some(text) => {
            // A failure said already stays until the others are done.
            if p.remotes.hosts.iter().all(|h| h.failed.is_none()) {
                p.set_progress(text);
            }
            true
        }
        None => false,
    }
}
