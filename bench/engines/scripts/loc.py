#!/usr/bin/env python3
"""Lines per Rust file: total (wc -l), code (neither blank nor a // comment) outside and inside
the trailing `#[cfg(test)]` module."""
import sys
tot = [0, 0, 0]
for p in sys.argv[1:]:
    lines = open(p, encoding="utf-8").read().splitlines()
    cut = next((i for i, l in enumerate(lines) if l.strip() == "#[cfg(test)]" and i + 1 < len(lines) and lines[i + 1].startswith("mod ")), len(lines))
    code = lambda ls: sum(1 for l in ls if l.strip() and not l.strip().startswith("//"))
    r = [len(lines), code(lines[:cut]), code(lines[cut:])]
    tot = [a + b for a, b in zip(tot, r)]
    print(f"{r[0]:6} {r[1]:6} {r[2]:6}  {p}")
print(f"{tot[0]:6} {tot[1]:6} {tot[2]:6}  total (lines, code, test code)")
