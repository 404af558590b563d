//! The /tree filters: which entries each one shows, as a bit per entry in
//! walk order, built once per load.

use crate::entry::{Entry, StopKind, TextKind};
use crate::render::has_text_content;
use crate::tree::SessionTree;

use super::Preorder;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Filter {
    #[default]
    Default,
    NoTools,
    UserOnly,
    LabeledOnly,
    All,
}

impl Filter {
    pub const CYCLE: [Filter; 5] = [
        Filter::Default,
        Filter::NoTools,
        Filter::UserOnly,
        Filter::LabeledOnly,
        Filter::All,
    ];

    /// The status-line tag, as Atomic words it (`None` for the default filter).
    pub fn tag(self) -> Option<&'static str> {
        match self {
            Filter::Default => None,
            Filter::NoTools => Some("no-tools"),
            Filter::UserOnly => Some("user"),
            Filter::LabeledOnly => Some("labeled"),
            Filter::All => Some("all"),
        }
    }

    /// The name `arbor show --filter` takes.
    pub fn from_name(name: &str) -> Option<Filter> {
        Some(match name {
            "default" => Filter::Default,
            "no-tools" => Filter::NoTools,
            "user-only" => Filter::UserOnly,
            "labeled-only" => Filter::LabeledOnly,
            "all" => Filter::All,
            _ => return None,
        })
    }

    /// Its place in [`Filter::CYCLE`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its bit in [`filter_mask`].
    pub fn bit(self) -> u8 {
        1 << self.index()
    }

    pub fn next(self) -> Filter {
        let i = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        Self::CYCLE[(i + 1) % Self::CYCLE.len()]
    }

    pub fn prev(self) -> Filter {
        let i = Self::CYCLE.iter().position(|f| *f == self).unwrap_or(0);
        Self::CYCLE[(i + Self::CYCLE.len() - 1) % Self::CYCLE.len()]
    }
}

/// A `stopReason` that JavaScript reads as truthy and is neither `stop`
/// nor `toolUse`.
pub(crate) fn unusual_stop(stop: StopKind) -> bool {
    match stop {
        StopKind::Missing
        | StopKind::Null
        | StopKind::False
        | StopKind::Zero
        | StopKind::EmptyString
        | StopKind::Stop
        | StopKind::ToolUse => false,
        StopKind::True
        | StopKind::NonZero
        | StopKind::Compound
        | StopKind::Error
        | StopKind::Aborted
        | StopKind::Length
        | StopKind::OtherString => true,
    }
}

/// Whether an entry is shown under `filter` (before search).
pub fn passes_filter(e: &Entry, is_leaf: bool, labeled: bool, filter: Filter) -> bool {
    filter_mask(e, is_leaf, labeled) & filter.bit() != 0
}

/// Which filters show an entry, a bit per filter ([`Filter::bit`]): the
/// costly part (an assistant message's text, perhaps read from the file)
/// is looked at once for all five.
pub(crate) fn filter_mask(e: &Entry, is_leaf: bool, labeled: bool) -> u8 {
    let ty = e.entry_type();
    // A second header in the file is not an entry (Atomic leaves it out).
    if ty == "session" {
        return 0;
    }
    let role = e.role();
    if role == Some("assistant") && !is_leaf {
        // An assistant message with only tool calls is hidden in every
        // filter, unless it ended other than normally (error, aborted…).
        let has_text = match e.assistant_text() {
            TextKind::Text => true,
            TextKind::Blank => false,
            TextKind::Unsure => e.with_raw(|raw| {
                has_text_content(raw.get("message").and_then(|m| m.get("content")))
            }),
        };
        if !has_text && !unusual_stop(e.assistant_stop()) {
            return 0;
        }
    }
    let mut m = Filter::All.bit();
    if role == Some("user") {
        m |= Filter::UserOnly.bit();
    }
    if labeled {
        m |= Filter::LabeledOnly.bit();
    }
    if !matches!(
        ty,
        "label" | "custom" | "model_change" | "thinking_level_change" | "session_info"
    ) {
        m |= Filter::Default.bit();
        if role != Some("toolResult") {
            m |= Filter::NoTools.bit();
        }
    }
    m
}

/// Which entries each filter shows, as bits in walk order (bit `p` of
/// word `p / 64`: the entry at position `p` of the [`Preorder`]), built
/// once per load on all cores.
#[derive(Debug, Clone, Default)]
pub struct FilterBits {
    bits: [Vec<u64>; 5],
}

impl FilterBits {
    pub fn build(entries: &[Entry], tree: &SessionTree, pre: &Preorder) -> FilterBits {
        use rayon::prelude::*;
        let leaf = tree.leaf;
        let check_labels = !tree.labels.is_empty();
        let words: Vec<[u64; 5]> = pre
            .order
            .par_chunks(64)
            .map(|chunk| {
                let mut w = [0u64; 5];
                for (k, &e) in chunk.iter().enumerate() {
                    let i = e as usize;
                    let Some(entry) = entries.get(i) else {
                        continue;
                    };
                    let labeled = check_labels && tree.labels.contains_key(entry.id.as_str());
                    let m = filter_mask(entry, Some(i) == leaf, labeled);
                    for (f, word) in w.iter_mut().enumerate() {
                        *word |= u64::from((m >> f) & 1) << k;
                    }
                }
                w
            })
            .collect();
        let bits = std::array::from_fn(|f| words.iter().map(|w| w[f]).collect());
        FilterBits { bits }
    }

    /// The bits of `filter`.
    pub fn of(&self, filter: Filter) -> &[u64] {
        &self.bits[filter.index()]
    }
}

/// Bit `p` of `bits`.
#[inline]
pub fn bit(bits: &[u64], p: usize) -> bool {
    bits.get(p / 64).is_some_and(|w| (w >> (p % 64)) & 1 != 0)
}

/// The first set bit of `bits` at or after `from`, below `n`.
#[inline]
pub fn next_bit(bits: &[u64], from: usize, n: usize) -> Option<usize> {
    if from >= n {
        return None;
    }
    let mut w = from / 64;
    let mut word = *bits.get(w)? & (!0u64 << (from % 64));
    loop {
        if word != 0 {
            let p = w * 64 + word.trailing_zeros() as usize;
            return (p < n).then_some(p);
        }
        w += 1;
        word = *bits.get(w)?;
    }
}

/// Bits of the positions `0..n` for which `f` holds.
pub(crate) fn bits_where(n: usize, mut f: impl FnMut(usize) -> bool) -> Vec<u64> {
    let mut bits = vec![0u64; n.div_ceil(64)];
    for p in 0..n {
        if f(p) {
            bits[p / 64] |= 1 << (p % 64);
        }
    }
    bits
}
