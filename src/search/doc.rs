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
