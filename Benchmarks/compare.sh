#!/usr/bin/env bash
# Times the parser of two versions of this repository in one run, alternating them, and counts mallocs per part.
#   Benchmarks/compare.sh BEFORE_REF [ROUNDS] [REPS]     e.g. Benchmarks/compare.sh fa5b2a2 4 21
# The builder line pulls 3 fields and a 256 MiB file (page-cached) in 64 KiB reads.
# Builds BEFORE_REF (a git worktree) and the working tree with the same harness (Compare/main.swift and the
# fixtures in Sources/BenchmarkSupport/ParseFixtures.swift), in release mode, under $COMPARE_DIR
# (default /tmp/streaming-multipart-compare). Prints one line per fixture, version and round. Keep the machine
# otherwise idle; read the min and the spread, not one median.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ref=${1:?usage: compare.sh BEFORE_REF [ROUNDS] [REPS]}
rounds=${2:-4}
reps=${3:-21}
work=${COMPARE_DIR:-/tmp/streaming-multipart-compare}
mkdir -p "$work"
rm -rf "$work/before-src"
git -C "$root" worktree add -f --detach "$work/before-src" "$ref" >/dev/null
trap 'git -C "$root" worktree remove --force "$work/before-src" >/dev/null 2>&1 || true' EXIT
gcc -O2 -shared -fPIC -o "$work/libmalloc_count.so" "$here/Compare/malloc_count.c" -ldl
for version in before after; do
  source=$([ "$version" = before ] && echo "$work/before-src" || echo "$root")
  package="$work/harness-$version"
  mkdir -p "$package/Sources/pb"
  cp "$here/Compare/main.swift" "$here/Sources/BenchmarkSupport/ParseFixtures.swift" "$package/Sources/pb/"
  cat > "$package/Package.swift" <<PACKAGE
// swift-tools-version:6.1
import PackageDescription
let package = Package(
    name: "harness-$version",
    dependencies: [.package(path: "$source")],
    targets: [.executableTarget(name: "pb", dependencies: [.product(name: "StreamingMultipart", package: "$(basename "$source")")])]
)
PACKAGE
  swift build -c release --package-path "$package" 2>&1 | tail -n 1
done
payload="$work/payload-256MiB.bin"
[ -f "$payload" ] || head -c $((256 << 20)) /dev/urandom > "$payload"
for round in $(seq "$rounds"); do
  for version in before after; do
    LD_PRELOAD="$work/libmalloc_count.so" "$work/harness-$version/.build/release/pb" "$reps" | sed "s/^/$version round $round\t/"
    "$work/harness-$version/.build/release/pb" build "$payload" 7 | sed "s/^/$version round $round\t/"
  done
done
