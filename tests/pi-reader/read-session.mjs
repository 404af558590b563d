#!/usr/bin/env node
// Reads pi / Atomic JSONL session files with pi's own SessionManager
// (@mariozechner/pi-coding-agent, pinned in package.json) and prints what pi sees,
// so arbor's Rust tests can cross-check files that arbor wrote.
//
//   node read-session.mjs <session.jsonl> [more.jsonl ...]
//
// Prints one JSON object per line on stdout, one per path, in argument order; always exits 0
// once arguments are given (exit 2 on usage error). See README.md for the output shape.
//
// pi's SessionManager.open() rewrites a file it considers invalid (no valid header -> fresh
// header) and migrates version 1/2 files in place, so every file is copied into a fresh temp
// dir and the copy is opened; the original is never touched. `rewritten` says whether pi
// changed the copy.
//
// pi loops forever (with growing memory) on duplicate ids / parentId cycles, so the reading
// runs in a worker thread with a memory cap; a file that takes longer than
// PI_READER_TIMEOUT_MS (default 5000) yields {"ok":false,"hang":true,...}.
import { Worker, isMainThread, parentPort } from "node:worker_threads";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

if (isMainThread) {
  await main();
} else {
  await workerMain();
}

// ---------------------------------------------------------------- main thread

async function main() {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write("usage: node read-session.mjs <session.jsonl> [more.jsonl ...]\n");
    process.exit(2);
  }
  const timeoutMs = Number(process.env.PI_READER_TIMEOUT_MS) || 5000;
  let worker = null;
  for (const file of files) {
    const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-reader-"));
    let result;
    try {
      if (!worker) worker = await startWorker();
      result = await ask(worker, { file: path.resolve(file), tmpDir }, timeoutMs);
    } catch (err) {
      result = err.result ?? { ok: false, error: errorMessage(err) };
      if (worker) await worker.terminate().catch(() => {});
      worker = null;
    } finally {
      fs.rmSync(tmpDir, { recursive: true, force: true });
    }
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
  if (worker) await worker.terminate();
}

function startWorker() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: 512 },
      stdout: false,
      stderr: false,
    });
    const onError = (err) => reject(err);
    const onExit = (code) => reject(new Error(`pi reader worker exited (code ${code}) while loading`));
    worker.once("error", onError);
    worker.once("exit", onExit);
    worker.once("message", (msg) => {
      worker.off("error", onError);
      worker.off("exit", onExit);
      if (msg && msg.ready) resolve(worker);
      else reject(new Error(msg?.error ?? "pi reader worker failed to start"));
    });
  });
}

function ask(worker, request, timeoutMs) {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      worker.off("message", onMessage);
      worker.off("error", onError);
      worker.off("exit", onExit);
    };
    const fail = (result) => {
      cleanup();
      const err = new Error(result.error);
      err.result = result;
      reject(err);
    };
    const onMessage = (msg) => {
      cleanup();
      resolve(msg);
    };
    const onError = (err) =>
      fail(
        err?.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? { ok: false, hang: true, error: `pi ran out of memory (runaway loop?): ${errorMessage(err)}` }
          : { ok: false, error: errorMessage(err) },
      );
    const onExit = (code) => fail({ ok: false, error: `pi reader worker exited (code ${code})` });
    const timer = setTimeout(
      () =>
        fail({
          ok: false,
          hang: true,
          error: `pi did not return within ${timeoutMs}ms (infinite loop on duplicate ids or a parentId cycle?)`,
        }),
      timeoutMs,
    );
    worker.on("message", onMessage);
    worker.once("error", onError);
    worker.once("exit", onExit);
    worker.postMessage(request);
  });
}

// ---------------------------------------------------------------- worker thread

