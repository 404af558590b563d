//! `arbor labels` and `arbor stats`: reports over every session of a scope,
//! from the rows the index keeps (labels and usage are stored with them),
//! or from the files with `--no-index` (the same scanner, the same answer).

use std::collections::{HashMap, HashSet};
use std::io::Write;

use anyhow::{bail, Result};
use serde_json::json;

use super::columns::{agent_cell, AGENT_W};
use super::commands::{json_text, project_cwd};
use super::{GlobalOpts, LabelsArgs, StatsArgs};
use crate::app::load::{gather, load_listing, LoadEvent};
use crate::term::{path as shown, sanitize_line as clean};
use crate::ui::text::width;
use arbor_session::entry::parse_iso_ms;
use arbor_session::extras::{label_rows, UsageBucket, HOUR_MS};
use arbor_session::info::SessionInfo;
use arbor_store::listing::{filter_rows, sort_by_path};
use arbor_store::{ScanProblem, Scope, StoreConfig};

pub(super) fn scope_of(all: bool, cwd: Option<&std::path::Path>) -> Result<Scope> {
    Ok(if all {
        Scope::All
    } else {
        Scope::Project(project_cwd(cwd)?)
    })
}

/// Which of the rows [`rows_of`] gives.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Rows {
    All,
    /// Those with labels (all that `arbor labels` shows): the others are
    /// not held.
    Labelled,
}

/// The rows of `scope`, through the index unless `--no-index`; sorted by
/// path, so that sums are added in one order whichever way they were read.
pub(super) fn rows_of(
    config: &StoreConfig,
    g: &GlobalOpts,
    scope: &Scope,
    which: Rows,
) -> Vec<SessionInfo> {
    let index = super::behind::open_index(g).map(|index| {
        index.map(|mut i| {
            // Labels come either way; usage is for `arbor stats`.
            i.set_extras(which == Rows::All);
            i.set_labelled_only(which == Rows::Labelled);
            i
        })
    });
    let mut rows = Vec::new();
    let mut problems: Vec<ScanProblem> = Vec::new();
    load_listing(config, scope, index, &mut |ev| match ev {
        LoadEvent::Rows(mut r) => {
            if which == Rows::Labelled {
                // Rows read from their files come all.
                r.retain(|r| !r.labels.is_empty());
            }
            gather(&mut rows, r)
        }
        LoadEvent::Finished { problems: p } => problems.extend(p),
        LoadEvent::Warning(w) => super::behind::warn(g, &w),
        _ => {}
    });
    problems.sort_by(|a, b| a.path.cmp(&b.path));
    for p in problems {
        eprintln!("arbor: skipped {}: {}", shown(&p.path), clean(&p.reason));
    }
    sort_by_path(&mut rows);
    rows
}

// ------------------------------------------------------------------ labels

