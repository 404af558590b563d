//! A handle that stops syncs under way: arbor leaving the picker while a
//! host hangs must not leave that rsync (and its transport, in the
//! process group the run created) running until its timeout. A run
//! registers its child while it runs; `cancel` kills every registered
//! group, and any run started afterwards is killed as soon as it starts.

use std::sync::{Arc, Mutex, PoisonError};

/// Cloned into each sync thread; `cancel` from any clone stops them all.
#[derive(Debug, Clone, Default)]
pub struct SyncCancel(Arc<Mutex<Running>>);

#[derive(Debug, Default)]
struct Running {
    cancelled: bool,
    /// Children running now: their pid, and whether it leads a group.
    children: Vec<(u32, bool)>,
}

impl SyncCancel {
    pub fn new() -> SyncCancel {
        SyncCancel::default()
    }

    /// Kills the runs under way (their whole process group when they have
    /// one) and every run started from now on.
    pub fn cancel(&self) {
        let mut r = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        r.cancelled = true;
        for (pid, group) in r.children.drain(..) {
            kill(pid, group);
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .cancelled
    }

    /// A child started: killed at once when the syncs were cancelled
    /// already, else remembered until `finished`.
    pub(crate) fn started(&self, pid: u32, group: bool) {
        let mut r = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if r.cancelled {
            kill(pid, group);
        } else {
            r.children.push((pid, group));
        }
    }

    /// The child is done with (called before it is reaped, so that its
    /// pid, once free for reuse, is never killed).
    pub(crate) fn finished(&self, pid: u32) {
        let mut r = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        r.children.retain(|(p, _)| *p != pid);
    }
}

/// SIGKILL to the child, or to the group it leads.
pub(crate) fn kill(pid: u32, group: bool) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pid) {
        let target = if group { -pid } else { pid };
        // SAFETY: a plain kill(2) of a child this crate started (or of
        // the group it created), not yet reaped.
        unsafe {
            libc::kill(target, libc::SIGKILL);
        }
    }
}
