use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use serde_json::{json, Map, Value};

use super::{Cli, Command, GlobalOpts};
use crate::session::render::collect_tool_calls;
use crate::session::view::{flatten, row_line};
use crate::session::writer::{self, WriteError};
use crate::session::{build_context, read_session, ContextFlavor, Session, SessionTree};
use crate::store::listing::{filter_rows, read_rows, sort_recent};
use crate::store::paths::{absolute_cwd, Origin, ProcessEnv};
use crate::store::{list_session_files, resolve_session, Scope, StoreConfig};

pub fn store_config(g: &GlobalOpts) -> StoreConfig {
    StoreConfig::resolve(g.store.as_deref(), g.session_dir.as_deref(), &ProcessEnv)
}

/// Runs a subcommand; the caller prints the error and exits non-zero.
pub fn run(cli: Cli) -> Result<()> {
    if let Some(p) = &cli.global.log {
        crate::log::init(p).with_context(|| format!("cannot open the log file {}", p.display()))?;
    }
    let config = store_config(&cli.global);
    crate::log::line(format!(
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
        Some(Command::Show(a)) => show(&config, &a, &mut out),
        Some(Command::Context(a)) => context(&config, &a, &mut out),
        Some(Command::Tree(ref a)) => {
            drop(out);
            let path = resolve(&config, &a.session)?;
            let flavor = default_flavor(&config, &path);
            // Fail before the screen opens when the file is not a session.
            read_session(&path)?;
            let opts = crate::ui::runtime::PickerOptions {
                config: config.clone(),
                project_cwd: project_cwd(None)?,
                print_mode: cli.print,
                start_in_all: false,
                note: None,
                open_tree: Some((path, flavor)),
            };
            finish(crate::ui::runtime::run_picker(opts)?, &cli.resume_cmd)
        }
        Some(Command::Label(a)) => {
            let path = resolve(&config, &a.session)?;
            if !a.clear && a.text.as_deref().is_none_or(|t| t.trim().is_empty()) {
                bail!("give the label text, or --clear to remove the label");
            }
            let text = if a.clear { None } else { a.text.as_deref() };
            let w = with_migration(&path, a.write.migrate, || {
                writer::append_label(&path, &a.entry, text)
            })?;
            writeln!(out, "{}", w.id)?;
            Ok(())
        }
        Some(Command::Branch(a)) => {
            let path = resolve(&config, &a.session)?;
            let w = with_migration(&path, a.write.migrate, || {
                writer::append_branch(&path, &a.entry, &a.summary)
            })?;
            writeln!(out, "{}", w.id)?;
            Ok(())
        }
        Some(Command::Rename(a)) => {
            let path = resolve(&config, &a.session)?;
            let w = with_migration(&path, a.write.migrate, || {
                writer::append_session_name(&path, &a.name)
            })?;
            writeln!(out, "{}", w.id)?;
            Ok(())
        }
        Some(Command::Fork(a)) => {
            let path = resolve(&config, &a.session)?;
            let (dest, _id) = writer::fork(&path, &a.entry, a.out.as_deref())?;
            writeln!(out, "{}", dest.display())?;
            Ok(())
        }
    }
}

/// Opens the picker; on a machine with no sessions, on the bundled demo store.
fn picker(mut config: StoreConfig, cli: &Cli) -> Result<()> {
    let (files, _) = list_session_files(&config, &Scope::All);
    let mut note = None;
    let mut start_in_all = cli.all;
    if files.is_empty() {
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
        config = StoreConfig::single(&dest, crate::store::StoreKind::PerProject);
        start_in_all = true;
    }
    let opts = crate::ui::runtime::PickerOptions {
        config,
        project_cwd: project_cwd(None)?,
        print_mode: cli.print,
        start_in_all,
        note,
        open_tree: None,
    };
    finish(crate::ui::runtime::run_picker(opts)?, &cli.resume_cmd)
}

fn finish(outcome: crate::ui::Outcome, resume_cmd: &str) -> Result<()> {
    match outcome {
        crate::ui::Outcome::Quit => Ok(()),
        crate::ui::Outcome::Print(path) => {
            println!("{}", path.display());
            Ok(())
        }
        crate::ui::Outcome::Resume { path, cwd } => resume(resume_cmd, &path, &cwd),
    }
}

/// Runs the agent on a session in its cwd; prints the command when the
/// agent is not installed.
fn resume(template: &str, path: &Path, cwd: &str) -> Result<()> {
    let path_s = path.display().to_string();
    let mut words: Vec<String> = template.split_whitespace().map(str::to_string).collect();
    if words.is_empty() {
        bail!("the resume command is empty");
    }
    if words.iter().any(|w| w.contains("{path}")) {
        for w in &mut words {
            *w = w.replace("{path}", &path_s);
        }
    } else {
        words.push(path_s.clone());
    }
    let dir = Path::new(cwd);
    let shown = format!(
        "cd {} && {}",
        shell_quote(cwd),
        words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut cmd = std::process::Command::new(&words[0]);
    cmd.args(&words[1..]);
    if dir.is_dir() {
        cmd.current_dir(dir);
    }
    match cmd.status() {
        Ok(st) if st.success() => Ok(()),
        Ok(st) => bail!("{} exited with {st}", words[0]),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!(
                "{} is not installed here. To resume this session run:\n  {shown}",
                words[0]
            );
            Ok(())
        }
        Err(e) => Err(e).with_context(|| format!("cannot run {shown}")),
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn with_migration(
    path: &Path,
    migrate: bool,
    write: impl Fn() -> Result<writer::Written, WriteError>,
) -> Result<writer::Written> {
    match write() {
        Err(WriteError::NeedsMigration { version, .. }) if migrate => {
            let bak = writer::migrate_file(path)?;
            eprintln!(
                "arbor: rewrote {} from version {version} to version 3 (original kept as {})",
                path.display(),
                bak.display()
            );
            Ok(write()?)
        }
        Err(WriteError::NeedsMigration { version, .. }) => bail!(
            "{} is a version {version} session; writing needs a one-time rewrite to version 3. \
             Run again with --migrate to allow it (the original is kept as .bak)",
            path.display()
        ),
        other => Ok(other?),
    }
}

pub fn resolve(config: &StoreConfig, arg: &str) -> Result<PathBuf> {
    Ok(resolve_session(config, arg)?)
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
    _g: &GlobalOpts,
    a: &super::ListArgs,
    out: &mut impl Write,
) -> Result<()> {
    let scope = if a.all {
        Scope::All
    } else {
        Scope::Project(project_cwd(a.cwd.as_deref())?)
    };
    let (files, mut problems) = list_session_files(config, &scope);
    let (mut rows, p2) = read_rows(&files);
    problems.extend(p2);
    filter_rows(&mut rows, &scope, a.include_internal);
    sort_recent(&mut rows);
    if let Some(q) = &a.query {
        let query = crate::search::Query::parse(q);
        if let Some(err) = query.error() {
            bail!("invalid query: {err}");
        }
        rows = crate::search::rank(&query, rows);
    }
    let now = chrono::Utc::now().timestamp_millis();
    for r in &rows {
        if a.json {
            writeln!(out, "{}", json_text(&r.to_json()))?;
        } else {
            let title = crate::session::render::sanitize_line(r.title());
            let title: String = title.chars().take(70).collect();
            writeln!(
                out,
                "{:<70}  {:>5}  {:>4}  {}",
                title,
                r.message_count,
                crate::util::age(now, r.modified_ms),
                r.id
            )?;
        }
    }
    for p in problems {
        eprintln!("arbor: skipped {}: {}", p.path.display(), p.reason);
    }
    Ok(())
}

fn load(path: &Path) -> Result<(Session, SessionTree)> {
    let s = read_session(path)?;
    let t = SessionTree::build(&s);
    Ok((s, t))
}

fn show(config: &StoreConfig, a: &super::ShowArgs, out: &mut impl Write) -> Result<()> {
    let path = resolve(config, &a.session)?;
    let (s, t) = load(&path)?;
    if a.json {
        let mut labels = Map::new();
        for e in &s.entries {
            if let Some(l) = t.labels.get(&e.id) {
                labels.insert(e.id.clone(), l.text.clone().into());
            }
        }
        let entries: Vec<Value> = s
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut m = Map::new();
                m.insert("id".into(), e.id.clone().into());
                m.insert(
                    "parentId".into(),
                    e.parent_id.clone().map(Value::from).unwrap_or(Value::Null),
                );
                m.insert("type".into(), e.entry_type().into());
                if let Some(r) = e.role() {
                    m.insert("role".into(), r.into());
                }
                if let Some(l) = t.labels.get(&e.id) {
                    m.insert("label".into(), l.text.clone().into());
                }
                m.insert("depth".into(), t.depth[i].into());
                m.insert("onActivePath".into(), t.on_active_path[i].into());
                Value::Object(m)
            })
            .collect();
        let v = json!({
            "id": s.id(),
            "leafId": t.leaf.map(|l| s.entries[l].id.clone()),
            "name": t.display_name(),
            "labels": labels,
            "entries": entries,
        });
        writeln!(out, "{}", json_text(&v))?;
        return Ok(());
    }
    let calls = collect_tool_calls(&s.entries);
    let rows = flatten(&s.entries, &t, &|_| true, &Default::default());
    let name = t
        .display_name()
        .map(|n| format!(" — {}", crate::session::render::sanitize_line(n)));
    writeln!(out, "{}{}", s.id(), name.unwrap_or_default())?;
    for r in &rows {
        writeln!(
            out,
            "{}",
            row_line(r, &s.entries[r.entry], &t, &calls, None)
        )?;
    }
    if s.needs_migration() {
        writeln!(out, "(version {} file, read as version 3)", s.file_version)?;
    }
    if !s.diagnostics.is_clean() {
        writeln!(
            out,
            "({} unreadable lines skipped{})",
            s.diagnostics.skipped(),
            if s.diagnostics.partial_tail {
                ", last line incomplete"
            } else {
                ""
            }
        )?;
    }
    Ok(())
}

/// The flavour a session is read with: pi for the legacy pi store.
pub fn default_flavor(config: &StoreConfig, path: &Path) -> ContextFlavor {
    let in_pi = config
        .roots
        .iter()
        .any(|r| r.origin == Origin::Pi && path.starts_with(&r.path));
    if in_pi {
        ContextFlavor::Pi
    } else {
        ContextFlavor::Atomic
    }
}

fn context(config: &StoreConfig, a: &super::ContextArgs, out: &mut impl Write) -> Result<()> {
    let path = resolve(config, &a.session)?;
    let flavor = match &a.flavor {
        Some(f) => f.parse::<ContextFlavor>().map_err(anyhow::Error::msg)?,
        None => default_flavor(config, &path),
    };
    let (s, t) = load(&path)?;
    let leaf = match &a.leaf {
        Some(id) => Some(
            t.index_of(id)
                .with_context(|| format!("no entry {id} in {}", path.display()))?,
        ),
        None => None,
    };
    let ctx = build_context(&s, &t, leaf, flavor);
    if a.json {
        writeln!(out, "{}", json_text(&ctx.to_json()))?;
        return Ok(());
    }
    let model = ctx
        .model
        .as_ref()
        .map(|(p, m)| format!("{}/{}", plain(p), plain(m)))
        .unwrap_or_else(|| "(none)".into());
    writeln!(
        out,
        "leaf {} · model {} · thinking {} · {} messages · ~{} tokens",
        ctx.leaf_id.as_deref().unwrap_or("(none)"),
        model,
        plain(&ctx.thinking_level),
        ctx.messages.len(),
        ctx.estimated_tokens()
    )?;
    for (i, m) in ctx.messages.iter().enumerate() {
        if Some(i) == ctx.boundary {
            writeln!(out, "──── compaction boundary ({}) ────", m.entry_id)?;
        }
        writeln!(out, "[{}] {} ({})", i + 1, m.role, m.entry_id)?;
        writeln!(out, "{}", crate::session::render::sanitize_block(&m.text))?;
    }
    Ok(())
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
