//! The Atomic agent's own folder and the `theme` its `settings.json` picks.

use std::path::{Path, PathBuf};

/// The agent dir as Atomic finds it (see [`arbor_store::paths::agent_dir`]),
/// from these variables and home.
pub fn agent_dir(var: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> PathBuf {
    struct Given<'a> {
        var: &'a dyn Fn(&str) -> Option<String>,
        home: Option<&'a Path>,
    }
    impl arbor_store::paths::Env for Given<'_> {
        fn var(&self, key: &str) -> Option<String> {
            (self.var)(key)
        }
        fn home(&self) -> Option<PathBuf> {
            self.home.map(Path::to_path_buf)
        }
    }
    arbor_store::paths::agent_dir(&Given { var, home })
        .unwrap_or_else(|| PathBuf::from(".atomic/agent"))
}

/// The `theme` of `<agent dir>/settings.json`: `Ok(None)` when the file or
/// the key is absent, `Err` (one line) when the file cannot be read as JSON.
pub fn settings_theme(agent_dir: &Path) -> Result<Option<String>, String> {
    let path = agent_dir.join("settings.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", crate::term::path(&path))),
    };
    let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{}: not JSON ({e}); its theme is not used",
            crate::term::path(&path)
        )
    })?;
    match json.get("theme") {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!(
            "{}: \"theme\" is not a string; it is not used",
            crate::term::path(&path)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_dir_and_its_theme() {
        let home = tempfile::tempdir().unwrap();
        let none = |_: &str| None;
        assert_eq!(
            agent_dir(&none, Some(home.path())),
            home.path().join(".atomic/agent")
        );
        std::fs::create_dir_all(home.path().join(".pi/agent")).unwrap();
        assert_eq!(
            agent_dir(&none, Some(home.path())),
            home.path().join(".pi/agent")
        );
        std::fs::create_dir_all(home.path().join(".atomic/agent")).unwrap();
        let dir = agent_dir(&none, Some(home.path()));
        assert_eq!(dir, home.path().join(".atomic/agent"));
        let env = |k: &str| (k == "PI_CODING_AGENT_DIR").then(|| "~/elsewhere".to_string());
        assert_eq!(
            agent_dir(&env, Some(home.path())),
            home.path().join("elsewhere")
        );

        assert_eq!(settings_theme(&dir), Ok(None));
        std::fs::write(dir.join("settings.json"), r#"{"theme": "light", "x": 1}"#).unwrap();
        assert_eq!(settings_theme(&dir), Ok(Some("light".into())));
        std::fs::write(dir.join("settings.json"), "{").unwrap();
        assert!(settings_theme(&dir).unwrap_err().contains("not JSON"));
    }
}
