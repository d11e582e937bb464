#!/usr/bin/env bash
# What offering resumption costs when nothing is cut: a 1 GiB file uploaded with `curl -F` to the example server
# (release build, no digest, so that the server's own work is all there is to see) with resumption off
# (`--resume-window 0`) and on (the default), each upload offering it (`Upload-Draft-Interop-Version: 6`,
# `Upload-Complete: ?1`: the server on answers 104 and reads the body through the resumable body), alternately,
# ROUNDS times; the order within a round alternates too.
# Wall time is noisy on a shared machine; the server's CPU time (user + system, from /proc) for each upload is the
# steadier measure of what the resumable body adds.
#   Benchmarks/resume.sh [ROUNDS]        default 5; prints each round, then the medians and the ratios' spread
set -euo pipefail
rounds=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/resume-bench.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
server="$root/Examples/UploadServer/.build/release/UploadServer"
payload=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-1073741824.bin
[ "$(stat -c %s "$payload" 2>/dev/null || echo 0)" = 1073741824 ] || head -c 1073741824 /dev/urandom > "$payload"
mkdir -p "$work/spool"

"$server" --port 0 --spool-dir "$work/spool" --digest none --resume-window 0 > "$work/off.out" 2> /dev/null &
off_pid=$!
"$server" --port 0 --spool-dir "$work/spool" --digest none > "$work/on.out" 2> /dev/null &
on_pid=$!
pids=("$off_pid" "$on_pid")
for _ in $(seq 100); do
  grep -q listening "$work/off.out" && grep -q listening "$work/on.out" && break
  sleep 0.1
done
port() { sed -E 's/.*127\.0\.0\.1:([0-9]+).*/\1/' "$1"; }
off_port=$(port "$work/off.out")
on_port=$(port "$work/on.out")

# The CPU seconds process $1 has used.
cpu() { awk -v tick="$(getconf CLK_TCK)" '{ print ($14 + $15) / tick }' "/proc/$1/stat"; }
# Prints "SECONDS CPU_SECONDS" of an upload to port $1 (server pid $2); fails unless the server answered 200.
upload() {
  local headers="$work/headers.$1"
  local time before after
  before=$(cpu "$2")
  time=$(curl -sS -o /dev/null -D "$headers" -w '%{time_total}' -H 'Upload-Draft-Interop-Version: 6' \
    -H 'Upload-Complete: ?1' -F "file=@$payload" "http://127.0.0.1:$1/upload")
  after=$(cpu "$2")
  grep -q '^HTTP/1.1 200' "$headers" || { echo "no 200 from port $1" >&2; exit 1; }
  echo "$time $(python3 -c "print(round($after - $before, 2))")"
}
curl -sS -o /dev/null -D "$work/probe" -H 'Upload-Draft-Interop-Version: 6' -H 'Upload-Complete: ?1' \
  -F "caption=probe" "http://127.0.0.1:$on_port/upload"
grep -q '^HTTP/1.1 104' "$work/probe" || { echo "the server with resumption on did not announce it" >&2; exit 1; }
: > "$work/times"
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then off=$(upload "$off_port" "$off_pid"); on=$(upload "$on_port" "$on_pid")
  else on=$(upload "$on_port" "$on_pid"); off=$(upload "$off_port" "$off_pid"); fi
  echo "round $round: resumption off ${off% *} s (server CPU ${off#* } s)  on ${on% *} s (server CPU ${on#* } s)"
  echo "$off $on" >> "$work/times"
done
python3 - "$work/times" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]  # off time, off CPU, on time, on CPU
for index, name in [(0, "resumption off"), (2, "resumption on")]:
    times, cpus = sorted(row[index] for row in rows), sorted(row[index + 1] for row in rows)
    median = statistics.median(times)
    print(f"{name:15s} median {median:.3f} s ({1024 / median:.0f} MiB/s), range {times[0]:.3f}-{times[-1]:.3f} s;"
          f" server CPU median {statistics.median(cpus):.2f} s, range {cpus[0]:.2f}-{cpus[-1]:.2f} s")
for index, name in [(0, "time"), (1, "server CPU")]:
    ratios = sorted(row[index + 2] / row[index] for row in rows)
    print(f"on / off, {name}, per round: median {statistics.median(ratios):.3f}x, range {ratios[0]:.3f}-{ratios[-1]:.3f}x")
PY
for pid in "$off_pid" "$on_pid"; do
  echo "server $pid peak RSS: $(grep VmHWM /proc/$pid/status | awk '{print $2, $3}')"
done
ls "$work/spool" | wc -l | xargs echo "files left in the spool folder:"
