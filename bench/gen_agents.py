#!/usr/bin/env python3
"""Writes real-shaped Claude Code and Codex session stores (#17).

    bench/gen_agents.py --out DIR [--claude N] [--codex N] [--seed S]
                        [--median-kb K] [--max-mb M] [--atomic-from STORE --atomic N]

DIR/.claude/projects/<encoded cwd>/<session id>.jsonl (with sub-agent runs in
<session id>/subagents/agent-<id>.jsonl and, in older sessions, agent-<id>.jsonl
beside it) and DIR/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl: point
HOME (or CLAUDE_CONFIG_DIR=DIR/.claude, CODEX_HOME=DIR/.codex) at DIR. With
--atomic-from, N Atomic sessions of an existing store are hard-linked (or
copied) into DIR/.atomic/agent/sessions, for a mixed store.

The lines follow the agents' own files (the shapes of the fixtures in
tests/fixtures/agents, whose sources crates/arbor-session/src/agents/foreign/ names): Claude
Code's summary, custom-title, file-history-snapshot, queue-operation, isMeta
caveats and slash-command wrappers, thinking, streamed replies repeating one
message id, tool_use / tool_result with toolUseResult, progress lines,
system lines (informational, api_error), compact_boundary + isCompactSummary,
rewinds (a prompt whose parentUuid is an earlier message), inline sidechains;
Codex's session_meta with git, developer and AGENTS.md / environment_context
injections, turn_context, event_msg duplicates and token_count (sometimes
written twice), reasoning with encrypted content, function_call (shell,
exec_command), custom_tool_call (apply_patch), local_shell_call,
web_search_call, compacted with replacement_history, thread_name_updated,
ghost_snapshot, turn_aborted. A few sessions get a malformed line or a
cut-off last line.

DIR/MANIFEST.json says, per session, what arbor's row must say (id, agent,
cwd, name, firstMessage, messageCount, gitBranch, internal, skipped lines,
partial tail), so a test can compare; the rules are those of
crates/arbor-session/src/agents/foreign/ (claude.rs, codex.rs).
"""

import argparse
import json
import os
import random
import shutil
import sys
import uuid
from datetime import datetime, timedelta, timezone

CWDS = [
    "/home/dev/src/arbor", "/home/dev/src/web-dashboard", "/Users/alice/work/payments-api",
    "/home/dev/projects/my app", "/srv/monorepo/packages/coding-agent", "/home/dev/src/émigré",
]
BRANCHES = ["main", "main", "fix/parser", "feature/export", "release-2.1", "dev"]
WORDS = ("parser lexer token index search query tree branch session store picker preview "
         "render window cache build test bench thread commit patch diff file folder row "
         "column offset buffer stream line entry label summary agent model usage").split()
