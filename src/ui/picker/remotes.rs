//! What the picker knows of each remote whose mirror it lists: when the
//! mirror was last brought up to date, whether a sync is under way, and
//! why the last one failed. A row of a remote is tagged `@name`, with the
//! mirror's age while it is not known to be current (docs/remotes.md).

/// One remote, as the picker shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostStatus {
    pub name: String,
    /// When its mirror was last synced completely (ms), from any run.
    pub last_ok_ms: Option<i64>,
    /// A sync of this run is under way: files taken so far.
    pub syncing: Option<u64>,
    /// This run's sync finished, and the mirror is current.
    pub synced: bool,
    /// Why this run's sync failed (the host could not be reached, timed
    /// out, refused), a sentence naming the host.
    pub failed: Option<String>,
}

impl HostStatus {
    pub fn new(name: &str, last_ok_ms: Option<i64>) -> HostStatus {
        HostStatus {
            name: name.to_string(),
            last_ok_ms,
            syncing: None,
            synced: false,
            failed: None,
        }
    }
}

/// The remotes configured, in the settings' order.
#[derive(Debug, Default, Clone)]
pub struct Remotes {
    pub hosts: Vec<HostStatus>,
}

impl Remotes {
    pub fn get(&self, name: &str) -> Option<&HostStatus> {
        self.hosts.iter().find(|h| h.name == name)
    }

    pub fn get_mut(&mut self, name: &str) -> Option<&mut HostStatus> {
        self.hosts.iter_mut().find(|h| h.name == name)
    }

    /// A remote row's tag: `@name`, and the mirror's age (`@devbox 3h`,
    /// `@devbox never` before any sync) while it is not known to be
    /// current; `stale` then.
    pub fn tag(&self, name: &str, now_ms: i64) -> (String, bool) {
        match self.get(name) {
            Some(h) if h.synced => (format!("@{name}"), false),
            Some(HostStatus {
                last_ok_ms: Some(ms),
                ..
            }) => (format!("@{name} {}", arbor_util::age(now_ms, *ms)), true),
            Some(_) => (format!("@{name} never"), true),
            // A mirror whose remote is no longer configured.
            None => (format!("@{name}"), true),
        }
    }

    /// The status line while syncs run: `syncing devbox, laptop (12 files)`.
    pub fn progress(&self) -> Option<String> {
        let running: Vec<&HostStatus> = self.hosts.iter().filter(|h| h.syncing.is_some()).collect();
        if running.is_empty() {
            return None;
        }
        let names: Vec<&str> = running.iter().map(|h| h.name.as_str()).collect();
        let files: u64 = running.iter().filter_map(|h| h.syncing).sum();
        Some(match files {
            0 => format!("syncing {}…", names.join(", ")),
            1 => format!("syncing {}… (1 file)", names.join(", ")),
            n => format!("syncing {}… ({n} files)", names.join(", ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_tag_carries_the_age_until_a_sync_succeeds() {
        let hour = 3_600_000;
        let mut r = Remotes {
            hosts: vec![
                HostStatus::new("devbox", Some(0)),
                HostStatus::new("new", None),
            ],
        };
        assert_eq!(r.tag("devbox", 3 * hour), ("@devbox 3h".to_string(), true));
        assert_eq!(r.tag("new", 3 * hour), ("@new never".to_string(), true));
        r.get_mut("devbox").unwrap().synced = true;
        assert_eq!(r.tag("devbox", 3 * hour), ("@devbox".to_string(), false));
        assert_eq!(r.progress(), None);
        r.get_mut("new").unwrap().syncing = Some(2);
        assert_eq!(r.progress().as_deref(), Some("syncing new… (2 files)"));
    }
}
