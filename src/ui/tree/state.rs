//! The tree screen's state: the session, its flattened rows under the
//! filter, folds and search, the selection, the panes and dialogs.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use crate::ui::input::LineInput;
use arbor_search::entry_bits::EntryTermBits;
use arbor_search::hits::looks_at_entries;
use arbor_search::{Query, Term};
use arbor_session::context::ContextFlavor;
use arbor_session::render::entry_text;
use arbor_session::render::ToolCalls;
use arbor_session::search_text::SearchText;
use arbor_session::searchable::Parts;
use arbor_session::view::{
    bit, flatten_pre, next_bit, search_haystack, Filter, FilterBits, Preorder, TreeRow,
};
use arbor_session::{Agent, Session, SessionTree};

/// A session read for the tree view (built off the UI thread).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Shared with the worker that builds its search text.
    pub session: Arc<Session>,
    pub tree: SessionTree,
    /// Whose session it is: resumed with that agent's command.
    pub agent: Agent,
    /// The agent's context rules (F3).
    pub flavor: ContextFlavor,
    /// The tree in walk order, and what each filter shows in that order:
    /// a filter or fold key is one pass over these.
    pub pre: Preorder,
    pub filters: FilterBits,
}

/// Lines longer than this are never read by the tree: their rows say so
/// (a line of hundreds of megabytes would otherwise be held several times
/// over by its row, its details and the search text).
pub const TREE_MAX_LINE: usize = 32 << 20;

impl Loaded {
    pub fn read(path: &std::path::Path, agent: Agent) -> Result<Loaded, String> {
        Self::read_limited(path, agent, TREE_MAX_LINE)
    }

