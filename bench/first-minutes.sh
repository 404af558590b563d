#!/usr/bin/env bash
# The first minutes after installing arbor, on generated stores: the time
# from the first command to a complete index, the commands run while that
# build runs behind, the build alone, the index's size and the warm
# commands after it (the table of issue #55).
#
#   bench/first-minutes.sh [SIZE ...]     (default: 2000)
#   STORE=DIR bench/first-minutes.sh      (an existing store instead)
#   ARBOR=BIN bench/first-minutes.sh ...  (another build; default target/release/arbor)
#   GAP=SECONDS                           (pause between the commands run
#                                          during a build; default 1)
#
# Stores as in bench/compare.sh: target/bench/stress-SIZE (stress profile,
# seed 1), 100000: target/bench/realistic-100000 (realistic, median 20 KiB,
# largest 2 MiB), generated once. The index goes to a fresh folder under
# target/bench-index/ before each first run (ARBOR_CACHE_DIR). Files are
# read into the page cache first. Figures:
# - cat of every file (the floor) and `find -printf '%s %T@'` (one stat
#   per file), `arbor list --all --json --no-index` (no index at all);
# - time to warm: `arbor list --all --json` on an empty index (it answers
#   from the files and starts `arbor index` behind it), until that builder
#   exits, nothing else running (RUNS times, default 3);
# - during the build: `list --all --json` and the phrase query run one
#   after the other, GAP seconds apart (a build behind stops while a
#   command runs), from the first command's answer until the builder
#   exits (each command's range and count), each followed at once by the
#   same command with --no-index (the same load), beside the same commands
#   with --no-index alone and warm;
# - `arbor index` alone on an empty index (wall, user+sys CPU, peak RSS);
# - the index's size as a share of the store;
# - warm: list, a phrase, a regex and an `in:tools` word, REPS runs
#   (default 9) under hyperfine (bench/hyperfine.sh, installed when absent).
# Each hyperfine command is printed on stderr; the table goes to stdout and
# to target/bench-index/first-minutes.md.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/.."
SIZES=${*:-2000}
BENCH=target/bench
SHARED=${ARBOR_SHARED:-../shared}
GEN=$SHARED/corpus/gen_corpus.py
REPS=${REPS:-9}
RUNS=${RUNS:-3}
GAP=${GAP:-1}
PHRASE=${PHRASE:-'"token refresh"'}
mkdir -p "$BENCH" target/bench-index
TMP=$(mktemp -d)
BUILDER=""
cleanup() {
  [ -n "$BUILDER" ] && kill "$BUILDER" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

# shellcheck source=bench/hyperfine.sh
HF_DIR=$TMP/hf
mkdir -p "$HF_DIR"
. bench/hyperfine.sh
ensure_hyperfine

if [ -z "${ARBOR:-}" ]; then
  cargo build --release --quiet
  ARBOR=$PWD/target/release/arbor
fi

now_ms() { echo $(($(date +%s%N) / 1000000)); }
cat_all() { find "$1" -name '*.jsonl' -type f -print0 | xargs -0 cat >/dev/null; }
export -f cat_all

# timed CMD... -> wall milliseconds of one run (output discarded; stderr
# kept in $TMP/err).
timed() {
  local t0
  t0=$(now_ms)
  "$@" >/dev/null 2>"$TMP/err"
  echo $(($(now_ms) - t0))
}

# range LIST -> "min–max ms (median M, n N)"
range() {
  python3 -c '
import sys
v = sorted(int(x) for x in sys.argv[1:])
if not v: print("none ran"); sys.exit()
print("%d–%d ms (median %d, %d runs)" % (v[0], v[-1], v[(len(v) - 1) // 2], len(v)))' "$@"
}

best() {
  local reps=$1
  shift
  printf 'ARBOR_CACHE_DIR=%q hyperfine --runs %s %q\n' "${ARBOR_CACHE_DIR:-}" "$reps" "$(printf '%q ' "$@")" >&2
  hf_best "$reps" "$@"
}

# The builder a first command left behind: its pid, from its note on stderr.
builder_of() { grep -o 'process [0-9]*' "$1" | head -1 | cut -d' ' -f2 || true; }
wait_gone() { while kill -0 "$1" 2>/dev/null; do sleep 0.02; done; }

results=target/bench-index/first-minutes.md
{
  echo "# The first minutes ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $("$ARBOR" --version 2>/dev/null | head -1))"
  echo
  echo "| store | what | figure |"
  echo "| --- | --- | --- |"
} >"$results"

for n in ${STORE:+custom} ${STORE:-$SIZES}; do
  [ -n "${STORE:-}" ] && [ "$n" != custom ] && continue
  case $n in
    custom) store=$STORE ;;
    100000) store=$BENCH/realistic-$n gen=(--profile realistic --median-kb 20 --max-mb 2) ;;
    *) store=$BENCH/stress-$n gen=(--profile stress) ;;
  esac
  if [ "$n" != custom ] && [ ! -f "$store/MANIFEST.json" ]; then
    echo "generating $store ..." >&2
    python3 "$GEN" "$store" "${gen[@]}" --sessions "$n" --seed 1 --jobs 2 >&2
  fi
  bytes=$(du -sb --apparent-size "$store" | cut -f1)
  files=$(find "$store" -name '*.jsonl' -type f | wc -l)
  name="$files files, $(awk -v b="$bytes" 'BEGIN { printf "%.2f GB", b / 1e9 }')"
  row() { echo "| $name | $1 | $2 |" | tee -a "$results"; }
  cache=$PWD/target/bench-index/first-$(basename "$store")
  export ARBOR_CACHE_DIR=$cache
  cat_all "$store"

  read -r ms _ < <(best 3 bash -c "cat_all '$store'")
  row "cat of every file (the floor)" "$ms ms"
  read -r ms _ < <(best 3 find "$store" -name '*.jsonl' -printf '%s %T@\n')
  row "one stat per file (\`find -printf '%s %T@'\`)" "$ms ms"
  read -r ms mb < <(best 3 "$ARBOR" --store "$store" list --all --json --no-index)
  row "\`list --all --json --no-index\`" "$ms ms, $mb MB"
  read -r ms mb < <(best 3 "$ARBOR" --store "$store" list --all --json --no-index --query "$PHRASE")
  row "\`list --all --json --no-index --query '$PHRASE'\`" "$ms ms, $mb MB"

  # Time to warm: the first command, then its builder, alone.
  firsts="" warms=""
  for _ in $(seq "$RUNS"); do
    rm -rf "$cache"
    t0=$(now_ms)
    "$ARBOR" --store "$store" list --all --json >/dev/null 2>"$TMP/first.err"
    t1=$(now_ms)
    BUILDER=$(builder_of "$TMP/first.err")
    [ -n "$BUILDER" ] && wait_gone "$BUILDER"
    BUILDER=""
    firsts="$firsts $((t1 - t0))" warms="$warms $(($(now_ms) - t0))"
  done
  # shellcheck disable=SC2086
  row "first \`list --all --json\` (answers from the files)" "$(range $firsts)"
  # shellcheck disable=SC2086
  row "time to warm: first command → index complete" "$(range $warms)"

  # Commands while the build runs behind the first one.
  rm -rf "$cache"
  t0=$(now_ms)
  "$ARBOR" --store "$store" list --all --json >/dev/null 2>"$TMP/first.err"
  BUILDER=$(builder_of "$TMP/first.err")
  lists="" phrases="" plain_lists="" plain_phrases=""
  while [ -n "$BUILDER" ] && kill -0 "$BUILDER" 2>/dev/null; do
    lists="$lists $(timed "$ARBOR" --store "$store" list --all --json)"
    plain_lists="$plain_lists $(timed "$ARBOR" --store "$store" list --all --json --no-index)"
    sleep "$GAP"
    kill -0 "$BUILDER" 2>/dev/null || break
    phrases="$phrases $(timed "$ARBOR" --store "$store" list --all --json --query "$PHRASE")"
    plain_phrases="$plain_phrases $(timed "$ARBOR" --store "$store" list --all --json --no-index --query "$PHRASE")"
    sleep "$GAP"
  done
  BUILDER=""
  during=$(($(now_ms) - t0))
  # shellcheck disable=SC2086
  row "during the build (${during} ms from the first command): \`list --all --json\`" "$(range $lists)"
  # shellcheck disable=SC2086
  row "during the build: \`list --all --json --query '$PHRASE'\`" "$(range $phrases)"
  # shellcheck disable=SC2086
  row "during the build, each right after the one above: \`list --all --json --no-index\`" "$(range $plain_lists)"
  # shellcheck disable=SC2086
  row "during the build, each right after the one above: \`--no-index --query '$PHRASE'\`" "$(range $plain_phrases)"

  # The build alone.
  rm -rf "$cache"
  read -r ms mb < <(best 1 "$ARBOR" --store "$store" index)
  row "\`arbor index\` on an empty index" "$ms ms wall, $(hf_cpu) s CPU (user+sys), $mb MB"
  idx=$(du -sb "$cache" | cut -f1)
  row "index size" "$(awk -v i="$idx" -v b="$bytes" 'BEGIN { printf "%.1f MB, %.1f %% of the store", i / 1e6, 100 * i / b }')"

  HF_WARMUP=2
  read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json)
  row "warm \`list --all --json\`" "$ms ms, $mb MB"
  for q in "$PHRASE" '"scroll render"' 're:cache\s+leaf' 're:thumb\w+' 'in:tools grapheme'; do
    read -r ms mb < <(best "$REPS" "$ARBOR" --store "$store" list --all --json --query "$q")
    row "warm \`list --all --json --query '$q'\` ($("$ARBOR" --store "$store" list --all --json --query "$q" | wc -l) rows)" "$ms ms, $mb MB"
  done
  HF_WARMUP=0
done
echo "(best/median/worst ms, largest max RSS; written to $results)" >&2
