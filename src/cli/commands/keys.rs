//! `arbor keys`: every screen's keys in force, each with the id a
//! `keybindings.json` binds it under and where it came from (arbor's
//! default or the user's file); what in the file could not be used goes
//! to stderr, one line each.

use std::io::Write;

use anyhow::Result;
use serde_json::json;

use crate::cli::KeysArgs;
use crate::ui::key_screens::{screens, Line};
use crate::ui::key_syntax;
use crate::ui::keybindings::{load, UserKeys};

pub fn keys(a: &KeysArgs, out: &mut impl Write) -> Result<()> {
    let user = load();
    for p in &user.problems {
        eprintln!("arbor: {}", crate::ui::text::sanitize_line(p));
    }
    if a.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&as_json(&user))?)?;
    } else {
        write_table(&user, out)?;
    }
    Ok(())
}

fn key_names(l: &Line) -> Vec<String> {
    l.keys.iter().map(key_syntax::name).collect()
}

fn source(user: &UserKeys, l: &Line) -> String {
    if l.user {
        user.source(l.id)
    } else {
        "default".into()
    }
}

fn file_line(user: &UserKeys) -> String {
    match &user.file {
        Some(f) if user.found => format!("keybindings: {}", f.display()),
        Some(f) => format!("keybindings: {} (not found: the defaults)", f.display()),
        None => "keybindings: no home folder to look in (the defaults)".into(),
    }
}

fn write_table(user: &UserKeys, out: &mut impl Write) -> Result<()> {
    writeln!(out, "{}", crate::ui::text::sanitize_line(&file_line(user)))?;
    for (name, table) in screens() {
        writeln!(out, "\n{name}")?;
        for l in table.lines(user) {
            let keys = key_names(&l);
            let keys = if keys.is_empty() {
                "(no key)".to_string()
            } else {
                keys.join(", ")
            };
            writeln!(
                out,
                "  {:<34} {:<28} {:<8} {}",
                l.id.unwrap_or("(typing)"),
                keys,
                if l.user { "file" } else { "default" },
                l.help,
            )?;
        }
    }
    Ok(())
}

fn as_json(user: &UserKeys) -> serde_json::Value {
    let screens: Vec<serde_json::Value> = screens()
        .into_iter()
        .map(|(name, table)| {
            let bindings: Vec<serde_json::Value> = table
                .lines(user)
                .iter()
                .map(|l| {
                    json!({
                        "id": l.id,
                        "keys": key_names(l),
                        "source": source(user, l),
                        "whenFieldEmpty": l.when_empty,
                        "help": l.help,
                    })
                })
                .collect();
            json!({ "screen": name, "bindings": bindings })
        })
        .collect();
    json!({
        "file": user.file,
        "found": user.found,
        "problems": user.problems,
        "screens": screens,
    })
}
