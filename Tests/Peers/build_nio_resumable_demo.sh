#!/bin/bash
# Builds swift-nio-extras' NIOResumableUploadDemo, the demo server of its resumable upload module
# (NIOResumableUpload), from the checkout this package resolved, and prints the binary's path. The demo is an
# executable target of swift-nio-extras, not a product, so it cannot be built from this package: it is built as a
# package of its own, from a copy of the checkout, into .build/nio-extras-demo/ (NIOExtrasInteropTests looks for it
# there; .ci/run runs this before the tests).
#
#     Tests/Peers/build_nio_resumable_demo.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
checkout=.build/checkouts/swift-nio-extras
[ -f "$checkout/Package.swift" ] || swift package resolve > /dev/null
work=.build/nio-extras-demo
rm -rf "$work/source"
mkdir -p "$work"
cp -r "$checkout" "$work/source"
swift build --package-path "$work/source" --scratch-path "$work/build" --product NIOResumableUploadDemo >&2
echo "$PWD/$work/build/debug/NIOResumableUploadDemo"
