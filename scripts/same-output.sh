#!/usr/bin/env bash
# Checks that two arbor binaries print byte-identical output on the same
# stores: `list --json`, and for every session `show`, `show --json`,
# `context`, `search --json` and `export` (Markdown, HTML and JSON Lines).
# A restructuring must leave every byte of it unchanged.
#
#   scripts/same-output.sh OLD_BIN NEW_BIN [WORK_DIR]
#
# Stores (generated fresh, never in ../shared): the conformance corpus, a
# 60-session realistic store, and a mixed Claude Code + Codex + Atomic store.
# Exit status 0 when every output is the same, 1 with the differing
# commands listed otherwise.
set -euo pipefail
old=$(realpath "$1")
new=$(realpath "$2")
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${ARBOR_SHARED:-$root/../shared}
work=${3:-$(mktemp -d)}
mkdir -p "$work"

gen() { # profile dir [args…]
  local profile=$1 dir=$2
  shift 2
  [ -d "$dir" ] || python3 "$shared/corpus/gen_corpus.py" --profile "$profile" "$@" "$dir" >/dev/null
  python3 "$shared/corpus/gen_corpus.py" "$dir" --restore-mtimes >/dev/null 2>&1 || true
}
gen conformance "$work/conformance" --small
gen realistic "$work/realistic" -n 60 --median-kb 60 --max-mb 2
if [ ! -d "$work/agents" ]; then
  python3 "$root/bench/gen_agents.py" --out "$work/agents" --claude 20 --codex 20 \
    --median-kb 40 --max-mb 1 --atomic-from "$work/realistic" --atomic 10 >/dev/null
fi

fails=0
checked=0
# run NAME ARGS… : the same command with both binaries, outputs compared.
run() {
  local name=$1
  shift
  local a b
  a=$(ARBOR_CACHE_DIR="$ARBOR_CACHE_DIR-old" "$old" "$@" 2>&1; echo "exit $?") || true
  b=$(ARBOR_CACHE_DIR="$ARBOR_CACHE_DIR-new" "$new" "$@" 2>&1; echo "exit $?") || true
  checked=$((checked + 1))
  if [ "$a" != "$b" ]; then
    fails=$((fails + 1))
    echo "DIFFERS: $name: $*"
    diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -5
  fi
}

# check NAME STORE-ARGS… : every command on one store. Both binaries share
# the environment (HOME for the agents store) but each gets its own fresh
# index cache, so the index is built and read by each.
check() {
  local name=$1
  shift
  local where=("$@")
  local list
  export ARBOR_CACHE_DIR="$work/cache-$name"
  rm -rf "$ARBOR_CACHE_DIR" "$ARBOR_CACHE_DIR-old" "$ARBOR_CACHE_DIR-new"
  list=$("$new" list --all --json "${where[@]}" 2>/dev/null || true)
  run "$name list" list --all --json "${where[@]}"
  run "$name list internal" list --all --json --include-internal "${where[@]}"
  run "$name list no-index" list --all --json --no-index "${where[@]}"
  for q in fix '"the cache"' 're:err(or)?s?' 'in:tools cargo' 'parser test'; do
    run "$name search $q" search --all --json "${where[@]}" "$q"
    run "$name list --query $q" list --all --json "${where[@]}" --query "$q"
  done
  local paths
  paths=$(printf '%s\n' "$list" | python3 -c 'import sys, json
for l in sys.stdin:
    try: print(json.loads(l)["path"])
    except Exception: pass')
  while IFS= read -r p; do
    [ -n "$p" ] || continue
    run "$name show" show "${where[@]}" "$p"
    run "$name show all" show --filter all "${where[@]}" "$p"
    run "$name show json" show --json "${where[@]}" "$p"
    run "$name context" context "${where[@]}" "$p"
    run "$name context json" context --json "${where[@]}" "$p"
    run "$name export md" export --format md "${where[@]}" "$p"
    run "$name export html" export --format html "${where[@]}" "$p"
    run "$name export json" export --format json --thinking "${where[@]}" "$p"
  done <<<"$paths"
}

# Nothing of the caller's own stores may leak in.
unset ATOMIC_CODING_AGENT_DIR ATOMIC_CODING_AGENT_SESSION_DIR PI_CODING_AGENT_DIR \
  PI_CODING_AGENT_SESSION_DIR CLAUDE_CONFIG_DIR CODEX_HOME
export TZ=UTC HOME="$work/agents"
check conformance --store "$work/conformance"
check realistic --store "$work/realistic"
check agents
echo "$checked commands compared, $fails differ"
[ "$fails" -eq 0 ]
