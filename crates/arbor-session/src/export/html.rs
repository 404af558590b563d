//! The HTML document: one self-contained page, every piece of session text
//! escaped, no script.

use std::fmt::Write as _;

use super::clean::{clean_text, one_line};
use super::spill::{pieces, Spill};
use super::walk::{image_kb, DocInfo, Kind, Sink};

#[derive(Default)]
pub(super) struct Html {
    pub(super) out: String,
    in_section: bool,
    /// Where `out` goes as it grows, and the first write that failed.
    pub(super) spill: Spill,
    failed: Option<std::io::Error>,
}

/// Escapes text for an HTML text node. Session text only ever goes into
/// text nodes (an image's `src` is built from a checked type and checked
/// base64), but quotes are escaped too, so that this stays right in an
/// attribute value.
fn esc(s: &str, out: &mut String) {
    esc_clean(&clean_text(s), out);
}

/// [`esc`] of text cleaned already.
fn esc_clean(s: &str, out: &mut String) {
    let mut rest: &str = s;
    while let Some(i) = rest.find(['&', '<', '>', '"', '\'']) {
        out.push_str(&rest[..i]);
        out.push_str(match rest.as_bytes()[i] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&#39;",
        });
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

const CSS: &str = "
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--dim:#656d76;--line:#d0d7de;--user:#eef4ff;--asst:#f6f8fa;--mark:#fff8c5;--tool:#f6f8fa;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--dim:#8d96a0;--line:#30363d;--user:#132339;--asst:#161b22;--mark:#3b2e05;--tool:#161b22;--accent:#4493f8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,'Segoe UI',sans-serif}
main{max-width:60rem;margin:0 auto;padding:1.5rem 1rem 4rem}
h1{font-size:1.4rem;margin:0 0 .5rem}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem;color:var(--dim);margin:0 0 1.5rem;font-size:.9rem}
dl.meta dt{font-weight:600}dl.meta dd{margin:0;overflow-wrap:anywhere}
section{border:1px solid var(--line);border-radius:8px;padding:.6rem .9rem;margin:.8rem 0;background:var(--asst)}
section.user{background:var(--user)}
section.compaction,section.branch-summary{background:var(--mark);border-style:dashed}
.head{display:flex;flex-wrap:wrap;gap:.6rem;align-items:baseline;font-size:.85rem;color:var(--dim);margin-bottom:.3rem}
.head .who{font-weight:600;color:var(--fg)}
.label{border:1px solid var(--accent);color:var(--accent);border-radius:1rem;padding:0 .5rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:.3rem 0}
.note{color:var(--dim);font-style:italic;font-size:.85rem;margin:.3rem 0}
details{border:1px solid var(--line);border-radius:6px;background:var(--tool);margin:.4rem 0;padding:.2rem .6rem}
details summary{cursor:pointer;font-size:.85rem;color:var(--dim)}
details.thinking .text{color:var(--dim);font-style:italic}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;margin:.4rem 0}
img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:4px}
";

impl Html {
    fn close_section(&mut self) {
        if self.in_section {
            self.out.push_str("</section>\n");
            self.in_section = false;
        }
    }

    fn meta(&mut self, time: Option<&str>, label: Option<&str>) {
        if let Some(t) = time {
            self.out.push_str("<span class=\"time\">");
            esc(t, &mut self.out);
            self.out.push_str("</span>");
        }
        if let Some(l) = label {
            self.out.push_str("<span class=\"label\">");
            esc(l, &mut self.out);
            self.out.push_str("</span>");
        }
    }

    /// Outside a section (a tool result after its call, a note between
    /// messages): attach to the section before, or stand alone.
    fn ensure_section(&mut self) {
        if !self.in_section {
            self.out.push_str("<section class=\"tool\">\n");
            self.in_section = true;
        }
    }
}

/// Image types a browser shows without running anything (no SVG).
fn safe_image_mime(mime: &str) -> bool {
    matches!(
        mime,
        "image/png" | "image/jpeg" | "image/gif" | "image/webp"
    )
}

