//! `[[remote]]` tables in arbor's config file (docs/remotes.md): each
//! read on its own, so that one wrong table skips only that remote, with
//! a line naming the file, the line and why.

use serde::Deserialize;
use toml::de::{DeValue, ValueDeserializer};
use toml::Spanned;

use arbor_remote::Remote;
use arbor_session::Agent;

/// A problem: what, and where in the file it starts.
pub type Problem = (String, usize);

/// Reads the `remote` key's value (a list of tables) into `out`; unknown
/// keys inside a table go to `unknown`, problems to `problems`.
pub fn read(
    value: &Spanned<DeValue<'_>>,
    out: &mut Vec<Remote>,
    unknown: &mut Vec<(String, usize)>,
    problems: &mut Vec<Problem>,
) {
    let Some(list) = value.get_ref().as_array() else {
        problems.push((
            format!(
                "\"remote\" must be [[remote]] tables, not a {}; no remote is used",
                value.get_ref().type_str()
            ),
            value.span().start,
        ));
        return;
    };
    for (i, item) in list.iter().enumerate() {
        match read_one(item, unknown) {
            Ok(r) if out.iter().any(|o| o.name == r.name) => problems.push((
                format!("a second remote named \"{}\" is skipped", r.name),
                item.span().start,
            )),
            Ok(r) => out.push(r),
            Err((why, at)) => problems.push((
                format!("remote {} is skipped: {why}", i + 1),
                at.unwrap_or(item.span().start),
            )),
        }
    }
}

type Failure = (String, Option<usize>);

fn read_one(
    item: &Spanned<DeValue<'_>>,
    unknown: &mut Vec<(String, usize)>,
) -> Result<Remote, Failure> {
    let Some(table) = item.get_ref().as_table() else {
        return Err(("a table was expected".into(), None));
    };
    let mut r = Remote::default();
    let mut named = false;
    for (key, v) in table {
        let name = key.get_ref().as_ref();
        let fail = |e: toml::de::Error| {
            (
                format!("\"{name}\": {}", e.message().trim()),
                Some(v.span().start),
            )
        };
        match name {
            "name" => {
                r.name = de::<String>(v).map_err(fail)?;
                named = true;
            }
            "ssh" => r.dest = Some(de::<String>(v).map_err(fail)?),
            "transport" => r.transport = Some(de::<String>(v).map_err(fail)?),
            "ssh_command" => r.ssh = Some(de::<String>(v).map_err(fail)?),
            "paths" => r.paths = de::<Vec<String>>(v).map_err(fail)?,
            "timeout" => r.timeout_secs = Some(de::<u64>(v).map_err(fail)?),
            "agents" => {
                for a in de::<Vec<String>>(v).map_err(fail)? {
                    let agent = Agent::from_name(&a).ok_or_else(|| {
                        (
                            format!("\"agents\": \"{a}\" is not atomic, pi, claude or codex"),
                            Some(v.span().start),
                        )
                    })?;
                    r.agents.push(agent);
                }
            }
            _ => unknown.push((format!("remote.{name}"), key.span().start)),
        }
    }
    if !named {
        return Err(("it has no \"name\"".into(), None));
    }
    r.validate().map_err(|e| (e.to_string(), None))?;
    Ok(r)
}

fn de<'a, T: Deserialize<'a>>(value: &Spanned<DeValue<'a>>) -> Result<T, toml::de::Error> {
    T::deserialize(ValueDeserializer::from(value.clone()))
}

#[cfg(test)]
mod tests {
    use crate::settings::config_file::{parse, ReadFile};
    use std::path::Path;

    fn read(text: &str) -> ReadFile {
        parse(Path::new("/c/config.toml"), text)
    }

    #[test]
    fn remotes_and_the_ssh_command_are_read() {
        let r = read(
            "ssh = \"ssh -F ~/.ssh/work\"\n\
             [[remote]]\nname = \"devbox\"\nssh = \"me@devbox\"\nagents = [\"atomic\", \"codex\"]\ntimeout = 5\n\
             [[remote]]\nname = \"box\"\ntransport = \"docker exec -i box\"\npaths = [\"/srv/s\"]\nssh_command = \"ssh -4\"\n",
        );
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        let s = r.settings;
        assert_eq!(s.ssh.as_deref(), Some("ssh -F ~/.ssh/work"));
        assert_eq!(s.remotes.len(), 2);
        assert_eq!(s.remotes[0].name, "devbox");
        assert_eq!(s.remotes[0].dest.as_deref(), Some("me@devbox"));
        assert_eq!(
            s.remotes[0].agents,
            [arbor_session::Agent::Atomic, arbor_session::Agent::Codex]
        );
        assert_eq!(s.remotes[0].timeout_secs, Some(5));
        assert_eq!(
            s.remotes[1].transport.as_deref(),
            Some("docker exec -i box")
        );
        assert_eq!(s.remotes[1].paths, ["/srv/s"]);
        assert_eq!(s.remotes[1].ssh.as_deref(), Some("ssh -4"));
    }

    #[test]
    fn a_wrong_remote_is_skipped_with_its_line_and_the_rest_kept() {
        let r = read(
            "[[remote]]\nname = \"ok\"\nssh = \"h\"\n\
             [[remote]]\nname = \"bad\"\nssh = \"-oProxyCommand=x\"\n\
             [[remote]]\nname = \"bad2\"\nssh = \"h\"\npaths = [\"~/../etc\"]\n\
             [[remote]]\nname = \"ok\"\nssh = \"h2\"\ncolour = 1\n",
        );
        let names: Vec<_> = r.settings.remotes.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["ok"]);
        assert_eq!(r.problems.len(), 4, "{:?}", r.problems);
        assert!(
            r.problems[0].starts_with("/c/config.toml: line 4: remote 2 is skipped: "),
            "{:?}",
            r.problems
        );
        assert!(
            r.problems[1].contains("remote 3 is skipped") && r.problems[1].contains("~/../etc"),
            "{:?}",
            r.problems
        );
        assert!(
            r.problems[2].contains("a second remote named \"ok\""),
            "{:?}",
            r.problems
        );
        assert!(
            r.problems[3].contains("\"remote.colour\""),
            "{:?}",
            r.problems
        );
        let r = read("remote = 3\n");
        assert!(
            r.problems[0].contains("[[remote]] tables"),
            "{:?}",
            r.problems
        );
    }
}
