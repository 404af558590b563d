//! The command line: `arbor [list|show|context|export|diff|labels|stats|trash|restore|label|branch|fork|rename|index|completions|man]`.

mod behind;
mod bulk;
mod columns;
mod commands;
mod error_line;
mod report;
pub mod resume;
pub mod resume_remote;
mod search;
mod shell;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use commands::run;
pub use error_line::error_line;
pub use search::NoMatch;

#[derive(Debug, Parser)]
#[command(
    name = "arbor",
    version,
    about = "A fast terminal browser for Atomic, pi, Claude Code and Codex sessions",
    long_about = "arbor browses the JSONL session files of the Atomic coding agent (and of the pi agent,\n\
                  Claude Code and Codex).\n\
                  With no command it opens the session picker; the commands below script the same model."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalOpts,
    /// Picker: Enter prints the chosen session's path on stdout and exits
    /// (the screen is drawn on the terminal itself): atomic --session "$(arbor --print)"
    #[arg(long)]
    pub print: bool,
    /// Picker: the command Enter runs, in the session's cwd, split like shell
    /// words (never run through a shell); `{path}`, `{id}` and `{cwd}` are
    /// replaced by the session's (the path is appended when none is used).
    /// Default: the session's agent's own, `atomic --session {path}`,
    /// `pi --session {path}`, `claude --resume={id}` or `codex resume -- {id}`.
    /// Session data never begins an argument with `-`, and a Claude Code or
    /// Codex id must be a UUID: such a session is not resumed.
    /// `AGENT=CMD` (repeatable) sets the command of one agent's sessions:
    /// --resume-cmd 'claude=claude --resume={id} --verbose'
    #[arg(long, env = "ARBOR_RESUME_CMD", value_name = "CMD")]
    pub resume_cmd: Vec<String>,
    /// Picker: start with all projects instead of the current folder
    #[arg(long)]
    pub all: bool,
    /// Resume the newest session of the current folder without the picker
    /// (with --print: print its path)
    #[arg(long, conflicts_with = "query")]
    pub last: bool,
    /// Open the picker with this query typed (`arbor fix parser`). A
    /// command's name is the command: `arbor -- list` searches for "list"
    #[arg(value_name = "QUERY")]
    pub query: Vec<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct GlobalOpts {
    /// A store root laid out like `<agent dir>/sessions` (one folder per project)
    #[arg(long, global = true, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Atomic's flat custom session dir (all projects in one folder)
    #[arg(long, global = true, value_name = "DIR")]
    pub session_dir: Option<PathBuf>,
    /// Do not use the persistent index (read every file)
    #[arg(long, global = true)]
    pub no_index: bool,
    /// Write a debug log to FILE
    #[arg(long, global = true, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Only this agent's sessions: atomic, pi, claude or codex (repeatable).
    /// With --store or --session-dir and one agent, that folder is read as
    /// that agent's store
    #[arg(long = "agent", global = true, value_name = "AGENT", value_parser = parse_agent)]
    pub agents: Vec<arbor_session::Agent>,
    /// Only the sessions of this remote, by its name in the settings, or
    /// of this machine: `local` (repeatable); see docs/remotes.md
    #[arg(long = "host", global = true, value_name = "NAME")]
    pub hosts: Vec<String>,
    /// arbor's settings file (default: $ARBOR_CONFIG, else
    /// $XDG_CONFIG_HOME/arbor/config.toml); see `arbor config`
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The colour theme: an Atomic theme (dark, light, catppuccin-*, or
    /// <agent dir>/themes/NAME.json) or ansi; beats the settings files
    #[arg(long, global = true, value_name = "NAME")]
    pub theme: Option<String>,
}

fn parse_agent(s: &str) -> Result<arbor_session::Agent, String> {
    arbor_session::Agent::from_name(s)
        .ok_or_else(|| format!("unknown agent \"{s}\" (atomic, pi, claude or codex)"))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List sessions, most recently modified first
    List(ListArgs),
    /// The entries that match a query, best first (exit status 1 when none)
    Search(SearchArgs),
    /// Print a session's tree (the /tree rows) or its JSON structure
    Show(ShowArgs),
    /// Print what the model sees when the session resumes at a leaf
    Context(ContextArgs),
    /// Open a session's branch tree (the /tree screen) directly
    Tree(TreeArgs),
    /// Write a branch of a session as Markdown, HTML or JSON Lines
    Export(ExportArgs),
    /// Compare the branches ending at two entries, turn by turn
    Diff(DiffArgs),
    /// Every labelled entry, newest label first
    Labels(LabelsArgs),
    /// Sessions, messages, tokens and cost of the assistant's messages
    Stats(StatsArgs),
    /// Move sessions to the system trash (never deletes one for good)
    Trash(TrashArgs),
    /// Bring sessions back from the trash: the last batch arbor moved, or those named
    Restore(RestoreArgs),
    /// Set or clear the label of an entry (appends a `label` line)
    Label(LabelArgs),
    /// Move the leaf to an entry (appends a `branch_summary` line)
    Branch(BranchArgs),
    /// Copy root → entry into a new session file
    Fork(ForkArgs),
    /// Rename a session (appends a `session_info` line)
    Rename(RenameArgs),
    /// Update the persistent index of the store, or show its figures
    Index(IndexArgs),
    /// The settings in force, each with where it came from (default, file, flag)
    Config(ConfigArgs),
    /// The keys in force on each screen, and where each came from
    /// (arbor's defaults or the user's keybindings.json)
    Keys(KeysArgs),
    /// Other machines' sessions: add, list, remove and sync remotes (docs/remotes.md)
    Remote(commands::remote::RemoteArgs),
    /// Print the completion script for a shell (bash, zsh, fish, powershell, elvish)
    Completions(CompletionsArgs),
    /// Print arbor's manual page (roff: `arbor man | man -l -`), or write every command's page
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish
    #[arg(value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write `arbor.1` and one page per command (`arbor-list.1`, …) into DIR
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct KeysArgs {
    /// Print the table as one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {}

#[derive(Debug, Args)]
pub struct IndexArgs {
    /// Delete the index and build it again from the session files
    #[arg(long, conflicts_with = "stats")]
    pub rebuild: bool,
    /// Only show the index's figures (size, sessions, last update); do not update it
    #[arg(long)]
    pub stats: bool,
    /// Re-read only these session files (their appended bytes when they
    /// just grew), as the picker's file watcher does
    #[arg(long = "file", value_name = "PATH", conflicts_with_all = ["rebuild", "stats"])]
    pub files: Vec<PathBuf>,
    /// Print the figures as one JSON object
    #[arg(long)]
    pub json: bool,
    /// Build behind a command's answer: quietly, at a lower priority, and
    /// not at all when another process is building the index
    #[arg(long, hide = true, conflicts_with_all = ["rebuild", "stats"])]
    pub behind: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// All projects instead of the current one
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// The project directory (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Also list internal workflow sessions
    #[arg(long)]
    pub include_internal: bool,
    /// JSON Lines output
    #[arg(long)]
    pub json: bool,
    /// Apply the picker's search (words, "phrase", re:regex) and rank by relevance
    #[arg(long, value_name = "Q")]
    pub query: Option<String>,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query: words, "phrases", re:regexes, filters and in: scopes,
    /// as in the picker
    #[arg(required = true, num_args = 1.., value_name = "QUERY")]
    pub query: Vec<String>,
    /// All projects instead of the current one
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// The project directory (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// JSON Lines: path, sessionId, entryId, role, timestamp, snippet
    /// (and part, match)
    #[arg(long)]
    pub json: bool,
    /// At most N entries (0: all)
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub limit: usize,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A session file path, id or unique id prefix
    pub session: String,
    /// One JSON object instead of the tree text
    #[arg(long)]
    pub json: bool,
    /// Which entries the rows show, as the tree screen's filters
    #[arg(long, value_name = "FILTER", default_value = "default",
          value_parser = ["default", "no-tools", "user-only", "labeled-only", "all"])]
    pub filter: String,
}

#[derive(Debug, Args)]
pub struct TreeArgs {
    /// A session file path, id or unique id prefix
    pub session: String,
    /// Open at this entry (selected, its branch unfolded) instead of the leaf
    #[arg(long, value_name = "ENTRY")]
    pub at: Option<String>,
}

#[derive(Debug, Args)]
pub struct ContextArgs {
    /// A session file path, id or unique id prefix
    pub session: String,
    /// The entry to resume at, an id or unique id prefix (default: the session's leaf)
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    /// Whose compaction rules to apply: atomic or pi (default: pi for the legacy pi store)
    #[arg(long, value_name = "FLAVOR")]
    pub flavor: Option<String>,
    /// One JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// A session file path, id or unique id prefix
    pub session: String,
    /// The entry ending the first branch (A): an id or unique id prefix
    pub entry_a: String,
    /// The entry ending the second branch (B): an id or unique id prefix
    pub entry_b: String,
    /// One JSON object: the common ancestor, both sides, then the turns with their a/b sides
    #[arg(long)]
    pub json: bool,
    /// Columns of the text output: side by side from 120, else stacked
    /// (default: the terminal's width, 120 when not a terminal)
    #[arg(long, value_name = "N")]
    pub width: Option<usize>,
}

#[derive(Debug, Args)]
pub struct LabelsArgs {
    /// All projects instead of the current one
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// The project directory (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// JSON Lines: path, sessionId, entryId, label, labelTime, text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// All projects instead of the current one
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// The project directory (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Only messages since then: 12h, 2d, 1w, 3mo, 1y ago, or a date
    /// (2026-11-01, UTC) or time (2026-11-01T08:00:00Z); to the hour
    #[arg(long, value_name = "AGE")]
    pub since: Option<String>,
    /// Group by project, model, day, week or month (UTC)
    #[arg(long, value_name = "GROUP", default_value = "project")]
    pub by: String,
    /// JSON Lines: one object per group, then the total
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TrashArgs {
    /// Sessions to move: file paths, ids or unique id prefixes
    #[arg(value_name = "SESSION",
          required_unless_present_any = ["older_than", "larger_than"],
          conflicts_with_all = ["older_than", "larger_than", "all", "cwd", "include_internal"])]
    pub sessions: Vec<String>,
    /// Every session of the scope last active before then: 12h, 2d, 1w,
    /// 3mo, 1y ago, or a date (2026-11-01, UTC)
    #[arg(long, value_name = "AGE")]
    pub older_than: Option<String>,
    /// Only sessions whose file is larger than SIZE: bytes, 500k, 10M, 1G
    /// (or KiB, MiB, GiB)
    #[arg(long, value_name = "SIZE")]
    pub larger_than: Option<String>,
    /// All projects instead of the current one
    #[arg(long, conflicts_with = "cwd")]
    pub all: bool,
    /// The project directory (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Also internal workflow sessions
    #[arg(long)]
    pub include_internal: bool,
    /// Only print what would be moved
    #[arg(long)]
    pub dry_run: bool,
    /// JSON Lines: one object per session (path, sessionId, bytes,
    /// modified, title, status, error)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The sessions' original paths, or ids (unique id prefixes) of
    /// sessions in the trash; default: the last batch arbor moved there
    #[arg(value_name = "SESSION")]
    pub sessions: Vec<String>,
    /// JSON Lines: one object per session (path, status, error)
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A session file path, id or unique id prefix
    pub session: String,
    /// The last entry of the branch, an id or unique id prefix (default: the session's leaf)
    #[arg(long, value_name = "ID")]
    pub leaf: Option<String>,
    /// md, html or json (JSON Lines of the branch's entries); default: from
    /// the --out file's extension, else md
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Write to FILE instead of standard output (an existing file is kept
    /// unless --force)
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Overwrite the --out file when it exists
    #[arg(long, requires = "out")]
    pub force: bool,
    /// Include the assistant's thinking
    #[arg(long)]
    pub thinking: bool,
}

#[derive(Debug, Args)]
pub struct WriteOpts {
    /// Allow arbor to first rewrite a version 1/2 file as version 3 (keeps a .bak copy)
    #[arg(long)]
    pub migrate: bool,
}

#[derive(Debug, Args)]
pub struct LabelArgs {
    pub session: String,
    /// The entry to label
    pub entry: String,
    /// The label text (omit with --clear)
    pub text: Option<String>,
    /// Remove the label
    #[arg(long, conflicts_with = "text")]
    pub clear: bool,
    #[command(flatten)]
    pub write: WriteOpts,
}

#[derive(Debug, Args)]
pub struct BranchArgs {
    pub session: String,
    /// The entry to continue from (a user message: its parent, to re-send it)
    pub entry: String,
    /// A summary of the abandoned branch, added to the context
    #[arg(long, default_value = "")]
    pub summary: String,
    #[command(flatten)]
    pub write: WriteOpts,
}

#[derive(Debug, Args)]
pub struct ForkArgs {
    pub session: String,
    /// The last entry to copy
    pub entry: String,
    /// Where to write the new session (default: beside the source, named like the agent does)
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RenameArgs {
    pub session: String,
    /// The new name ("" clears it)
    pub name: String,
    #[command(flatten)]
    pub write: WriteOpts,
}
