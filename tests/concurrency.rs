//! arbor writing beside a live writer: a second PROCESS (python3, standing in
//! for the agent) appends message lines to a session in a loop while arbor
//! labels, branches and renames the same file, many times, from two threads.
//!
//! The writer appends with one `os.write` per line on an `O_APPEND` fd,
//! lines up to ~100 KB, and often writes a line in two halves with a short
//! sleep between them (a writer caught mid-append); once it stalls mid-line
//! for 1.5 s, longer than arbor is willing to wait.
//!
//! Afterwards (except for a join arbor reported, below): every line of the
//! file is a JSON object (no glued or interleaved lines), every line the
//! writer finished is there exactly once and intact, every write arbor
//! reported (an id on stdout) is there exactly once in Atomic's shape,
//! arbor's failures are the clean "partial line" refusal and left nothing
//! behind, and each arbor entry hangs from an entry that was already in the
//! file and is not older than the file's last complete line when arbor
//! started (the branch point for a branch).
//!
//! Refusals are expected during the stall, and now and then outside it: this
//! writer is mid-line a large part of the time, and arbor gives up when five
//! looks 100 ms apart all find a partial last line (docs/spec.md §7: wait briefly,
//! re-check, refuse).
//!
//! What no appender can close is the few-syscall window between arbor's last
//! look at the file and its `write`: `O_APPEND` has no compare-and-append and
//! the agents take no lock, so a line this writer starts exactly there gets
//! arbor's line joined onto its first half (3 runs in ~110 here, on a
//! loaded 2-core machine). arbor checks where its line landed and
//! reports that case as a failure (`Interleaved`); the test accepts exactly
//! that shape — writer's first half + arbor's whole line, then the writer's
//! second half alone — for a reported failure, and nothing else.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::common::{arbor, demo_store};
use arbor_session::{read_session, SessionTree};

/// The stand-in agent. argv: session, log, stop file, stall marker, first
/// parent id, seed. Logs every line it finished writing, in order.
const WRITER: &str = r#"
import json, os, random, sys, time
path, log_path, stop_path, stall_path, parent, seed = sys.argv[1:7]
rnd = random.Random(int(seed))
fd = os.open(path, os.O_WRONLY | os.O_APPEND)
log = open(log_path, "w", encoding="utf-8")
words = ["fix", "the", "flaky", "test", "café", "数据", "🚀", "line\nbreak", "tab\tbed",
         "quo\"te", "back\\slash", "{brace}", "[x]"]
