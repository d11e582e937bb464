#!/usr/bin/env bash
# What a dropped connection costs with and without resumption: a 1 GiB file sent with `multipart send` (release
# build) to the example server (release build, SHA-256 on) through Tests/Peers/front.py, which resets the
# connection once the client has sent N% of the body. With resumption (the default) the tool asks the offset and
# sends the rest; without (`--no-resume --retry 1 --retry-delay 0`) it sends the whole body again. Each drop point
# and mode ROUNDS times, beside an upload through the same front with no drop; prints the bytes the client sent
# (counted by the front) and the time, medians of the rounds.
#   Benchmarks/resume-drops.sh [ROUNDS]        default 3
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/resume-drops.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
swift build -c release --package-path "$root" --product multipart 2>&1 | tail -n 1
server="$root/Examples/UploadServer/.build/release/UploadServer"
tool="$root/.build/release/multipart"
payload=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-1073741824.bin
[ "$(stat -c %s "$payload" 2>/dev/null || echo 0)" = 1073741824 ] || head -c 1073741824 /dev/urandom > "$payload"
mkdir -p "$work/spool"
"$server" --port 0 --spool-dir "$work/spool" > "$work/server.out" 2> /dev/null &
pids=($!)
for _ in $(seq 100); do grep -q listening "$work/server.out" && break; sleep 0.1; done
server_port=$(sed -E 's/.*127\.0\.0\.1:([0-9]+).*/\1/' "$work/server.out")
"$tool" build -F "file=@$payload" -o /dev/null --headers "$work/headers"  # every boundary has one length
length=$(sed -n 's/^Content-Length: //p' "$work/headers" | tr -d '\r')

# One upload through a new front taking ACTIONS, with the tool's extra ARGS: prints "SECONDS CLIENT_BYTES".
through_front() {
  local actions=$1
  shift
  mkfifo "$work/control"
  python3 "$root/Tests/Peers/front.py" "$server_port" "$actions" < "$work/control" > "$work/front.out" &
  local front=$!
  exec 3> "$work/control"
  for _ in $(seq 100); do [ -s "$work/front.out" ] && break; sleep 0.05; done
  local port
  port=$(head -n 1 "$work/front.out")
  local started ended
  started=$(date +%s.%N)
  "$tool" send -s -o "$work/answer.json" "$@" -F "file=@$payload" "http://127.0.0.1:$port/upload"
  ended=$(date +%s.%N)
  grep -q '"sha256"' "$work/answer.json" || { echo "no answer: $(cat "$work/answer.json")" >&2; exit 1; }
  exec 3>&-
  wait "$front"
  rm -f "$work/control"
  echo "$(python3 -c "print(round($ended - $started, 3))") $(sed -n 's/^client bytes //p' "$work/front.out")"
}

: > "$work/rows"
for round in $(seq "$rounds"); do
  echo "plain 0 $(through_front proxy)" >> "$work/rows"
  for percent in 25 50 75 90; do
    cut=$((length * percent / 100))
    echo "resumed $percent $(through_front "cut:$cut,proxy")" >> "$work/rows"
    echo "whole $percent $(through_front "cut:$cut,proxy" --no-resume --retry 1 --retry-delay 0)" >> "$work/rows"
  done
  echo "round $round done"
done
python3 - "$work/rows" "$length" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
length = int(sys.argv[2])
def median(mode, percent, index):
    return statistics.median(float(r[index]) for r in rows if r[0] == mode and r[1] == str(percent))
plain = median("plain", 0, 2)
print(f"no drop: {plain:.2f} s, {median('plain', 0, 3) / 2**20:.0f} MiB sent for a body of {length / 2**20:.0f} MiB")
print("| drop at | resumed: bytes sent again | resumed: time lost | sent whole again: bytes | sent whole again: time lost |")
print("|---|---|---|---|---|")
for percent in (25, 50, 75, 90):
    cells = []
    for mode in ("resumed", "whole"):
        again = median(mode, percent, 3) - length
        lost = median(mode, percent, 2) - plain
        cells += [f"{again / 2**20:.1f} MiB", f"{lost:.2f} s"]
    print(f"| {percent}% | " + " | ".join(cells) + " |")
PY
ls "$work/spool" | wc -l | xargs echo "files left in the spool folder:"
