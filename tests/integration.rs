//! The integration tests, one binary (linking the workspace once): each
//! module is one concern, named as its file. `bulk_disk` is a binary of its
//! own because it sets the process's environment for the trash.

// A test reads top to bottom as one scenario (set up, act, check each
// consequence); the length limits are for the code it tests.
#![allow(clippy::too_many_lines, clippy::cognitive_complexity)]

mod common;

mod adversarial;
mod agents;
mod atomic_tree;
mod build_behind;
mod bulk;
mod cjk_words;
mod cli_shell;
mod cli_small;
mod cli_writes;
mod compare;
mod concurrency;
mod conformance;
mod export;
mod fast_load;
mod fast_path;
mod house_rules;
mod index;
mod index_damage;
mod keybindings;
mod keymap_docs;
mod load;
mod memory_limit;
mod mouse;
mod other_agents;
mod picker_ui;
mod preview;
mod proptest_reader;
mod pty_e2e;
mod realdata;
mod relevance;
mod remote_cli;
mod remote_hosts;
mod remote_sync;
mod report;
mod resume_cmd;
mod resume_hostile;
mod search;
mod session_escapes;
mod snapshots;
mod terminal_escapes;
mod themes;
mod trash_hostile;
mod tree_at_match;
mod tree_compare;
mod tree_flatten;
mod tree_fork;
mod tree_keys_atomic;
mod tree_live;
mod tree_pan;
mod tree_scale;
mod tree_search;
mod tree_ui;
mod typed_roundtrip;
mod write_safety;
mod writes_pi;
