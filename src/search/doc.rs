use crate::session::info::SessionInfo;

/// What a query is matched against, prepared once per session.
#[derive(Debug, Clone, Default)]
pub struct SearchDoc {
    /// Short fields, original case (fuzzy matching ignores case itself).
    pub fields: Vec<String>,
    /// Everything searchable, lowercased, whitespace runs collapsed to one space.
    pub text: String,
}

/// Lowercases and collapses whitespace runs to single spaces.
pub fn normalize(s: &str, out: &mut String) {
    if s.is_ascii() {
        normalize_ascii(s.as_bytes(), out);
        return;
    }
    let mut in_space = out.ends_with(' ') || out.is_empty();
    for c in s.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            for l in c.to_lowercase() {
                out.push(l);
            }
            in_space = false;
        }
    }
}

/// The byte-level fast path of `normalize` for ASCII text (most transcripts).
fn normalize_ascii(s: &[u8], out: &mut String) {
    let mut buf = std::mem::take(out).into_bytes();
    buf.reserve(s.len());
    let mut in_space = buf.last() == Some(&b' ') || buf.is_empty();
    for &b in s {
        if b.is_ascii_whitespace() || b == 0x0b {
            if !in_space {
                buf.push(b' ');
                in_space = true;
            }
        } else {
            buf.push(b.to_ascii_lowercase());
            in_space = false;
        }
    }
    // Only ASCII bytes were added to valid UTF-8.
    *out = String::from_utf8(buf).unwrap_or_default();
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
        fields.push(info.first_message_text().chars().take(500).collect());
        fields.push(info.cwd.clone());
        fields.push(info.id.clone());
        let mut text = String::with_capacity(info.all_text.len() + 256);
        for f in [
            info.id.as_str(),
            info.display_name().unwrap_or(""),
            info.summary().unwrap_or(""),
            info.cwd.as_str(),
            info.all_text.as_str(),
        ] {
            normalize(f, &mut text);
            if !text.ends_with(' ') {
                text.push(' ');
            }
        }
        SearchDoc { fields, text }
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
