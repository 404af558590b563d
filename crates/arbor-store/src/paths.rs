//! Resolution of the store roots from options, environment and defaults.

use std::path::{Path, PathBuf};

/// How a root is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// `<root>/--<encoded cwd>--/*.jsonl`
    PerProject,
    /// All projects' files directly in one folder (a custom session dir).
    Flat,
    /// `<root>/YYYY/MM/DD/*.jsonl` (Codex; files directly in the root,
    /// from its older versions, too).
    Dated,
}

pub use arbor_session::agent::Agent;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreRoot {
    /// Always absolute (rows, `--json` paths and index keys derive from it).
    pub path: PathBuf,
    pub kind: StoreKind,
    /// Whose sessions the root holds; every file found under it carries it.
    pub agent: Agent,
    /// The remote machine whose mirror the root is (`None`: this machine's
    /// own store). Every file under it is that host's session; see
    /// [`crate::hosts`].
    pub host: Option<std::sync::Arc<str>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoreConfig {
    pub roots: Vec<StoreRoot>,
}

/// Environment lookups, injectable for tests.
pub trait Env {
    fn var(&self, key: &str) -> Option<String>;
    fn home(&self) -> Option<PathBuf>;
}

pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, key: &str) -> Option<String> {
        std::env::var(key).ok().filter(|v| !v.is_empty())
    }
    fn home(&self) -> Option<PathBuf> {
        dirs::home_dir()
    }
}

fn expand_tilde(p: &str, env: &dyn Env) -> PathBuf {
    if p == "~" {
        return env.home().unwrap_or_else(|| PathBuf::from(p));
    }
    if let Some(rest) = p.strip_prefix("~/") {
        if let Some(h) = env.home() {
            return h.join(rest);
        }
    }
    PathBuf::from(p)
}

/// The agent dir the environment names (`ATOMIC_CODING_AGENT_DIR`, else
/// `PI_CODING_AGENT_DIR`), `~` expanded; `None` when neither is set.
pub fn agent_dir_from_env(env: &dyn Env) -> Option<PathBuf> {
    ["ATOMIC_CODING_AGENT_DIR", "PI_CODING_AGENT_DIR"]
        .iter()
        .find_map(|k| env.var(k))
        .map(|v| expand_tilde(&v, env))
}

/// The agent's own folder, where its settings and keys live: the one the
/// environment names, else Atomic's `~/.atomic/agent`, else, on a machine
/// with only pi (no `~/.atomic/agent`), pi's `~/.pi/agent`. `None` only
/// without a home.
pub fn agent_dir(env: &dyn Env) -> Option<PathBuf> {
    if let Some(dir) = agent_dir_from_env(env) {
        return Some(dir);
    }
    let home = env.home()?;
    let atomic = home.join(".atomic").join("agent");
    let pi = home.join(".pi").join("agent");
    Some(if !atomic.is_dir() && pi.is_dir() {
        pi
    } else {
        atomic
    })
}

impl StoreConfig {
    /// Highest first: `--session-dir`, `--store`, the session-dir env vars,
    /// then the agent dir (env or `~/.atomic/agent`) plus the legacy pi store.
    pub fn resolve(store: Option<&Path>, session_dir: Option<&Path>, env: &dyn Env) -> StoreConfig {
        if let Some(d) = session_dir {
            return StoreConfig::single(d, StoreKind::Flat);
        }
        if let Some(s) = store {
            return StoreConfig::single(s, StoreKind::PerProject);
        }
        for key in [
            "ATOMIC_CODING_AGENT_SESSION_DIR",
            "PI_CODING_AGENT_SESSION_DIR",
        ] {
            if let Some(v) = env.var(key) {
                return StoreConfig::single(&expand_tilde(&v, env), StoreKind::Flat);
            }
        }
        let agent_dir = agent_dir_from_env(env)
            .or_else(|| env.home().map(|h| h.join(".atomic").join("agent")))
            .unwrap_or_else(|| PathBuf::from(".atomic/agent"));
        let mut roots = vec![StoreRoot {
            path: absolute(&agent_dir.join("sessions")),
            kind: StoreKind::PerProject,
            agent: Agent::Atomic,
            host: None,
        }];
        if let Some(h) = env.home() {
            let legacy = h.join(".pi").join("agent").join("sessions");
            if legacy.is_dir() && !roots.iter().any(|r| same_dir(&r.path, &legacy)) {
                roots.push(StoreRoot {
                    path: absolute(&legacy),
                    kind: StoreKind::PerProject,
                    agent: Agent::Pi,
                    host: None,
                });
            }
        }
        roots.extend(other_agents(env));
        StoreConfig { roots }
    }

