//! tantivy prototype: one document per (session, chunk of appended lines); a text field per
//! scope (whitespace tokens, lowercased, with positions); `sid` as a fast field. The file
//! manifest (path, size, mtime, parsed offset) is a TSV beside the index.
//!   tantivy-proto build  STORE INDEX
//!   tantivy-proto update STORE INDEX            (the incremental refresh)
//!   tantivy-proto search STORE INDEX QUERY      (refresh, then matching sessions as JSON lines)
use common::{parse_query, read_chunk, walk, Chunk, Query, Term as QTerm, FIELDS};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::query::{BooleanQuery, Occur, Query as TQuery, RegexPhraseQuery, RegexQuery, TermSetQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED,
};
use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, TextAnalyzer, WhitespaceTokenizer};
use tantivy::{DocId, Index, IndexWriter, ReloadPolicy, Score, Searcher, SegmentReader, TantivyDocument, Term};

struct Entry {
    sid: u64,
    size: u64,
    mtime: u64,
    offset: u64,
    hidden: bool,
}

fn manifest_path(dir: &Path) -> PathBuf {
    dir.join("files.tsv")
}

fn load_manifest(dir: &Path) -> HashMap<PathBuf, Entry> {
    let text = std::fs::read_to_string(manifest_path(dir)).unwrap_or_default();
    let mut m = HashMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(6, '\t').collect();
        if f.len() < 6 {
            continue;
        }
        let n = |i: usize| f[i].parse::<u64>().unwrap_or(0);
        let e = Entry { sid: n(0), size: n(1), mtime: n(2), offset: n(3), hidden: f[4] == "1" };
        m.insert(PathBuf::from(f[5]), e);
    }
    m
}

fn save_manifest(dir: &Path, m: &HashMap<PathBuf, Entry>) {
    let tmp = dir.join("files.tsv.tmp");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&tmp).unwrap());
    for (p, e) in m {
        let h = if e.hidden { 1 } else { 0 };
        writeln!(out, "{}\t{}\t{}\t{}\t{}\t{}", e.sid, e.size, e.mtime, e.offset, h, p.display())
            .unwrap();
    }
    out.into_inner().unwrap().sync_all().unwrap();
    std::fs::rename(tmp, manifest_path(dir)).unwrap();
}

fn schema() -> Schema {
    let mut b = Schema::builder();
    b.add_u64_field("sid", FAST | INDEXED);
    let idx = TextFieldIndexing::default()
        .set_tokenizer("ws")
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    for f in FIELDS {
        b.add_text_field(f, TextOptions::default().set_indexing_options(idx.clone()));
    }
    b.build()
}

fn register(index: &Index) {
    let a = TextAnalyzer::builder(WhitespaceTokenizer::default())
        .filter(RemoveLongFilter::limit(4096))
        .filter(LowerCaser)
        .build();
    index.tokenizers().register("ws", a);
}

fn fields(index: &Index) -> (Field, Vec<Field>) {
    let s = index.schema();
    (s.get_field("sid").unwrap(), FIELDS.iter().map(|f| s.get_field(f).unwrap()).collect())
}

fn doc(sid: Field, fs: &[Field], id: u64, chunk: Chunk) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_u64(sid, id);
    for (i, pieces) in chunk.parts.into_iter().enumerate() {
        for p in pieces {
            d.add_text(fs[i], p);
        }
    }
    d
}

fn build(store: &Path, dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let index = Index::create_in_dir(dir, schema()).unwrap();
    register(&index);
    let (sid, fs) = fields(&index);
    let mut writer: IndexWriter = index.writer_with_num_threads(2, 256 << 20).unwrap();
    let files = walk(store);
    let mut manifest = HashMap::new();
    // Two parse threads (biggest files first) feed the writer's two indexing threads.
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].size));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (tx, rx) = mpsc::sync_channel::<(usize, Chunk, u64)>(64);
    std::thread::scope(|s| {
        for _ in 0..2 {
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
        for (i, chunk, off) in rx {
            let f = &files[i];
            let e = Entry { sid: i as u64, size: f.size, mtime: f.mtime, offset: off, hidden: chunk.hidden };
            writer.add_document(doc(sid, &fs, i as u64, chunk)).unwrap();
            manifest.insert(f.path.clone(), e);
        }
    });
    writer.commit().unwrap();
    writer.wait_merging_threads().unwrap();
    save_manifest(dir, &manifest);
}

