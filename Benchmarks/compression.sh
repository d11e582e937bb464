#!/usr/bin/env bash
# Times compression and decompress + parse of a 256 MiB text-like form against zlib's peers on the same bytes, in
# alternating rounds: `multipart build --gzip` against `gzip -1`/`gzip -6` and Python's zlib module, and
# `multipart parse --content-encoding gzip` against `gzip -d` and Python's zlib.decompress.
#   Benchmarks/compression.sh [ROUNDS]        prints one line per round: seconds and peak RSS (KB)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
rounds=${1:-3}
work=${COMPRESSION_BENCH_DIR:-/tmp/streaming-multipart-compression}
mkdir -p "$work"
swift build -c release --package-path "$root" --product multipart 2>&1 | tail -n 1
multipart="$(swift build -c release --package-path "$root" --show-bin-path)/multipart"
text="$work/text-256MiB.txt"
[ -f "$text" ] || python3 - "$text" <<'PY'
import random, sys
random.seed(7)
words = [w.encode() for w in ("the quick brown fox jumps over lazy dog name field value form data upload server "
                              "client multipart boundary content disposition type text plain sunset bay").split()]
with open(sys.argv[1], "wb") as out:
    total, lines = 0, []
    while total < 256 << 20:
        line = b" ".join(random.choice(words) for _ in range(12)) + b"\n"
        lines.append(line)
        total += len(line)
        if len(lines) == 10000:
            out.write(b"".join(lines))
            lines = []
    out.write(b"".join(lines))
PY
"$multipart" build --boundary B --gzip -F "f=@$text" -o "$work/form.gz" 2>/dev/null
cat > "$work/pyzlib.py" <<'PY'
import sys, time, zlib
data = open(sys.argv[1], "rb").read()
start = time.perf_counter()
if sys.argv[2] == "decompress":
    zlib.decompress(data, 47)
else:
    compressor = zlib.compressobj(int(sys.argv[2]), zlib.DEFLATED, 31)
    compressor.compress(data) + compressor.flush()
print("%.2f" % (time.perf_counter() - start))
PY
timed() { /usr/bin/time -f "%e s %M KB" -o "$work/time.out" "$@" > /dev/null 2>&1; cat "$work/time.out"; }
for round in $(seq "$rounds"); do
  for level in 1 6; do
    echo "round $round level $level: ours $(timed "$multipart" build --boundary B --gzip --compression-level $level -F "f=@$text" -o /dev/null)" \
      "| gzip -$level $(timed gzip -$level -c "$text") | python zlib $(python3 "$work/pyzlib.py" "$text" $level) s"
  done
  echo "round $round decompress: ours parse $(timed "$multipart" parse --boundary B --content-encoding gzip "$work/form.gz")" \
    "| gzip -d $(timed gzip -d -c "$work/form.gz") | python zlib $(python3 "$work/pyzlib.py" "$work/form.gz" decompress) s"
done
