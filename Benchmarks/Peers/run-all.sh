#!/usr/bin/env bash
# The whole peer comparison from a clone, in one command: installs and builds every peer and this repository's
# `multipart` tool (setup.sh), writes the fixtures (gen_fixtures.py, ~650 MB), and runs every peer on every fixture
# (run.py), printing the tables and writing them to summary.md beside the raw runs.tsv in the output folder.
#   Benchmarks/Peers/run-all.sh [run.py options]        default: --reps 3
#   MP_FIXTURES=DIR  reuse fixtures gen_fixtures.py wrote there (written when missing)
#   MP_RESULTS=DIR   where summary.md and runs.tsv go (default: a new folder under ${TMPDIR:-/tmp})
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
"$HERE/setup.sh"
fixtures=${MP_FIXTURES:-${TMPDIR:-/tmp}/mp-peers-fixtures}
if ! [ -f "$fixtures/SHA256SUMS" ]; then
  mkdir -p "$fixtures"
  python3 "$HERE/gen_fixtures.py" "$fixtures"
fi
results=${MP_RESULTS:-$(mktemp -d "${TMPDIR:-/tmp}/mp-peers-results.XXXXXX")}
mkdir -p "$results"
[ $# -gt 0 ] || set -- --reps 3
python3 "$HERE/run.py" "$fixtures" "$@" --raw "$results/runs.tsv" --md "$results/summary.md"
echo "results: $results/summary.md (versions: ${MP_PEERS_BUILD:-${TMPDIR:-/tmp}/mp-peers-build}/versions.txt)"
