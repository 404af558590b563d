//! The listed files' keys (their paths' bytes, the table's order) and the
//! folder ranges a refresh or a listing is limited to.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::Path;

use rayon::prelude::*;

use crate::db::Keys;
use arbor_store::scan::SessionFile;
use arbor_util::hash::bytes_hash;

/// Ranges of stored paths, `from..to` (see [`folder_ranges`]).
pub type FolderRanges = [(Vec<u8>, Vec<u8>)];

/// [`FolderRanges`] as an index keeps them for the searches after a
/// refresh (`Index::set_folders_only`).
pub type SharedFolders = std::sync::Arc<Vec<(Vec<u8>, Vec<u8>)>>;

/// The ranges of stored paths (keys) under the folders of `keys`, in
/// order, none inside another: a folder `f` is `f/` up to `f0` (the byte
/// after the separator), so what lies in a folder below it is in its range.
pub(crate) fn folder_ranges(keys: &[Cow<[u8]>]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let is_sep = |b: &u8| *b == b'/' || (cfg!(windows) && *b == b'\\');
    let mut folders: Vec<&[u8]> = Vec::new();
    for key in keys {
        let Some(i) = key.iter().rposition(is_sep) else {
            continue;
        };
        let folder = &key[..=i];
        // Listed files come folder by folder.
        if folders.last() != Some(&folder) {
            folders.push(folder);
        }
    }
    ranges_of(folders)
}

/// [`folder_ranges`] of these folders themselves.
pub(crate) fn dir_ranges(dirs: &[std::path::PathBuf]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut k = Keys::new();
    let sep = std::path::MAIN_SEPARATOR as u8;
    let keys: Vec<Vec<u8>> = dirs
        .iter()
        .map(|d| {
            let mut key = k.key(d).into_owned();
            while key.last() == Some(&sep) {
                key.pop();
            }
            key.push(sep);
            key
        })
        .collect();
    ranges_of(keys.iter().map(Vec::as_slice).collect())
}

/// Folders' keys, each ending with its separator, as ranges.
fn ranges_of(mut folders: Vec<&[u8]>) -> Vec<(Vec<u8>, Vec<u8>)> {
    folders.sort_unstable();
    folders.dedup();
    let mut ranges: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for folder in folders {
        if ranges
            .last()
            .is_some_and(|(from, _)| folder.starts_with(from))
        {
            continue;
        }
        let mut to = folder.to_vec();
        if let Some(sep) = to.last_mut() {
            *sep += 1;
        }
        ranges.push((folder.to_vec(), to));
    }
    ranges
}

/// The keys of `files` (see [`Keys::key`]), borrowed where they can be.
pub fn file_keys(files: &[SessionFile]) -> Vec<Cow<'_, [u8]>> {
    let mut k = Keys::new();
    files.iter().map(|f| k.key(&f.path)).collect()
}

/// Listed files by their keys, to match stored rows with as they are read.
pub struct ListedKeys<'f> {
    pub(super) files: &'f [SessionFile],
    keys: &'f [Cow<'f, [u8]>],
    /// Positions in `files`, placed by their keys' hashes: made on all
    /// cores first, so the table's one thread only places them (~20 ms of
    /// a load's critical path at 100,000 files).
    by_key: hashbrown::HashTable<u32>,
    /// Positions of files listed again later (rare: overlapping roots),
    /// which a key never stands for.
    shadowed: HashSet<u32>,
}