usage = {"input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 30,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}

def write_all(b):
    n = os.write(fd, b)
    assert n == len(b), (n, len(b))

deadline = time.time() + 30
i = 0
while time.time() < deadline and not os.path.exists(stop_path):
    eid = "ee%06x" % i
    n = 14000 + rnd.randrange(2000) if i % 7 == 3 else rnd.randrange(5, 400)  # ~100 KB or small
    text = " ".join(rnd.choice(words) for _ in range(n))
    now = time.time()
    ms = int(now * 1000)
    ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".%03dZ" % (ms % 1000)
    if i % 2 == 0:
        msg = {"role": "user", "content": text, "timestamp": ms}
    else:
        msg = {"role": "assistant", "content": [{"type": "text", "text": text}],
               "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
               "usage": usage, "stopReason": "stop", "timestamp": ms}
    entry = {"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": msg}
    line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    half = len(line) // 2
    if i == 40:
        # Stalled mid-line for longer than arbor waits: arbor must refuse.
        write_all(line[:half])
        open(stall_path, "w").close()
        time.sleep(1.5)
        write_all(line[half:])
    elif i % 3 == 1:
        # Caught mid-append: the rest follows shortly.
        write_all(line[:half])
        time.sleep(0.02)
        write_all(line[half:])
    else:
        write_all(line)
    log.write(line.decode("utf-8"))
    log.flush()
    parent = eid
    i += 1
    time.sleep(rnd.uniform(0.002, 0.012))
os.close(fd)
print(i)
"#;

const THREADS: usize = 2;
const OPS_PER_THREAD: usize = 25;
const PARTIAL: &str = "ends in a partial line (another program is writing it); nothing was written";
/// The race arbor cannot prevent but reports (see writer.rs).
const INTERLEAVED: &str = "so the two were interleaved at byte ";

#[derive(Debug, Clone)]
enum Op {
    Label(String, String),
    Clear(String),
    Branch(String, String),
    Rename(String),
}

#[derive(Debug)]
struct Done {
    op: Op,
    /// The id arbor printed, when it reported success.
    id: Option<String>,
    stderr: String,
    took: Duration,
    started: Instant,
    /// The file's length just before arbor started.
    len_at_start: u64,
}

fn run_op(path: &Path, op: &Op) -> Done {
    let mut cmd = arbor();
    match op {
        Op::Label(e, t) => cmd.arg("label").arg(path).arg(e).arg(t),
        Op::Clear(e) => cmd.arg("label").arg(path).arg(e).arg("--clear"),
        Op::Branch(e, s) => cmd.arg("branch").arg(path).arg(e).arg("--summary").arg(s),
        Op::Rename(n) => cmd.arg("rename").arg(path).arg(n),
    };
    let len_at_start = std::fs::metadata(path).unwrap().len();
    let t = Instant::now();
    let out = cmd.output().expect("run arbor");
    let took = t.elapsed();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let id = if out.status.success() {
        let id = stdout.trim_end().to_string();
        assert!(
            id.len() == 8 && stdout == format!("{id}\n"),
            "{op:?}: arbor succeeded but printed {stdout:?}"
        );
        Some(id)
    } else {
        assert!(stdout.is_empty(), "{op:?}: failed but printed {stdout:?}");
        None
    };
    Done {
        op: op.clone(),
        id,
        stderr,
        took,
        started: t,
        len_at_start,
    }
}

/// A small deterministic generator (no rand dependency needed).
struct Xorshift(u64);
impl Xorshift {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A line that a reported join explains: `<writer's first half><arbor's
/// line>`, whose second half is a line of its own. Returns the writer's line
/// and the second half's line number, and takes the arbor op off `reported`.
fn explain_join<'a>(
    line: &str,
    lines: &[&str],
    wlines: &[&'a str],
    reported: &mut Vec<&Op>,
) -> Option<(&'a str, usize)> {
    for (at, _) in line.match_indices(r#"{"type":""#).filter(|(at, _)| *at > 0) {
        let (head, rest) = line.split_at(at);
        let Ok(Value::Object(r)) = serde_json::from_str::<Value>(rest) else {
            continue;
        };
        let Some(w) = wlines
            .iter()
            .find(|w| w.len() > head.len() && w.starts_with(head))
        else {
            continue;
        };
        let Some(second) = lines.iter().position(|l| *l == &w[head.len()..]) else {
            continue;
        };
        let Some(k) = reported.iter().position(|op| op_matches(op, &r)) else {
            continue;
        };
        reported.remove(k);
        return Some((w, second));
    }
    None
}

fn op_matches(op: &Op, o: &Map<String, Value>) -> bool {
    match op {
        Op::Label(e, t) => o["type"] == "label" && o["targetId"] == *e && o["label"] == *t,
        Op::Clear(e) => o["type"] == "label" && o["targetId"] == *e && !o.contains_key("label"),
        Op::Branch(_, s) => o["type"] == "branch_summary" && o["summary"] == *s,
        Op::Rename(n) => o["type"] == "session_info" && o["name"] == n.trim(),
    }
}

/// For a failure message: where other lines start inside a bad line, and
/// which arbor op (if any) wrote them, when.
fn describe_bad_line(n: usize, line: &str, done: &[Done], t0: Instant) -> String {
    let mut parts = Vec::new();
    for (at, _) in line.match_indices(r#"{"type":""#).filter(|(at, _)| *at > 0) {
        // Only where a whole line starts (not a content block inside one).
        let Ok(Value::Object(inner)) = serde_json::from_str::<Value>(&line[at..]) else {
            continue;
        };
        let id = inner.get("id").and_then(Value::as_str).unwrap_or("?");
        let by = done
            .iter()
            .find(|d| d.id.as_deref() == Some(id))
            .map(|d| {
                format!(
                    "arbor {:?} ran {:.3}s..{:.3}s",
                    d.op,
                    (d.started - t0).as_secs_f64(),
                    (d.started + d.took - t0).as_secs_f64()
                )
            })
            .unwrap_or_else(|| "not an arbor write".into());
        parts.push(format!("line {id} starts at byte {at} ({by})"));
    }
    format!(
        "line {} ({} bytes): {}…; {}",
        n + 1,
        line.len(),
        line.chars().take(100).collect::<String>(),
        if parts.is_empty() {
            "no other line inside".to_string()
        } else {
            parts.join("; ")
        }
    )
}

fn wait_for(path: &Path, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn arbor_writes_beside_a_live_appending_process() {
    let t0 = Instant::now();
    let demo = demo_store();
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("project");
    std::fs::create_dir(&project).unwrap();
    // webapp: branches, labels, a name; arbor targets its existing entries.
    let src = common::find_session(&demo.path().join("sessions"), "01a1fd62");
    let path = project.join(src.file_name().unwrap());
    std::fs::copy(&src, &path).unwrap();
    let original = std::fs::read(&path).unwrap();
    assert!(original.ends_with(b"\n"));
    let initial = read_session(&path).unwrap();
    let itree = SessionTree::build(&initial);
    let initial_ids: Vec<String> = initial.entries.iter().map(|e| e.id.to_string()).collect();
    // Where a branch at each initial entry must hang (docs/spec.md §7).
    let branch_point: HashMap<String, Value> = initial
        .entries
        .iter()
        .map(|e| {
            let p = if e.role() == Some("user") {
                e.raw.get("parentId").cloned().unwrap_or(Value::Null)
            } else {
                Value::from(e.id.to_string())
            };
            (e.id.to_string(), p)
        })
        .collect();

    let log = work.path().join("writer.log");
    let stop = work.path().join("stop");
    let stall = work.path().join("stalled");
    let writer = Command::new("python3")
        .arg("-c")
        .arg(WRITER)
        .arg(&path)
        .arg(&log)
        .arg(&stop)
        .arg(&stall)
        .arg(initial_ids.last().unwrap())
        .arg("7")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 must be installed");

    // arbor, from two threads at once, while the writer runs.
    let ids = Arc::new(initial_ids.clone());
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let ids = Arc::clone(&ids);
            let path = path.clone();
            std::thread::spawn(move || {
                let mut rng = Xorshift(0x9e37_79b9_7f4a_7c15 ^ ((t as u64 + 1) * 0x1234_5678));
                (0..OPS_PER_THREAD)
                    .map(|k| {
                        let target = ids[rng.next(ids.len())].clone();
                        let op = match rng.next(4) {
                            0 => Op::Label(target, format!("t{t}-{k} ✓")),
                            1 => Op::Clear(target),
                            2 if k % 2 == 0 => Op::Branch(target, String::new()),
                            2 => Op::Branch(target, format!("summary {t}-{k}")),
                            _ => Op::Rename(format!("  name {t}-{k}  ")),
                        };
                        // Spread the ops over the writer's run (and its stall).
                        std::thread::sleep(Duration::from_millis(30 + rng.next(90) as u64));
                        run_op(&path, &op)
                    })
                    .collect::<Vec<Done>>()
            })
        })
        .collect();

    // While the writer is stalled mid-line, arbor must refuse cleanly.
    assert!(
        wait_for(&stall, Duration::from_secs(15)),
        "the writer never reached its stall"
    );
    let stall_seen = Instant::now();
    let refused = run_op(
        &path,
        &Op::Label(initial_ids[0].clone(), "during the stall".into()),
    );
    assert!(
        refused.id.is_none() && refused.stderr.contains(PARTIAL),
        "arbor during a 1.5 s mid-line stall: {refused:?}"
    );

    let mut done: Vec<Done> = threads
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    done.push(refused);
    std::fs::write(&stop, b"").unwrap();
    let wout = writer.wait_with_output().unwrap();
    assert!(
        wout.status.success(),
        "writer failed: {}",
        String::from_utf8_lossy(&wout.stderr)
    );
    let written: usize = String::from_utf8_lossy(&wout.stdout)
        .trim()
        .parse()
        .unwrap();
    let elapsed = t0.elapsed();

    // ---- the file
    let bytes = std::fs::read(&path).unwrap();
    assert!(
        bytes.starts_with(&original),
        "the original lines were changed"
    );
    assert!(bytes.ends_with(b"\n"), "the file ends mid-line");
    let text = std::str::from_utf8(&bytes).expect("the file is valid UTF-8 (no torn characters)");
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    let parsed: Vec<Option<Map<String, Value>>> = lines
        .iter()
        .map(|l| match serde_json::from_str::<Value>(l) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        })
        .collect();
    let log_text = std::fs::read_to_string(&log).unwrap();
    let wlines: Vec<&str> = log_text.split_terminator('\n').collect();
    assert_eq!(wlines.len(), written, "writer log");

    // ---- arbor's failures: clean refusals, or the one race it reports
    let ok: Vec<&Done> = done.iter().filter(|d| d.id.is_some()).collect();
    let failed: Vec<&Done> = done.iter().filter(|d| d.id.is_none()).collect();
    for d in &failed {
        assert!(
            d.stderr.contains(PARTIAL) || d.stderr.contains(INTERLEAVED),
            "{:?}: not a clean refusal: {}",
            d.op,
            d.stderr
        );
    }
    let mut reported: Vec<&Op> = failed
        .iter()
        .filter(|d| d.stderr.contains(INTERLEAVED))
        .map(|d| &d.op)
        .collect();
    let joins = reported.len();

    // ---- every line is a JSON object, except what a reported join left:
    // the writer's first half + arbor's whole line, and the writer's second
    // half on its own line. Anything else unreadable is a bug.
    let mut damaged: HashSet<&str> = HashSet::new();
    let mut explained: HashSet<usize> = HashSet::new();
    let mut joined: Vec<usize> = Vec::new();
    let mut unexplained = Vec::new();
    for n in (0..lines.len()).filter(|&n| parsed[n].is_none()) {
        if explained.contains(&n) {
            continue;
        }
        match explain_join(lines[n], &lines, &wlines, &mut reported) {
            Some((w, second_half)) if !explained.contains(&second_half) => {
                damaged.insert(w);
                explained.extend([n, second_half]);
                joined.push(n);
            }
            _ => unexplained.push(describe_bad_line(n, lines[n], &done, t0)),
        }
    }
    assert!(
        unexplained.is_empty(),
        "{} lines are not JSON objects (glued or torn) and arbor did not report them:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(
        reported.is_empty(),
        "arbor reported joined lines that are not in the file: {reported:?}"
    );
    // Line n spans bytes ..ends[n] (newline included).
    let ends: Vec<u64> = lines
        .iter()
        .scan(0u64, |off, l| {
            *off += l.len() as u64 + 1;
            Some(*off)
        })
        .collect();
    // Each report names the byte where the damaged line starts.
    let at_bytes: HashSet<u64> = failed
        .iter()
        .filter_map(|d| {
            let rest = d.stderr.split(INTERLEAVED).nth(1)?;
            rest.split(':').next()?.trim().parse().ok()
        })
        .collect();
    for &n in &joined {
        let start = if n == 0 { 0 } else { ends[n - 1] };
        assert!(
            at_bytes.contains(&start),
            "a join at byte {start} was reported at {at_bytes:?}"
        );
    }
    let good = parsed.iter().filter(|p| p.is_some()).count();
    let pos: HashMap<&str, usize> = parsed
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(n, o)| Some((o.as_ref()?["id"].as_str().unwrap(), n)))
        .collect();
    assert_eq!(pos.len(), good - 1, "entry ids are unique");

    // ---- the writer's lines: each once, intact, its own chain
    let mut count: HashMap<&str, usize> = HashMap::new();
    for l in &lines {
        *count.entry(l).or_default() += 1;
    }
    let mut prev = Value::from(initial_ids.last().unwrap().clone());
    let mut big = 0;
    for w in &wlines {
        let want = usize::from(!damaged.contains(w));
        assert_eq!(
            count.get(w).copied().unwrap_or(0),
            want,
            "a writer line is missing, torn or duplicated: {}…",
            w.chars().take(80).collect::<String>()
        );
        let v: Value = serde_json::from_str(w).unwrap();
        assert_eq!(v["parentId"], prev);
        prev = v["id"].clone();
        big += usize::from(w.len() > 90_000);
    }

    // ---- arbor's lines: each reported write once, in Atomic's shape
    assert_eq!(
        lines.len(),
        1 + initial_ids.len() + wlines.len() + ok.len() + joins,
        "lines other than the original, the writer's and arbor's reported writes"
    );
    let mut taken = HashSet::new();
    let mut parent_is_previous_line = 0;
    for d in &ok {
        let id = d.id.as_deref().unwrap();
        assert!(taken.insert(id), "arbor printed id {id} twice");
        let n = *pos
            .get(id)
            .unwrap_or_else(|| panic!("{:?}: reported id {id} not in the file", d.op));
        assert!(n > initial_ids.len(), "{id} is a new line");
        let o = parsed[n].as_ref().unwrap();
        let keys: Vec<&str> = o.keys().map(String::as_str).collect();
        let (ty, want_keys): (&str, &[&str]) = match &d.op {
            Op::Label(..) => (
                "label",
                &["type", "id", "parentId", "timestamp", "targetId", "label"],
            ),
            Op::Clear(_) => (
                "label",
                &["type", "id", "parentId", "timestamp", "targetId"],
            ),
            Op::Branch(..) => (
                "branch_summary",
                &["type", "id", "parentId", "timestamp", "fromId", "summary"],
            ),
            Op::Rename(_) => (
                "session_info",
                &["type", "id", "parentId", "timestamp", "name"],
            ),
        };
        assert_eq!(o["type"], ty, "{:?}", d.op);
        assert_eq!(keys, want_keys, "{:?}", d.op);
        match &d.op {
            Op::Label(e, t) => {
                assert_eq!(o["targetId"], *e);
                assert_eq!(o["label"], *t);
            }
            Op::Clear(e) => assert_eq!(o["targetId"], *e),
            Op::Rename(name) => assert_eq!(o["name"], name.trim()),
            Op::Branch(e, s) => {
                assert_eq!(o["parentId"], branch_point[e], "{:?}: branch point", d.op);
                assert_eq!(o["summary"], *s);
            }
        }
        if !matches!(d.op, Op::Branch(..)) {
            // The last entry when arbor wrote: a line already in the file,
            // and not older than the last complete line when arbor started
            // (re-read at write time, never a stale copy).
            let parent = o["parentId"].as_str().expect("a parent");
            let p = *pos
                .get(parent)
                .unwrap_or_else(|| panic!("{:?}: parent {parent} not in the file", d.op));
            assert!(p < n, "{:?}: parent {parent} comes after the entry", d.op);
            let last_at_start = ends.iter().take_while(|&&e| e <= d.len_at_start).count() - 1;
            assert!(
                p >= last_at_start,
                "{:?}: stale parent {parent} (line {p}; line {last_at_start} was complete before arbor ran)",
                d.op
            );
            parent_is_previous_line += usize::from(p == n - 1);
        }
    }

    // ---- nothing else left behind, and arbor reads it all back cleanly
    let names: Vec<String> = std::fs::read_dir(&project)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "stray files beside the session: {names:?}");
    let fin = read_session(&path).unwrap();
    let dg = &fin.diagnostics;
    assert!(
        dg.blank_lines == 0
            && dg.lossy_lines == 0
            && !dg.partial_tail
            && dg.skipped_lines == 2 * joins,
        "{dg:?}"
    );
    assert_eq!(fin.entries.len(), good - 1);
    let ft = SessionTree::build(&fin);
    assert_eq!(ft.leaf, Some(fin.entries.len() - 1));
    assert!(itree.len() < ft.len());

    let appends = ok
        .iter()
        .filter(|d| !matches!(d.op, Op::Branch(..)))
        .count();
    let slowest = done.iter().map(|d| d.took).max().unwrap_or_default();
    // Refusals that overlapped the 1.5 s stall (seen within ~5 ms of its start).
    let in_stall = failed
        .iter()
        .filter(|d| {
            d.started < stall_seen + Duration::from_millis(1500)
                && d.started + d.took + Duration::from_millis(20) > stall_seen
        })
        .count();
    eprintln!(
        "concurrency: writer {written} lines ({big} of ~100 KB), arbor {} ops: {} written, \
         {} refused (partial line, {in_stall} of them during the 1.5 s stall), \
         {joins} reported joins; {parent_is_previous_line}/{appends} label/rename parents \
         were the line just before; slowest op {:.2}s; {:.1}s total",
        done.len(),
        ok.len(),
        failed.len() - joins,
        slowest.as_secs_f64(),
        elapsed.as_secs_f64()
    );
}