fn is_base64(data: &str) -> bool {
    !data.is_empty()
        && data
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

impl Html {
    pub(super) fn head(&self, doc: &DocInfo) -> String {
        let mut out = String::with_capacity(4096);
        out.push_str(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
             <meta name=\"generator\" content=\"arbor\">\n<title>",
        );
        esc(&doc.title, &mut out);
        out.push_str("</title>\n<style>");
        out.push_str(CSS);
        out.push_str("</style>\n</head>\n<body>\n<main>\n<h1>");
        esc(&doc.title, &mut out);
        out.push_str("</h1>\n<dl class=\"meta\">\n");
        for (k, v) in &doc.rows {
            let _ = write!(out, "<dt>{k}</dt><dd>");
            esc(v, &mut out);
            out.push_str("</dd>\n");
        }
        out.push_str("</dl>\n");
        out
    }

    pub(super) fn end(&mut self) {
        self.close_section();
        self.out.push_str("</main>\n</body>\n</html>\n");
    }
}

impl Sink for Html {
    fn pour(&mut self) -> std::io::Result<()> {
        match self.failed.take() {
            Some(e) => Err(e),
            None => self.spill.take(&mut self.out),
        }
    }

    fn section(&mut self, kind: Kind, title: &str, time: Option<&str>, label: Option<&str>) {
        self.close_section();
        let _ = write!(
            self.out,
            "<section class=\"{}\">\n<div class=\"head\"><span class=\"who\">",
            kind.class()
        );
        if matches!(kind, Kind::Compaction | Kind::BranchSummary) {
            self.out.push_str("⟲ ");
        }
        esc(title, &mut self.out);
        self.out.push_str("</span>");
        self.meta(time, label);
        self.out.push_str("</div>\n");
        self.in_section = true;
    }

    fn text(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.ensure_section();
        self.out.push_str("<div class=\"text\">");
        esc(text.trim_end(), &mut self.out);
        self.out.push_str("</div>\n");
    }

    fn fold(
        &mut self,
        title: &str,
        time: Option<&str>,
        label: Option<&str>,
        _lang: &str,
        body: &str,
    ) {
        self.ensure_section();
        self.out.push_str("<details><summary>");
        esc(title, &mut self.out);
        if time.is_some() || label.is_some() {
            self.out.push(' ');
            self.meta(time, label);
        }
        self.out.push_str("</summary><pre>");
        let body = clean_text(body.trim_end_matches('\n'));
        for piece in pieces(&body) {
            esc_clean(piece, &mut self.out);
            self.spill.take_or_keep(&mut self.out, &mut self.failed);
        }
        self.out.push_str("</pre></details>\n");
    }

    fn thinking(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        self.ensure_section();
        self.out.push_str(
            "<details class=\"thinking\"><summary>Thinking</summary><div class=\"text\">",
        );
        esc(text.trim_end(), &mut self.out);
        self.out.push_str("</div></details>\n");
    }

    fn image(&mut self, mime: &str, data: &str) {
        self.ensure_section();
        if safe_image_mime(mime) && is_base64(data) {
            // Both checked above: nothing here needs escaping.
            let _ = writeln!(
                self.out,
                "<p><img alt=\"image\" src=\"data:{mime};base64,{data}\"></p>"
            );
        } else {
            self.out.push_str("<p class=\"note\">[image ");
            esc(&one_line(mime), &mut self.out);
            let _ = writeln!(self.out, ", {} KB]</p>", image_kb(data));
        }
    }

    fn note(&mut self, text: &str, time: Option<&str>) {
        let standalone = time.is_some();
        if standalone {
            self.close_section();
        }
        self.out.push_str("<p class=\"note\">");
        esc(text, &mut self.out);
        if let Some(t) = time {
            self.out.push_str(" · ");
            esc(t, &mut self.out);
        }
        self.out.push_str("</p>\n");
    }
}
