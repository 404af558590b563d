#!/usr/bin/env python3
"""Two hostile stores of one session each, version-3 Atomic sessions for bench/huge-session.sh.

  python3 bench/gen_huge.py DIR [--lines 1000000] [--big-mb 200]

DIR/many/--bench--/<name>.jsonl: a header and LINES entries (about
244 bytes a line): user / assistant (text or a tool call) / toolResult turns
on a parent chain, a branch every 50,000 lines (a few turns off an earlier
entry, then back), a label every 100,000 lines.
DIR/big/--bench--/<name>.jsonl: a short session whose one tool
result is a single line of BIG_MB megabytes, and a reply after it.
Deterministic: the same arguments give the same bytes.
"""
import argparse
import json
import os

WORDS = ("parser token cache render error config index tree label fork merge build test "
         "panic thread folder commit branch agent model usage trash query scroll width "
         "entry reply prompt schema filter").split()


def ts(i):
    s = 1733234400 + i
    return "2024-12-%02dT%02d:%02d:%02d.000Z" % (3 + s // 86400 % 20, s // 3600 % 24, s // 60 % 60, s % 60)


def words(i, n):
    return " ".join(WORDS[(i * 7 + k * 13) % len(WORDS)] for k in range(n))


def line(d):
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False) + "\n"


def header(sid):
    return line({"type": "session", "version": 3, "id": sid, "timestamp": ts(0), "cwd": "/bench"})


def msg(eid, parent, i, message):
    message["timestamp"] = 1733234400000 + i * 1000
    return line({"type": "message", "id": eid, "parentId": parent, "timestamp": ts(i), "message": message})


def turn(eid, parent, i):
    """The i-th entry of a user → assistant (tool call) → toolResult → assistant cycle."""
    k = (i - 1) % 4
    if k == 0:
        return msg(eid, parent, i, {"role": "user", "content": words(i, 3)})
    if k == 1:
        return msg(eid, parent, i, {"role": "assistant", "content": [
            {"type": "toolCall", "id": "c%x" % i, "name": "bash", "arguments": {"command": "rg %s" % WORDS[i % 30]}}],
            "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "toolUse"})
    if k == 2:
        return msg(eid, parent, i, {"role": "toolResult", "toolCallId": "c%x" % (i - 1), "toolName": "bash",
                                    "content": [{"type": "text", "text": words(i, 3)}], "isError": False})
    return msg(eid, parent, i, {"role": "assistant", "content": [{"type": "text", "text": words(i, 2)}],
                                "provider": "anthropic", "model": "claude-sonnet-4-5", "stopReason": "stop"})


def huge_lines(path, n):
    with open(path, "w", buffering=1 << 20) as f:
        f.write(header("0193a000-0000-7000-8000-000000000001"))
        parent = None
        main = None  # the leaf of the main line while a branch is written
        for i in range(1, n + 1):
            eid = "%08x" % i
            if i % 100_000 == 0 and parent:
                f.write(line({"type": "label", "id": eid, "parentId": parent, "timestamp": ts(i),
                              "targetId": "%08x" % (i - 7), "label": "checkpoint-%d" % (i // 100_000)}))
            elif i % 50_000 == 10 and i > 10:
                # A branch: from 40 entries back, a few turns, then the main line goes on.
                main = parent
                parent = "%08x" % (i - 40)
                f.write(turn(eid, parent, i - i % 4))
            elif main and i % 50_000 == 18:
                f.write(turn(eid, main, i))
                main = None
            else:
                f.write(turn(eid, parent, i))
            parent = eid


def huge_line(path, mb):
    with open(path, "w", buffering=1 << 20) as f:
        f.write(header("0193a000-0000-7000-8000-000000000002"))
        f.write(turn("00000001", None, 4))
        f.write(turn("00000002", "00000001", 5))
        block = (words(3, 40) + "\n")
        text = block * (mb * 1024 * 1024 // len(block))
        f.write(msg("00000003", "00000002", 6, {"role": "toolResult", "toolCallId": "call_00000005", "toolName": "bash",
                                                 "content": [{"type": "text", "text": "needle-start " + text + " needle-end"}],
                                                 "isError": False}))
        f.write(turn("00000004", "00000003", 7))
        f.write(turn("00000005", "00000004", 8))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--lines", type=int, default=1_000_000)
    p.add_argument("--big-mb", type=int, default=200)
    a = p.parse_args()
    for store in ("many", "big"):
        os.makedirs(os.path.join(a.dir, store, "--bench--"), exist_ok=True)
    huge_lines(os.path.join(a.dir, "many", "--bench--", "2024-12-03T14-00-00-000Z_0193a000-0000-7000-8000-000000000001.jsonl"), a.lines)
    huge_line(os.path.join(a.dir, "big", "--bench--", "2024-12-03T14-00-00-000Z_0193a000-0000-7000-8000-000000000002.jsonl"), a.big_mb)


if __name__ == "__main__":
    main()