    /// Keeps the roots of `agents` only (`--agent`); none given keeps all.
    pub fn narrow(&mut self, agents: &[Agent]) {
        if !agents.is_empty() {
            self.roots.retain(|r| agents.contains(&r.agent));
        }
    }

    pub fn single(path: &Path, kind: StoreKind) -> StoreConfig {
        StoreConfig {
            roots: vec![StoreRoot {
                path: absolute(path),
                kind,
                agent: Agent::Atomic,
                host: None,
            }],
        }
    }

    /// The agent of a session file given by path (a command-line argument,
    /// a watcher event): that of the innermost root holding it, else Atomic.
    pub fn agent_of(&self, path: &Path) -> Agent {
        let path = absolute(path);
        self.roots
            .iter()
            .filter(|r| path.starts_with(&r.path))
            .max_by_key(|r| r.path.components().count())
            .map_or(Agent::Atomic, |r| r.agent)
    }

    /// Adds a remote's mirror folder as a root of `host`'s sessions, and
    /// names it so for [`crate::hosts::host_of`].
    pub fn add_mirror(&mut self, path: &Path, kind: StoreKind, agent: Agent, host: &str) {
        let path = absolute(path);
        crate::hosts::register(&path, host);
        self.roots.push(StoreRoot {
            path,
            kind,
            agent,
            host: Some(host.into()),
        });
    }

    /// Keeps the roots of `hosts` only (`--host`; `local` is this
    /// machine's); none given keeps all.
    pub fn narrow_hosts(&mut self, hosts: &[String]) {
        if !hosts.is_empty() {
            self.roots.retain(|r| {
                hosts
                    .iter()
                    .any(|h| crate::hosts::same_host(h, r.host.as_deref()))
            });
        }
    }

    /// Whether any root is a remote's mirror.
    pub fn has_remotes(&self) -> bool {
        self.roots.iter().any(|r| r.host.is_some())
    }

    /// A session file given by path, with its agent (see [`Self::agent_of`]).
    pub fn session_file(&self, path: &Path) -> super::scan::SessionFile {
        super::scan::SessionFile {
            path: path.to_path_buf(),
            agent: self.agent_of(path),
        }
    }

    /// True when no root exists on disk.
    pub fn is_missing(&self) -> bool {
        self.roots.iter().all(|r| !r.path.is_dir())
    }
}

/// The stores of Claude Code (`$CLAUDE_CONFIG_DIR/projects`, else
/// `~/.claude/projects`) and Codex (`$CODEX_HOME/sessions`, else
/// `~/.codex/sessions`), when they exist: one `stat` each, so an agent that
/// is not installed costs nothing more.
fn other_agents(env: &dyn Env) -> Vec<StoreRoot> {
    let home = env.home();
    let dir = |var: &str, default: &str| {
        env.var(var)
            .map(|v| expand_tilde(&v, env))
            .or_else(|| home.as_ref().map(|h| h.join(default)))
    };
    let mut out = Vec::new();
    if let Some(d) = dir("CLAUDE_CONFIG_DIR", ".claude").map(|d| d.join("projects")) {
        if d.is_dir() {
            out.push(StoreRoot {
                path: absolute(&d),
                kind: StoreKind::PerProject,
                agent: Agent::Claude,
                host: None,
            });
        }
    }
    if let Some(d) = dir("CODEX_HOME", ".codex").map(|d| d.join("sessions")) {
        if d.is_dir() {
            out.push(StoreRoot {
                path: absolute(&d),
                kind: StoreKind::Dated,
                agent: Agent::Codex,
                host: None,
            });
        }
    }
    out
}

