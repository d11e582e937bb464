#!/usr/bin/env bash
# Builds the libFuzzer target over the parser and the header tokenizers, and runs it.
#   Fuzz/run.sh [SECONDS] [extra libFuzzer flags]     default: 600 seconds
#   Fuzz/run.sh build                                  builds it only (CI does, so that it cannot rot)
# The seed corpus is Fixtures/fuzz-corpus (read only); new inputs go to a scratch corpus under $FUZZ_WORK
# (default /tmp/streaming-multipart-fuzz). A crash leaves crash-* files there and a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
build_only=false
[ "$seconds" = build ] && build_only=true
work=${FUZZ_WORK:-/tmp/streaming-multipart-fuzz}
mkdir -p "$work/corpus"
# The package's own Swift settings, read from Package.swift, so the fuzzer runs the code that ships: its language
# mode and every upcoming feature its targets enable.
features=$(sed -n 's/.*enableUpcomingFeature("\([A-Za-z]*\)").*/-enable-upcoming-feature \1/p' Package.swift)
mode=$(sed -n 's/.*swiftLanguageModes: \[\.v\([0-9]*\)\].*/\1/p' Package.swift)
[ -n "$features" ] && [ -n "$mode" ] || { echo "Fuzz/run.sh: cannot read the Swift settings from Package.swift" >&2; exit 1; }
# shellcheck disable=SC2086  # one flag a word
# -package-name: the core's `package` declarations are visible to the fuzz target, as to the package's own targets.
# The parser and the builder with the folders they stand on (ARCHITECTURE.md, "Folders"): nothing above them (the
# async layer, the spooler, Codable), so the target needs no package but zlib (the spooler's swift-log stays out);
# Internal/Checksums.swift, the spool digests' way to the C target CCRC32C, stays out with the spooler.
engine=(Errors Internal Tokenizing Model Compression Parsing Body)
swiftc ${FUZZ_OPT:--O} -g -sanitize=fuzzer,address -parse-as-library -module-name StreamingMultipart \
  -package-name StreamingMultipart -swift-version "$mode" $features \
  -I Sources/CZlib -lz \
  $(find "${engine[@]/#/Sources/StreamingMultipart/}" -name '*.swift' ! -name Checksums.swift) Fuzz/FuzzParser.swift \
  -o "$work/fuzz-parser"
if $build_only; then echo "Fuzz/run.sh: built $work/fuzz-parser"; exit 0; fi
cd "$work"
./fuzz-parser -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$@" \
  corpus "$OLDPWD/Fixtures/fuzz-corpus"