/// The incremental refresh: unchanged files are skipped, grown ones read from their offset into
/// a new document of the same session, others read again under a new sid.
fn update(store: &Path, dir: &Path, index: &Index) -> usize {
    let mut manifest = load_manifest(dir);
    let files = walk(store);
    let mut changed = Vec::new();
    let mut seen = HashSet::new();
    for f in &files {
        seen.insert(f.path.clone());
        match manifest.get(&f.path) {
            Some(e) if e.size == f.size && e.mtime == f.mtime => {}
            _ => changed.push(f),
        }
    }
    let gone: Vec<PathBuf> = manifest.keys().filter(|p| !seen.contains(*p)).cloned().collect();
    if changed.is_empty() && gone.is_empty() {
        return 0;
    }
    let (sid, fs) = fields(index);
    let mut writer: IndexWriter = index.writer_with_num_threads(1, 32 << 20).unwrap();
    let mut next_sid = manifest.values().map(|e| e.sid + 1).max().unwrap_or(0);
    for p in gone {
        let e = manifest.remove(&p).unwrap();
        writer.delete_term(Term::from_field_u64(sid, e.sid));
    }
    for f in &changed {
        let (id, from) = match manifest.get(&f.path) {
            Some(e) if f.size > e.size => (e.sid, e.offset),
            Some(e) => {
                writer.delete_term(Term::from_field_u64(sid, e.sid));
                next_sid += 1;
                (next_sid - 1, 0)
            }
            None => {
                next_sid += 1;
                (next_sid - 1, 0)
            }
        };
        let Ok((chunk, off)) = read_chunk(&f.path, from) else { continue };
        let hidden = if from == 0 { chunk.hidden } else { manifest[&f.path].hidden };
        writer.add_document(doc(sid, &fs, id, chunk)).unwrap();
        let e = Entry { sid: id, size: f.size, mtime: f.mtime, offset: off, hidden };
        manifest.insert(f.path.clone(), e);
    }
    writer.commit().unwrap();
    writer.wait_merging_threads().unwrap();
    save_manifest(dir, &manifest);
    changed.len()
}

fn esc(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~\"@<>".contains(c) {
            o.push('\\');
        }
        o.push(c);
    }
    o
}

/// One query term over one field: a word is `.*word.*` over the term dictionary; a phrase or a
/// spanning regex is a RegexPhraseQuery (first word a suffix, last a prefix, middle exact).
fn term_query(t: &QTerm, f: Field, searcher: &Searcher) -> Box<dyn TQuery> {
    let pats: Vec<String> = match t {
        QTerm::Word(w) => vec![format!(".*{}.*", esc(w))],
        QTerm::Phrase(ws) if ws.len() == 1 => vec![format!(".*{}.*", esc(&ws[0]))],
        QTerm::Phrase(ws) => side_patterns(&ws.iter().map(|w| esc(w)).collect::<Vec<_>>()),
        QTerm::Regex(ps) if ps.len() == 1 => vec![format!(".*({}).*", ps[0])],
        QTerm::Regex(ps) => side_patterns(&ps.iter().map(|p| format!("({p})")).collect::<Vec<_>>()),
    };
    if pats.len() == 1 {
        match t {
            // tantivy's automaton allows 1,000 states (`\w` with Unicode exceeds it, after
            // seconds of determinizing): the terms holding the regex's leading literal are
            // streamed from each segment's dictionary and matched with the regex crate.
            QTerm::Regex(ps) => {
                let re = regex::Regex::new(&ps[0]).expect("bad regex");
                // Its leading literal narrows the terms through the automaton first.
                let lit: String = ps[0].chars().take_while(|c| c.is_alphanumeric()).collect();
                let aut = tantivy_fst::Regex::new(&format!(".*{}.*", esc(&lit))).unwrap();
                let mut terms = Vec::new();
                for seg in searcher.segment_readers() {
                    let inv = seg.inverted_index(f).unwrap();
                    let mut s = inv.terms().search(&aut).into_stream().unwrap();
                    while s.advance() {
                        if let Ok(k) = std::str::from_utf8(s.key()) {
                            if re.is_match(k) {
                                terms.push(Term::from_field_text(f, k));
                            }
                        }
                    }
                }
                if std::env::var_os("PROTO_DEBUG").is_some() {
                    eprintln!("{} terms", terms.len());
                }
                Box::new(TermSetQuery::new(terms))
            }
            _ => Box::new(RegexQuery::from_pattern(&pats[0], f).expect("bad pattern")),
        }
    } else {
        Box::new(RegexPhraseQuery::new(f, pats))
    }
}