/// Claude Code's project folder name of a cwd: every character other than
/// an ASCII letter or digit becomes `-` (`/home/u/my.proj` → `-home-u-my-proj`).
pub fn encode_cwd_claude(cwd: &str) -> String {
    cwd.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// `p` made absolute against the current directory, lexically (no symlink
/// resolution: the alias path is kept, as the store scan keeps it).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The per-project folder name of a cwd: `/home/u/my-proj` → `--home-u-my-proj--`.
pub fn encode_cwd(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let body: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

/// The form of a project path the agents store (their `process.cwd()`):
/// `~` expanded, absolute, without `.`, `..` or a trailing separator, and
/// with symlinks resolved when the folder exists here (as `getcwd` gives
/// it). `--cwd proj/` and `--cwd ./proj` name the sessions `cd proj`
/// would.
pub fn absolute_cwd(p: &str, env: &dyn Env) -> String {
    let expanded = expand_tilde(p, env);
    let absolute = std::path::absolute(&expanded).unwrap_or(expanded);
    let mut clean = PathBuf::new();
    for c in absolute.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                // `..` at the root is the root.
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    // Windows' canonical form is a `\\?\` path no agent writes.
    if cfg!(unix) {
        if let Ok(real) = clean.canonicalize() {
            clean = real;
        }
    }
    clean.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct FakeEnv(Vec<(&'static str, &'static str)>);
    impl Env for FakeEnv {
        fn var(&self, key: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_string())
        }
        fn home(&self) -> Option<PathBuf> {
            Some(PathBuf::from("/nonexistent-home"))
        }
    }

    /// A home whose `.claude/projects` and `.codex/sessions` exist.
    struct HomeEnv(PathBuf, Vec<(&'static str, String)>);
    impl Env for HomeEnv {
        fn var(&self, key: &str) -> Option<String> {
            self.1
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.clone())
        }
        fn home(&self) -> Option<PathBuf> {
            Some(self.0.clone())
        }
    }

    #[test]
    fn other_agents_roots_when_present() {
        let d = tempfile::tempdir().unwrap();
        let agents = |c: &StoreConfig| c.roots.iter().map(|r| r.agent).collect::<Vec<_>>();
        let c = StoreConfig::resolve(None, None, &HomeEnv(d.path().into(), vec![]));
        assert_eq!(agents(&c), [Agent::Atomic], "absent stores add nothing");
        std::fs::create_dir_all(d.path().join(".claude/projects")).unwrap();
        std::fs::create_dir_all(d.path().join("cx/sessions")).unwrap();
        let env = HomeEnv(
            d.path().into(),
            vec![("CODEX_HOME", d.path().join("cx").display().to_string())],
        );
        let mut c = StoreConfig::resolve(None, None, &env);
        assert_eq!(agents(&c), [Agent::Atomic, Agent::Claude, Agent::Codex]);
        assert_eq!(c.roots[2].kind, StoreKind::Dated);
        assert_eq!(c.roots[2].path, d.path().join("cx/sessions"));
        c.narrow(&[Agent::Codex, Agent::Pi]);
        assert_eq!(agents(&c), [Agent::Codex]);
        assert_eq!(encode_cwd_claude("/home/u/my.proj_x"), "-home-u-my-proj-x");
    }

    #[test]
    fn encodes_like_the_agent() {
        assert_eq!(encode_cwd("/home/u/my-proj"), "--home-u-my-proj--");
        assert_eq!(encode_cwd("C:\\Users\\x"), "--C--Users-x--");
        assert_eq!(encode_cwd("/"), "----");
    }

    #[test]
    fn precedence_of_overrides() {
        let env = FakeEnv(vec![
            ("PI_CODING_AGENT_SESSION_DIR", "/flat"),
            ("ATOMIC_CODING_AGENT_DIR", "/agent"),
        ]);
        let c = StoreConfig::resolve(None, None, &env);
        assert_eq!(c.roots[0].path, PathBuf::from("/flat"));
        assert_eq!(c.roots[0].kind, StoreKind::Flat);
        let c = StoreConfig::resolve(None, Some(Path::new("/cli")), &env);
        assert_eq!(c.roots[0].path, PathBuf::from("/cli"));
        let env = FakeEnv(vec![("PI_CODING_AGENT_DIR", "~/pi")]);
        let c = StoreConfig::resolve(None, None, &env);
        assert_eq!(
            c.roots[0].path,
            PathBuf::from("/nonexistent-home/pi/sessions")
        );
        assert_eq!(c.roots[0].kind, StoreKind::PerProject);
        let c = StoreConfig::resolve(None, None, &FakeEnv(vec![]));
        assert_eq!(
            c.roots[0].path,
            PathBuf::from("/nonexistent-home/.atomic/agent/sessions")
        );
    }

    #[test]
    fn a_project_path_is_normalized() {
        let env = FakeEnv(vec![]);
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        std::fs::create_dir(real.join("proj")).unwrap();
        let want = real.join("proj").display().to_string();
        for given in ["proj/", "proj", "./proj", "proj/./", "other/../proj"] {
            let p = real.join(given).display().to_string();
            assert_eq!(absolute_cwd(&p, &env), want, "{given}");
        }
        // A folder that is not here (another machine's) is cleaned up
        // lexically.
        assert_eq!(absolute_cwd("/no/such/proj/", &env), "/no/such/proj");
        assert_eq!(absolute_cwd("/no/such/x/../proj/.", &env), "/no/such/proj");
        assert_eq!(absolute_cwd("/", &env), "/");
    }
}
