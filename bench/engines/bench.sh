#!/usr/bin/env bash
# arbor's index engine against two library engines, tantivy and SQLite FTS5 (unicode61 +
# fts5vocab), each a small prototype in this folder (a Cargo workspace of its own, not built by
# arbor's). Usage: bench/engines/bench.sh N [phase...]   N = 2000 | 10000
# phases: setup build query append (default: all). Stores and indexes go under
# target/engines/ (generated: `gen_corpus.py --profile stress --sessions N --seed 1`); the
# prototypes are built here (cargo build --release) and arbor's release binary is $ARBOR
# (default: the workspace's target/release/arbor). Results: docs/index-design.md.
set -euo pipefail
cd "$(dirname "$0")"
repo=$(cd ../.. && pwd)
command -v hyperfine >/dev/null || sudo apt-get install -y hyperfine || cargo install hyperfine --locked
cargo build --release --quiet
N=$1; shift
WORK=${WORK:-$repo/target/engines}
mkdir -p "$WORK/stores"
[ -d "$WORK/stores/s$N" ] || python3 "${ARBOR_SHARED:-$repo/../shared}/corpus/gen_corpus.py" \
  --profile stress --sessions "$N" --seed 1 "$WORK/stores/s$N"
PHASES=${*:-setup build query append}
ARBOR=${ARBOR:-$repo/target/release/arbor}
TV=$PWD/target/release/tantivy-proto; FT=$PWD/target/release/fts5-proto
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-$WORK/results/$N}; IDX=$WORK/idx/$N; mkdir -p "$OUT" "$IDX"
ENGINES="arbor tantivy fts5"
load() { echo "$(date -u +%FT%TZ) $1: $(uptime)" >> "$OUT/load.log"; }
store() { echo "$WORK/stores/s$N-$1"; }
# The session that grows in the append phase: the store's median-sized file.
TARGET=$(cd "$WORK/stores/s$N" && find . -name '*.jsonl' -printf '%s %p\n' | sort -n | awk '{a[NR]=$2} END {print a[int(NR/2)]}')

build_cmd() {
  case $1 in
    arbor) echo "env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR index --store $(store arbor)" ;;
    tantivy) echo "$TV build $(store tantivy) $IDX/tantivy" ;;
    fts5) echo "$FT build $(store fts5) $IDX/fts5.db" ;;
  esac
}
size_of() {
  case $1 in
    arbor) du -sb "$IDX/arbor" | cut -f1 ;;
    tantivy) du -sb "$IDX/tantivy" | cut -f1 ;;
    fts5) cat "$IDX"/fts5.db* | wc -c ;;
  esac
}

if [[ $PHASES == *setup* ]]; then
  # One hard-linked copy of the store per engine (no extra space); the growing session is a
  # real copy in each, so an append to one engine's store is not a change in another's.
  for e in $ENGINES; do
    d=$(store $e)
    [ -d "$d" ] || { cp -al "$WORK/stores/s$N" "$d"; cp --remove-destination "$WORK/stores/s$N/$TARGET" "$d/$TARGET"; }
  done
fi

if [[ $PHASES == *build* ]]; then
  load "build start"
  echo -e "round\tengine\twall_s\tuser_s\tsys_s\tmaxrss_kb\tindex_bytes" > "$OUT/build.tsv"
  for r in $(seq 1 "$ROUNDS"); do
    # Rotate the order each round; the store is read once before each run (page cache warm).
    order=$(echo $ENGINES | tr ' ' '\n' | awk -v r=$r '{a[NR]=$0} END {for (i=0;i<NR;i++) print a[(i+r-1)%NR+1]}')
    for e in $order; do
      clear_idx_one() { case $e in arbor) rm -rf "$IDX/arbor"; mkdir -p "$IDX/arbor" ;; tantivy) rm -rf "$IDX/tantivy" ;; fts5) rm -f "$IDX"/fts5.db* ;; esac; }
      clear_idx_one; sync
      find "$(store $e)" -name '*.jsonl' -print0 | xargs -0 cat > /dev/null
      /usr/bin/time -o "$OUT/time.tmp" -f "%e\t%U\t%S\t%M" $(build_cmd $e) > /dev/null 2>&1
      t=$(tail -1 "$OUT/time.tmp")
      echo -e "$r\t$e\t$t\t$(size_of $e)" | tee -a "$OUT/build.tsv"
    done
  done
  load "build end"
fi

QUERIES=("grapheme" '"scroll render"' 're:thumb\w+' 're:cache\s+leaf' 'in:tools grapheme')
if [[ $PHASES == *query* ]]; then
  load "query start"
  echo -e "query\tarbor_list\tarbor_search_entries\ttantivy\tfts5" > "$OUT/counts.tsv"
  find "$WORK/stores/s$N" -name '*.jsonl' -print0 | xargs -0 cat > /dev/null
  i=0
  for q in "${QUERIES[@]}"; do
    i=$((i+1))
    al=$(env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR list --all --json --store "$(store arbor)" --query "$q" | wc -l)
    as=$(env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR search --all --json --store "$(store arbor)" "$q" | wc -l)
    tv=$($TV search "$(store tantivy)" "$IDX/tantivy" "$q" 2>/dev/null | wc -l)
    ft=$($FT search "$(store fts5)" "$IDX/fts5.db" "$q" 2>/dev/null | wc -l)
    echo -e "$q\t$al\t$as\t$tv\t$ft" | tee -a "$OUT/counts.tsv"
    hyperfine -N --warmup 3 --runs "${QRUNS:-10}" --export-json "$OUT/query$i.json" \
      -n "arbor list --query" "env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR list --all --json --store $(store arbor) --query '$q'" \
      -n "arbor search" "env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR search --all --json --store $(store arbor) '$q'" \
      -n "tantivy" "$TV search $(store tantivy) $IDX/tantivy '$q'" \
      -n "fts5" "$FT search $(store fts5) $IDX/fts5.db '$q'"
  done
  load "query end"
fi

if [[ $PHASES == *append* ]]; then
  load "append start"
  env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR index --store "$(store arbor)" > /dev/null
  $TV update "$(store tantivy)" "$IDX/tantivy"; $FT update "$(store fts5)" "$IDX/fts5.db"
  # Each run first appends 5 entries (user, assistant, tool result, ...) to the median session.
  ap() { echo "python3 $PWD/scripts/append.py $(store $1)/$TARGET 5"; }
  hyperfine -N --warmup 2 --runs "${ARUNS:-10}" --export-json "$OUT/append.json" \
    --prepare "$(ap arbor)" -n "arbor index" "env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR index --store $(store arbor)" \
    --prepare "$(ap tantivy)" -n "tantivy update" "$TV update $(store tantivy) $IDX/tantivy" \
    --prepare "$(ap fts5)" -n "fts5 update" "$FT update $(store fts5) $IDX/fts5.db"
  # The same commands with nothing appended (the cost of looking at every file).
  hyperfine -N --warmup 2 --runs "${ARUNS:-10}" --export-json "$OUT/noop.json" \
    -n "arbor index" "env ARBOR_CACHE_DIR=$IDX/arbor $ARBOR index --store $(store arbor)" \
    -n "tantivy update" "$TV update $(store tantivy) $IDX/tantivy" \
    -n "fts5 update" "$FT update $(store fts5) $IDX/fts5.db"
  for e in $ENGINES; do echo -e "$e\t$(size_of $e)"; done > "$OUT/size_after_append.tsv"
  load "append end"
fi
