#!/usr/bin/env bash
# The library before and after a change, in the same run: parse, spool to disk with SHA-256, spool into S3 (moto),
# decode. Builds the suites in a worktree of BEFORE_REF (once; `git worktree add`), and in this checkout, then runs
# the two executables alternately, ROUNDS times, printing each benchmark's p50 per round and the median and spread
# of the after ÷ before ratios.
#   Benchmarks/before-after.sh BEFORE_REF [ROUNDS]        default 3 rounds; BEFORE_DIR (default /tmp/before)
# With --end-to-end, it times 1 GiB uploads instead, end to end on loopback (send.sh's and upload.sh's, before and
# after): `multipart send` of each tree to one server (this checkout's), and `curl -F` to each tree's example server
# (SHA-256 on), both built for release in each tree (about 15 minutes a tree).
#   Benchmarks/before-after.sh BEFORE_REF ROUNDS --end-to-end
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
before_ref=${1:?usage: before-after.sh BEFORE_REF [ROUNDS] [--end-to-end]}
rounds=${2:-3}
end_to_end=false
[ "${3:-}" = --end-to-end ] && end_to_end=true
before=${BEFORE_DIR:-/tmp/before}
suites=(ParseBenchmarks SpoolBenchmarks StoreBenchmarks AsyncBenchmarks)
filters=('Parse: F[12].*' 'Spool: 1 GiB file part, SHA-256' 'Store: .*' 'Form decode: .*')

[ -d "$before" ] || git -C "$root" worktree add --detach "$before" "$before_ref" > /dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/before-after.XXXXXX")
source "$root/Benchmarks/s3-engine.sh"  # also ends what `pids` lists, and removes `work`, on the way out
results="$work/results.tsv"

# The tool and the example server of `tree`, built for release into one scratch folder (the dependencies they
# share compiled once).
built() {
  local tree=$1
  (cd "$tree" && swift build -c release --scratch-path "$tree/.build-release" --product multipart 2>&1 | tail -n 1)
  (cd "$tree/Examples/UploadServer" \
    && swift build -c release --scratch-path "$tree/.build-release" --product UploadServer 2>&1 | tail -n 1)
}

# Starts `tree`'s example server with a spool folder of its own and sets `url` to its upload URL (in this shell: a
# server started in a command substitution's subshell would be missing from `pids`, and outlive the run).
serve() {
  local tree=$1 spool
  spool=$(mktemp -d "$work/spool.XXXXXX")
  "$tree/.build-release/release/UploadServer" --port 0 --spool-dir "$spool" > "$spool.out" 2> /dev/null &
  pids+=($!)
  for _ in $(seq 100); do grep -q listening "$spool.out" && break; sleep 0.1; done
  url="http://127.0.0.1:$(sed -E 's/.*127\.0\.0\.1:([0-9]+).*/\1/' "$spool.out")/upload"
}

source "$root/Benchmarks/upload-timing.sh"
# The milliseconds `timed_upload` gives for `command`.
milliseconds() { timed_upload "$@" | awk '{ printf "%d", $1 * 1000 }'; }

if $end_to_end; then
  built "$before"
  built "$root"
  payload=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-1073741824.bin
  [ "$(stat -c %s "$payload" 2>/dev/null || echo 0)" = 1073741824 ] || head -c 1073741824 /dev/urandom > "$payload"
  cat "$payload" > /dev/null  # in the page cache for every client alike
  serve "$before"
  before_url=$url
  serve "$root"
  after_url=$url
  for round in $(seq "$rounds"); do
    sides=(before after)
    [ $((round % 2)) = 0 ] && sides=(after before)  # the order alternates from round to round
    for side in "${sides[@]}"; do
      tree=$root url=$after_url
      [ "$side" = before ] && tree=$before url=$before_url
      # Assigned before printed: a failed upload then stops the run (set -e), not only its command substitution.
      sent=$(milliseconds "$tree/.build-release/release/multipart" send "$after_url" -F "file=@$payload" --silent)
      posted=$(milliseconds curl -sS -F "file=@$payload" "$url")
      printf '%s\t%s\t%s\t%s\n' "$round" "$side" "multipart send, 1 GiB file, to one server" "$sent" \
        "$round" "$side" "curl -F, 1 GiB file, to the example server (SHA-256)" "$posted"
    done >> "$results"
    echo "round $round of $rounds done"
  done
  echo "the servers' peak RSS, before and after: $(for pid in "${pids[@]}"; do grep VmHWM /proc/"$pid"/status \
    | awk '{printf "%s %s  ", $2, $3}'; done)"
else
  for tree in "$before" "$root"; do
    for suite in "${suites[@]}"; do
      swift build -c release --package-path "$tree/Benchmarks" --product "$suite" 2>&1 | tail -n 1
    done
  done
  start_engine moto "$work"
  aws --endpoint-url "$endpoint" s3api create-bucket --bucket bench > /dev/null
  export S3_BENCH_ENDPOINT=$endpoint S3_BENCH_BUCKET=bench

  # p50 of each benchmark's wall clock in milliseconds (the executables print nanoseconds), as "name<TAB>p50".
  p50s() {
    awk '/^Debug results for/ {sub(/^Debug results for /, ""); sub(/:$/, ""); name = $0; first = 1}
         /^[^ ].*:$/ {metric = $0}
         / 0\.500000000000 / && first && metric ~ /Time \(wall clock\)/ {print name "\t" $1 / 1e6; first = 0}'
  }

  for round in $(seq "$rounds"); do
    for side in before after; do
      tree=$root
      [ "$side" = before ] && tree=$before
      for index in "${!suites[@]}"; do
        "$tree/Benchmarks/.build/release/${suites[$index]}" --filter "${filters[$index]}" 2> /dev/null | p50s \
          | while IFS=$'\t' read -r name value; do printf '%s\t%s\t%s\t%s\n' "$round" "$side" "$name" "$value"; done
      done >> "$results"
    done
    echo "round $round of $rounds done"
  done
fi

python3 - "$results" <<'PYTHON'
import collections, statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
values = collections.defaultdict(dict)
for round_, side, name, value in rows:
    values[name].setdefault(round_, {})[side] = float(value)
print(f"{'benchmark (p50 per round, ms)':60} {'before':>24} {'after':>24}  after/before: median (min-max)")
for name, by_round in values.items():
    pairs = [(r["before"], r["after"]) for r in by_round.values() if "before" in r and "after" in r]
    if not pairs:
        continue
    ratios = sorted(after / before for before, after in pairs)
    before = " ".join(f"{b:g}" for b, _ in pairs)
    after = " ".join(f"{a:g}" for _, a in pairs)
    print(f"{name[:60]:60} {before:>24} {after:>24}  {statistics.median(ratios):.3f} "
          f"({ratios[0]:.3f}-{ratios[-1]:.3f})")
PYTHON
