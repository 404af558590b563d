//! Watches the user's `keybindings.json` while arbor runs (Atomic has
//! `/reload` for it): each change is read again and arrives as
//! `AppEvent::Keys`, which puts the new bindings in force.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::Arc;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

use crate::ui::app::AppEvent;
use crate::ui::keybindings::{load_from, UserKeys};

/// Watches the folder `keys.file` is in (an editor replaces a file rather
/// than writing it in place) for changes to it; `None` when there is no
/// such folder to watch. The watch lasts as long as what it returns.
pub(super) fn watch_keys(tx: Sender<AppEvent>, keys: UserKeys) -> Option<RecommendedWatcher> {
    let file: PathBuf = keys.file.clone()?;
    let dir = file.parent()?.to_path_buf();
    let name = file.file_name()?.to_os_string();
    let mut last = keys;
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<Event>| {
        let Ok(ev) = res else { return };
        let ours = ev
            .paths
            .iter()
            .any(|p| p.file_name() == Some(name.as_os_str()));
        if !ours || matches!(ev.kind, EventKind::Access(_)) {
            return;
        }
        let now = load_from(Some(file.clone()));
        // An editor's save is several events: one reload per change.
        if now != last {
            last = now.clone();
            let _ = tx.send(AppEvent::Keys(Arc::new(now)));
        }
    })
    .ok()?;
    if let Err(e) = watcher.watch(&dir, RecursiveMode::NonRecursive) {
        arbor_util::log::line(format!("keys: cannot watch {} ({e})", dir.display()));
        return None;
    }
    Some(watcher)
}
