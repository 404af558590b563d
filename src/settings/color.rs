//! What the terminal can show, read from the environment as Atomic reads
//! it: 24-bit colour or the 256-colour palette (`COLORTERM`, `TERM`, …),
//! and whether its background is dark or light (`COLORFGBG`).

use ratatui::style::Color;

/// How a theme's `#rrggbb` colours reach the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorMode {
    /// `38;2;r;g;b`.
    TrueColor,
    /// The nearest of the 256-colour palette, `38;5;n`.
    Palette256,
}

/// Atomic's rule: `COLORTERM=truecolor|24bit` or Windows Terminal say
/// 24-bit; a dumb, unnamed or Linux console, Apple's Terminal and GNU
/// screen get 256 colours; everything else is taken for 24-bit.
pub fn color_mode(var: &dyn Fn(&str) -> Option<String>) -> ColorMode {
    let colorterm = var("COLORTERM").unwrap_or_default();
    if colorterm == "truecolor" || colorterm == "24bit" || var("WT_SESSION").is_some() {
        return ColorMode::TrueColor;
    }
    let term = var("TERM").unwrap_or_default();
    let screen = term == "screen" || term.starts_with("screen-") || term.starts_with("screen.");
    if matches!(term.as_str(), "" | "dumb" | "linux")
        || var("TERM_PROGRAM").as_deref() == Some("Apple_Terminal")
        || screen
    {
        return ColorMode::Palette256;
    }
    ColorMode::TrueColor
}

/// The theme for a terminal with no theme chosen: `COLORFGBG`'s background
/// below 8 is dark, 8 and above light; unknown is dark (Atomic's rule).
pub fn background_theme(var: &dyn Fn(&str) -> Option<String>) -> &'static str {
    let bg = var("COLORFGBG")
        .and_then(|v| v.split(';').nth(1).map(str::to_string))
        .and_then(|bg| bg.trim().parse::<i64>().ok());
    match bg {
        Some(n) if n >= 8 => "light",
        _ => "dark",
    }
}

/// `#rrggbb` as its three channels; `None` for anything else.
pub fn parse_hex(s: &str) -> Option<(u8, u8, u8)> {
    let hex = s.strip_prefix('#')?;
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some((channel(0)?, channel(2)?, channel(4)?))
}

/// An RGB colour as the terminal will be sent it.
pub fn rgb(r: u8, g: u8, b: u8, mode: ColorMode) -> Color {
    match mode {
        ColorMode::TrueColor => Color::Rgb(r, g, b),
        ColorMode::Palette256 => Color::Indexed(nearest_256(r, g, b)),
    }
}

/// The six levels of each channel of the 256-colour cube (16–231).
const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

/// The nearest palette colour as Atomic picks it: the cube's, unless the
/// colour is nearly grey (channels within 10) and a grey of the ramp
/// (232–255) is nearer, by a distance weighted for the eye.
pub fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    let nearest_level = |v: u8| {
        (0..CUBE.len())
            .min_by_key(|&i| (i32::from(CUBE[i]) - i32::from(v)).abs())
            .unwrap_or(0)
    };
    let (ri, gi, bi) = (nearest_level(r), nearest_level(g), nearest_level(b));
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let cube_dist = distance((r, g, b), (CUBE[ri], CUBE[gi], CUBE[bi]));
    let grey = (0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b)).round();
    let grey_step = (0..24usize)
        .min_by(|&a, &b| {
            let da = (grey - (8 + 10 * a) as f64).abs();
            let db = (grey - (8 + 10 * b) as f64).abs();
            da.total_cmp(&db)
        })
        .unwrap_or(0);
    let grey_value = (8 + 10 * grey_step) as u8;
    let grey_dist = distance((r, g, b), (grey_value, grey_value, grey_value));
    let spread = r.max(g).max(b) - r.min(g).min(b);
    if spread < 10 && grey_dist < cube_dist {
        (232 + grey_step) as u8
    } else {
        cube_index as u8
    }
}

fn distance(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let d = |x: u8, y: u8| f64::from(x) - f64::from(y);
    let (dr, dg, db) = (d(a.0, b.0), d(a.1, b.1), d(a.2, b.2));
    dr * dr * 0.299 + dg * dg * 0.587 + db * db * 0.114
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn color_mode_follows_atomic() {
        let mode = |v: &[(&str, &str)]| color_mode(&env(v));
        assert_eq!(mode(&[("COLORTERM", "truecolor")]), ColorMode::TrueColor);
        assert_eq!(
            mode(&[("COLORTERM", "24bit"), ("TERM", "dumb")]),
            ColorMode::TrueColor
        );
        assert_eq!(mode(&[("TERM", "xterm-256color")]), ColorMode::TrueColor);
        assert_eq!(mode(&[("TERM", "screen-256color")]), ColorMode::Palette256);
        assert_eq!(mode(&[("TERM", "linux")]), ColorMode::Palette256);
        assert_eq!(mode(&[]), ColorMode::Palette256);
        assert_eq!(
            mode(&[("TERM", "xterm"), ("TERM_PROGRAM", "Apple_Terminal")]),
            ColorMode::Palette256
        );
        assert_eq!(mode(&[("WT_SESSION", "1")]), ColorMode::TrueColor);
    }

    #[test]
    fn background_from_colorfgbg() {
        let bg = |v: &[(&str, &str)]| background_theme(&env(v));
        assert_eq!(bg(&[]), "dark");
        assert_eq!(bg(&[("COLORFGBG", "15;0")]), "dark");
        assert_eq!(bg(&[("COLORFGBG", "0;15")]), "light");
        assert_eq!(bg(&[("COLORFGBG", "0;8")]), "light");
        assert_eq!(bg(&[("COLORFGBG", "0;default;15")]), "dark");
        assert_eq!(bg(&[("COLORFGBG", "garbage")]), "dark");
    }

    #[test]
    fn hex_and_palette() {
        assert_eq!(parse_hex("#00aaFF"), Some((0, 0xaa, 0xff)));
        assert_eq!(parse_hex("00aaff"), None);
        assert_eq!(parse_hex("#0af"), None);
        assert_eq!(parse_hex("#gg0000"), None);
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(255, 255, 255), 231);
        assert_eq!(nearest_256(255, 0, 0), 196);
        // Nearly grey and nearer the ramp: a grey.
        assert_eq!(nearest_256(0x80, 0x80, 0x80), 244);
        assert_eq!(nearest_256(0x3a, 0x3a, 0x4a), 59);
    }
}
