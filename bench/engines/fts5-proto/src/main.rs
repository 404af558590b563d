//! SQLite FTS5 prototype: a contentless FTS5 table (`unicode61`, diacritics kept, ASCII
//! punctuation as token characters so that terms are whitespace-separated words, as arbor's are),
//! one row per (session, chunk of appended lines), rowid = file id << 20 | chunk; a column per
//! scope; `fts5vocab` tables (row, col) scanned for the terms holding a word.
//!   fts5-proto build  STORE DB
//!   fts5-proto update STORE DB
//!   fts5-proto search STORE DB QUERY
use common::{parse_query, read_chunk, walk, Chunk, Query, Term, FIELDS};
use rusqlite::functions::FunctionFlags;
use rusqlite::{params, Connection};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::mpsc;

const MAX_PHRASES: usize = 4096;

fn open(db: &Path) -> Connection {
    let c = Connection::open(db).unwrap();
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA cache_size=-65536;")
        .unwrap();
    c.create_scalar_function("regexp", 2, FunctionFlags::SQLITE_DETERMINISTIC, |ctx| {
        let re = ctx.get_or_create_aux(0, |v| -> Result<regex::Regex, Box<dyn std::error::Error + Send + Sync + 'static>> {
            Ok(regex::Regex::new(v.as_str()?)?)
        })?;
        Ok(re.is_match(ctx.get_raw(1).as_str().unwrap_or("")))
    })
    .unwrap();
    c
}

fn create(c: &Connection) {
    let punct: String = (0x21u8..0x7f).map(char::from).filter(|c| c.is_ascii_punctuation()).collect();
    let tok = format!("unicode61 remove_diacritics 0 tokenchars '{}'", punct.replace('\'', "''"));
    let cols = FIELDS.join(", ");
    c.execute_batch(&format!(
        "CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INT, mtime INT,
                            off INT, chunks INT, hidden INT);
         CREATE VIRTUAL TABLE t USING fts5({cols}, content='', contentless_delete=1,
                                           tokenize='{}');
         CREATE VIRTUAL TABLE v_row USING fts5vocab(t, 'row');
         CREATE VIRTUAL TABLE v_col USING fts5vocab(t, 'col');",
        tok.replace('\'', "''")
    ))
    .unwrap();
}

fn insert_chunk(c: &Connection, rowid: i64, chunk: &Chunk) {
    let v: Vec<String> = chunk.parts.iter().map(|p| p.join("\n")).collect();
    c.prepare_cached("INSERT INTO t(rowid, user, assistant, other, tools, thinking) VALUES (?,?,?,?,?,?)")
        .unwrap()
        .execute(params![rowid, v[0], v[1], v[2], v[3], v[4]])
        .unwrap();
}

fn build(store: &Path, db: &Path) {
    for ext in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
    }
    let mut c = open(db);
    create(&c);
    let files = walk(store);
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].size));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) = mpsc::sync_channel::<(usize, Chunk, u64)>(64);
    std::thread::scope(|s| {
        // One parse thread beside the single SQLite writer (two cores).
        for _ in 0..1 {
            let tx = tx.clone();
            let (files, order, next) = (&files, &order, &next);
            s.spawn(move || loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&i) = order.get(k) else { break };
                if let Ok((chunk, off)) = read_chunk(&files[i].path, 0) {
                    tx.send((i, chunk, off)).unwrap();
                }
            });
        }
        drop(tx);
        let mut tx_db = c.transaction().unwrap();
        let mut n = 0;
        for (i, chunk, off) in rx {
            let f = &files[i];
            tx_db
                .prepare_cached("INSERT INTO files VALUES (?,?,?,?,?,1,?)")
                .unwrap()
                .execute(params![i as i64, f.path.to_string_lossy(), f.size as i64, f.mtime as i64,
                                 off as i64, chunk.hidden])
                .unwrap();
            insert_chunk(&tx_db, (i as i64) << 20, &chunk);
            n += 1;
            if n % 64 == 0 {
                tx_db.commit().unwrap();
                tx_db = c.transaction().unwrap();
            }
        }
        tx_db.commit().unwrap();
    });
    c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").unwrap();
}

