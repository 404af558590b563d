//! The loader's event stream (`index::load`), which the picker's loader
//! thread and `arbor list` consume: the warm and cold plans, the fallback
//! to the files, and each row sent once.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arbor::app::load::{load_listing, load_screen, LoadEvent, Plain, COLD_FILES};
use arbor_index::Index;
use arbor_session::SessionInfo;
use arbor_store::{list_session_files, Scope, StoreConfig, StoreKind};

const PROJECT: &str = "--home-u-proj--";

struct Store {
    dir: tempfile::TempDir,
    root: PathBuf,
}

impl Store {
    fn new(n: usize) -> Store {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("sessions");
        std::fs::create_dir_all(root.join(PROJECT)).unwrap();
        let s = Store { dir, root };
        for i in 0..n {
            let p = s.write(i, "hello");
            // A second apart, as old as their messages: written in a burst,
            // files share their modification time (the kernel's clock for
            // it moves a few milliseconds at a time), and the first
            // screen (the newest by that time) would be any of them.
            let at = std::time::UNIX_EPOCH
                + std::time::Duration::from_millis(1_767_261_600_000 + i as u64 * 1000);
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(at).unwrap();
        }
        s
    }

    fn path(&self, i: usize) -> PathBuf {
        self.root.join(PROJECT).join(format!(
            "2026-01-01T10-00-00-000Z_0199aaaa-0000-7000-8000-{i:012}.jsonl"
        ))
    }

    fn write(&self, i: usize, text: &str) -> PathBuf {
        let p = self.path(i);
        let header = format!(
            r#"{{"type":"session","version":3,"id":"0199aaaa-0000-7000-8000-{i:012}","timestamp":"2026-01-01T10:00:00.000Z","cwd":"/home/u/proj"}}"#
        );
        let msg = format!(
            r#"{{"type":"message","id":"m1","parentId":null,"timestamp":"2026-01-01T10:00:00.000Z","message":{{"role":"user","content":"{text}","timestamp":{}}}}}"#,
            1_767_261_600_000u64 + i as u64 * 1000
        );
        std::fs::write(&p, format!("{header}\n{msg}\n")).unwrap();
        p
    }

    fn config(&self) -> StoreConfig {
        StoreConfig::single(&self.root, StoreKind::PerProject)
    }

    fn index(&self) -> Index {
        Index::open(&self.dir.path().join("cache/index.db")).unwrap()
    }
}

/// The stream, with rows reduced to their paths.
#[derive(Debug, PartialEq)]
enum Ev {
    Rows(Vec<PathBuf>),
    Progress(usize, usize),
    Gone(PathBuf),
    Indexing(Option<(usize, usize)>),
    FirstScreen,
    Watch,
    Warning,
    Finished(usize),
}

fn record(ev: LoadEvent<SessionInfo>, evs: &mut Vec<Ev>) {
    evs.push(match ev {
        LoadEvent::Rows(r) => Ev::Rows(r.into_iter().map(|i| i.path.into()).collect()),
        LoadEvent::Progress { done, total } => Ev::Progress(done, total),
        LoadEvent::Gone(p) => Ev::Gone(p),
        LoadEvent::Indexing(n) => Ev::Indexing(n),
        LoadEvent::FirstScreen => Ev::FirstScreen,
        LoadEvent::Watch => Ev::Watch,
        LoadEvent::Warning(_) => Ev::Warning,
        LoadEvent::Finished { problems } => Ev::Finished(problems.len()),
    })
}

fn screen(config: &StoreConfig, index: Option<Result<Index, arbor_index::Error>>) -> Vec<Ev> {
    let mut evs = Vec::new();
    load_screen(config, index, &Plain, &mut |ev| record(ev, &mut evs));
    evs
}

/// How many times each path's row was sent.
fn sent(evs: &[Ev]) -> HashMap<&Path, usize> {
    let mut n = HashMap::new();
    for e in evs {
        if let Ev::Rows(r) = e {
            for p in r {
                *n.entry(p.as_path()).or_default() += 1;
            }
        }
    }
    n
}

