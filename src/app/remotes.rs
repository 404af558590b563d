//! The remotes of the settings as the commands meet them: their mirrors
//! added to the store's roots (each carrying its host's name), `--host`
//! checked against their names, and which remote a mirrored file is of.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::cli::GlobalOpts;
use arbor_remote::{Remote, SshCommand};
use arbor_store::StoreConfig;

/// The local file a sync reported copying (`path` below the mirror's
/// `home/` or `root/` folder, as `arbor_remote::SyncProgress::File` names
/// it), when it is a file there.
pub fn mirrored_file(mirror: &Path, path: &str) -> Option<PathBuf> {
    let plain = Path::new(path)
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_)));
    if !plain {
        return None;
    }
    ["home", "root"]
        .iter()
        .map(|top| mirror.join(top).join(path))
        .find(|p| p.is_file())
}

/// The remotes configured, the ssh command in force and arbor's cache
/// (where their mirrors are).
#[derive(Debug, Clone, Default)]
pub struct Remotes {
    pub remotes: Vec<Remote>,
    pub ssh: SshCommand,
    pub cache: Option<PathBuf>,
}

impl Remotes {
    /// Those of the settings file the command line names.
    pub fn of(g: &GlobalOpts) -> Remotes {
        let settings = crate::settings::Settings::from_process(&crate::settings::Overrides {
            config: g.config.as_deref(),
            ..Default::default()
        });
        Remotes::from_settings(&settings)
    }

    pub fn from_settings(s: &crate::settings::Settings) -> Remotes {
        Remotes {
            remotes: s.remotes.clone(),
            ssh: s.ssh.clone(),
            cache: arbor_index::default_dir(),
        }
    }

    /// Adds each remote's mirrored folders to `config` as roots of its
    /// host (those not synced yet too: they list nothing until they are).
    pub fn add_mirrors(&self, config: &mut StoreConfig) {
        let Some(cache) = &self.cache else {
            return;
        };
        for r in &self.remotes {
            for m in arbor_remote::mirror_roots(cache, r) {
                config.add_mirror(&m.local, m.kind, m.agent, &r.name);
            }
        }
    }

    /// What the picker shows of each remote before its sync: when its
    /// mirror was last synced.
    pub fn statuses(&self) -> crate::ui::picker::Remotes {
        let hosts = self
            .remotes
            .iter()
            .map(|r| {
                let state = self
                    .cache
                    .as_deref()
                    .map(|c| arbor_remote::read_state(c, &r.name))
                    .unwrap_or_default();
                crate::ui::picker::HostStatus::new(&r.name, state.last_ok_ms)
            })
            .collect();
        crate::ui::picker::Remotes { hosts }
    }

    /// Those whose mirrors `config` lists (`--host` and `--store` leave
    /// some or all out): the picker syncs only them.
    pub fn listed_in(mut self, config: &StoreConfig) -> Remotes {
        self.remotes.retain(|r| {
            config
                .roots
                .iter()
                .any(|root| root.host.as_deref() == Some(&r.name))
        });
        self
    }

    /// The remote whose mirror holds `path`, when one does.
    pub fn owning(&self, path: &Path) -> Option<&Remote> {
        let absolute = std::path::absolute(path).ok()?;
        let host = arbor_util::hosts::host_of(&absolute)?;
        self.remotes.iter().find(|r| *r.name == *host)
    }

    /// `--host` names this machine (`local`) or a configured remote.
    pub fn check_hosts(&self, given: &[String]) -> Result<()> {
        for h in given {
            let known = arbor_util::hosts::same_host(h, None)
                || self.remotes.iter().any(|r| r.name.eq_ignore_ascii_case(h));
            if !known {
                let names: Vec<&str> = self.remotes.iter().map(|r| r.name.as_str()).collect();
                let configured = match names.is_empty() {
                    true => "no remote is configured (see `arbor remote add`)".to_string(),
                    false => format!("the remotes are {}", names.join(", ")),
                };
                bail!(
                    "--host {}: no such remote; {configured}, and `local` is this machine",
                    crate::term::sanitize_line(h)
                );
            }
        }
        Ok(())
    }
}
