//! The tree screen's state: the session, its flattened rows under the
//! filter, folds and search, the selection, the panes and dialogs.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde_json::Value;

use crate::session::context::ContextFlavor;
use crate::session::render::entry_text;
use crate::session::view::{
    flatten, matches_search, passes_filter, search_haystack, Filter, TreeRow,
};
use crate::session::{Agent, Session, SessionTree};
use crate::ui::input::LineInput;

/// A session read for the tree view (built off the UI thread).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub session: Session,
    pub tree: SessionTree,
    /// Whose session it is: resumed with that agent's command.
    pub agent: Agent,
    /// The agent's context rules (F3).
    pub flavor: ContextFlavor,
}

impl Loaded {
    pub fn read(path: &std::path::Path, agent: Agent) -> Result<Loaded, String> {
        let session = crate::session::read_session(path).map_err(|e| e.to_string())?;
        let tree = SessionTree::build(&session);
        Ok(Loaded {
            session,
            tree,
            agent,
            flavor: agent.flavor(),
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TreeDialog {
    None,
    Help,
    /// Shift+L: the label being edited for `target`.
    Label {
        target: String,
        input: LineInput,
    },
    /// Enter: continue from the selected entry.
    Continue {
        entry: String,
    },
    /// Option 1 chosen: the optional summary of the abandoned branch.
    BranchSummary {
        entry: String,
        input: LineInput,
    },
    /// The file is v1/v2: rewrite it first?
    ConfirmMigrate {
        then: Pending,
    },
    /// Shift+E: export the branch ending at `entry` (to the current folder).
    Export {
        entry: String,
        thinking: bool,
    },
    /// A write finished: resume the agent on the result?
    OfferResume {
        path: PathBuf,
        id: String,
        cwd: String,
        what: String,
        /// The user message the session now continues before, to send
        /// again (`y` copies it).
        prompt: Option<String>,
    },
}

/// A write waiting for the migration question.
#[derive(Debug, Clone, PartialEq)]
pub enum Pending {
    Label {
        target: String,
        label: Option<String>,
    },
    Branch {
        entry: String,
        summary: String,
    },
}

#[derive(Debug)]
pub struct TreeState {
    pub path: PathBuf,
    pub loaded: Loaded,
    /// Tool calls by id: (name, arguments), to name tool results.
    pub calls: HashMap<String, (String, Value)>,
    pub filter: Filter,
    /// Folded entries, by id (stable across reloads).
    pub folded: HashSet<String>,
    pub search: LineInput,
    haystacks: Vec<Option<String>>,
    pub rows: Vec<TreeRow>,
    /// Where the user put the selection (kept when a filter hides it).
    pub anchor: Option<String>,
    /// The row shown selected: the anchor, or its nearest visible ancestor.
    pub selected: Option<usize>,
    pub scroll: usize,
    pub page: usize,
    pub label_times: bool,
    pub detail_on: Option<bool>,
    pub detail_scroll: u16,
    pub context_view: bool,
    pub context_scroll: u16,
    /// The context shown by the context view, built when it opens.
    pub context: Option<crate::session::SessionContext>,
    pub dialog: TreeDialog,
    /// The first line of the help shown (when it is taller than the screen).
    pub help_scroll: usize,
    pub status: Option<(String, bool)>,
    pub status_timer: crate::ui::widgets::StatusTimer,
    pub now_ms: i64,
    /// The offset label times are shown in: the local one, from the
    /// runtime's clock; UTC until it says (tests).
    pub utc_offset: chrono::FixedOffset,
    /// Opened from the picker: Esc goes back there.
    pub from_picker: bool,
    /// The text of the user message a pending branch or fork continues
    /// before, shown once the write is done.
    pub resend: Option<String>,
}

impl TreeState {
    pub fn new(path: PathBuf, loaded: Loaded, now_ms: i64) -> TreeState {
        let mut t = TreeState {
            path,
            calls: HashMap::new(),
            haystacks: Vec::new(),
            loaded,
            filter: Filter::Default,
            folded: HashSet::new(),
            search: LineInput::default(),
            rows: Vec::new(),
            anchor: None,
            selected: None,
            scroll: 0,
            page: 10,
            label_times: false,
            detail_on: None,
            detail_scroll: 0,
            context_view: false,
            context_scroll: 0,
            context: None,
            dialog: TreeDialog::None,
            help_scroll: 0,
            status: None,
            status_timer: Default::default(),
            now_ms,
            utc_offset: chrono::Offset::fix(&chrono::Utc),
            from_picker: false,
            resend: None,
        };
        t.index_session();
        // The initial selection is the leaf (or its nearest visible ancestor).
        t.anchor = t
            .loaded
            .tree
            .leaf
            .map(|l| t.loaded.session.entries[l].id.clone());
        t.rebuild();
        t
    }

    fn index_session(&mut self) {
        self.calls = crate::session::render::collect_tool_calls(&self.loaded.session.entries)
            .into_iter()
            .map(|(k, (n, a))| (k.to_string(), (n.to_string(), a.clone())))
            .collect();
        self.haystacks = vec![None; self.loaded.session.entries.len()];
    }

    /// Replaces the session after the file changed; keeps selection, folds
    /// and scroll (all by id).
    pub fn replace(&mut self, loaded: Loaded) {
        self.loaded = loaded;
        self.index_session();
        self.rebuild();
        if self.context_view {
            self.open_context();
        }
    }

    /// A status for work under way (`Forking…`): it stays until the
    /// result replaces it.
    pub fn set_progress(&mut self, text: &str) {
        self.status_timer.hold(text);
        self.status = Some((text.to_string(), false));
    }

    /// Builds the context at the selected entry for the context view.
    pub fn open_context(&mut self) {
        self.context_view = true;
        self.context = self.selected_entry().map(|i| {
            crate::session::build_context(
                &self.loaded.session,
                &self.loaded.tree,
                Some(i),
                self.loaded.flavor,
            )
        });
    }

    pub fn calls_ref(&self) -> HashMap<&str, (&str, &Value)> {
        self.calls
            .iter()
            .map(|(k, (n, a))| (k.as_str(), (n.as_str(), a)))
            .collect()
    }

    pub fn entry_id(&self, i: usize) -> &str {
        &self.loaded.session.entries[i].id
    }

    fn haystack(&mut self, i: usize) -> &str {
        if self.haystacks[i].is_none() {
            let calls = self.calls_ref();
            let e = &self.loaded.session.entries[i];
            let h = search_haystack(e, &self.loaded.tree, &calls);
            self.haystacks[i] = Some(h);
        }
        self.haystacks[i].as_deref().unwrap_or("")
    }

    /// Recomputes the visible rows and the shown selection.
    pub fn rebuild(&mut self) {
        let n = self.loaded.session.entries.len();
        let leaf = self.loaded.tree.leaf;
        let mut vis = vec![false; n];
        let search = self.search.text().trim().to_string();
        for (i, v) in vis.iter_mut().enumerate() {
            let e = &self.loaded.session.entries[i];
            let labeled = self.loaded.tree.labels.contains_key(&e.id);
            *v = passes_filter(e, Some(i) == leaf, labeled, self.filter);
        }
        if !search.is_empty() {
            for (i, v) in vis.iter_mut().enumerate() {
                if *v {
                    let h = self.haystack(i).to_string();
                    *v = matches_search(&h, &search);
                }
            }
        }
        let folded: HashSet<usize> = self
            .folded
            .iter()
            .filter_map(|id| self.loaded.tree.index_of(id))
            .collect();
        self.rows = flatten(
            &self.loaded.session.entries,
            &self.loaded.tree,
            &|i| vis[i],
            &folded,
        );
        self.selected = self.shown_selection();
    }

    /// The anchor's row, else its nearest visible ancestor's, else (as
    /// Atomic) the last row.
    fn shown_selection(&self) -> Option<usize> {
        if self.rows.is_empty() {
            return None;
        }
        let pos_of: HashMap<usize, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(p, r)| (r.entry, p))
            .collect();
        let tree = &self.loaded.tree;
        let mut cur = self.anchor.as_deref().and_then(|id| tree.index_of(id));
        while let Some(i) = cur {
            if let Some(&p) = pos_of.get(&i) {
                return Some(p);
            }
            cur = tree.parent[i];
        }
        Some(self.rows.len() - 1)
    }

    pub fn selected_entry(&self) -> Option<usize> {
        self.selected
            .and_then(|p| self.rows.get(p))
            .map(|r| r.entry)
    }

    /// Moves the selection to row `pos` (and the anchor with it).
    pub fn select_row(&mut self, pos: usize) {
        if let Some(r) = self.rows.get(pos) {
            self.selected = Some(pos);
            self.anchor = Some(self.loaded.session.entries[r.entry].id.clone());
            self.detail_scroll = 0;
            self.context_scroll = 0;
        }
    }

    pub fn set_filter(&mut self, f: Filter) {
        self.filter = f;
        // A filter change clears folds (SPEC §6).
        self.folded.clear();
        self.rebuild();
    }

    pub fn clamp_scroll(&mut self, height: usize) {
        let pos = self.selected.unwrap_or(0);
        self.scroll = crate::ui::widgets::scroll_for(pos, self.scroll, height, self.rows.len());
    }

    pub fn is_leaf(&self, i: usize) -> bool {
        self.loaded.tree.leaf == Some(i)
    }

    /// One-line text of an entry, for dialogs.
    pub fn entry_line(&self, i: usize) -> String {
        let calls = self.calls_ref();
        crate::session::render::sanitize_line(&entry_text(&self.loaded.session.entries[i], &calls))
    }

    /// The time zone label times are shown in.
    fn label_offset(&self) -> chrono::FixedOffset {
        self.utc_offset
    }

    /// Whether label times shown at `then` read differently at `now`: the
    /// day (so perhaps the year) they are written against has turned.
    pub fn label_day_changed(&self, then: i64, now: i64) -> bool {
        use chrono::TimeZone as _;
        let off = self.label_offset();
        let day = |ms: i64| {
            off.timestamp_millis_opt(ms)
                .single()
                .map(|d| d.date_naive())
        };
        day(then) != day(now)
    }

    /// Label time as Atomic's tree: `HH:MM` today, `M/D HH:MM` this year, else `YY/M/D HH:MM`.
    pub fn label_time(&self, ts: &str) -> String {
        use chrono::{Datelike, TimeZone as _};
        let Some(ms) = crate::session::entry::parse_iso_ms(ts) else {
            return String::new();
        };
        let fmt = |d: chrono::DateTime<chrono::FixedOffset>,
                   now: chrono::DateTime<chrono::FixedOffset>| {
            if d.date_naive() == now.date_naive() {
                d.format("%H:%M").to_string()
            } else if d.year() == now.year() {
                format!("{}/{} {}", d.month(), d.day(), d.format("%H:%M"))
            } else {
                format!(
                    "{:02}/{}/{} {}",
                    d.year() % 100,
                    d.month(),
                    d.day(),
                    d.format("%H:%M")
                )
            }
        };
        let off = self.label_offset();
        match (
            off.timestamp_millis_opt(ms).single(),
            off.timestamp_millis_opt(self.now_ms).single(),
        ) {
            (Some(d), Some(now)) => fmt(d, now),
            _ => String::new(),
        }
    }
}
