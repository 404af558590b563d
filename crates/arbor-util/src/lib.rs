//! Small helpers shared by the CLI and the UI.

// Nothing from a file, the environment or the OS may panic the program;
// tests may unwrap freely.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod hash;
pub mod hosts;
pub mod intern;
pub mod memo;
pub mod memory;
pub mod prefetch;
pub mod shared_path;

/// A size as a person reads it, in powers of 1,000: `930 B`, `21.5 kB`,
/// `3.4 MB`, `1.15 GB`.
pub fn human_bytes(b: u64) -> String {
    let f = b as f64;
    if f >= 1e9 {
        format!("{:.2} GB", f / 1e9)
    } else if f >= 1e6 {
        format!("{:.1} MB", f / 1e6)
    } else if f >= 1e3 {
        format!("{:.1} kB", f / 1e3)
    } else {
        format!("{b} B")
    }
}

/// Where the first `n` characters of `s` end (all of `s` when it has no
/// more). Asked of every row's first message as a picker loads: walking
/// 500 characters one at a time was half of making a search document; a
/// text of at most `n` bytes, or of ASCII ones, needs no walk.
pub fn chars_end(s: &str, n: usize) -> usize {
    if s.len() <= n {
        return s.len();
    }
    if s.as_bytes()[..n].is_ascii() {
        return n;
    }
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// A file's folder and name, split at its last `/`: what `parent` and
/// `file_name` give for a session's path, without parsing every component
/// of it (a load of 100,000 sessions asks for both of every file, twice).
/// A path they would see otherwise (a trailing `/`, `.` or `..`, no
/// folder) is left to them.
#[cfg(unix)]
pub fn dir_and_name(path: &std::path::Path) -> Option<(&std::path::Path, &std::ffi::OsStr)> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let cut = bytes.iter().rposition(|&b| b == b'/')?;
    let (dir, name) = (&bytes[..cut], &bytes[cut + 1..]);
    if dir.is_empty() || name.is_empty() || name == b"." || name == b".." || dir.ends_with(b"/") {
        return path.parent().zip(path.file_name());
    }
    Some((
        std::path::Path::new(std::ffi::OsStr::from_bytes(dir)),
        std::ffi::OsStr::from_bytes(name),
    ))
}

#[cfg(not(unix))]
pub fn dir_and_name(path: &std::path::Path) -> Option<(&std::path::Path, &std::ffi::OsStr)> {
    path.parent().zip(path.file_name())
}

/// Atomic's compact age: `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `2y`.
pub fn age(now_ms: i64, then_ms: i64) -> String {
    let secs = (now_ms - then_ms).max(0) / 1000;
    let mins = secs / 60;
    let hours = mins / 60;
    let days = hours / 24;
    if mins < 1 {
        "now".into()
    } else if hours < 1 {
        format!("{mins}m")
    } else if days < 1 {
        format!("{hours}h")
    } else if days < 7 {
        format!("{days}d")
    } else if days < 30 {
        format!("{}w", days / 7)
    } else if days < 365 {
        format!("{}mo", days / 30)
    } else {
        format!("{}y", days / 365)
    }
}

#[cfg(test)]
mod tests {
    use super::{age, chars_end};

    #[test]
    fn dir_and_name_as_parent_and_file_name() {
        use std::path::Path;
        for p in [
            "/a/b/c.jsonl",
            "/c.jsonl",
            "a/b",
            "b",
            "/",
            "",
            "/a/b/",
            "/a//b",
            "/a/./b",
            "/a/b/..",
            "/a/b/.",
            "//x",
            "/a/ñ/数.jsonl",
        ] {
            let p = Path::new(p);
            let fast = super::dir_and_name(p);
            match p.parent().zip(p.file_name()) {
                // What they say of a path of a folder and a name.
                Some((dir, name)) if dir != Path::new("") => {
                    let (d, n) = fast.unwrap_or_else(|| panic!("{}", p.display()));
                    assert_eq!((d, n), (dir, name), "{}", p.display());
                }
                // No folder: the caller looks at the whole path.
                _ => assert!(
                    fast.is_none_or(|(d, _)| d == Path::new("")),
                    "{}",
                    p.display()
                ),
            }
        }
    }

    #[test]
    fn chars_end_as_a_walk_of_the_characters() {
        let walked = |s: &str, n: usize| s.char_indices().nth(n).map_or(s.len(), |(i, _)| i);
        for s in [
            "",
            "abc",
            "abcdef",
            "añb",
            "ñññ",
            "aaaé",
            "数据管道数据",
            "ab\u{301}cd",
        ] {
            for n in 0..8 {
                assert_eq!(chars_end(s, n), walked(s, n), "{s:?} {n}");
            }
        }
    }

    #[test]
    fn ages() {
        let m = 60_000;
        assert_eq!(age(0, 0), "now");
        assert_eq!(age(5 * m, 0), "5m");
        assert_eq!(age(3 * 60 * m, 0), "3h");
        assert_eq!(age(2 * 1440 * m, 0), "2d");
        assert_eq!(age(8 * 1440 * m, 0), "1w");
        assert_eq!(age(130 * 1440 * m, 0), "4mo");
        assert_eq!(age(800 * 1440 * m, 0), "2y");
    }
}
pub mod log;
