//! The user's theme (Atomic's built-in themes and theme files, picked by
//! Atomic's `settings.json`, arbor's `config.toml` or `--theme`) reaching
//! the screen, `NO_COLOR` over all of them, and `arbor config`.

use crate::common::{self, drive};

use std::path::{Path, PathBuf};

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use ratatui::Terminal;

use crate::common::pty::{self, Term};
use arbor::settings::builtin_themes::REQUIRED;
use arbor::settings::color::ColorMode;
use arbor::settings::{Origin, Overrides, Settings};
use arbor::ui::picker::{Row, Scope as PickerScope, Sort};
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent};
use arbor_session::info::scan_info;
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

/// 2026-11-29T12:00:00Z: the demo sessions are 1 day to 9 days old.
const NOW: i64 = 1_795_953_600_000;
const WEBAPP: &str = "/home/demo/projects/webapp";

fn demo_app(root: &Path) -> App {
    let (files, _) = list_session_files(
        &StoreConfig::single(root, StoreKind::PerProject),
        &Scope::All,
    );
    let rows: Vec<Row> = files
        .iter()
        .map(|f| Row::new(scan_info(&f.path).unwrap()))
        .collect();
    let mut app = App::new(WEBAPP.to_string(), NOW);
    app.width = 100;
    app.height = 24;
    drive(&mut app, AppEvent::Rows(rows));
    drive(&mut app, AppEvent::LoadFinished { problems: vec![] });
    app
}

fn color(c: Color) -> String {
    match c {
        Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
        Color::Indexed(i) => format!("@{i}"),
        other => format!("{other:?}"),
    }
}

/// The screen with its styles: each row's text, then a line per run of
/// cells drawn alike (`col..end fg bg +MODIFIERS`), default runs left out.
fn styled_screen(buf: &Buffer) -> String {
    let mut out = String::new();
    let text = common::buffer_text(buf);
    for (y, line) in text.lines().enumerate() {
        out.push_str(&format!("{line}\n"));
        let y = y as u16;
        let mut x = 0;
        while x < buf.area.width {
            let style = buf[(x, y)].style();
            let start = x;
            while x < buf.area.width && buf[(x, y)].style() == style {
                x += 1;
            }
            let mut desc = Vec::new();
            if let Some(fg) = style.fg.filter(|c| *c != Color::Reset) {
                desc.push(format!("fg {}", color(fg)));
            }
            if let Some(bg) = style.bg.filter(|c| *c != Color::Reset) {
                desc.push(format!("bg {}", color(bg)));
            }
            if style.add_modifier != Modifier::empty() {
                desc.push(format!("+{:?}", style.add_modifier));
            }
            if !desc.is_empty() {
                out.push_str(&format!("      {start}..{x} {}\n", desc.join(" ")));
            }
        }
    }
    out
}

fn themed_picker(name: &str) -> String {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let mut app = demo_app(&root);
    // The second row selected: the selected row's background shows.
    drive(
        &mut app,
        AppEvent::Key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Down,
            crossterm::event::KeyModifiers::NONE,
        )),
    );
    let theme =
        arbor::settings::atomic_theme::load(name, Path::new("/nonexistent"), ColorMode::TrueColor)
            .unwrap();
    let mut t = Terminal::new(TestBackend::new(app.width, app.height)).unwrap();
    t.draw(|f| arbor::ui::picker::render(f, &app, &theme))
        .unwrap();
    styled_screen(t.backend().buffer())
}

#[test]
fn the_picker_in_the_light_theme() {
    let s = themed_picker("light");
    // Atomic's light accent and selected-row background.
    assert!(s.contains("fg #5a8080"), "{s}");
    assert!(s.contains("bg #d0d0e0"), "{s}");
    insta::assert_snapshot!("picker_light", s);
}

#[test]
fn the_picker_in_catppuccin_mocha() {
    let s = themed_picker("catppuccin-mocha");
    assert!(s.contains("fg #89b4fa"), "{s}");
    assert!(s.contains("bg #45475a"), "{s}");
    insta::assert_snapshot!("picker_catppuccin_mocha", s);
}

/// A theme file with Atomic's schema: `accent` through a variable to a
/// hex colour, `dim` a 256-colour index, every other token `""`.
fn custom_theme() -> String {
    let colors: Vec<String> = REQUIRED
        .iter()
        .map(|t| match *t {
            "accent" => format!("\"{t}\": \"brand\""),
            "dim" => format!("\"{t}\": 135"),
            _ => format!("\"{t}\": \"\""),
        })
        .collect();
    format!(
        "{{\"name\": \"mine\", \"vars\": {{\"brand\": \"#123456\"}}, \"colors\": {{{}}}}}",
        colors.join(", ")
    )
}

