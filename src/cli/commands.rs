//! What each command does: the picker's start (the demo store when there
//! are no sessions), `list`, `show`, `context`, `export`, the writes
//! (`label`, `branch`, `rename`, `fork`) and `index`; output is sanitized for
//! a terminal (see `util::term`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use serde_json::{json, Value};

use super::{Cli, Command, GlobalOpts};

use rayon::prelude::*;

use crate::app::load::{gather, load_listing, load_listing_stored, LoadEvent};
use crate::term::{for_stdout, path as shown, sanitize_line as clean};
use arbor_index::stored::{ListRow, Listing, RowKey};
use arbor_index::Index;
use arbor_search::hits::file_hits;
use arbor_search::{rank_order_visiting, rank_with_index, Query};
use arbor_session::view::{flatten_pre, row_line, Filter, FilterBits, Preorder};
use arbor_session::writer::{self, WriteError};
use arbor_session::{build_context, ContextFlavor, Session, SessionTree};
use arbor_store::listing::{filter_rows, read_rows, sort_recent};
use arbor_store::paths::{absolute_cwd, ProcessEnv};
use arbor_store::{list_session_files, resolve_session, Scope, SessionFile, StoreConfig};

pub fn store_config(g: &GlobalOpts) -> StoreConfig {
    let mut c = StoreConfig::resolve(g.store.as_deref(), g.session_dir.as_deref(), &ProcessEnv);
    let given = g.store.is_some() || g.session_dir.is_some();
    if let ([agent], true) = (g.agents.as_slice(), given) {
        // `--store DIR --agent claude`: DIR is a Claude Code store.
        for r in &mut c.roots {
            r.agent = *agent;
            if *agent == arbor_session::Agent::Codex && g.store.is_some() {
                r.kind = arbor_store::StoreKind::Dated;
            }
        }
    }
    c.narrow(&g.agents);
    c
}

/// Runs a subcommand; the caller prints the error and exits non-zero.
pub fn run(cli: Cli) -> Result<()> {
    if let Some(p) = &cli.global.log {
        arbor_util::log::init(p)
            .with_context(|| format!("cannot open the log file {}", p.display()))?;
    }
    let config = store_config(&cli.global);
    arbor_util::log::line(format!(
        "arbor {} with store roots {:?}",
        env!("CARGO_PKG_VERSION"),
        config.roots
    ));
    let mut out = std::io::stdout().lock();
    match cli.command {
        None => {
            drop(out);
            picker(config, &cli)
        }
        Some(Command::List(a)) => list(&config, &cli.global, &a, &mut out),
        Some(Command::Search(a)) => super::search::search(&config, &cli.global, &a, &mut out),
        Some(Command::Show(a)) => show(&config, &a, &mut out),
        Some(Command::Context(a)) => context(&config, &a, &mut out),
        Some(Command::Export(a)) => export(&config, &a, &mut out),
        Some(Command::Diff(a)) => diff(&config, &a, &mut out),
        Some(Command::Labels(a)) => super::report::labels(&config, &cli.global, &a, &mut out),
        Some(Command::Stats(a)) => super::report::stats(&config, &cli.global, &a, &mut out),
        Some(Command::Trash(a)) => super::bulk::trash(&config, &cli.global, &a, &mut out),
        Some(Command::Restore(a)) => super::bulk::restore(&config, &a, &mut out),
        Some(Command::Tree(ref a)) => {
            drop(out);
            let file = resolve_session(&config, &a.session)?;
            // Fail before the screen opens when the file is not a session
            // (reading its header only: the screen reads the whole file).
            arbor_session::reader::check_header(&file.path)?;
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
            };
            finish(crate::ui::runtime::run_picker(opts)?, &cli.resume_cmd)
        }
        Some(Command::Label(a)) => {
            let path = resolve(&config, &a.session)?;
            if !a.clear && a.text.as_deref().is_none_or(|t| t.trim().is_empty()) {
                bail!("give the label text, or --clear to remove the label");
            }
            let text = if a.clear { None } else { a.text.as_deref() };
            let entry = entry_arg(&path, &a.entry)?;
            append(&mut out, &path, a.write.migrate, || {
                writer::append_label(&path, &entry, text)
            })
        }
        Some(Command::Branch(a)) => {
            let path = resolve(&config, &a.session)?;
            let entry = entry_arg(&path, &a.entry)?;
            append(&mut out, &path, a.write.migrate, || {
                writer::append_branch(&path, &entry, &a.summary)
            })
        }
        Some(Command::Rename(a)) => {
            let path = resolve(&config, &a.session)?;
            append(&mut out, &path, a.write.migrate, || {
                writer::append_session_name(&path, &a.name)
            })
        }
        Some(Command::Index(a)) => index_cmd(&config, &a, &mut out),
        Some(Command::Fork(a)) => {
            let path = resolve(&config, &a.session)?;
            let entry = entry_arg(&path, &a.entry)?;
            let forked = writer::fork(&path, &entry, a.out.as_deref())?;
            writeln!(out, "{}", for_stdout(&forked.path.to_string_lossy()))?;
            // As Atomic's /fork: the new session ends before the user
            // message, whose text is handed back to send again.
            if let Some(text) = &forked.prompt {
                eprintln!("Forked before the user message; its text, to send again:");
                for l in arbor_session::render::sanitize_block(text).lines() {
                    eprintln!("  {l}");
                }
            }
            Ok(())
        }
    }
}

