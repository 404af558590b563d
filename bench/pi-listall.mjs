// Times the pi agent's own SessionManager.listAll() over a store:
//   PI_CODING_AGENT_DIR=<dir with sessions/ = the store> node bench/pi-listall.mjs
// Prints {"sessions":N,"ms":T}. Needs `npm ci` in tests/pi-reader (pinned pi version).
import { SessionManager } from "../tests/pi-reader/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";

const t0 = performance.now();
const sessions = await SessionManager.listAll();
const ms = performance.now() - t0;
console.log(JSON.stringify({ sessions: sessions.length, ms: Math.round(ms) }));