impl<'f> ListedKeys<'f> {
    /// `keys` are those of `files` ([`file_keys`]).
    pub fn new(files: &'f [SessionFile], keys: &'f [Cow<'f, [u8]>]) -> ListedKeys<'f> {
        let hashes: Vec<u64> = keys.par_iter().map(|k| bytes_hash(k)).collect();
        Self::with_hashes(files, keys, hashes)
    }

    /// [`ListedKeys::new`] on this thread alone: beside the stats, which
    /// hold every thread of rayon's pool, the keys' hashes waited for them
    /// (a warm `list` at 100,000 sessions, 0.48 -> 0.53 s).
    pub(super) fn new_here(files: &'f [SessionFile], keys: &'f [Cow<'f, [u8]>]) -> ListedKeys<'f> {
        let hashes: Vec<u64> = keys.iter().map(|k| bytes_hash(k)).collect();
        Self::with_hashes(files, keys, hashes)
    }

    fn with_hashes(
        files: &'f [SessionFile],
        keys: &'f [Cow<'f, [u8]>],
        hashes: Vec<u64>,
    ) -> ListedKeys<'f> {
        let mut by_key = hashbrown::HashTable::with_capacity(keys.len());
        let mut shadowed = HashSet::new();
        for (i, &hash) in hashes.iter().enumerate() {
            // A file listed twice is matched as its last listing (as a map
            // of the keys would).
            let same = |&j: &u32| keys[j as usize] == keys[i];
            match by_key.find_mut(hash, same) {
                Some(at) => {
                    shadowed.insert(*at);
                    *at = i as u32;
                }
                None => {
                    by_key.insert_unique(hash, i as u32, |&j| hashes[j as usize]);
                }
            }
        }
        ListedKeys {
            files,
            keys,
            by_key,
            shadowed,
        }
    }

    /// [`ListedKeys::get`], trying first the files after the last few
    /// found: the listing is in the paths' order (see
    /// `store::scan::list_store`), and so are the rows of an index built in
    /// one go (see [`read_order`]; a run per parse worker, interleaved) or
    /// of sessions added one after another in a folder, so most rows are
    /// the file after one found just before. At 100,000 sessions, hashing
    /// each stored row's path, looking it up and comparing the paths was
    /// 5-10 % of the picker's load (perf).
    pub(super) fn get_after(&self, key: &[u8], next: &mut Cursors) -> Option<u32> {
        // Rows in no order (an index built before it read files in their
        // paths' order) try only the last one's next: each try there is a
        // cache miss or two.
        let tries = match next.misses > 2 * next.hits + 64 {
            true => 1,
            false => next.at.len(),
        };
        let hit = next.at[..tries].iter().position(|&at| {
            self.keys
                .get(at as usize)
                .is_some_and(|k| k.as_ref() == key && !self.shadowed.contains(&at))
        });
        let (slot, i) = match hit {
            Some(slot) => {
                next.hits += 1;
                (slot, next.at[slot])
            }
            // The oldest cursor makes room.
            None => {
                next.misses += 1;
                (next.at.len() - 1, self.get(key)?)
            }
        };
        // Most recently used first.
        next.at.copy_within(0..slot, 1);
        next.at[0] = i + 1;
        Some(i)
    }

    /// Which listed file the stored row of `key` is.
    fn get(&self, key: &[u8]) -> Option<u32> {
        let keys = self.keys;
        self.by_key
            .find(bytes_hash(key), |&i| keys[i as usize].as_ref() == key)
            .copied()
    }

    /// Which listed file `path` is.
    pub fn find(&self, path: &Path) -> Option<usize> {
        let key = Keys::new().key(path);
        self.get(&key).map(|i| i as usize)
    }
}

/// Where [`ListedKeys::get_after`] looks first: after the files it found
/// last, one per run of rows in order (as many as the parse workers that
/// may have written them).
#[derive(Default)]
pub(super) struct Cursors {
    at: [u32; 4],
    hits: u32,
    misses: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    #[test]
    fn folder_ranges_cover_each_folder_once_and_nothing_beside_it() {
        let keys: Vec<std::borrow::Cow<[u8]>> = [
            "/s/b/x/3.jsonl",
            "/s/a/1.jsonl",
            "/s/a/2.jsonl",
            "/s/b/4.jsonl",
            "/s/ab/5.jsonl",
        ]
        .iter()
        .map(|k| std::borrow::Cow::Borrowed(k.as_bytes()))
        .collect();
        let ranges: Vec<(String, String)> = super::folder_ranges(&keys)
            .into_iter()
            .map(|(a, b)| (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap()))
            .collect();
        let want = [("/s/a/", "/s/a0"), ("/s/ab/", "/s/ab0"), ("/s/b/", "/s/b0")];
        assert_eq!(ranges, want.map(|(a, b)| (a.to_string(), b.to_string())));
        // A key is in a range exactly when it lies under that folder.
        for (key, inside) in [
            ("/s/a/9.jsonl", Some(0)),
            ("/s/a-b/9.jsonl", None),
            ("/s/a.b/9.jsonl", None),
            ("/s/ab/deep/9.jsonl", Some(1)),
            ("/s/b/x/y/9.jsonl", Some(2)),
            ("/s/ba/9.jsonl", None),
            ("/s/9.jsonl", None),
        ] {
            let found = ranges
                .iter()
                .position(|(from, to)| key >= from.as_str() && key < to.as_str());
            assert_eq!(found, inside, "{key}");
        }
    }

    /// Looked up after the last few found or by hash, a key gives the file
    /// a plain lookup gives: rows in order, two runs interleaved, shuffled,
    /// keys not listed, and a file listed twice (its last listing).
    #[test]
    fn a_lookup_after_the_last_found_gives_what_a_plain_one_gives() {
        let file = |p: String| SessionFile {
            path: PathBuf::from(p),
            agent: arbor_session::agent::Agent::Atomic,
        };
        let mut files: Vec<SessionFile> = (0..40)
            .map(|i| file(format!("/s/p/{i:03}.jsonl")))
            .collect();
        files.push(file("/s/p/005.jsonl".into()));
        files.push(file("/s/p/041.jsonl".into()));
        let keys = file_keys(&files);
        let listed = ListedKeys::new(&files, &keys);
        let mut asked: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        asked.push(b"/s/p/999.jsonl".to_vec());
        let (a, b) = asked.split_at(21);
        let interleaved: Vec<Vec<u8>> = a
            .iter()
            .zip(b)
            .flat_map(|(x, y)| [x.clone(), y.clone()])
            .collect();
        let mut shuffled = asked.clone();
        shuffled.sort_by_key(|k| arbor_util::hash::bytes_hash(k));
        for order in [asked.clone(), interleaved, shuffled] {
            let mut next = Cursors::default();
            for k in &order {
                assert_eq!(listed.get_after(k, &mut next), listed.get(k), "{k:?}");
            }
        }
        let mut next = Cursors::default();
        assert_eq!(listed.get_after(&keys[5], &mut next), Some(40));
        assert_eq!(listed.get_after(b"/s/p/999.jsonl", &mut next), None);
    }
}
