//! The message a failed command ends with: its error and each cause once.
//!
//! arbor's errors name their cause in their own text (a screen shows only
//! that text) and also keep it as their `source`, so printing the whole
//! chain (`{:#}`) said it twice ("No space left on device … No space left
//! on device"). A cause is added only where the text does not say it yet.

/// `e` and its causes in one line, each said once.
pub fn error_line(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1) {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_cause_the_text_names_is_said_once() {
        let full = std::io::Error::from_raw_os_error(28);
        let e = anyhow::Error::new(arbor_session::Error::NotWritten {
            path: PathBuf::from("/s/x.jsonl"),
            source: full,
        });
        let line = error_line(&e);
        assert_eq!(line.matches("No space left on device").count(), 1, "{line}");

        let ambiguous = arbor_session::Error::AmbiguousEntryId {
            given: "a".into(),
            count: 2,
            examples: "ab, ac".into(),
        };
        let e = anyhow::Error::new(arbor_session::Error::AmbiguousEntryIn {
            path: PathBuf::from("/s/x.jsonl"),
            source: Box::new(ambiguous),
        });
        let line = error_line(&e);
        assert_eq!(line.matches("is ambiguous").count(), 1, "{line}");
    }

    #[test]
    fn a_cause_the_text_does_not_name_is_added() {
        let e = anyhow::Error::new(std::io::Error::from_raw_os_error(2)).context("cannot open x");
        assert_eq!(
            error_line(&e),
            "cannot open x: No such file or directory (os error 2)"
        );
    }
}
