//! A real `sshd` on 127.0.0.1 for the remote tests: a free port, a host
//! key and a user key generated for it, its own `sshd_config` (keys only,
//! `StrictModes no`) and a `known_hosts` for the client holding the host
//! key, so that ssh checks it as it would any host's. Logins run their
//! command with `HOME` (and the folder they start in) set to a fake home
//! of the test's, so `~/…` on "the remote" is never the real home, and
//! with the fake home's `bin` first on `PATH` (where a test installs
//! programs "on the remote").
//!
//! [`Sshd::start_or_skip`] says why and returns `None` where `sshd`,
//! `ssh-keygen` or `rsync` are missing (`.ci/run` installs them).

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Sshd {
    pub dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
    /// The user's private key.
    pub key: PathBuf,
    /// The client's known_hosts, holding this server's key.
    pub known_hosts: PathBuf,
    /// The fake home logins see.
    pub home: PathBuf,
    pub user: String,
}

/// The first of `names` found on PATH or in the sbin folders.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "arbor-test", "-f"])
        .arg(path)
        .stdin(Stdio::null())
        .status()
        .expect("ssh-keygen runs");
    assert!(st.success(), "ssh-keygen failed");
}

/// A port nothing listens on (bound, then let go).
pub fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a port");
    l.local_addr().expect("local addr").port()
}

impl Sshd {
    /// A running server, or `None` with the reason printed.
    pub fn start_or_skip(test: &str) -> Option<Sshd> {
        for tool in ["sshd", "ssh", "ssh-keygen", "rsync"] {
            if find_program(tool).is_none() {
                eprintln!("{test}: skipped: `{tool}` is not installed (.ci/run installs openssh-server and rsync)");
                return None;
            }
        }
        match Sshd::start() {
            Ok(s) => Some(s),
            Err(why) => {
                eprintln!("{test}: skipped: sshd did not start: {why}");
                None
            }
        }
    }

    fn start() -> Result<Sshd, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let d = dir.path();
        let (host_key, key) = (d.join("host_key"), d.join("user_key"));
        keygen(&host_key);
        keygen(&key);
        let authorized = d.join("authorized_keys");
        std::fs::copy(d.join("user_key.pub"), &authorized).map_err(|e| e.to_string())?;
        let home = d.join("home");
        std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
        let port = free_port();
        let host_pub =
            std::fs::read_to_string(d.join("host_key.pub")).map_err(|e| e.to_string())?;
        let known_hosts = d.join("known_hosts");
        let key_part: Vec<&str> = host_pub.split_whitespace().take(2).collect();
        std::fs::write(
            &known_hosts,
            format!("[127.0.0.1]:{port} {}\n", key_part.join(" ")),
        )
        .map_err(|e| e.to_string())?;
        let config = d.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "ListenAddress 127.0.0.1\nPort {port}\nHostKey {hk}\nPidFile {pid}\n\
                 AuthorizedKeysFile {auth}\nStrictModes no\nPubkeyAuthentication yes\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 PermitRootLogin prohibit-password\nLogLevel INFO\n\
                 ForceCommand cd {home} && HOME={home} PATH={home}/bin:$PATH exec /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n",
                hk = host_key.display(),
                pid = d.join("sshd.pid").display(),
                auth = authorized.display(),
                home = home.display(),
            ),
        )
        .map_err(|e| e.to_string())?;
        // As root, sshd wants its privilege separation folder (the
        // package's boot scripts make it).
        // SAFETY: geteuid(2) has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            let _ = std::fs::create_dir_all("/run/sshd");
        }
        let sshd = find_program("sshd").ok_or("no sshd")?;
        let log = std::fs::File::create(d.join("sshd.log")).map_err(|e| e.to_string())?;
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| e.to_string())?;
        let user = String::from_utf8_lossy(
            &Command::new("id")
                .arg("-un")
                .output()
                .map_err(|e| e.to_string())?
                .stdout,
        )
        .trim()
        .to_string();
        let mut s = Sshd {
            dir,
            child,
            port,
            key,
            known_hosts,
            home,
            user,
        };
        s.wait_ready()?;
        s.check_login()?;
        Ok(s)
    }

    /// One login with the test's key, so that a machine where this user
    /// cannot log in at all (a locked account, as `nobody`'s) is a skip
    /// with sshd's reason rather than a failure of every test.
    fn check_login(&self) -> Result<(), String> {
        let words = shlex::split(&self.ssh_command()).ok_or("the ssh command")?;
        let out = Command::new(&words[0])
            .args(&words[1..])
            .args([
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=20",
                "--",
                &self.dest(),
                "true",
            ])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            return Ok(());
        }
        let log = std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default();
        Err(format!(
            "a login as {} failed: {} {}",
            self.user,
            String::from_utf8_lossy(&out.stderr).trim(),
            log.trim()
        ))
    }

    /// Waits for the server's banner.
    fn wait_ready(&mut self) -> Result<(), String> {
        let until = Instant::now() + Duration::from_secs(20);
        while Instant::now() < until {
            if let Ok(Some(st)) = self.child.try_wait() {
                let log =
                    std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default();
                return Err(format!("sshd exited ({st}): {}", log.trim()));
            }
            if let Ok(mut c) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = c.set_read_timeout(Some(Duration::from_secs(5)));
                let mut b = [0u8; 4];
                if c.read_exact(&mut b).is_ok() && &b == b"SSH-" {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err("no banner within 20 s".into())
    }

    /// The ssh command (as `ARBOR_SSH` takes it) that reaches this server
    /// with the test's key, checking its host key against the test's
    /// known_hosts.
    pub fn ssh_command(&self) -> String {
        self.ssh_command_with(&self.known_hosts)
    }

    /// [`Self::ssh_command`] with another known_hosts file.
    pub fn ssh_command_with(&self, known_hosts: &Path) -> String {
        format!(
            "ssh -F /dev/null -i {} -p {} -o UserKnownHostsFile={} -o GlobalKnownHostsFile=/dev/null \
             -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes -o LogLevel=ERROR",
            self.key.display(),
            self.port,
            known_hosts.display()
        )
    }

    /// `user@127.0.0.1`.
    pub fn dest(&self) -> String {
        format!("{}@127.0.0.1", self.user)
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