/// Opens the picker; on a machine with no sessions, on the bundled demo store.
fn picker(mut config: StoreConfig, cli: &Cli) -> Result<()> {
    if cli.last {
        return last(&config, cli);
    }
    let mut note = None;
    let mut start_in_all = cli.all;
    if !arbor_store::scan::has_session_files(&config) {
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
        .then(|| super::behind::store_args(&cli.global));
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
    };
    finish(crate::ui::runtime::run_picker(opts)?, &cli.resume_cmd)
}

/// `arbor --last`: the newest session of the current folder, resumed (or
/// printed) as Enter in the picker would.
fn last(config: &StoreConfig, cli: &Cli) -> Result<()> {
    let cwd = project_cwd(None)?;
    let scope = Scope::Project(cwd.clone());
    let mut rows = Vec::new();
    let index = super::behind::open_index(&cli.global);
    load_listing(config, &scope, index, &mut |ev| match ev {
        LoadEvent::Rows(r) => gather(&mut rows, r),
        LoadEvent::Warning(w) => super::behind::warn(&cli.global, &w),
        _ => {}
    });
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
    finish(outcome, &cli.resume_cmd)
}

fn finish(outcome: crate::ui::Outcome, resume_cmd: &[String]) -> Result<()> {
    match outcome {
        crate::ui::Outcome::Quit => Ok(()),
        crate::ui::Outcome::Print(path) => {
            println!("{}", for_stdout(&path.to_string_lossy()));
            Ok(())
        }
        crate::ui::Outcome::Resume {
            path,
            id,
            cwd,
            agent,
        } => {
            let target = super::resume::Target {
                path,
                id,
                cwd,
                agent,
            };
            let template = super::resume::template_for(resume_cmd, target.agent);
            super::resume::resume(template, &target, &mut super::resume::ask_on_terminal)
        }
        // The folder is gone and the person agreed, in the picker or the
        // tree, to the current one: not asked again.
        crate::ui::Outcome::ResumeHere {
            path,
            id,
            cwd,
            agent,
        } => {
            let target = super::resume::Target {
                path,
                id,
                cwd,
                agent,
            };
            let template = super::resume::template_for(resume_cmd, target.agent);
            super::resume::resume(template, &target, &mut |_| Some(true))
        }
    }
}

