#!/usr/bin/env bash
# `arbor remote sync` of 2,000 realistic sessions over loopback: a real
# sshd on 127.0.0.1 (keys generated here, as tests/common/sshd.rs does),
# rsync over ssh into arbor's cache. Times, under hyperfine:
#   first     the whole store into an empty mirror;
#   nothing   a sync with nothing changed;
#   append    a sync after one message appended to each of 20 sessions;
# and prints, from `arbor remote sync --json`, the bytes that crossed the
# connection against the store's size.
#
#   bench/remote-sync.sh                 # default ARBOR=target/release/arbor (built when missing)
#
# OUT=DIR (default target/bench-remote) holds the store (made once with
# gen_corpus.py --profile realistic --sessions $SESSIONS --seed 1), the
# keys and the mirror; REPS (default 5) runs per figure.
set -euo pipefail

cd "$(dirname "$0")/.."
. bench/hyperfine.sh
ensure_hyperfine
out=$(realpath -m "${OUT:-target/bench-remote}")
sessions=${SESSIONS:-2000}
reps=${REPS:-5}
arbor=${ARBOR:-target/release/arbor}
[ -x "$arbor" ] || nice cargo build --release --locked
arbor=$(realpath "$arbor")
for tool in rsync ssh ssh-keygen; do
  command -v $tool >/dev/null || { echo "$tool is needed (apt-get install rsync openssh-server)" >&2; exit 1; }
done
sshd=$(command -v sshd || echo /usr/sbin/sshd)

store=$out/store
if [ ! -e "$store/.made-$sessions" ]; then
  rm -rf "$store"
  python3 ../shared/corpus/gen_corpus.py "$store" --profile realistic --sessions "$sessions" --seed 1 --jobs 2 >&2
  touch "$store/.made-$sessions"
fi

# The server.
srv=$out/sshd
rm -rf "$srv"
mkdir -p "$srv"
ssh-keygen -q -t ed25519 -N "" -f "$srv/host_key"
ssh-keygen -q -t ed25519 -N "" -f "$srv/user_key"
cp "$srv/user_key.pub" "$srv/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$srv/host_key.pub")" >"$srv/known_hosts"
cat >"$srv/sshd_config" <<CONF
ListenAddress 127.0.0.1
Port $port
HostKey $srv/host_key
PidFile $srv/sshd.pid
AuthorizedKeysFile $srv/authorized_keys
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin prohibit-password
LogLevel ERROR
CONF
[ "$(id -u)" != 0 ] || mkdir -p /run/sshd
"$sshd" -D -e -f "$srv/sshd_config" 2>"$srv/sshd.log" &
sshd_pid=$!
trap 'kill $sshd_pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
  sleep 0.05
done

export ARBOR_SSH="ssh -F /dev/null -i $srv/user_key -p $port -o UserKnownHostsFile=$srv/known_hosts -o GlobalKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes -o LogLevel=ERROR"
export ARBOR_CACHE_DIR=$out/cache
config=$out/config.toml
rm -f "$config"
"$arbor" --config "$config" remote add bench "$(id -un)@127.0.0.1" --path "$store" >/dev/null
mirror=$ARBOR_CACHE_DIR/remotes/bench
sync=("$arbor" --config "$config" remote sync bench)

store_bytes=$(find "$store" -name '*.jsonl' -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
files=$(find "$store" -name '*.jsonl' -type f | wc -l)
# A copy, for the appends (the generated store stays as made).
remote=$out/remote-store
rm -rf "$remote"
cp -a "$store" "$remote"
"$arbor" --config "$config" remote remove bench --purge >/dev/null
"$arbor" --config "$config" remote add bench "$(id -un)@127.0.0.1" --path "$remote" >/dev/null

bytes() { # the figures of one sync, from its JSON
  python3 -c 'import json,sys; v=json.loads(sys.stdin.read()); print(v["files"], v["literal_bytes"], v["bytes_received"], v["bytes_sent"])'
}
append() { # one message appended to each of 20 sessions (the same ones each time)
  find "$remote" -name '*.jsonl' -type f | sort | awk 'NR % 100 == 1' | head -20 | while read -r f; do
    printf '{"type":"message","id":"%s","parentId":null,"timestamp":"2026-12-07T23:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"one more question about the parser"}]}}\n' "$(date +%s%N | tail -c 9)" >>"$f"
  done
}
export -f append
export remote

echo "store: $files files, $store_bytes bytes; $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2/1048576 }' /proc/meminfo); $(rsync --version | head -1); $(ssh -V 2>&1)"
first=$(HF_PREPARE=1 hf_best "$reps" bash -c "rm -rf '$mirror' && $(printf '%q ' "${sync[@]}") >/dev/null")
read -r f lit rec sent < <(rm -rf "$mirror"; "${sync[@]}" --json | bytes)
echo "first     $first   files $f, literal $lit B, received $rec B, sent $sent B; received/store $(python3 -c "print(f'{$rec/$store_bytes:.3f}')")"
nothing=$(hf_best "$reps" "${sync[@]}")
read -r f lit rec sent < <("${sync[@]}" --json | bytes)
echo "nothing   $nothing   files $f, literal $lit B, received $rec B, sent $sent B"
app=$(hf_best "$reps" bash -c "append && $(printf '%q ' "${sync[@]}") >/dev/null")
append
read -r f lit rec sent < <("${sync[@]}" --json | bytes)
echo "append    $app   (timed with the 20 appends) files $f, literal $lit B, received $rec B, sent $sent B"

# For comparison: rsync's usual delta transfer (no --append-verify) of the
# same 20 appends, one pass into a copy of the mirror.
base=$out/delta-mirror
rm -rf "$base"
cp -a "$mirror/root" "$base"
chmod -R u+w "$base"
append
read -r rec sent < <(rsync -rt --relative --delete --stats --no-human-readable -e "$ARBOR_SSH" "$(id -un)@127.0.0.1:$remote" "$base/" |
  awk -F': ' '/^Total bytes received/ { r = $2 } /^Total bytes sent/ { s = $2 } END { print r + 0, s + 0 }')
echo "delta     (plain rsync -rt, one pass, same 20 appends) received $rec B, sent $sent B"
rm -rf "$base"
