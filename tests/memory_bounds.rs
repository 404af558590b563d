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

/// The tests of this binary run one at a time: the counters are shared.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
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

    // The lines of the entries among others too long to read (the tree's
    // search reads its entries so): read one by one, not as the span of
    // the file that holds them all (16 lines of 9 KB here; of hundreds of
    // megabytes in a hostile file).
    const SHORT: usize = 4 << 10;
    session.limit_lines(SHORT);
    let mid = 12_000 / 2;
    let around = &session.entries[mid - 8..mid + 8];
    assert!(around.iter().filter(|e| e.unread_len().is_some()).count() > 8);
    let (_, held) = peak_of(|| {
        let mut n = 0;
        session.for_each_line(around, |_, l| n += l.map_or(0, <[u8]>::len));
        assert!(n > 0, "{n}");
    });
    assert!(
        held <= 2 * SHORT,
        "the lines among long ones: {held} > {}",
        2 * SHORT
    );
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

/// A session of `n` short entries in Atomic's turns (user, assistant tool
/// call, tool result, assistant text), a side branch every 1,000 and a
/// label every 10,000: what a long agent run looks like, without its text.
fn write_short_session(path: &Path, n: usize) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = std::io::BufWriter::new(f);
    writeln!(w, r#"{{"type":"session","version":3,"id":"0193b000-0000-7000-8000-000000000002","timestamp":"2026-12-07T10:00:00.000Z","cwd":"/m"}}"#).unwrap();
    let mut parent = "null".to_string();
    for i in 0..n {
        let id = format!("{i:08x}");
        let ts = format!(
            "2026-12-07T10:{:02}:{:02}.{:03}Z",
            i / 60_000 % 60,
            i / 1000 % 60,
            i % 1000
        );
        let line = match i % 4 {
            _ if i % 10_000 == 9_999 => format!(
                r#"{{"type":"label","id":"{id}","parentId":{parent},"timestamp":"{ts}","targetId":"{:08x}","label":"l{i}"}}"#,
                i - 1
            ),
            0 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"user","content":"q{i}"}}}}"#
            ),
            1 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"toolCall","id":"c{i}","name":"bash","arguments":{{"command":"ls"}}}}],"stopReason":"toolUse"}}}}"#
            ),
            2 => format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"toolResult","toolCallId":"c{}","toolName":"bash","content":[{{"type":"text","text":"r"}}]}}}}"#,
                i - 1
            ),
            _ => format!(
                r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"text","text":"a{i}"}}],"stopReason":"stop"}}}}"#
            ),
        };
        writeln!(w, "{line}").unwrap();
        // Every 1,000 entries a side branch of one entry off the main line.
        parent = if i % 1000 == 500 {
            format!("\"{:08x}\"", i - 1)
        } else {
            format!("\"{id}\"")
        };
    }
}

/// What every command that needs the tree holds for each entry of the
/// session it read: its facts (ids, type, role, time, where its line is)
/// and its place in the tree (parent, children, depth, the id index). A
/// million entries must fit in a few hundred megabytes with room for the
/// rest: at most 200 bytes an entry held (the entries were 216, the tree
/// 150), 240 at the peak of reading them.
#[test]
fn the_facts_and_tree_of_a_session_hold_few_bytes_an_entry() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    const N: usize = 200_000;
    write_short_session(&path, N);

    let base = HELD.load(Relaxed);
    let ((session, tree), peak) = peak_of(|| {
        let s = arbor_session::reader::read_session_lean(&path).unwrap();
        let t = SessionTree::build(&s);
        (s, t)
    });
    let held = HELD.load(Relaxed) - base;
    assert_eq!(session.entries.len(), N);
    assert_eq!(tree.path_to(N - 1).len(), N - N / 1000);
    // The loader's read block is a fixed budget, not per entry.
    let block = 8 * MB + MB;
    eprintln!(
        "held {held} ({} an entry), peak {peak} ({} an entry beyond the block)",
        held / N,
        peak.saturating_sub(block) / N
    );
    assert!(held <= 200 * N, "held {held}: {} bytes an entry", held / N);
    assert!(
        peak <= 240 * N + block,
        "peak {peak}: {} bytes an entry",
        peak.saturating_sub(block) / N
    );
}

/// The text of the huge line of [`write_huge_line_session`]: words, a
/// newline (an escape in JSON) every line of them, a quoted word, and a
/// word no other entry has at its end.
fn huge_text(len: usize) -> String {
    let line = "output of a tool \"quoted\" that goes on and on\n";
    let mut t = line.repeat(len / line.len());
    t.push_str("zebrafish");
    t
}

