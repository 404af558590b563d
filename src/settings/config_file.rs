//! arbor's own settings file, `config.toml`: read key by key, so that one
//! wrong value costs only that setting (its default is used) and is
//! reported with the file, the line and the key.
//!
//! A new setting is one more arm in [`read_key`]; a new section one more
//! arm handing its value to a reader of its own, as `[resume]` is handed
//! to [`read_resume`] and `[[remote]]` to `super::remotes::read`.

use std::path::Path;

use serde::Deserialize;
use toml::de::{DeTable, DeValue, ValueDeserializer};
use toml::Spanned;

use crate::ui::picker::{Scope, Sort};
use arbor_session::Agent;

/// `preview = true | false | "auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preview {
    Auto,
    On,
    Off,
}

/// What the file set; `None` where it set nothing usable.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FileSettings {
    pub theme: Option<String>,
    pub mouse: Option<bool>,
    pub preview: Option<Preview>,
    pub scope: Option<Scope>,
    pub sort: Option<Sort>,
    /// `[resume]`: each agent's command, in the file's order.
    pub resume: Vec<(Agent, String)>,
    /// `ssh = "ssh -F …"`: the ssh program and options (`ARBOR_SSH` beats it).
    pub ssh: Option<String>,
    /// `[[remote]]`: the remotes, in the file's order (docs/remotes.md).
    pub remotes: Vec<arbor_remote::Remote>,
}

