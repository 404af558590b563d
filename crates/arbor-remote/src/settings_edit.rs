//! `arbor remote add` and `remove`: one `[[remote]]` table added to or
//! removed from arbor's settings file, edited in place so that the user's
//! other lines, comments and order stay as they were, and written
//! atomically (a temporary file beside it, renamed over it).

use std::path::Path;

use toml_edit::{value, Array, ArrayOfTables, DocumentMut, Item, Table};

use crate::{Remote, RemoteError};

/// `text` with a `[[remote]]` table for `remote` appended.
pub fn add_remote(text: &str, remote: &Remote, path: &Path) -> Result<String, RemoteError> {
    remote.validate()?;
    let mut doc = parse(text, path)?;
    let list = remotes_mut(&mut doc, path)?;
    if list
        .iter()
        .any(|t| t.get("name").and_then(Item::as_str) == Some(remote.name.as_str()))
    {
        return Err(RemoteError::AlreadyExists(remote.name.clone()));
    }
    list.push(table_of(remote));
    Ok(doc.to_string())
}

/// `text` without the `[[remote]]` table named `name`.
pub fn remove_remote(text: &str, name: &str, path: &Path) -> Result<String, RemoteError> {
    let mut doc = parse(text, path)?;
    let list = remotes_mut(&mut doc, path)?;
    let at = list
        .iter()
        .position(|t| t.get("name").and_then(Item::as_str) == Some(name))
        .ok_or_else(|| RemoteError::NoSuchRemote(name.to_string()))?;
    list.remove(at);
    if list.is_empty() {
        doc.remove("remote");
    }
    Ok(doc.to_string())
}

/// Writes the settings file `path` with `text` atomically. A link there
/// (settings kept in a dotfiles folder) is followed once, to the file it
/// names, which is replaced; the folder is created when missing.
pub fn write_settings(path: &Path, text: &str) -> Result<(), RemoteError> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|e| RemoteError::io(path, e))?
        }
        _ => path.to_path_buf(),
    };
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        arbor_session::fileops::create_folders(dir).map_err(|e| RemoteError::io(dir, e))?;
    }
    arbor_session::fileops::write_atomic(&target, text.as_bytes())
        .map_err(|e| RemoteError::io(&target, e))
}

fn parse(text: &str, path: &Path) -> Result<DocumentMut, RemoteError> {
    text.parse::<DocumentMut>()
        .map_err(|e| RemoteError::SettingsFile {
            path: path.to_path_buf(),
            why: format!(
                "{}; it was left as it is",
                e.message().split_whitespace().collect::<Vec<_>>().join(" ")
            ),
        })
}

fn remotes_mut<'a>(
    doc: &'a mut DocumentMut,
    path: &Path,
) -> Result<&'a mut ArrayOfTables, RemoteError> {
    let item = doc
        .entry("remote")
        .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()));
    item.as_array_of_tables_mut()
        .ok_or_else(|| RemoteError::SettingsFile {
            path: path.to_path_buf(),
            why: "\"remote\" is not a list of [[remote]] tables; it was left as it is".into(),
        })
}

fn table_of(r: &Remote) -> Table {
    let mut t = Table::new();
    t["name"] = value(&r.name);
    if let Some(d) = &r.dest {
        t["ssh"] = value(d);
    }
    if let Some(tr) = &r.transport {
        t["transport"] = value(tr);
    }
    if !r.agents.is_empty() {
        t["agents"] = value(r.agents.iter().map(|a| a.name()).collect::<Array>());
    }
    if !r.paths.is_empty() {
        t["paths"] = value(r.paths.iter().map(String::as_str).collect::<Array>());
    }
    if let Some(s) = r.timeout_secs {
        t["timeout"] = value(i64::try_from(s).unwrap_or(i64::MAX));
    }
    if let Some(c) = &r.ssh {
        t["ssh_command"] = value(c);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbor_session::Agent;

    const FILE: &str = "# my settings\ntheme = \"dark\" # the best one\n\n[resume]\n# keep verbose\nclaude = \"claude --resume={id} --verbose\"\n";

    fn devbox() -> Remote {
        Remote {
            name: "devbox".into(),
            dest: Some("me@devbox".into()),
            agents: vec![Agent::Atomic, Agent::Claude],
            paths: vec!["~/work/sessions".into()],
            ..Remote::default()
        }
    }

    #[test]
    fn adding_keeps_every_other_line_and_comment() {
        let p = Path::new("/c/config.toml");
        let out = add_remote(FILE, &devbox(), p).unwrap();
        assert!(out.starts_with(FILE), "{out}");
        assert_eq!(
            &out[FILE.len()..],
            "\n[[remote]]\nname = \"devbox\"\nssh = \"me@devbox\"\nagents = [\"atomic\", \"claude\"]\npaths = [\"~/work/sessions\"]\n"
        );
        assert!(matches!(
            add_remote(&out, &devbox(), p),
            Err(RemoteError::AlreadyExists(_))
        ));
        let back = remove_remote(&out, "devbox", p).unwrap();
        assert_eq!(back.trim_end(), FILE.trim_end());
        assert!(matches!(
            remove_remote(FILE, "devbox", p),
            Err(RemoteError::NoSuchRemote(_))
        ));
    }

    #[test]
    fn removing_one_of_two_keeps_the_other() {
        let p = Path::new("/c/config.toml");
        let other = Remote {
            name: "box2".into(),
            transport: Some("docker exec -i box2".into()),
            ..Remote::default()
        };
        let two = add_remote(&add_remote(FILE, &devbox(), p).unwrap(), &other, p).unwrap();
        let one = remove_remote(&two, "devbox", p).unwrap();
        assert!(
            one.contains("name = \"box2\"") && !one.contains("devbox"),
            "{one}"
        );
        assert!(one.starts_with(FILE), "{one}");
    }

    #[test]
    fn a_broken_file_is_left_alone() {
        let p = Path::new("/c/config.toml");
        assert!(matches!(
            add_remote("theme = = 1", &devbox(), p),
            Err(RemoteError::SettingsFile { .. })
        ));
        assert!(matches!(
            add_remote("remote = 1", &devbox(), p),
            Err(RemoteError::SettingsFile { .. })
        ));
    }

    #[test]
    fn writing_replaces_the_file_and_follows_a_link_once() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("dotfiles/config.toml");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "theme = \"dark\"\n").unwrap();
        let link = d.path().join("config.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_settings(&link, "theme = \"light\"\n").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(
            std::fs::read_to_string(&real).unwrap(),
            "theme = \"light\"\n"
        );
        let fresh = d.path().join("new/arbor/config.toml");
        write_settings(&fresh, "x = 1\n").unwrap();
        assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "x = 1\n");
    }
}
