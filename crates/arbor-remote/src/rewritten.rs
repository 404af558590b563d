//! Which mirrored files the second pass of a sync copies: those the
//! first (`--append-verify`) pass neither copied nor found unchanged.
//! Such a file was rewritten on the remote without growing, which an
//! append skips. Anything else a name could hide (a byte rsync prints
//! differently, a file the remote no longer has) only puts a file on the
//! list for nothing; a file rewritten is never left off it.

use std::collections::HashSet;
use std::path::Path;

use crate::RemoteError;

/// Writes the list (paths relative to `dest`, each ended by a NUL, for
/// `--from0 --files-from`) to `list`; false, and no list, when there is
/// nothing to copy.
pub(crate) fn write_list(dest: &Path, seen: &[String], list: &Path) -> Result<bool, RemoteError> {
    let seen: HashSet<Vec<u8>> = seen.iter().map(|n| unescape(n)).collect();
    let mut out = Vec::new();
    let mut todo = vec![dest.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(t) = e.file_type() else { continue };
            let path = e.path();
            if t.is_dir() {
                todo.push(path);
            } else if t.is_file() {
                let Ok(rel) = path.strip_prefix(dest) else {
                    continue;
                };
                let rel = rel.as_os_str().as_encoded_bytes();
                if !seen.contains(rel) {
                    out.extend_from_slice(rel);
                    out.push(0);
                }
            }
        }
    }
    if out.is_empty() {
        crate::mirror_files::remove(list);
        return Ok(false);
    }
    arbor_session::fileops::write_atomic(list, &out).map_err(|e| RemoteError::io(list, e))?;
    Ok(true)
}

/// A name as rsync prints it, back to its bytes: `\#ooo` (three octal
/// digits) is a byte it does not print as is.
fn unescape(name: &str) -> Vec<u8> {
    let b = name.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'#') {
            if let Some(byte) = b
                .get(i + 2..i + 5)
                .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)))
                .and_then(|d| u8::from_str_radix(std::str::from_utf8(d).ok()?, 8).ok())
            {
                out.push(byte);
                i += 5;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_back_to_their_bytes() {
        assert_eq!(unescape("a/new\\#012line"), b"a/new\nline");
        assert_eq!(unescape("plain é"), "plain é".as_bytes());
        assert_eq!(unescape("odd\\#9"), b"odd\\#9");
    }

    #[test]
    fn the_list_holds_the_files_neither_copied_nor_unchanged() {
        let d = tempfile::tempdir().unwrap();
        let dest = d.path().join("home");
        std::fs::create_dir_all(dest.join("s/p")).unwrap();
        for f in ["s/p/copied", "s/p/same", "s/p/re\nwritten"] {
            std::fs::write(dest.join(f), "x").unwrap();
        }
        let list = d.path().join("list");
        let seen = ["s/p/copied".to_string(), "s/p/same".to_string()];
        assert!(write_list(&dest, &seen, &list).unwrap());
        assert_eq!(std::fs::read(&list).unwrap(), b"s/p/re\nwritten\0");
        let all = [
            seen[0].clone(),
            seen[1].clone(),
            "s/p/re\\#012written".to_string(),
        ];
        assert!(!write_list(&dest, &all, &list).unwrap());
        assert!(!list.exists());
    }
}
