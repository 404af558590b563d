#!/usr/bin/env python3
"""Append N entries to a session file: copies of its own first message lines (user, assistant,
toolResult), with fresh ids chained from the last entry, as a live agent would write them."""
import json, sys, uuid
path, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
lines = open(path, encoding="utf-8").read().splitlines()
last = next(json.loads(l)["id"] for l in reversed(lines) if '"id"' in l and not l.startswith('{"type":"session"'))
msgs = [json.loads(l) for l in lines[1:] if l.startswith('{"type":"message"')][:n]
with open(path, "a", encoding="utf-8") as f:
    for m in msgs:
        m["id"], m["parentId"] = uuid.uuid4().hex[:8], last
        last = m["id"]
        f.write(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n")
