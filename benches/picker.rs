//! Picker benchmark on the realistic corpus (2,000 sessions by default):
//! time to first frame and to a full list of the real binary in a
//! pseudo-terminal, and keystroke-to-frame latency of a typed query
//! (update + search + render, as the event loop runs them).
//!
//! `cargo bench --bench picker` (ARBOR_BENCH_SESSIONS=200 for a quick run;
//! ARBOR_BENCH_STORE=DIR for another store, ARBOR_BENCH_SKIP_PTY=1 for the
//! keystrokes only, ARBOR_BENCH_DETAIL=1 for the split of each key,
//! ARBOR_BENCH_BIN=FILE to time another arbor binary in the pty,
//! ARBOR_BENCH_QUERIES="a;;b" to type other queries, ARBOR_BENCH_PASTE=1
//! to give each query whole, as `pty_latency.py` types it).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::ui::picker::Row;
use arbor::ui::theme::Theme;
use arbor::ui::{App, AppEvent, Effect};
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

fn corpus(n: usize) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = root.join(format!("target/bench-corpus/realistic-{n}"));
    if !out.join("MANIFEST.json").exists() {
        eprintln!(
            "generating the realistic corpus ({n} sessions) into {} …",
            out.display()
        );
        let status = std::process::Command::new("python3")
            .arg(root.join("../shared/corpus/gen_corpus.py"))
            .arg(&out)
            .args([
                "--profile",
                "realistic",
                "--sessions",
                &n.to_string(),
                "--seed",
                "1",
                "--jobs",
                "2",
            ])
            .status()
            .expect("python3");
        assert!(status.success());
    }
    out
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// The real binary in a pty: when does the first frame appear, when the
/// first frame with rows (the selection marker `›`), and when is the list
/// complete (the `Loading` counter gone)?
fn pty_run(root: &Path) -> (f64, f64, f64) {
    use portable_pty::{native_pty_system, CommandBuilder, PtySize};
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 140,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    // ARBOR_BENCH_BIN=FILE times another build of arbor (a baseline).
    let bin = std::env::var_os("ARBOR_BENCH_BIN").unwrap_or(env!("CARGO_BIN_EXE_arbor").into());
    let mut cmd = CommandBuilder::new(bin);
    cmd.args(["--store", &root.display().to_string(), "--all"]);
    cmd.env("TERM", "xterm-256color");
    cmd.env("NO_COLOR", "1");
    if let Some(c) = std::env::var_os("ARBOR_CACHE_DIR") {
        // The child starts elsewhere: a relative path would name another
        // (empty) cache.
        cmd.env(
            "ARBOR_CACHE_DIR",
            std::path::absolute(&c).unwrap_or(c.into()),
        );
    }
    let start = Instant::now();
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let parser = Arc::new(Mutex::new(vt100::Parser::new(40, 140, 0)));
    let mut reader = pair.master.try_clone_reader().unwrap();
    let p2 = parser.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 16384];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            p2.lock().unwrap().process(&buf[..n]);
        }
    });
    let mut first = None;
    let mut with_rows = None;
    let full;
    loop {
        let text = parser.lock().unwrap().screen().contents();
        if first.is_none() && text.contains("Resume Session") {
            first = Some(start.elapsed().as_secs_f64());
        }
        if with_rows.is_none() && text.contains('›') {
            with_rows = Some(start.elapsed().as_secs_f64());
        }
        if first.is_some() && !text.contains("Loading") && text.contains(" 1") {
            full = start.elapsed().as_secs_f64();
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the picker never finished loading"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut w = pair.master.take_writer().unwrap();
    let _ = w.write_all(b"\x1b");
    let _ = child.wait();
    (first.unwrap_or(0.0), with_rows.unwrap_or(full), full)
}

use std::io::Write;

fn main() {
    // The index lives with the corpus, so runs after the first are warm.
    if std::env::var_os("ARBOR_CACHE_DIR").is_none() {
        let cache = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-cache");
        std::env::set_var("ARBOR_CACHE_DIR", &cache);
    }
    let n: usize = std::env::var("ARBOR_BENCH_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    // ARBOR_BENCH_STORE=DIR measures another store (e.g. a stress store
    // from bench/compare.sh) instead of the realistic corpus.
    let root = match std::env::var_os("ARBOR_BENCH_STORE") {
        // Absolute: the binary under test runs in another directory.
        Some(dir) => std::path::absolute(&dir).unwrap_or(dir.into()),
        None => corpus(n),
    };
    let bytes: u64 = walk_bytes(&root);
    println!("corpus: {}, {:.0} MB", root.display(), bytes as f64 / 1e6);
    pty_runs(&root);

    // Keystroke-to-frame, in process: the loaded picker (rows from the warm
    // index, as the picker gets them), a query typed key by key; each key
    // runs update, the search worker's work (index body hits + fuzzy fields)
    // and a full render.
    let (mut app, mut searcher) = loaded_picker(&root);
    let mut term = Terminal::new(TestBackend::new(140, 40)).unwrap();
    let theme = Theme::plain();
    if std::env::var_os("ARBOR_BENCH_PASTE").is_some() {
        return pasted(&mut app, &mut term, &theme);
    }
    // ARBOR_BENCH_QUERIES="a;;b" types other queries (`;;` between them).
    let queries: Vec<String> = match std::env::var("ARBOR_BENCH_QUERIES") {
        Ok(q) => q.split(";;").map(str::to_string).collect(),
        Err(_) => [
            "session parser",
            "\"token refresh\"",
            "re:fn\\s+main",
            "cache",
        ]
        .map(str::to_string)
        .to_vec(),
    };
    let mut typed = Typed::default();
    let mut picker = Picker {
        app: &mut app,
        term: &mut term,
        theme: &theme,
        searcher: &mut searcher,
    };
    let detail = std::env::var_os("ARBOR_BENCH_DETAIL").is_some();
    for query in &queries {
        picker.type_query(query, detail, &mut typed);
    }
    typed.print();
    if let Some(docs) = typed.last_docs {
        fields_pass(&queries, &docs);
    }
}

/// The real binary's start in a pty, five times (none with
/// ARBOR_BENCH_SKIP_PTY=1, which measures only the keystrokes): the
/// medians of its first frame, first rows and full list.
fn pty_runs(root: &Path) {
    let mut firsts = Vec::new();
    let mut with_rows = Vec::new();
    let mut fulls = Vec::new();
    let pty_runs = if std::env::var_os("ARBOR_BENCH_SKIP_PTY").is_some() {
        0
    } else {
        5
    };
    for _ in 0..pty_runs {
        let (f, r, l) = pty_run(root);
        firsts.push(f * 1000.0);
        with_rows.push(r * 1000.0);
        fulls.push(l * 1000.0);
    }
    if pty_runs > 0 {
        println!(
            "first frame (process start → header drawn): median {:.1} ms",
            median(&mut firsts)
        );
        println!(
            "first frame with rows (process start → a row selected): median {:.1} ms",
            median(&mut with_rows)
        );
        println!(
            "full list (process start → all rows, Loading gone): median {:.0} ms",
            median(&mut fulls)
        );
    }
}

/// The picker with every row of `root` (from the warm index, as the
/// picker gets them) on the whole store's list, and its searcher, idle
/// work done unless ARBOR_BENCH_NO_IDLE is set.
fn loaded_picker(root: &Path) -> (App, arbor::app::searcher::Searcher) {
    let config = StoreConfig::single(root, StoreKind::PerProject);
    let (files, _) = list_session_files(&config, &Scope::All);
    let mut index = arbor_index::Index::open_default().expect("index");
    let mut infos = Vec::new();
    index
        .refresh(&files, &mut |rows| infos.extend(rows))
        .expect("refresh");
    // The search worker loads this when it starts, before any key.
    index.warm_search().expect("warm");
    let mut searcher = arbor::app::searcher::Searcher::new(Some(index));
    let rows: Vec<Row> = infos.into_iter().map(Row::new).collect();
    let mut app = App::new("/".into(), 0);
    app.width = 140;
    app.height = 40;
    app.update(AppEvent::Rows(rows));
    app.update(AppEvent::LoadFinished { problems: vec![] });
    app.update(AppEvent::Key(KeyEvent::new(
        KeyCode::Tab,
        KeyModifiers::NONE,
    )));
    // The worker's idle work (mapping the index's paths to the rows the
    // worker is given, checking the stored text's checksums) is done
    // before the first key: a user types once the rows are on screen.
    // ARBOR_BENCH_NO_IDLE=1 types at once instead (and with no pause
    // between keys).
    if std::env::var_os("ARBOR_BENCH_NO_IDLE").is_none() {
        let t = Instant::now();
        searcher.warm(Some(&app.picker.docs()));
        while searcher.idle() {}
        eprintln!(
            "idle work before the first key: {:.0} ms",
            t.elapsed().as_secs_f64() * 1000.0
        );
    }
    (app, searcher)
}

/// What typing the queries measured.
#[derive(Default)]
struct Typed {
    /// Each key's time to its frame (ms).
    lat: Vec<f64>,
    /// Each key's time to the frame whose rows are final (its first rows,
    /// when answered first; else the whole answer's frame).
    screen_lat: Vec<f64>,
    /// Each Ctrl+U's time to its frame.
    clears: Vec<f64>,
    /// Keys answered first rows first.
    firsts: usize,
    /// The rows of the last search.
    last_docs: Option<Arc<arbor_search::Docs>>,
}

impl Typed {
    fn print(&mut self) {
        let worst = self.lat.iter().cloned().fold(0.0, f64::max);
        println!(
            "keystroke → frame over {} keys: median {:.2} ms, worst {:.2} ms",
            self.lat.len(),
            median(&mut self.lat),
            worst
        );
        let worst = self.screen_lat.iter().cloned().fold(0.0, f64::max);
        println!(
            "keystroke → its screen of rows final, over {} keys ({} answered first rows first): median {:.2} ms, worst {:.2} ms",
            self.screen_lat.len(),
            self.firsts,
            median(&mut self.screen_lat),
            worst
        );
        if !self.clears.is_empty() {
            let worst = self.clears.iter().cloned().fold(0.0, f64::max);
            println!(
                "clearing the query (Ctrl+U) → frame, {} times: median {:.2} ms, worst {:.2} ms",
                self.clears.len(),
                median(&mut self.clears),
                worst
            );
        }
    }
}

/// The loaded picker, its screen and its search worker's searcher.
struct Picker<'a> {
    app: &'a mut App,
    term: &'a mut Terminal<TestBackend>,
    theme: &'a Theme,
    searcher: &'a mut arbor::app::searcher::Searcher,
}

impl Picker<'_> {
    /// Clears the previous query (Ctrl+U: the whole list again, timed on
    /// its own, not among the typed keys) and types `query` key by key.
    fn type_query(&mut self, query: &str, detail: bool, typed: &mut Typed) {
        let t = Instant::now();
        self.app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::Char('u'),
            KeyModifiers::CONTROL,
        )));
        let (app, theme) = (&*self.app, self.theme);
        self.term
            .draw(|f| arbor::ui::render(f, app, theme))
            .unwrap();
        if !query.is_empty() && !typed.lat.is_empty() {
            typed.clears.push(t.elapsed().as_secs_f64() * 1000.0);
        }
        for c in query.chars() {
            self.type_key(query, c, detail, typed);
        }
    }

    /// One key of `query`: its update, the searches it asks for and the
    /// frame after them, timed.
    fn type_key(&mut self, query: &str, c: char, detail: bool, typed: &mut Typed) {
        let t = Instant::now();
        let mut screen_at = None;
        let mut first_rows: Option<Vec<std::path::PathBuf>> = None;
        let mut queue = self.app.update(AppEvent::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        )));
        while let Some(fx) = queue.pop() {
            if let Effect::Search { docs, .. } = &fx {
                typed.last_docs = Some(docs.clone());
            }
            let Some(done) = run_search(
                self.app,
                self.term,
                self.theme,
                self.searcher,
                fx,
                t,
                detail,
            ) else {
                continue;
            };
            queue.extend(done.effects);
            if screen_at.is_none() {
                if let Some((at, rows)) = done.screen {
                    screen_at = Some(at);
                    first_rows = Some(rows);
                }
            }
        }
        let t3 = Instant::now();
        let (app, theme) = (&*self.app, self.theme);
        self.term
            .draw(|f| arbor::ui::render(f, app, theme))
            .unwrap();
        if std::env::var_os("ARBOR_BENCH_DETAIL").is_some() {
            eprintln!(
                "{:>20} render {:>7.2} ms",
                "",
                t3.elapsed().as_secs_f64() * 1000.0
            );
        }
        let lat = &mut typed.lat;
        lat.push(t.elapsed().as_secs_f64() * 1000.0);
        typed
            .screen_lat
            .push(screen_at.unwrap_or(lat[lat.len() - 1]));
        if detail {
            eprintln!("{:>20} total {:>7.2} ms", "", lat[lat.len() - 1]);
        }
        // The first rows shown are the whole answer's first rows.
        if let Some(early) = first_rows {
            let whole = shown_paths(self.app);
            assert_eq!(early, whole[..early.len()], "first rows of {query:?}");
            typed.firsts += 1;
        }
        // The worker's idle work between keys (a key every 100 ms or
        // so): what the last search left to do ahead of the next.
        if std::env::var_os("ARBOR_BENCH_NO_IDLE").is_none() {
            while self.searcher.idle() {}
        }
    }
}

