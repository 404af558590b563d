//! Version 1 and 2 files migrated in memory to version 3: ids and parent
//! links given, then the v2 → v3 renames.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::entry::{Entry, Header};
use crate::ids::legacy_entry_id;

use super::tolerant::lines;
use super::{parse_line, Diagnostics};

/// The entries of a version 1 or 2 file, parsed and migrated in memory
/// (and of any file, for [`parse_session_eager`]).
pub(super) fn parse_legacy(
    header: &Header,
    body: &[u8],
    diagnostics: &mut Diagnostics,
) -> Vec<Entry> {
    let mut raw_entries: Vec<Map<String, Value>> = Vec::new();
    for (line, newline) in lines(body) {
        let Some(obj) = parse_line(line, newline, diagnostics) else {
            continue;
        };
        raw_entries.push(obj);
    }
    if header.version < 2 {
        migrate_v1(&header.id, &mut raw_entries);
    }
    if header.version < 3 {
        migrate_v2(&mut raw_entries);
    }
    raw_entries
        .into_iter()
        .enumerate()
        .map(|(i, raw)| Entry::new(i + 1, raw))
        .collect()
}

/// v1 → v2: ids, a linear parent chain, and index-based compaction pointers.
pub(crate) fn migrate_v1(session_id: &str, entries: &mut [Map<String, Value>]) {
    let mut taken: HashSet<String> = entries
        .iter()
        .filter_map(|e| e.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    let mut ids = Vec::with_capacity(entries.len());
    for (i, e) in entries.iter_mut().enumerate() {
        let id = match e.get("id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => {
                let mut attempt = 0;
                loop {
                    let candidate = legacy_entry_id(session_id, i + 1, attempt);
                    if taken.insert(candidate.clone()) {
                        break candidate;
                    }
                    attempt += 1;
                }
            }
        };
        ids.push(id);
    }
    for i in 0..entries.len() {
        let parent = if i == 0 {
            Value::Null
        } else {
            Value::String(ids[i - 1].clone())
        };
        let e = &mut entries[i];
        e.insert("id".into(), Value::String(ids[i].clone()));
        e.insert("parentId".into(), parent);
        if e.get("type").and_then(Value::as_str) == Some("compaction") {
            // The index counts the header as line 0, so entry k sits at index k.
            if let Some(idx) = e.get("firstKeptEntryIndex").and_then(Value::as_u64) {
                let target = (idx as usize).checked_sub(1).and_then(|k| ids.get(k));
                if let Some(target) = target {
                    e.insert("firstKeptEntryId".into(), Value::String(target.clone()));
                }
                e.shift_remove("firstKeptEntryIndex");
            }
        }
    }
}

/// v2 → v3: the `hookMessage` role became `custom`.
pub(crate) fn migrate_v2(entries: &mut [Map<String, Value>]) {
    for e in entries {
        if let Some(Value::Object(m)) = e.get_mut("message") {
            if m.get("role").and_then(Value::as_str) == Some("hookMessage") {
                m.insert("role".into(), Value::String("custom".into()));
            }
        }
    }
}
