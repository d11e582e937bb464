#!/usr/bin/env bash
# `multipart send` against `curl -F`: the same 1 GiB file posted to the example server (release build, SHA-256 on)
# on loopback, alternately, ROUNDS times; the same server process takes both. Each upload starts after `sync`, so
# that the server's write-back of the previous file does not fall on the next client, and the order of the two
# alternates from round to round.
#   Benchmarks/send.sh [ROUNDS]        default 5; prints each round, then the medians, the spread and the ratios
set -euo pipefail
rounds=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/send-bench.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

swift build -c release --package-path "$root" --product multipart 2>&1 | tail -n 1
swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
multipart="$root/.build/release/multipart"
server="$root/Examples/UploadServer/.build/release/UploadServer"
payload=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-1073741824.bin
[ "$(stat -c %s "$payload" 2>/dev/null || echo 0)" = 1073741824 ] || head -c 1073741824 /dev/urandom > "$payload"
cat "$payload" > /dev/null  # in the page cache for both clients alike
mkdir -p "$work/spool"

"$server" --port 0 --spool-dir "$work/spool" > "$work/server.out" 2> /dev/null &
pids=($!)
for _ in $(seq 100); do grep -q listening "$work/server.out" && break; sleep 0.1; done
port=$(sed -E 's/.*127\.0\.0\.1:([0-9]+).*/\1/' "$work/server.out")
url="http://127.0.0.1:$port/upload"

source "$root/Benchmarks/upload-timing.sh"
: > "$work/times"
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then
    curl_time=$(timed_upload curl -sS -F "file=@$payload" "$url")
    send_time=$(timed_upload "$multipart" send "$url" -F "file=@$payload" --silent)
  else
    send_time=$(timed_upload "$multipart" send "$url" -F "file=@$payload" --silent)
    curl_time=$(timed_upload curl -sS -F "file=@$payload" "$url")
  fi
  echo "round $round: curl -F ${curl_time}s  multipart send ${send_time}s"
  echo "$curl_time $send_time" >> "$work/times"
done
python3 - "$work/times" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
for index, name in enumerate(["curl -F", "multipart send"]):
    values = sorted(row[index] for row in rows)
    median = statistics.median(values)
    print(f"{name:15s} median {median:.2f} s ({1024 / median:.0f} MiB/s), range {values[0]:.2f}-{values[-1]:.2f} s")
ratios = sorted(row[0] / row[1] for row in rows)
print(f"curl time / multipart send time, per round: median {statistics.median(ratios):.2f}, "
      f"range {ratios[0]:.2f}-{ratios[-1]:.2f} (above 1: send is faster)")
PY
echo "server peak RSS: $(grep VmHWM /proc/${pids[0]}/status | awk '{print $2, $3}')"
ls "$work/spool" | wc -l | xargs echo "files left in the spool folder:"
