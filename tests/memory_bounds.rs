//! Memory bounded by what is shown, not by the session (hostile
//! conditions, item 5): `fork`, `context` and `export` read a session lean
//! (each entry's facts and where its line is) and then its lines one at a
//! time. A counting allocator (this binary's own: one test, so nothing else
//! allocates meanwhile) measures the bytes held at the peak of each, which
//! must stay near what reading the session's facts costs, plus a few times
//! its longest line, however big the file.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use arbor_session::export::{Export, ExportFormat, ExportOptions};
use arbor_session::{ContextFlavor, ContextPlan, SessionTree};

struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = HELD.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call is handed to the system allocator unchanged; the
// counters only add and subtract sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        HELD.fetch_sub(l.size(), Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            // Both blocks may be held while the bytes are copied.
            grew(new);
            HELD.fetch_sub(l.size(), Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most bytes held above what was held before `f` ran.
fn peak_of<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let base = HELD.load(Relaxed);
    PEAK.store(base, Relaxed);
    let r = f();
    (r, PEAK.load(Relaxed).saturating_sub(base))
}

const MB: usize = 1 << 20;
/// The session's longest line.
const LONGEST: usize = 4 * MB;

/// A session of `n` entries, most lines about 9 KB (user messages, tool
/// results), and one tool result of [`LONGEST`] bytes in the middle.
fn write_session(path: &Path, n: usize) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = std::io::BufWriter::new(f);
    writeln!(w, r#"{{"type":"session","version":3,"id":"0193b000-0000-7000-8000-000000000001","timestamp":"2026-12-07T10:00:00.000Z","cwd":"/m"}}"#).unwrap();
    let mut parent = "null".to_string();
    let text = "output line of a tool that goes on ".repeat(250);
    for i in 0..n {
        let id = format!("{i:08x}");
        let body = if i == n / 2 {
            "x".repeat(LONGEST)
        } else {
            format!("{i} {text}")
        };
        let line = match i % 3 {
            0 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-12-07T10:00:01.000Z","message":{{"role":"user","content":"question {i} {text}","timestamp":1796637601000}}}}"#
            ),
            1 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-12-07T10:00:02.000Z","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c{i}","name":"bash","arguments":{{"command":"ls"}}}}],"model":"m","stopReason":"toolUse","timestamp":1796637602000}}}}"#
            ),
            _ => format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-12-07T10:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c{}","toolName":"bash","content":[{{"type":"text","text":"{body}"}}],"isError":false,"timestamp":1796637603000}}}}"#,
                i - 1
            ),
        };
        writeln!(w, "{line}").unwrap();
        parent = format!("\"{id}\"");
    }
}

#[test]
fn fork_context_and_export_hold_the_facts_and_a_few_lines_not_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    write_session(&path, 12_000);
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    assert!(size > 40 * MB, "{size}");

    // What reading the facts costs (the loader's read block among it).
    let ((session, tree), facts) = peak_of(|| {
        let s = arbor_session::reader::read_session_lean(&path).unwrap();
        let t = SessionTree::build(&s);
        (s, t)
    });
    // Beyond the facts: a few times the longest line, and a fixed budget.
    let lines = 3 * LONGEST + 4 * MB;
    let bound = facts + lines;
    eprintln!("file {size}, facts {facts}, bound {bound}");
    assert!(
        bound < size,
        "the bound {bound} must be below the file's {size}"
    );

    let (export, held) = peak_of(|| Export::open(&path, None).unwrap());
    assert!(held <= bound, "export's read: {held} > {bound}");
    for format in [
        ExportFormat::Json,
        ExportFormat::Markdown,
        ExportFormat::Html,
    ] {
        let (_, held) = peak_of(|| {
            export
                .write(format, ExportOptions::default(), &mut std::io::sink())
                .unwrap();
        });
        assert!(held <= lines, "export {format:?}: {held} > {lines}");
    }
    drop(export);

    let (_, held) = peak_of(|| {
        let plan = ContextPlan::new(&session, &tree, None, ContextFlavor::Atomic);
        let mut n = 0;
        plan.for_each_message(|m| n += m.text.len());
        assert!(n > size / 2, "{n}");
    });
    assert!(held <= lines, "context: {held} > {lines}");
    drop((session, tree));

    let out = dir.path().join("forked.jsonl");
    let (_, held) = peak_of(|| {
        let last = format!("{:08x}", 12_000 - 1);
        arbor_session::writer::fork(&path, &last, Some(&out)).unwrap();
    });
    assert!(held <= bound, "fork: {held} > {bound}");
    let forked = std::fs::metadata(&out).unwrap().len() as usize;
    assert!(forked > size / 2, "{forked}");
}
