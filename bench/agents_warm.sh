#!/usr/bin/env bash
# What Claude Code and Codex cost (#17): warm starts with the agents' roots
# absent and present, and a mixed store against an Atomic-only one.
#
#   bench/agents_warm.sh ATOMIC_STORE MIXED_HOME
#
# ATOMIC_STORE: an Atomic store (e.g. target/bench/stress-10000, read only);
# MIXED_HOME: a home made by bench/gen_agents.py (.atomic, .claude, .codex).
# Each figure is REPS runs (default 5) of the whole process after a warm-up
# run (index built, files in the page cache), timed by hyperfine (installed
# when absent; bench/hyperfine.sh): best/median/worst wall time, mean CPU
# time (user+sys), largest max RSS. Indexes go to target/agents-index.
#   1. absent: the Atomic store alone, `--agent atomic` (the agents' roots are
#      never looked at) against the default (they are looked for, absent);
#      plus the file-system calls of one run of each (strace -c).
#   2. mixed: warm `list --all --json` and the picker's first frame with rows
#      (a pseudo-terminal; the time of the log's `first frame with rows
#      drawn`) on MIXED_HOME against ATOMIC_STORE.
set -euo pipefail
cd "$(dirname "$0")/.."
ATOMIC=$(realpath "$1")
MIXED=$(realpath "$2")
REPS=${REPS:-5}
. bench/hyperfine.sh
ensure_hyperfine
[ -n "${NO_BUILD:-}" ] || cargo build --release --quiet
ARBOR=$PWD/target/release/arbor
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p target/agents-index

# A home whose only store is the Atomic one.
HOME_A=$TMP/atomic-only
mkdir -p "$HOME_A/.atomic/agent"
ln -s "$ATOMIC" "$HOME_A/.atomic/agent/sessions"

# The index of a home (the same for every run on it).
cache() { echo "$PWD/target/agents-index/$(basename "$1")"; }

# times NAME HOME CMD... -> one line: best/median/worst wall ms, mean cpu s, max RSS MB
# (hyperfine, after its own warm-up run; the command is printed on stderr)
times() {
  local name=$1 home=$2
  shift 2
  local res
  printf 'HOME=%q ARBOR_CACHE_DIR=%q hyperfine --warmup 1 --runs %s %q\n' "$home" "$(cache "$home")" "$REPS" "$(printf '%q ' "$@")" >&2
  res=$(env -u CLAUDE_CONFIG_DIR -u CODEX_HOME -u ATOMIC_CODING_AGENT_DIR -u PI_CODING_AGENT_DIR \
    HOME="$home" ARBOR_CACHE_DIR="$(cache "$home")" HF_DIR="$TMP" HF_WARMUP=1 \
    bash -c '. bench/hyperfine.sh; hf_best "$@" && hf_cpu' \
    hf "$REPS" "$@" | tr '\n' ' ')
  python3 -c '
import sys
name, wall, mb, cpu = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
w = [float(x) for x in wall.split("/")]
w = w * 3 if len(w) == 1 else w
print("%-34s %5.0f/%5.0f/%5.0f ms wall  %5.2f s cpu  %4.0f MB" % (name, w[0], w[1], w[2], cpu, mb))
' "$name" $res
}

# picker NAME HOME -> best/median/worst ms to the first frame with rows
picker() {
  local name=$1 home=$2
  python3 - "$ARBOR" "$home" "$(cache "$home")" "$REPS" "$name" <<'EOF'
import os, pty, sys, time, datetime, select
arbor, home, cache, reps, name = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
def once():
    log = os.path.join(cache, "picker.log")
    try: os.unlink(log)
    except FileNotFoundError: pass
    env = dict(os.environ, HOME=home, ARBOR_CACHE_DIR=cache, TERM="xterm-256color", COLUMNS="120", LINES="40")
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"): env.pop(k, None)
    t0 = datetime.datetime.now(datetime.timezone.utc)
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(arbor, [arbor, "--all", "--log", log], env)
    got = None
    deadline = time.time() + 60
    while time.time() < deadline and got is None:
        r, _, _ = select.select([fd], [], [], 0.002)
        if r:
            try: os.read(fd, 65536)
            except OSError: break
        try:
            for line in open(log):
                if "first frame with rows drawn" in line:
                    hms = line.split()[0]
                    t = datetime.datetime.strptime(t0.strftime("%Y-%m-%d ") + hms, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
                    got = (t - t0).total_seconds() * 1000
        except FileNotFoundError:
            pass
    os.write(fd, b"\x1b")
    time.sleep(0.3)
    try: os.kill(pid, 9)
    except ProcessLookupError: pass
    os.waitpid(pid, 0)
    return got
once()
v = sorted(x for x in (once() for _ in range(reps)) if x is not None)
k = (len(v) - 1) // 2
print("%-34s %5.0f/%5.0f/%5.0f ms to the first frame with rows" % (name, v[0], v[k], v[-1]) if v else name + " no rows seen")
EOF
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
echo "== 1. Claude Code and Codex absent (Atomic store only)"
times "absent --agent atomic" "$HOME_A" "$ARBOR" list --all --json --agent atomic
times "absent default" "$HOME_A" "$ARBOR" list --all --json
for how in "--agent atomic" ""; do
  # shellcheck disable=SC2086
  env HOME="$HOME_A" ARBOR_CACHE_DIR="$(cache "$HOME_A")" \
    strace -f -c -e trace=%file,getdents64 -o "$TMP/strace" "$ARBOR" list --all --json $how >/dev/null 2>&1 || true
  printf '%-34s %s file-system calls\n' "strace ${how:-default}" "$(awk '/total/ {print $4}' "$TMP/strace")"
done
echo "== 2. mixed store against the Atomic one"
times "atomic-only list --all --json" "$HOME_A" "$ARBOR" list --all --json
times "mixed list --all --json" "$MIXED" "$ARBOR" list --all --json
picker "atomic-only picker" "$HOME_A"
picker "mixed picker" "$MIXED"
echo "rows: atomic $(HOME=$HOME_A ARBOR_CACHE_DIR="$(cache "$HOME_A")" "$ARBOR" list --all --json | wc -l)," \
  "mixed $(HOME=$MIXED ARBOR_CACHE_DIR="$(cache "$MIXED")" "$ARBOR" list --all --json | wc -l)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
