use crate::session::info::SessionInfo;

/// What a query is matched against, prepared once per session.
#[derive(Debug, Clone, Default)]
pub struct SearchDoc {
    /// Short fields, original case (fuzzy matching ignores case itself).
    pub fields: Vec<String>,
    /// The searchable parts, each normalized (lowercased, whitespace runs
    /// collapsed to one space) and separated by `\n` (which a normalized
    /// part never contains, so no match spans two parts): id, name,
    /// summary, cwd, then the message bodies from `body_start` on.
    pub text: String,
    /// Where the bodies start in `text`.
    pub body_start: usize,
}

/// Lowercases and collapses whitespace runs to single spaces (leading
/// whitespace is dropped when `out` is empty or ends in a space).
pub fn normalize(s: &str, out: &mut String) {
    let mut in_space = out.ends_with(' ') || out.is_empty();
    out.reserve(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c < 0x80 {
            // ASCII: the same as the general case below, without decoding.
            if matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
                if !in_space {
                    out.push(' ');
                    in_space = true;
                }
            } else {
                out.push(c.to_ascii_lowercase() as char);
                in_space = false;
            }
            i += 1;
            continue;
        }
        let ch = s[i..].chars().next().unwrap_or(' ');
        i += ch.len_utf8();
        if ch.is_whitespace() {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            for l in ch.to_lowercase() {
                out.push(l);
            }
            in_space = false;
        }
    }
}

/// The normalized form of one searchable part (no leading or trailing space).
pub fn normalized(s: &str) -> String {
    let mut out = String::new();
    normalize(s, &mut out);
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

impl SearchDoc {
    pub fn from_info(info: &SessionInfo) -> SearchDoc {
        let mut fields = Vec::with_capacity(5);
        if let Some(n) = info.display_name() {
            fields.push(n.to_string());
        }
        if let Some(s) = info.summary() {
            fields.push(s.to_string());
        }
        let first = info.first_message_text();
        let cut = first
            .char_indices()
            .nth(500)
            .map_or(first.len(), |(i, _)| i);
        fields.push(first[..cut].to_string());
        fields.push(info.cwd.clone());
        fields.push(info.id.clone());
        let mut text = String::with_capacity(info.all_text.len() + 256);
        for f in [
            info.id.as_str(),
            info.display_name().unwrap_or(""),
            info.summary().unwrap_or(""),
            info.cwd.as_str(),
        ] {
            text.push_str(&normalized(f));
            text.push('\n');
        }
        let body_start = text.len();
        text.push_str(&normalized(&info.all_text));
        SearchDoc {
            fields,
            text,
            body_start,
        }
    }

    /// The short fields' part of `text`.
    pub fn fields_text(&self) -> &str {
        &self.text[..self.body_start]
    }

    /// The bodies' part of `text` (empty for rows from the index).
    pub fn body_text(&self) -> &str {
        &self.text[self.body_start..]
    }
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn ascii_and_unicode_paths_agree() {
        for s in ["Hello   World\n\tX", "  lead", "Ünïcödé  TEXT", "a\u{b}b"] {
            let mut fast = String::new();
            normalize(s, &mut fast);
            let mut slow = String::new();
            let mut in_space = true;
            for c in s.chars() {
                if c.is_whitespace() {
                    if !in_space {
                        slow.push(' ');
                        in_space = true;
                    }
                } else {
                    slow.extend(c.to_lowercase());
                    in_space = false;
                }
            }
            assert_eq!(fast, slow, "{s:?}");
        }
    }
}
