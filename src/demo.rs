//! The bundled demo store, shown when a machine has no sessions yet.

use std::path::Path;

use arbor_session::fileops;

/// The placeholder the demo files use for their own store path.
pub const ROOT_PLACEHOLDER: &str = "__ARBOR_DEMO_STORE__";

struct DemoFile {
    rel: &'static str,
    bytes: &'static [u8],
}

macro_rules! demo {
    ($($p:literal),* $(,)?) => {
        &[$(DemoFile { rel: $p, bytes: include_bytes!(concat!("../assets/demo-store/", $p)) }),*]
    };
}

const FILES: &[DemoFile] = demo![
    "--home-demo-projects-webapp--/2026-11-20T15-02-31-508Z_01a1f97b-0554-756b-95f5-edc872f30502.jsonl",
    "--home-demo-projects-webapp--/2026-11-21T09-14-07-412Z_01a1fd62-68b4-7718-a139-873a95bd447e.jsonl",
    "--home-demo-projects-webapp--/2026-11-21T10-20-44-090Z_01a1fd9f-64ba-72cb-a978-f7c2cdda02d8.jsonl",
    "--home-demo-projects-webapp--/2026-11-24T11-05-19-774Z_01a20d3b-4c9e-758e-a6d1-2b1bba4e2f4e.jsonl",
    "--home-demo-projects-tidy-csv--/2026-11-23T16-40-12-305Z_01a20947-8711-79a8-aefc-6b48e8fafc36.jsonl",
    "--home-demo-projects-tidy-csv--/2026-11-27T08-45-57-031Z_01a21c2e-c5a7-7c67-9040-bae1729ccdbe.jsonl",
    "--home-demo-projects-pyledger--/2026-11-25T13-30-26-867Z_01a212e6-84b3-7533-918b-8fac133ece6c.jsonl",
    "--home-demo-projects-pyledger--/2026-11-26T10-12-40-236Z_01a21757-ceac-7b7f-a50c-7bcf859c2f35.jsonl",
    "--home-demo-projects-pyledger--/2026-11-28T17-50-08-615Z_01a22347-5ae7-7049-b1b4-c5275182e153.jsonl",
];

/// Where the demo store is unpacked: `$ARBOR_CACHE_DIR` or the user cache dir.
pub fn demo_dir() -> std::path::PathBuf {
    let base = std::env::var_os("ARBOR_CACHE_DIR")
        .map(std::path::PathBuf::from)
        .or_else(|| dirs::cache_dir().map(|d| d.join("arbor")))
        .unwrap_or_else(|| std::env::temp_dir().join("arbor"));
    base.join("demo-store")
}

fn fill(bytes: &[u8], dest: &Path) -> Vec<u8> {
    let text = String::from_utf8_lossy(bytes);
    let root = dest.display().to_string();
    // The path sits inside a JSON string: escape it like one.
    let escaped = serde_json::to_string(&root).unwrap_or_default();
    let escaped = escaped.trim_matches('"');
    text.replace(ROOT_PLACEHOLDER, escaped).into_bytes()
}

/// Writes the embedded demo store to `dest` (a store root), unless it is there.
pub fn unpack_demo_store(dest: &Path) -> std::io::Result<()> {
    for f in FILES {
        let to = dest.join(f.rel);
        if to.exists() {
            continue;
        }
        write_session(&to, &fill(f.bytes, dest))?;
    }
    Ok(())
}

/// Writes a demo session dated by its newest message, as if the agent had
/// just written it then (a fresh copy would otherwise look live).
fn write_session(to: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let now = std::time::SystemTime::now();
    let dated = arbor_session::info::scan_info_bytes(to, bytes, ms_since_epoch(now))
        .map(|info| {
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(info.modified_ms.max(0) as u64)
        })
        .unwrap_or(now);
    fileops::write_dated(to, bytes, dated)
}

fn ms_since_epoch(t: std::time::SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Copies a demo store folder (e.g. `assets/demo-store`) to `dest`, filling in paths.
pub fn copy_demo_store(src: &Path, dest: &Path) -> std::io::Result<()> {
    for project in std::fs::read_dir(src)? {
        let project = project?;
        if !project.file_type()?.is_dir() {
            continue;
        }
        let to_dir = dest.join(project.file_name());
        for f in std::fs::read_dir(project.path())? {
            let f = f?;
            let bytes = std::fs::read(f.path())?;
            write_session(&to_dir.join(f.file_name()), &fill(&bytes, dest))?;
        }
    }
    Ok(())
}