pub fn labels(
    config: &StoreConfig,
    g: &GlobalOpts,
    a: &LabelsArgs,
    out: &mut impl Write,
) -> Result<()> {
    let scope = scope_of(a.all, a.cwd.as_deref())?;
    // A folder's rows are few, and tell whether it has sessions at all (the
    // hint below); every folder's are many, and only the labelled matter.
    let which = match scope {
        Scope::All => Rows::Labelled,
        Scope::Project(_) => Rows::All,
    };
    let mut rows = rows_of(config, g, &scope, which);
    // As the list and the picker: internal workflow sessions are not shown.
    filter_rows(&mut rows, &scope, false);
    if rows.is_empty() {
        super::commands::no_sessions_hint(&scope, "lists every folder's labels");
    }
    let found = label_rows(&rows);
    if a.json {
        for l in &found {
            let v = json!({
                "path": l.path.to_string_lossy(),
                "sessionId": l.session_id,
                "entryId": l.entry_id,
                "label": l.label,
                "labelTime": l.time,
                "text": l.text,
                "host": arbor_util::hosts::host_of(&l.path).as_deref(),
            });
            writeln!(out, "{}", json_text(&v))?;
        }
        return Ok(());
    }
    if found.is_empty() {
        writeln!(out, "(no labels)")?;
        return Ok(());
    }
    let label_w = found
        .iter()
        .map(|l| width(&clean(&l.label)))
        .max()
        .unwrap_or(0)
        .clamp(5, 24);
    // The text takes what the other columns leave of a known width.
    let host_w = super::columns::host_width(config);
    let text_w = match super::columns::output_width() {
        Some(w) => super::columns::slack(w, 16 + label_w + 8 + 8 + AGENT_W + 5 * 2 + host_w, 10),
        None => 80,
    };
    let host_head = match host_w {
        0 => String::new(),
        w => format!("{:<w$}", "HOST"),
    };
    writeln!(
        out,
        "{:<16}  {:<label_w$}  {:<8}  {:<8}  {:<AGENT_W$}  {host_head}TEXT",
        "TIME (UTC)", "LABEL", "SESSION", "ENTRY", "AGENT"
    )?;
    for l in &found {
        let time = l
            .time
            .as_deref()
            .map(|t| match parse_iso_ms(t) {
                Some(_) => format!("{} {}", &t[..10], &t[11..16]),
                None => t.to_string(),
            })
            .unwrap_or_default();
        let line = format!(
            "{:<16}  {}  {:<8}  {:<8}  {:<AGENT_W$}  {}{}",
            cut(&clean(&time), 16),
            pad(&cut(&clean(&l.label), label_w), label_w),
            // A prefix, as `arbor tree` and the others take it.
            clean(&l.session_id).chars().take(8).collect::<String>(),
            cut(&clean(&l.entry_id), 8),
            agent_cell(l.agent),
            super::columns::host_cell(arbor_util::hosts::host_of(&l.path).as_deref(), host_w),
            cut(&clean(&l.text), text_w),
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// At most `max` terminal cells (the last one `…` when cut): session text
/// may be wide (CJK, emoji), and the columns are measured in cells.
fn cut(s: &str, max: usize) -> String {
    crate::ui::text::truncate(s, max)
}

/// `s` followed by spaces up to `cells` terminal cells (`{:<N}` counts
/// characters, so a wide character would push the columns after it).
pub fn pad(s: &str, cells: usize) -> String {
    let mut t = s.to_string();
    t.extend(std::iter::repeat_n(' ', cells.saturating_sub(width(s))));
    t
}

// ------------------------------------------------------------------- stats

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum By {
    Project,
    Model,
    Day,
    Week,
    Month,
}

impl By {
    fn parse(s: &str) -> Result<By> {
        Ok(match s {
            "project" => By::Project,
            "model" => By::Model,
            "day" => By::Day,
            "week" => By::Week,
            "month" => By::Month,
            other => bail!("--by {other:?}: give project, model, day, week or month"),
        })
    }

    fn name(self) -> &'static str {
        match self {
            By::Project => "project",
            By::Model => "model",
            By::Day => "day",
            By::Week => "week",
            By::Month => "month",
        }
    }

    /// Groups ordered by time are shown in time order, the others by cost.
    fn by_time(self) -> bool {
        matches!(self, By::Day | By::Week | By::Month)
    }
}

/// The start of `--since` (or `--older-than`: `flag`, named in the
/// error), in ms since the epoch: an age before `now_ms` (`12h`, `2d`,
/// `1w`, `3mo`, `1y`), a date (UTC midnight) or an RFC 3339 time.
pub fn parse_since(flag: &str, s: &str, now_ms: i64) -> Result<i64> {
    let s = s.trim();
    if let Some(ms) = parse_iso_ms(s) {
        return Ok(ms);
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        if let Some(t) = d.and_hms_opt(0, 0, 0) {
            return Ok(t.and_utc().timestamp_millis());
        }
    }
    let digits = s.chars().take_while(|c| c.is_ascii_digit()).count();
    let (n, unit) = s.split_at(digits);
    let n: i64 = n.parse().map_err(|_| since_error(flag, s))?;
    let now =
        chrono::DateTime::from_timestamp_millis(now_ms).ok_or_else(|| since_error(flag, s))?;
    let months = |m: i64| {
        u32::try_from(m)
            .ok()
            .and_then(|m| now.checked_sub_months(chrono::Months::new(m)))
            .map(|t| t.timestamp_millis())
            .ok_or_else(|| since_error(flag, s))
    };
    let hours = |h: i64| {
        h.checked_mul(HOUR_MS)
            .and_then(|d| now_ms.checked_sub(d))
            .ok_or_else(|| since_error(flag, s))
    };
    match unit {
        "h" => hours(n),
        "d" => hours(n.saturating_mul(24)),
        "w" => hours(n.saturating_mul(24 * 7)),
        "mo" => months(n),
        "y" => months(n.saturating_mul(12)),
        _ => Err(since_error(flag, s)),
    }
}

fn since_error(flag: &str, s: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{flag} {:?}: give an age (12h, 2d, 1w, 3mo, 1y) or a date (2026-11-01)",
        clean(s)
    )
}

#[derive(Debug, Default, Clone)]
struct Acc {
    sessions: u64,
    /// The row last counted in `sessions` (plus one; 0: none).
    last_row: usize,
    messages: u64,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    cost: f64,
}

impl Acc {
    fn add(&mut self, row: usize, b: &UsageBucket) {
        if self.last_row != row + 1 {
            self.sessions += 1;
            self.last_row = row + 1;
        }
        self.messages += b.messages;
        self.input += b.input;
        self.output += b.output;
        self.cache_read += b.cache_read;
        self.cache_write += b.cache_write;
        self.cost += b.cost;
    }
}

fn group_of(by: By, r: &SessionInfo, b: &UsageBucket) -> String {
    let date = || {
        chrono::DateTime::from_timestamp_millis(b.hour.saturating_mul(HOUR_MS))
            .map(|d| d.date_naive())
            .unwrap_or_default()
    };
    match by {
        By::Project => r.cwd.clone(),
        By::Model => match r.usage.model(b) {
            "" => "(unknown)".to_string(),
            m => m.to_string(),
        },
        By::Day => date().format("%Y-%m-%d").to_string(),
        By::Week => {
            use chrono::Datelike;
            let w = date().iso_week();
            format!("{}-W{:02}", w.year(), w.week())
        }
        By::Month => date().format("%Y-%m").to_string(),
    }
}

/// A group of `stats`: the host its sessions are on (`None`: this
/// machine), and the group's name.
type GroupKey = (Option<std::sync::Arc<str>>, String);

fn key_of(by: By, r: &SessionInfo, b: &UsageBucket) -> GroupKey {
    (arbor_util::hosts::host_of(&r.path), group_of(by, r, b))
}

/// The figures of `rows` per group of `by` (and host), and their total,
/// from `since`.
fn sum_groups(rows: &[SessionInfo], by: By, since: Option<i64>) -> (HashMap<GroupKey, Acc>, Acc) {
    let mut groups: HashMap<GroupKey, Acc> = HashMap::new();
    let mut total = Acc::default();
    // Each reply once (docs/cli.md, "Labels and usage"): a fork's copies of its parent's
    // replies count only when the parent is not counted here itself.
    let counted: HashSet<&std::path::Path> = rows.iter().map(|r| &*r.path).collect();
    let parent_counted = |r: &SessionInfo| {
        r.parent_session_path
            .as_deref()
            .is_some_and(|p| counted.contains(std::path::Path::new(p)))
    };
    for (ri, r) in rows.iter().enumerate() {
        let skip_copied = parent_counted(r);
        for b in &r.usage.buckets {
            if b.copied && skip_copied {
                continue;
            }
            // A bucket counts when its hour ends after `since`.
            if since.is_some_and(|s| (b.hour + 1).saturating_mul(HOUR_MS) <= s) {
                continue;
            }
            groups.entry(key_of(by, r, b)).or_default().add(ri, b);
            total.add(ri, b);
        }
    }
    (groups, total)
}

pub fn stats(
    config: &StoreConfig,
    g: &GlobalOpts,
    a: &StatsArgs,
    out: &mut impl Write,
) -> Result<()> {
    let by = By::parse(&a.by)?;
    let since = match &a.since {
        Some(s) => Some(parse_since(
            "--since",
            s,
            chrono::Utc::now().timestamp_millis(),
        )?),
        None => None,
    };
    let scope = scope_of(a.all, a.cwd.as_deref())?;
    let mut rows = rows_of(config, g, &scope, Rows::All);
    // Money spent: internal workflow sessions count too.
    filter_rows(&mut rows, &scope, true);
    if rows.is_empty() {
        super::commands::no_sessions_hint(&scope, "counts every folder's");
    }
    let (groups, total) = sum_groups(&rows, by, since);
    let mut groups: Vec<(GroupKey, Acc)> = groups.into_iter().collect();
    if by.by_time() {
        groups.sort_by(|a, b| a.0.cmp(&b.0));
    } else {
        groups.sort_by(|a, b| b.1.cost.total_cmp(&a.1.cost).then_with(|| a.0.cmp(&b.0)));
    }
    if a.json {
        // A group's sessions are on one host (`null`: this machine); the
        // total is every host's, and names none.
        let line = |group: &str, host: Option<Option<&str>>, s: &Acc| {
            let mut v = serde_json::Map::new();
            v.insert("group".into(), group.into());
            if let Some(h) = host {
                v.insert("host".into(), h.into());
            }
            let figures = json!({
                "sessions": s.sessions,
                "messages": s.messages,
                "input": s.input,
                "output": s.output,
                "cacheRead": s.cache_read,
                "cacheWrite": s.cache_write,
                "cost": s.cost,
            });
            if let serde_json::Value::Object(f) = figures {
                v.extend(f);
            }
            serde_json::Value::Object(v)
        };
        for ((host, k), s) in &groups {
            writeln!(out, "{}", json_text(&line(k, Some(host.as_deref()), s)))?;
        }
        let v = line("total", None, &total);
        writeln!(out, "{}", json_text(&v))?;
        return Ok(());
    }
    let agents = group_agents(by, &rows, since);
    let hosts = config.has_remotes();
    write_table(by.name(), hosts, &groups, &total, &agents, out)
}

/// The plain table of `stats`: a row per group, a rule, the total. Fitted
/// to a known width: the group column takes the slack (a path cut from
/// the left, its end says the most), and when even its least does not
/// fit, figures are written short (`5.8M`) under short headings.
fn write_table(
    by: &str,
    hosts: bool,
    groups: &[(GroupKey, Acc)],
    total: &Acc,
    agents: &HashMap<GroupKey, u8>,
    out: &mut impl Write,
) -> Result<()> {
    let fit = super::columns::output_width();
    let all_agents = agents.values().fold(0, |m, a| m | a);
    // Where the figures start: after the group, the agent and, with
    // remotes configured, the host.
    let first_figure = if hosts { 3 } else { 2 };
    let build = |short: bool| {
        let mut head: Vec<&str> = vec![by, "agent"];
        if hosts {
            head.push("host");
        }
        head.extend(match short {
            false => [
                "sessions",
                "messages",
                "input",
                "output",
                "cache read",
                "cache write",
                "cost",
            ],
            true => [
                "sess", "msgs", "input", "output", "cache r", "cache w", "cost",
            ],
        });
        let n = |v: u64| if short { compact(v) } else { thousands(v) };
        let cells = |k: &str, host: Option<&str>, s: &Acc, agents: u8| -> Vec<String> {
            let mut row = vec![clean(k), agent_list(agents, short)];
            if hosts {
                row.push(host.unwrap_or_default().to_string());
            }
            row.extend([
                n(s.sessions),
                n(s.messages),
                n(s.input),
                n(s.output),
                n(s.cache_read),
                n(s.cache_write),
                format!("${:.2}", s.cost),
            ]);
            row
        };
        let mut table: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
        table.extend(groups.iter().map(|(k, s)| {
            let host = k.0.as_deref().unwrap_or(arbor_util::hosts::LOCAL);
            cells(&k.1, Some(host), s, agents.get(k).copied().unwrap_or(0))
        }));
        table.push(cells("total", None, total, all_agents));
        let mut w = vec![0usize; head.len()];
        for row in &table {
            for (c, cell) in row.iter().enumerate() {
                w[c] = w[c].max(width(cell));
            }
        }
        (table, w)
    };
    const MIN_GROUP: usize = 12;
    let others = |w: &[usize]| w[1..].iter().sum::<usize>() + 2 * (w.len() - 1);
    let (mut table, mut w) = build(false);
    if fit.is_some_and(|total| others(&w) + MIN_GROUP > total) {
        (table, w) = build(true);
    }
    w[0] = w[0].min(match fit {
        Some(total) => super::columns::slack(total, others(&w), MIN_GROUP),
        None => 48,
    });
    for (i, row) in table.iter().enumerate() {
        if i + 1 == table.len() {
            let rule: usize = w.iter().sum::<usize>() + 2 * (w.len() - 1);
            writeln!(out, "{}", "─".repeat(rule))?;
        }
        let mut line = pad(&left_cut(&row[0], w[0]), w[0]);
        for c in 1..first_figure {
            line.push_str(&format!("  {}", pad(&row[c], w[c])));
        }
        for c in first_figure..row.len() {
            line.push_str(&format!("  {:>width$}", row[c], width = w[c]));
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// `5752041` → `5.8M`: a figure in at most 6 cells.
fn compact(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1_000_000_000, "B"), (1_000_000, "M"), (1_000, "k")];
    for (size, unit) in UNITS {
        if n >= size {
            let v = n as f64 / size as f64;
            return if v >= 100.0 {
                format!("{v:.0}{unit}")
            } else {
                format!("{v:.1}{unit}")
            };
        }
    }
    n.to_string()
}

/// The agents of the sessions counted in each group (as a bit set of
/// `Agent as u8`), counted as `stats` counts: the buckets ending after
/// `since`.
fn group_agents(by: By, rows: &[SessionInfo], since: Option<i64>) -> HashMap<GroupKey, u8> {
    let mut agents: HashMap<GroupKey, u8> = HashMap::new();
    for r in rows {
        for b in &r.usage.buckets {
            if since.is_some_and(|s| (b.hour + 1).saturating_mul(HOUR_MS) <= s) {
                continue;
            }
            *agents.entry(key_of(by, r, b)).or_default() |= 1 << (r.agent as u8);
        }
    }
    agents
}

/// A group's agents, in the order `--agent` names them: `Atomic,Claude`,
/// or `short`, the first and how many more: `Atomic+1`.
fn agent_list(set: u8, short: bool) -> String {
    use arbor_session::Agent;
    let names: Vec<&str> = [Agent::Atomic, Agent::Pi, Agent::Claude, Agent::Codex]
        .into_iter()
        .filter(|&a| set & (1 << (a as u8)) != 0)
        .map(agent_cell)
        .collect();
    match (short, names.as_slice()) {
        (true, [first, more @ ..]) if !more.is_empty() => format!("{first}+{}", more.len()),
        _ => names.join(","),
    }
}

fn left_cut(s: &str, max: usize) -> String {
    crate::ui::text::truncate_left(s, max)
}

/// `1234567` → `1,234,567`.
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_session::entry::format_iso_ms;

    #[test]
    fn since_forms() {
        // 2026-11-29T12:00:00Z
        let now = 1_795_953_600_000;
        assert_eq!(
            parse_since("--since", "2d", now).unwrap(),
            now - 48 * HOUR_MS
        );
        assert_eq!(
            parse_since("--since", "12h", now).unwrap(),
            now - 12 * HOUR_MS
        );
        assert_eq!(
            parse_since("--since", "1w", now).unwrap(),
            now - 168 * HOUR_MS
        );
        assert_eq!(
            format_iso_ms(parse_since("--since", "3mo", now).unwrap()),
            "2026-08-29T12:00:00.000Z"
        );
        assert_eq!(
            format_iso_ms(parse_since("--since", "2026-11-01", now).unwrap()),
            "2026-11-01T00:00:00.000Z"
        );
        assert_eq!(
            format_iso_ms(parse_since("--since", "2026-11-01T08:30:00+01:00", now).unwrap()),
            "2026-11-01T07:30:00.000Z"
        );
        for bad in ["", "d", "2x", "-1d", "yesterday", "99999999999999999999d"] {
            assert!(parse_since("--since", bad, now).is_err(), "{bad}");
        }
    }

    #[test]
    fn thousands_and_cuts() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(left_cut("/home/u/projects/x", 8), "…jects/x");
        assert_eq!(cut("abcdef", 4), "abc…");
        // Wide characters count two cells each.
        assert_eq!(left_cut("/ml/数据管道", 6), "…管道");
        assert_eq!(cut("数据管道", 5), "数据…");
        assert_eq!(pad("数据", 6), "数据  ");
        assert_eq!(pad("abc", 2), "abc");
    }
}