    /// [`Loaded::read`] leaving lines over `max_line` bytes unread.
    pub fn read_limited(
        path: &std::path::Path,
        agent: Agent,
        max_line: usize,
    ) -> Result<Loaded, String> {
        // The screen reads the lines it shows from the file: memory stays
        // near the facts of the entries, not the size of the file.
        let session = arbor_session::reader::read_session_lean(path).map_err(|e| e.to_string())?;
        session.limit_lines(max_line);
        let tree = SessionTree::build(&session);
        let pre = Preorder::new(&tree);
        let filters = FilterBits::build(&session.entries, &tree, &pre);
        Ok(Loaded {
            session: Arc::new(session),
            tree,
            agent,
            flavor: agent.flavor(),
            pre,
            filters,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum TreeDialog {
    None,
    Help,
    /// `app.tree.editLabel`: the label being edited for `target`.
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
    /// `arbor.tree.export`: export the branch ending at `entry` (to the current folder).
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
        /// `y` was pressed: the box says the message is on the clipboard.
        copied: bool,
    },
}

/// The compare view: the branches ending at the marked entry (A) and the
/// selected one (B).
#[derive(Debug, Clone)]
pub struct CompareView {
    pub a: String,
    pub b: String,
    pub cmp: arbor_session::compare::Comparison,
    /// The first row shown.
    pub scroll: usize,
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
    pub filter: Filter,
    /// Folded entries, by id (stable across reloads).
    pub folded: HashSet<String>,
    pub search: LineInput,
    /// The haystacks read so far, by entry (a search reads them one by one
    /// until the search text arrives; a slot for every entry was 24 MB at
    /// a million entries, held for as long as the screen was open).
    haystacks: HashMap<usize, String>,
    /// Every entry's search text, built off the UI thread after a load
    /// (until it arrives, entries are read one by one as a search needs them).
    search_text: Option<Arc<SearchText>>,
    /// The search text is being built: a search waits for it rather than
    /// reading every entry on the UI thread.
    search_text_pending: bool,
    /// The entries whose search text holds a word, by word (for the
    /// current search text).
    word_hits: HashMap<String, WordHits>,
    /// The search parsed as a query (words, phrases, `re:`, `in:`; filters
    /// of sessions mean nothing here and are left out).
    pub query: Query,
    /// Per entry, the bits of a query's body terms that match in it
    /// (`search::hits`, the picker's and `arbor search`'s matcher), by
    /// the query as typed; read off the UI thread.
    entry_bits: HashMap<String, Arc<TermBits>>,
    /// The query whose entry bits are being read.
    bits_pending: Option<String>,
    /// A query to read entry bits for (see `take_hits_request`).
    bits_wanted: Option<Query>,
    /// Select the first match once the search is applied (the tree was
    /// opened from the picker's query, not at a particular match).
    pub select_first_match: bool,
    /// The picker's query, carried over as the search and not applied yet
    /// (see [`TreeState::start_search`]); forgotten once the search is
    /// edited.
    carried_search: Option<String>,
    /// Memory kept between flattenings: which positions a search shows,
    /// the flattening's stack.
    vis: Vec<u64>,
    stack: Vec<(u32, u32, u32)>,
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
    pub context: Option<arbor_session::SessionContext>,
    /// The entry marked to compare with another (by id, so it survives
    /// filters and reloads).
    pub mark: Option<String>,
    /// The compare view, open over the tree (Esc closes it; the mark and
    /// the selection stay).
    pub compare: Option<CompareView>,
    pub dialog: TreeDialog,
    /// The first line of the help shown (when it is taller than the screen).
    pub help_scroll: usize,
    pub status: Option<(String, bool)>,
    /// A write just failed and its message is shown: the reload that
    /// follows it leaves the message alone if it fails too.
    pub write_failed: bool,
    pub status_timer: crate::ui::widgets::StatusTimer,
    pub now_ms: i64,
    /// The offset label times are shown in: the local one, from the
    /// runtime's clock; UTC until it says (tests).
    pub utc_offset: chrono::FixedOffset,
    /// Opened from the picker: Esc goes back there.
    pub from_picker: bool,
    /// The picker's search carried over and how many entries its preview
    /// listed for it: the footer gives both counts while that search is
    /// the tree's (the tree counts rows, and shows a tool call on its
    /// result's row; the preview counts entries).
    pub preview_matches: Option<(String, usize)>,
    /// The text of the user message a pending branch or fork continues
    /// before, shown once the write is done.
    pub resend: Option<String>,
}

/// Where [`TreeState::open_at`] opened the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenedAt {
    /// The session has no such entry.
    Missing,
    /// At the entry, under the filter in force.
    Entry,
    /// At the entry, under this filter: the one in force hid it.
    Filter(Filter),
    /// At the result of its tool call: it is a message of tool calls
    /// alone, which no filter shows.
    CallResult,
    /// At its nearest shown ancestor: no filter shows it.
    Ancestor,
}

impl OpenedAt {
    /// What the status line says of it (`None`: at the entry, as asked).
    pub fn said(self) -> Option<String> {
        match self {
            OpenedAt::Missing | OpenedAt::Entry => None,
            OpenedAt::Filter(f) => Some(format!(
                "Filter {}: the default filter hides this match",
                f.tag().unwrap_or("default")
            )),
            OpenedAt::CallResult => Some("At its call's result: calls alone have no row".into()),
            OpenedAt::Ancestor => Some("At the entry before: no filter shows this match".into()),
        }
    }
}

impl TreeState {
    pub fn new(path: PathBuf, loaded: Loaded, now_ms: i64) -> TreeState {
        let mut t = TreeState {
            path,
            haystacks: HashMap::new(),
            search_text: None,
            search_text_pending: false,
            word_hits: HashMap::new(),
            query: Query::default(),
            entry_bits: HashMap::new(),
            bits_pending: None,
            bits_wanted: None,
            select_first_match: false,
            carried_search: None,
            vis: Vec::new(),
            stack: Vec::new(),
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
            mark: None,
            compare: None,
            dialog: TreeDialog::None,
            help_scroll: 0,
            status: None,
            write_failed: false,
            status_timer: Default::default(),
            now_ms,
            utc_offset: chrono::Offset::fix(&chrono::Utc),
            from_picker: false,
            preview_matches: None,
            resend: None,
        };
        t.index_session();
        // The initial selection is the leaf (or its nearest visible ancestor).
        t.anchor = t
            .loaded
            .tree
            .leaf
            .map(|l| t.loaded.session.entries[l].id.to_string());
        t.rebuild();
        t
    }

    fn index_session(&mut self) {
        self.haystacks = HashMap::new();
        self.search_text = None;
        self.search_text_pending = false;
        self.word_hits.clear();
        self.entry_bits.clear();
        self.bits_pending = None;
    }

    /// Installs the search text built for this session (a stale one, of a
    /// session replaced since, is dropped).
    pub fn set_search_text(&mut self, session: &Arc<Session>, text: Arc<SearchText>) {
        if Arc::ptr_eq(session, &self.loaded.session)
            && text.len() == self.loaded.session.entries.len()
        {
            self.search_text = Some(text);
            self.search_text_pending = false;
            self.word_hits.clear();
        }
    }

    /// The search text of this session is on its way (`set_search_text`).
    pub fn expect_search_text(&mut self) {
        self.search_text_pending = self.search_text.is_none();
    }

    /// A search is typed but waits for the search text, or for which
    /// entries match its phrases, regexes or scopes.
    pub fn search_waiting(&self) -> bool {
        let search = self.search.text().trim();
        !search.is_empty()
            && (self.search_text_pending || self.bits_pending.as_deref() == Some(search))
    }

    /// Types `text` as the search (the picker's query, carried over);
    /// with `first`, the first match is selected once the search applies.
    pub fn start_search(&mut self, text: &str, first: bool) {
        self.search = LineInput::new(text);
        self.select_first_match = first;
        self.carried_search = Some(text.trim().to_string());
        self.folded.clear();
        self.rebuild();
    }

    /// The query whose entry bits the search waits for, once: the app
    /// asks for them off the UI thread (answered by [`TreeState::set_hits`]).
    pub fn take_hits_request(&mut self) -> Option<Query> {
        self.bits_wanted.take()
    }

    /// Takes the entry bits read for `query` (those of a session replaced
    /// since are dropped); true when the rows changed.
    pub fn set_hits(
        &mut self,
        session: &Arc<Session>,
        query: String,
        bits: Arc<EntryTermBits>,
    ) -> bool {
        if !Arc::ptr_eq(session, &self.loaded.session)
            || bits.len() != self.loaded.session.entries.len()
        {
            return false;
        }
        if self.entry_bits.len() >= 16 {
            self.entry_bits.clear();
        }
        let current = self.search.text().trim() == query;
        if self.bits_pending.as_deref() == Some(query.as_str()) {
            self.bits_pending = None;
        }
        let terms = Query::parse(&query).terms.len().min(32);
        let per_term = term_bits(&bits, terms, &self.loaded.pre);
        drop(bits);
        self.entry_bits.insert(query, Arc::new(per_term));
        if current {
            self.rebuild();
        }
        current
    }

    /// Replaces the session after the file changed; keeps selection, folds
    /// and scroll (all by id).
    pub fn replace(&mut self, loaded: Loaded) {
        self.loaded = loaded;
        self.index_session();
        // Its search text is built again off the UI thread (the app asks):
        // a search waits for it rather than reading every entry here.
        self.search_text_pending = true;
        self.rebuild();
        if self.context_view {
            self.open_context();
        }
        if let Some(c) = &self.compare {
            let (a, b) = (c.a.clone(), c.b.clone());
            self.open_compare(&a, &b);
        }
        if let Some(m) = &self.mark {
            if self.loaded.tree.index_of(m).is_none() {
                self.mark = None;
            }
        }
    }

    /// Opens (or refreshes) the compare view of the branches ending at
    /// `a` and `b`, keeping its scroll; closes it, saying why, when one
    /// of them is gone.
    pub fn open_compare(&mut self, a: &str, b: &str) {
        let scroll = self.compare.as_ref().map_or(0, |c| c.scroll);
        match arbor_session::compare::compare(&self.loaded.session, &self.loaded.tree, a, b) {
            Ok(cmp) => {
                self.compare = Some(CompareView {
                    a: a.to_string(),
                    b: b.to_string(),
                    cmp,
                    scroll,
                })
            }
            Err(e) => {
                self.compare = None;
                self.status = Some((e.to_string(), true));
            }
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
            arbor_session::build_context(
                &self.loaded.session,
                &self.loaded.tree,
                Some(i),
                self.loaded.flavor,
            )
        });
    }

    /// The session's tool calls by id, to name tool results.
    pub fn calls_ref(&self) -> &ToolCalls {
        &self.loaded.session.calls
    }

    pub fn entry_id(&self, i: usize) -> &str {
        &self.loaded.session.entries[i].id
    }

    fn haystack(&mut self, i: usize) -> &str {
        let loaded = &self.loaded;
        self.haystacks.entry(i).or_insert_with(|| {
            let e = &loaded.session.entries[i];
            search_haystack(e, &loaded.tree, &loaded.session.calls)
        })
    }

    /// Which entries match the search, parsed as a query: every term must
    /// match. A word (with no `in:` scope) matches as in Atomic — a
    /// case-insensitive substring of the label or the search text (role,
    /// text, command, the row as shown) — or where the picker's matcher
    /// finds it (thinking, tool arguments); phrases, regexes and every term
    /// under `in:` match where that matcher finds them
    /// ([`arbor_search::hits`], the same test as the picker's list of
    /// matches and `arbor search`), read off the UI thread: until the
    /// answer comes, those terms are not applied.
    fn search_hits(&mut self, search: &str, vis: &mut [u64]) {
        if self.query.error().is_some() {
            // Said beside the search.
            vis.fill(0);
            return;
        }
        let bits = if looks_at_entries(&self.query) {
            let b = self.entry_bits.get(search).cloned();
            if b.is_none() && self.bits_pending.as_deref() != Some(search) {
                self.bits_wanted = Some(self.query.clone());
                self.bits_pending = Some(search.to_string());
            }
            b
        } else {
            None
        };
        if self.word_hits.len() > 64 {
            self.word_hits.clear();
        }
        let scoped = self.query.parts != Parts::ALL;
        let n = self.loaded.pre.len();
        for (k, term) in self.query.terms.clone().iter().enumerate().take(32) {
            // Where the picker's matcher found the term (once it answered).
            let found = bits.as_ref().and_then(|b| b.get(k));
            match term {
                Term::Word { lower: w, .. } if !scoped => match self.search_text.clone() {
                    Some(text) => {
                        if !self.word_hits.contains_key(w) {
                            // The longest remembered word it contains (the
                            // previous keystroke's) narrows the scan.
                            let within = self
                                .word_hits
                                .iter()
                                .filter(|(u, _)| !u.is_empty() && w.contains(u.as_str()))
                                .max_by_key(|(u, _)| u.len())
                                .map(|(_, hits)| &hits.entries);
                            let entries = match within {
                                Some(within) => text.containing_within(w, within),
                                None => text.containing(w),
                            };
                            let at = positions_of(&entries, &self.loaded.pre);
                            self.word_hits.insert(w.clone(), WordHits { entries, at });
                        }
                        let labeled = self.labels_holding(w, vis);
                        let words = &self.word_hits[w].at;
                        match found {
                            Some(f) => vis
                                .iter_mut()
                                .zip(words.iter().zip(f))
                                .for_each(|(v, (w, f))| *v &= w | f),
                            None => vis.iter_mut().zip(words).for_each(|(v, w)| *v &= w),
                        }
                        for p in labeled {
                            vis[p / 64] |= 1 << (p % 64);
                        }
                    }
                    None => {
                        let mut at = next_bit(vis, 0, n);
                        while let Some(p) = at {
                            let e = self.loaded.pre.order[p] as usize;
                            if !found.is_some_and(|f| bit(f, p))
                                && !self.haystack(e).contains(w.as_str())
                            {
                                vis[p / 64] &= !(1 << (p % 64));
                            }
                            at = next_bit(vis, p + 1, n);
                        }
                    }
                },
                _ => {
                    if let Some(f) = found {
                        vis.iter_mut().zip(f).for_each(|(v, f)| *v &= f);
                    }
                }
            }
        }
    }

    /// The shown positions (of `vis`) whose entry's label holds `word`.
    fn labels_holding(&self, word: &str, vis: &[u64]) -> Vec<usize> {
        let tree = &self.loaded.tree;
        tree.labels
            .iter()
            .filter(|(_, l)| l.text.to_lowercase().contains(word))
            .filter_map(|(id, _)| tree.index_of(id))
            .filter_map(|i| self.loaded.pre.pos.get(i).map(|&p| p as usize))
            .filter(|&p| bit(vis, p))
            .collect()
    }

    /// Recomputes the visible rows and the shown selection: one pass over
    /// the tree in walk order with the filter's bits (and a search's hits).
    pub fn rebuild(&mut self) {
        let search = self.search.text().trim().to_string();
        // What the rows and the detail pane mark, too.
        if self.query.raw != search {
            self.query = Query::parse(&search);
        }
        let tree = &self.loaded.tree;
        let folds = self
            .loaded
            .pre
            .fold_positions(self.folded.iter().filter_map(|id| tree.index_of(id)));
        let bits = self.loaded.filters.of(self.filter);
        if !search.is_empty() && !self.search_text_pending {
            let mut vis = std::mem::take(&mut self.vis);
            vis.clear();
            vis.extend_from_slice(bits);
            self.search_hits(&search, &mut vis);
            flatten_pre(
                &mut self.rows,
                &mut self.stack,
                &self.loaded.pre,
                &vis,
                &folds,
            );
            self.vis = vis;
        } else {
            flatten_pre(
                &mut self.rows,
                &mut self.stack,
                &self.loaded.pre,
                bits,
                &folds,
            );
        }
        self.selected = self.shown_selection();
        // The picker's query chose the session, perhaps by its name, folder
        // or id alone: when no entry holds it, the tree opens whole and
        // says why, rather than empty.
        if self.carried_search.as_ref().is_some_and(|c| *c != search) {
            self.carried_search = None;
        }
        if self.carried_search.is_some() && !search.is_empty() && !self.search_waiting() {
            self.carried_search = None;
            if self.preview_differs().is_some() && self.status.is_none() {
                self.status = Some((
                    "Rows count: a call matches on its result's row".into(),
                    false,
                ));
            }
            if self.rows.is_empty() {
                self.status = Some((
                    format!(
                        "No entry holds {}: the picker matched the session's name, folder or id",
                        arbor_session::render::sanitize_line(&search)
                    ),
                    false,
                ));
                self.search = LineInput::new("");
                self.select_first_match = false;
                return self.rebuild();
            }
        }
        // Opened at the picker's query: the first match, once there are
        // matches to choose from.
        if self.select_first_match && !search.is_empty() && !self.search_waiting() {
            self.select_first_match = false;
            if !self.rows.is_empty() {
                self.select_row(0);
            }
        }
    }

    /// The anchor's row, else its nearest visible ancestor's, else (as
    /// Atomic) the last row.
    fn shown_selection(&self) -> Option<usize> {
        if self.rows.is_empty() {
            return None;
        }
        self.anchor
            .as_deref()
            .and_then(|id| self.loaded.tree.index_of(id))
            .and_then(|i| self.loaded.pre.row_of_nearest(&self.rows, i))
            .or(Some(self.rows.len() - 1))
    }

    /// How many entries the picker's preview listed for the search in
    /// force, when the tree's rows count otherwise.
    pub fn preview_differs(&self) -> Option<usize> {
        let (text, n) = self.preview_matches.as_ref()?;
        (text == self.search.text().trim() && *n != self.rows.len()).then_some(*n)
    }

    /// Opens the tree at entry `id` (a match picked in the picker's
    /// preview): selected, its ancestors unfolded. When the filter hides
    /// it, the first filter that shows it is put in force; an assistant
    /// message of tool calls alone, which no filter shows, is shown by its
    /// calls' results (each such row shows its call: the first whose row
    /// holds the search, else the first), else by its nearest shown
    /// ancestor. What it did, for the status line.
    pub fn open_at(&mut self, id: &str) -> OpenedAt {
        let tree = &self.loaded.tree;
        let Some(i) = tree.index_of(id) else {
            return OpenedAt::Missing;
        };
        let mut cur = tree.parent.of(i);
        while let Some(a) = cur {
            self.folded
                .remove(self.loaded.session.entries[a].id.as_str());
            cur = tree.parent.of(a);
        }
        self.detail_scroll = 0;
        if self.show_entry(i) {
            return OpenedAt::Entry;
        }
        let before = self.filter;
        for f in [Filter::Default, Filter::All] {
            if f != before {
                self.filter = f;
                if self.show_entry(i) {
                    return OpenedAt::Filter(f);
                }
            }
        }
        self.filter = before;
        if let Some(r) = self.call_result_of(i) {
            if self.show_entry(r) {
                return OpenedAt::CallResult;
            }
        }
        self.show_entry(i);
        OpenedAt::Ancestor
    }

    /// Selects entry `i` (as the anchor) under the filter in force; true
    /// when its own row is shown.
    fn show_entry(&mut self, i: usize) -> bool {
        self.anchor = Some(self.loaded.session.entries[i].id.to_string());
        self.rebuild();
        self.selected_entry() == Some(i)
    }

    /// The row that shows a call of assistant message `i`: of the tool
    /// results that follow it (each the child of the one before), the
    /// first whose row holds the search, else the first.
    fn call_result_of(&mut self, i: usize) -> Option<usize> {
        let tree = &self.loaded.tree;
        let entries = &self.loaded.session.entries;
        let mut results = Vec::new();
        let mut at = i;
        while let Some(&c) = tree.children[at].first() {
            let c = c as usize;
            if entries[c].role() != Some("toolResult") {
                break;
            }
            results.push(c);
            at = c;
        }
        let query = self.query.clone();
        let holds = results
            .iter()
            .copied()
            .find(|&r| !arbor_search::hits::match_ranges(&query, self.haystack(r)).is_empty());
        holds.or_else(|| results.first().copied())
    }

    pub fn selected_entry(&self) -> Option<usize> {
        self.selected
            .and_then(|p| self.rows.get(p))
            .map(|r| r.entry())
    }

    /// Moves the selection to row `pos` (and the anchor with it).
    pub fn select_row(&mut self, pos: usize) {
        if let Some(r) = self.rows.get(pos) {
            self.selected = Some(pos);
            self.anchor = Some(self.loaded.session.entries[r.entry()].id.to_string());
            self.detail_scroll = 0;
            self.context_scroll = 0;
        }
    }

    pub fn set_filter(&mut self, f: Filter) {
        self.filter = f;
        // A filter change clears folds (docs/spec.md §6).
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
        arbor_session::render::sanitize_line(&entry_text(
            &self.loaded.session.entries[i],
            self.calls_ref(),
        ))
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
        let Some(ms) = arbor_session::entry::parse_iso_ms(ts) else {
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

/// The entries whose search text holds a word: per entry (what the next
/// keystroke's scan narrows within) and per walk-order position (what the
/// rows are flattened from).
#[derive(Debug)]
struct WordHits {
    /// A bit per entry (a `bool` each was 1 MB a word at a million
    /// entries, and every prefix typed is remembered).
    entries: Vec<u64>,
    at: Vec<u64>,
}

/// Per body term of a query, the walk-order positions whose entry the
/// picker's matcher found it in.
type TermBits = Vec<Vec<u64>>;

/// The walk-order positions of the entries marked (a bit per entry).
fn positions_of(entries: &[u64], pre: &Preorder) -> Vec<u64> {
    let mut at = vec![0u64; pre.len().div_ceil(64)];
    for (w, &bits) in entries.iter().enumerate() {
        let mut b = bits;
        while b != 0 {
            set_position(&mut at, pre, w * 64 + b.trailing_zeros() as usize);
            b &= b - 1;
        }
    }
    at
}

/// Sets the bit of entry `e`'s walk-order position (none for an entry
/// outside the walk).
fn set_position(bits: &mut [u64], pre: &Preorder, e: usize) {
    if let Some(&p) = pre.pos.get(e).filter(|&&p| (p as usize) < pre.len()) {
        bits[p as usize / 64] |= 1 << (p % 64);
    }
}

/// [`TermBits`] of `terms` terms from a bit per term per entry.
fn term_bits(per_entry: &EntryTermBits, terms: usize, pre: &Preorder) -> TermBits {
    (0..terms)
        .map(|t| {
            let mut bits = vec![0u64; pre.len().div_ceil(64)];
            for e in per_entry.entries_of(t) {
                set_position(&mut bits, pre, e);
            }
            bits
        })
        .collect()
}
