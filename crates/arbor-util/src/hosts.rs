//! Which machine a session file belongs to: the folders that mirror a
//! remote's sessions (see `arbor_store::StoreConfig::add_mirror`), each
//! named with its host. Kept for the whole process so that whatever meets
//! a path — a row being made, a write about to happen — can tell a
//! mirrored file from one of this machine's without being handed the
//! store's configuration. Only ever added to: a test's folders never
//! disturb another's.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// Each mirror folder (absolute) and the host it mirrors.
static MIRRORS: RwLock<Vec<(PathBuf, Arc<str>)>> = RwLock::new(Vec::new());

/// The name `--host` and `host:` give this machine.
pub const LOCAL: &str = "local";

/// Notes that the files under `dir` are `host`'s.
pub fn register(dir: &Path, host: &str) {
    let Ok(mut m) = MIRRORS.write() else {
        return;
    };
    if !m.iter().any(|(d, h)| d == dir && &**h == host) {
        m.push((dir.to_path_buf(), Arc::from(host)));
    }
}

/// The host whose mirror holds `path` (the innermost such folder);
/// `None`: a file of this machine.
pub fn host_of(path: &Path) -> Option<Arc<str>> {
    let m = MIRRORS.read().ok()?;
    if m.is_empty() {
        return None;
    }
    m.iter()
        .filter(|(d, _)| path.starts_with(d))
        .max_by_key(|(d, _)| d.components().count())
        .map(|(_, h)| h.clone())
}

/// Whether a host named on the command line or in a query (`local` for
/// this machine) is `host`; names compare without regard to ASCII case.
pub fn same_host(given: &str, host: Option<&str>) -> bool {
    match host {
        None => given.eq_ignore_ascii_case(LOCAL),
        Some(h) => given.eq_ignore_ascii_case(h),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_mirror_names_the_host() {
        let base = Path::new("/arbor-hosts-test/cache/remotes");
        register(&base.join("devbox"), "devbox");
        register(&base.join("devbox/inner"), "other");
        assert_eq!(
            host_of(&base.join("devbox/s/a.jsonl")).as_deref(),
            Some("devbox")
        );
        assert_eq!(
            host_of(&base.join("devbox/inner/a.jsonl")).as_deref(),
            Some("other")
        );
        assert_eq!(
            host_of(&base.join("devboxes/a.jsonl")),
            None,
            "by component"
        );
        assert_eq!(host_of(Path::new("/home/u/a.jsonl")), None);
        assert!(same_host("LOCAL", None) && same_host("DevBox", Some("devbox")));
        assert!(!same_host("devbox", None) && !same_host("local", Some("devbox")));
    }
}
