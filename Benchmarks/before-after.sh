#!/usr/bin/env bash
# The library before and after a change, in the same run: parse, spool to disk with SHA-256, spool into S3 (moto),
# decode. Builds the suites in a worktree of BEFORE_REF (once; `git worktree add`), and in this checkout, then runs
# the two executables alternately, ROUNDS times, printing each benchmark's p50 per round and the median and spread
# of the after ÷ before ratios.
#   Benchmarks/before-after.sh BEFORE_REF [ROUNDS]        default 3 rounds; BEFORE_DIR (default /tmp/before)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
before_ref=${1:?usage: before-after.sh BEFORE_REF [ROUNDS]}
rounds=${2:-3}
before=${BEFORE_DIR:-/tmp/before}
suites=(ParseBenchmarks SpoolBenchmarks StoreBenchmarks AsyncBenchmarks)
filters=('Parse: F[12].*' 'Spool: 1 GiB file part, SHA-256' 'Store: .*' 'Form decode: .*')

[ -d "$before" ] || git -C "$root" worktree add --detach "$before" "$before_ref" > /dev/null
for tree in "$before" "$root"; do
  for suite in "${suites[@]}"; do
    swift build -c release --package-path "$tree/Benchmarks" --product "$suite" 2>&1 | tail -n 1
  done
done

work=$(mktemp -d "${TMPDIR:-/tmp}/before-after.XXXXXX")
source "$root/Benchmarks/s3-engine.sh"
start_engine moto "$work"
aws --endpoint-url "$endpoint" s3api create-bucket --bucket bench > /dev/null
export S3_BENCH_ENDPOINT=$endpoint S3_BENCH_BUCKET=bench

# p50 of each benchmark's wall clock in milliseconds (the executables print nanoseconds), as "name<TAB>p50".
p50s() {
  awk '/^Debug results for/ {sub(/^Debug results for /, ""); sub(/:$/, ""); name = $0; first = 1}
       /^[^ ].*:$/ {metric = $0}
       / 0\.500000000000 / && first && metric ~ /Time \(wall clock\)/ {print name "\t" $1 / 1e6; first = 0}'
}

results="$work/results.tsv"
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
