//! An entry's id in 16 bytes: a session of a million entries holds two
//! million of them (each entry's id and its parent's).
//!
//! An id of up to 14 bytes (Atomic's are 8) is held inline; a longer one
//! (another agent's UUID) behind one pointer. A `String` took 24 bytes and
//! an allocation for every id.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Bytes held inline.
const INLINE: usize = 14;

/// An id: a string that derefs to `str` and hashes, compares and prints
/// as one.
#[derive(Clone)]
pub struct EntryId(Repr);

#[derive(Clone)]
enum Repr {
    Inline {
        len: u8,
        bytes: [u8; INLINE],
    },
    // A box of a `String` (one pointer) keeps the whole id 16 bytes: a
    // `String` or a `Box<str>` here would make it 24.
    #[allow(clippy::box_collection, reason = "a thin pointer: see above")]
    Heap(Box<String>),
}

impl EntryId {
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                // Copied whole from a `str` in `From<&str>`: always UTF-8.
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
            Repr::Heap(s) => s,
        }
    }
}

impl From<&str> for EntryId {
    fn from(s: &str) -> EntryId {
        if s.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..s.len()].copy_from_slice(s.as_bytes());
            EntryId(Repr::Inline {
                len: s.len() as u8,
                bytes,
            })
        } else {
            EntryId(Repr::Heap(Box::new(s.to_string())))
        }
    }
}

impl From<String> for EntryId {
    fn from(s: String) -> EntryId {
        if s.len() <= INLINE {
            EntryId::from(s.as_str())
        } else {
            EntryId(Repr::Heap(Box::new(s)))
        }
    }
}

impl From<EntryId> for String {
    fn from(id: EntryId) -> String {
        match id.0 {
            Repr::Heap(s) => *s,
            inline => EntryId(inline).as_str().to_string(),
        }
    }
}

impl Deref for EntryId {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for EntryId {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for EntryId {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl Hash for EntryId {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // As `str` hashes: `Borrow<str>` lookups find it.
        self.as_str().hash(h);
    }
}

impl PartialEq for EntryId {
    fn eq(&self, other: &EntryId) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for EntryId {}

impl PartialOrd for EntryId {
    fn partial_cmp(&self, other: &EntryId) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for EntryId {
    fn cmp(&self, other: &EntryId) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialEq<str> for EntryId {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for EntryId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for EntryId {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<EntryId> for str {
    fn eq(&self, other: &EntryId) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<EntryId> for &str {
    fn eq(&self, other: &EntryId) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<EntryId> for String {
    fn eq(&self, other: &EntryId) -> bool {
        self == other.as_str()
    }
}

impl fmt::Display for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for EntryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl serde::Serialize for EntryId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_ids_read_back_in_16_bytes() {
        assert_eq!(std::mem::size_of::<EntryId>(), 16);
        assert_eq!(std::mem::size_of::<Option<EntryId>>(), 16);
        for s in [
            "",
            "0000abcd",
            "é1234567890123",
            "0193a000-0000-7000-8000-000000000001",
        ] {
            let id = EntryId::from(s);
            assert_eq!(id.as_str(), s);
            assert_eq!(EntryId::from(s.to_string()), id);
            assert_eq!(String::from(id.clone()), s);
            assert_eq!(id.to_string(), s);
            assert_eq!(format!("{id:?}"), format!("{s:?}"));
        }
        let mut set = std::collections::HashSet::new();
        set.insert(EntryId::from("0000abcd"));
        assert!(set.contains("0000abcd"));
    }
}