fn update(store: &Path, c: &mut Connection) -> usize {
    let mut known: HashMap<String, (i64, u64, u64, u64, i64)> = HashMap::new();
    {
        let mut st = c.prepare("SELECT path, id, size, mtime, off, chunks FROM files").unwrap();
        let rows = st
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get::<_, i64>(2)? as u64,
                    r.get::<_, i64>(3)? as u64, r.get::<_, i64>(4)? as u64, r.get(5)?)))
            })
            .unwrap();
        for r in rows {
            let (p, v) = r.unwrap();
            known.insert(p, v);
        }
    }
    let files = walk(store);
    let mut seen = HashSet::new();
    let mut changed = Vec::new();
    for f in &files {
        let p = f.path.to_string_lossy().into_owned();
        match known.get(&p) {
            Some(&(_, size, mtime, _, _)) if size == f.size && mtime == f.mtime => {}
            _ => changed.push(f),
        }
        seen.insert(p);
    }
    let gone: Vec<String> = known.keys().filter(|p| !seen.contains(*p)).cloned().collect();
    if changed.is_empty() && gone.is_empty() {
        return 0;
    }
    let tx = c.transaction().unwrap();
    let del = |id: i64| {
        tx.execute("DELETE FROM t WHERE rowid BETWEEN ? AND ?", params![id << 20, (id << 20) | 0xFFFFF])
            .unwrap();
        tx.execute("DELETE FROM files WHERE id = ?", [id]).unwrap();
    };
    for p in &gone {
        del(known[p].0);
    }
    let mut next_id: i64 = tx.query_row("SELECT coalesce(max(id), -1) + 1 FROM files", [], |r| r.get(0)).unwrap();
    for f in &changed {
        let p = f.path.to_string_lossy().into_owned();
        match known.get(&p) {
            Some(&(id, size, _, off, chunks)) if f.size > size => {
                let Ok((chunk, end)) = read_chunk(&f.path, off) else { continue };
                insert_chunk(&tx, (id << 20) | chunks, &chunk);
                tx.execute("UPDATE files SET size=?, mtime=?, off=?, chunks=? WHERE id=?",
                           params![f.size as i64, f.mtime as i64, end as i64, chunks + 1, id])
                    .unwrap();
            }
            other => {
                if let Some(&(id, ..)) = other {
                    del(id);
                }
                let Ok((chunk, end)) = read_chunk(&f.path, 0) else { continue };
                tx.execute("INSERT INTO files VALUES (?,?,?,?,?,1,?)",
                           params![next_id, p, f.size as i64, f.mtime as i64, end as i64, chunk.hidden])
                    .unwrap();
                insert_chunk(&tx, next_id << 20, &chunk);
                next_id += 1;
            }
        }
    }
    tx.commit().unwrap();
    changed.len()
}

fn quote(t: &str) -> String {
    format!("\"{}\"", t.replace('"', "\"\""))
}

/// Terms of the vocabulary (of the scoped columns) for which `cond` holds (`?1` = `arg`).
fn vocab(c: &Connection, scoped: bool, cols: &str, cond: &str, arg: &str) -> Vec<String> {
    let sql = if scoped {
        format!("SELECT DISTINCT term FROM v_col WHERE col IN ({cols}) AND {cond}")
    } else {
        format!("SELECT term FROM v_row WHERE {cond}")
    };
    let t = std::time::Instant::now();
    let mut st = c.prepare_cached(&sql).unwrap();
    let r = st.query_map([arg], |r| r.get::<_, String>(0)).unwrap();
    let terms: Vec<String> = r.map(Result::unwrap).collect();
    if std::env::var_os("PROTO_DEBUG").is_some() {
        eprintln!("vocab scan: {} terms in {:?}", terms.len(), t.elapsed());
    }
    terms
}

