#!/usr/bin/env bash
# arbor against the cat floor and the pi agent on generated stores.
#
#   bench/compare.sh [SIZE ...]        (default: 2000 10000)
#
# Stores are generated once into target/bench/ and reused: stress-SIZE
# (stress profile, seed 1, 2 jobs; 10,000 sessions are 5.6 GB), except
# 100000: realistic-100000 (realistic profile, median 20 KiB, largest 2 MiB;
# 5.7 GB). Indexes go to target/bench-index/ (so target/bench may be a link
# to read-only shared stores). Files are read into the page cache first.
# Each timed figure is REPS runs (default 5) of the whole process, timed by
# hyperfine (installed when absent; bench/hyperfine.sh): the best, median
# and worst wall time, and the largest max RSS seen. Each command is printed
# on stderr as the hyperfine command that reproduces it. The picker is
# timed in a pseudo-terminal (first row on screen, whole list, each query
# typed to its top result on screen) when python3 has `pyte`
# (`pip install pyte`; PICKER=0 skips it). The pi agent's
# SessionManager.listAll is timed when node and tests/pi-reader/node_modules
# are present (`cd tests/pi-reader && npm ci`); skip it with PI=0.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/.."
SIZES=${*:-2000 10000}
BENCH=target/bench
SHARED=${ARBOR_SHARED:-../shared}
GEN=$SHARED/corpus/gen_corpus.py
REPS=${REPS:-5}
mkdir -p "$BENCH" target/bench-index
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# shellcheck source=bench/hyperfine.sh
HF_DIR=$TMP/hf
mkdir -p "$HF_DIR"
. bench/hyperfine.sh
ensure_hyperfine

cargo build --release --quiet
ARBOR=$PWD/target/release/arbor

# run CMD... -> "<microseconds> <max RSS KiB>": one run whose output is
# kept (pi's listAll prints its count).
run() {
  local t0 t1
  if [ -n "${EPOCHREALTIME:-}" ]; then t0=${EPOCHREALTIME/[.,]/}; else t0=$(($(date +%s%N) / 1000)); fi
  if ! /usr/bin/time -f "%M" -o "$TMP/rss" "$@" >"$TMP/out" 2>"$TMP/err"; then
    cat "$TMP/err" >&2
    return 1
  fi
  if [ -n "${EPOCHREALTIME:-}" ]; then t1=${EPOCHREALTIME/[.,]/}; else t1=$(($(date +%s%N) / 1000)); fi
  echo "$((10#$t1 - 10#$t0)) $(tail -1 "$TMP/rss")"
}

# best REPS CMD... -> "<best/median/worst ms> <max RSS MB>", timed by
# hyperfine (bench/hyperfine.sh); the command is printed on stderr, so
# that every figure names what reproduces it.
best() {
  local reps=$1
  shift
  printf 'ARBOR_CACHE_DIR=%q hyperfine --runs %s %q\n' "${ARBOR_CACHE_DIR:-}" "$reps" "$(printf '%q ' "$@")" >&2
  hf_best "$reps" "$@"
}

cat_all() { find "$1" -name '*.jsonl' -type f -print0 | xargs -0 cat >/dev/null; }
export -f cat_all

results=target/bench-index/results.md
{
  echo "# arbor benchmarks ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
  echo "(times: best/median/worst of $REPS runs, or one run)"
  echo
  echo "| sessions | store | what | time | max RSS |"
  echo "| ---: | ---: | --- | ---: | ---: |"
} >"$results"
row() { echo "| $1 | $2 | $3 | $4 | $5 |" | tee -a "$results"; }

