//! Shared by both prototypes: walking a store, reading a session file from an offset (complete
//! lines only), and cutting each line into the searchable parts of README "## Search":
//! user, assistant, other, tool call + tool output (`tools`), thinking. Approximate: the short
//! fields (name, cwd, id, first message) are not indexed and not fuzzy-matched.
use serde_json::Value;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

pub const FIELDS: [&str; 5] = ["user", "assistant", "other", "tools", "thinking"];
pub const TOOLS: usize = 3;

/// One session chunk's text: per field, its pieces (messages, blocks, outputs).
#[derive(Default)]
pub struct Chunk {
    pub parts: [Vec<String>; 5],
    pub hidden: bool,
}

pub struct FileStat {
    pub path: PathBuf,
    pub size: u64,
    pub mtime: u64,
}

pub fn walk(root: &Path) -> Vec<FileStat> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(md) = std::fs::metadata(&p) else { continue };
            if md.is_dir() {
                stack.push(p);
            } else if md.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
                let mtime = md.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
                let mtime = mtime.map_or(0, |d| d.as_nanos() as u64);
                out.push(FileStat { path: p, size: md.len(), mtime });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// Reads `path` from `offset` to the end of its last complete line; returns the chunk and the
/// new offset.
pub fn read_chunk(path: &Path, offset: u64) -> std::io::Result<(Chunk, u64)> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(offset))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    let end = match memrchr_nl(&buf) {
        Some(i) => i + 1,
        None => 0,
    };
    let mut chunk = Chunk::default();
    for (i, line) in buf[..end].split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else { continue };
        if offset == 0 && i == 0 && v.get("type").and_then(Value::as_str) == Some("session") {
            let wf = &v["workflow"];
            let s = |k: &str| wf.get(k).and_then(Value::as_str).is_some_and(|x| !x.is_empty());
            chunk.hidden = v.get("internal") == Some(&Value::Bool(true))
                && s("runId") && s("stageId") && s("stageName");
        }
        extract(&v, &mut chunk);
    }
    Ok((chunk, offset + end as u64))
}

fn memrchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().rposition(|&c| c == b'\n')
}

fn push(chunk: &mut Chunk, field: usize, s: &str) {
    if !s.trim().is_empty() {
        chunk.parts[field].push(s.to_string());
    }
}

fn content_text(c: &Value, chunk: &mut Chunk, field: usize) {
    match c {
        Value::String(s) => push(chunk, field, s),
        Value::Array(blocks) => {
            for b in blocks {
                if b.get("type").and_then(Value::as_str) == Some("text") {
                    if let Some(t) = b.get("text").and_then(Value::as_str) {
                        push(chunk, field, t);
                    }
                }
            }
        }
        _ => {}
    }
}

fn values(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push(' ');
        }
        Value::Number(n) => {
            out.push_str(&n.to_string());
            out.push(' ');
        }
        Value::Bool(b) => {
            out.push_str(if *b { "true " } else { "false " });
        }
        Value::Array(a) => a.iter().for_each(|x| values(x, out)),
        Value::Object(o) => o.values().for_each(|x| values(x, out)),
        Value::Null => {}
    }
}

/// The parts of one entry (README "## Search" table).
pub fn extract(v: &Value, chunk: &mut Chunk) {
    let str_of = |k: &str| v.get(k).and_then(Value::as_str);
    match str_of("type") {
        Some("message") => {
            let m = &v["message"];
            match m.get("role").and_then(Value::as_str) {
                Some("user") => content_text(&m["content"], chunk, 0),
                Some("assistant") => {
                    let Some(blocks) = m.get("content").and_then(Value::as_array) else {
                        return content_text(&m["content"], chunk, 1);
                    };
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => push(chunk, 1, b["text"].as_str().unwrap_or("")),
                            Some("thinking") => {
                                push(chunk, 4, b["thinking"].as_str().unwrap_or(""))
                            }
                            Some("toolCall") => {
                                let mut s = String::new();
                                s.push_str(b["name"].as_str().unwrap_or(""));
                                s.push(' ');
                                values(&b["arguments"], &mut s);
                                push(chunk, TOOLS, &s);
                            }
                            _ => {}
                        }
                    }
                }
                Some("toolResult") => content_text(&m["content"], chunk, TOOLS),
                Some("bashExecution") => {
                    push(chunk, TOOLS, m["command"].as_str().unwrap_or(""));
                    push(chunk, TOOLS, m["output"].as_str().unwrap_or(""));
                }
                Some("custom") => content_text(&m["content"], chunk, 2),
                Some("branchSummary") | Some("compactionSummary") => {
                    push(chunk, 2, m["summary"].as_str().unwrap_or(""))
                }
                _ => {}
            }
        }
        Some("custom_message") => content_text(&v["content"], chunk, 2),
        Some("branch_summary") | Some("compaction") => push(chunk, 2, str_of("summary").unwrap_or("")),
        _ => {}
    }
}

/// A parsed query: terms that must all match, and the fields they look at.
pub enum Term {
    Word(String),
    Phrase(Vec<String>),
    /// A regex cut at `\s+` / spaces into per-word patterns (a term-local regex has one).
    Regex(Vec<String>),
}

pub struct Query {
    pub terms: Vec<Term>,
    pub fields: Vec<usize>,
}

pub fn parse_query(q: &str) -> Query {
    let mut terms = Vec::new();
    let mut fields = Vec::new();
    let mut rest = q.trim();
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('"') {
            let end = r.find('"').unwrap_or(r.len());
            let words: Vec<String> = r[..end].split_whitespace().map(str::to_lowercase).collect();
            if !words.is_empty() {
                terms.push(Term::Phrase(words));
            }
            rest = r.get(end + 1..).unwrap_or("").trim_start();
            continue;
        }
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let tok = &rest[..end];
        rest = rest[end..].trim_start();
        if let Some(scopes) = tok.strip_prefix("in:") {
            for s in scopes.split(',') {
                match s {
                    "user" => fields.push(0),
                    "assistant" => fields.push(1),
                    "other" => fields.push(2),
                    "tools" => fields.push(3),
                    "thinking" => fields.push(4),
                    _ => {}
                }
            }
        } else if let Some(re) = tok.strip_prefix("re:") {
            let pieces: Vec<String> = re
                .split("\\s+")
                .flat_map(|p| p.split(' '))
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
            terms.push(Term::Regex(pieces));
        } else {
            terms.push(Term::Word(tok.to_lowercase()));
        }
    }
    if fields.is_empty() {
        fields = (0..5).collect();
    }
    Query { terms, fields }
}

pub fn json_escape(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}