async function workerMain() {
  let SessionManager;
  try {
    ({ SessionManager } = await import("@mariozechner/pi-coding-agent"));
  } catch (err) {
    parentPort.postMessage({ ready: false, error: errorMessage(err) });
    return;
  }
  parentPort.on("message", ({ file, tmpDir }) => {
    let result;
    try {
      result = readSession(SessionManager, file, tmpDir);
    } catch (err) {
      result = { ok: false, error: errorMessage(err) };
    }
    parentPort.postMessage(result);
  });
  parentPort.postMessage({ ready: true });
}

function readSession(SessionManager, file, tmpDir) {
  const copy = path.join(tmpDir, path.basename(file));
  // Reproduce what pi would meet at the original path, without letting it touch the original:
  // a missing file / dangling or looping symlink stays missing (pi starts an unsaved new
  // session), a directory stays a directory (pi fails reading it), a file is copied.
  let before = null;
  if (fs.existsSync(file)) {
    if (fs.statSync(file).isDirectory()) {
      fs.mkdirSync(copy);
    } else {
      fs.copyFileSync(file, copy);
      before = fs.readFileSync(copy);
    }
  }

  // sessionDir is only used for /new and /branch; pass the temp dir so nothing is created
  // next to the original.
  const sm = SessionManager.open(copy, tmpDir);

  let after = null;
  try {
    after = fs.readFileSync(copy);
  } catch {
    // still missing (pi does not write a new session until its first assistant message)
  }
  const rewritten = before === null ? after !== null : after === null || !before.equals(after);

  const all = sm.getEntries();
  const entries = all.map((e) => ({ id: e.id ?? null, parentId: e.parentId ?? null, type: e.type ?? null }));
  const labels = {};
  for (const e of all) {
    const label = sm.getLabel(e.id);
    if (label !== undefined) labels[e.id] = label;
  }
  const ctx = sm.buildSessionContext();
  const src = contextSources(sm.getBranch(), ctx.messages);
  return {
    ok: true,
    sessionId: sm.getSessionId(),
    header: sm.getHeader(),
    leafId: sm.getLeafId(),
    entryCount: all.length,
    entries,
    labels,
    sessionName: sm.getSessionName() ?? null,
    rewritten,
    context: {
      model: ctx.model ?? null,
      thinkingLevel: ctx.thinkingLevel ?? null,
      messageCount: ctx.messages.length,
      messages: ctx.messages.map((m, i) => ({ role: m.role, src: src[i], text: renderText(m) })),
    },
  };
}

// The id of the entry each context message came from (null when none matches). pi passes a
// `message` entry's own message object through, so those match by identity; the messages it
// synthesizes (custom_message -> custom, branch_summary -> branchSummary, compaction ->
// compactionSummary) carry the entry's timestamp as ms, so those match by type + time on the
// active path (the latest match wins, as pi applies the latest compaction).
function contextSources(branch, messages) {
  const byMessage = new Map();
  for (const e of branch) if (e.type === "message" && e.message) byMessage.set(e.message, e.id);
  const synthesized = { custom: "custom_message", branchSummary: "branch_summary", compactionSummary: "compaction" };
  return messages.map((m) => {
    if (byMessage.has(m)) return byMessage.get(m);
    const type = synthesized[m.role];
    let id = null;
    for (const e of branch) {
      if (e.type === type && new Date(e.timestamp).getTime() === m.timestamp) id = e.id;
    }
    return id;
  });
}

// Plain rendering: compaction/branch summaries -> .summary; string content as is; content
// arrays -> their text blocks joined by a space (images, thinking, tool calls dropped);
// bashExecution (no content) -> its command; anything else -> "".
function renderText(m) {
  if (m.role === "compactionSummary" || m.role === "branchSummary") {
    return m.summary == null ? "" : String(m.summary);
  }
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) {
    return m.content
      .filter((b) => b && b.type === "text" && typeof b.text === "string")
      .map((b) => b.text)
      .join(" ");
  }
  if (m.role === "bashExecution" && typeof m.command === "string") return m.command;
  return "";
}

function errorMessage(err) {
  return err instanceof Error ? err.message : String(err);
}
