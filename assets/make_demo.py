#!/usr/bin/env python3
"""Write arbor's demo session store (Python 3 stdlib only, deterministic).

    python3 assets/make_demo.py                      # -> assets/demo-store/
    python3 assets/make_demo.py OUT_DIR              # somewhere else
    python3 assets/make_demo.py --root ~/.atomic/agent/sessions OUT_DIR

The output is laid out exactly like an Atomic store root (`<agent dir>/sessions`): one folder per
project named by the cwd encoding (`/home/demo/projects/webapp` -> `--home-demo-projects-webapp--`),
session files named `<ISO timestamp, ':' and '.' -> '-'>_<uuidv7>.jsonl`, version-3 headers, 8-hex
entry ids with parentId chains. Nine sessions over three projects, dated 2026-11-20 .. 2026-11-28.
Every file's mtime is set to its last entry's timestamp.

Note: arbor's tests regenerate nothing -- `assets/demo-store/` is the committed demo (for
screenshots, `arbor --session-dir assets/demo-store`, manual testing). This script is only how it
was made; re-run it after editing it (and after a git checkout if you want the mtimes back).

The one machine-specific value is the fork's header `parentSession`, which Atomic writes as an
absolute path. It is `<root>/<project folder>/<parent file>`, where `<root>` defaults to the
absolute path of the output directory; pass `--root DIR` to write it as if the store lived at DIR
(e.g. when copying the demo into a real agent dir).

Project folders that this script generates are deleted and rewritten on every run; nothing else
in the output directory is touched.
"""

import argparse
import base64
import copy
import datetime as dt
import decimal
import json
import os
import random
import shutil
import string

SEED = 20261120

# 24x40 palette PNG: a phone-width page with a dark sidebar whose nav labels run past the edge.
SCREENSHOT_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAABgAAAAoCAMAAADT08pnAAAAElBMVEX///8gJDBajObIyM3mRjz19fhtxEPwAAAAL0lEQVR4"
    "2mNgwgEYqCjBiAWwsrKykCfBjAAQCRCLynYQYznEAQNk+ajPR31OilEAPFEGvlSkxBoAAAAASUVORK5CYII="
)

# USD per million tokens: input, output, cacheRead, cacheWrite
PRICES = {
    "claude-sonnet-4-5": (3.0, 15.0, 0.30, 3.75),
    "claude-opus-4-5": (5.0, 25.0, 0.50, 6.25),
    "gpt-5.1-codex": (1.25, 10.0, 0.125, 0.0),
}
APIS = {"anthropic": "anthropic-messages", "openai": "openai-responses"}

B62 = string.ascii_letters + string.digits


def iso(ms):
    d = dt.datetime.fromtimestamp(ms // 1000, tz=dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def ms_of(text):
    """'2026-11-21T09:14:07.412Z' -> Unix ms."""
    d = dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)
    return int(d.timestamp() * 1000)


def encode_cwd(cwd):
    p = cwd[1:] if cwd[:1] in ("/", "\\") else cwd
    for ch in "/\\:":
        p = p.replace(ch, "-")
    return f"--{p}--"


def js_number(x):
    """Format a float like JavaScript's JSON.stringify (0 not 0.0, 0.000018 not 1.8e-05)."""
    if x == int(x) and abs(x) < 1e21:
        return str(int(x))
    r = repr(x)
    if "e" in r and 1e-7 <= abs(x) < 1e21:
        r = format(decimal.Decimal(r), "f")
    return r


def js_dumps(obj):
    """JSON.stringify-compatible compact serialisation (key order kept, non-ASCII kept)."""
    if isinstance(obj, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + js_dumps(v) for k, v in obj.items()) + "}"
    if isinstance(obj, list):
        return "[" + ",".join(js_dumps(v) for v in obj) + "]"
    if isinstance(obj, float):
        return js_number(obj)
    return json.dumps(obj, ensure_ascii=False)


def tokens(obj):
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False)
    return max(1, round(len(text) / 3.6))