CODE = [
    "fn parse(input: &str) -> Result<Vec<Token>, Error> {",
    "    let mut out = Vec::with_capacity(input.len() / 4);",
    "    for (i, c) in input.char_indices() {",
    "        match c { '(' => out.push(Token::Open(i)), _ => {} }",
    "    }",
    "    Ok(out)",
    "}",
    "test parser::numbers ... ok",
    "   Compiling arbor v0.1.0 (/home/dev/src/arbor)",
    "warning: unused variable: `x`",
]


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (t.microsecond // 1000)


def sentence(r, n=8):
    return " ".join(r.choice(WORDS) for _ in range(n)).capitalize()


def blob(r, size):
    """About `size` bytes of tool output: code and log lines."""
    out, n = [], 0
    while n < size:
        line = r.choice(CODE) if r.random() < 0.8 else sentence(r, 10)
        out.append(line)
        n += len(line) + 1
    return "\n".join(out)


def dump(o):
    return json.dumps(o, ensure_ascii=False, separators=(",", ":"))


class Sizer:
    """Session sizes: log-normal around a median, capped."""

    def __init__(self, r, median_kb, max_mb):
        self.r, self.median, self.cap = r, median_kb * 1024, max_mb * 1024 * 1024

    def draw(self):
        import math
        return int(min(self.cap, max(2048, self.r.lognormvariate(math.log(self.median), 1.0))))


# ------------------------------------------------------------ Claude Code

def claude_session(r, root, n, t0, size, sub_layout):
    sid = str(uuid.UUID(int=r.getrandbits(128), version=4))
    cwd = r.choice(CWDS)
    proj = os.path.join(root, "projects", "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd))
    os.makedirs(proj, exist_ok=True)
    path = os.path.join(proj, sid + ".jsonl")
    branch = r.choice(BRANCHES + [""])
    version = r.choice(["1.0.83", "2.0.14", "2.0.30"])
    t = t0
    lines, facts = [], {"messages": 0, "branch": None}
    uuids = []  # conversational messages, for rewinds
    parent = None

    def base(kind, extra=None):
        nonlocal t, parent
        t += timedelta(seconds=r.randint(1, 30))
        u = str(uuid.UUID(int=r.getrandbits(128), version=4))
        o = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
             "sessionId": sid, "version": version, "gitBranch": branch, "type": kind}
        if extra:
            o.update(extra)
        o["uuid"] = u
        o["timestamp"] = iso(t)
        parent = u
        if branch:
            facts["branch"] = branch
        return o

    def user(content, **kw):
        o = base("user", kw)
        o["message"] = {"role": "user", "content": content}
        lines.append(dump(o))
        return o["uuid"]

    def assistant(blocks, mid, stop):
        o = base("assistant", {"requestId": "req_%x" % r.getrandbits(40)})
        o["message"] = {"model": r.choice(["claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"]),
                        "id": mid, "type": "message", "role": "assistant", "content": blocks,
                        "stop_reason": stop, "stop_sequence": None,
                        "usage": {"input_tokens": r.randint(3, 900), "cache_creation_input_tokens": r.randint(0, 5000),
                                  "cache_read_input_tokens": r.randint(0, 90000), "output_tokens": r.randint(1, 800)}}
        lines.append(dump(o))
        facts["messages"] += 1
        return o["uuid"]

    if r.random() < 0.3:
        lines.append(dump({"type": "summary", "summary": sentence(r, 4), "leafUuid": str(uuid.uuid4())}))
    lines.append(dump({"type": "file-history-snapshot", "messageId": str(uuid.uuid4()),
                       "snapshot": {"messageId": "x", "trackedFileBackups": {}, "timestamp": iso(t)},
                       "isSnapshotUpdate": False}))
    if r.random() < 0.5:
        user("Caveat: The messages below were generated by the user while running local commands. "
             "DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
             isMeta=True)
        user("<command-name>/model</command-name>\n            <command-message>model</command-message>\n            <command-args></command-args>")
        user("<local-command-stdout>Set model to sonnet</local-command-stdout>")
    first = "%s %d" % (sentence(r, 6), n)
    facts["first"] = first
    user(first if r.random() < 0.5 else [{"type": "text", "text": first}])
    facts["messages"] += 1
    uuids.append(parent)
    written = sum(len(l) for l in lines)
    turn = 0
    compacted = False
    while written < size:
        turn += 1
        mid = "msg_%024x" % r.getrandbits(96)
        if r.random() < 0.5:
            assistant([{"type": "thinking", "thinking": sentence(r, 12), "signature": "sig%x" % r.getrandbits(64)}], mid, None)
        tool = r.choice(["Bash", "Read", "Edit", "Grep", "Glob", "TodoWrite"])
        tid = "toolu_%024x" % r.getrandbits(96)
        inp = {"Bash": {"command": "cargo test %s" % r.choice(WORDS), "description": "Run the tests"},
               "Read": {"file_path": "%s/src/%s.rs" % (cwd, r.choice(WORDS))},
               "Edit": {"file_path": "%s/src/%s.rs" % (cwd, r.choice(WORDS)), "old_string": r.choice(CODE), "new_string": r.choice(CODE)},
               "Grep": {"pattern": r.choice(WORDS), "path": cwd},
               "Glob": {"pattern": "**/*.rs"},
               "TodoWrite": {"todos": [{"content": sentence(r, 5), "status": "pending", "activeForm": sentence(r, 3)}]}}[tool]
        # A streamed reply: text then the call, one message id.
        if r.random() < 0.6:
            assistant([{"type": "text", "text": sentence(r, 14)}], mid, None)
        assistant([{"type": "tool_use", "id": tid, "name": tool, "input": inp}], mid, "tool_use")
        if r.random() < 0.15:
            lines.append(dump(base("progress", {"data": {"type": "hook_progress", "hookName": "PreToolUse"}, "toolUseID": tid})))
        out = blob(r, r.choice([200, 800, 3000, 12000]))
        err = r.random() < 0.1
        res = {"tool_use_id": tid, "type": "tool_result", "content": out if r.random() < 0.7 else [{"type": "text", "text": out}]}
        if err:
            res["is_error"] = True
        user([res], toolUseResult={"stdout": out[:200], "stderr": "", "interrupted": False})
        facts["messages"] += 1
        assistant([{"type": "text", "text": "%s." % sentence(r, 16)}], "msg_%024x" % r.getrandbits(96), "end_turn")
        uuids.append(parent)
        if r.random() < 0.05:
            o = base("system", {"subtype": "informational", "content": "Hook output", "isMeta": False, "level": "info"})
            lines.append(dump(o))
        if r.random() < 0.03:
            o = base("system", {"subtype": "api_error", "content": "API Error: 529 overloaded", "level": "error", "retryAttempt": 1})
            lines.append(dump(o))
        if r.random() < 0.08 and len(uuids) > 2:
            # A rewind: a new prompt from an earlier message (a branch).
            parent = r.choice(uuids[:-1])
            user("%s instead" % sentence(r, 5))
            facts["messages"] += 1
        elif r.random() < 0.6:
            user(sentence(r, 7))
            facts["messages"] += 1
        if r.random() < 0.04 and not compacted:
            compacted = True
            logical = parent
            parent = None
            o = base("system", {"subtype": "compact_boundary", "content": "Conversation compacted", "isMeta": False,
                                "level": "info", "logicalParentUuid": logical,
                                "compactMetadata": {"trigger": r.choice(["auto", "manual"]), "preTokens": r.randint(50000, 160000)}})
            lines.append(dump(o))
            user("This session is being continued from a previous conversation that ran out of context. Summary: "
                 + sentence(r, 20), isVisibleInTranscriptOnly=True, isCompactSummary=True)
        if r.random() < 0.02:
            # Inline sidechain lines (Claude Code's first versions).
            keep = parent
            parent = None
            o = base("user", {"agentId": "%07x" % r.getrandbits(28)})
            o["isSidechain"] = True
            o["message"] = {"role": "user", "content": "Warmup"}
            lines.append(dump(o))
            parent = keep
        if branch and r.random() < 0.02:
            branch = r.choice(BRANCHES)
        written = sum(map(len, lines))
    if r.random() < 0.3:
        lines.append(dump({"type": "queue-operation", "operation": "enqueue", "timestamp": iso(t), "content": "and run clippy", "sessionId": sid}))
    name = None
    if r.random() < 0.2:
        name = sentence(r, 3)
        lines.append(dump({"type": "custom-title", "customTitle": name, "sessionId": sid}))
    elif lines[0].startswith('{"type":"summary"'):
        name = json.loads(lines[0])["summary"]
    skipped, partial = 0, False
    if r.random() < 0.05:
        lines.insert(r.randint(3, len(lines)), '{"type":"user","message":{"role":"user","content":"cut off by a cr')
        skipped += 1
    text = "\n".join(lines) + "\n"
    if r.random() < 0.05:
        text += '{"parentUuid":"%s","isSidechain":false,"type":"user","message":{"role":"user","content":"and run cl' % parent
        partial = True
        skipped += 1  # a cut-off line is also a skipped one (as in an Atomic file)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.utime(path, (t.timestamp(), t.timestamp()))
    subs = []
    if r.random() < 0.15:
        subs.append(claude_subagent(r, proj, sid, cwd, facts["branch"] or "", t0, sub_layout))
    return {
        "agent": "claude", "path": path, "id": sid, "cwd": cwd, "name": name,
        "firstMessage": first, "messageCount": facts["messages"],
        "gitBranch": facts["branch"], "internal": False,
        "skippedLines": skipped, "partialTail": partial, "bytes": len(text.encode()),
    }, subs


def claude_subagent(r, proj, sid, cwd, branch, t0, sub_layout):
    agent = "%07x" % r.getrandbits(28)
    if sub_layout:
        d = os.path.join(proj, sid, "subagents")
        os.makedirs(d, exist_ok=True)
    else:
        d = proj
    path = os.path.join(d, "agent-%s.jsonl" % agent)
    t, parent, lines = t0, None, []
    prompt = "Find every %s in the %s" % (r.choice(WORDS), r.choice(WORDS))
    for k in range(r.randint(1, 4)):
        t += timedelta(seconds=3)
        u = str(uuid.uuid4())
        if k == 0:
            o = {"type": "user", "message": {"role": "user", "content": prompt}}
        else:
            o = {"type": "assistant", "message": {"id": "msg_s%d" % k, "type": "message", "role": "assistant",
                                                  "model": "claude-haiku-4-5-20251001",
                                                  "content": [{"type": "text", "text": sentence(r, 10)}],
                                                  "stop_reason": "end_turn", "usage": {"input_tokens": 5, "output_tokens": 9}}}
        o.update({"parentUuid": parent, "isSidechain": True, "userType": "external", "cwd": cwd, "sessionId": sid,
                  "version": "2.0.30", "gitBranch": branch, "agentId": agent, "uuid": u, "timestamp": iso(t)})
        parent = u
        lines.append(dump(o))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return {"agent": "claude", "path": path, "id": "agent-" + agent, "cwd": cwd, "name": None,
            "firstMessage": prompt, "messageCount": len(lines), "gitBranch": branch or None,
            "internal": True, "skippedLines": 0, "partialTail": False}


# ------------------------------------------------------------------ Codex

def codex_session(r, root, n, t0, size):
    sid = str(uuid.UUID(int=r.getrandbits(128), version=4))
    cwd = r.choice(CWDS)
    branch = r.choice(BRANCHES)
    d = os.path.join(root, "sessions", t0.strftime("%Y"), t0.strftime("%m"), t0.strftime("%d"))
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "rollout-%s-%s.jsonl" % (t0.strftime("%Y-%m-%dT%H-%M-%S"), sid))
    t = t0
    lines = []
    count = 0

    def put(kind, payload):
        nonlocal t
        t += timedelta(milliseconds=r.randint(1, 20000))
        lines.append(dump({"timestamp": iso(t), "type": kind, "payload": payload}))

    def msg(role, text, kind="input_text"):
        put("response_item", {"type": "message", "role": role, "content": [{"type": kind, "text": text}]})

    put("session_meta", {"id": sid, "timestamp": iso(t0), "cwd": cwd, "originator": "codex_cli_rs",
                         "cli_version": r.choice(["0.46.0", "0.58.0"]), "instructions": None, "source": "cli",
                         "model_provider": "openai",
                         "git": {"commit_hash": "%07x" % r.getrandbits(28), "branch": branch,
                                 "repository_url": "git@example.com:dev/x.git"}})
    msg("developer", "<permissions instructions>\nFilesystem sandboxing: workspace-write.\n</permissions instructions>")
    if r.random() < 0.5:
        msg("user", "# AGENTS.md instructions for %s\n\n<INSTRUCTIONS>\nRun the tests before finishing.\n</INSTRUCTIONS>" % cwd)
    msg("user", "<environment_context>\n  <cwd>%s</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <shell>bash</shell>\n</environment_context>" % cwd)
    first = "%s %d" % (sentence(r, 6).lower(), n)
    prompt = first
    written = 0
    total = 0
    while True:
        msg("user", prompt)
        count += 1
        put("event_msg", {"type": "user_message", "message": prompt, "images": [], "kind": "plain"})
        put("turn_context", {"cwd": cwd, "approval_policy": "on-request",
                             "sandbox_policy": {"mode": "workspace-write", "network_access": False},
                             "model": r.choice(["gpt-5-codex", "gpt-5"]), "effort": "medium", "summary": "auto"})
        put("event_msg", {"type": "task_started", "model_context_window": 272000})
        for _ in range(r.randint(1, 4)):
            s = sentence(r, 5)
            put("event_msg", {"type": "agent_reasoning", "text": "**%s**" % s})
            put("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**%s**" % s}],
                                  "content": None, "encrypted_content": "gAAAA" + "x" * r.randint(100, 2000)})
            count += 1
            call = "call_%x" % r.getrandbits(64)
            out = blob(r, r.choice([200, 800, 3000, 12000]))
            k = r.random()
            if k < 0.6:
                put("response_item", {"type": "function_call", "name": r.choice(["shell", "exec_command"]),
                                      "arguments": json.dumps({"command": ["bash", "-lc", "rg %s" % r.choice(WORDS)], "workdir": cwd}),
                                      "call_id": call})
                put("response_item", {"type": "function_call_output", "call_id": call,
                                      "output": json.dumps({"output": out, "metadata": {"exit_code": 0, "duration_seconds": 0.1}})})
                count += 2
            elif k < 0.85:
                put("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call, "name": "apply_patch",
                                      "input": "*** Begin Patch\n*** Update File: src/%s.rs\n@@\n-%s\n+%s\n*** End Patch" % (r.choice(WORDS), r.choice(CODE), r.choice(CODE))})
                put("response_item", {"type": "custom_tool_call_output", "call_id": call, "output": "Success. Updated the following files:\nM src/x.rs"})
                count += 2
            elif k < 0.95:
                put("response_item", {"type": "local_shell_call", "call_id": call, "status": "completed",
                                      "action": {"type": "exec", "command": ["ls", "-la"], "working_directory": cwd}})
                put("response_item", {"type": "function_call_output", "call_id": call, "output": out})
                count += 2
            else:
                put("response_item", {"type": "web_search_call", "status": "completed",
                                      "action": {"type": "search", "query": sentence(r, 4)}})
                count += 1
        reply = "%s." % sentence(r, 16)
        msg("assistant", reply, "output_text")
        count += 1
        put("event_msg", {"type": "agent_message", "message": reply})
        last = {"input_tokens": r.randint(1000, 90000), "cached_input_tokens": r.randint(0, 900),
                "output_tokens": r.randint(10, 900), "reasoning_output_tokens": 0}
        last["total_tokens"] = last["input_tokens"] + last["output_tokens"]
        total += last["total_tokens"]
        tc = {"type": "token_count", "info": {"total_token_usage": dict(last, total_tokens=total),
                                              "last_token_usage": last, "model_context_window": 272000},
              "rate_limits": {"primary": {"used_percent": 3.0, "window_minutes": 300}}}
        put("event_msg", tc)
        if r.random() < 0.3:
            put("event_msg", tc)  # written twice, as Codex sometimes does
        put("event_msg", {"type": "task_complete", "last_agent_message": reply})
        if r.random() < 0.05:
            put("response_item", {"type": "ghost_snapshot", "ghost_commit": {"id": "%x" % r.getrandbits(40)}})
        if r.random() < 0.04:
            put("compacted", {"message": sentence(r, 20), "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": first}]}]})
            put("event_msg", {"type": "context_compacted"})
        if r.random() < 0.03:
            put("event_msg", {"type": "turn_aborted", "reason": "interrupted"})
        written = sum(len(l) + 1 for l in lines)
        if written >= size:
            break
        prompt = sentence(r, 7).lower()
    name = None
    if r.random() < 0.15:
        name = sentence(r, 3)
        put("event_msg", {"type": "thread_name_updated", "thread_id": sid, "thread_name": name})
    skipped, partial = 0, False
    if r.random() < 0.05:
        lines.insert(r.randint(5, len(lines)), "[1,2,3]")
        skipped += 1
    text = "\n".join(lines) + "\n"
    if r.random() < 0.05:
        text += '{"timestamp":"%s","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"this line is bro' % iso(t)
        partial = True
        skipped += 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.utime(path, (t.timestamp(), t.timestamp()))
    return {"agent": "codex", "path": path, "id": sid, "cwd": cwd, "name": name, "firstMessage": first,
            "messageCount": count, "gitBranch": branch, "internal": False,
            "skippedLines": skipped, "partialTail": partial, "bytes": len(text.encode())}