for n in $SIZES; do
  case $n in
    100000) store=$BENCH/realistic-$n gen=(--profile realistic --median-kb 20 --max-mb 2) ;;
    *) store=$BENCH/stress-$n gen=(--profile stress) ;;
  esac
  if [ ! -f "$store/MANIFEST.json" ]; then
    echo "generating $store ..." >&2
    python3 "$GEN" "$store" "${gen[@]}" --sessions "$n" --seed 1 --jobs 2 >&2
  fi
  bytes=$(du -sb --apparent-size "$store" | cut -f1)
  size=$(awk -v b="$bytes" 'BEGIN { printf "%.2f GB", b / 1e9 }')
  cache=target/bench-index/cache-$n
  export ARBOR_CACHE_DIR=$PWD/$cache
  cat_all "$store"

  read -r ms mb < <(best 3 bash -c "cat_all '$store'")
  row "$n" "$size" "cat (floor)" "$ms ms" "$mb MB"

  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json --no-index)
  row "$n" "$size" "scan: arbor list --all --json --no-index" "$ms ms" "$mb MB"

  # A first `arbor list` answers from the files and starts the index's
  # build behind it (`arbor index --behind`), stopped here after each run.
  stop_builder() {
    local pid
    pid=$(grep -o 'process [0-9]*' "$HF_DIR/cmd.err" | cut -d' ' -f2 || true)
    if [ -n "$pid" ]; then
      kill "$pid" 2>/dev/null || true
      while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
  }
  firsts=""
  for _ in $(seq "${FIRSTS:-3}"); do
    rm -rf "$cache"
    read -r ms mb < <(best 1 "$ARBOR" --store "$store" list --all --json)
    stop_builder
    firsts="$firsts $ms"
  done
  row "$n" "$size" "first arbor list --all --json (no index: answers from the files, builds behind)" "${firsts# } ms" "$mb MB"
  # A first query reads each file once for its row and its matches, and
  # leaves the build behind it too.
  firsts=""
  for _ in $(seq "${FIRSTS:-3}"); do
    rm -rf "$cache"
    read -r ms mb < <(best 1 "$ARBOR" --store "$store" list --all --json --query '"two words"')
    stop_builder
    firsts="$firsts $ms"
  done
  row "$n" "$size" "first arbor list --all --query '\"two words\"' (no index: the same)" "${firsts# } ms" "$mb MB"
  # The build itself, as that process (or `arbor index`) does it.
  firsts=""
  for _ in $(seq "${FIRSTS:-3}"); do
    rm -rf "$cache"
    read -r ms mb < <(best 1 "$ARBOR" --store "$store" index)
    firsts="$firsts $ms"
  done
  row "$n" "$size" "first indexed run (arbor index), ${FIRSTS:-3} runs" "${firsts# } ms" "$mb MB"
  idx=$(du -sb "$cache" | cut -f1)
  row "$n" "$size" "index size" "$(awk -v i="$idx" -v b="$bytes" 'BEGIN { printf "%.0f MB (%.1f %% of the store)", i / 1e6, 100 * i / b }')" ""

  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json)
  row "$n" "$size" "warm: arbor list --all --json" "$ms ms" "$mb MB"

  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json --query '"two words"')
  row "$n" "$size" "warm: arbor list --all --query '\"two words\"'" "$ms ms" "$mb MB"

  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json --query 'error re:fail\w+')
  row "$n" "$size" "warm: arbor list --all --query 'error re:fail\\w+'" "$ms ms" "$mb MB"

  # One project (the one with most sessions under a POSIX path), as `arbor
  # list` in its folder: only that folder's stored rows and sessions are read.
  cwd=$("$ARBOR" --store "$store" list --all --json | python3 -c '
import collections, json, sys
cwds = collections.Counter(json.loads(l)["cwd"] for l in sys.stdin)
print(max((n, c) for c, n in cwds.items() if c.startswith("/"))[1])')
  in_project=$("$ARBOR" --store "$store" list --json --cwd "$cwd" | wc -l)
  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --json --cwd "$cwd")
  row "$n" "$size" "warm: arbor list of one project ($in_project sessions)" "$ms ms" "$mb MB"
  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --json --cwd "$cwd" --query '"two words"')
  row "$n" "$size" "warm: the same with --query '\"two words\"'" "$ms ms" "$mb MB"

  # One session grows by one message: the watcher's path re-reads only that.
  f=$(find "$store" -name '*.jsonl' -type f | sort | sed -n 1p)
  orig=$(stat -c %s "$f")
  total=0 max_kb=0
  for i in $(seq "$REPS"); do
    printf '{"type":"message","id":"bench%04d","parentId":null,"timestamp":"2026-06-01T00:00:00.000Z","message":{"role":"user","content":"an appended benchmark message","timestamp":1780272000000}}\n' "$i" >>"$f"
    out=$("$ARBOR" index --file "$f" --json)
    t=$(echo "$out" | sed -E 's/.*"ms":([0-9.]+).*/\1/')
    total=$(awk -v a="$total" -v b="$t" 'BEGIN { print (a == 0 || b < a) ? b : a }')
  done
  truncate -s "$orig" "$f"
  "$ARBOR" index --file "$f" >/dev/null
  read -r ms mb < <(best 1 "$ARBOR" index --file "$f")
  row "$n" "$size" "append one message, re-index it (in-process; whole process)" "$(printf '%.1f' "$total") ms ($ms ms)" "$mb MB"

  # The picker in a pseudo-terminal, outside in: an id prefix, words, a
  # phrase and a regex with a literal, each typed to its top row on screen.
  if [ "${PICKER:-1}" != 0 ] && python3 -c 'import pyte' 2>/dev/null; then
    # From the 1,000th newest session: its id's first 8 characters, two
    # words of its first message as a phrase, a regex on a third.
    "$ARBOR" --store "$store" list --all --json | sed -n 1000p >"$TMP/row"
    mapfile -t q < <(python3 -c '
import json, re, sys
r = json.load(open(sys.argv[1]))
text = (r.get("firstMessage") or "").lower()
pair = re.search(r"\b([a-z]{3,}) ([a-z]{3,})\b", text)
word = re.findall(r"[a-z]{5,}", text)
print(r["id"][:8])
print("\"%s %s\"" % pair.groups() if pair else "\"session parser\"")
print("re:%s\\w*" % word[-1][:4] if word else "re:fail\\w+")' "$TMP/row")
    python3 "$SHARED/tools/pty_latency.py" --bin "$ARBOR" --store "$store" --runs "${PICKER_RUNS:-3}" \
      --query "${q[0]}" --query 'session parser' --query "${q[1]}" --query "${q[2]}" >"$TMP/pty" 2>&1 || true
    while IFS= read -r line; do
      row "$n" "$size" "picker: $(echo "$line" | sed -E 's/ +median.*//; s/ +$//')" "$(echo "$line" | sed -E 's/.*median +([0-9.]+) ms +\(min ([0-9.]+), max ([0-9.]+)\)/\2\/\1\/\3 ms/')" ""
    done < <(grep median "$TMP/pty")
  fi
  # The picker bench on this store: the full list in a pseudo-terminal and
  # each key of four queries typed into an in-process picker (median of 5
  # launches; keys: median and worst). BENCH_PICKER=0 skips it.
  if [ "${BENCH_PICKER:-1}" != 0 ]; then
    ARBOR_BENCH_STORE=$store cargo bench --quiet --bench picker 2>/dev/null | grep -E 'median' >"$TMP/pb" || true
    while IFS= read -r line; do
      row "$n" "$size" "picker bench: ${line%%:*}" "${line#*: }" ""
    done <"$TMP/pb"
    # The same queries as the pseudo-terminal's, each given whole (as
    # pty_latency.py types them) to an in-process picker on a searcher
    # that has not seen them: the screen's rows final and the whole answer.
    pasted=""
    if [ -n "${q[*]:-}" ]; then
      pasted="${q[0]};;session parser;;${q[1]};;${q[2]}"
    fi
    env ARBOR_BENCH_STORE="$store" ARBOR_BENCH_SKIP_PTY=1 ARBOR_BENCH_PASTE=1 ${pasted:+"ARBOR_BENCH_QUERIES=$pasted"} \
      cargo bench --quiet --bench picker 2>/dev/null | grep -E '^pasted' >"$TMP/pp" || true
    while IFS= read -r line; do
      row "$n" "$size" "picker bench: ${line%% →*}" "${line#*→ }" ""
    done <"$TMP/pp"
  fi

  if [ "${PI:-1}" != 0 ] && command -v node >/dev/null && [ -d tests/pi-reader/node_modules ]; then
    agent=$BENCH/pi-agent-$n
    mkdir -p "$agent"
    ln -sfn "$PWD/$store" "$agent/sessions"
    if PI_CODING_AGENT_DIR=$PWD/$agent run node bench/pi-listall.mjs >"$TMP/pi" 2>/dev/null; then
      read -r us kb <"$TMP/pi"
      row "$n" "$size" "pi SessionManager.listAll ($(cat "$TMP/out"))" "$((us / 1000)) ms" "$((kb / 1024)) MB"
    elif grep -q "heap out of memory" "$TMP/err"; then
      row "$n" "$size" "pi SessionManager.listAll" "out of memory (node heap)" ""
    else
      row "$n" "$size" "pi SessionManager.listAll" "failed: $(grep -m1 -i error "$TMP/err" | cut -c1-80)" ""
    fi
  fi
done
echo "(written to $results)" >&2
