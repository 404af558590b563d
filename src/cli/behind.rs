//! The index built behind a command's answer (see `index::behind`): the
//! commands open the index so that a big build is left to `arbor index`,
//! started in a session of its own.

use std::ffi::OsString;

use super::GlobalOpts;
use crate::app::load::LoadWarning;
use crate::term::sanitize_line as clean;
use arbor_index::behind::{self, Deferred};
use arbor_index::Index;

/// The index for a command that answers from it (`None` with
/// `--no-index`), leaving a big build to a process behind the answer; with
/// or without it, this process is marked busy while it runs: a build
/// behind stops for it (see [`behind::mark_busy`]).
pub fn open_index(g: &GlobalOpts) -> Option<Result<Index, arbor_index::Error>> {
    if g.no_index {
        // Reading every file, it is as much a command a build waits for.
        if let Some(dir) = arbor_index::default_dir() {
            behind::mark_busy(&dir.join(arbor_index::FILE_NAME));
        }
    }
    (!g.no_index).then(|| {
        Index::open_default().map(|mut index| {
            behind::mark_busy(index.path());
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
    let lacked = d.lacked();
    match d.builder {
        Some(pid) => format!(
            "the index is being built (process {pid}); {lacked} were read from their files meanwhile"
        ),
        None => match start(g) {
            Ok(pid) => format!(
                "{lacked} were read from their files; indexing them in the background \
                 (process {pid}, `arbor index` waits for it)"
            ),
            Err(e) => format!("{lacked} were read from their files; cannot index them: {e}"),
        },
    }
}

fn start(g: &GlobalOpts) -> std::io::Result<u32> {
    let dir = arbor_index::default_dir().ok_or_else(|| std::io::Error::other("no cache dir"))?;
    behind::start_builder(&store_args(g), &dir.join(arbor_index::FILE_NAME))
}

/// The options that name `g`'s store, for a process of its own: each one
/// word (`--store=DIR`), so that a value starting with `-` stays a value.
pub fn store_args(g: &GlobalOpts) -> Vec<OsString> {
    let opt = |name: &str, value: &std::ffi::OsStr| {
        let mut arg = OsString::from(name);
        arg.push(value);
        arg
    };
    let mut args = Vec::new();
    if let Some(store) = &g.store {
        args.push(opt("--store=", store.as_os_str()));
    }
    if let Some(dir) = &g.session_dir {
        args.push(opt("--session-dir=", dir.as_os_str()));
    }
    for agent in &g.agents {
        args.push(opt("--agent=", agent.name().as_ref()));
    }
    args
}