class Session:
    def __init__(self, rng, cwd, start, *, base_ctx=9800, header_extra=None):
        self.rng = rng
        self.cwd = cwd
        self.t = ms_of(start)
        self.id = self._uuid7(self.t)
        self.header = {"type": "session", "version": 3, "id": self.id, "timestamp": iso(self.t), "cwd": cwd}
        if header_extra:
            self.header.update(header_extra)
        self.entries = []
        self.ids = set()
        self.leaf = None
        self.provider, self.model = "anthropic", "claude-sonnet-4-5"
        self.ctx = base_ctx  # prompt tokens the next request would send (system prompt + tools + history)
        self.cached = 0  # tokens already in the provider's prompt cache
        self.t += rng.randint(300, 1500)

    # ---- low level ------------------------------------------------------------------------------
    def _uuid7(self, ms):
        v = (ms << 80) | (0x7 << 76) | (self.rng.getrandbits(12) << 64) | (0b10 << 62) | self.rng.getrandbits(62)
        h = f"{v:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def _new_id(self):
        while True:
            i = f"{self.rng.getrandbits(32):08x}"
            if i not in self.ids:
                self.ids.add(i)
                return i

    def wait(self, seconds):
        self.t += int(seconds * 1000) + self.rng.randint(0, 999)

    def add(self, etype, parent="leaf", ts=None, **fields):
        eid = self._new_id()
        entry = {"type": etype, "id": eid, "parentId": self.leaf if parent == "leaf" else parent,
                 "timestamp": iso(self.t if ts is None else ts)}
        entry.update(fields)
        self.entries.append(entry)
        self.leaf = eid
        return eid

    @property
    def last_ms(self):
        return ms_of(self.entries[-1]["timestamp"]) if self.entries else ms_of(self.header["timestamp"])

    # ---- session-level entries ------------------------------------------------------------------
    def model_change(self, provider, model):
        if provider != self.provider:
            self.cached = 0
        self.provider, self.model = provider, model
        self.wait(0.05)
        return self.add("model_change", provider=provider, modelId=model)

    def thinking(self, level):
        self.wait(0.05)
        return self.add("thinking_level_change", thinkingLevel=level)

    def label(self, target, text=None, after=2):
        self.wait(after)
        if text is None:
            return self.add("label", targetId=target)
        return self.add("label", targetId=target, label=text)

    def name(self, text, after=3):
        self.wait(after)
        return self.add("session_info", name=text)

    # ---- messages -------------------------------------------------------------------------------
    def user(self, content, after=20, parent="leaf"):
        self.wait(after)
        msg_ts = self.t
        self.t += self.rng.randint(2, 9)
        self.ctx += tokens(content)
        return self.add("message", parent=parent, message={"role": "user", "content": content, "timestamp": msg_ts})

    def _tool_id(self):
        if self.provider == "anthropic":
            return "toolu_01" + "".join(self.rng.choice(B62) for _ in range(22))
        call = "call_" + "".join(self.rng.choice(B62) for _ in range(24))
        return f"{call}|fc_{self.rng.getrandbits(200):050x}"

    def _signature(self, text):
        if self.provider == "anthropic":
            raw = self.rng.randbytes(180 + len(text) // 6)
            return "Eu" + base64.b64encode(raw).decode()
        item = {"type": "reasoning", "id": f"rs_{self.rng.getrandbits(200):050x}",
                "summary": [{"type": "summary_text", "text": text}],
                "encrypted_content": "gAAAAA" + base64.b64encode(self.rng.randbytes(96)).decode()}
        return json.dumps(item, separators=(",", ":"))

    def _usage(self, out_tokens):
        pin, pout, pcr, pcw = PRICES[self.model]
        prompt = self.ctx
        if self.provider == "anthropic":
            inp = self.rng.randint(3, 12)
            cache_read = min(self.cached, prompt - inp)
            cache_write = prompt - inp - cache_read
        else:
            cache_read = (min(self.cached, prompt) // 128) * 128
            inp = prompt - cache_read
            cache_write = 0
        self.cached = prompt
        cost = {
            "input": round(inp * pin / 1e6, 8),
            "output": round(out_tokens * pout / 1e6, 8),
            "cacheRead": round(cache_read * pcr / 1e6, 8),
            "cacheWrite": round(cache_write * pcw / 1e6, 8),
        }
        cost["total"] = round(sum(cost.values()), 8)
        return {"input": inp, "output": out_tokens, "cacheRead": cache_read, "cacheWrite": cache_write,
                "totalTokens": inp + out_tokens + cache_read + cache_write, "cost": cost}

    def asst(self, *blocks, stop=None, after=0.4):
        """blocks: str -> text, ('think', str) -> thinking, dict -> toolCall from call()."""
        self.wait(after)
        start = self.t
        content = []
        out = 0
        for b in blocks:
            if isinstance(b, str):
                content.append({"type": "text", "text": b})
                out += tokens(b)
            elif isinstance(b, tuple) and b[0] == "think":
                content.append({"type": "thinking", "thinking": b[1], "thinkingSignature": self._signature(b[1])})
                out += tokens(b[1])
            else:
                b["id"] = self._tool_id()
                content.append(b)
                out += tokens(b["arguments"]) + 12
        if self.provider == "openai":
            out += self.rng.randint(60, 420)  # hidden reasoning tokens
        if stop is None:
            stop = "toolUse" if any(c["type"] == "toolCall" for c in content) else "stop"
        usage = self._usage(out)
        self.ctx += out
        self.t += self.rng.randint(900, 2600) + out * self.rng.randint(9, 16)
        msg = {"role": "assistant", "content": content, "api": APIS[self.provider], "provider": self.provider,
               "model": self.model, "usage": usage, "stopReason": stop, "timestamp": start}
        return self.add("message", message=msg)

    def failed(self, stop, error, partial=(), after=0.4):
        """An assistant turn that ended in 'error' or 'aborted' (zero usage, like Atomic records it)."""
        self.wait(after)
        start = self.t
        content = [{"type": "text", "text": p} for p in partial]
        self.t += self.rng.randint(1500, 9000)
        zero = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
        msg = {"role": "assistant", "content": content, "api": APIS[self.provider], "provider": self.provider,
               "model": self.model, "usage": zero, "stopReason": stop, "timestamp": start, "errorMessage": error}
        return self.add("message", message=msg)

    def result(self, call, text, error=False, took=0.15, details=None):
        self.t += int(took * 1000) + self.rng.randint(5, 80)
        msg = {"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
               "content": [{"type": "text", "text": text}]}
        if details is not None:
            msg["details"] = details
        msg["isError"] = error
        msg["timestamp"] = self.t
        self.ctx += tokens(text)
        return self.add("message", message=msg)

    def edited(self, call, line=1, took=0.05):
        a = call["arguments"]
        old, new = a["oldText"].split("\n"), a["newText"].split("\n")
        diff = [f"-{line + i:>3} {t}" for i, t in enumerate(old)] + [f"+{line + i:>3} {t}" for i, t in enumerate(new)]
        text = (f"Successfully replaced text in {a['path']}. "
                f"Changed {len(a['oldText'])} characters to {len(a['newText'])} characters.")
        return self.result(call, text, took=took, details={"diff": "\n".join(diff)})

    def wrote(self, call, took=0.05):
        a = call["arguments"]
        return self.result(call, f"Successfully wrote {len(a['content'].encode())} bytes to {a['path']}", took=took)

    def bash_exec(self, command, output, exit_code=0, after=15, took=2.0):
        """A user `!command` (role bashExecution)."""
        self.wait(after)
        start = self.t
        self.t += int(took * 1000)
        self.ctx += tokens(command + output)
        msg = {"role": "bashExecution", "command": command, "output": output, "exitCode": exit_code,
               "cancelled": False, "truncated": False, "timestamp": start}
        return self.add("message", message=msg)

    def copy_path(self, other, upto):
        """Fork: copy other's root -> upto path verbatim (ids and timestamps kept)."""
        by_id = {e["id"]: e for e in other.entries}
        path = []
        cur = upto
        while cur is not None:
            path.append(by_id[cur])
            cur = by_id[cur]["parentId"]
        for e in reversed(path):
            if e["type"] == "label":
                continue
            e = copy.deepcopy(e)
            self.entries.append(e)
            self.ids.add(e["id"])
            self.leaf = e["id"]
            if e["type"] == "message":
                self.ctx += tokens(e["message"]["content"]) if e["message"]["role"] != "bashExecution" else 0
            elif e["type"] == "model_change":
                self.provider, self.model = e["provider"], e["modelId"]

    # ---- output ---------------------------------------------------------------------------------
    def filename(self):
        return self.header["timestamp"].replace(":", "-").replace(".", "-") + "_" + self.id + ".jsonl"

    def folder(self):
        return encode_cwd(self.cwd)

    def write(self, out_dir):
        d = os.path.join(out_dir, self.folder())
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, self.filename())
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for obj in [self.header] + self.entries:
                f.write(js_dumps(obj) + "\n")
        ns = self.last_ms * 1_000_000
        os.utime(path, ns=(ns, ns))
        return path


def call(name, **arguments):
    return {"type": "toolCall", "id": None, "name": name, "arguments": arguments}


def text(t):
    return {"type": "text", "text": t}


WEBAPP = "/home/demo/projects/webapp"
TIDY = "/home/demo/projects/tidy-csv"
LEDGER = "/home/demo/projects/pyledger"


# =================================================================================================
# webapp -- fix a flaky auth test (branch + branch_summary, labels, name)
# =================================================================================================
SESSION_TEST_TS = '''import { beforeEach, describe, expect, it } from "vitest";
import { SessionManager } from "./session";
import { mockTokenEndpoint } from "../test/mock-server";

describe("SessionManager", () => {
  beforeEach(() => {
    mockTokenEndpoint.reset();
  });

  it("returns the cached token while it is valid", async () => {
    const sm = new SessionManager({ clientId: "demo" });
    await sm.login("alice", "hunter2");
    const first = await sm.getToken();
    const second = await sm.getToken();
    expect(second).toBe(first);
    expect(mockTokenEndpoint.calls).toBe(1);
  });

  it("refreshes an expired token", async () => {
    mockTokenEndpoint.setExpiresIn(30);
    const sm = new SessionManager({ clientId: "demo" });
    await sm.login("alice", "hunter2");
    const first = await sm.getToken();
    await new Promise((r) => setTimeout(r, 5));
    const second = await sm.getToken();
    expect(second).not.toBe(first);
    expect(mockTokenEndpoint.calls).toBe(2);
  });
});
'''

SESSION_TS = '''import { requestToken, type Token } from "./token-client";

const REFRESH_MARGIN_MS = 30_000;

export interface SessionOptions {
  clientId: string;
  baseUrl?: string;
}

export class SessionManager {
  private token: Token | null = null;

  constructor(private readonly opts: SessionOptions) {}

  async login(username: string, password: string): Promise<void> {
    this.token = await requestToken(this.opts, { grant_type: "password", username, password });
  }

  async getToken(): Promise<string> {
    if (!this.token) throw new Error("not logged in");
    if (this.token.expiresAt - Date.now() < REFRESH_MARGIN_MS) {
      this.token = await requestToken(this.opts, {
        grant_type: "refresh_token",
        refresh_token: this.token.refresh,
      });
    }
    return this.token.access;
  }
}
'''

NEW_SESSION_TEST_TS = '''import { beforeEach, describe, expect, it } from "vitest";
import { SessionManager } from "./session";
import { mockTokenEndpoint } from "../test/mock-server";

describe("SessionManager", () => {
  let now: number;
  const clock = () => now;

  beforeEach(() => {
    mockTokenEndpoint.reset();
    now = 1_700_000_000_000;
    mockTokenEndpoint.useClock(clock);
  });

  it("returns the cached token while it is valid", async () => {
    mockTokenEndpoint.setExpiresIn(300);
    const sm = new SessionManager({ clientId: "demo", now: clock });
    await sm.login("alice", "hunter2");
    const first = await sm.getToken();
    now += 60_000;
    expect(await sm.getToken()).toBe(first);
    expect(mockTokenEndpoint.calls).toBe(1);
  });

  it("refreshes a token inside the refresh margin", async () => {
    mockTokenEndpoint.setExpiresIn(60);
    const sm = new SessionManager({ clientId: "demo", now: clock });
    await sm.login("alice", "hunter2");
    const first = await sm.getToken();
    now += 45_000; // 15 s left, margin is 30 s
    const second = await sm.getToken();
    expect(second).not.toBe(first);
    expect(mockTokenEndpoint.calls).toBe(2);
  });
});
'''

STRESS_SH = '''#!/usr/bin/env bash
# Run one vitest file N times and report how often it fails.
# usage: scripts/stress-test.sh <test file> [runs=50]
set -uo pipefail

file="${1:?usage: $0 <test file> [runs]}"
runs="${2:-50}"
failed=0

for ((i = 1; i <= runs; i++)); do
  if ! npx vitest run "$file" --reporter=dot >/dev/null 2>&1; then
    failed=$((failed + 1))
  fi
done

rate=$((failed * 100 / runs))
echo "runs: $runs  failed: $failed  failure rate: ${rate}%"
[[ $failed -eq 0 ]]
'''


def session_flaky_auth(rng):
    s = Session(rng, WEBAPP, "2026-11-21T09:14:07.412Z")
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.thinking("medium")
    s.user("The `SessionManager › refreshes an expired token` test in src/auth/session.test.ts fails "
           "about one run in five on CI, never locally for me. Can you figure out why and fix it?", after=6)
    c = call("read", path="src/auth/session.test.ts")
    s.asst(("think", "Flaky in CI, passes locally: usually timing. Start with the test itself, then the "
                     "refresh logic in session.ts."),
           "Let me look at the test and the token refresh logic.", c)
    s.result(c, SESSION_TEST_TS)
    c = call("read", path="src/auth/session.ts", offset=1, limit=60)
    s.asst(c)
    s.result(c, SESSION_TS)
    c = call("bash", command="for i in $(seq 20); do npx vitest run src/auth/session.test.ts --reporter=dot "
                             ">/dev/null 2>&1 || echo FAIL; done | grep -c FAIL")
    s.asst(("think", "expiresIn 30 s and REFRESH_MARGIN_MS is exactly 30 000 ms. expiresAt is computed from "
                     "Date.now() when the token response arrives. On the first getToken(), expiresAt - now is "
                     "30000 minus the elapsed milliseconds. If even 1 ms has passed since login, that is < 30000 "
                     "and the *first* getToken() refreshes too, so calls ends at 3 instead of 2. On a fast "
                     "laptop login→getToken often lands in the same millisecond; on a loaded CI runner it "
                     "doesn't. Let me confirm by repeating it."),
           "I think this is a millisecond boundary race. Let me reproduce it by running the file 20 times.", c)
    s.result(c, "4", took=41.3)
    fork_point = s.asst(
        "Reproduced: 4 failures in 20 runs.\n\n"
        "**Cause.** The test sets `expiresIn` to 30 s, which is exactly `REFRESH_MARGIN_MS`. "
        "`getToken()` refreshes when `expiresAt - Date.now() < 30_000`, so whether the *first* "
        "`getToken()` already refreshes depends on whether a millisecond ticked between `login()` and "
        "`getToken()`. When it does, the endpoint is called three times and "
        "`expect(mockTokenEndpoint.calls).toBe(2)` fails with `expected 3 to be 2`.\n\n"
        "Two ways to fix it:\n"
        "1. **Fake timers** in the test (`vi.useFakeTimers()` + `vi.setSystemTime`), smallest diff.\n"
        "2. **Inject a clock** into `SessionManager` (`now?: () => number`, default `Date.now`) and drive "
        "time explicitly in the test. Slightly more code, but no global timer patching.\n\n"
        "Which do you prefer?")

    # -- abandoned branch: fake timers -------------------------------------------------------------
    s.user("Let's keep it simple and just use vi.useFakeTimers() in the test.", after=48)
    c = call("edit", path="src/auth/session.test.ts",
             oldText='import { beforeEach, describe, expect, it } from "vitest";',
             newText='import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";')
    c2 = call("edit", path="src/auth/session.test.ts",
              oldText="  beforeEach(() => {\n    mockTokenEndpoint.reset();\n  });",
              newText="  beforeEach(() => {\n    mockTokenEndpoint.reset();\n    vi.useFakeTimers();\n"
                      "    vi.setSystemTime(new Date(\"2026-01-01T00:00:00Z\"));\n  });\n\n"
                      "  afterEach(() => {\n    vi.useRealTimers();\n  });")
    s.asst("I'll freeze time in `beforeEach` and restore it afterwards.", c, c2)
    s.edited(c, line=1)
    s.edited(c2, line=6)
    c = call("bash", command="npx vitest run src/auth/session.test.ts")
    s.asst(c)
    s.result(c, " RUN  v2.1.4 /home/demo/projects/webapp\n\n"
                " ❯ src/auth/session.test.ts (2 tests | 1 failed) 5012ms\n"
                "   ✓ SessionManager > returns the cached token while it is valid\n"
                "   × SessionManager > refreshes an expired token 5004ms\n"
                "     → Test timed out in 5000ms.\n\n"
                " Test Files  1 failed (1)\n      Tests  1 failed | 1 passed (2)\n\n\n"
                "Command exited with code 1", error=True, took=6.8)
    abandoned_leaf = s.asst(
        ("think", "The test awaits `new Promise((r) => setTimeout(r, 5))` — with fake timers that timer never "
                  "fires unless we advance it, and the mock server delays its response with setTimeout too. "
                  "I could sprinkle vi.advanceTimersByTimeAsync() everywhere, but that couples the test to the "
                  "mock server's internals."),
        "The fake timers made it worse: the test now hangs, because both the `setTimeout(r, 5)` in the test "
        "and the mock token endpoint's simulated latency use timers that never fire under "
        "`vi.useFakeTimers()`. We could advance timers manually at every await, but that ties the test to "
        "the mock's internals. I'd go with the injected clock instead.")
    s.label(abandoned_leaf, "wip", after=30)

    # -- user goes back in /tree, picks the earlier user message, asks for a branch summary ---------
    s.wait(95)
    s.add("branch_summary", parent=fork_point, fromId=fork_point,
          summary="Tried option 1 (fake timers): added vi.useFakeTimers()/vi.setSystemTime() in beforeEach and "
                  "vi.useRealTimers() in afterEach of src/auth/session.test.ts. The refresh test then timed out "
                  "after 5000 ms because the test's setTimeout and the mock endpoint's simulated latency never "
                  "fire under fake timers. Those two edits are still in the file.")
    s.user([text("OK, go with the injectable clock instead. Undo the fake-timer changes in the test first.")],
           after=25)
    on_disk = SESSION_TEST_TS.replace(
        'import { beforeEach, describe, expect, it } from "vitest";',
        'import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";').replace(
        "    mockTokenEndpoint.reset();\n  });",
        "    mockTokenEndpoint.reset();\n    vi.useFakeTimers();\n"
        "    vi.setSystemTime(new Date(\"2026-01-01T00:00:00Z\"));\n  });\n\n"
        "  afterEach(() => {\n    vi.useRealTimers();\n  });", 1).split("\n")
    c = call("read", path="src/auth/session.test.ts", offset=1, limit=15)
    s.asst("Let me check the current state of the test file.", c)
    s.result(c, "\n".join(on_disk[:15]) + f"\n\n[Showing lines 1-15 of {len(on_disk) - 1}. Use offset=16 to continue]")
    c1 = call("edit", path="src/auth/session.ts",
              oldText="export interface SessionOptions {\n  clientId: string;\n  baseUrl?: string;\n}",
              newText="export interface SessionOptions {\n  clientId: string;\n  baseUrl?: string;\n"
                      "  /** Clock used for expiry checks; tests inject a fake one. */\n  now?: () => number;\n}")
    c2 = call("edit", path="src/auth/session.ts",
              oldText="    if (this.token.expiresAt - Date.now() < REFRESH_MARGIN_MS) {",
              newText="    const now = this.opts.now ?? Date.now;\n"
                      "    if (this.token.expiresAt - now() <= REFRESH_MARGIN_MS) {")
    s.asst("The fake-timer edits are there. First the production side: an optional `now` clock on "
           "`SessionOptions`, used for the expiry check (and `<=` so the boundary is unambiguous).", c1, c2)
    s.edited(c1, line=5)
    s.edited(c2, line=22)
    c = call("write", path="src/auth/session.test.ts", content=NEW_SESSION_TEST_TS)
    s.asst("Now I'll rewrite the test to drive time through the injected clock (the mock endpoint already "
           "supports `useClock`), which also removes the fake-timer changes.", c)
    s.wrote(c)
    c = call("bash", command="for i in $(seq 50); do npx vitest run src/auth/session.test.ts --reporter=dot "
                             ">/dev/null 2>&1 || echo FAIL; done | grep -c FAIL")
    s.asst(c)
    s.result(c, "0\n\nCommand exited with code 1", error=True, took=98.6)
    c = call("bash", command="npm test -- --reporter=dot")
    s.asst("0 failures in 50 runs (the exit code is just `grep -c` finding no matches). "
           "Now the full suite:", c)
    s.result(c, "\n> webapp@0.14.2 test\n> vitest run --reporter=dot\n\n"
                "·····································································\n\n"
                " Test Files  23 passed (23)\n      Tests  137 passed (137)\n   Start at  09:57:41\n"
                "   Duration  6.42s (transform 1.13s, setup 0s, collect 4.87s, tests 2.05s)\n", took=7.9)
    done = s.asst(
        "Fixed. Summary:\n\n"
        "- `src/auth/session.ts`: `SessionOptions.now?: () => number` (defaults to `Date.now`), used for the "
        "expiry check; the comparison is now `<=` so a token exactly at the margin is refreshed.\n"
        "- `src/auth/session.test.ts`: both tests drive a fake clock instead of wall time; the refresh test "
        "now puts the token 15 s from expiry, well inside the 30 s margin, so there is no boundary left to race.\n\n"
        "The file passed 50/50 runs and the full suite (137 tests) is green.")
    s.label(done, "checkpoint", after=12)
    s.label(abandoned_leaf, None, after=4)  # clear the old "wip" label
    s.user("Great. Commit it on a branch fix/flaky-auth-test with a good message.", after=40)
    c = call("bash", command="git switch -c fix/flaky-auth-test && git add src/auth/session.ts "
                             "src/auth/session.test.ts && git commit -q -m \"fix(auth): make token refresh test "
                             "deterministic\" -m \"The test used an expiry equal to the refresh margin, so the "
                             "outcome depended on whether a millisecond passed between login() and getToken(). "
                             "SessionManager now takes an injectable clock.\" && git log --oneline -1")
    s.asst(c)
    s.result(c, "Switched to a new branch 'fix/flaky-auth-test'\n3f9c2a1 fix(auth): make token refresh test "
                "deterministic", took=0.4)
    committed = s.asst("Committed as `3f9c2a1` on `fix/flaky-auth-test` (2 files changed).")
    s.label(committed, "checkpoint", after=8)
    s.name("Fix flaky auth test", after=20)
    return s, fork_point


def session_review_stage(rng):
    """Internal workflow stage (hidden from normal /resume)."""
    s = Session(rng, WEBAPP, "2026-11-21T10:20:44.090Z",
                header_extra={"internal": True,
                              "workflow": {"runId": "run-7", "stageId": "stage-review", "stageName": "review"}})
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.thinking("high")
    s.user("You are the **review** stage of workflow run-7. Review the changes on branch "
           "`fix/flaky-auth-test` against `main`. Report blocking issues first, then nits, as a short list. "
           "Do not modify any files.", after=0.2)
    c = call("bash", command="git diff main...fix/flaky-auth-test")
    s.asst(("think", "Review only. Get the diff first, then check other SessionManager call sites for the new "
                     "option."), c)
    s.result(c, '''diff --git a/src/auth/session.test.ts b/src/auth/session.test.ts
index 5d1c2e8..a07b3f4 100644
--- a/src/auth/session.test.ts
+++ b/src/auth/session.test.ts
@@ -3,26 +3,34 @@ import { SessionManager } from "./session";
 describe("SessionManager", () => {
+  let now: number;
+  const clock = () => now;
+
   beforeEach(() => {
     mockTokenEndpoint.reset();
+    now = 1_700_000_000_000;
+    mockTokenEndpoint.useClock(clock);
   });
@@ -20,12 +28,13 @@
-  it("refreshes an expired token", async () => {
-    mockTokenEndpoint.setExpiresIn(30);
-    const sm = new SessionManager({ clientId: "demo" });
+  it("refreshes a token inside the refresh margin", async () => {
+    mockTokenEndpoint.setExpiresIn(60);
+    const sm = new SessionManager({ clientId: "demo", now: clock });
     await sm.login("alice", "hunter2");
     const first = await sm.getToken();
-    await new Promise((r) => setTimeout(r, 5));
+    now += 45_000; // 15 s left, margin is 30 s
diff --git a/src/auth/session.ts b/src/auth/session.ts
index 91be0c2..4e7a9d1 100644
--- a/src/auth/session.ts
+++ b/src/auth/session.ts
@@ -6,6 +6,8 @@ export interface SessionOptions {
   baseUrl?: string;
+  /** Clock used for expiry checks; tests inject a fake one. */
+  now?: () => number;
 }
@@ -20,7 +22,8 @@ export class SessionManager {
-    if (this.token.expiresAt - Date.now() < REFRESH_MARGIN_MS) {
+    const now = this.opts.now ?? Date.now;
+    if (this.token.expiresAt - now() <= REFRESH_MARGIN_MS) {
''', took=0.1)
    c = call("grep", pattern="expiresAt", path="src", glob="*.ts")
    s.asst(c)
    s.result(c, "src/auth/session.ts:23:    if (this.token.expiresAt - now() <= REFRESH_MARGIN_MS) {\n"
                "src/auth/token-client.ts:31:    expiresAt: Date.now() + body.expires_in * 1000,\n"
                "src/test/mock-server.ts:48:      expires_in: this.expiresIn,", took=0.1)
    s.asst("**Blocking:** none.\n\n"
           "**Should fix:**\n"
           "- `token-client.ts:31` still computes `expiresAt` with `Date.now()`, so the injected clock only covers "
           "half of the comparison. It works in the tests only because the mock endpoint shares the same clock. "
           "Pass `opts.now` through to `requestToken`.\n\n"
           "**Nits:**\n"
           "- `const clock = () => now;` reads a `let` declared above it; fine, but `let now = 0` with an "
           "explicit reset in `beforeEach` would be clearer.\n"
           "- The commit message body could mention the `<` → `<=` change.")
    return s


def session_css_overflow(rng):
    s = Session(rng, WEBAPP, "2026-11-20T15:02:31.508Z")
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.user([text("The sidebar overflows the viewport on narrow screens (screenshot is at 375px wide): the nav "
                 "labels push it past the right edge and the page scrolls sideways. Can you fix it?"),
            {"type": "image", "data": SCREENSHOT_PNG, "mimeType": "image/png"}], after=9)
    c = call("ls", path="src/components/Sidebar")
    s.asst("The labels are pushing the sidebar wider than the viewport. Let me look at its styles.", c)
    s.result(c, "Sidebar.module.css\nSidebar.test.tsx\nSidebar.tsx\nindex.ts", took=0.02)
    c = call("read", path="src/components/Sidebar/Sidebar.module.css")
    s.asst(c)
    s.result(c, '''.sidebar {
  display: flex;
  flex-direction: column;
  width: 280px;
  min-width: 280px;
  height: 100vh;
  background: var(--surface-inverse);
}

.nav {
  display: flex;
  flex-direction: column;
  gap: 4px;
  padding: 12px;
}

.navItem {
  display: flex;
  align-items: center;
  gap: 10px;
  padding: 8px 12px;
  border-radius: 6px;
}

.navLabel {
  white-space: nowrap;
}

@media (max-width: 768px) {
  .sidebar {
    width: 100vw;
  }
}
''')
    c = call("grep", pattern="min-width", path="src", glob="*.css")
    s.asst(c)
    s.result(c, "src/components/Sidebar/Sidebar.module.css:5:  min-width: 280px;\n"
                "src/components/Layout/Layout.module.css:12:@media (min-width: 1024px) {", took=0.06)
    c = call("edit", path="src/components/Sidebar/Sidebar.module.css",
             oldText="@media (max-width: 768px) {\n  .sidebar {\n    width: 100vw;\n  }\n}",
             newText="@media (max-width: 768px) {\n  .sidebar {\n    width: 100%;\n    min-width: 0;\n"
                     "    max-width: 100vw;\n  }\n\n  .navLabel {\n    min-width: 0;\n    overflow: hidden;\n"
                     "    text-overflow: ellipsis;\n  }\n}")
    s.asst("Two things combine here:\n\n"
           "1. `min-width: 280px` on `.sidebar` still applies inside the mobile media query, and `width: 100vw` "
           "ignores the vertical scrollbar, so it can never shrink to fit.\n"
           "2. `.navLabel` is `nowrap` without `overflow: hidden`, so a long label sets the minimum width of its "
           "flex item.\n\nI'll reset the minimum width on mobile and let labels truncate with an ellipsis.", c)
    s.edited(c, line=29)
    s.asst("Done. On screens up to 768px the sidebar now takes the full width without exceeding it, and long "
           "nav labels are cut off with `…` instead of widening the layout. Desktop styles are unchanged.")
    s.bash_exec('npx stylelint "src/**/*.css"',
                "\nsrc/components/Header/Header.module.css\n"
                "  14:3  ⚠  Unexpected duplicate property \"display\"  declaration-block-no-duplicate-properties\n\n"
                "⚠ 1 problem (0 errors, 1 warning)\n", after=70, took=3.1)
    s.user("The stylelint warning in Header is old, ignore it. At 320px the icons still touch the edge though.",
           after=55)
    c = call("edit", path="src/components/Sidebar/Sidebar.module.css",
             oldText="  .navLabel {\n    min-width: 0;",
             newText="  .nav {\n    padding: 8px;\n  }\n\n  .navItem {\n    padding: 8px;\n  }\n\n"
                     "  .navLabel {\n    min-width: 0;")
    s.asst("At 320px the 12px nav padding plus 12px item padding leaves too little room. I'll tighten both "
           "on small screens.", c)
    s.edited(c, line=36)
    s.asst("Tightened the nav and item padding to 8px below 768px; at 320px the icons now keep an 8px gap "
           "from the edge.")
    s.wait(1.5)
    s.add("custom_message", customType="git-checkpoint", content="Checkpoint created", display=True)
    return s


def session_stress_fork(rng, parent, fork_point, parent_path):
    s = Session(rng, WEBAPP, "2026-11-24T11:05:19.774Z", header_extra={"parentSession": parent_path})
    s.copy_path(parent, fork_point)
    s.model_change("openai", "gpt-5.1-codex")
    s.user("Before fixing anything: add scripts/stress-test.sh that runs one vitest file N times and prints the "
           "failure rate, so CI can use it on other suites we suspect are flaky.", after=14)
    c = call("find", pattern="*.sh", path="scripts")
    s.asst(("think", "Check existing scripts for conventions (shebang, set flags) before writing a new one."), c)
    s.result(c, "scripts/dev-db.sh\nscripts/release.sh", took=0.03)
    c = call("read", path="scripts/release.sh", offset=1, limit=12)
    s.asst(c)
    s.result(c, "#!/usr/bin/env bash\n# Tag and publish a release. usage: scripts/release.sh <version>\n"
                "set -euo pipefail\n\nversion=\"${1:?usage: $0 <version>}\"\n\n"
                "npm version \"$version\" --no-git-tag-version\ngit add package.json package-lock.json\n"
                "git commit -m \"release: v$version\"\ngit tag \"v$version\"\n\n"
                "[Showing lines 1-12 of 19. Use offset=13 to continue]")
    c = call("write", path="scripts/stress-test.sh", content=STRESS_SH)
    s.asst(c)
    s.wrote(c)
    c = call("bash", command="chmod +x scripts/stress-test.sh && scripts/stress-test.sh src/auth/session.test.ts 20")
    s.asst(c)
    s.result(c, "runs: 20  failed: 5  failure rate: 25%\n\nCommand exited with code 1", error=True, took=44.2)
    s.asst("Added `scripts/stress-test.sh <file> [runs=50]`. It follows the style of `release.sh`, prints "
           "`runs / failed / failure rate` and exits non-zero when any run failed, so a CI step can gate on it.\n\n"
           "On the auth suite it reports 5/20 (25%), consistent with the earlier measurement. Example CI step:\n\n"
           "```yaml\n- name: Stress flaky suites\n  run: scripts/stress-test.sh src/auth/session.test.ts 50\n```")
    return s


# =================================================================================================
# tidy-csv -- add a CLI flag (error + retry, name, stale session summary, resumed next day)
# =================================================================================================
CLI_RS = '''use clap::Parser;
use std::path::PathBuf;

/// Normalise CSV files: trim cells, fix quoting, drop empty rows.
#[derive(Debug, Parser)]
#[command(name = "tidy-csv", version, about)]
pub struct Args {
    /// Input file (`-` for stdin)
    pub input: PathBuf,

    /// Write here instead of stdout
    #[arg(short, long)]
    pub output: Option<PathBuf>,

    /// Keep rows where every cell is empty
    #[arg(long)]
    pub keep_empty: bool,
}
'''


def session_delimiter_flag(rng):
    s = Session(rng, TIDY, "2026-11-23T16:40:12.305Z")
    s.model_change("openai", "gpt-5.1-codex")
    s.thinking("medium")
    s.user("Add a `--delimiter` flag to tidy-csv (default `,`). It should take a single character, and accept "
           "`\\t` as an escape for tab.", after=11)
    c = call("read", path="src/cli.rs")
    s.asst(("think", "Look at the clap Args struct, then find where the delimiter is hard-coded."), c)
    s.result(c, CLI_RS)
    c = call("grep", pattern="b','", path="src")
    s.asst(c)
    s.result(c, "src/reader.rs:18:        .delimiter(b',')\n"
                "src/writer.rs:11:    let mut w = csv::WriterBuilder::new().delimiter(b',').from_writer(out);",
             took=0.05)
    c = call("edit", path="src/cli.rs",
             oldText="    /// Keep rows where every cell is empty\n    #[arg(long)]\n    pub keep_empty: bool,\n}",
             newText="    /// Keep rows where every cell is empty\n    #[arg(long)]\n    pub keep_empty: bool,\n\n"
                     "    /// Field delimiter: one ASCII character, or `\\t` for tab\n"
                     "    #[arg(short, long, default_value = \",\", value_parser = parse_delimiter)]\n"
                     "    pub delimiter: u8,\n}\n\n"
                     "fn parse_delimiter(s: &str) -> Result<u8, String> {\n    match s {\n"
                     "        \"\\\\t\" => Ok(b'\\t'),\n        _ => Ok(s.as_bytes()[0]),\n    }\n}")
    s.asst(c)
    s.edited(c, line=16)
    c = call("edit", path="src/reader.rs", oldText="        .delimiter(b',')", newText="        .delimiter(args.delimiter)")
    s.asst(c)
    s.edited(c, line=18)
    s.failed("error", "An error occurred while processing your request. You can retry your request, or contact us "
                      "through our help center at help.openai.com if the error persists. Please include the "
                      "request ID req_8c1f0e5b2a7d4c39b6e0f2a9d3c7b51e in your message.")
    s.user("continue", after=35)
    c = call("edit", path="src/writer.rs",
             oldText="    let mut w = csv::WriterBuilder::new().delimiter(b',').from_writer(out);",
             newText="    let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(out);")
    s.asst(c)
    s.edited(c, line=11)
    c = call("bash", command="cargo test 2>&1 | tail -15")
    s.asst(c)
    s.result(c, '''   Compiling tidy-csv v0.3.1 (/home/demo/projects/tidy-csv)
error[E0425]: cannot find value `delimiter` in this scope
  --> src/writer.rs:11:57
   |
11 |     let mut w = csv::WriterBuilder::new().delimiter(delimiter).from_writer(out);
   |                                                     ^^^^^^^^^ not found in this scope

For more information about this error, try `rustc --explain E0425`.
error: could not compile `tidy-csv` (lib) due to 1 previous error

Command exited with code 101''', error=True, took=9.7)
    c1 = call("edit", path="src/writer.rs",
              oldText="pub fn write_rows<W: Write>(out: W, rows: &[Row]) -> Result<()> {",
              newText="pub fn write_rows<W: Write>(out: W, rows: &[Row], delimiter: u8) -> Result<()> {")
    c2 = call("edit", path="src/main.rs",
              oldText="    writer::write_rows(out, &rows)?;",
              newText="    writer::write_rows(out, &rows, args.delimiter)?;")
    s.asst("`write_rows` needs the delimiter as a parameter; updating it and its caller.", c1, c2)
    s.edited(c1, line=9)
    s.edited(c2, line=42)
    c = call("bash", command="cargo test 2>&1 | tail -4")
    s.asst(c)
    s.result(c, "test result: ok. 14 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.03s\n\n"
                "   Doc-tests tidy_csv\n\n"
                "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
             took=14.2)
    day1 = s.asst("Added `-d/--delimiter` (default `,`; `\\t` means tab). The reader and writer both use it, and "
                  "all 14 tests pass. Example: `tidy-csv -d ';' data.csv` or `tidy-csv -d '\\t' data.tsv`.")
    s.wait(60)
    s.add("session_summary",
          summary="Added a -d/--delimiter flag (single char, `\\t` for tab) to tidy-csv; reader and writer "
                  "take it as a parameter; cargo test passes (14 tests).",
          summarizedThroughId=day1)

    # -- resumed the next morning: the summary above is now stale -----------------------------------
    s.t = ms_of("2026-11-24T09:10:03.000Z")
    s.name("Add --delimiter flag", after=2)
    s.user("One more thing: `-d ''` or `-d 'ab'` should give a clear error instead of panicking or silently "
           "using the first byte. Add tests for it.", after=25)
    c = call("edit", path="src/cli.rs",
             oldText="        \"\\\\t\" => Ok(b'\\t'),\n        _ => Ok(s.as_bytes()[0]),",
             newText="        \"\\\\t\" => Ok(b'\\t'),\n        _ if s.len() == 1 && s.is_ascii() => Ok(s.as_bytes()[0]),\n"
                     "        _ => Err(format!(\"expected one ASCII character or \\\\t, got {s:?}\")),")
    s.asst(("think", "Empty string indexes out of bounds; multi-char silently truncates. Validate length and "
                     "ASCII, return a clap-friendly error string."), c)
    s.edited(c, line=24)
    c = call("write", path="tests/delimiter.rs", content='''use assert_cmd::Command;
use predicates::str::contains;

#[test]
fn rejects_empty_delimiter() {
    Command::cargo_bin("tidy-csv").unwrap()
        .args(["-d", "", "tests/data/simple.csv"])
        .assert()
        .failure()
        .stderr(contains("expected one ASCII character"));
}

#[test]
fn rejects_multi_char_delimiter() {
    Command::cargo_bin("tidy-csv").unwrap()
        .args(["-d", "ab", "tests/data/simple.csv"])
        .assert()
        .failure()
        .stderr(contains("got \\"ab\\""));
}

#[test]
fn tab_escape_reads_tsv() {
    Command::cargo_bin("tidy-csv").unwrap()
        .args(["-d", "\\\\t", "tests/data/simple.tsv"])
        .assert()
        .success();
}
''')
    s.asst(c)
    s.wrote(c)
    c = call("bash", command="cargo test 2>&1 | grep 'test result'")
    s.asst(c)
    s.result(c, "test result: ok. 14 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.03s\n"
                "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.41s\n"
                "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s",
             took=11.0)
    s.asst("`parse_delimiter` now rejects anything that is not exactly one ASCII character (or `\\t`), and clap "
           "prints e.g. `error: invalid value 'ab' for '--delimiter <DELIMITER>': expected one ASCII character "
           "or \\t, got \"ab\"`. Three integration tests in `tests/delimiter.rs` cover empty, multi-char and tab; "
           "17 tests pass in total.")
    return s


def session_release_build(rng):
    s = Session(rng, TIDY, "2026-11-27T08:45:57.031Z")
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.thinking("low")
    s.user("Why did `cargo build --release` get so much slower? It went from ~20s to over a minute since "
           "yesterday.", after=7)
    c = call("bash", command="git log --oneline -5 -- Cargo.toml")
    s.asst("A jump like that usually comes from a profile change. Let me check recent edits to Cargo.toml.", c)
    s.result(c, "9b2e7d1 build: enable LTO for smaller release binaries\n"
                "41c0a8e deps: bump csv to 1.3.1\n"
                "d07f3b2 cli: add --delimiter flag\n"
                "a18e6c4 deps: add assert_cmd and predicates for integration tests\n"
                "5f2d9e0 release: v0.3.0", took=0.03)
    c = call("read", path="Cargo.toml", offset=20, limit=10)
    s.asst(c)
    s.result(c, '[profile.release]\nlto = "fat"\ncodegen-units = 1\nstrip = true\npanic = "abort"\n')
    s.asst("Commit `9b2e7d1` enabled `lto = \"fat\"` together with `codegen-units = 1`. Both trade build time for "
           "binary size/speed: fat LTO optimises across every crate in one go, and a single codegen unit removes "
           "the parallelism inside rustc. That combination commonly makes release builds 3-4x slower.\n\n"
           "`lto = \"thin\"` with default codegen units gets most of the size win at a fraction of the cost.")
    s.user("Switch to thin LTO and keep codegen-units at the default.", after=30)
    c = call("edit", path="Cargo.toml", oldText='lto = "fat"\ncodegen-units = 1\n', newText='lto = "thin"\n')
    s.asst(c)
    s.edited(c, line=21)
    c = call("bash", command="cargo clean -q && cargo build --release 2>&1 | tail -1 && ls -l target/release/tidy-csv")
    s.asst(c)
    s.result(c, "    Finished `release` profile [optimized] target(s) in 23.94s\n"
                "-rwxr-xr-x 1 demo demo 1873408 Nov 27 08:49 target/release/tidy-csv", took=25.1)
    s.asst("Release build is back to ~24s, and the binary is 1.8 MB (it was 1.6 MB with fat LTO).")
    return s


# =================================================================================================
# pyledger -- a long refactor with a verbatim compaction, docs with a fresh summary, an aborted turn
# =================================================================================================
LEDGER_HEAD = '''"""Plain-text double-entry ledger: parsing, balances and reports."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Iterable, Iterator

DATE_RE = re.compile(r"^(\\d{4}-\\d{2}-\\d{2})\\s+(\\*|!)?\\s*(.*)$")
POSTING_RE = re.compile(r"^\\s+([^\\s].*?)(?:\\s{2,}(-?[\\d,.]+)\\s*([A-Z]{3})?)?\\s*$")


class LedgerError(Exception):
    """Raised for malformed journal input."""

    def __init__(self, message: str, path: Path | None = None, line: int | None = None):
        where = f"{path}:{line}: " if path and line else ""
        super().__init__(where + message)
        self.path, self.line = path, line


@dataclass(frozen=True)
class Account:
    name: str

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.name.split(":"))

    def is_under(self, prefix: str) -> bool:
        return self.name == prefix or self.name.startswith(prefix + ":")


@dataclass
class Posting:
    account: Account
    amount: Decimal | None
    commodity: str = "EUR"


@dataclass
class Transaction:
    date: dt.date
    payee: str
    postings: list[Posting] = field(default_factory=list)
    cleared: bool = False

    def balance(self) -> None:
        """Fill in the one posting without an amount so the transaction sums to zero."""
        missing = [p for p in self.postings if p.amount is None]
        if len(missing) > 1:
            raise LedgerError(f"{self.date} {self.payee}: more than one posting without amount")
        total = sum((p.amount for p in self.postings if p.amount is not None), Decimal(0))
        if missing:
            missing[0].amount = -total
        elif total != 0:
            raise LedgerError(f"{self.date} {self.payee}: transaction does not balance ({total})")
'''

LEDGER_MID = '''def parse_journal(path: Path | str) -> "Ledger":
    path = Path(path)
    ledger = Ledger()
    current: Transaction | None = None
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.split(";", 1)[0].rstrip()
        if not line:
            continue
        if m := DATE_RE.match(line):
            if current:
                ledger.add(current)
            date = dt.date.fromisoformat(m.group(1))
            current = Transaction(date, m.group(3), cleared=m.group(2) == "*")
        elif current and (m := POSTING_RE.match(line)):
            amount = Decimal(m.group(2).replace(",", "")) if m.group(2) else None
            current.postings.append(Posting(Account(m.group(1)), amount, m.group(3) or "EUR"))
        elif line.startswith("include "):
            for txn in parse_journal(path.parent / line[8:].strip()).transactions:
                ledger.add(txn)
        else:
            raise LedgerError("unrecognised line", path, lineno)
    if current:
        ledger.add(current)
    return ledger


class Ledger:
    def __init__(self, transactions: Iterable[Transaction] = ()):
        self.transactions: list[Transaction] = []
        for txn in transactions:
            self.add(txn)

    def add(self, txn: Transaction) -> None:
        txn.balance()
        self.transactions.append(txn)

    def accounts(self) -> list[Account]:
        return sorted({p.account for t in self.transactions for p in t.postings}, key=lambda a: a.name)

    def postings(self, prefix: str | None = None) -> Iterator[tuple[Transaction, Posting]]:
        for txn in sorted(self.transactions, key=lambda t: t.date):
            for p in txn.postings:
                if prefix is None or p.account.is_under(prefix):
                    yield txn, p

    def balance_report(self, depth: int | None = None) -> dict[str, Decimal]:
        totals: dict[str, Decimal] = defaultdict(Decimal)
        for _, p in self.postings():
            parts = p.account.parts[:depth] if depth else p.account.parts
            for i in range(1, len(parts) + 1):
                totals[":".join(parts[:i])] += p.amount or 0
        return dict(sorted(totals.items()))

    def register_report(self, prefix: str) -> list[tuple[dt.date, str, Decimal, Decimal]]:
        rows, running = [], Decimal(0)
        for txn, p in self.postings(prefix):
            running += p.amount or 0
            rows.append((txn.date, txn.payee, p.amount or Decimal(0), running))
        return rows
'''

MODELS_PY = '''"""Core ledger data types."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

__all__ = ["Account", "LedgerError", "Posting", "Transaction"]


class LedgerError(Exception):
    """Raised for malformed journal input."""

    def __init__(self, message: str, path: Path | None = None, line: int | None = None):
        where = f"{path}:{line}: " if path and line else ""
        super().__init__(where + message)
        self.path, self.line = path, line


@dataclass(frozen=True)
class Account:
    name: str

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.name.split(":"))

    def is_under(self, prefix: str) -> bool:
        return self.name == prefix or self.name.startswith(prefix + ":")


@dataclass
class Posting:
    account: Account
    amount: Decimal | None
    commodity: str = "EUR"


@dataclass
class Transaction:
    date: dt.date
    payee: str
    postings: list[Posting] = field(default_factory=list)
    cleared: bool = False

    def balance(self) -> None:
        """Fill in the one posting without an amount so the transaction sums to zero."""
        missing = [p for p in self.postings if p.amount is None]
        if len(missing) > 1:
            raise LedgerError(f"{self.date} {self.payee}: more than one posting without amount")
        total = sum((p.amount for p in self.postings if p.amount is not None), Decimal(0))
        if missing:
            missing[0].amount = -total
        elif total != 0:
            raise LedgerError(f"{self.date} {self.payee}: transaction does not balance ({total})")
'''

PARSER_PY = '''"""Journal file parser."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from decimal import Decimal
from pathlib import Path

from .models import Account, LedgerError, Posting, Transaction
from .reports import Ledger

__all__ = ["parse_journal"]

DATE_RE = re.compile(r"^(\\d{4}-\\d{2}-\\d{2})\\s+(\\*|!)?\\s*(.*)$")
POSTING_RE = re.compile(r"^\\s+([^\\s].*?)(?:\\s{2,}(-?[\\d,.]+)\\s*([A-Z]{3})?)?\\s*$")


def parse_journal(path: Path | str) -> Ledger:
    """Parse a journal file (following `include` lines) into a Ledger."""
''' + "\n".join(LEDGER_MID.split("\n")[1:24]) + "\n"

REPORTS_PY = '''"""The Ledger container and its reports."""

from __future__ import annotations

import datetime as dt
import decimal
from collections import defaultdict
from decimal import Decimal
from typing import Iterable, Iterator

from .models import Account, Posting, Transaction
from .parser import parse_journal  # noqa: F401  (re-exported for convenience)

__all__ = ["Ledger"]


''' + LEDGER_MID.split("\n\n\n", 1)[1]

SHIM_PY = '''"""Deprecated: import from ``pyledger`` (or its submodules) instead."""

import warnings

from .models import Account, LedgerError, Posting, Transaction
from .parser import parse_journal
from .reports import Ledger

warnings.warn(
    "pyledger.ledger is deprecated; import from pyledger, pyledger.models, "
    "pyledger.parser or pyledger.reports",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Account", "Ledger", "LedgerError", "Posting", "Transaction", "parse_journal"]
'''


def session_package_split(rng):
    s = Session(rng, LEDGER, "2026-11-25T13:30:26.867Z", base_ctx=43200)
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.thinking("medium")
    s.wait(0.3)
    s.add("context_window_change", contextWindow=200000)
    s.user("pyledger/ledger.py has grown to ~600 lines. Split it into modules: models (Account, Posting, "
           "Transaction), parser (the journal parser) and reports (Ledger with balance/register). "
           "`from pyledger import Ledger, parse_journal` must keep working.", after=12)
    c = call("ls", path="pyledger")
    s.asst("Let me look at the package first.", c)
    s.result(c, "__init__.py\n__pycache__/\ncli.py\nledger.py\npy.typed\nutils.py", took=0.02)
    c = call("read", path="pyledger/ledger.py", offset=1, limit=62)
    s.asst(c)
    s.result(c, LEDGER_HEAD + "\n[Showing lines 1-62 of 587. Use offset=63 to continue]")
    c = call("read", path="pyledger/ledger.py", offset=63, limit=66)
    s.asst(c)
    s.result(c, "\n" + LEDGER_MID + "\n[Showing lines 63-128 of 587. Use offset=129 to continue]")
    c = call("grep", pattern="from (pyledger|\\.)\\.?ledger import|import pyledger\\.ledger", path=".")
    s.asst(c)
    s.result(c, "pyledger/__init__.py:3:from .ledger import Account, Ledger, LedgerError, Transaction, parse_journal\n"
                "pyledger/cli.py:9:from .ledger import Ledger, LedgerError, parse_journal\n"
                "tests/test_parser.py:4:from pyledger.ledger import LedgerError, parse_journal\n"
                "tests/test_reports.py:5:from pyledger.ledger import Ledger, Transaction, Posting, Account\n"
                "tests/test_legacy_import.py:6:    import pyledger.ledger  # noqa: F401\n"
                "docs/api.md:12:    from pyledger.ledger import parse_journal", took=0.08)
    s.asst(("think", "Lines 129-587 are the CSV/JSON exporters and the budget code, which import Ledger; "
                     "leave them for now. Plan the split so that models has no internal imports; parser needs "
                     "models and Ledger; reports needs models. There's even a legacy-import test, so a shim is "
                     "expected."),
           "Plan:\n\n"
           "- `pyledger/models.py`: `LedgerError`, `Account`, `Posting`, `Transaction` (no internal imports)\n"
           "- `pyledger/parser.py`: `DATE_RE`, `POSTING_RE`, `parse_journal`\n"
           "- `pyledger/reports.py`: `Ledger` with `balance_report` / `register_report`\n"
           "- `pyledger/__init__.py` re-exports the public names from the new modules.\n\n"
           "`tests/test_legacy_import.py` imports `pyledger.ledger` directly, so something must stay at that "
           "path. Should `ledger.py` become a re-export shim, or do you want it gone?")
    s.thinking("high")
    s.user("Keep ledger.py as a thin re-export shim for one release, with a DeprecationWarning. Go ahead.", after=64)
    c = call("write", path="pyledger/models.py", content=MODELS_PY)
    s.asst(("think", "Write models first since everything depends on it; then parser, reports, shim. Run the "
                     "tests after all four exist."), c)
    s.wrote(c)
    c = call("write", path="pyledger/parser.py", content=PARSER_PY)
    s.asst(c)
    s.wrote(c)
    c = call("write", path="pyledger/reports.py", content=REPORTS_PY)
    s.asst(c)
    s.wrote(c)
    c = call("write", path="pyledger/ledger.py", content=SHIM_PY)
    s.asst(c)
    s.wrote(c)
    c = call("edit", path="pyledger/__init__.py",
             oldText="from .ledger import Account, Ledger, LedgerError, Transaction, parse_journal",
             newText="from .models import Account, LedgerError, Posting, Transaction\n"
                     "from .parser import parse_journal\nfrom .reports import Ledger")
    s.asst(c)
    s.edited(c, line=3)
    c = call("bash", command="python -m pytest -q 2>&1 | tail -12")
    s.asst(c)
    s.result(c, '''ImportError while loading conftest '/home/demo/projects/pyledger/tests/conftest.py'.
tests/conftest.py:3: in <module>
    from pyledger import Ledger
pyledger/__init__.py:3: in <module>
    from .models import Account, LedgerError, Posting, Transaction
pyledger/__init__.py:4: in <module>
    from .parser import parse_journal
pyledger/parser.py:11: in <module>
    from .reports import Ledger
pyledger/reports.py:11: in <module>
    from .parser import parse_journal  # noqa: F401  (re-exported for convenience)
E   ImportError: cannot import name 'parse_journal' from partially initialized module 'pyledger.parser' (most likely due to a circular import) (/home/demo/projects/pyledger/pyledger/parser.py)

Command exited with code 4''', error=True, took=1.9)
    c = call("edit", path="pyledger/reports.py",
             oldText="from .models import Account, Posting, Transaction\n"
                     "from .parser import parse_journal  # noqa: F401  (re-exported for convenience)\n",
             newText="from .models import Account, Posting, Transaction\n")
    s.asst(("think", "parser imports reports (for Ledger) and reports imports parser (the convenience re-export). "
                     "The re-export is pointless now that __init__ exports parse_journal. Drop it from reports."),
           "Circular import: `parser` needs `Ledger` from `reports`, and I had `reports` re-export "
           "`parse_journal` from `parser`. That re-export is redundant with `__init__`, so I'll remove it.", c)
    s.edited(c, line=9)
    c = call("bash", command="python -m pytest -q 2>&1 | tail -4")
    s.asst(c)
    s.result(c, "..........................................                               [100%]\n"
                "=============================== warnings summary ===============================\n"
                "tests/test_legacy_import.py::test_old_path_still_works\n"
                "42 passed, 1 warning in 0.61s", took=2.3)
    s.asst("All 42 tests pass. The one warning is the expected `DeprecationWarning` from "
           "`tests/test_legacy_import.py`, which imports the old module on purpose.")
    first_kept = s.user("Update cli.py and the tests to import from the new modules, so that only the legacy "
                        "test goes through the shim.", after=41)
    c = call("edit", path="pyledger/cli.py",
             oldText="from .ledger import Ledger, LedgerError, parse_journal",
             newText="from .models import LedgerError\nfrom .parser import parse_journal\nfrom .reports import Ledger")
    c2 = call("edit", path="tests/test_parser.py",
              oldText="from pyledger.ledger import LedgerError, parse_journal",
              newText="from pyledger.models import LedgerError\nfrom pyledger.parser import parse_journal")
    c3 = call("edit", path="tests/test_reports.py",
              oldText="from pyledger.ledger import Ledger, Transaction, Posting, Account",
              newText="from pyledger.models import Account, Posting, Transaction\nfrom pyledger.reports import Ledger")
    s.asst(c, c2, c3)
    s.edited(c, line=9)
    s.edited(c2, line=4)
    s.edited(c3, line=5)
    c = call("bash", command="python -m pytest -q -W error::DeprecationWarning "
                             "--deselect tests/test_legacy_import.py 2>&1 | tail -1")
    s.asst(c)
    s.result(c, "41 passed, 1 deselected in 0.58s", took=2.2)
    s.asst("Done: `cli.py`, `tests/test_parser.py` and `tests/test_reports.py` import from the new modules. "
           "With `-W error::DeprecationWarning` and the legacy test deselected, all 41 tests pass, so nothing "
           "else still touches the shim. (`docs/api.md` still shows the old import; I'll leave docs for a "
           "separate change unless you want it now.)")

    # -- manual /compact ---------------------------------------------------------------------------
    s.wait(50)
    s.add("compaction",
          summary="[User]: pyledger/ledger.py has grown to ~600 lines. Split it into modules: models (Account, "
                  "Posting, Transaction), parser (the journal parser) and reports (Ledger with balance/register). "
                  "`from pyledger import Ledger, parse_journal` must keep working.\n"
                  "[Tool ls]: __init__.py cli.py ledger.py py.typed utils.py\n"
                  "(filtered 12 lines)\n"
                  "[Tool grep]: pyledger/__init__.py:3, pyledger/cli.py:9, tests/test_parser.py:4, "
                  "tests/test_reports.py:5, tests/test_legacy_import.py:6, docs/api.md:12 import pyledger.ledger\n"
                  "[Assistant]: Plan: models.py (LedgerError, Account, Posting, Transaction), parser.py "
                  "(DATE_RE, POSTING_RE, parse_journal), reports.py (Ledger), __init__.py re-exports.\n"
                  "[User]: Keep ledger.py as a thin re-export shim for one release, with a DeprecationWarning. "
                  "Go ahead.\n"
                  "[Tool write]: pyledger/models.py, pyledger/parser.py, pyledger/reports.py, pyledger/ledger.py "
                  "(shim)\n"
                  "(filtered 9 lines)\n"
                  "[Tool bash]: E   ImportError: cannot import name 'parse_journal' from partially initialized "
                  "module 'pyledger.parser' (most likely due to a circular import)\n"
                  "[Assistant]: Circular import: parser needs Ledger from reports, and reports re-exported "
                  "parse_journal from parser. Removed the re-export.\n"
                  "[Tool bash]: 42 passed, 1 warning in 0.61s\n"
                  "[Assistant]: All 42 tests pass. The one warning is the expected DeprecationWarning from "
                  "tests/test_legacy_import.py.",
          firstKeptEntryId=first_kept,
          tokensBefore=48000,
          details={"strategy": "verbatim-lines", "promptVersion": 3, "rung": "planned",
                   "parameters": {"compression_ratio": 0.5, "preserve_recent": 2,
                                  "query": "split ledger.py into models, parser and reports modules"},
                   "stats": {"linesBefore": 400, "linesDeleted": 200, "linesKept": 200, "rangeCount": 10,
                             "tokensBefore": 48000, "tokensAfter": 24000, "percentReduction": 50}})
    s.ctx, s.cached = 24000, 0

    s.model_change("anthropic", "claude-opus-4-5")
    s.user("Now review the new layout before I open the PR: naming, circular-import risks, docstrings, anything "
           "awkward.", after=20)
    c = call("read", path="pyledger/__init__.py")
    s.asst(("think", "Check what __init__ exports now, then think about the parser→reports dependency: parser "
                     "constructs a Ledger, which is the only reason it imports reports. That's the remaining "
                     "cycle risk."), c)
    s.result(c, '"""pyledger: plain-text double-entry accounting."""\n\n'
                "from .models import Account, LedgerError, Posting, Transaction\n"
                "from .parser import parse_journal\nfrom .reports import Ledger\n\n"
                "__version__ = \"0.9.0\"\n")
    s.asst("Review:\n\n"
           "1. **`__all__` is missing in `__init__.py`.** The star-export surface is now implicit; add "
           "`__all__` listing the six public names plus `__version__`.\n"
           "2. **`parser` depends on `reports`** only to construct a `Ledger`. Any future import of `parser` from "
           "`reports` reintroduces the cycle you just hit. Import `Ledger` inside `parse_journal` or, better, "
           "have `parse_journal` return `list[Transaction]` and let `Ledger.from_journal()` wrap it.\n"
           "3. **Naming:** `reports.py` mostly holds the `Ledger` container; `ledger.py` would be the natural name, "
           "but it's taken by the shim until the next release. Fine to keep for now, worth a TODO.\n\n"
           "Docstrings are fine; `models.py` and `parser.py` have module docstrings and `__all__`.")
    s.user("Fix 1 and 2 (the function-level import is fine), skip 3.", after=52)
    c1 = call("edit", path="pyledger/__init__.py",
              oldText="__version__ = \"0.9.0\"",
              newText="__version__ = \"0.9.0\"\n\n__all__ = [\n    \"Account\",\n    \"Ledger\",\n"
                      "    \"LedgerError\",\n    \"Posting\",\n    \"Transaction\",\n    \"__version__\",\n"
                      "    \"parse_journal\",\n]")
    c2 = call("edit", path="pyledger/parser.py",
              oldText="from .models import Account, LedgerError, Posting, Transaction\nfrom .reports import Ledger\n",
              newText="from typing import TYPE_CHECKING\n\n"
                      "from .models import Account, LedgerError, Posting, Transaction\n\n"
                      "if TYPE_CHECKING:\n    from .reports import Ledger\n")
    c3 = call("edit", path="pyledger/parser.py",
              oldText='    """Parse a journal file (following `include` lines) into a Ledger."""\n',
              newText='    """Parse a journal file (following `include` lines) into a Ledger."""\n'
                      "    from .reports import Ledger  # local import: reports may import parser\n\n")
    s.asst(c1, c2, c3)
    s.edited(c1, line=7)
    s.edited(c2, line=10)
    s.edited(c3, line=21)
    c = call("bash", command="python -m pytest -q 2>&1 | tail -1 && python -c \"import pyledger.reports, "
                             "pyledger.parser; print('imports ok')\"")
    s.asst(c)
    s.result(c, "42 passed, 1 warning in 0.63s\nimports ok", took=2.6)
    s.asst("Both done: `__init__.py` has an explicit `__all__`, and `parser.py` imports `Ledger` inside "
           "`parse_journal` (with a `TYPE_CHECKING` import for the annotation), so `reports` and `parser` can "
           "import each other in either order. Tests: 42 passed, plus the expected legacy-import warning.")
    return s


CONTRIBUTING_MD = '''# Contributing to pyledger

Thanks for helping! This page covers the development setup, running checks, and how releases are cut.

## Development setup

pyledger uses [uv](https://docs.astral.sh/uv/) and supports Python 3.10+.

```sh
git clone https://github.com/demo/pyledger && cd pyledger
uv sync --all-extras        # creates .venv with dev dependencies
uv run pre-commit install   # optional: run the linters on every commit
```

## Running checks

| Command | What it does |
| --- | --- |
| `make test` | `pytest` with coverage (fails under 90%) |
| `make lint` | `ruff check` and `ruff format --check` |
| `make typecheck` | `mypy --strict pyledger` |
| `make all` | all of the above, as CI runs them |

Journal fixtures live in `tests/data/`; add a small `.journal` file there rather than building
ledgers in code when you test the parser.

## Pull requests

- One topic per PR; include a test for every bug fix.
- Add a line to `CHANGELOG.md` under **Unreleased**.
- CI (`.github/workflows/ci.yml`) must be green on Linux, macOS and Windows.

## Releases

Releases are cut by maintainers from `main`:

1. Move the **Unreleased** entries in `CHANGELOG.md` under the new version.
2. Bump `version` in `pyproject.toml` and commit: `release: vX.Y.Z`.
3. Tag and push: `git tag vX.Y.Z && git push --tags`.

Pushing the tag runs `.github/workflows/release.yml`, which builds the sdist and wheel with
`uv build` and publishes them to PyPI through trusted publishing.
'''


def session_contributing(rng):
    s = Session(rng, LEDGER, "2026-11-26T10:12:40.236Z")
    s.model_change("openai", "gpt-5.1-codex")
    s.thinking("low")
    s.user("Write a CONTRIBUTING.md: dev setup with uv, running tests and linters, and how releases are cut. "
           "Look at pyproject.toml, the Makefile and the CI workflows first so it matches reality.", after=15)
    c = call("read", path="pyproject.toml", offset=1, limit=30)
    s.asst(("think", "Gather facts: python version, tools, make targets, workflows."), c)
    s.result(c, '[project]\nname = "pyledger"\nversion = "0.9.0"\ndescription = "Plain-text double-entry '
                'accounting"\nrequires-python = ">=3.10"\ndependencies = []\n\n[project.optional-dependencies]\n'
                'dev = ["pytest>=8", "pytest-cov", "ruff>=0.7", "mypy>=1.13", "pre-commit"]\n\n'
                '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
                '[tool.pytest.ini_options]\naddopts = "--cov=pyledger --cov-fail-under=90"\n\n'
                '[tool.ruff]\nline-length = 110\n')
    c = call("read", path="Makefile")
    s.asst(c)
    s.result(c, ".PHONY: test lint typecheck all\n\ntest:\n\tuv run pytest\n\nlint:\n\tuv run ruff check .\n"
                "\tuv run ruff format --check .\n\ntypecheck:\n\tuv run mypy --strict pyledger\n\n"
                "all: lint typecheck test\n")
    c = call("ls", path=".github/workflows")
    s.asst(c)
    s.result(c, "ci.yml\nrelease.yml", took=0.02)
    c = call("bash", command="grep -nE 'os:|uv (build|publish)|pypa/gh-action|id-token' .github/workflows/*.yml")
    s.asst(c)
    s.result(c, ".github/workflows/ci.yml:14:        os: [ubuntu-latest, macos-latest, windows-latest]\n"
                ".github/workflows/release.yml:9:      id-token: write\n"
                ".github/workflows/release.yml:21:      - run: uv build\n"
                ".github/workflows/release.yml:23:        uses: pypa/gh-action-pypi-publish@release/v1",
             took=0.03)
    c = call("write", path="CONTRIBUTING.md", content=CONTRIBUTING_MD)
    s.asst(c)
    s.wrote(c)
    s.asst("Wrote `CONTRIBUTING.md` with setup (uv, Python 3.10+), the `make` targets from the Makefile, PR "
           "expectations, and the tag-driven release flow that `release.yml` implements (uv build + PyPI trusted "
           "publishing). I didn't find a CHANGELOG convention in the repo beyond the existing `CHANGELOG.md`, so "
           "I described the Unreleased-section style it already uses.")
    s.wait(0.4)
    s.add("custom", customType="todo-ext", data={"open": 2})
    s.user("Link it from the README under a 'Contributing' heading, right before 'License'.", after=38)
    c = call("edit", path="README.md", oldText="## License\n",
             newText="## Contributing\n\nSee [CONTRIBUTING.md](CONTRIBUTING.md) for the development setup, checks "
                     "and release process.\n\n## License\n")
    s.asst(c)
    s.edited(c, line=88)
    last = s.asst("Added a **Contributing** section to `README.md` just above **License**, linking to "
                  "`CONTRIBUTING.md`.")
    s.wait(4)
    s.add("session_summary",
          summary="Wrote CONTRIBUTING.md for pyledger (uv setup, make test/lint/typecheck, PR rules, tag-driven "
                  "PyPI releases via release.yml) and linked it from the README's new Contributing section.",
          summarizedThroughId=last)
    return s


def session_windows_skip(rng):
    s = Session(rng, LEDGER, "2026-11-28T17:50:08.615Z")
    s.model_change("anthropic", "claude-sonnet-4-5")
    s.thinking("medium")
    s.user("tests/test_paths.py fails on the Windows CI runner because it asserts POSIX paths. What's the "
           "cleanest way to skip it there?", after=10)
    s.failed("aborted", "Request was aborted",
             partial=["The cleanest option is a module-level `pytestmark`, so that every test in the file is "
                      "skipped on Windows:\n\n```python\nimport sys\n"])
    s.user("Actually just do it: skip the whole module on win32, with a reason.", after=6)
    c = call("edit", path="tests/test_paths.py",
             oldText="import pytest\n\nfrom pyledger.utils import journal_path\n",
             newText="import sys\n\nimport pytest\n\nfrom pyledger.utils import journal_path\n\n"
                     "pytestmark = pytest.mark.skipif(\n    sys.platform == \"win32\", reason=\"asserts POSIX path "
                     "separators\"\n)\n")
    s.asst(c)
    s.edited(c, line=1)
    c = call("bash", command="python -m pytest tests/test_paths.py -q -rs 2>&1 | tail -1")
    s.asst(c)
    s.result(c, "6 passed in 0.04s", took=1.1)
    s.asst("Added a module-level `pytestmark = pytest.mark.skipif(sys.platform == \"win32\", ...)` to "
           "`tests/test_paths.py`. On Linux all 6 tests still run; on the Windows runner they will show as "
           "skipped with the reason \"asserts POSIX path separators\".")
    return s


# arbor substitutes the real store path for this placeholder when it unpacks
# or copies the demo store, so the fork's parentSession resolves anywhere.
DEMO_ROOT_PLACEHOLDER = "__ARBOR_DEMO_STORE__"


def build(out_dir, root):
    rng = random.Random(SEED)
    auth, fork_point = session_flaky_auth(rng)
    review = session_review_stage(rng)
    css = session_css_overflow(rng)
    parent_path = os.path.join(root, auth.folder(), auth.filename())
    fork = session_stress_fork(rng, auth, fork_point, parent_path)
    delim = session_delimiter_flag(rng)
    release = session_release_build(rng)
    split = session_package_split(rng)
    contrib = session_contributing(rng)
    winskip = session_windows_skip(rng)
    sessions = [auth, review, css, fork, delim, release, split, contrib, winskip]

    os.makedirs(out_dir, exist_ok=True)
    for folder in sorted({s.folder() for s in sessions}):
        shutil.rmtree(os.path.join(out_dir, folder), ignore_errors=True)
    return [s.write(out_dir) for s in sessions]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", nargs="?", default=os.path.join(here, "demo-store"),
                    help="output store directory (default: assets/demo-store next to this script)")
    ap.add_argument("--root", help="store path written into the fork's parentSession "
                                   "(default: absolute path of OUT)")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    root = args.root or DEMO_ROOT_PLACEHOLDER
    if root != DEMO_ROOT_PLACEHOLDER:
        root = os.path.abspath(os.path.expanduser(root))
    for p in build(out, root):
        print(f"{os.path.getsize(p):7d}  {os.path.relpath(p, out)}")


if __name__ == "__main__":
    main()
