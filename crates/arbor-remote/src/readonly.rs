//! The mirror's files read-only between syncs. rsync writes a grown file
//! in place (`--append-verify`), which a 0400 file refuses to anyone but
//! root, so a sync makes its files 0600 first and 0400 again after, the
//! folders staying 0700 (nobody else can enter them meanwhile).

use std::path::Path;

/// Makes every regular file under `dir` 0400 (`readonly`) or 0600; links
/// are not followed (rsync makes none; anything else is left alone).
pub(crate) fn set(dir: &Path, readonly: bool) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = if readonly { 0o400 } else { 0o600 };
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let Ok(t) = e.file_type() else { continue };
                if t.is_dir() {
                    todo.push(e.path());
                } else if t.is_file() {
                    let _ =
                        std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(mode));
                }
            }
        }
    }
}
