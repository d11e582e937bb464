#!/usr/bin/env bash
# Whether the form decoder's name-lookup layers paid (RESULTS.md, "The decoder's name lookups"): the lookup alone,
# FormTreeBuilder.place(plain:) over names as the parser hands them out, in thread CPU time, at bed3173 (the last
# commit with all three layers) built four ways: every layer; without the two-word packing (NO_SHORT); without the
# 64 hash slots (NO_SLOTS); both gone, the guess of the name that followed last time kept (SEQ, what the decoder
# kept); no guess at all, a dictionary lookup (NO_GUESS). Prints ns a field, median (min–max) of 7 repeats, per round.
#   Benchmarks/Probes/name-lookup.sh [ROUNDS]        default 3; PROBE_DIR (default /tmp/name-lookup-probe)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-3}
probe=${PROBE_DIR:-/tmp/name-lookup-probe}
[ -d "$probe" ] || { git -C "$root" worktree add --detach "$probe" bed3173 > /dev/null; git -C "$probe" apply "$root/Benchmarks/Probes/name-lookup.patch"; }
declare -A flags=([ALL]="" [NO_SHORT]="-Xswiftc -DNO_SHORT" [NO_SLOTS]="-Xswiftc -DNO_SLOTS"
  [SEQ]="-Xswiftc -DNO_SHORT -Xswiftc -DNO_SLOTS" [NO_GUESS]="-Xswiftc -DNO_GUESS")
variants=(ALL NO_SHORT NO_SLOTS SEQ NO_GUESS)
for variant in "${variants[@]}"; do
  # shellcheck disable=SC2086  # the flags are words
  swift build -c release -Xswiftc -enable-testing ${flags[$variant]} --package-path "$probe" --product Probe \
    --scratch-path "$probe/.build-$variant" 2>&1 | tail -n 1
done
for round in $(seq "$rounds"); do
  for variant in "${variants[@]}"; do
    echo "== $variant, round $round"
    "$probe/.build-$variant/release/Probe" | grep -v '^sink'
  done
done
