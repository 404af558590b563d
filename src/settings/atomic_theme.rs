//! An Atomic theme by name: one of Atomic's built-in themes, arbor's own
//! `ansi`, or a theme file `<agent dir>/themes/NAME.json` read with
//! Atomic's schema (`name`, `vars`, `colors` with all 51 tokens; a colour
//! is `#rrggbb`, a 256-colour index, a variable's name, or `""` for the
//! terminal's default).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use ratatui::style::Color;
use serde_json::{Map, Value};

use super::builtin_themes::{BUILTIN, REQUIRED, TOKENS};
use super::color::{parse_hex, rgb, ColorMode};
use crate::ui::theme::{Palette, Theme};

/// arbor's own theme: the terminal's named colours.
pub const ANSI: &str = "ansi";

/// Where a theme of this name is read from: built in, or its file.
pub fn theme_file(name: &str, agent_dir: &Path) -> Option<PathBuf> {
    if name == ANSI || BUILTIN.iter().any(|(n, _)| *n == name) {
        return None;
    }
    Some(agent_dir.join("themes").join(format!("{name}.json")))
}

/// The theme named `name`, or why it cannot be used (one line).
pub fn load(name: &str, agent_dir: &Path, mode: ColorMode) -> Result<Theme, String> {
    if name == ANSI {
        return Ok(Theme::ansi());
    }
    if let Some((_, values)) = BUILTIN.iter().find(|(n, _)| *n == name) {
        let colors: Map<String, Value> = TOKENS
            .iter()
            .zip(values)
            .map(|(t, v)| (t.to_string(), Value::from(*v)))
            .collect();
        return palette(&colors, &Map::new(), mode).map(Theme::with_palette);
    }
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(format!("theme \"{name}\" is not a theme name"));
    }
    let Some(path) = theme_file(name, agent_dir) else {
        return Err(format!("theme \"{name}\" not found"));
    };
    let shown = crate::term::path(&path);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "theme \"{name}\" not found (not built in, no {shown})"
            ))
        }
        Err(e) => return Err(format!("cannot read the theme file {shown}: {e}")),
    };
    from_json(&text, mode)
        .map(Theme::with_palette)
        .map_err(|why| format!("theme file {shown}: {why}"))
}

/// A theme file's text, checked as Atomic checks it, as arbor's palette.
pub fn from_json(text: &str, mode: ColorMode) -> Result<Palette, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
    let Value::Object(top) = json else {
        return Err("not a JSON object".into());
    };
    if !top.get("name").is_some_and(Value::is_string) {
        return Err("no \"name\" string".into());
    }
    let empty = Map::new();
    let vars = match top.get("vars") {
        None => &empty,
        Some(Value::Object(v)) => v,
        Some(_) => return Err("\"vars\" is not an object".into()),
    };
    let Some(Value::Object(colors)) = top.get("colors") else {
        return Err("no \"colors\" object".into());
    };
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|t| !colors.contains_key(*t))
        .collect();
    // A few named, the rest counted: the message stays one line to read.
    const NAMED: usize = 6;
    match missing.len() {
        0 => {}
        n if n <= NAMED => return Err(format!("missing colour tokens: {}", missing.join(", "))),
        n => {
            return Err(format!(
                "missing colour tokens: {} and {} more",
                missing[..NAMED].join(", "),
                n - NAMED
            ))
        }
    }
    // Every token must resolve, as in Atomic, not only those arbor draws with.
    for token in REQUIRED {
        resolve(token, &colors[token], vars, mode)?;
    }
    palette(colors, vars, mode)
}

/// The palette of resolved `colors`.
fn palette(
    colors: &Map<String, Value>,
    vars: &Map<String, Value>,
    mode: ColorMode,
) -> Result<Palette, String> {
    let get = |token: &str| -> Result<Color, String> {
        let value = colors.get(token).unwrap_or(&Value::Null);
        resolve(token, value, vars, mode)
    };
    Ok(Palette {
        accent: get("accent")?,
        border: get("border")?,
        border_accent: get("borderAccent")?,
        success: get("success")?,
        error: get("error")?,
        warning: get("warning")?,
        muted: get("muted")?,
        dim: get("dim")?,
        selected_bg: get("selectedBg")?,
        custom_message_label: get("customMessageLabel")?,
        md_heading: get("mdHeading")?,
    })
}

