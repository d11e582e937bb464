#!/usr/bin/env bash
# The S3 store's throughput against the local folder's, as a package-benchmark suite (StoreBenchmarks): a form of
# one 256 MiB file part spooled with SHA-256 into a folder and into a bucket (8 MiB parts, 4 in flight), back to
# back in each iteration, on each engine: moto, and Ceph's radosgw with a file-backed bluestore OSD.
#   Benchmarks/s3-store.sh [ENGINE...]      default engines moto radosgw
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
engines=("$@")
[ $# -gt 0 ] || engines=(moto radosgw)
work=$(mktemp -d "${TMPDIR:-/tmp}/s3-store.XXXXXX")
source "$root/Benchmarks/s3-engine.sh"
swift build -c release --package-path "$root/Benchmarks" --product StoreBenchmarks 2>&1 | tail -n 1

for engine in "${engines[@]}"; do
  start_engine "$engine" "$work"
  aws --endpoint-url "$endpoint" s3api create-bucket --bucket bench > /dev/null
  echo "== $engine at $endpoint"
  # The suite run directly prints each metric's percentiles (the plugin may print nothing on Linux: README.md).
  S3_BENCH_ENDPOINT=$endpoint S3_BENCH_BUCKET=bench "$root/Benchmarks/.build/release/StoreBenchmarks" \
    | awk '/^Debug results for/ {name = $0} /^[^ ].*:$/ {metric = $0} / 0\.500000000000 / {print name, metric, "p50", $1}' 
  left=$(aws --endpoint-url "$endpoint" s3 ls --recursive s3://bench/ | wc -l)
  echo "$engine: objects left in the bucket: $left"
  stop_engine
  pids=()
done
