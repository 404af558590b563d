//! Which lines of a session an export may copy as they are.

use crate::jsonscan::Skim;

/// The fields [`crate::SessionTree`] is built from.
const TREE_KEYS: [&str; 7] = [
    "type",
    "id",
    "parentId",
    "timestamp",
    "targetId",
    "label",
    "name",
];

/// Whether the strict parser takes `line` as it is, so that its text is
/// exactly the entry (a JSON Lines export copies it verbatim). The list
/// scanner's skimmer validates exactly as strict serde_json does; it
/// refuses invalid UTF-8, a BOM, escaped or duplicate keys, surrogates,
/// deep nesting and what only JavaScript accepts.
pub(super) fn is_strict(line: &[u8]) -> bool {
    simdutf8::basic::from_utf8(line).ok().is_some_and(|text| {
        let keys = TREE_KEYS.map(str::as_bytes);
        let mut out: [Option<&str>; 7] = [None; 7];
        let mut sk = Skim::new(text);
        sk.object(0, &keys, &mut out).is_some() && sk.at_end()
    })
}
