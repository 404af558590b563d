//! The `arbor` binary: parses the command line, runs it, prints an error
//! as one sanitized line.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use clap::Parser;

// Listing 10,000 sessions from the index allocates and frees many small
// rows across threads; mimalloc measured faster than the system allocator
// for exactly that (commit 3aea329, 2026-11-30). Under an address-space
// limit the C library's takes its place (see `allocator`).
#[global_allocator]
static GLOBAL: arbor::allocator::Allocator = arbor::allocator::Allocator;

/// `mi_option_purge_delay` in mimalloc's `mi_option_e` (v2's header; the
/// crate names only its stable options).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() {
    // An allocation that fails aborts: this says so and restores the
    // terminal first.
    arbor::abort::install();
    let cli = arbor::cli::Cli::parse();
    if let Err(e) = arbor::address_space::start_shared_pool() {
        eprintln!("arbor: {}", arbor::cli::error_line(&e));
        std::process::exit(1);
    }
    // A screen (the picker, the tree) gives memory it frees back to the
    // system at once rather than after 10 ms: the picker frees a search's
    // transient sets between keystrokes, and with the delay their pages
    // stayed in its resident set (10,000 sessions: peak 111 -> 99 MB, first
    // screen 84 -> 67 MB). A one-shot command keeps the delay: it frees
    // its decoded rows just before it ends, and purging them page by page
    // made `list --all --json` at 100,000 sessions 697 -> 743 ms (10
    // paired runs).
    if matches!(cli.command, None | Some(arbor::cli::Command::Tree(_))) {
        // SAFETY: sets one integer option; mimalloc reads it on its next
        // purge.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
    }
    // Where a phase freed much on other threads than allocated it (the
    // index's merges), the library asks for it back.
    arbor_util::memory::set_give_back(|| {
        // SAFETY: collects the calling thread's heap; no pointers involved.
        unsafe { libmimalloc_sys::mi_collect(true) }
    });
    // While the index is written (see `util::memory::PurgeAtOnce`), freed
    // pages go back at once; nested and concurrent writers count.
    arbor_util::memory::set_purge_at_once(|on| {
        static STATE: std::sync::Mutex<(usize, std::ffi::c_long)> = std::sync::Mutex::new((0, 0));
        let Ok(mut state) = STATE.lock() else {
            return;
        };
        // SAFETY: reads and sets one integer option of the allocator.
        unsafe {
            if on {
                if state.0 == 0 {
                    state.1 = libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY);
                    libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
                }
                state.0 += 1;
            } else if state.0 > 0 {
                state.0 -= 1;
                if state.0 == 0 {
                    libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, state.1);
                }
            }
        }
    });
    if let Err(e) = arbor::cli::run(cli) {
        // A closed pipe (`arbor list | head`) is not an error worth a message.
        let broken_pipe = e
            .chain()
            .filter_map(|c| c.downcast_ref::<std::io::Error>())
            .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
        if broken_pipe {
            std::process::exit(0);
        }
        // `arbor search` found nothing: status 1 and no message, like grep.
        if e.downcast_ref::<arbor::cli::NoMatch>().is_some() {
            std::process::exit(1);
        }
        // The agent to resume is not installed: the command was printed.
        if e.downcast_ref::<arbor::cli::resume::NotInstalled>()
            .is_some()
        {
            std::process::exit(127);
        }
        // Messages quote paths, ids and file names: never raw on a terminal.
        eprintln!(
            "arbor: {}",
            arbor::term::sanitize_block(&arbor::cli::error_line(&e))
        );
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    /// The option set in `main` is the purge delay: the only option whose
    /// default is 10 (ms) in this version's list, next to the ones the
    /// crate names.
    #[test]
    fn the_purge_delay_option_is_the_one_set() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        let get = |o| unsafe { libmimalloc_sys::mi_option_get(o) };
        assert_eq!(get(super::MI_OPTION_PURGE_DELAY), 10);
        assert_eq!(
            super::MI_OPTION_PURGE_DELAY,
            libmimalloc_sys::mi_option_eager_commit_delay + 1
        );
        assert_eq!(
            super::MI_OPTION_PURGE_DELAY + 1,
            libmimalloc_sys::mi_option_use_numa_nodes
        );
    }
}