/// What one search gave the picker: the effects its answers asked for,
/// and when its screen of rows was final (when a first answer filled the
/// screen), with those rows.
struct Searched {
    effects: Vec<Effect>,
    screen: Option<(f64, Vec<PathBuf>)>,
}

/// Runs `fx` when it is a search, as the picker's search worker runs it:
/// the first rows and the rows the bodies' best ranks place, each sent as
/// found (the picker draws them while the search goes on: here drawn after
/// it, their time counted from when they were found), then the whole
/// answer (applied, not drawn). Times are from `t`.
fn run_search(
    app: &mut App,
    term: &mut Terminal<TestBackend>,
    theme: &Theme,
    searcher: &mut arbor::app::searcher::Searcher,
    fx: Effect,
    t: Instant,
    detail: bool,
) -> Option<Searched> {
    let Effect::Search {
        generation,
        query,
        docs,
        index_problem,
        first,
    } = fx
    else {
        return None;
    };
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let mut early = Vec::new();
    let t1 = Instant::now();
    let answer = searcher
        .search_first(
            &query,
            &docs,
            index_problem.as_deref(),
            &|| false,
            first.as_ref(),
            &mut |a| early.push((ms(t), a)),
        )
        .expect("search");
    if detail {
        eprintln!("{:>20} search {:>7.2} ms", query.raw, ms(t1));
    }
    let mut done = Searched {
        effects: Vec::new(),
        screen: None,
    };
    for (found_at, a) in early {
        let ta = Instant::now();
        done.effects.extend(app.update(AppEvent::SearchDone {
            generation,
            query: query.raw.clone(),
            docs: docs.clone(),
            scores: a.scores,
            incomplete: a.incomplete,
            stage: a.stage,
        }));
        term.draw(|f| arbor::ui::render(f, app, theme)).unwrap();
        let drawn = found_at + ms(ta);
        if detail {
            eprintln!(
                "{:>20} first  {:>7.2} ms ({} rows)",
                query.raw,
                drawn,
                app.picker.list.visible.len()
            );
        }
        if done.screen.is_none() && app.picker.list.visible.len() >= app.picker.selection.page {
            done.screen = Some((drawn, shown_paths(app)));
        }
    }
    let t2 = Instant::now();
    done.effects.extend(app.update(AppEvent::SearchDone {
        generation,
        query: query.raw.clone(),
        docs,
        scores: answer.scores,
        incomplete: answer.incomplete,
        stage: answer.stage,
    }));
    if detail {
        eprintln!("{:>20} apply {:>7.2} ms", "", ms(t2));
    }
    Some(done)
}

