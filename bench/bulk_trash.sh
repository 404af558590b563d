#!/usr/bin/env bash
# A batch of sessions to the trash and back (#16.1): `arbor trash --all
# --older-than 0h` then `arbor restore` on a generated store, in a trash of
# its own (XDG_DATA_HOME), each step timed by hyperfine (installed when
# absent; bench/hyperfine.sh) over ROUNDS runs, then the pair.
#
#   bench/bulk_trash.sh [SESSIONS]     (default 1000; ROUNDS=5)
#
# The store (stress profile, seed 1, ~16 kB median: 53 MB for 1,000) is
# generated once into target/bulk-bench/SESSIONS with its files dated as
# the generator dates them (none looks live) and reused: every round puts
# every file back. The index is warmed first, as a user's would be.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
ROUNDS=${ROUNDS:-5}
GEN=${ARBOR_SHARED:-../shared}/corpus/gen_corpus.py
DIR=$PWD/target/bulk-bench/$N
. bench/hyperfine.sh
ensure_hyperfine
cargo build --release --quiet
ARBOR=$PWD/target/release/arbor
if [ ! -d "$DIR/store" ]; then
  python3 "$GEN" "$DIR/store" --profile stress --seed 1 --sessions "$N" --median-kb 16 --max-mb 1 >/dev/null
  python3 "$GEN" "$DIR/store" --restore-mtimes >/dev/null
fi
export XDG_DATA_HOME=$DIR/data ARBOR_CACHE_DIR=$DIR/cache
"$ARBOR" --store "$DIR/store" list --all >/dev/null
files=$(find "$DIR/store" -name '*.jsonl' | wc -l)
echo "$files sessions, $(du -sh "$DIR/store" | cut -f1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
trash="$ARBOR --store $DIR/store trash --all --include-internal --older-than 0h"
restore="$ARBOR --store $DIR/store restore"
# Each step's runs start from the state the other leaves: the trash's
# from every file in place, the restore's from a batch in the trash.
echo "hyperfine --runs $ROUNDS --prepare '$restore || true' '$trash'"
hyperfine --runs "$ROUNDS" --prepare "$restore >/dev/null 2>&1 || true" "$trash"
$restore >/dev/null
echo "hyperfine --runs $ROUNDS --prepare '$trash' '$restore'"
hyperfine --runs "$ROUNDS" --prepare "$trash >/dev/null" "$restore"
echo "hyperfine --runs $ROUNDS '$trash && $restore'"
hyperfine --runs "$ROUNDS" "$trash >/dev/null && $restore >/dev/null"
echo "left in the store: $(find "$DIR/store" -name '*.jsonl' | wc -l) of $files"