/// A short session whose tool result is one line of about `len` bytes.
fn write_huge_line_session(path: &Path, len: usize) {
    let f = std::fs::File::create(path).unwrap();
    let mut w = std::io::BufWriter::new(f);
    writeln!(w, r#"{{"type":"session","version":3,"id":"0193b000-0000-7000-8000-000000000003","timestamp":"2026-12-07T10:00:00.000Z","cwd":"/m"}}"#).unwrap();
    let text = serde_json::to_string(&huge_text(len)).unwrap();
    let lines = [
        r#"{"type":"message","id":"00000001","parentId":null,"timestamp":"2026-12-07T10:00:01.000Z","message":{"role":"user","content":"run it"}}"#.to_string(),
        r#"{"type":"message","id":"00000002","parentId":"00000001","timestamp":"2026-12-07T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"bash","arguments":{"command":"ls"}}],"stopReason":"toolUse"}}"#.to_string(),
        format!(r#"{{"type":"message","id":"00000003","parentId":"00000002","timestamp":"2026-12-07T10:00:03.000Z","message":{{"role":"toolResult","toolCallId":"c2","toolName":"bash","content":[{{"type":"text","text":{text}}}],"isError":false}}}}"#),
        r#"{"type":"message","id":"00000004","parentId":"00000003","timestamp":"2026-12-07T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop"}}"#.to_string(),
    ];
    for l in lines {
        writeln!(w, "{l}").unwrap();
    }
}

/// A line of hundreds of megabytes (one tool's output) is held once, not
/// three or four times over: its text parsed a block at a time out of the
/// file (never its bytes, serde_json's scratch and the string together),
/// and fork, context, export, diff and search pass it through without
/// another copy (`arbor search` also held a lowercase copy and the words
/// joined). The goal is twice the line in all (with what reading the
/// session costs); here each is held to the text and a quarter.
#[test]
fn a_huge_line_is_held_once_by_every_command_that_reads_it() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl");
    const TEXT: usize = 24 * MB;
    write_huge_line_session(&path, TEXT);
    let line = std::fs::metadata(&path).unwrap().len() as usize;
    // The line's text (the line's length reserved for it), and a fixed
    // budget of blocks; the line parsed the old way held 3 times it.
    let once = line + line / 8 + 4 * MB;
    // Reading the session lean (its facts) reads the line once, whole.
    let (_, lean) = peak_of(|| arbor_session::reader::read_session_lean(&path).unwrap());
    let mut failed = Vec::new();
    let mut check = |what: &str, held: usize, bound: usize| {
        eprintln!("{what}: {held} (bound {bound})");
        if held > bound {
            failed.push(format!("{what}: {held} > {bound}"));
        }
    };

    let out = dir.path().join("forked.jsonl");
    let (_, held) = peak_of(|| arbor_session::writer::fork(&path, "00000004", Some(&out)).unwrap());
    check("fork", held, once.max(lean) + MB);
    assert_eq!(
        std::fs::metadata(&out).unwrap().len() / MB as u64,
        std::fs::metadata(&path).unwrap().len() / MB as u64
    );

    let session = arbor_session::reader::read_session_lean(&path).unwrap();
    let tree = SessionTree::build(&session);
    let (n, held) = peak_of(|| {
        let plan = ContextPlan::new(&session, &tree, None, ContextFlavor::Atomic).texts_only();
        let mut n = 0;
        plan.for_each_message(|m| n += m.text.len());
        n
    });
    assert!(n > TEXT, "{n}");
    check("context", held, once);

    let (_, held) = peak_of(|| {
        let c = arbor_session::compare::compare_at(&session, &tree, 1, 3);
        drop(c);
    });
    check("diff", held, once);
    drop((session, tree));

    let export = Export::open(&path, None).unwrap();
    for format in [
        ExportFormat::Markdown,
        ExportFormat::Html,
        ExportFormat::Json,
    ] {
        let mut size = 0;
        let (_, held) = peak_of(|| {
            let mut w = Counted(&mut size);
            export
                .write(format, ExportOptions::default(), &mut w)
                .unwrap();
        });
        assert!(size > TEXT, "{size}");
        check(&format!("export {format:?}"), held, once);
    }
    drop(export);

    let query = arbor_search::query::Query::parse("zebrafish");
    let (hits, held) = peak_of(|| arbor_search::hits::file_entry_hits(&path, &query).unwrap());
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].snippet.contains("zebrafish"), "{}", hits[0].snippet);
    check("search's hits", held, once);
    let (bits, held) = peak_of(|| {
        let mut m =
            arbor_search::hits::PartMatcher::new(&query, arbor_session::searchable::Parts::ALL);
        m.file(&path);
        m.tiers
    });
    assert_ne!(bits, arbor_search::query::Tiers::default());
    check("search's match", held, once);
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A writer that counts the bytes it is given.
struct Counted<'a>(&'a mut usize);

