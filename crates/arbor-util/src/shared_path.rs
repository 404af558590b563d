//! A session's path, allocated once and shared by everything that names
//! the session.
//!
//! The picker names each session by its path in its rows, its map from
//! path to row, each search snapshot, the scorer's positions and the
//! loader's record of what it sent: six copies of ~140 bytes each cost
//! ~90 MB at 100,000 sessions. A clone of a [`SharedPath`] is a count.

use std::borrow::Borrow;
use std::ffi::OsStr;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A path behind a reference count; compares, hashes and orders as the
/// [`Path`] it holds, so maps keyed by it are looked up with a `&Path`.
///
/// It is kept as an `Arc<OsStr>` (a `Path` is an `OsStr` by reference) so
/// that the index's searcher, which names sessions by `Arc<OsStr>`, can
/// share the picker's allocation rather than keep its own copy of every
/// path (~17 MB at 100,000 sessions).
#[derive(Clone)]
pub struct SharedPath(Arc<OsStr>);

impl SharedPath {
    pub fn as_path(&self) -> &Path {
        Path::new(&*self.0)
    }

    /// The shared allocation, for those who name the path as an `OsStr`.
    pub fn as_os_arc(&self) -> &Arc<OsStr> {
        &self.0
    }
}

impl Default for SharedPath {
    fn default() -> SharedPath {
        SharedPath(Arc::from(OsStr::new("")))
    }
}

impl PartialEq for SharedPath {
    fn eq(&self, other: &SharedPath) -> bool {
        self.as_path() == other.as_path()
    }
}

impl Eq for SharedPath {}

impl PartialOrd for SharedPath {
    fn partial_cmp(&self, other: &SharedPath) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedPath {
    fn cmp(&self, other: &SharedPath) -> std::cmp::Ordering {
        self.as_path().cmp(other.as_path())
    }
}

impl std::fmt::Debug for SharedPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_path().fmt(f)
    }
}

impl Hash for SharedPath {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // As `Path` does, so that `Borrow<Path>` lookups find it.
        self.as_path().hash(h)
    }
}

impl Deref for SharedPath {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.as_path()
    }
}

impl AsRef<Path> for SharedPath {
    fn as_ref(&self) -> &Path {
        self.as_path()
    }
}

impl AsRef<OsStr> for SharedPath {
    fn as_ref(&self) -> &OsStr {
        &self.0
    }
}

impl Borrow<Path> for SharedPath {
    fn borrow(&self) -> &Path {
        self.as_path()
    }
}

impl From<PathBuf> for SharedPath {
    fn from(p: PathBuf) -> SharedPath {
        SharedPath(Arc::from(p.into_os_string()))
    }
}

impl From<&Path> for SharedPath {
    fn from(p: &Path) -> SharedPath {
        SharedPath(Arc::from(p.as_os_str()))
    }
}

impl From<SharedPath> for PathBuf {
    fn from(p: SharedPath) -> PathBuf {
        p.as_path().to_path_buf()
    }
}

impl PartialEq<Path> for SharedPath {
    fn eq(&self, other: &Path) -> bool {
        self.as_path() == other
    }
}

impl PartialEq<PathBuf> for SharedPath {
    fn eq(&self, other: &PathBuf) -> bool {
        self.as_path() == other.as_path()
    }
}

impl serde::Serialize for SharedPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_path().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for SharedPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SharedPath, D::Error> {
        PathBuf::deserialize(d).map(SharedPath::from)
    }
}

/// A [`SharedPath`] keyed by its bytes: hashing a `Path` walks its
/// components, which the picker's per-keystroke lookups cannot afford.
/// Looked up with a `&OsStr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByBytes(pub SharedPath);

impl Hash for ByBytes {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // As `OsStr` does, so that `Borrow<OsStr>` lookups find it.
        self.0.as_os_str().hash(h)
    }
}

impl Borrow<OsStr> for ByBytes {
    fn borrow(&self) -> &OsStr {
        self.0.as_os_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn looked_up_by_path_and_by_bytes() {
        let p = SharedPath::from(PathBuf::from("/a/b/../c.jsonl"));
        let map: HashMap<SharedPath, u8> = [(p.clone(), 1)].into();
        assert_eq!(map.get(Path::new("/a/b/../c.jsonl")), Some(&1));
        // `Path` equality ignores a repeated separator; so does the map.
        assert_eq!(map.get(Path::new("/a//b/../c.jsonl")), Some(&1));
        let bytes: HashSet<ByBytes> = [ByBytes(p.clone())].into();
        assert!(bytes.contains(OsStr::new("/a/b/../c.jsonl")));
        assert!(!bytes.contains(OsStr::new("/a//b/../c.jsonl")));
        let clone = p.clone();
        assert!(std::ptr::eq(clone.as_path(), p.as_path()), "a clone shares");
        assert!(
            Arc::ptr_eq(clone.as_os_arc(), p.as_os_arc()),
            "one allocation for those who name it as an OsStr too"
        );
        // Ordered as paths are, by components, not by bytes ('-' < '/').
        let (nested, dashed) = (
            SharedPath::from(Path::new("/a/b")),
            SharedPath::from(Path::new("/a-b")),
        );
        assert!(nested < dashed);
        assert!(OsStr::new("/a/b") > OsStr::new("/a-b"));
        assert_eq!(SharedPath::from(Path::new("/a//b")), nested);
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<SharedPath>(&json).unwrap(), p);
    }
}
