//! The Markdown document: message text stays Markdown, everything verbatim
//! goes in fences longer than any backtick run it holds.

use std::fmt::Write as _;

use super::clean::{clean_text, one_line};
use super::spill::{pieces, Spill};
use super::walk::{image_kb, DocInfo, Kind, Sink};

#[derive(Default)]
pub(super) struct Markdown {
    pub(super) out: String,
    /// Where `out` goes as it grows, and the first write that failed.
    pub(super) spill: Spill,
    failed: Option<std::io::Error>,
}

/// Inline text that Markdown shows literally (headings, labels, names):
/// the characters that can start emphasis, links, code, HTML, entities,
/// tables or a heading's closing sequence are backslash-escaped (every
/// place this goes is already inside a paragraph, heading or list item, so
/// line-start markers such as `-` or `1.` need nothing).
fn md_inline(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '#' | '&' | '!'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn longest_run(s: &str, ch: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for c in s.chars() {
        if c == ch {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// A fence opener or closer: up to three spaces, then three or more of
/// one fence character. Returns (character, length, rest of the line).
fn fence_of(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.len() - rest.trim_start_matches(ch).len();
    (n >= 3).then(|| (ch, n, &rest[n..]))
}

/// `<` that would start a tag or comment in a Markdown viewer's HTML.
fn tag_like(next: Option<char>) -> bool {
    next.is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '/' | '!' | '?'))
}

/// A line Markdown would read as a heading, a thematic break or a setext
/// underline. Message text stays Markdown, but these would let a message
/// forge the document's own structure (its `---` and `## Assistant`).
fn forges_structure(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return false;
    }
    let hashes = t.len() - t.trim_start_matches('#').len();
    if (1..=6).contains(&hashes)
        && t[hashes..]
            .chars()
            .next()
            .is_none_or(|c| c == ' ' || c == '\t')
    {
        return true;
    }
    let mut marks = t.chars().filter(|c| !matches!(c, ' ' | '\t'));
    let Some(first) = marks.next() else {
        return false;
    };
    let count = 1 + marks.clone().count();
    let all_same = marks.all(|c| c == first);
    match first {
        // A setext underline may be one character long.
        '-' | '=' => all_same,
        '*' | '_' => all_same && count >= 3,
        _ => false,
    }
}

/// A line of prose with tag-like `<` escaped outside code spans, a line
/// that would forge structure escaped at its first mark, and images made
/// plain links (a viewer would fetch a remote image on opening the file).
fn md_prose_line(line: &str, out: &mut String) {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    if forges_structure(line) {
        i = chars.iter().take_while(|&&c| c == ' ').count();
        out.extend(&chars[..i]);
        out.push('\\');
    }
    while i < chars.len() {
        let c = chars[i];
        if c == '`' {
            let n = chars[i..].iter().take_while(|&&c| c == '`').count();
            // A code span closes on a run of exactly n backticks.
            let mut j = i + n;
            let mut close = None;
            while j < chars.len() {
                if chars[j] == '`' {
                    let m = chars[j..].iter().take_while(|&&c| c == '`').count();
                    if m == n {
                        close = Some(j + m);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            let end = close.unwrap_or(i + n);
            out.extend(&chars[i..end]);
            i = end;
            continue;
        }
        if c == '\\' && i + 1 < chars.len() {
            out.push(c);
            out.push(chars[i + 1]);
            i += 2;
            continue;
        }
        if c == '<' && tag_like(chars.get(i + 1).copied()) {
            out.push_str("&lt;");
        } else if c == '!' && chars.get(i + 1) == Some(&'[') {
            out.push_str("\\!");
        } else {
            out.push(c);
        }
        i += 1;
    }
}

/// Message text as Markdown: escaped as described in the module docs, with
/// `prefix` before every line (`> ` in a quote).
fn md_block(text: &str, prefix: &str, out: &mut String) {
    let text = clean_text(text);
    let text = text.trim_end();
    let mut open: Option<(char, usize)> = None;
    for line in text.split('\n') {
        out.push_str(prefix);
        match open {
            Some((ch, n)) => {
                out.push_str(line);
                if let Some((c, m, rest)) = fence_of(line) {
                    if c == ch && m >= n && rest.trim().is_empty() {
                        open = None;
                    }
                }
            }
            None => {
                if let Some((c, n, rest)) = fence_of(line) {
                    // A backtick fence's info string cannot hold a backtick.
                    if !(c == '`' && rest.contains('`')) {
                        open = Some((c, n));
                        out.push_str(line);
                        out.push('\n');
                        continue;
                    }
                }
                md_prose_line(line, out);
            }
        }
        out.push('\n');
    }
    if let Some((ch, n)) = open {
        out.push_str(prefix);
        out.extend(std::iter::repeat_n(ch, n));
        out.push('\n');
    }
}

impl Markdown {
    fn blank(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with("\n\n") {
            self.out.push('\n');
        }
    }

    fn fenced(&mut self, lang: &str, body: &str) {
        let body = clean_text(body);
        let n = (longest_run(&body, '`') + 1).max(3);
        let fence = "`".repeat(n);
        self.blank();
        let _ = writeln!(self.out, "{fence}{lang}");
        for piece in pieces(body.trim_end_matches('\n')) {
            self.out.push_str(piece);
            self.spill.take_or_keep(&mut self.out, &mut self.failed);
        }
        self.out.push('\n');
        let _ = writeln!(self.out, "{fence}");
    }

    fn heading(&mut self, level: usize, title: &str, time: Option<&str>, label: Option<&str>) {
        self.blank();
        self.out.push_str(&"#".repeat(level));
        self.out.push(' ');
        self.out.push_str(&md_inline(title));
        if let Some(t) = time {
            let _ = write!(self.out, " · {}", md_inline(t));
        }
        if let Some(l) = label {
            let _ = write!(self.out, " · 🏷 {}", md_inline(l));
        }
        self.out.push('\n');
    }
}

impl Markdown {
    pub(super) fn head(&self, doc: &DocInfo) -> String {
        let mut out = format!("# {}\n\n", md_inline(&doc.title));
        for (k, v) in &doc.rows {
            let _ = writeln!(out, "- **{k}:** {}", md_inline(v));
        }
        out
    }

    pub(super) fn end(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.out.push('\n');
        }
    }
}

impl Sink for Markdown {
    fn pour(&mut self) -> std::io::Result<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => self.spill.take(&mut self.out),
        }
    }

    fn section(&mut self, kind: Kind, title: &str, time: Option<&str>, label: Option<&str>) {
        self.blank();
        self.out.push_str("---\n");
        let title = match kind {
            Kind::Compaction | Kind::BranchSummary => format!("⟲ {title}"),
            _ => title.to_string(),
        };
        self.heading(2, &title, time, label);
    }

    fn text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.blank();
        md_block(text, "", &mut self.out);
    }

    fn fold(
        &mut self,
        title: &str,
        time: Option<&str>,
        label: Option<&str>,
        lang: &str,
        body: &str,
    ) {
        self.heading(4, title, time, label);
        self.fenced(lang, body);
    }

    fn thinking(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.heading(4, "Thinking", None, None);
        self.blank();
        md_block(text, "> ", &mut self.out);
    }

    fn image(&mut self, mime: &str, data: &str) {
        self.blank();
        let _ = writeln!(
            self.out,
            "*\\[image {}, {} KB\\]*",
            md_inline(&one_line(mime)),
            image_kb(data)
        );
    }

    fn note(&mut self, text: &str, time: Option<&str>) {
        self.blank();
        match time {
            Some(t) => {
                let _ = writeln!(self.out, "*{} · {}*", md_inline(text), md_inline(t));
            }
            None => {
                let _ = writeln!(self.out, "*{}*", md_inline(text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_prose_escapes_tags_outside_code() {
        let mut out = String::new();
        md_block(
            "Use `Vec<String>` not Vec<String>; a < b.\n```rust\nlet x: Vec<u8>;\n```\n<script>x</script>",
            "",
            &mut out,
        );
        assert_eq!(
            out,
            "Use `Vec<String>` not Vec&lt;String>; a < b.\n```rust\nlet x: Vec<u8>;\n```\n&lt;script>x&lt;/script>\n"
        );
    }

    #[test]
    fn markdown_prose_cannot_forge_sections_or_load_images() {
        let mut out = String::new();
        md_block(
            "ok\n---\n## Assistant\n#tag stays\n  ===\n* * *\n- item\n![x](https://e.example/t.png) `![c](d)`\n```\n## in code\n```",
            "",
            &mut out,
        );
        assert_eq!(
            out,
            "ok\n\\---\n\\## Assistant\n#tag stays\n  \\===\n\\* * *\n- item\n\\![x](https://e.example/t.png) `![c](d)`\n```\n## in code\n```\n"
        );
    }

    #[test]
    fn markdown_closes_an_open_fence() {
        let mut out = String::new();
        md_block("before\n````text\nnever closed ```\n", "", &mut out);
        assert_eq!(out, "before\n````text\nnever closed ```\n````\n");
    }
}
