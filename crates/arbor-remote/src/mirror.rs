//! Where a remote's copy lives: `<cache>/remotes/<name>/`, holding
//! `state.json`, `home/…` (the remote's folders under its home, `~/x` at
//! `home/x`) and `root/…` (its absolute folders, `/x` at `root/x`). The
//! layout is rsync's `--relative` copy of the configured folders, so a
//! local path maps back to exactly one remote path.

use std::path::{Component, Path, PathBuf};

use arbor_session::Agent;
use arbor_store::StoreKind;

use crate::remote::folder_parts;
use crate::Remote;

/// The folder of `home`-relative remote folders inside a mirror.
pub(crate) const HOME_DIR: &str = "home";
/// The folder of absolute remote folders inside a mirror.
pub(crate) const ROOT_DIR: &str = "root";

/// `<cache>/remotes/<name>`.
pub fn mirror_dir(cache: &Path, name: &str) -> PathBuf {
    cache.join("remotes").join(name)
}

/// One copied remote folder: where its copy is, what it is on the remote,
/// whose sessions it holds and how they are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MirrorRoot {
    pub local: PathBuf,
    /// As configured (`~/.atomic/agent/sessions`, `/srv/sessions`).
    pub remote: String,
    pub agent: Agent,
    pub kind: StoreKind,
}

/// The copies of `remote`'s folders (they may not exist yet: no sync has
/// run, or the folder is missing on the remote).
pub fn mirror_roots(cache: &Path, remote: &Remote) -> Vec<MirrorRoot> {
    let base = mirror_dir(cache, &remote.name);
    remote
        .folders()
        .into_iter()
        .filter_map(|(path, agent, kind)| {
            let (home, rest) = folder_parts(&path)?;
            let top = if home { HOME_DIR } else { ROOT_DIR };
            Some(MirrorRoot {
                local: base.join(top).join(rest),
                remote: path,
                agent,
                kind,
            })
        })
        .collect()
}

/// The remote path of the mirrored file (or folder) `local`: `~/…` or
/// `/…`, as the folder was configured. `None` when `local` is not inside
/// one of the configured folders' copies (or climbs out with `..`).
pub fn remote_path(cache: &Path, remote: &Remote, local: &Path) -> Option<String> {
    if local
        .components()
        .any(|c| matches!(c, Component::ParentDir | Component::CurDir))
    {
        return None;
    }
    mirror_roots(cache, remote)
        .into_iter()
        .filter_map(|root| {
            let rest = local.strip_prefix(&root.local).ok()?;
            let mut out = root.remote.clone();
            for part in rest.components() {
                out.push('/');
                out.push_str(part.as_os_str().to_str()?);
            }
            Some((root.local.components().count(), out))
        })
        .max_by_key(|(depth, _)| *depth)
        .map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remote(paths: &[&str]) -> Remote {
        Remote {
            name: "devbox".into(),
            dest: Some("devbox".into()),
            paths: paths.iter().map(|p| p.to_string()).collect(),
            ..Remote::default()
        }
    }

    #[test]
    fn roots_sit_in_the_mirror_by_where_they_are_on_the_remote() {
        let cache = Path::new("/c");
        let r = remote(&["~/.atomic/agent/sessions", "/srv/s"]);
        let roots = mirror_roots(cache, &r);
        assert_eq!(
            roots[0].local,
            Path::new("/c/remotes/devbox/home/.atomic/agent/sessions")
        );
        assert_eq!(roots[0].agent, Agent::Atomic);
        assert_eq!(roots[1].local, Path::new("/c/remotes/devbox/root/srv/s"));
        assert_eq!(mirror_roots(cache, &remote(&[])).len(), 4);
    }

    #[test]
    fn a_local_path_maps_back_only_inside_a_configured_folder() {
        let cache = Path::new("/c");
        let r = remote(&["~/.atomic/agent/sessions", "/srv/s"]);
        let m = "/c/remotes/devbox";
        let at = |p: &str| remote_path(cache, &r, Path::new(p));
        assert_eq!(
            at(&format!("{m}/home/.atomic/agent/sessions/--p--/a b.jsonl")).as_deref(),
            Some("~/.atomic/agent/sessions/--p--/a b.jsonl")
        );
        assert_eq!(
            at(&format!("{m}/root/srv/s/x.jsonl")).as_deref(),
            Some("/srv/s/x.jsonl")
        );
        assert_eq!(at(&format!("{m}/home/.atomic/agent/other.jsonl")), None);
        assert_eq!(at(&format!("{m}/root/srv/s/../../etc/passwd")), None);
        assert_eq!(at(&format!("{m}/state.json")), None);
        assert_eq!(
            at("/c/remotes/other/home/.atomic/agent/sessions/x.jsonl"),
            None
        );
    }
}
