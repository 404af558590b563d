//! Recognising a partial last line that one of arbor's own appends left
//! behind: a line cut short by a full disk (older arbor versions wrote the
//! rest of a line in a second call, which then failed), or by arbor being
//! killed mid-write. Such a line is dead, and it would make arbor refuse
//! every later write and glue the agent's next line onto it.
//!
//! Arbor must never cut a line another program is still writing, so the
//! test is strict, and `writer::settle_tail` only asks it about a partial
//! line that stayed the same while it waited (the agents write each line
//! in one call: a live line ends within milliseconds). The line must be a
//! prefix of an entry in the exact shape arbor appends: its `type` (label,
//! session name, branch summary) written out whole, then exactly arbor's
//! keys in arbor's order, with an 8-hex id. A partial `message` (the
//! agent's everyday line), or one too short to show its type, is never
//! arbor's and is still refused.

/// The keys of each entry arbor appends, in the order it writes them
/// (serde_json keeps insertion order; see `writer::base`). A label's
/// `label` is left out when the label is cleared.
const SHAPES: [(&str, &[&str]); 3] = [
    (
        "label",
        &["id", "parentId", "timestamp", "targetId", "label"],
    ),
    ("session_info", &["id", "parentId", "timestamp", "name"]),
    (
        "branch_summary",
        &["id", "parentId", "timestamp", "fromId", "summary"],
    ),
];

/// Whether `line` (a last line without its `\n`, not valid JSON) is the
/// start of a line arbor appends.
pub(crate) fn is_own_partial_line(line: &[u8]) -> bool {
    SHAPES
        .iter()
        .any(|(ty, keys)| matches_shape(line, ty, keys) == Step::Ended)
}

/// How far a part of the pattern matched.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Matched; more follows.
    Matched,
    /// The bytes ended inside the pattern: a prefix of it.
    Ended,
    /// Not this shape (or a whole line, which is not partial).
    Mismatch,
}

/// Stops a matcher at anything but [`Step::Matched`].
macro_rules! step {
    ($e:expr) => {
        match $e {
            Step::Matched => {}
            other => return other,
        }
    };
}

fn matches_shape(line: &[u8], ty: &str, keys: &[&str]) -> Step {
    let head = format!("{{\"type\":\"{ty}\"");
    // The type written out whole: a shorter start could be anyone's.
    let Some(mut rest) = line.strip_prefix(head.as_bytes()) else {
        return Step::Mismatch;
    };
    for (n, key) in keys.iter().enumerate() {
        if *key == "label" && rest.first() == Some(&b'}') {
            // A cleared label ends after `targetId`: a whole line.
            return Step::Mismatch;
        }
        step!(literal(&mut rest, format!(",\"{key}\":").as_bytes()));
        step!(match *key {
            "id" => id(&mut rest),
            "parentId" if rest.starts_with(b"n") => literal(&mut rest, b"null"),
            _ => string(&mut rest),
        });
        if n + 1 == keys.len() {
            step!(literal(&mut rest, b"}"));
        }
    }
    // Whole: not a partial line.
    Step::Mismatch
}

/// `want` next (or the bytes end inside it).
fn literal(rest: &mut &[u8], want: &[u8]) -> Step {
    let n = rest.len().min(want.len());
    if rest[..n] != want[..n] {
        return Step::Mismatch;
    }
    *rest = &rest[n..];
    if n < want.len() {
        Step::Ended
    } else {
        Step::Matched
    }
}

/// An id arbor makes: a string of 8 lowercase hex digits.
fn id(rest: &mut &[u8]) -> Step {
    step!(literal(rest, b"\""));
    for _ in 0..8 {
        match rest.first() {
            None => return Step::Ended,
            Some(b) if b.is_ascii_digit() || (b'a'..=b'f').contains(b) => *rest = &rest[1..],
            Some(_) => return Step::Mismatch,
        }
    }
    literal(rest, b"\"")
}

/// A JSON string as serde_json writes it (no raw control characters).
fn string(rest: &mut &[u8]) -> Step {
    step!(literal(rest, b"\""));
    loop {
        match rest.first() {
            None => return Step::Ended,
            Some(b'"') => {
                *rest = &rest[1..];
                return Step::Matched;
            }
            Some(b'\\') if rest.len() < 2 => return Step::Ended,
            Some(b'\\') => *rest = &rest[2..],
            Some(b) if *b < 0x20 => return Step::Mismatch,
            Some(_) => *rest = &rest[1..],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LABEL: &str = r#"{"type":"label","id":"1acaff0f","parentId":"0badc0de","timestamp":"2026-12-07T10:00:00.000Z","targetId":"0badc0de","label":"a \"b\" c"}"#;

    #[test]
    fn every_cut_of_an_arbor_line_after_its_type_is_arbor_s() {
        let head = r#"{"type":"label""#.len();
        for cut in head..LABEL.len() {
            assert!(
                is_own_partial_line(&LABEL.as_bytes()[..cut]),
                "{}",
                &LABEL[..cut]
            );
        }
        assert!(!is_own_partial_line(LABEL.as_bytes()), "a whole line");
        let name = r#"{"type":"session_info","id":"1acaff0f","parentId":null,"timestamp":"2026-12-07T10:00:00.000Z","name":"x"}"#;
        for cut in 22..name.len() {
            assert!(
                is_own_partial_line(&name.as_bytes()[..cut]),
                "{}",
                &name[..cut]
            );
        }
        // The issue's line, cut by a full disk.
        assert!(is_own_partial_line(
            br#"{"type":"label","id":"1acaff0f","parentI"#
        ));
    }

    #[test]
    fn other_lines_are_never_arbor_s() {
        for other in [
            &br#"{"type":"message","id":"1acaff0f","parentId":"0badc0de","times"#[..],
            br#"{"type":"lab"#,
            br#"{"ty"#,
            br#"{"type":"label","parentId":null,"id":"1acaff0f""#,
            br#"{"type":"label","id":"NOT-HEX!","parentId""#,
            br#"{"type":"label","id":"1acaff0f","parentId":"x","timestamp":"t","targetId":"y","extra":1"#,
            br#"{"type":"session_info","id":"1acaff0f","parentId":null,"timestamp":"t","name":"x"} trailing"#,
        ] {
            assert!(!is_own_partial_line(other), "{}", String::from_utf8_lossy(other));
        }
    }
}