/// Each query given whole, as `pty_latency.py` types it (a paste, or keys
/// faster than the picker answers): all its keys go through `update`, and
/// the newest search alone runs, as the search worker runs it, on a
/// searcher that has not seen the query's words. Prints, per query, the
/// time to the screen's rows final (the first rows, when answered first)
/// and to the whole answer (ARBOR_BENCH_PASTE=1; the median of 5 rounds,
/// each on a searcher of its own).
fn pasted(app: &mut App, term: &mut Terminal<TestBackend>, theme: &Theme) {
    let queries: Vec<String> = match std::env::var("ARBOR_BENCH_QUERIES") {
        Ok(q) => q.split(";;").map(str::to_string).collect(),
        Err(_) => ["019dc94a", "session parser", "\"lint grep\"", "re:refa\\w*"]
            .map(str::to_string)
            .to_vec(),
    };
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
    let mut screens = vec![Vec::new(); queries.len()];
    let mut wholes = vec![Vec::new(); queries.len()];
    for _ in 0..5 {
        let index = arbor_index::Index::open_default().expect("index");
        index.warm_search().expect("warm");
        let mut searcher = arbor::app::searcher::Searcher::new(Some(index));
        searcher.warm(Some(&app.picker.docs()));
        while searcher.idle() {}
        for (q, query) in queries.iter().enumerate() {
            app.update(AppEvent::Key(KeyEvent::new(
                KeyCode::Char('u'),
                KeyModifiers::CONTROL,
            )));
            term.draw(|f| arbor::ui::render(f, app, theme)).unwrap();
            let t = Instant::now();
            let mut newest = None;
            for c in query.chars() {
                for fx in app.update(AppEvent::Key(KeyEvent::new(
                    KeyCode::Char(c),
                    KeyModifiers::NONE,
                ))) {
                    if let Effect::Search { .. } = fx {
                        newest = Some(fx);
                    }
                }
            }
            let Some(fx) = newest else {
                continue;
            };
            let Some(done) = run_search(app, term, theme, &mut searcher, fx, t, false) else {
                continue;
            };
            term.draw(|f| arbor::ui::render(f, app, theme)).unwrap();
            let whole = ms(t);
            screens[q].push(done.screen.map_or(whole, |(at, _)| at));
            wholes[q].push(whole);
        }
    }
    for (q, query) in queries.iter().enumerate() {
        println!(
            "pasted {query:?} → its screen of rows final: median {:.1} ms (worst {:.1}); whole answer: median {:.1} ms",
            median(&mut screens[q].clone()),
            screens[q].iter().cloned().fold(0.0, f64::max),
            median(&mut wholes[q])
        );
    }
}