fn side_patterns(ps: &[String]) -> Vec<String> {
    let n = ps.len();
    ps.iter()
        .enumerate()
        .map(|(i, p)| match i {
            0 => format!(".*{p}"),
            _ if i == n - 1 => format!("{p}.*"),
            _ => p.clone(),
        })
        .collect()
}

struct Sids;
struct SidsSeg(tantivy::columnar::Column<u64>, HashSet<u64>);

impl Collector for Sids {
    type Fruit = HashSet<u64>;
    type Child = SidsSeg;
    fn for_segment(&self, _: u32, r: &SegmentReader) -> tantivy::Result<SidsSeg> {
        Ok(SidsSeg(r.fast_fields().u64("sid")?, HashSet::new()))
    }
    fn requires_scoring(&self) -> bool {
        false
    }
    fn merge_fruits(&self, fr: Vec<HashSet<u64>>) -> tantivy::Result<HashSet<u64>> {
        Ok(fr.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SidsSeg {
    type Fruit = HashSet<u64>;
    fn collect(&mut self, doc: DocId, _: Score) {
        if let Some(v) = self.0.first(doc) {
            self.1.insert(v);
        }
    }
    fn harvest(self) -> HashSet<u64> {
        self.1
    }
}

fn search(store: &Path, dir: &Path, q: &str) {
    let index = Index::open_in_dir(dir).unwrap();
    register(&index);
    update(store, dir, &index);
    let manifest = load_manifest(dir);
    let (_, fs) = fields(&index);
    let Query { terms, fields: scope } = parse_query(q);
    let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().unwrap();
    let searcher = reader.searcher();
    // Terms must all match, each in a session (not necessarily the same chunk).
    let mut hits: Option<HashSet<u64>> = None;
    for t in &terms {
        let any: Vec<(Occur, Box<dyn TQuery>)> =
            scope.iter().map(|&i| (Occur::Should, term_query(t, fs[i], &searcher))).collect();
        let got = searcher.search(&BooleanQuery::new(any), &Sids).unwrap();
        hits = Some(match hits {
            None => got,
            Some(h) => h.intersection(&got).copied().collect(),
        });
    }
    let hits = hits.unwrap_or_default();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut n = 0;
    for (p, e) in &manifest {
        if hits.contains(&e.sid) && !e.hidden {
            writeln!(out, "{{\"path\":{}}}", common::json_escape(&p.to_string_lossy())).unwrap();
            n += 1;
        }
    }
    eprintln!("{n} sessions");
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (store, dir) = (Path::new(&a[2]), Path::new(&a[3]));
    match a[1].as_str() {
        "build" => build(store, dir),
        "update" => {
            let index = Index::open_in_dir(dir).unwrap();
            register(&index);
            eprintln!("{} files updated", update(store, dir, &index));
        }
        "search" => search(store, dir, &a[4]),
        _ => panic!("build|update|search"),
    }
}
