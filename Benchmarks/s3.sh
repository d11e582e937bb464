#!/usr/bin/env bash
# A 1 GiB upload through the example server into S3 (`--store`, part size 8 MiB, 4 parts in flight) against
# `aws s3 cp` of the same file to the same endpoint and against the same server spooling to its local folder,
# in turn, ROUNDS times, on each engine: moto, and Ceph's radosgw on a one-node cluster with a file-backed
# bluestore OSD. Prints each round, the medians and ranges, and the store server's idle and peak RSS (the bound:
# partSize × (concurrency + 1) + idle RSS + 16 MiB). Benchmarks/s3-store.sh measures the store itself, in-process.
#   Benchmarks/s3.sh [ROUNDS] [ENGINE...]      default 3 rounds, engines moto radosgw
set -euo pipefail
rounds=${1:-3}
shift || true
engines=("${@:-moto radosgw}")
[ $# -gt 0 ] || engines=(moto radosgw)
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/s3-bench.XXXXXX")
source "$root/Benchmarks/s3-engine.sh"

swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
server="$root/Examples/UploadServer/.build/release/UploadServer"
payload=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-1073741824.bin
[ "$(stat -c %s "$payload" 2>/dev/null || echo 0)" = 1073741824 ] || head -c 1073741824 /dev/urandom > "$payload"
part_size=$((8 << 20))
concurrency=4

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
range() { sort -n | awk 'NR==1{min=$1} {max=$1} END {printf "%s–%s", min, max}'; }
kib() { awk -v key="$2:" '$1==key {print $2}' "/proc/$1/status"; }

for engine in "${engines[@]}"; do
  start_engine "$engine" "$work"
  bucket=bench
  aws --endpoint-url "$endpoint" s3api create-bucket --bucket "$bucket" > /dev/null
  "$server" --port 0 --store "s3://$bucket/ours/" --s3-endpoint "$endpoint" --s3-part-size "$part_size" \
    --s3-concurrency "$concurrency" > "$work/server.out" 2> "$work/server.err" &
  server_pid=$!
  pids+=("$server_pid")
  until grep -q listening "$work/server.out" 2>/dev/null; do sleep 0.1; done
  port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$work/server.out" | head -n 1)
  idle=$(kib "$server_pid" VmRSS)
  mkdir -p "$work/spool"
  "$server" --port 0 --spool-dir "$work/spool" > "$work/local.out" 2> /dev/null &
  local_pid=$!
  pids+=("$local_pid")
  until grep -q listening "$work/local.out" 2>/dev/null; do sleep 0.1; done
  local_port=$(sed -n 's/.*127.0.0.1:\([0-9]*\).*/\1/p' "$work/local.out" | head -n 1)
  : > "$work/ours"
  : > "$work/aws"
  : > "$work/local"
  for round in $(seq 1 "$rounds"); do
    sync
    start=$(date +%s.%N)
    answer=$(curl -sS -F "video=@$payload" "http://127.0.0.1:$port/upload")
    ours=$(echo "$(date +%s.%N) - $start" | bc)
    echo "$answer" | grep -q '"key"' || { echo "the server did not store the file: $answer" >&2; exit 1; }
    sync
    start=$(date +%s.%N)
    aws --endpoint-url "$endpoint" s3 cp --only-show-errors "$payload" "s3://$bucket/aws/upload.bin"
    theirs=$(echo "$(date +%s.%N) - $start" | bc)
    sync
    start=$(date +%s.%N)
    curl -sS -o /dev/null -F "video=@$payload" "http://127.0.0.1:$local_port/upload"
    sync
    spooled=$(echo "$(date +%s.%N) - $start" | bc)
    echo "$ours" >> "$work/ours"
    echo "$theirs" >> "$work/aws"
    echo "$spooled" >> "$work/local"
    printf '%s round %d: server --store %.2f s, aws s3 cp %.2f s, server to its folder %.2f s\n' "$engine" \
      "$round" "$ours" "$theirs" "$spooled"
    aws --endpoint-url "$endpoint" s3 rm --only-show-errors --recursive "s3://$bucket/" # room for the next round
  done
  peak=$(kib "$server_pid" VmHWM)
  left=$(aws --endpoint-url "$endpoint" s3api list-multipart-uploads --bucket "$bucket" --output json | grep -c UploadId || true)
  echo "$engine: server --store median $(median < "$work/ours") s ($(range < "$work/ours")), aws s3 cp median" \
    "$(median < "$work/aws") s ($(range < "$work/aws")); part size $part_size, $concurrency in flight" \
    "(aws s3 cp: its defaults, 8 MiB parts, 10 in flight); to the local folder, median" \
    "$(median < "$work/local") s ($(range < "$work/local"))"
  echo "$engine: server RSS idle $((idle / 1024)) MiB, peak $((peak / 1024)) MiB; bound" \
    "$(( (part_size * (concurrency + 1) >> 20) + idle / 1024 + 16 )) MiB; multipart uploads left: $left"
  kill "$server_pid" "$local_pid"
  stop_engine
  pids=()
done
