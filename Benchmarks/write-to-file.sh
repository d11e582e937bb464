#!/usr/bin/env bash
# write(to:) of a form with a 1 GiB file part (`multipart build -F f=@FILE -o OUT`, release, which fsyncs and
# renames) against `cp` of the same file to the same disk followed by `sync` of the copy (the same durability), and
# `cp` alone, alternately, ROUNDS times. With BEFORE (a commit), that commit's `multipart` runs in each round too.
#   Benchmarks/write-to-file.sh [ROUNDS] [BEFORE]     default 5; prints each round, then medians and spreads
set -euo pipefail
rounds=${1:-5}
before=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${BENCHMARK_DIR:-/var/tmp}/write-bench.XXXXXX")
trap 'rm -rf "$work"; [ -z "$before" ] || git -C "$root" worktree remove --force "$work-before" 2>/dev/null || true' EXIT

swift build -c release --package-path "$root" --product multipart 2>&1 | tail -n 1
after="$root/.build/release/multipart"
if [ -n "$before" ]; then
  git -C "$root" worktree add -q --detach "$work-before" "$before"
  swift build -c release --package-path "$work-before" --product multipart 2>&1 | tail -n 1
  old="$work-before/.build/release/multipart"
fi
payload="$work/payload.bin"
head -c 1073741824 /dev/urandom > "$payload"
cat "$payload" > /dev/null  # in the page cache for every contender alike

seconds() {
  local start end
  start=$(date +%s%N)
  "$@" > /dev/null 2>&1
  end=$(date +%s%N)
  awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }'
}
declare -A times
contenders=(multipart cp-sync cp)
[ -z "$before" ] || contenders+=(before)
for round in $(seq "$rounds"); do
  for who in "${contenders[@]}"; do
    rm -f "$work/out"
    sync
    case $who in
      multipart) t=$(seconds "$after" build -F "f=@$payload" -o "$work/out") ;;
      before) t=$(seconds "$old" build -F "f=@$payload" -o "$work/out") ;;
      cp-sync) t=$(seconds sh -c "cp '$payload' '$work/out' && sync '$work/out'") ;;
      cp) t=$(seconds cp "$payload" "$work/out") ;;
    esac
    times[$who]="${times[$who]:-} $t"
    printf 'round %d %-9s %.3f s\n' "$round" "$who" "$t"
  done
done
echo "median (min–max) over $rounds rounds, 1 GiB:"
for who in "${contenders[@]}"; do
  printf '%-9s %s\n' "$who" "$(echo "${times[$who]}" | tr ' ' '\n' | sed '/^$/d' | sort -g |
    awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.3f s (%.3f–%.3f)", m, a[1], a[NR]}')"
done
