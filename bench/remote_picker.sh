#!/usr/bin/env bash
# The picker's first frame with two remotes configured, one hanging and one
# unreachable (#56): it must not wait for either.
#
#   bench/remote_picker.sh [SESSIONS]
#
# A realistic local store of SESSIONS (default 2000) sessions
# (gen_corpus.py --profile realistic --seed 1, into target/bench-remote/),
# the index built once; then REPS (default 5) runs of each setup, alternated,
# each a fresh process in a pseudo-terminal, timed from its start to the
# log's `first frame with rows drawn`:
#   none:    no remote configured;
#   remotes: `hung`, a transport that never answers (timeout 600 s), and
#            `gone`, an ssh destination on an unroutable address
#            (10.255.255.1, ConnectTimeout 3 s), with a mirror of 200 sessions.
# Prints best/median/worst ms per setup. BUILD=release measures the release
# build (default: the debug build already there, target/debug/arbor).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-2000}
REPS=${REPS:-5}
PROFILE=${BUILD:-debug}
[ "$PROFILE" = release ] && cargo build --release --quiet
ARBOR=$PWD/target/$PROFILE/arbor
OUT=$PWD/target/bench-remote
SHARED=${ARBOR_SHARED:-$PWD/../shared}
if [ ! -d "$OUT/home/.atomic/agent/sessions" ]; then
  mkdir -p "$OUT/home/.atomic/agent"
  python3 "$SHARED/corpus/gen_corpus.py" "$OUT/home/.atomic/agent/sessions" --profile realistic \
    --sessions "$N" --seed 1 >/dev/null
  mkdir -p "$OUT/cache/remotes/hung/home/.atomic/agent"
  python3 "$SHARED/corpus/gen_corpus.py" "$OUT/cache/remotes/hung/home/.atomic/agent/sessions" \
    --profile realistic --sessions 200 --seed 2 >/dev/null
fi
printf '' > "$OUT/none.toml"
cat > "$OUT/remotes.toml" <<TOML
[[remote]]
name = "hung"
transport = "sh -c 'sleep 20' hung"
timeout = 600
paths = ["~/.atomic/agent/sessions"]

[[remote]]
name = "gone"
ssh = "10.255.255.1"
timeout = 3
paths = ["~/.atomic/agent/sessions"]
TOML
for c in none remotes; do
  HOME=$OUT/home ARBOR_CACHE_DIR=$OUT/cache ARBOR_CONFIG=$OUT/$c.toml "$ARBOR" index >/dev/null
done
python3 - "$ARBOR" "$OUT" "$REPS" <<'PY'
import os, pty, sys, time, datetime, select
arbor, out, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
def once(config):
    log = os.path.join(out, "picker.log")
    try: os.unlink(log)
    except FileNotFoundError: pass
    env = dict(os.environ, HOME=os.path.join(out, "home"), ARBOR_CACHE_DIR=os.path.join(out, "cache"),
               ARBOR_CONFIG=os.path.join(out, config + ".toml"), TERM="xterm-256color")
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "ARBOR_SSH"): env.pop(k, None)
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
    os.write(fd, b"\x03")
    time.sleep(0.3)
    try: os.kill(pid, 9)
    except ProcessLookupError: pass
    os.waitpid(pid, 0)
    return got
res = {"none": [], "remotes": []}
once("none"); once("remotes")
for _ in range(reps):
    for c in ("none", "remotes"):
        v = once(c)
        if v is not None: res[c].append(v)
for c, v in res.items():
    v.sort()
    k = (len(v) - 1) // 2
    print("%-8s %5.0f/%5.0f/%5.0f ms to the first frame with rows (%d runs)" % (c, v[0], v[k], v[-1], len(v)) if v else c + " no rows seen")
PY