def link_atomic(src, dst, n):
    """`n` sessions of the Atomic store `src`, hard-linked (copied across
    file systems) into `dst`, keeping their project folders."""
    files = []
    for d in sorted(os.listdir(src)):
        p = os.path.join(src, d)
        if os.path.isdir(p):
            files += [(d, f) for f in sorted(os.listdir(p)) if f.endswith(".jsonl")]
    step = max(1, len(files) // max(n, 1))
    chosen = files[::step][:n]
    for d, f in chosen:
        os.makedirs(os.path.join(dst, d), exist_ok=True)
        a, b = os.path.join(src, d, f), os.path.join(dst, d, f)
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)
    return len(chosen)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--claude", type=int, default=10)
    ap.add_argument("--codex", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--median-kb", type=float, default=40.0)
    ap.add_argument("--max-mb", type=float, default=8.0)
    ap.add_argument("--atomic-from")
    ap.add_argument("--atomic", type=int, default=0)
    a = ap.parse_args()
    r = random.Random(a.seed)
    sizes = Sizer(r, a.median_kb, a.max_mb)
    start = datetime(2025, 9, 1, 8, 0, 0, tzinfo=timezone.utc)
    sessions = []
    claude_root = os.path.join(a.out, ".claude")
    for i in range(a.claude):
        t0 = start + timedelta(minutes=37 * i + r.randint(0, 30))
        row, subs = claude_session(r, claude_root, i, t0, sizes.draw(), sub_layout=i % 3 != 0)
        sessions.append(row)
        sessions += subs
    codex_root = os.path.join(a.out, ".codex")
    for i in range(a.codex):
        t0 = start + timedelta(minutes=41 * i + r.randint(0, 30))
        sessions.append(codex_session(r, codex_root, i, t0, sizes.draw()))
    atomic = 0
    if a.atomic_from and a.atomic:
        atomic = link_atomic(a.atomic_from, os.path.join(a.out, ".atomic", "agent", "sessions"), a.atomic)
    os.makedirs(os.path.join(a.out, ".atomic", "agent", "sessions"), exist_ok=True)
    manifest = {
        "generator": "bench/gen_agents.py",
        "args": vars(a),
        "atomicLinked": atomic,
        "totals": {
            "claude": sum(1 for s in sessions if s["agent"] == "claude" and not s["internal"]),
            "claudeSubagents": sum(1 for s in sessions if s["internal"]),
            "codex": sum(1 for s in sessions if s["agent"] == "codex"),
            "bytes": sum(s.get("bytes", 0) for s in sessions),
        },
        "sessions": [{k: v for k, v in s.items() if k != "bytes"} for s in sessions],
    }
    with open(os.path.join(a.out, "MANIFEST.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, ensure_ascii=False, indent=1)
    print(json.dumps(manifest["totals"]), file=sys.stderr)


if __name__ == "__main__":
    main()