/// Runs an append (after the one-time rewrite of an older file, when
/// `migrate` allows it) and prints the new entry's id.
fn append(
    out: &mut impl Write,
    path: &Path,
    migrate: bool,
    write: impl Fn() -> Result<writer::Written, WriteError>,
) -> Result<()> {
    let written = match write() {
        Err(WriteError::NeedsMigration { version, .. }) if migrate => {
            let bak = writer::migrate_file(path)?;
            eprintln!(
                "arbor: rewrote {} from version {version} to version 3 (original kept as {})",
                shown(path),
                shown(&bak)
            );
            write()?
        }
        Err(WriteError::NeedsMigration { version, .. }) => bail!(
            "{} is a version {version} session: add --migrate to rewrite it as version 3 first \
             (the original is kept as .bak)",
            shown(Path::new(path.file_name().unwrap_or(path.as_os_str())))
        ),
        other => other?,
    };
    writeln!(out, "{}", written.id)?;
    Ok(())
}

pub fn resolve(config: &StoreConfig, arg: &str) -> Result<PathBuf> {
    Ok(resolve_session(config, arg)?.path)
}

pub fn project_cwd(cwd: Option<&Path>) -> Result<String> {
    let p = match cwd {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    Ok(absolute_cwd(&p.display().to_string(), &ProcessEnv))
}

fn list(
    config: &StoreConfig,
    g: &GlobalOpts,
    a: &super::ListArgs,
    out: &mut impl Write,
) -> Result<()> {
    let scope = if a.all {
        Scope::All
    } else {
        Scope::Project(project_cwd(a.cwd.as_deref())?)
    };
    let query = match &a.query {
        Some(q) => {
            let query = Query::parse(q);
            if let Some(err) = query.error() {
                bail!("invalid query: {err}");
            }
            Some(query)
        }
        None => None,
    };
    arbor_util::log::line("start");
    let index = super::behind::open_index(g);
    arbor_util::log::line("index opened");
    let Listed {
        listing,
        keys,
        mut problems,
        ..
    } = listed_rows(config, g, &scope, index, query.as_ref(), a.include_internal);
    let now = chrono::Utc::now().timestamp_millis();
    let line = |r: ListRow, buf: &mut Vec<u8>| {
        if a.json {
            r.write_json_line(buf);
            return;
        }
        let title = arbor_session::render::sanitize_line(r.title());
        // Cells, not characters: a wide title must not push the columns.
        let title = crate::ui::text::clip(&title, 70);
        let text = format!(
            "{}  {:>5}  {:>4}  {}\n",
            super::report::pad(&title, 70),
            r.message_count(),
            arbor_util::age(now, r.modified_ms()),
            clean(r.id())
        );
        buf.extend_from_slice(text.as_bytes());
    };
    // Formatted on all cores and written a few thousand rows at a time:
    // the whole output at once (88 MB of JSON at 100,000 sessions) cost
    // more in fresh pages than the formatting itself.
    for batch in keys.chunks(8192) {
        let chunks: Vec<Vec<u8>> = batch
            .par_chunks(512)
            .map(|c| {
                let mut buf = Vec::with_capacity(c.len() * if a.json { 700 } else { 130 });
                for r in c.iter().filter_map(|&k| listing.row(k)) {
                    line(r, &mut buf);
                }
                match a.json {
                    true => escape_c1(buf),
                    false => buf,
                }
            })
            .collect();
        for c in chunks {
            out.write_all(&c)?;
        }
    }
    arbor_util::log::line("rows written");
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    for p in problems {
        eprintln!(
            "arbor: skipped {}: {}",
            shown(&p.path),
            clean(skip_reason(&p))
        );
    }
    // Nothing here is not an error (the status stays 0), but the way to
    // the other folders is said.
    if keys.is_empty() {
        match &query {
            None => no_sessions_hint(&scope, "lists every folder's"),
            Some(_) => {
                if let Scope::Project(cwd) = &scope {
                    let cwd = shown(Path::new(cwd));
                    eprintln!("arbor: no session in {cwd} matches; --all searches every folder");
                }
            }
        }
    }
    // The process ends now: skip freeing thousands of rows one by one.
    std::mem::forget(listing);
    Ok(())
}

/// Why a file was skipped, without the path its read error repeats
/// (`PATH is not a session file: …` → `not a session file: …`).
fn skip_reason(p: &arbor_store::ScanProblem) -> &str {
    let path = p.path.to_string_lossy();
    match p.reason.strip_prefix(path.as_ref()) {
        Some(rest) => {
            let rest = rest.trim_start_matches(':').trim_start();
            rest.strip_prefix("is ").unwrap_or(rest)
        }
        None => &p.reason,
    }
}

/// A command that found no session in the current folder says, on
/// stderr, that `--all` reaches the others (`what` it would do there);
/// nothing for `--all`.
pub(super) fn no_sessions_hint(scope: &Scope, what: &str) {
    if let Scope::Project(cwd) = scope {
        eprintln!(
            "arbor: no sessions in {}; --all {what}",
            shown(Path::new(cwd))
        );
    }
}

/// What [`listed_rows`] found.
pub(super) struct Listed {
    pub listing: Listing,
    /// The rows to show, in order.
    pub keys: Vec<RowKey>,
    /// How many rows were in scope before a query chose among them.
    pub in_scope: usize,
    /// The files that could not be listed.
    pub problems: Vec<arbor_store::ScanProblem>,
}

/// The rows of `scope` (internal ones when `include_internal`), the most
/// recent first or ranked by `query`, through `index` when given: the
/// stored rows are read (and ranked) from where they lie. Warnings are
/// said on stderr.
pub(super) fn listed_rows(
    config: &StoreConfig,
    g: &GlobalOpts,
    scope: &Scope,
    index: Option<Result<Index, arbor_index::IndexError>>,
    query: Option<&Query>,
    include_internal: bool,
) -> Listed {
    let mut warn = |ev| {
        if let LoadEvent::Warning(w) = ev {
            super::behind::warn(g, &w)
        }
    };
    let (listing, problems, index) = load_listing_stored(config, scope, index, query, &mut warn);
    arbor_util::log::line("rows read");
    let mut keys = listing.keys();
    keys.retain(|k| {
        (include_internal || !k.internal)
            && match scope {
                Scope::All => true,
                Scope::Project(cwd) => listing.row(*k).is_some_and(|r| r.cwd() == cwd),
            }
    });
    // As `sort_recent`: the newest first, ties by path.
    keys.par_sort_unstable_by(|a, b| {
        b.modified_ms
            .cmp(&a.modified_ms)
            .then_with(|| listing.path(*a).cmp(listing.path(*b)))
    });
    arbor_util::log::line("rows sorted");
    let in_scope = keys.len();
    let (listing, keys) = match query {
        Some(query) => rank_listing(
            query,
            listing,
            keys,
            index.as_ref(),
            matches!(scope, Scope::All),
        ),
        None => (listing, keys),
    };
    arbor_util::log::line("ranked");
    Listed {
        listing,
        keys,
        in_scope,
        problems,
    }
}

/// `keys` of `listing` ranked by `query` (bodies searched in `index` when
/// the rows came through it, else in the files). When the index cannot be
/// searched, the files are read whole and ranked instead: a listing of
/// those rows. `whole`: the listing is the whole store's (internal
/// sessions too), which the index's search is told.
fn rank_listing(
    query: &Query,
    mut listing: Listing,
    keys: Vec<RowKey>,
    index: Option<&Index>,
    whole: bool,
) -> (Listing, Vec<RowKey>) {
    let found = listing.hits.take();
    let paths = || keys.iter().map(|&k| listing.path(k));
    let hits = match index {
        // Told every session listed, the index reads them all when they are
        // as many as it has, without matching each path to its own.
        Some(index) if whole => index.search_within(
            query,
            &listing
                .keys()
                .into_iter()
                .map(|k| listing.path(k))
                .collect::<Vec<_>>(),
        ),
        Some(index) => index.search_within(query, &paths().collect::<Vec<_>>()),
        // Found as the rows were read from the files (none when the query
        // looks at no bodies).
        None => Ok(found),
    };
    arbor_util::log::line("searched");
    match hits {
        Ok(hits) => {
            // Without words, nothing is fuzzy matched.
            let words = query.terms.iter().any(|t| t.word().is_some());
            let row = |i: usize| {
                let k = keys[i];
                let row = listing.row(k)?;
                let doc = if words {
                    row.search_doc()
                } else {
                    row.search_doc_short()
                };
                Some((doc, listing.path(k)))
            };
            let mut visit: Vec<usize> = (0..keys.len()).collect();
            visit.sort_unstable_by_key(|&i| listing.placement(keys[i]));
            let order = rank_order_visiting(query, keys.len(), Some(&visit), row, hits.as_ref());
            let keys = order.into_iter().map(|i| keys[i]).collect();
            (listing, keys)
        }
        Err(e) => {
            let files: Vec<SessionFile> = keys
                .iter()
                .filter_map(|&k| listing.row(k))
                .map(|r| SessionFile {
                    path: r.path().to_path_buf(),
                    agent: r.agent(),
                })
                .collect();
            let listing = Listing::of_rows(rank_by_files(query, &files, &e));
            let keys = listing.keys();
            (listing, keys)
        }
    }
}

/// The rows of `files` read whole and ranked by `query` against their
/// text, after the index failed (`e`, said).
fn rank_by_files(
    query: &Query,
    files: &[SessionFile],
    e: &arbor_index::IndexError,
) -> Vec<arbor_session::SessionInfo> {
    eprintln!(
        "arbor: index search failed ({}); reading the files",
        clean(&e.to_string())
    );
    let (mut full, _) = read_rows(files);
    sort_recent(&mut full);
    let paths: Vec<PathBuf> = full.iter().map(|r| r.path.to_path_buf()).collect();
    rank_with_index(query, full, file_hits(query, &paths).as_ref())
}

/// `arbor index --behind`: the build lock, at a lower priority, unless
/// another process holds it (`false`). A process that only looks at the
/// lock holds it for an instant: it is asked again a few times.
fn take_lock_behind(index: &mut Index) -> Result<bool> {
    arbor_index::behind::lower_priority();
    for _ in 0..10 {
        if index.take_build_lock(false)? {
            return Ok(true);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(false)
}

fn index_cmd(config: &StoreConfig, a: &super::IndexArgs, out: &mut impl Write) -> Result<()> {
    let mut index = Index::open_default().context("cannot open the index")?;
    if !a.files.is_empty() {
        for path in &a.files {
            let t = std::time::Instant::now();
            let row = index.update_file(&config.session_file(path))?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if a.json {
                let v = json!({
                    "path": path.to_string_lossy(),
                    "ms": ms,
                    "row": row.as_ref().map(|r| r.json_row()),
                });
                writeln!(out, "{}", json_text(&v))?;
            } else {
                match &row {
                    Some(r) => writeln!(
                        out,
                        "{}: {} messages, updated in {ms:.1} ms",
                        shown(path),
                        r.message_count
                    )?,
                    None => writeln!(
                        out,
                        "{}: not a session (or gone), updated in {ms:.1} ms",
                        shown(path)
                    )?,
                }
            }
        }
        return Ok(());
    }
    if a.behind && !take_lock_behind(&mut index)? {
        // Another process builds it: what this one would.
        return Ok(());
    }
    let mut update = None;
    if !a.stats {
        if !index.take_build_lock(false)? {
            match arbor_index::behind::builder(index.path()) {
                Some(pid) if pid > 0 => {
                    eprintln!("arbor: waiting for the index build in process {pid} to end…")
                }
                _ => eprintln!("arbor: waiting for another process's index build to end…"),
            }
            index.take_build_lock(true)?;
        }
        if a.rebuild {
            index.clear().context("cannot delete the index")?;
        }
        let (files, mut problems) = list_session_files(config, &Scope::All);
        let stats = index.refresh(&files, &mut |_| {})?;
        if let Some(e) = &stats.write_error {
            bail!("the index could not be updated: {e}");
        }
        problems.extend(stats.problems.iter().cloned());
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        for p in &problems {
            eprintln!("arbor: skipped {}: {}", shown(&p.path), clean(&p.reason));
        }
        update = Some(stats);
        // The size printed below is then the index's, not its log's too.
        index.settle().context("cannot settle the index's log")?;
    }
    let s = index.stats()?;
    // Another process's build (`--stats` does not wait for it).
    let building = match update {
        Some(_) => None,
        None => arbor_index::behind::builder(index.path()),
    };
    let ratio = if s.store_bytes > 0 {
        s.disk_bytes as f64 * 100.0 / s.store_bytes as f64
    } else {
        0.0
    };
    if a.json {
        let mut v = json!({
            "path": s.path.to_string_lossy(),
            "format": s.format,
            "sizeBytes": s.disk_bytes,
            "sessions": s.sessions,
            "notSessions": s.not_sessions,
            "storeBytes": s.store_bytes,
            "textBytes": s.text_bytes,
            "segments": s.segments,
            "lastUpdate": s.last_update,
            "building": building,
        });
        if let Some(u) = &update {
            v["update"] = json!({
                "files": u.files,
                "cached": u.cached,
                "appended": u.appended,
                "reparsed": u.reparsed,
                "removed": u.removed,
                "bytesParsed": u.bytes_parsed,
                "seconds": u.elapsed.as_secs_f64(),
            });
        }
        writeln!(out, "{}", json_text(&v))?;
        return Ok(());
    }
    if let Some(u) = &update {
        writeln!(
            out,
            "updated in {:.2} s: {} files, {} unchanged, {} appended, {} read in full, {} removed, {} parsed",
            u.elapsed.as_secs_f64(),
            u.files,
            u.cached,
            u.appended,
            u.reparsed,
            u.removed,
            arbor_util::human_bytes(u.bytes_parsed)
        )?;
    }
    writeln!(out, "index:     {}", shown(&s.path))?;
    writeln!(
        out,
        "size:      {} ({ratio:.1} % of the {} of session files)",
        arbor_util::human_bytes(s.disk_bytes),
        arbor_util::human_bytes(s.store_bytes)
    )?;
    writeln!(
        out,
        "sessions:  {} (+{} files that are not sessions)",
        s.sessions, s.not_sessions
    )?;
    writeln!(
        out,
        "text:      {} searchable",
        arbor_util::human_bytes(s.text_bytes)
    )?;
    writeln!(out, "segments:  {}", s.segments)?;
    writeln!(
        out,
        "updated:   {}",
        clean(s.last_update.as_deref().unwrap_or("never"))
    )?;
    writeln!(out, "format:    {}", clean(&s.format))?;
    if let Some(pid) = building {
        writeln!(out, "building:  now, in process {pid}")?;
    }
    Ok(())
}

/// The entry a write's argument names: a unique id prefix made whole, as
/// `diff` and `context --leaf` take them. An id found nowhere (or a file
/// that does not read) is handed on as given: the writer says why.
fn entry_arg(path: &Path, given: &str) -> Result<String> {
    let Ok((s, t)) = load(path) else {
        return Ok(given.to_string());
    };
    match t.resolve_id(given) {
        Ok(i) => Ok(s.entries[i].id.to_string()),
        Err(arbor_session::tree::EntryIdError::NotFound(_)) => Ok(given.to_string()),
        Err(e) => bail!("{}: {e}", shown(path)),
    }
}

/// Reads a session and its tree, never holding the file whole: entries
/// keep what the tree needs and read their lines from the file when a
/// row, a context or a comparison asks for them.
fn load(path: &Path) -> Result<(Session, SessionTree)> {
    let s = arbor_session::reader::read_session_lean(path)?;
    let t = SessionTree::build(&s);
    Ok((s, t))
}

fn show(config: &StoreConfig, a: &super::ShowArgs, out: &mut impl Write) -> Result<()> {
    let path = resolve(config, &a.session)?;
    let (s, t) = load(&path)?;
    if a.json {
        // A piece at a time: the text is never held whole.
        arbor_session::tree::write_json_pieces(&s, &t, |piece| match needs_c1_escape(piece) {
            true => out.write_all(&escape_c1(std::mem::take(piece))),
            false => out.write_all(piece),
        })?;
        out.write_all(b"\n")?;
        return Ok(());
    }
    let calls = &s.calls;
    let filter = Filter::from_name(&a.filter).unwrap_or_default();
    let pre = Preorder::new(&t);
    let bits = FilterBits::build(&s.entries, &t, &pre);
    let bits = bits.of(filter);
    let mut rows = Vec::new();
    flatten_pre(&mut rows, &mut Vec::new(), &pre, bits, &[]);
    let name = t
        .display_name()
        .map(|n| format!(" — {}", arbor_session::render::sanitize_line(n)));
    writeln!(out, "{}{}", clean(s.id()), name.unwrap_or_default())?;
    // Only rows on stdout (one per /tree row); notes go to stderr.
    // Each row reads its entry's line (neighbours in the file a block at
    // a time): on all cores, in order, a batch at a time (deep rows are
    // long: the whole output is never held).
    let positions: Vec<usize> = (0..rows.len()).collect();
    for batch in positions.chunks(8192) {
        let chunks: Vec<String> = batch
            .par_chunks(256)
            .map(|c| {
                let mut buf = String::new();
                let idx: Vec<usize> = c.iter().map(|&pos| rows[pos].entry()).collect();
                let mut pos = c.iter();
                s.for_each_parsed_at(&idx, |e| {
                    let Some(&pos) = pos.next() else {
                        return;
                    };
                    let line = row_line(&rows, pos, e, &t, calls, None);
                    buf.push_str(line.trim_end());
                    buf.push('\n');
                });
                buf
            })
            .collect();
        for c in chunks {
            out.write_all(c.as_bytes())?;
        }
    }
    if s.entries.is_empty() {
        eprintln!("(no entries in session)");
    } else if rows.is_empty() {
        eprintln!("(no entries found with the {} filter)", a.filter);
    }
    if s.needs_migration() {
        eprintln!("(version {} file, read as version 3)", s.file_version);
    }
    if let Some(what) = s.diagnostics.describe() {
        eprintln!("({what})");
    }
    Ok(())
}

fn context(config: &StoreConfig, a: &super::ContextArgs, out: &mut impl Write) -> Result<()> {
    let file = resolve_session(config, &a.session)?;
    let path = file.path;
    let flavor = match &a.flavor {
        Some(f) => f.parse::<ContextFlavor>().map_err(anyhow::Error::msg)?,
        None => file.agent.flavor(),
    };
    let (s, t) = load(&path)?;
    let leaf = match &a.leaf {
        Some(id) => Some(
            t.resolve_id(id)
                .map_err(|e| anyhow::anyhow!("{}: {e}", shown(&path)))?,
        ),
        None => None,
    };
    let ctx = build_context(&s, &t, leaf, flavor);
    if a.json {
        let mut v = ctx.to_json();
        // Which agent's rules built it (pi's for the pi store's sessions).
        v["flavor"] = flavor.name().into();
        writeln!(out, "{}", json_text(&v))?;
        return Ok(());
    }
    let model = ctx
        .model
        .as_ref()
        .map(|(p, m)| format!("{}/{}", plain(p), plain(m)))
        .unwrap_or_else(|| "(none)".into());
    writeln!(
        out,
        "leaf {} · model {} · thinking {} · {} · ~{} tokens",
        clean(ctx.leaf_id.as_deref().unwrap_or("(none)")),
        clean(&model),
        clean(&plain(&ctx.thinking_level)),
        match ctx.messages.len() {
            1 => "1 message".to_string(),
            n => format!("{n} messages"),
        },
        ctx.estimated_tokens()
    )?;
    for (i, m) in ctx.messages.iter().enumerate() {
        if Some(i) == ctx.boundary {
            writeln!(
                out,
                "──── compaction boundary ({}) ────",
                clean(&m.entry_id)
            )?;
        }
        writeln!(
            out,
            "[{}] {} ({})",
            i + 1,
            clean(&m.role),
            clean(&m.entry_id)
        )?;
        writeln!(out, "{}", arbor_session::render::sanitize_block(&m.text))?;
    }
    Ok(())
}

fn export(config: &StoreConfig, a: &super::ExportArgs, out: &mut impl Write) -> Result<()> {
    use arbor_session::export::{self, ExportFormat, ExportOptions};
    let format = match (&a.format, &a.out) {
        (Some(f), _) => f.parse::<ExportFormat>().map_err(anyhow::Error::msg)?,
        (None, Some(p)) => p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(ExportFormat::from_file_name)
            .unwrap_or_default(),
        (None, None) => ExportFormat::Markdown,
    };
    let path = resolve(config, &a.session)?;
    let opts = ExportOptions {
        thinking: a.thinking,
    };
    let doc = export::export_file(&path, a.leaf.as_deref(), format, opts)?;
    match &a.out {
        None => doc.write_to(out)?,
        Some(dest) => write_new_file(dest, &doc, a.force)?,
    }
    Ok(())
}

fn diff(config: &StoreConfig, a: &super::DiffArgs, out: &mut impl Write) -> Result<()> {
    use arbor_session::compare::{compare_at, layout};
    let path = resolve(config, &a.session)?;
    let (s, t) = load(&path)?;
    let entry = |id: &str| {
        t.resolve_id(id)
            .map_err(|e| anyhow::anyhow!("{}: {e}", shown(&path)))
    };
    let cmp = compare_at(&s, &t, entry(&a.entry_a)?, entry(&a.entry_b)?);
    if a.json {
        let v = serde_json::to_value(&cmp)?;
        writeln!(out, "{}", json_text(&v))?;
        return Ok(());
    }
    let width = a.width.unwrap_or_else(|| {
        if crate::term::stdout_is_tty() {
            crossterm::terminal::size().map_or(120, |(w, _)| usize::from(w))
        } else {
            120
        }
    });
    // The rows are sanitized by the layout.
    for row in layout(&cmp, width) {
        writeln!(out, "{}", row.plain(width))?;
    }
    Ok(())
}

/// Writes an export to `dest`, refusing to replace an existing file unless
/// `force`.
pub fn write_new_file(
    dest: &Path,
    doc: &arbor_session::export::Rendered,
    force: bool,
) -> Result<()> {
    use arbor_session::fileops::{write_new, NewFileError};
    match write_new(dest, force, |f| doc.write_to(f)) {
        Ok(()) => Ok(()),
        Err(NewFileError::Create(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
            "{} exists; nothing written (--force replaces it)",
            shown(dest)
        ),
        Err(NewFileError::Create(e)) => {
            Err(e).with_context(|| format!("cannot create {}", shown(dest)))
        }
        Err(NewFileError::Write(e)) => {
            Err(e).with_context(|| format!("cannot write {}", shown(dest)))
        }
    }
}

/// Rewrites DEL and C1 controls (raw in JSON strings) as `\u` escapes; they
/// can only occur inside strings, where the escape means the same.
fn escape_c1(buf: Vec<u8>) -> Vec<u8> {
    if !needs_c1_escape(&buf) {
        return buf;
    }
    let mut out = Vec::with_capacity(buf.len() + 16);
    let mut i = 0;
    while i < buf.len() {
        let b = buf[i];
        if b == 0x7f {
            out.extend_from_slice(b"\\u007f");
        } else if b == 0xc2 && buf.get(i + 1).is_some_and(|n| (0x80..=0x9f).contains(n)) {
            out.extend_from_slice(format!("\\u{:04x}", buf[i + 1]).as_bytes());
            i += 1;
        } else {
            out.push(b);
        }
        i += 1;
    }
    out
}

/// Whether `buf` holds DEL or a C1 control ([`escape_c1`] changes it).
fn needs_c1_escape(buf: &[u8]) -> bool {
    memchr::memchr(0x7f, buf).is_some()
        || memchr::memmem::find_iter(buf, b"\xc2")
            .any(|i| buf.get(i + 1).is_some_and(|b| (0x80..=0x9f).contains(b)))
}

/// JSON text safe to print on a terminal: DEL and C1 controls (which
/// serde_json leaves raw and some terminals obey) are written as escapes.
pub fn json_text(v: &Value) -> String {
    let s = v.to_string();
    if !s.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
