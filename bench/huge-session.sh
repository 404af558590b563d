#!/usr/bin/env bash
# Peak memory and wall time of the commands that read one session, on two
# hostile sessions (bench/gen_huge.py): 1,000,000 lines (~250 MB) and one
# line of 200 MB. Each command runs once under `/usr/bin/time -v`; the tree
# screen runs in tmux until it is idle (its CPU time stops moving), then
# again with a search typed into it. The goals are printed beside each
# figure: 300 MB for the million lines, twice the largest line for the big
# one (docs/spec.md §"memory": memory follows what is shown, not the file).
#
#   bench/huge-session.sh [BINARY ...]      # default target/release/arbor
#
# OUT=DIR (default target/huge-session) holds the generated store (kept,
# made once); LINES and BIG_MB change the sessions' sizes; ONLY="fork tree"
# runs only the commands named.
set -euo pipefail

cd "$(dirname "$0")/.."
out=${OUT:-target/huge-session}
lines=${LINES:-1000000}
big_mb=${BIG_MB:-200}
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/arbor)
only=${ONLY:-fork context export-md export-html export-json diff label tree search}

if [ ! -x /usr/bin/time ]; then
  apt-get install -y time >/dev/null || sudo apt-get install -y time >/dev/null
fi
command -v tmux >/dev/null || apt-get install -y tmux >/dev/null

store=$out/store
stamp=$store/.made-$lines-$big_mb
if [ ! -e "$stamp" ]; then
  rm -rf "$store"
  echo "generating $lines lines and a $big_mb MB line into $store ..." >&2
  python3 bench/gen_huge.py "$store" --lines "$lines" --big-mb "$big_mb"
  touch "$stamp"
fi
many=$(ls "$store"/many/--bench--/*.jsonl)
big=$(ls "$store"/big/--bench--/*.jsonl)
work=$out/work
mkdir -p "$work"
export ARBOR_CACHE_DIR=$work/cache

mb() { echo $(( $(stat -c %s "$1") / 1000000 )); }
many_mb=$(mb "$many")
big_mb_real=$(mb "$big")
goal_many=300
goal_big=$(( 2 * big_mb_real ))
# The last entry of the main line, and the tip of the last side branch.
many_leaf=$(printf '%08x' $(( lines - 1 )))
many_side=$(printf '%08x' $(( (lines - 1) / 50000 * 50000 + 17 )))

# row NAME SESSION_LABEL GOAL_MB TIMEFILE
row() {
  local rss wall
  rss=$(awk -F': ' '/Maximum resident set size/ { print int($2 / 1024) }' "$4")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$4")
  local verdict=ok
  [ "$rss" -le "$3" ] || verdict=OVER
  printf '%-14s %-10s %8s MB  %10s  goal <= %4s MB  %s\n' "$1" "$2" "$rss" "${5:-$wall}" "$3" "$verdict"
}

# measure NAME LABEL GOAL CMD...: the command's output is thrown away.
measure() {
  local name=$1 label=$2 goal=$3
  shift 3
  local t=$work/time.txt
  if ! /usr/bin/time -v -o "$t" "$@" >/dev/null 2>"$work/stderr.txt"; then
    echo "$name failed: $(head -c 300 "$work/stderr.txt")" >&2
  fi
  row "$name" "$label" "$goal" "$t"
}

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo gone; }

# Waits until PID has used no CPU for a second; prints the seconds waited.
settle() {
  local pid=$1 start last now same=0
  start=$(date +%s.%N)
  last=$(cpu_ticks "$pid")
  while [ $same -lt 4 ]; do
    sleep 0.25
    now=$(cpu_ticks "$pid")
    [ "$now" = gone ] && break
    if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
    last=$now
  done
  echo "$(date +%s.%N) - $start - 1" | bc
}

# tree LABEL GOAL SESSION QUERY: the tree screen opened, then QUERY typed.
tree() {
  local label=$1 goal=$2 session=$3 query=$4 t=$work/time-tree.txt tmx=arbor-huge-session
  rm -f "$t"
  tmux kill-session -t $tmx 2>/dev/null || true
  tmux new-session -d -x 160 -y 45 -s $tmx \
    "ARBOR_CACHE_DIR='$ARBOR_CACHE_DIR' /usr/bin/time -v -o '$t' '$bin' tree '$session'"
  local pid=
  for _ in $(seq 1 100); do
    pid=$(pgrep -f "^$bin tree $session" | head -1 || true)
    [ -n "$pid" ] && break
    sleep 0.05
  done
  [ -n "$pid" ] || { echo "tree did not start" >&2; return; }
  local opened searched
  opened=$(settle "$pid")
  local hwm_open
  hwm_open=$(awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$pid/status")
  tmux send-keys -t $tmx -l "$query"
  searched=$(settle "$pid")
  # The high-water mark read from the running process (a key that quits
  # from the search box differs between versions).
  local hwm_search
  hwm_search=$(awk '/^VmHWM:/ { print int($2 / 1024) }' "/proc/$pid/status")
  tmux send-keys -t $tmx Escape
  tmux send-keys -t $tmx C-c
  tmux kill-session -t $tmx 2>/dev/null || true
  local verdict=ok
  [ "$hwm_open" -le "$goal" ] || verdict=OVER
  printf '%-14s %-10s %8s MB  %9ss  goal <= %4s MB  %s\n' "tree open" "$label" "$hwm_open" "$opened" "$goal" "$verdict"
  verdict=ok
  [ "$hwm_search" -le "$goal" ] || verdict=OVER
  printf '%-14s %-10s %8s MB  %9ss  goal <= %4s MB  %s\n' "tree+search" "$label" "$hwm_search" "$searched" "$goal" "$verdict"
}

for bin in "${bins[@]}"; do
  bin=$(realpath "$bin")
  echo "$bin ($("$bin" --version 2>/dev/null || true))"
  echo "sessions: $many_mb MB in $lines lines; one line of $big_mb_real MB"
  printf '%-14s %-10s %11s  %10s\n' command session "peak RSS" wall
  for what in $only; do
    for which in many big; do
      if [ $which = many ]; then
        s=$many label="${many_mb}MB" goal=$goal_many leaf=$many_leaf side=$many_side q=schema
      else
        s=$big label="1 line" goal=$goal_big leaf=00000005 side=00000003 q=needle-end
      fi
      case $what in
        fork) measure fork "$label" "$goal" "$bin" fork "$s" "$leaf" --out "$work/forked.jsonl"
          rm -f "$work/forked.jsonl" ;;
        context) measure "context --json" "$label" "$goal" "$bin" context --json "$s" ;;
        export-md) measure "export md" "$label" "$goal" "$bin" export --format md "$s" ;;
        export-html) measure "export html" "$label" "$goal" "$bin" export --format html "$s" ;;
        export-json) measure "export json" "$label" "$goal" "$bin" export --format json "$s" ;;
        diff) measure diff "$label" "$goal" "$bin" diff "$s" "$side" "$leaf" ;;
        label)
          cp "$s" "$work/label.jsonl"
          measure label "$label" "$goal" "$bin" label "$work/label.jsonl" "$leaf" bench
          rm -f "$work/label.jsonl" ;;
        tree) tree "$label" "$goal" "$s" "$q" ;;
        search)
          measure search "$label" "$goal" "$bin" search --no-index --store "$store/$which" --all "$q" ;;
      esac
    done
  done
done
