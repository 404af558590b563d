//! The picker's start (the demo store when there are no sessions and no
//! remotes), `arbor
//! tree`, `arbor --last`, and what the person chose in them.

use anyhow::{bail, Context as _, Result};

use super::project_cwd;
use crate::app::load::{gather, load_listing, LoadEvent};
use crate::cli::{Cli, TreeArgs};
use crate::settings::Settings;
use crate::term::for_stdout;
use arbor_store::listing::{filter_rows, sort_recent};
use arbor_store::{resolve_session, Scope, StoreConfig};

/// `arbor tree`: the tree screen on one session.
pub(super) fn tree(config: &StoreConfig, cli: &Cli, a: &TreeArgs) -> Result<()> {
    let file = resolve_session(config, &a.session)?;
    // Fail before the screen opens when the file is not a session
    // (reading its header only: the screen reads the whole file).
    arbor_session::reader::check_header(&file.path)?;
    let settings = super::config::load_for_screen(cli);
    let opts = crate::ui::runtime::PickerOptions {
        config: config.clone(),
        project_cwd: project_cwd(None)?,
        print_mode: cli.print,
        start_in_all: false,
        note: None,
        open_tree: Some(file),
        tree_at: a.at.clone(),
        use_index: false,
        query: String::new(),
        builder_args: None,
        look: look(&settings),
        // For the writes of a remote's session (the tree syncs nothing).
        remotes: crate::app::remotes::Remotes::from_settings(&settings).listed_in(config),
    };
    finish(
        crate::ui::runtime::run_picker(opts)?,
        &settings.resume_cmds(),
        &crate::app::remotes::Remotes::from_settings(&settings),
    )
}

/// Opens the picker; on a machine with no sessions and no remotes, on the
/// bundled demo store.
pub(super) fn picker(mut config: StoreConfig, cli: &Cli) -> Result<()> {
    let settings = super::config::load_for_screen(cli);
    if cli.last {
        return last(&config, cli, &settings);
    }
    // A problem with the settings stays on screen (stderr is covered).
    let mut note = (!settings.warnings.is_empty()).then(|| settings.warnings.join(" · "));
    let mut start_in_all = settings.scope.value == crate::ui::picker::Scope::All;
    // With remotes configured the picker opens on the (maybe empty) store
    // and their mirrors, which the background syncs fill: the demo is
    // for a machine with nothing to list at all.
    let mirrors = config.roots.iter().any(|r| r.host.is_some());
    let empty = !arbor_store::scan::has_session_files(&config);
    if empty && mirrors {
        start_in_all = true;
    } else if empty {
        let dest = crate::demo::demo_dir();
        crate::demo::unpack_demo_store(&dest)
            .with_context(|| format!("cannot unpack the demo store to {}", dest.display()))?;
        let looked = config
            .roots
            .iter()
            .map(|r| r.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        note = Some(format!("Demo store (no sessions in {looked})"));
        config = StoreConfig::single(&dest, arbor_store::StoreKind::PerProject);
        start_in_all = true;
    }
    // The demo store is not worth a process of its own.
    let builder_args = note
        .is_none()
        .then(|| crate::cli::behind::store_args(&cli.global));
    let remotes = crate::app::remotes::Remotes::from_settings(&settings).listed_in(&config);
    let opts = crate::ui::runtime::PickerOptions {
        config,
        project_cwd: project_cwd(None)?,
        print_mode: cli.print,
        start_in_all,
        note,
        open_tree: None,
        tree_at: None,
        use_index: !cli.global.no_index,
        query: cli.query.join(" "),
        builder_args,
        look: look(&settings),
        remotes,
    };
    finish(
        crate::ui::runtime::run_picker(opts)?,
        &settings.resume_cmds(),
        &crate::app::remotes::Remotes::from_settings(&settings),
    )
}

/// `arbor --last`: the newest session of the current folder, resumed (or
/// printed) as Enter in the picker would.
fn last(config: &StoreConfig, cli: &Cli, settings: &Settings) -> Result<()> {
    let cwd = project_cwd(None)?;
    let scope = Scope::Project(cwd.clone());
    let mut rows = Vec::new();
    let index = crate::cli::behind::open_index(&cli.global);
    load_listing(config, &scope, index, &mut |ev| match ev {
        LoadEvent::Rows(r) => gather(&mut rows, r),
        LoadEvent::Warning(w) => crate::cli::behind::warn(&cli.global, &w),
        _ => {}
    });
    // The agent resumed next is no command a build behind waits for.
    arbor_index::behind::unmark_busy();
    filter_rows(&mut rows, &scope, false);
    sort_recent(&mut rows);
    let Some(newest) = rows.into_iter().next() else {
        bail!("no sessions in {cwd}");
    };
    let outcome = if cli.print {
        crate::ui::Outcome::Print(newest.path.to_path_buf())
    } else {
        crate::ui::Outcome::Resume {
            path: newest.path.to_path_buf(),
            id: newest.id,
            cwd: newest.cwd,
            agent: newest.agent,
        }
    };
    finish(
        outcome,
        &settings.resume_cmds(),
        &crate::app::remotes::Remotes::from_settings(settings),
    )
}

/// How the screen looks and takes input, from the settings.
fn look(s: &Settings) -> crate::ui::runtime::Look {
    crate::ui::runtime::Look {
        theme: s.theme,
        mouse: s.mouse.value,
        sort: s.sort.value,
        preview_on: s.preview_on(),
    }
}

fn finish(
    outcome: crate::ui::Outcome,
    resume_cmd: &[String],
    remotes: &crate::app::remotes::Remotes,
) -> Result<()> {
    use crate::ui::Outcome;
    // The folder is gone and the person agreed, in the picker or the tree,
    // to the current one (`ResumeHere`): not asked again.
    let here = matches!(outcome, Outcome::ResumeHere { .. });
    match outcome {
        Outcome::Quit => Ok(()),
        Outcome::Print(path) => {
            println!("{}", for_stdout(&path.to_string_lossy()));
            Ok(())
        }
        Outcome::Resume {
            path,
            id,
            cwd,
            agent,
        }
        | Outcome::ResumeHere {
            path,
            id,
            cwd,
            agent,
        } => {
            let target = crate::cli::resume::Target {
                path,
                id,
                cwd,
                agent,
            };
            let template = crate::cli::resume::template_for(resume_cmd, target.agent);
            // A remote's session resumes on its own machine, in its own
            // folder there.
            if let (Some(remote), Some(cache)) = (remotes.owning(&target.path), &remotes.cache) {
                let on = crate::cli::resume_remote::OnRemote {
                    remote,
                    ssh: &remotes.ssh,
                    cache,
                };
                return crate::cli::resume_remote::resume(template, &target, &on);
            }
            if here {
                crate::cli::resume::resume(template, &target, &mut |_| Some(true))
            } else {
                crate::cli::resume::resume(
                    template,
                    &target,
                    &mut crate::cli::resume::ask_on_terminal,
                )
            }
        }
    }
}
