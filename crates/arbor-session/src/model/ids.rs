//! Entry ids: 8 lowercase hex characters, unique within a file.

use std::collections::HashSet;

/// A fresh random id not in `taken`.
pub(crate) fn new_entry_id(taken: &HashSet<&str>) -> String {
    loop {
        let bytes = uuid::Uuid::new_v4();
        let b = bytes.as_bytes();
        let id = format!("{:02x}{:02x}{:02x}{:02x}", b[0], b[1], b[2], b[3]);
        if !taken.contains(id.as_str()) {
            return id;
        }
    }
}

/// A deterministic id for a legacy (v1) entry, so that `arbor show` prints
/// the same ids on every run and `--leaf` works across invocations.
pub(crate) fn legacy_entry_id(session_id: &str, index: usize, attempt: u32) -> String {
    // FNV-1a: stable across platforms and Rust versions, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in session_id
        .bytes()
        .chain(index.to_le_bytes())
        .chain(attempt.to_le_bytes())
    {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{:08x}", (h ^ (h >> 32)) as u32)
}

/// A new UUIDv7 session id.
pub(crate) fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