/// A home whose Atomic agent dir picks the theme `mine` (written by
/// `theme_file`) in its `settings.json`.
fn home_with_theme(theme_file: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let agent = home.path().join(".atomic/agent");
    std::fs::create_dir_all(agent.join("themes")).unwrap();
    std::fs::write(agent.join("settings.json"), r#"{"theme": "mine"}"#).unwrap();
    std::fs::write(agent.join("themes/mine.json"), theme_file).unwrap();
    home
}

/// The picker on the demo store in a real terminal, with colour (unless
/// `env` says `NO_COLOR`); everything it wrote until the list showed.
fn picker_bytes(home: &Path, args: &[&str], env: &[(&str, &str)]) -> (Vec<u8>, String) {
    let store = common::demo_store();
    let root = store.path().join("sessions");
    let mut cmd = pty::arbor();
    cmd.env_remove("NO_COLOR");
    cmd.env_remove("COLORFGBG");
    cmd.env("COLORTERM", "truecolor");
    cmd.env("HOME", home);
    cmd.env("XDG_DATA_HOME", home.join("data"));
    cmd.env("ARBOR_CACHE_DIR", home.join("cache"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.arg("--store");
    cmd.arg(&root);
    cmd.arg("--all");
    cmd.args(args);
    cmd.cwd(home);
    let mut term = Term::spawn(cmd, 24, 100);
    let screen = term.wait_for("the list", |t| t.contains("Fix flaky auth test"));
    term.press(b"\x03");
    term.wait_exit("Ctrl+C");
    let out = term.into_output();
    if std::env::var_os("DUMP_RAW").is_some() {
        std::fs::write("/tmp/theme-raw.bin", &out).unwrap();
    }
    (out, screen)
}

fn has(bytes: &[u8], what: &str) -> bool {
    bytes.windows(what.len()).any(|w| w == what.as_bytes())
}

/// Whether the output sets this colour (`38;2;r;g;b`, `38;5;n`): the
/// terminal may be sent it alone or with the background in one sequence.
fn sets(bytes: &[u8], sgr: &str) -> bool {
    has(bytes, &format!("[{sgr}m")) || has(bytes, &format!("[{sgr};"))
}

#[test]
fn a_custom_theme_reaches_the_terminal() {
    let home = home_with_theme(&custom_theme());
    let (out, _) = picker_bytes(home.path(), &[], &[]);
    assert!(sets(&out, "38;2;18;52;86"), "the accent, in 24-bit colour");
    assert!(sets(&out, "38;5;135"), "dim, the 256-colour index");
    // A terminal of 256 colours gets the nearest of them.
    let (out, _) = picker_bytes(
        home.path(),
        &[],
        &[("COLORTERM", ""), ("TERM", "screen-256color")],
    );
    assert!(sets(&out, "38;5;23"), "the accent, in the 256-colour cube");
    assert!(
        !has(&out, "38;2;"),
        "no 24-bit colour on a 256-colour terminal"
    );
}

#[test]
fn no_color_beats_every_theme() {
    let home = home_with_theme(&custom_theme());
    let (out, screen) = picker_bytes(
        home.path(),
        &["--theme", "catppuccin-latte"],
        &[("NO_COLOR", "1")],
    );
    assert!(screen.contains("Fix flaky auth test"));
    for sgr in ["38;2;", "38;5;", "48;2;", "48;5;"] {
        assert!(!has(&out, sgr), "no colour under NO_COLOR ({sgr})");
    }
    // The same terminal without NO_COLOR: the theme's colours.
    let (out, _) = picker_bytes(home.path(), &["--theme", "catppuccin-latte"], &[]);
    assert!(sets(&out, "38;2;136;57;239"), "latte's accent #8839ef");
}

#[test]
fn the_theme_flag_beats_the_settings() {
    let home = home_with_theme(&custom_theme());
    let (out, _) = picker_bytes(home.path(), &["--theme", "light"], &[]);
    assert!(sets(&out, "38;2;90;128;128"), "light's accent #5a8080");
    assert!(!has(&out, "38;2;18;52;86"), "not the settings' theme");
}

#[test]
fn a_broken_theme_file_is_one_line_and_the_default_theme() {
    let home = home_with_theme("{\"name\": \"mine\", \"colors\": {\"accent\": \"#ffffff\"}}");
    let (out, screen) = picker_bytes(home.path(), &[], &[]);
    let text = String::from_utf8_lossy(&out);
    let file = home.path().join(".atomic/agent/themes/mine.json");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("arbor: theme file"))
        .collect();
    assert_eq!(lines.len(), 1, "one line: {text:?}");
    assert!(
        lines[0].contains(&format!(
            "arbor: theme file {}: missing colour tokens: border,",
            file.display()
        )),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].trim_end().ends_with("; using the dark theme"),
        "{}",
        lines[0]
    );
    // The screen says so too, and is drawn in Atomic's dark theme.
    assert!(screen.contains("theme file"), "{screen}");
    assert!(sets(&out, "38;2;138;190;183"), "dark's accent #8abeb7");
}

fn config_cmd(home: &Path) -> std::process::Command {
    let mut cmd = common::arbor();
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("COLORTERM", "truecolor")
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .env_remove("COLORFGBG")
        .env_remove("ARBOR_RESUME_CMD")
        .env_remove("WT_SESSION")
        .env_remove("TERM_PROGRAM");
    cmd
}

fn write_config(home: &Path, text: &str) -> PathBuf {
    let dir = home.join(".config/arbor");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.toml");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn arbor_config_prints_every_setting_and_its_origin() {
    let home = home_with_theme(&custom_theme());
    write_config(
        home.path(),
        "scope = \"all\"\nsort = \"recent\"\nmouse = false\n\n[resume]\nclaude = \"claude --resume={id} --verbose\"\n",
    );
    let out =
        common::run_ok(config_cmd(home.path()).args(["--resume-cmd", "pi=pi -c {path}", "config"]));
    let shown = out.replace(&home.path().display().to_string(), "[home]");
    insta::assert_snapshot!("arbor_config", shown);
    // The theme named on the command line beats Atomic's settings.
    let out = common::run_ok(config_cmd(home.path()).args(["config", "--theme", "light"]));
    assert!(
        out.lines()
            .any(|l| l.starts_with("theme") && l.contains("light") && l.ends_with("flag")),
        "{out}"
    );
}

#[test]
fn config_errors_name_the_file_line_and_key() {
    let home = tempfile::tempdir().unwrap();
    let file = write_config(
        home.path(),
        "theme = \"light\"\n# preview\nsort = \"newest\"\nmouse = \"sometimes\"\nfrobnicate = 1\n",
    );
    let out = config_cmd(home.path()).arg("config").output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    let f = file.display();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with(&format!("arbor: {f}: line 3: key \"sort\": ")),
        "{err}"
    );
    assert!(
        lines[1].starts_with(&format!("arbor: {f}: line 4: key \"mouse\": ")),
        "{err}"
    );
    assert_eq!(
        lines[2],
        format!("arbor: {f}: unknown keys ignored: \"frobnicate\" (line 5)")
    );
    // What was right is in force; what was wrong is its default.
    let stdout = String::from_utf8(out.stdout).unwrap();
    let row = |k: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(k))
            .unwrap()
            .to_string()
    };
    assert!(
        row("theme ").contains("light") && row("theme ").ends_with("file"),
        "{stdout}"
    );
    assert!(
        row("sort ").contains("threaded") && row("sort ").ends_with("default"),
        "{stdout}"
    );
    assert!(
        row("mouse ").contains("on") && row("mouse ").ends_with("default"),
        "{stdout}"
    );
}

