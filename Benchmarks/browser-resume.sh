#!/usr/bin/env bash
# A browser that resumes: the example server's /resumable page (Web/resumable-form.js) driven by headless Chromium
# and Firefox through Tests/Peers/front.py, which gives each new connection the next action: CUTS cuts after
# every SPACING bytes from the browser (the page's own two requests take the first turns uncut), then proxy.
# Prints, for each browser, the body bytes it sent over the body, the cuts made, the file's SHA-256 check and
# the module's recoveries (resumptions after an error, and 409s of the browser's own re-sends).
#   Benchmarks/browser-resume.sh [SIZE_BYTES [CUTS [SPACING]]]    default 268435456 12 40000000 (RESULTS.md)
set -euo pipefail
size=${1:-268435456}
cuts=${2:-12}
spacing=${3:-40000000}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/browser-resume.XXXXXX")
pids=()
trap 'exec 3>&- 2>/dev/null || true; kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

(cd "$root/Examples/UploadServer" && swift build --scratch-path "$root/.build" --product UploadServer 2>&1 | tail -n 1)
"$root/.build/debug/UploadServer" --port 0 --spool-dir "$work" > "$work/server.out" 2> /dev/null &
pids+=($!)
for _ in $(seq 100); do grep -q listening "$work/server.out" && break; sleep 0.1; done
port=$(grep -o '127.0.0.1:[0-9]*' "$work/server.out" | head -n 1 | cut -d: -f2)
actions=$(printf "cut:$spacing,%.0s" $(seq "$cuts"))proxy

for browser in chromium firefox; do
  mkfifo "$work/front.in"
  python3 "$root/Tests/Peers/front.py" "$port" "$actions" < "$work/front.in" > "$work/front.out" &
  pids+=($!)
  exec 3> "$work/front.in"
  for _ in $(seq 100); do [ -s "$work/front.out" ] && break; sleep 0.1; done
  front=$(head -n 1 "$work/front.out")
  python3 "$root/Examples/UploadServer/Scripts/browser_resumable.py" "$browser" \
    "http://127.0.0.1:$front/resumable" "$size" "$work/$browser" > "$work/$browser.json"
  exec 3>&-
  for _ in $(seq 100); do grep -q "client bytes" "$work/front.out" && break; sleep 0.1; done
  python3 - "$work/$browser.json" "$work/front.out" "$browser" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
front = dict(line.rsplit(" ", 1) for line in open(sys.argv[2]).read().splitlines()[1:] if " " in line)
files = (report.get("answer") or {}).get("files") or [{}]
sent, size = int(front.get("client bytes", 0)), report["size"]
print(f"{sys.argv[3]}: {sent} bytes for {size} ({sent / size:.3f}), {front.get('cuts')} cuts, "
      f"status {report.get('status')}, SHA-256 {'right' if files[0].get('sha256') == report.get('sha256') else 'WRONG'}, "
      f"{report.get('resumptions')} resumptions, {report.get('conflicts')} conflicts")
PY
  rm -f "$work/front.in"
done
