//! Text on its way to a terminal outside the TUI (the commands' output, the
//! diagnostics, the resume messages). Session text and file names are
//! untrusted: they go through the same sanitizer as the TUI's.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::io::IsTerminal;
use std::path::Path;

pub use arbor_session::render::{is_unsafe, replace_controls, sanitize_block, sanitize_line};

/// The controlling terminal itself (`/dev/tty`), for a screen or a
/// question when stdin and stdout may be redirected; also readable when
/// `read`.
pub fn open_tty(read: bool) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(read)
        .write(true)
        .open("/dev/tty")
}

/// Whether stdout is a terminal (cached: asked once per line otherwise).
pub fn stdout_is_tty() -> bool {
    use std::sync::OnceLock;
    static TTY: OnceLock<bool> = OnceLock::new();
    *TTY.get_or_init(|| std::io::stdout().is_terminal())
}

/// A value printed alone on stdout for scripts (a path, an id): exact when
/// stdout is piped, its controls shown as spaces when a person reads it on
/// a terminal (what is left of a sequence stays: it names the file).
pub fn for_stdout(s: &str) -> Cow<'_, str> {
    if stdout_is_tty() && s.chars().any(is_unsafe) {
        Cow::Owned(replace_controls(s))
    } else {
        Cow::Borrowed(s)
    }
}

/// A path in a message (always sanitized: messages go to stderr or are
/// read on a terminal). Only its controls become spaces: the rest of an
/// escape sequence in a file name stays, so the name shown still finds
/// the file.
pub fn path(p: &Path) -> String {
    replace_controls(&p.to_string_lossy())
}

/// A word as a person can paste it into a POSIX shell: bare when it is
/// plain, in single quotes otherwise, and as `$'…'` with `\xHH` / `\uHHHH`
/// escapes when it holds control characters, bidi overrides or bytes that
/// are not UTF-8 — so the shown command is exact and still prints no
/// escape sequence.
pub fn shell_display(word: &OsStr) -> String {
    let bytes = word.as_encoded_bytes();
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:@,%".contains(c);
    if let Ok(s) = std::str::from_utf8(bytes) {
        if !s.is_empty() && s.chars().all(plain) {
            return s.to_string();
        }
        if !s.chars().any(is_unsafe) {
            return format!("'{}'", s.replace('\'', "'\\''"));
        }
    }
    let mut out = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if (c as u32) < 0x80 && is_unsafe(c) => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if is_unsafe(c) => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_display_quotes_and_escapes() {
        let d = |s: &str| shell_display(OsStr::new(s));
        assert_eq!(d("/home/u/p-1"), "/home/u/p-1");
        assert_eq!(d("a b"), "'a b'");
        assert_eq!(d("it's"), "'it'\\''s'");
        assert_eq!(d(""), "''");
        assert_eq!(d("a\u{1b}]0;x\u{7}b"), "$'a\\x1b]0;x\\x07b'");
        assert_eq!(d("x\u{9b}y\u{202e}'"), "$'x\\u009by\\u202e\\''");
        assert_eq!(d("l1\nl2"), "$'l1\\nl2'");
    }

    #[cfg(unix)]
    #[test]
    fn shell_display_shows_bytes_that_are_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        assert_eq!(shell_display(OsStr::from_bytes(b"a\xffb")), "$'a\\xffb'");
    }
}