impl std::io::Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        *self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The tree's search text (every entry's text, lowercased, for
/// type-to-search) holds that text and 8 bytes an entry beside it (where
/// each text ends, and which byte classes it has: 16 bytes before, 16 MB
/// of a million-entry session's 300).
#[test]
fn the_tree_search_text_holds_its_text_and_eight_bytes_an_entry() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    const N: usize = 200_000;
    write_short_session(&path, N);
    let session = arbor_session::reader::read_session_lean(&path).unwrap();
    let (text, held) = peak_of(|| arbor_session::search_text::SearchText::build(&session));
    let chars: usize = (0..N).map(|i| text.get(i).len() + 1).sum();
    let beside = held.saturating_sub(chars);
    eprintln!(
        "text {chars}, held {held}: {} bytes an entry beside",
        beside / N
    );
    // The pieces' own headers (one per 512 entries) and the per-piece
    // threads' scratch: a few bytes an entry at most.
    assert!(
        beside <= 11 * N,
        "{} bytes an entry beside the text",
        beside / N
    );
}

/// The tree's search answers a bit an entry: which entries hold a word
/// (a `bool` each before: 1 MB at a million entries, and a keystroke
/// held two, the answer and the previous word's it narrows within), and
/// which body terms of a query the matcher finds in each entry (a `u32`
/// each before: 4 MB at a million entries).
#[test]
fn the_tree_search_answers_hold_a_bit_an_entry() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    const N: usize = 200_000;
    write_short_session(&path, N);
    let session = arbor_session::reader::read_session_lean(&path).unwrap();
    let text = arbor_session::search_text::SearchText::build(&session);
    let (within, held) = peak_of(|| text.containing("a"));
    eprintln!("containing: {held} bytes for {N} entries");
    assert!(held <= N / 8 + 4096, "containing held {held} bytes");
    let (_, held) = peak_of(|| text.containing_within("a1", &within));
    eprintln!("containing_within: {held} bytes for {N} entries");
    assert!(held <= N / 8 + 4096, "containing_within held {held} bytes");

    // On one thread: each task's scratch (its block's lines, read and
    // parsed a line at a time) is held once, whatever the cores.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let query = arbor_search::Query::parse("bash");
    let (bits, held) = one.install(|| {
        peak_of(|| arbor_search::hits::session_term_bits(&session, &query, &|| false).unwrap())
    });
    eprintln!("session_term_bits: {held} bytes for {N} entries");
    assert_eq!(bits.len(), N);
    assert!(bits.has(1, 0) && !bits.has(0, 0));
    // A bit an entry and a task's scratch: 2 bytes an entry at most.
    assert!(held <= 2 * N, "session_term_bits held {held} bytes");
}

/// The tree screen, open on a session, holds its rows (24 bytes an entry
/// shown) and little more an entry: the haystacks a search reads before
/// the search text arrives are kept for the entries read, not in a slot
/// for every entry (24 bytes an entry before, 24 MB at a million entries),
/// and the rows are made with room for the visible entries once (grown by
/// doubling, they held up to twice that, and while growing one and a half
/// times more).
#[test]
fn the_tree_screen_holds_its_rows_and_little_more_an_entry() {
    use arbor::ui::tree::{Loaded, TreeState};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.jsonl");
    const N: usize = 200_000;
    write_short_session(&path, N);
    let loaded = Loaded::read(&path, arbor_session::Agent::Atomic).unwrap();
    let (t, held) = peak_of(|| TreeState::new(path.clone(), loaded, 0));
    let row = std::mem::size_of_val(&t.rows[0]);
    eprintln!(
        "{} rows of {row} bytes; held {held}: {} bytes an entry",
        t.rows.len(),
        held / N
    );
    assert!(t.rows.len() > N / 2);
    assert!(
        held <= row * t.rows.len() + 2 * N,
        "{} bytes an entry held",
        held / N
    );
}
