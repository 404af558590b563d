//! The index built behind a command's answer (see `index::behind`): the
//! commands open the index so that a big build is left to `arbor index`,
//! started here in a session of its own.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};

use super::GlobalOpts;
use crate::index::behind::{self, Deferred};
use crate::index::load::LoadWarning;
use crate::index::{Index, IndexError};
use crate::util::term::sanitize_line as clean;

/// The index for a command that answers from it (`None` with
/// `--no-index`), leaving a big build to a process behind the answer.
pub fn open_index(g: &GlobalOpts) -> Option<Result<Index, IndexError>> {
    (!g.no_index).then(|| {
        Index::open_default().map(|mut index| {
            index.build_behind(behind::threshold());
            index
        })
    })
}

/// Says `w` on stderr; a listing that left the index's build behind it
/// starts that build (unless one runs already) and says so.
pub fn warn(g: &GlobalOpts, w: &LoadWarning) {
    match w {
        LoadWarning::BuildingBehind(d) => eprintln!("arbor: {}", building(g, d)),
        w => eprintln!("arbor: {}", clean(&w.to_string())),
    }
}

fn building(g: &GlobalOpts, d: &Deferred) -> String {
    let mb = d.bytes as f64 / (1 << 20) as f64;
    let lacked = format!("{} sessions ({mb:.0} MB)", d.files);
    match d.builder {
        Some(pid) => format!(
            "the index is being built (process {pid}); {lacked} were read from their files meanwhile"
        ),
        None => match start_builder(g) {
            Ok(pid) => format!(
                "{lacked} were read from their files; indexing them in the background \
                 (process {pid}, `arbor index` waits for it)"
            ),
            Err(e) => format!("{lacked} were read from their files; cannot index them: {e}"),
        },
    }
}

/// `arbor index --behind` for the same store, in a session of its own (a
/// Ctrl+C or a closed terminal does not stop it), its output nowhere.
fn start_builder(g: &GlobalOpts) -> io::Result<u32> {
    let mut cmd = Command::new(std::env::current_exe()?);
    if let Some(store) = &g.store {
        cmd.arg("--store").arg(store);
    }
    if let Some(dir) = &g.session_dir {
        cmd.arg("--session-dir").arg(dir);
    }
    for agent in &g.agents {
        cmd.args(["--agent", agent.name()]);
    }
    cmd.args(["index", "--behind"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches no memory.
    unsafe {
        cmd.pre_exec(|| match libc::setsid() {
            -1 => Err(io::Error::last_os_error()),
            _ => Ok(()),
        });
    }
    Ok(cmd.spawn()?.id())
}
