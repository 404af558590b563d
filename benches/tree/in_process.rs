//! The tree in process: opening it (read, build, first draw), the search
//! text built after, the effects driven as the runtime does, and the
//! printing of what was measured.

use std::path::Path;
use std::time::Instant;

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use arbor::ui::runtime::perform;
use arbor::ui::theme::Theme;
use arbor::ui::{App, Effect, Mode};
use arbor_session::Agent;

use crate::keys::KeyTimer;
use crate::measure::{cpu_ms, ms, Stat};
use crate::{COLS, ROWS};

pub(crate) struct InProcess {
    load: Stat,
    load_cpu: Stat,
    index: Stat,
    keys: Vec<(&'static str, Stat)>,
    keys_cpu: Vec<(&'static str, Stat)>,
    background: Vec<(&'static str, Stat)>,
}

/// The tree in process, on a copy of the file (label edits write to it).
pub(crate) fn in_process(path: &Path, runs: usize) -> InProcess {
    let tmp = tempfile::tempdir().expect("temp dir");
    let copy = tmp.path().join(path.file_name().expect("file name"));
    std::fs::copy(path, &copy).expect("copy the session");
    let theme = Theme::plain();
    let mut term = Terminal::new(TestBackend::new(COLS, ROWS)).expect("terminal");
    let (mut app, opened) = open_runs(&copy, runs, &mut term, &theme);
    let mut timer = KeyTimer {
        term: &mut term,
        theme: &theme,
        keys: Vec::new(),
        keys_cpu: Vec::new(),
        background: Vec::new(),
    };
    let n = 12;
    timer.moves(&mut app, n);
    timer.folds(&mut app, n);
    timer.filters(&mut app, runs);
    timer.searches(&mut app, runs);
    timer.labels(&mut app, runs);
    InProcess {
        load: opened.load,
        load_cpu: opened.load_cpu,
        index: opened.index,
        keys: timer.keys,
        keys_cpu: timer.keys_cpu,
        background: timer.background,
    }
}

/// The times of opening the tree: to its first frame, its CPU, and the
/// search text built after it.
struct Opened {
    load: Stat,
    load_cpu: Stat,
    index: Stat,
}

/// Opens the tree on `copy` `runs` times; returns the last one's app.
fn open_runs(
    copy: &Path,
    runs: usize,
    term: &mut Terminal<TestBackend>,
    theme: &Theme,
) -> (App, Opened) {
    let mut load = Stat(Vec::new());
    let mut load_cpu = Stat(Vec::new());
    let mut index = Stat(Vec::new());
    let mut app = App::new("/".into(), 0);
    for _ in 0..runs {
        app = App::new("/".into(), 0);
        app.width = COLS;
        app.height = ROWS;
        app.tree_only = true;
        let t = Instant::now();
        let c = cpu_ms();
        let later = drive(
            &mut app,
            vec![Effect::OpenTree {
                path: copy.to_path_buf(),
                agent: Agent::Atomic,
            }],
        );
        term.draw(|f| arbor::ui::render(f, &app, theme))
            .expect("draw");
        load.0.push(ms(t.elapsed()));
        load_cpu.0.push(cpu_ms() - c);
        assert!(matches!(app.mode, Mode::Tree(_)), "the tree did not open");
        let t = Instant::now();
        drive_all(&mut app, later);
        index.0.push(ms(t.elapsed()));
    }
    (
        app,
        Opened {
            load,
            load_cpu,
            index,
        },
    )
}

/// Performs effects and feeds their events back, as the runtime does (on
/// its threads); the search text's build is left for the caller.
pub(crate) fn drive(app: &mut App, fx: Vec<Effect>) -> Vec<Effect> {
    let mut queue = fx;
    let mut later = Vec::new();
    while let Some(fx) = queue.pop() {
        if matches!(fx, Effect::Exit(_) | Effect::CloseTree | Effect::Copy(_)) {
            continue;
        }
        if matches!(fx, Effect::IndexTree(_)) {
            later.push(fx);
            continue;
        }
        for ev in perform(fx) {
            queue.extend(app.update(ev));
        }
    }
    later
}

/// [`drive`], the search text included.
pub(crate) fn drive_all(app: &mut App, fx: Vec<Effect>) {
    let mut later = drive(app, fx);
    while !later.is_empty() {
        let fx = later.split_off(0);
        for f in fx {
            for ev in perform(f) {
                let more = app.update(ev);
                later.extend(drive(app, more));
            }
        }
    }
}

/// What [`in_process`] measured.
pub(crate) fn print_in_process(ip: &InProcess) {
    println!(
        "in process: open (read, build, first draw): {}",
        ip.load.ms()
    );
    println!("in process: open, CPU (all threads): {}", ip.load_cpu.ms());
    println!(
        "in process: search text (built after the first frame, off the UI thread): {}",
        ip.index.ms()
    );
    println!("key → frame (update + draw at {COLS}×{ROWS}; goal < 16 ms):");
    for ((name, st), (_, cpu)) in ip.keys.iter().zip(&ip.keys_cpu) {
        println!(
            "  {:<38} median {:>8.2} ms, worst {:>8.2} ms ({} keys); CPU median {:>6.2} ms, worst {:>6.2} ms",
            name,
            st.median(),
            st.max(),
            st.0.len(),
            cpu.median(),
            cpu.max()
        );
    }
    for (name, st) in &ip.background {
        println!(
            "  background: {:<38} median {:>8.2} ms, worst {:>8.2} ms ({} times)",
            name,
            st.median(),
            st.max(),
            st.0.len()
        );
    }
}
