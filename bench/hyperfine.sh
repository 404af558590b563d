# Sourced by the bench scripts: hyperfine, installed when absent, times
# every whole command they run.
#
#   hf_best REPS CMD...   -> "<best/median/worst ms> <max RSS MB>" (one run: "<ms> <MB>")
#   hf_cpu                -> after hf_best: "<mean user+sys s>" of its runs
#
# HF_WARMUP=N runs the command N times first, untimed.
#
# Each run is `/usr/bin/time -f %M CMD...` under hyperfine (so that the
# largest max RSS of the runs is known too; hyperfine subtracts the shell's
# start, not time's, ~0.5 ms). hyperfine's JSON export is kept in
# $HF_DIR/last.json, the last run's stderr in $HF_DIR/cmd.err.

ensure_hyperfine() {
  command -v hyperfine >/dev/null 2>&1 && return 0
  echo "installing hyperfine ..." >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y hyperfine >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y hyperfine >/dev/null 2>&1; }
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get install -y hyperfine >/dev/null 2>&1
  fi
  command -v hyperfine >/dev/null 2>&1 || cargo install hyperfine --locked >&2 || true
  export PATH="$PATH:${CARGO_HOME:-$HOME/.cargo}/bin"
  command -v hyperfine >/dev/null 2>&1 || { echo "hyperfine is needed (apt-get install hyperfine, or cargo install hyperfine)" >&2; exit 1; }
}

HF_DIR=${HF_DIR:-$(mktemp -d)}

hf_best() {
  local reps=$1
  shift
  local cmd
  cmd="$(printf '%q ' /usr/bin/time -a -o "$HF_DIR/rss" -f %M "$@") 2>$(printf '%q' "$HF_DIR/cmd.err")"
  : >"$HF_DIR/rss"
  if ! hyperfine --shell bash --style none --warmup "${HF_WARMUP:-0}" --runs "$reps" --export-json "$HF_DIR/last.json" \
    --command-name run "$cmd" >/dev/null 2>"$HF_DIR/err"; then
    cat "$HF_DIR/err" >&2
    return 1
  fi
  python3 - "$HF_DIR/last.json" "$HF_DIR/rss" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
t = sorted(x * 1000 for x in r["times"])
rss = max([int(l) for l in open(sys.argv[2]) if l.strip().isdigit()] or [0]) / 1024
if len(t) == 1:
    print("%.0f %.0f" % (t[0], rss))
else:
    print("%.0f/%.0f/%.0f %.0f" % (t[0], t[(len(t) + 1) // 2 - 1], t[-1], rss))
PY
}

hf_cpu() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]; print("%.2f" % (r["user"] + r["system"]))' "$HF_DIR/last.json"
}
