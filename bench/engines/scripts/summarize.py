#!/usr/bin/env python3
"""Markdown tables from results/N/{build.tsv,query*.json,counts.tsv,append.json,noop.json}."""
import csv, json, statistics, sys, os
N = sys.argv[1]; R = os.path.join(os.environ.get("WORK", "../../target/engines"), "results", N)
def mr(xs, unit="s", k=1.0, fmt="{:.1f}"):
    xs = [x * k for x in xs]
    return f"{fmt.format(statistics.median(xs))} {unit} ({fmt.format(min(xs))}–{fmt.format(max(xs))})"
rows = list(csv.DictReader(open(f"{R}/build.tsv"), delimiter="\t"))
eng = ["arbor", "tantivy", "fts5"]
b = {e: [r for r in rows if r["engine"] == e] for e in eng}
print(f"| measure ({N}) | arbor (today) | tantivy | FTS5 |\n| --- | ---: | ---: | ---: |")
base = {}
def line(name, vals, ratios=True):
    s = f"| {name} | " + " | ".join(v[0] + (f", ×{v[1]/vals[0][1]:.2f}" if ratios and i else "") for i, v in enumerate(vals)) + " |"
    print(s)
line(f"first build, wall ({len(b['arbor'])} runs)", [(mr([float(r['wall_s']) for r in b[e]]), statistics.median(float(r['wall_s']) for r in b[e])) for e in eng])
line("first build, CPU (user+sys), median", [(f"{statistics.median(float(r['user_s'])+float(r['sys_s']) for r in b[e]):.1f} s", statistics.median(float(r['user_s'])+float(r['sys_s']) for r in b[e])) for e in eng])
line("first build, peak RSS, median", [(f"{statistics.median(int(r['maxrss_kb']) for r in b[e])/1024:.0f} MB", statistics.median(int(r['maxrss_kb']) for r in b[e])) for e in eng])
line("index size on disk", [(f"{int(b[e][-1]['index_bytes'])/1e6:.0f} MB", int(b[e][-1]['index_bytes'])) for e in eng])
counts = list(csv.DictReader(open(f"{R}/counts.tsv"), delimiter="\t", quoting=csv.QUOTE_NONE))
for i, c in enumerate(counts, 1):
    f = f"{R}/query{i}.json"
    if not os.path.exists(f): continue
    res = {r["command"]: r for r in json.load(open(f))["results"]}
    def q(name): r = res[name]; return (mr(r["times"], "ms", 1000, "{:.0f}") + f"; CPU {(r['user'] + r['system'])*1000:.0f} ms", r["median"])
    a = q("arbor list --query")
    print(f"| warm `{c['query']}`: sessions {c['arbor_list']} / {c['tantivy']} / {c['fts5']} | " + " | ".join(
        v[0] + (f", ×{v[1]/a[1]:.2f}" if j else "") for j, v in enumerate([a, q("tantivy"), q("fts5")])) + " |")
for f, name in [("append", "append 5 entries, then refresh"), ("noop", "refresh, nothing changed")]:
    if not os.path.exists(f"{R}/{f}.json"): continue
    rs = json.load(open(f"{R}/{f}.json"))["results"]
    vals = [(mr(r["times"], "ms", 1000, "{:.0f}") + f"; CPU {(r['user'] + r['system'])*1000:.0f} ms", r["median"]) for r in rs]
    line(name + f" ({len(rs[0]['times'])} runs)", vals)
print()
print("`arbor search` (entries, limit 100) for reference: " + "; ".join(
    f"`{c['query']}` " + mr({r['command']: r for r in json.load(open(f'{R}/query{i}.json'))['results']}['arbor search']['times'], 'ms', 1000, '{:.0f}')
    for i, c in enumerate(counts, 1) if os.path.exists(f"{R}/query{i}.json")))