#[test]
fn flags_beat_the_file_and_the_file_beats_the_defaults() {
    let home = tempfile::tempdir().unwrap();
    let file = write_config(
        home.path(),
        "theme = \"catppuccin-frappe\"\nscope = \"current\"\nsort = \"fuzzy\"\npreview = false\n\
         [resume]\natomic = \"atomic --session {path} --verbose\"\nclaude = \"claude -r {id}\"\n",
    );
    let var = |k: &str| match k {
        "XDG_CONFIG_HOME" => Some(home.path().join(".config").display().to_string()),
        "COLORTERM" => Some("truecolor".to_string()),
        _ => None,
    };
    let s = Settings::load(&Overrides::default(), &var, Some(home.path()));
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    assert_eq!(s.config_path.value, file);
    assert_eq!(
        (s.theme_name.value.as_str(), &s.theme_name.origin),
        ("catppuccin-frappe", &Origin::File)
    );
    assert_eq!(
        (s.scope.value, &s.scope.origin),
        (PickerScope::Current, &Origin::File)
    );
    assert_eq!(s.sort.value, Sort::Relevance);
    assert_eq!(s.preview_on(), Some(false));
    assert_eq!((s.mouse.value, &s.mouse.origin), (true, &Origin::Default));
    let cmds = vec!["claude=claude --resume={id}".to_string()];
    let o = Overrides {
        theme: Some("ansi"),
        all: true,
        resume_cmd: &cmds,
        ..Overrides::default()
    };
    let s = Settings::load(&o, &var, Some(home.path()));
    assert_eq!(
        (s.theme_name.value.as_str(), &s.theme_name.origin),
        ("ansi", &Origin::Flag)
    );
    assert_eq!(s.theme, Theme::ansi());
    assert_eq!(
        (s.scope.value, &s.scope.origin),
        (PickerScope::All, &Origin::Flag)
    );
    assert_eq!(
        s.resume_cmds(),
        vec![
            "atomic=atomic --session {path} --verbose".to_string(),
            "claude=claude --resume={id}".to_string()
        ]
    );
    // Another file named on the command line replaces it entirely.
    let other = home.path().join("other.toml");
    std::fs::write(&other, "mouse = false\n").unwrap();
    let o = Overrides {
        config: Some(&other),
        ..Overrides::default()
    };
    let s = Settings::load(&o, &var, Some(home.path()));
    assert_eq!(
        (s.config_path.value.as_path(), &s.config_path.origin),
        (other.as_path(), &Origin::Flag)
    );
    assert_eq!(
        (s.mouse.value, &s.theme_name.origin),
        (false, &Origin::Terminal)
    );
}
