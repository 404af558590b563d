#!/usr/bin/env bash
# The picker's memory as the system sees it: the real binary in a tmux
# window on STORE, its resident set (/proc/PID/status) once the rows are in,
# then after each of four queries typed as a user types them (a word being
# typed, a second word, a phrase, a regex). Builds alternated with several
# runs each give the README's paired figures.
#
#   bench/picker_memory.sh STORE [BINARY...]
#
# BINARY defaults to target/release/arbor; ARBOR_CACHE_DIR chooses the
# index (warm it first: `arbor index --store STORE`). Needs tmux.
#
# KEY_DELAY=0.08 types each query a key at a time, as a person does (each
# prefix is then searched; a burst is searched once), and then 30 more
# words, as a longer session of typing leaves the picker.
set -euo pipefail

store=${1:?usage: bench/picker_memory.sh STORE [BINARY...]}
shift
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/arbor)
session=arbor-picker-memory

status() {
  awk '/^(VmHWM|RssAnon|RssFile):/ { printf "%s %d MB  ", $1, $2 / 1024 }' "/proc/$1/status"
}

type_query() {
  if [ "${KEY_DELAY:-0}" = 0 ]; then
    tmux send-keys -t "$session" -l "$1"
  else
    local i
    for ((i = 0; i < ${#1}; i++)); do
      tmux send-keys -t "$session" -l "${1:i:1}"
      sleep "$KEY_DELAY"
    done
  fi
}

for bin in "${bins[@]}"; do
  bin=$(realpath "$bin")
  tmux kill-session -t "$session" 2>/dev/null || true
  tmux new-session -d -x 160 -y 45 -s "$session" \
    "ARBOR_CACHE_DIR='${ARBOR_CACHE_DIR:-}' '$bin' --store '$store'; sleep 30"
  pid=
  for _ in $(seq 1 50); do
    pid=$(pgrep -f "^$bin --store $store" | head -1 || true)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || { echo "$bin did not start" >&2; exit 1; }
  # The rows are in once the header no longer says it is loading.
  for _ in $(seq 1 240); do
    sleep 0.5
    tmux capture-pane -p -t "$session" | grep -qi 'loading\|reading\|indexing' || break
  done
  sleep 2
  echo "$bin"
  echo "  rows in:      $(status "$pid")"
  for q in 'ses' ' handl' '"the t' 're:fail\w+'; do
    case $q in '"'* | re:*) tmux send-keys -t "$session" C-u ;; esac
    type_query "$q"
    sleep 3
    printf '  %-13s %s\n' "$q:" "$(status "$pid")"
  done
  if [ "${KEY_DELAY:-0}" != 0 ]; then
    for w in parser token cache render error config index tree label fork \
      merge build test panic thread folder commit branch agent model \
      usage trash query scroll width entry reply prompt schema filter; do
      tmux send-keys -t "$session" C-u
      type_query "$w"
    done
    sleep 3
    printf '  %-13s %s\n' "30 words:" "$(status "$pid")"
  fi
  tmux send-keys -t "$session" Escape
  sleep 0.5
  tmux kill-session -t "$session" 2>/dev/null || true
done