/// The MATCH expression of one query term, or None when no term of the vocabulary fits.
fn expr(c: &Connection, t: &Term, scoped: bool, cols: &str) -> Option<String> {
    let v = |cond: &str, arg: &str| vocab(c, scoped, cols, cond, arg);
    let contains = "instr(term, ?1) > 0";
    let sides: Vec<Vec<String>> = match t {
        Term::Word(w) => vec![v(contains, w)],
        Term::Phrase(ws) if ws.len() == 1 => vec![v(contains, &ws[0])],
        Term::Phrase(ws) => {
            let n = ws.len();
            ws.iter()
                .enumerate()
                .map(|(i, w)| match i {
                    0 => v("substr(term, -length(?1)) = ?1", w),
                    _ if i == n - 1 => v("term >= ?1 AND substr(term, 1, length(?1)) = ?1", w),
                    _ => vec![w.clone()],
                })
                .collect()
        }
        Term::Regex(ps) if ps.len() == 1 => vec![v("regexp(?1, term)", &ps[0])],
        Term::Regex(ps) => {
            let n = ps.len();
            ps.iter()
                .enumerate()
                .map(|(i, p)| {
                    let re = match i {
                        0 => format!("(?:{p})$"),
                        _ if i == n - 1 => format!("^(?:{p})"),
                        _ => format!("^(?:{p})$"),
                    };
                    v("regexp(?1, term)", &re)
                })
                .collect()
        }
    };
    if sides.iter().any(Vec::is_empty) {
        return None;
    }
    if sides.len() == 1 {
        return Some(sides[0].iter().map(|t| quote(t)).collect::<Vec<_>>().join(" OR "));
    }
    // A phrase whose words are substrings: every combination of the fitting terms.
    let mut phrases: Vec<Vec<&str>> = vec![vec![]];
    for s in &sides {
        phrases = phrases
            .iter()
            .flat_map(|p| s.iter().map(move |t| [p.clone(), vec![t.as_str()]].concat()))
            .collect();
        assert!(phrases.len() <= MAX_PHRASES, "phrase expands to over {MAX_PHRASES} FTS5 phrases");
    }
    Some(phrases.iter().map(|p| quote(&p.join(" "))).collect::<Vec<_>>().join(" OR "))
}

fn search(store: &Path, db: &Path, q: &str) {
    let mut c = open(db);
    update(store, &mut c);
    let Query { terms, fields } = parse_query(q);
    let scoped = fields.len() < FIELDS.len();
    let cols = fields.iter().map(|&i| format!("'{}'", FIELDS[i])).collect::<Vec<_>>().join(",");
    let filter = fields.iter().map(|&i| FIELDS[i]).collect::<Vec<_>>().join(" ");
    let mut hits: Option<HashSet<i64>> = None;
    for t in &terms {
        let got: HashSet<i64> = match expr(&c, t, scoped, &cols) {
            None => HashSet::new(),
            Some(e) => {
                let m = if scoped { format!("{{{filter}}} : ({e})") } else { e };
                let mut st = c.prepare("SELECT DISTINCT rowid >> 20 FROM t WHERE t MATCH ?").unwrap();
                let r = st.query_map([m], |r| r.get::<_, i64>(0)).unwrap();
                r.map(Result::unwrap).collect()
            }
        };
        hits = Some(match hits {
            None => got,
            Some(h) => h.intersection(&got).copied().collect(),
        });
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut st = c.prepare("SELECT path FROM files WHERE id = ? AND hidden = 0").unwrap();
    let mut n = 0;
    for id in hits.unwrap_or_default() {
        if let Ok(p) = st.query_row([id], |r| r.get::<_, String>(0)) {
            writeln!(out, "{{\"path\":{}}}", common::json_escape(&p)).unwrap();
            n += 1;
        }
    }
    eprintln!("{n} sessions");
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (store, db) = (Path::new(&a[2]), Path::new(&a[3]));
    match a[1].as_str() {
        "build" => build(store, db),
        "update" => eprintln!("{} files updated", update(store, &mut open(db))),
        "search" => search(store, db, &a[4]),
        _ => panic!("build|update|search"),
    }
}