/// One colour value: variables followed (a cycle or a missing one is an
/// error), then `""`, `#rrggbb` or an index 0–255.
fn resolve(
    token: &str,
    value: &Value,
    vars: &Map<String, Value>,
    mode: ColorMode,
) -> Result<Color, String> {
    let mut value = value;
    let mut seen = HashSet::new();
    loop {
        match value {
            Value::Number(n) => {
                return n
                    .as_u64()
                    .and_then(|i| u8::try_from(i).ok())
                    .map(Color::Indexed)
                    .ok_or_else(|| format!("{token}: {n} is not a colour index 0-255"));
            }
            Value::String(s) if s.is_empty() => return Ok(Color::Reset),
            Value::String(s) if s.starts_with('#') => {
                let (r, g, b) = parse_hex(s)
                    .ok_or_else(|| format!("{token}: \"{s}\" is not a #rrggbb colour"))?;
                return Ok(rgb(r, g, b, mode));
            }
            Value::String(s) => {
                if !seen.insert(s.as_str()) {
                    return Err(format!("{token}: variable \"{s}\" refers to itself"));
                }
                value = vars
                    .get(s)
                    .ok_or_else(|| format!("{token}: no variable \"{s}\""))?;
            }
            _ => return Err(format!("{token}: not a colour (a string or a number)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A valid theme file with `accent` set to `accent` (every other
    /// token `""`) and these variables.
    fn file(accent: &str, vars: &str) -> String {
        let colors: Vec<String> = REQUIRED
            .iter()
            .map(|t| {
                let v = if *t == "accent" { accent } else { "\"\"" };
                format!("\"{t}\": {v}")
            })
            .collect();
        format!(
            "{{\"name\": \"t\", \"vars\": {{{vars}}}, \"colors\": {{{}}}}}",
            colors.join(",")
        )
    }

    #[test]
    fn colours_resolve_as_atomic_reads_them() {
        let p = |accent: &str, vars: &str| from_json(&file(accent, vars), ColorMode::TrueColor);
        assert_eq!(p("\"#102030\"", "").unwrap().accent, Color::Rgb(16, 32, 48));
        assert_eq!(p("39", "").unwrap().accent, Color::Indexed(39));
        assert_eq!(p("\"\"", "").unwrap().accent, Color::Reset);
        assert_eq!(
            p("\"a\"", "\"a\": \"b\", \"b\": 7").unwrap().accent,
            Color::Indexed(7)
        );
        assert_eq!(p("\"#102030\"", "").unwrap().dim, Color::Reset);
        let in_256 = from_json(&file("\"#ff0000\"", ""), ColorMode::Palette256).unwrap();
        assert_eq!(in_256.accent, Color::Indexed(196));
    }

    #[test]
    fn broken_files_say_why() {
        let e = |accent: &str, vars: &str| {
            from_json(&file(accent, vars), ColorMode::TrueColor).unwrap_err()
        };
        assert!(e("\"nope\"", "").contains("no variable \"nope\""));
        assert!(e("\"a\"", "\"a\": \"b\", \"b\": \"a\"").contains("refers to itself"));
        assert!(e("256", "").contains("not a colour index"));
        assert!(e("\"#12345\"", "").contains("not a #rrggbb"));
        let missing = from_json(
            r#"{"name": "x", "colors": {"accent": ""}}"#,
            ColorMode::TrueColor,
        )
        .unwrap_err();
        assert!(
            missing.starts_with("missing colour tokens: border, borderAccent"),
            "{missing}"
        );
        assert!(from_json("{", ColorMode::TrueColor)
            .unwrap_err()
            .starts_with("not JSON"));
        assert!(from_json(r#"{"colors": {}}"#, ColorMode::TrueColor)
            .unwrap_err()
            .contains("name"));
    }

    #[test]
    fn every_builtin_loads() {
        let dir = Path::new("/nonexistent");
        for (name, _) in BUILTIN {
            let t = load(name, dir, ColorMode::TrueColor).unwrap();
            assert!(t.has_color());
        }
        assert_eq!(
            load("ansi", dir, ColorMode::TrueColor).unwrap(),
            Theme::ansi()
        );
        assert!(load("mine", dir, ColorMode::TrueColor)
            .unwrap_err()
            .contains("not found"));
        assert!(load("../x", dir, ColorMode::TrueColor)
            .unwrap_err()
            .contains("not a theme name"));
    }
}
