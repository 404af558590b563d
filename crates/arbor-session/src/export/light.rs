//! The first pass of an export: each entry with only the tree's fields, so
//! that only the branch's entries are parsed whole.

use serde_json::{Map, Value};

use crate::entry::{Entry, Header};
use crate::jsonscan::Skim;
use crate::reader::parse_object;

/// The fields [`SessionTree`] is built from.
const TREE_KEYS: [&str; 7] = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "targetId",
    "label",
    "name",
];

/// A session's entries with only the tree's fields, and where each line is.
pub(super) struct Light {
    pub(super) header: Header,
    pub(super) entries: Vec<Entry>,
    /// Byte range of each entry's line, and whether the strict parser read
    /// it as it is (then its text is exactly the entry).
    pub(super) lines: Vec<(usize, usize, bool)>,
}

/// The first pass over a version 3 file: the same lines as the reader
/// keeps, each entry holding only [`TREE_KEYS`], so that
/// [`SessionTree::from_entries`] builds exactly the tree a full read gives.
/// A line the skimmer refuses (invalid UTF-8, a BOM, escaped or duplicate
/// keys, surrogates, deep nesting, what only JavaScript accepts) is parsed
/// as the reader parses it. `None` when the file needs the full reader (no header, or a
/// version that needs migrating).
pub(super) fn light_scan(buf: &[u8]) -> Option<Light> {
    let mut header: Option<Header> = None;
    let mut entries = Vec::new();
    let mut lines = Vec::new();
    let base = buf.as_ptr() as usize;
    for (line, _) in crate::reader::lines(buf) {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let start = line.as_ptr() as usize - base;
        let end = start + line.len();
        if header.is_none() {
            let mut lossy = false;
            let Some(obj) = parse_object(line, &mut lossy) else {
                continue;
            };
            let h = Header::from_object(obj)?;
            if h.version < 3 {
                return None;
            }
            header = Some(h);
            continue;
        }
        // The list scanner's skimmer validates exactly as strict serde_json
        // does and captures the fields' raw text without decoding the rest.
        let probe = simdutf8::basic::from_utf8(line).ok().and_then(|text| {
            let keys = TREE_KEYS.map(str::as_bytes);
            let mut out: [Option<&str>; 7] = [None; 7];
            let mut sk = Skim::new(text);
            sk.object(0, &keys, &mut out)?;
            sk.at_end().then_some(out)
        });
        let raw: Map<String, Value> = match &probe {
            Some(fields) => {
                let mut m = Map::new();
                for (k, v) in TREE_KEYS.iter().zip(fields) {
                    if let Some(v) = v.and_then(|v| serde_json::from_str::<Value>(v).ok()) {
                        m.insert((*k).to_string(), v);
                    }
                }
                m
            }
            None => {
                let mut lossy = false;
                let Some(obj) = parse_object(line, &mut lossy) else {
                    continue;
                };
                TREE_KEYS
                    .iter()
                    .filter_map(|k| Some(((*k).to_string(), obj.get(*k)?.clone())))
                    .collect()
            }
        };
        entries.push(Entry::new(entries.len() + 1, raw));
        lines.push((start, end, probe.is_some()));
    }
    Some(Light {
        header: header?,
        entries,
        lines,
    })
}
