//! `arbor completions SHELL` and `arbor man`: the shell's completion script
//! and the manual pages, generated from the same command-line definition
//! the parser uses, so they cannot fall behind it.

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, Result};
use clap::CommandFactory as _;

use super::{Cli, CompletionsArgs, ManArgs};

/// The completion script for `a.shell` on `out`.
pub fn completions(a: &CompletionsArgs, out: &mut impl Write) -> Result<()> {
    let mut cmd = Cli::command();
    clap_complete::generate(a.shell, &mut cmd, "arbor", out);
    Ok(())
}

/// arbor(1) on `out`, or with `--dir` every page (`arbor.1`, and
/// `arbor-list.1` … for each command) written into that folder, each
/// path said on `out`.
pub fn man(a: &ManArgs, out: &mut impl Write) -> Result<()> {
    let cmd = Cli::command();
    match &a.dir {
        None => clap_mangen::Man::new(cmd).render(out)?,
        Some(dir) => {
            arbor_session::fileops::create_folders(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            write_pages(cmd, dir, out)?;
        }
    }
    Ok(())
}

/// The page of `cmd` and of each of its visible commands, as man(1)
/// finds them (`arbor-list.1` for `man arbor-list`).
fn write_pages(cmd: clap::Command, dir: &Path, out: &mut impl Write) -> Result<()> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut pages = vec![cmd.clone()];
    pages.extend(cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
    for page in pages {
        let man = clap_mangen::Man::new(page);
        let file = dir.join(man.get_filename());
        let mut bytes = Vec::new();
        man.render(&mut bytes)?;
        // A page written before is replaced: the pages are regenerated.
        arbor_session::fileops::write_new(&file, true, |f| f.write_all(&bytes))
            .with_context(|| format!("cannot write {}", file.display()))?;
        writeln!(out, "{}", crate::term::path(&file))?;
    }
    Ok(())
}
