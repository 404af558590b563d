#!/usr/bin/env bash
# arbor against the cat floor and the pi agent on generated stress stores.
#
#   bench/compare.sh [SIZE ...]        (default: 2000 10000)
#
# Stores are generated once into target/bench/stress-SIZE (stress profile,
# seed 1, 2 jobs; 10,000 sessions are 5.6 GB) and reused. Files are read
# into the page cache first. Each figure is the best of a few runs (wall
# time, whole process) and the largest max RSS seen. The pi agent's
# SessionManager.listAll is timed when node and tests/pi-reader/node_modules
# are present (`cd tests/pi-reader && npm ci`); skip it with PI=0.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/.."
SIZES=${*:-2000 10000}
BENCH=target/bench
GEN=${ARBOR_SHARED:-../shared}/corpus/gen_corpus.py
REPS=${REPS:-5}
mkdir -p "$BENCH"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cargo build --release --quiet
ARBOR=$PWD/target/release/arbor

# run CMD... -> "<microseconds> <max RSS KiB>"
run() {
  local t0 t1
  t0=$(date +%s%N)
  if ! /usr/bin/time -f "%M" -o "$TMP/rss" "$@" >"$TMP/out" 2>"$TMP/err"; then
    cat "$TMP/err" >&2
    return 1
  fi
  t1=$(date +%s%N)
  echo "$(((t1 - t0) / 1000)) $(tail -1 "$TMP/rss")"
}

# best REPS CMD... -> "<best ms> <max RSS MB>"
best() {
  local reps=$1
  shift
  local best_us=0 max_kb=0 us kb
  for _ in $(seq "$reps"); do
    read -r us kb < <(run "$@")
    if [ "$best_us" = 0 ] || [ "$us" -lt "$best_us" ]; then best_us=$us; fi
    if [ "$kb" -gt "$max_kb" ]; then max_kb=$kb; fi
  done
  awk -v u="$best_us" -v k="$max_kb" 'BEGIN { printf "%.0f %.0f\n", u / 1000, k / 1024 }'
}

cat_all() { find "$1" -name '*.jsonl' -type f -print0 | xargs -0 cat >/dev/null; }
export -f cat_all

results=$BENCH/results.md
{
  echo "# arbor benchmarks ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
  echo
  echo "| sessions | store | what | time | max RSS |"
  echo "| ---: | ---: | --- | ---: | ---: |"
} >"$results"
row() { echo "| $1 | $2 | $3 | $4 | $5 |" | tee -a "$results"; }

for n in $SIZES; do
  store=$BENCH/stress-$n
  if [ ! -f "$store/MANIFEST.json" ]; then
    echo "generating $store ..." >&2
    python3 "$GEN" "$store" --profile stress --sessions "$n" --seed 1 --jobs 2 >&2
  fi
  bytes=$(du -sb --apparent-size "$store" | cut -f1)
  size=$(awk -v b="$bytes" 'BEGIN { printf "%.2f GB", b / 1e9 }')
  cache=$BENCH/cache-$n
  export ARBOR_CACHE_DIR=$PWD/$cache
  cat_all "$store"

  read -r ms mb < <(best 3 bash -c "cat_all '$store'")
  row "$n" "$size" "cat (floor)" "$ms ms" "$mb MB"

  read -r ms mb < <(best 3 "$ARBOR" --store "$store" list --all --json --no-index)
  row "$n" "$size" "scan: arbor list --all --json --no-index" "$ms ms" "$mb MB"

  rm -rf "$cache"
  read -r ms mb < <(best 1 "$ARBOR" --store "$store" list --all --json)
  row "$n" "$size" "first indexed run (builds the index)" "$ms ms" "$mb MB"
  idx=$(du -sb "$cache" | cut -f1)
  row "$n" "$size" "index size" "$(awk -v i="$idx" -v b="$bytes" 'BEGIN { printf "%.0f MB (%.1f %% of the store)", i / 1e6, 100 * i / b }')" ""

  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json)
  row "$n" "$size" "warm: arbor list --all --json" "$ms ms" "$mb MB"

  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json --query '"two words"')
  row "$n" "$size" "warm: arbor list --all --query '\"two words\"'" "$ms ms" "$mb MB"

  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json --query 'error re:fail\w+')
  row "$n" "$size" "warm: arbor list --all --query 'error re:fail\\w+'" "$ms ms" "$mb MB"

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
  read -r us kb < <(run "$ARBOR" index --file "$f")
  row "$n" "$size" "append one message, re-index it (in-process; whole process)" "$(printf '%.1f' "$total") ms ($((us / 1000)) ms)" "$((kb / 1024)) MB"

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