/// The file read: its settings, and a line for each problem (with the
/// file, line and key) and one for any keys arbor does not know.
#[derive(Debug, Default)]
pub struct ReadFile {
    pub settings: FileSettings,
    pub problems: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum ScopeName {
    Current,
    All,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum SortName {
    Threaded,
    Recent,
    Fuzzy,
    Relevance,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum PreviewValue {
    Bool(bool),
    Word(String),
}

/// Reads `text`, the contents of the file at `path`.
pub fn parse(path: &Path, text: &str) -> ReadFile {
    let mut out = ReadFile::default();
    let shown = crate::term::path(path);
    let at = |span: Option<std::ops::Range<usize>>| line_of(text, span.map_or(0, |s| s.start));
    let (table, errors) = DeTable::parse_recoverable(text);
    for e in errors {
        out.problems.push(format!(
            "{shown}: line {}: {}",
            at(e.span()),
            one_line(e.message())
        ));
    }
    let mut unknown = Vec::new();
    let mut remote_problems = Vec::new();
    // In the file's order (the table's is by name).
    let mut keys: Vec<_> = table.get_ref().iter().collect();
    keys.sort_by_key(|(k, _)| k.span().start);
    for (key, value) in keys {
        let name = key.get_ref().as_ref();
        let line = line_of(text, key.span().start);
        if name == "remote" {
            super::remotes::read(
                value,
                &mut out.settings.remotes,
                &mut unknown,
                &mut remote_problems,
            );
            continue;
        }
        if let Err((key, message, span)) = read_key(
            &mut out.settings,
            (name, key.span().start),
            value,
            &mut unknown,
        ) {
            out.problems.push(format!(
                "{shown}: line {}: key \"{key}\": {}; its default is used",
                span.map_or(line, |s| line_of(text, s.start)),
                one_line(&message)
            ));
        }
    }
    for (message, at) in remote_problems {
        out.problems
            .push(format!("{shown}: line {}: {message}", line_of(text, at)));
    }
    unknown.sort_by_key(|u| u.1);
    if !unknown.is_empty() {
        let named: Vec<String> = unknown
            .iter()
            .map(|(k, at)| format!("\"{k}\" (line {})", line_of(text, *at)))
            .collect();
        out.problems.push(format!(
            "{shown}: unknown keys ignored: {}",
            named.join(", ")
        ));
    }
    out
}

/// A problem with one key: the key's full name, why, and where.
type KeyError = (String, String, Option<std::ops::Range<usize>>);

/// One top-level key (its name and where it starts); unknown keys are
/// collected with where they start.
fn read_key(
    s: &mut FileSettings,
    (name, at): (&str, usize),
    value: &Spanned<DeValue<'_>>,
    unknown: &mut Vec<(String, usize)>,
) -> Result<(), KeyError> {
    let err = |e: toml::de::Error| (name.to_string(), e.message().to_string(), e.span());
    match name {
        "theme" => s.theme = Some(de::<String>(value).map_err(err)?),
        "mouse" => s.mouse = Some(de::<bool>(value).map_err(err)?),
        "preview" => {
            s.preview = Some(match de::<PreviewValue>(value).map_err(err)? {
                PreviewValue::Bool(true) => Preview::On,
                PreviewValue::Bool(false) => Preview::Off,
                PreviewValue::Word(w) if w == "auto" => Preview::Auto,
                PreviewValue::Word(w) => {
                    return Err((
                        name.into(),
                        format!("\"{w}\" is not true, false or \"auto\""),
                        Some(value.span()),
                    ))
                }
            })
        }
        "scope" => {
            s.scope = Some(match de::<ScopeName>(value).map_err(err)? {
                ScopeName::Current => Scope::Current,
                ScopeName::All => Scope::All,
            })
        }
        "sort" => {
            s.sort = Some(match de::<SortName>(value).map_err(err)? {
                SortName::Threaded => Sort::Threaded,
                SortName::Recent => Sort::Recent,
                SortName::Fuzzy | SortName::Relevance => Sort::Relevance,
            })
        }
        "resume" => read_resume(s, value, unknown)?,
        "ssh" => s.ssh = Some(de::<String>(value).map_err(err)?),
        _ => unknown.push((name.to_string(), at)),
    }
    Ok(())
}

/// `[resume]`: `AGENT = "command"` for atomic, pi, claude and codex.
fn read_resume(
    s: &mut FileSettings,
    value: &Spanned<DeValue<'_>>,
    unknown: &mut Vec<(String, usize)>,
) -> Result<(), KeyError> {
    let Some(table) = value.get_ref().as_table() else {
        return Err((
            "resume".into(),
            format!(
                "a table of agent = \"command\" was expected, not a {}",
                value.get_ref().type_str()
            ),
            Some(value.span()),
        ));
    };
    for (key, cmd) in table {
        let name = key.get_ref().as_ref();
        let full = format!("resume.{name}");
        let Some(agent) = Agent::from_name(name) else {
            unknown.push((full, key.span().start));
            continue;
        };
        let text =
            de::<String>(cmd).map_err(|e| (full.clone(), e.message().to_string(), e.span()))?;
        let check = crate::cli::resume::Target {
            path: "/x.jsonl".into(),
            id: "x".into(),
            cwd: "/".into(),
            agent,
        };
        if let Err(e) = crate::cli::resume::argv(&text, &check) {
            return Err((full, e.to_string(), Some(cmd.span())));
        }
        s.resume.push((agent, text));
    }
    Ok(())
}

fn de<'a, T: Deserialize<'a>>(value: &Spanned<DeValue<'a>>) -> Result<T, toml::de::Error> {
    T::deserialize(ValueDeserializer::from(value.clone()))
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// A parser's message on one line.
fn one_line(m: &str) -> String {
    m.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> ReadFile {
        parse(Path::new("/c/config.toml"), text)
    }

    #[test]
    fn every_setting_is_read() {
        let r = read(
            "theme = \"light\"\nmouse = false\npreview = \"auto\"\nscope = \"all\"\nsort = \"recent\"\n\
             [resume]\nclaude = \"claude --resume={id} --verbose\"\n",
        );
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        let s = r.settings;
        assert_eq!(s.theme.as_deref(), Some("light"));
        assert_eq!(s.mouse, Some(false));
        assert_eq!(s.preview, Some(Preview::Auto));
        assert_eq!(s.scope, Some(Scope::All));
        assert_eq!(s.sort, Some(Sort::Recent));
        assert_eq!(
            s.resume,
            vec![(Agent::Claude, "claude --resume={id} --verbose".into())]
        );
        assert_eq!(read("preview = false").settings.preview, Some(Preview::Off));
        assert_eq!(
            read("sort = \"fuzzy\"").settings.sort,
            Some(Sort::Relevance)
        );
    }

    #[test]
    fn a_wrong_value_names_file_line_and_key_and_keeps_the_rest() {
        let r = read("theme = \"light\"\n\nsort = \"newest\"\nmouse = \"yes\"\n");
        assert_eq!(r.settings.theme.as_deref(), Some("light"));
        assert_eq!(r.settings.sort, None);
        assert_eq!(r.problems.len(), 2, "{:?}", r.problems);
        assert!(
            r.problems[0].starts_with("/c/config.toml: line 3: key \"sort\": "),
            "{}",
            r.problems[0]
        );
        assert!(r.problems[0].contains("newest"), "{}", r.problems[0]);
        assert!(
            r.problems[1].starts_with("/c/config.toml: line 4: key \"mouse\": "),
            "{}",
            r.problems[1]
        );
        let r = read("[resume]\natomic = \"atomic 'x\"\n");
        assert!(
            r.problems[0].starts_with("/c/config.toml: line 2: key \"resume.atomic\": "),
            "{:?}",
            r.problems
        );
        let r = read("preview = \"sometimes\"\n");
        assert!(
            r.problems[0].contains("key \"preview\""),
            "{:?}",
            r.problems
        );
    }

    #[test]
    fn unknown_keys_are_one_line() {
        let r = read("colour = 1\ntheme = \"dark\"\n[resume]\nvim = \"x\"\n");
        assert_eq!(r.problems, vec![
            "/c/config.toml: unknown keys ignored: \"colour\" (line 1), \"resume.vim\" (line 4)".to_string()
        ]);
        assert_eq!(r.settings.theme.as_deref(), Some("dark"));
    }

    #[test]
    fn a_syntax_error_names_its_line() {
        let r = read("theme = \"dark\"\nmouse = = true\n");
        assert!(
            r.problems
                .iter()
                .any(|p| p.starts_with("/c/config.toml: line 2: ")),
            "{:?}",
            r.problems
        );
    }
}