/// The paths of the rows on the picker's screen (its first page).
fn shown_paths(app: &App) -> Vec<std::path::PathBuf> {
    let p = &app.picker;
    p.list
        .visible
        .iter()
        .take(p.selection.page)
        .map(|v| p.list.rows[v.idx].info.path.to_path_buf())
        .collect()
}

/// The short fields' pass alone (every session's name, first message,
/// folder and id scored against the query, as the picker's scorer does key
/// after key, remembering the previous keys), per key of the queries: the
/// least of 5 typings each, which this noisy machine disturbs least.
fn fields_pass(queries: &[String], docs: &Arc<arbor_search::Docs>) {
    let mut per_key = Vec::new();
    for query in queries {
        let prefixes: Vec<&str> = query
            .char_indices()
            .map(|(i, c)| &query[..i + c.len_utf8()])
            .collect();
        let mut best = vec![f64::MAX; prefixes.len()];
        for _ in 0..5 {
            let mut scorer = arbor_search::Scorer::new();
            for (k, typed) in prefixes.iter().enumerate() {
                let q = arbor_search::Query::parse(typed);
                let t = Instant::now();
                std::hint::black_box(scorer.score(&q, docs, None));
                best[k] = best[k].min(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
        for (typed, ms) in prefixes.iter().zip(&best) {
            if std::env::var_os("ARBOR_BENCH_DETAIL").is_some() {
                eprintln!("{typed:>20} fields {ms:>7.2} ms");
            }
        }
        per_key.extend(best);
    }
    let total: f64 = per_key.iter().sum();
    let worst = per_key.iter().cloned().fold(0.0, f64::max);
    println!(
        "short fields alone over {} keys (least of 5): median {:.2} ms, worst {:.2} ms, sum {:.0} ms",
        per_key.len(),
        median(&mut per_key),
        worst,
        total
    );
}

fn walk_bytes(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let m = match e.metadata() {
                Ok(m) => m,
                Err(_) => continue,
            };
            if m.is_dir() {
                total += walk_bytes(&e.path());
            } else {
                total += m.len();
            }
        }
    }
    total
}
