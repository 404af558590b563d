//! Giving freed memory back to the system after a phase that freed much of
//! it on other threads than the ones that allocated it.
//!
//! The index's merges load segments on one thread, merge them on others
//! and store the results on the first: every big buffer is freed by a
//! thread that did not allocate it. mimalloc keeps such frees on the
//! owner's pages until the owner collects them, so each merge took fresh
//! memory, and a first run at 100,000 sessions grew to 1.1 GB over its
//! merges where the system allocator peaked at 0.86 GB. The allocator is
//! the binary's choice: it installs how to collect, the library says when.

use std::sync::OnceLock;

static GIVE_BACK: OnceLock<fn()> = OnceLock::new();

/// Installs how this thread's freed memory is collected and given back
/// (once; later calls are ignored).
pub fn set_give_back(collect: fn()) {
    let _ = GIVE_BACK.set(collect);
}

/// Collects what other threads freed of this thread's memory and gives
/// back what is free; nothing when no allocator said how.
pub fn give_back() {
    if let Some(collect) = GIVE_BACK.get() {
        collect();
    }
}

static PURGE_AT_ONCE: OnceLock<fn(bool)> = OnceLock::new();

/// Installs how the allocator is told to give freed pages back at once
/// (`true`) or as it did before (`false`); once, later calls are ignored.
pub fn set_purge_at_once(switch: fn(bool)) {
    let _ = PURGE_AT_ONCE.set(switch);
}

/// While it lives, freed memory goes back to the system at once rather
/// than after the allocator's delay. An index build frees its segment
/// builders at every commit and grows them again straight after: with the
/// delay, the freed pages and the new ones were resident together: a first
/// run at 100,000 sessions peaked at 313–372 MB, and 266–346 MB at once. A
/// one-shot listing keeps the delay (see the binary's `main`).
pub struct PurgeAtOnce(bool);

impl PurgeAtOnce {
    pub fn start() -> PurgeAtOnce {
        match PURGE_AT_ONCE.get() {
            Some(switch) => {
                switch(true);
                PurgeAtOnce(true)
            }
            None => PurgeAtOnce(false),
        }
    }
}

impl Drop for PurgeAtOnce {
    fn drop(&mut self) {
        if let Some(switch) = PURGE_AT_ONCE.get().filter(|_| self.0) {
            switch(false);
        }
    }
}
