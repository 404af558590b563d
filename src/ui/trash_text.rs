//! Trash failures as one human sentence. The `trash` crate's `Display`
//! prints its `Debug` form (`Error during a `trash` operation: FileSystem {
//! path: …, source: Os { code: 20, kind: NotADirectory, … } }`), which is
//! neither readable nor short enough to leave room for the question after it.

use std::path::{Path, PathBuf};

use super::text::short_home_in;

/// Why moving to (or restoring from) the trash failed, e.g. `cannot create
/// the trash folder ~/.local/share/Trash: not a directory`.
pub fn trash_error_text(e: &trash::Error) -> String {
    use trash::Error as E;
    match e {
        #[cfg(all(
            unix,
            not(target_os = "macos"),
            not(target_os = "ios"),
            not(target_os = "android")
        ))]
        E::FileSystem { path, source } => file_system_text(path, source),
        E::Unknown { description } | E::Os { description, .. } => sentence(description),
        E::TargetedRoot => "a root folder cannot be moved to the trash".into(),
        E::CouldNotAccess { target } => format!("cannot access {}", sentence(target)),
        E::CanonicalizePath { original } => {
            format!("cannot resolve the folder {}", shown(original))
        }
        E::ConvertOsString { .. } => "the path is not valid Unicode".into(),
        E::RestoreCollision { path, .. } => format!(
            "{} already exists; the session stays in the trash until that file is moved away",
            shown(path)
        ),
        E::RestoreTwins { path, .. } => format!(
            "the trash holds more than one copy of {}; restore the one you want from a file manager",
            shown(path)
        ),
        #[allow(unreachable_patterns)]
        _ => "the system trash reported an error".into(),
    }
}

/// A file-system error inside the trash folder (or on the file itself).
fn file_system_text(path: &Path, source: &std::io::Error) -> String {
    let why = io_reason(source);
    match trash_folder_of(path) {
        // The folder itself, or its `files`/`info` folders.
        Some(folder)
            if path
                .strip_prefix(&folder)
                .is_ok_and(|r| r.components().count() <= 1) =>
        {
            format!("cannot create the trash folder {}: {why}", shown(&folder))
        }
        Some(folder) => format!(
            "cannot write into the trash folder {}: {why}",
            shown(&folder)
        ),
        None => format!("cannot move {} to the trash: {why}", shown(path)),
    }
}

/// The trash folder `path` lies in (`…/Trash`, `…/.Trash-1000`, `…/.Trash/1000`).
fn trash_folder_of(path: &Path) -> Option<PathBuf> {
    let mut folder = PathBuf::new();
    let mut comps = path.components();
    while let Some(c) = comps.next() {
        folder.push(c);
        let name = c.as_os_str();
        if name == ".Trash" {
            // The per-volume `.Trash/$uid`: the uid folder is the trash.
            if let Some(uid) = comps.next() {
                folder.push(uid);
            }
            return Some(folder);
        }
        if name == "Trash" || name.to_string_lossy().starts_with(".Trash-") {
            return Some(folder);
        }
    }
    None
}

/// Why a session could not be restored from the trash.
pub fn restore_error_text(e: &arbor_session::fileops::RestoreError) -> String {
    use arbor_session::fileops::RestoreError as R;
    match e {
        R::Trash(e) => trash_error_text(e),
        R::NotInTrash => "the session is no longer in the trash".to_string(),
        R::Unsupported => {
            "this platform's trash cannot be restored from a program; use Finder's Put Back".into()
        }
        R::Note(e) => format!("cannot write arbor's note of the batch: {}", io_reason(e)),
    }
}

/// An I/O error's text without Rust's `(os error N)` tail, lowercased as
/// the middle of a sentence: `not a directory`.
pub fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(i) => &text[..i],
        None => &text,
    };
    sentence(text)
}

/// The first line of a message, sanitized, without a final period, first
/// letter lowercased (it follows a colon).
fn sentence(s: &str) -> String {
    let line = s.lines().next().unwrap_or("").trim();
    let line = super::text::sanitize_line(line.trim_end_matches('.'));
    let mut chars = line.chars();
    match chars.next() {
        Some(c) if chars.clone().next().is_some_and(|n| n.is_lowercase()) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => line,
    }
}

fn shown(p: &Path) -> String {
    super::text::sanitize_line(&short_home_in(
        &p.display().to_string(),
        dirs::home_dir().as_deref(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(all(
        unix,
        not(target_os = "macos"),
        not(target_os = "ios"),
        not(target_os = "android")
    ))]
    #[test]
    fn a_trash_folder_that_cannot_be_created_is_one_sentence() {
        let e = trash::Error::FileSystem {
            path: "/data/file/Trash".into(),
            source: std::io::Error::from_raw_os_error(20),
        };
        assert_eq!(
            trash_error_text(&e),
            "cannot create the trash folder /data/file/Trash: not a directory"
        );
        let e = trash::Error::FileSystem {
            path: "/data/Trash/info/x.jsonl.trashinfo".into(),
            source: std::io::Error::from_raw_os_error(13),
        };
        assert_eq!(
            trash_error_text(&e),
            "cannot write into the trash folder /data/Trash: permission denied"
        );
        let e = trash::Error::FileSystem {
            path: "/mnt/.Trash/1000/files".into(),
            source: std::io::Error::from_raw_os_error(28),
        };
        assert_eq!(
            trash_error_text(&e),
            "cannot create the trash folder /mnt/.Trash/1000: no space left on device"
        );
    }

    #[test]
    fn no_debug_text_in_any_variant() {
        let item = trash::TrashItem {
            id: "x".into(),
            name: "s.jsonl".into(),
            original_parent: "/p".into(),
            time_deleted: 0,
        };
        let all = [
            trash::Error::Unknown {
                description:
                    "Neither the XDG_DATA_HOME nor the HOME environment variable was found".into(),
            },
            trash::Error::Os {
                code: 5,
                description: "Access is denied.".into(),
            },
            trash::Error::TargetedRoot,
            trash::Error::CouldNotAccess {
                target: "/p/s.jsonl".into(),
            },
            trash::Error::CanonicalizePath {
                original: "/p".into(),
            },
            trash::Error::RestoreCollision {
                path: "/p/s.jsonl".into(),
                remaining_items: vec![item.clone()],
            },
            trash::Error::RestoreTwins {
                path: "/p/s.jsonl".into(),
                items: vec![item],
            },
        ];
        for e in &all {
            let t = trash_error_text(e);
            assert!(
                !t.contains('{') && !t.contains("Error") && !t.contains('\n'),
                "{t}"
            );
        }
        assert_eq!(
            trash_error_text(&all[5]),
            "/p/s.jsonl already exists; the session stays in the trash until that file is moved away"
        );
        assert_eq!(trash_error_text(&all[1]), "access is denied");
    }
}
