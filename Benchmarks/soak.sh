#!/usr/bin/env bash
# The ten-minute soak (issue 50): the example server, built for release, under uploads of every size, the hostile
# clients and a disk filled every 10 s, its memory and descriptors sampled each second; draws both curves into
# Benchmarks/soak.png and prints the figures RESULTS.md quotes. Root only (it mounts a tmpfs); needs matplotlib
# (`pip install matplotlib`). CI runs a minute of the same (`FaultHarnessTests.aMinuteOfMixedTrafficLeaksNothing`).
#   Benchmarks/soak.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
(cd Examples/UploadServer && swift build -c release --product UploadServer --scratch-path ../../.build-release-example)
python3 Tests/Faults/soak.py --server .build-release-example/release/UploadServer --seconds "$seconds" \
  --plot Benchmarks/soak.png
