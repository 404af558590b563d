//! The structure's rules, checked on the source as a maintainer would grep
//! it: which module may change a user's files, what drawing may read, and
//! which way the model's modules depend on each other. Test modules
//! (`#[cfg(test)]`) are left out: tests write files of their own.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every source file of the workspace: the binary crate's `src/` and each
/// library crate's `crates/*/src/`.
fn all_sources(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        sources(&e.unwrap().path().join("src"), &mut files);
    }
    files.sort();
    files
}

/// Each non-test, non-comment line of every file under `src/`, with the
/// file's path relative to the workspace (`src/…`, `crates/…/src/…`, `/` separated).
fn code_lines() -> Vec<(String, usize, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = all_sources(root);
    let mut lines = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&f).unwrap();
        // Depth of braces inside a test module being skipped.
        let mut skip: Option<i64> = None;
        let mut cfg_test = false;
        for (n, line) in text.lines().enumerate() {
            let t = line.trim_start();
            if let Some(depth) = skip.as_mut() {
                *depth += t.matches('{').count() as i64 - t.matches('}').count() as i64;
                if *depth <= 0 && t.contains('}') {
                    skip = None;
                }
                continue;
            }
            if t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test,") {
                cfg_test = true;
                continue;
            }
            if cfg_test && (t.starts_with("mod ") || t.starts_with("pub mod ")) {
                cfg_test = false;
                let depth = t.matches('{').count() as i64 - t.matches('}').count() as i64;
                if depth > 0 {
                    skip = Some(depth);
                }
                continue;
            }
            cfg_test = false;
            if t.starts_with("//") {
                continue;
            }
            lines.push((rel.clone(), n + 1, line.to_string()));
        }
    }
    lines
}

/// Every operation that changes a user's files is in
/// `crates/arbor-session/src/write/fileops.rs`, the one place to audit.
/// Aside: the index's own cache files (its database, text generations and
/// dictionary files, made and removed by arbor-index's `db.rs`,
/// `refresh/write.rs`, `refresh/merge.rs` and `termfile.rs` only; its build
/// lock, `behind.rs`), the `--log` file and the terminal device.
#[test]
fn only_fileops_changes_files() {
    const CHANGES: &[&str] = &[
        "fs::write(",
        "rename(",
        "remove_file(",
        "remove_dir",
        "create_dir",
        "fs::copy(",
        "hard_link(",
        "set_permissions(",
        "File::create(",
        ".write(true)",
        ".append(true)",
        ".create(true)",
        ".create_new(true)",
        ".truncate(true)",
        "trash::delete",
        "os_limited::restore",
        "os_limited::purge",
        "set_modified(",
        "set_times(",
        "set_len(",
    ];
    const ASIDE: &[&str] = &[
        "crates/arbor-session/src/write/fileops.rs",
        "crates/arbor-index/src/db.rs",
        "crates/arbor-index/src/refresh/write.rs",
        "crates/arbor-index/src/refresh/merge.rs",
        "crates/arbor-index/src/termfile.rs",
        "crates/arbor-index/src/behind.rs",
        "crates/arbor-util/src/log.rs",
        // A remote's mirror: arbor's own cache, as the index's files are.
        "crates/arbor-remote/src/mirror_files.rs",
        "src/term.rs",
    ];
    let found: Vec<String> = code_lines()
        .into_iter()
        .filter(|(f, _, _)| !ASIDE.iter().any(|a| f.starts_with(a)))
        .filter(|(_, _, l)| CHANGES.iter().any(|c| l.contains(c)))
        .map(|(f, n, l)| format!("{f}:{n}: {}", l.trim()))
        .collect();
    assert!(
        found.is_empty(),
        "file changes outside fileops:\n{}",
        found.join("\n")
    );
}

/// Issue #12: drawing reads no environment (the clock, the time zone,
/// `$HOME`): what it shows comes from the state, so a screen is the same
/// on any machine and a test's snapshot never depends on the runner. The
/// runtime reads them (once, or with each tick) and hands them in; aside
/// are the signal handler's own deadline, the trash's error messages (not
/// drawn from the state), `NO_COLOR`, read when the theme is made, and
/// the input thread's clock, which pairs clicks into double clicks.
#[test]
fn drawing_reads_no_environment() {
    const READS: &[&str] = &["home_dir(", "now()", "env::var", "Local::"];
    const ASIDE: &[&str] = &[
        "src/ui/runtime.rs",
        "src/ui/runtime/sources.rs",
        "src/ui/signals.rs",
        "src/ui/trash_text.rs",
        "src/ui/theme.rs",
    ];
    let found: Vec<String> = code_lines()
        .into_iter()
        .filter(|(f, _, _)| f.starts_with("src/ui/") && !ASIDE.contains(&f.as_str()))
        .filter(|(_, _, l)| READS.iter().any(|c| l.contains(c)))
        .map(|(f, n, l)| format!("{f}:{n}: {}", l.trim()))
        .collect();
    assert!(
        found.is_empty(),
        "the UI reads the environment:\n{}",
        found.join("\n")
    );
}

/// Issue #12: the crate map of `docs/architecture.md` (its `## Crate map`
/// section) names every source file and every test file, and each source
/// file's first line says what it owns (a `//!` comment), so a newcomer
/// finds a thing from either end.
#[test]
fn the_crate_map_names_every_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let start = doc.find("\n## Crate map").expect("a Crate map section");
    let rest = &doc[start + 1..];
    let layout = &rest[..rest[1..].find("\n## ").map_or(rest.len(), |i| i + 1)];
    let files = all_sources(root);
    let mut missing = Vec::new();
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy();
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        let text = std::fs::read_to_string(f).unwrap();
        if !text.starts_with("//!") {
            missing.push(format!("{rel}: no `//!` first line"));
        }
        let named = ["lib", "main", "mod"].contains(&stem.as_ref())
            || layout.contains(&format!("`{stem}`"))
            || layout.contains(&format!("{stem}.rs"));
        if !named {
            missing.push(format!("{rel}: not in docs/architecture.md's crate map"));
        }
    }
    for e in std::fs::read_dir(root.join("tests")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".rs") && !layout.contains(&format!("`{name}`")) {
            missing.push(format!(
                "tests/{name}: not in docs/architecture.md's crate map"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// A file a newcomer can hold in their head: no source file has more than
/// 800 lines of code outside its test module (blank and comment lines
/// aside). Functions are held to 100 lines by clippy (`clippy.toml`).
#[test]
fn no_source_file_is_over_800_lines_of_code() {
    let mut per_file: std::collections::BTreeMap<String, usize> = Default::default();
    for (f, _, l) in code_lines() {
        if !l.trim().is_empty() {
            *per_file.entry(f).or_default() += 1;
        }
    }
    let over: Vec<String> = per_file
        .into_iter()
        .filter(|&(_, n)| n > 800)
        .map(|(f, n)| format!("{f}: {n} lines of code"))
        .collect();
    assert!(
        over.is_empty(),
        "files over 800 lines of code:\n{}",
        over.join("\n")
    );
}