fn position(evs: &[Ev], want: impl Fn(&Ev) -> bool) -> usize {
    evs.iter()
        .position(want)
        .unwrap_or_else(|| panic!("not in {evs:?}"))
}

/// Every row sent, in the order sent.
fn rows_in_order(evs: &[Ev]) -> Vec<PathBuf> {
    evs.iter()
        .filter_map(|e| match e {
            Ev::Rows(r) => Some(r.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

/// A session of `cwd` in `dir` that is only its header, session `id`
/// (a uuid's last group), written `secs` after the epoch when given.
fn header_only(dir: &Path, id: &str, cwd: &str, internal: bool, secs: Option<u64>) -> PathBuf {
    let p = dir.join(format!(
        "2025-01-01T10-00-00-000Z_0199cccc-0000-7000-8000-{id}.jsonl"
    ));
    let header = format!(
        r#"{{"type":"session","version":3,"id":"0199cccc-0000-7000-8000-{id}","timestamp":"2025-01-01T10:00:00.000Z","cwd":"{cwd}","internal":{internal}}}"#
    );
    std::fs::write(&p, header + "\n").unwrap();
    if let Some(secs) = secs {
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .unwrap();
    }
    p
}

#[test]
fn cold_index_rows_come_from_a_scan_then_the_index_is_built_behind_them() {
    let n = COLD_FILES + 6;
    let s = Store::new(n);
    let evs = screen(&s.config(), Some(Ok(s.index())));
    // Nothing stored: two empty batches, no first screen to wait for.
    assert_eq!(
        evs[..3],
        [Ev::Rows(vec![]), Ev::Rows(vec![]), Ev::Progress(0, n)]
    );
    assert!(!evs.contains(&Ev::FirstScreen));
    let watch = position(&evs, |e| *e == Ev::Watch);
    let scanned = position(&evs, |e| *e == Ev::Finished(0));
    let building = position(&evs, |e| *e == Ev::Indexing(Some((0, n))));
    let built = position(&evs, |e| *e == Ev::Indexing(None));
    // Every row before the watcher starts (the scan opens every file), the
    // list complete before the index is built.
    assert!(evs[watch..]
        .iter()
        .all(|e| !matches!(e, Ev::Rows(r) if !r.is_empty())));
    assert!(watch < scanned && scanned < building && building < built);
    assert_eq!(evs.last(), Some(&Ev::Finished(0)));
    // The refresh finds the rows the scan sent unchanged: each sent once.
    let counts = sent(&evs);
    assert_eq!(counts.len(), n);
    assert!(counts.values().all(|&c| c == 1), "{counts:?}");
    // And the index now has them all.
    let warm = screen(&s.config(), Some(Ok(s.index())));
    assert_eq!(sent(&warm).len(), n);
    assert!(!warm.iter().any(|e| matches!(e, Ev::Indexing(_))));
}

/// The picker's load of a cold index whose build another process does
/// (`load_screen_behind`): here a thread holding the build lock, as
/// `arbor index --behind` holds it, slow enough to be waited for.
#[test]
fn a_cold_index_built_by_another_process_is_waited_for() {
    use arbor_index::behind::BuildLock;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let n = COLD_FILES + 6;
    for can_start in [true, false] {
        let s = Store::new(n);
        let db = s.dir.path().join("cache/index.db");
        let (files, _) = list_session_files(&s.config(), &Scope::All);
        let (asked, built) = (AtomicUsize::new(0), AtomicBool::new(false));
        let mut evs = Vec::new();
        let mut built_when_done = None;
        std::thread::scope(|scope| {
            let start = |_: &Path| {
                asked.fetch_add(1, Ordering::SeqCst);
                // Changed after the scan, before the build.
                s.write(3, "changed meanwhile");
                if !can_start {
                    return false;
                }
                let lock = BuildLock::try_take(&db).unwrap().expect("free");
                let (db, files, built) = (&db, &files, &built);
                scope.spawn(move || {
                    let mut index = Index::open(db).unwrap();
                    index.refresh(files, &mut |_| {}).unwrap();
                    std::thread::sleep(std::time::Duration::from_millis(600));
                    built.store(true, Ordering::SeqCst);
                    drop(lock);
                });
                true
            };
            arbor::app::load::load_screen_behind(
                &s.config(),
                Some(Ok(s.index())),
                &Plain,
                None,
                &start,
                &mut |ev| {
                    if matches!(ev, LoadEvent::Indexing(None)) {
                        built_when_done = Some(built.load(Ordering::SeqCst));
                    }
                    record(ev, &mut evs)
                },
            );
        });
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        // Done once the other build ended (or, when none could be
        // started, built here all the same).
        assert_eq!(built_when_done, Some(can_start));
        let building = position(&evs, |e| *e == Ev::Indexing(Some((0, n))));
        let done = position(&evs, |e| *e == Ev::Indexing(None));
        assert!(building < done);
        if can_start {
            // Its progress was sent while it ran: all of it, at the end.
            assert!(
                evs[building..done].contains(&Ev::Indexing(Some((n, n)))),
                "{evs:?}"
            );
        }
        // Each row sent once, but the changed file's again.
        let mut counts = sent(&evs);
        assert_eq!(counts.remove(s.path(3).as_path()), Some(2));
        assert_eq!(counts.len(), n - 1);
        assert!(counts.values().all(|&c| c == 1), "{counts:?}");
        assert_eq!(evs.last(), Some(&Ev::Finished(0)));
        let warm = screen(&s.config(), Some(Ok(s.index())));
        assert_eq!(sent(&warm).len(), n);
        assert!(!warm.iter().any(|e| matches!(e, Ev::Indexing(_))));
    }
}

#[test]
fn warm_index_sends_stored_rows_first_then_only_what_changed() {
    let s = Store::new(5);
    let (files, _) = list_session_files(&s.config(), &Scope::All);
    s.index().refresh(&files, &mut |_| {}).unwrap();
    let grown = s.write(1, "hello again, with more text");
    std::fs::remove_file(s.path(2)).unwrap();
    let new = s.write(7, "new");

    let evs = screen(&s.config(), Some(Ok(s.index())));
    // The stored rows, before the disk is looked at.
    let Ev::Rows(first) = &evs[0] else {
        panic!("{evs:?}")
    };
    assert_eq!(first.len(), 5);
    assert_eq!(evs[1], Ev::FirstScreen);
    assert_eq!(evs[2], Ev::Rows(vec![]));
    // Four of the five files listed have their row on screen (the new one
    // not yet; the removed one's row is not counted).
    assert_eq!(evs[3], Ev::Progress(4, 5));
    // Watching before the refresh, which then sends only the changes.
    assert_eq!(evs[4], Ev::Watch);
    let mut changed = rows_in_order(&evs[5..]);
    changed.sort();
    let mut want = vec![grown, new];
    want.sort();
    assert_eq!(changed, want);
    assert!(evs.contains(&Ev::Gone(s.path(2))));
    assert_eq!(evs.last(), Some(&Ev::Finished(0)));
}

/// Past the first screen, stored rows are matched with the listing as they
/// are read: the rows of files gone are never sent (the first screen's are
/// taken back), and what is on screen at the end is the files' rows.
#[test]
fn stored_rows_past_the_first_screen_are_those_of_listed_files() {
    let n = 260;
    let s = Store::new(n);
    let (files, _) = list_session_files(&s.config(), &Scope::All);
    s.index().refresh(&files, &mut |_| {}).unwrap();
    // Old ones (past the first screen) gone, grown and turned into a
    // folder; a new one (first screen) gone; one new file.
    std::fs::remove_file(s.path(3)).unwrap();
    std::fs::remove_file(s.path(10)).unwrap();
    std::fs::create_dir(s.path(10)).unwrap();
    std::fs::remove_file(s.path(n - 10)).unwrap();
    let grown = s.write(5, "hello again, with more text");
    let new = s.write(n + 40, "new");

    let evs = screen(&s.config(), Some(Ok(s.index())));
    let Ev::Rows(first) = &evs[0] else {
        panic!("{evs:?}")
    };
    assert_eq!(first.len(), 200, "the first screen");
    assert!(first.contains(&s.path(n - 10)));
    let counts = sent(&evs);
    assert!(
        !counts.contains_key(s.path(3).as_path()),
        "gone: never sent"
    );
    assert!(!counts.contains_key(s.path(10).as_path()), "a folder now");
    assert_eq!(counts[grown.as_path()], 2, "stored, then as it is now");
    assert_eq!(counts[new.as_path()], 1);
    assert!(counts.iter().all(|(p, &c)| c == 1 || *p == grown));
    assert!(evs.contains(&Ev::Gone(s.path(n - 10))));
    assert_eq!(evs.last(), Some(&Ev::Finished(1)), "the folder");

    // What the screen ends up with is what the files give.
    let mut on_screen: std::collections::HashSet<PathBuf> = std::collections::HashSet::new();
    for e in &evs {
        match e {
            Ev::Rows(r) => on_screen.extend(r.iter().cloned()),
            Ev::Gone(p) => {
                on_screen.remove(p);
            }
            _ => {}
        }
    }
    let plain = screen(&s.config(), None);
    let want: std::collections::HashSet<PathBuf> =
        sent(&plain).keys().map(|p| p.to_path_buf()).collect();
    assert_eq!(want.len(), n - 3 + 1);
    assert_eq!(on_screen, want);
}

#[test]
fn an_unusable_index_is_a_warning_and_the_files_are_read() {
    let s = Store::new(3);
    let evs = screen(&s.config(), Some(Err(arbor_index::Error::NoCacheDir)));
    assert_eq!(evs[..3], [Ev::Warning, Ev::Watch, Ev::Progress(0, 3)]);
    assert_eq!(sent(&evs).len(), 3);
    assert_eq!(evs.last(), Some(&Ev::Finished(0)));
    // Without the index at all: the same, without the warning.
    let evs = screen(&s.config(), None);
    assert_eq!(evs[..2], [Ev::Watch, Ev::Progress(0, 3)]);
    assert_eq!(sent(&evs).len(), 3);

    let mut evs = Vec::new();
    let index = load_listing(
        &s.config(),
        &Scope::All,
        Some(Err(arbor_index::Error::NoCacheDir)),
        &mut |ev| record(ev, &mut evs),
    );
    assert!(index.is_none());
    assert_eq!(evs[0], Ev::Warning);
    assert_eq!(sent(&evs).len(), 3);
}

#[test]
fn listing_sends_every_row_of_its_scope_once_through_the_index() {
    let s = Store::new(4);
    std::fs::create_dir_all(s.root.join("--home-u-other--")).unwrap();
    std::fs::copy(
        s.path(0),
        s.root
            .join("--home-u-other--")
            .join(s.path(0).file_name().unwrap()),
    )
    .unwrap();
    std::fs::write(s.root.join(PROJECT).join("broken.jsonl"), "not json\n").unwrap();
    let scope = Scope::Project("/home/u/proj".into());
    for round in 0..2 {
        let mut rows = Vec::new();
        let mut problems = Vec::new();
        let index = load_listing(
            &s.config(),
            &scope,
            Some(Ok(s.index())),
            &mut |ev| match ev {
                LoadEvent::Rows(r) => rows.extend(r),
                LoadEvent::Finished { problems: p } => problems.extend(p),
                _ => {}
            },
        );
        assert!(index.is_some(), "round {round}");
        let mut paths: Vec<PathBuf> = rows.into_iter().map(|r| r.path.into()).collect();
        paths.sort();
        assert_eq!(paths, (0..4).map(|i| s.path(i)).collect::<Vec<_>>());
        assert_eq!(problems.len(), 1, "round {round}: {problems:?}");
    }
}

/// Opened on a project whose sessions are older than the store's newest
/// screenful, the picker's first rows include that project's newest (read
/// through the index of paths), each sent once; opened on a project that
/// has rows among the newest, or on the whole store, nothing comes apart.
#[test]
fn a_quiet_projects_newest_rows_come_with_the_first_screen() {
    let s = Store::new(260);
    let quiet_dir = s.root.join("--home-u-quiet--");
    std::fs::create_dir_all(&quiet_dir).unwrap();
    // Three sessions a year old, and newer than them (still older than the
    // busy project's) 300 internal ones its list hides (workflow runs).
    let session = |i: usize, internal: bool, secs: u64| {
        header_only(
            &quiet_dir,
            &format!("{i:012}"),
            "/home/u/quiet",
            internal,
            Some(secs),
        )
    };
    let quiet: Vec<PathBuf> = (0..3).map(|i| session(i, false, 1_735_725_600)).collect();
    let runs: Vec<PathBuf> = (3..303)
        .map(|i| session(i, true, 1_735_725_600 + i as u64))
        .collect();
    let (files, _) = list_session_files(&s.config(), &Scope::All);
    s.index().refresh(&files, &mut |_| {}).unwrap();
    let open_on = |project: Option<&str>| {
        let mut evs = Vec::new();
        arbor::app::load::load_screen_for(
            &s.config(),
            Some(Ok(s.index())),
            &Plain,
            project,
            &mut |ev| record(ev, &mut evs),
        );
        evs
    };

    let evs = open_on(Some("/home/u/quiet"));
    assert_eq!(evs[1], Ev::FirstScreen);
    let Ev::Rows(project) = &evs[2] else {
        panic!("{evs:?}")
    };
    let mut project = project.clone();
    project.sort();
    let mut want = [&quiet[..], &runs[..]].concat();
    want.sort();
    assert_eq!(project, want);
    let counts = sent(&evs);
    assert_eq!(counts.len(), 563);
    assert!(counts.values().all(|&c| c == 1), "{counts:?}");

    // The busy project's newest are the first screen: the next rows are
    // the rest of the store's (as without a project).
    for project in [Some("/home/u/proj"), None] {
        let evs = open_on(project);
        let Ev::Rows(rest) = &evs[2] else {
            panic!("{evs:?}")
        };
        assert_eq!(rest.len(), 363, "{project:?}");
        assert_eq!(sent(&evs).len(), 563);
    }
}

/// On a first run (no index), a picker opened on a project reads that
/// project's files before the others: its list is complete first.
#[test]
fn a_first_run_reads_the_projects_files_first() {
    let s = Store::new(COLD_FILES + 40);
    // Listed last (folders in their paths' order).
    let mine_dir = s.root.join("--home-u-zed--");
    std::fs::create_dir_all(&mine_dir).unwrap();
    let mine: Vec<PathBuf> = (0..5)
        .map(|i| header_only(&mine_dir, &format!("{i:012}"), "/home/u/zed", false, None))
        .collect();
    // Building the index, and without one (`--no-index`).
    for with_index in [true, false] {
        let mut evs = Vec::new();
        arbor::app::load::load_screen_for(
            &s.config(),
            with_index.then(|| Ok(s.index())),
            &Plain,
            Some("/home/u/zed"),
            &mut |ev| record(ev, &mut evs),
        );
        let order = rows_in_order(&evs);
        assert_eq!(order.len(), COLD_FILES + 45);
        let mut first: Vec<PathBuf> = order[..5].to_vec();
        first.sort();
        assert_eq!(first, mine, "index {with_index}: {order:?}");
        assert!(sent(&evs).values().all(|&c| c == 1));
        // The index built behind them.
        assert_eq!(evs.contains(&Ev::Indexing(None)), with_index);
    }
}
