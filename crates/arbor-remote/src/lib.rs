//! Other machines' session folders, mirrored into arbor's cache with
//! `rsync` over the user's `ssh` (or a transport command such as `docker
//! exec -i NAME`), and the commands that act on a remote. Knows nothing of
//! the terminal: the CLI and the picker show what it returns.
//! docs/remotes.md describes the settings and the security model.

mod cancel;
mod command;
mod error;
mod failure;
mod mirror;
mod mirror_files;
mod remote;
mod rewritten;
mod rsh;
mod rsync_run;
mod settings_edit;
mod state;
mod sync;

pub use cancel::SyncCancel;
pub use command::{remote_command, shell_line, shell_quote, SshCommand, SshOrigin};
pub use error::RemoteError;
pub use mirror::{mirror_dir, mirror_roots, remote_path, MirrorRoot};
pub use mirror_files::purge_mirror;
pub use remote::{usual_folder, valid_name, Remote, DEFAULT_TIMEOUT_SECS};
pub use settings_edit::{add_remote, remove_remote, write_settings};
pub use state::{now_ms, read_state, write_state, ArborOnRemote, MirrorState, STATE_FILE};
pub use sync::{sync, sync_cancellable, SyncProgress, SyncReport};
