#!/usr/bin/env bash
# The streaming route against the MultipartKit route of the same app, one server process per measurement (so that
# its peak RSS is its own): a 512 MiB upload, then 50 concurrent uploads of 20 MiB. Prints, per route and load, the
# wall time of the upload(s) and the server's peak RSS (VmHWM).
#   Examples/VaporUpload/Scripts/compare.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-1}
swift build -c release --product VaporUploadServer >/dev/null
server=.build/release/VaporUploadServer
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
head -c $((512 << 20)) /dev/urandom > "$work/big.bin"
head -c $((20 << 20)) /dev/urandom > "$work/small.bin"

# Starts the server on a free port, with the MultipartKit route mounted (bounded at 1 GiB); sets $pid and $port.
start() {
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  KIT_ROUTE_MAX_BYTES=$((1 << 30)) SPOOL_DIR="$work/spool" "$server" serve --env production --hostname 127.0.0.1 --port "$port" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && return; sleep 0.1; done
  echo "the server did not start" >&2; exit 1
}

peak() { awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$pid/status"; }

echo "route load seconds peak_rss_mib"
for round in $(seq "$rounds"); do
  for route in /upload /kit/upload; do
    start
    begin=$(date +%s.%N)
    curl -sS -o /dev/null -F caption=big -F "photos[]=@$work/big.bin" "http://127.0.0.1:$port$route"
    end=$(date +%s.%N)
    echo "$route 512MiB $(awk "BEGIN { printf \"%.2f\", $end - $begin }") $(peak)"
    kill "$pid"; wait "$pid" 2>/dev/null || true

    start
    begin=$(date +%s.%N)
    for _ in $(seq 50); do
      curl -sS -o /dev/null -F caption=small -F "photos[]=@$work/small.bin" "http://127.0.0.1:$port$route" &
    done
    wait $(jobs -p | grep -v "^$pid$")
    end=$(date +%s.%N)
    echo "$route 50x20MiB $(awk "BEGIN { printf \"%.2f\", $end - $begin }") $(peak)"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done
