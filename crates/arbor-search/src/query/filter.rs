//! The `key:value` conditions of a query (`dir:`, `after:`, `is:named`, …):
//! recognising a key, parsing its value, and testing a row's facts.

use crate::doc::RowFacts;
use arbor_session::agent::Agent;

/// A condition on a session's row (`key:value` in the query), tested on
/// [`RowFacts`] and never on text: it narrows, it does not score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// `dir:TEXT`: the cwd contains TEXT (lowercased).
    Dir(String),
    /// `after:` (inclusive) / `before:` (exclusive), on the modified time.
    After(i64),
    Before(i64),
    /// `model:TEXT`: a model used contains TEXT (lowercased).
    Model(String),
    /// `is:named`
    Named,
    /// `is:fork`
    Fork,
    /// `agent:atomic|pi`
    Agent(Agent),
    /// `label:TEXT`: a label in effect contains TEXT (lowercased).
    Label(String),
    /// `host:NAME`: the session is on that remote (`host:local`: on this
    /// machine).
    Host(String),
}

impl Filter {
    pub fn accepts(&self, f: &RowFacts) -> bool {
        match self {
            Filter::Dir(t) => f.cwd.contains(t.as_str()),
            Filter::After(ms) => f.modified_ms >= *ms,
            Filter::Before(ms) => f.modified_ms < *ms,
            Filter::Model(t) => f.models.iter().any(|m| m.contains(t.as_str())),
            Filter::Named => f.named,
            Filter::Fork => f.fork,
            Filter::Agent(a) => f.agent == *a,
            Filter::Label(t) => f.labels.iter().any(|l| l.contains(t.as_str())),
            Filter::Host(h) => arbor_util::hosts::same_host(h, f.host.as_deref()),
        }
    }
}

/// The known filter key `rest` starts with (`dir:` …, not `re:`) and the
/// text after its colon.
pub(super) fn filter_key(rest: &str) -> Option<(&str, &str)> {
    let colon = rest.find(':')?;
    let key = &rest[..colon];
    matches!(
        key,
        "dir" | "after" | "before" | "model" | "label" | "is" | "agent" | "host" | "in"
    )
    .then(|| (key, &rest[colon + 1..]))
}

/// The key of a `key:value` word that names no filter, which is an error
/// rather than a silent word. Only lowercase ASCII letters before the colon
/// and a value that does not start with `/`, `\` or `:` count, so
/// `http://host`, `c:\dir`, `std::io` and a trailing `todo:` stay words
/// (to search for `note:x`, quote it).
pub(super) fn unknown_key(rest: &str) -> Option<&str> {
    let word = &rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())];
    let colon = word.find(':')?;
    let (key, value) = (&word[..colon], &word[colon + 1..]);
    let is_key = !key.is_empty() && key.bytes().all(|b| b.is_ascii_lowercase());
    let word_like = value.is_empty() || value.starts_with(['/', '\\', ':']);
    (is_key && key != "re" && !word_like).then_some(key)
}

const AGE_HELP: &str = "a date (2026-11-30) or an age (12h, 2d, 1w, 3mo, 1y)";

pub(super) fn parse_filter(key: &str, value: &str, now_ms: i64) -> Result<Filter, String> {
    Ok(match key {
        "dir" => Filter::Dir(value.to_lowercase()),
        "model" => Filter::Model(value.to_lowercase()),
        "label" => Filter::Label(value.to_lowercase()),
        "host" => Filter::Host(value.to_string()),
        "after" | "before" => {
            let ms = parse_time(value, now_ms)
                .ok_or_else(|| format!("{key}: wants {AGE_HELP}, not \"{value}\""))?;
            if key == "after" {
                Filter::After(ms)
            } else {
                Filter::Before(ms)
            }
        }
        "is" => match value {
            "named" => Filter::Named,
            "fork" => Filter::Fork,
            _ => return Err(format!("is: takes named or fork, not \"{value}\"")),
        },
        "agent" => match Agent::from_name(value) {
            Some(a) => Filter::Agent(a),
            None => {
                return Err(format!(
                    "agent: takes atomic, pi, claude or codex, not \"{value}\""
                ))
            }
        },
        _ => return Err(format!("unknown filter \"{key}:\"")),
    })
}

/// A UTC date (its midnight) or an age before `now_ms`.
fn parse_time(v: &str, now_ms: i64) -> Option<i64> {
    if let Ok(d) = chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d") {
        return Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis());
    }
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let n: i64 = v[..digits].parse().ok()?;
    const H: i64 = 3_600_000;
    let unit = match &v[digits..] {
        "h" => H,
        "d" => 24 * H,
        "w" => 7 * 24 * H,
        "mo" => 30 * 24 * H,
        "y" => 365 * 24 * H,
        _ => return None,
    };
    Some(now_ms.saturating_sub(n.checked_mul(unit)?))
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use arbor_session::agent::Agent;
    use arbor_session::info::SessionInfo;

    /// 2026-12-01T12:00:00Z, the tests' clock.
    const NOW: i64 = 1_796_126_400_000;
    const HOUR: i64 = 3_600_000;

    fn row(cwd: &str, modified_ms: i64) -> SessionInfo {
        SessionInfo {
            id: "0199aaaa-bbbb".into(),
            first_message: Some("fix the parser".into()),
            cwd: cwd.into(),
            modified_ms,
            ..Default::default()
        }
    }

    fn keeps(q: &str, info: &SessionInfo) -> bool {
        let q = Query::parse_at(q, NOW);
        assert!(q.error().is_none(), "{:?}", q.error());
        q.score(&SearchDoc::from_info(info), &mut Fuzzy::new())
            .is_some()
    }

    #[test]
    fn clock_constant_is_the_date_it_names() {
        assert_eq!(
            arbor_session::entry::format_iso_ms(NOW),
            "2026-12-01T12:00:00.000Z"
        );
    }

    #[test]
    fn host_filter_names_a_remote_or_this_machine() {
        let mirror = std::path::Path::new("/arbor-filter-test/cache/remotes/devbox");
        arbor_util::hosts::register(mirror, "devbox");
        let mut remote = row("/w", NOW);
        remote.path = mirror.join("s/--w--/a.jsonl").into();
        let local = row("/w", NOW);
        assert!(keeps("host:devbox", &remote) && keeps("host:DEVBOX", &remote));
        assert!(!keeps("host:local", &remote) && !keeps("host:other", &remote));
        assert!(keeps("host:local", &local) && !keeps("host:devbox", &local));
    }

    #[test]
    fn dir_filter_is_a_case_insensitive_substring_of_the_cwd() {
        let r = row("/home/dev/My Project", NOW);
        assert!(keeps("dir:project", &r));
        assert!(keeps("dir:\"my project\"", &r));
        assert!(!keeps("dir:other", &r));
        assert!(!keeps("dir:\"my  projects\"", &r));
    }

    #[test]
    fn dates_absolute_and_relative_to_the_given_clock() {
        let two_days_ago = row("/w", NOW - 48 * HOUR - 1);
        let an_hour_ago = row("/w", NOW - HOUR);
        assert!(keeps("after:2d", &an_hour_ago));
        assert!(!keeps("after:2d", &two_days_ago));
        assert!(keeps("before:2d", &two_days_ago));
        assert!(!keeps("before:2d", &an_hour_ago));
        assert!(keeps("after:12h", &an_hour_ago));
        assert!(keeps("after:1w", &two_days_ago));
        assert!(keeps("after:3mo after:1y", &two_days_ago));
        // ISO dates are UTC midnights: after inclusive, before exclusive.
        assert!(keeps("after:2026-12-01", &an_hour_ago));
        assert!(!keeps("after:2026-12-01", &two_days_ago));
        assert!(keeps("before:2026-12-01", &two_days_ago));
        assert!(keeps("after:2026-11-29 before:2026-11-30", &two_days_ago));
        // The same query at another clock answers differently: the matcher
        // holds absolute times, it never reads a clock.
        let q = Query::parse_at("after:2d", NOW + 48 * HOUR);
        let d = SearchDoc::from_info(&an_hour_ago);
        assert!(q.score(&d, &mut Fuzzy::new()).is_none());
        for bad in [
            "after:2m",
            "after:yesterday",
            "before:2026-13-01",
            "after:d",
        ] {
            let q = Query::parse_at(bad, NOW);
            assert!(q.error().is_some_and(|e| e.contains("wants")), "{bad}");
        }
    }

    #[test]
    fn model_named_fork_and_agent_filters() {
        let mut r = row("/w", NOW);
        r.models = ["anthropic/Claude-Sonnet-4".to_string()].into();
        assert!(keeps("model:sonnet", &r));
        assert!(!keeps("model:gpt", &r));
        assert!(!keeps("is:named", &r));
        r.name = Some("Auth work".into());
        r.has_name = true;
        assert!(keeps("is:named", &r));
        // A cleared name is not a name.
        r.name = Some(String::new());
        assert!(!keeps("is:named", &r));
        assert!(!keeps("is:fork", &r));
        r.parent_session_path = Some("/s/parent.jsonl".into());
        assert!(keeps("is:fork", &r));
        assert!(keeps("agent:atomic", &r));
        assert!(!keeps("agent:pi", &r));
        r.agent = Agent::Pi;
        assert!(keeps("agent:pi", &r));
        assert!(keeps("agent:PI", &r));
        r.agent = Agent::Claude;
        assert!(keeps("agent:claude", &r));
        assert!(!keeps("agent:codex", &r));
        for bad in ["is:old", "agent:gemini"] {
            assert!(Query::parse_at(bad, NOW).error().is_some(), "{bad}");
        }
    }

    #[test]
    fn filters_and_words_combine() {
        let r = row("/home/dev/app", NOW - HOUR);
        assert!(keeps("parser dir:app after:1d", &r));
        assert!(keeps("dir:app parser", &r));
        assert!(!keeps("zebra dir:app", &r));
        assert!(!keeps("parser dir:lib", &r));
        // Filters alone list every row they accept.
        let q = Query::parse_at("dir:app", NOW);
        assert!(q.terms.is_empty() && q.has_conditions());
        let kept = rank(&q, vec![r.clone(), row("/lib", NOW)]);
        assert_eq!(kept.len(), 1);
        // A key with nothing after it yet filters nothing.
        assert!(keeps("parser dir:", &r));
        assert!(keeps("dir:  parser", &r));
    }

    #[test]
    fn unknown_keys_are_errors_but_urls_and_paths_stay_words() {
        let q = Query::parse_at("parser colour:red", NOW);
        let err = q.error().expect("an unknown key is an error");
        assert!(err.contains("unknown filter \"colour:\""), "{err}");
        assert!(err.contains("dir:"), "{err}");
        let r = row("/w", NOW);
        assert!(q
            .score(&SearchDoc::from_info(&r), &mut Fuzzy::new(),)
            .is_none());
        for word in [
            "http://example.com",
            "c:\\dev",
            "C:foo",
            "std::io",
            "todo:",
            "Note:x",
        ] {
            let q = Query::parse_at(word, NOW);
            assert!(q.error().is_none(), "{word}: {:?}", q.error());
            assert_eq!(q.terms.len(), 1, "{word}");
        }
        let mut r = row("/w", NOW);
        r.first_message = Some("see http://example.com/x".into());
        assert!(keeps("http://example.com", &r));
        // Quoted, such text is a phrase.
        assert!(Query::parse_at("\"colour:red\"", NOW).error().is_none());
    }

    #[test]
    fn label_filter_looks_at_the_labels_in_effect() {
        use arbor_session::extras::{LabelInfo, LabelText};
        let label = |l: &str, text: LabelText| LabelInfo {
            entry_id: "e1".into(),
            label: l.into(),
            time: None,
            text,
        };
        let mut r = row("/w", NOW);
        assert!(Query::parse_at("label:x", NOW).error().is_none());
        assert!(!keeps("label:check", &r));
        r.labels = vec![
            label("Checkpoint ✓", LabelText::Text("user: hi".into())),
            // Not looked up yet (a read failed): still a label.
            label("todo", LabelText::Pending),
            // On an entry the file lacks: shows nowhere, so it is no label.
            label("ghost", LabelText::Missing),
        ];
        assert!(keeps("label:check", &r));
        assert!(keeps("label:POINT", &r));
        assert!(keeps("label:\"point ✓\"", &r));
        assert!(keeps("label:todo", &r));
        assert!(!keeps("label:ghost", &r));
        assert!(!keeps("label:done", &r));
        assert!(keeps("label:check label:todo", &r));
        assert!(keeps("parser label:check", &r));
        assert!(!keeps("zebra label:check", &r));
        // A key with nothing after it yet filters nothing.
        assert!(keeps("label:", &row("/w", NOW)));
    }
}
