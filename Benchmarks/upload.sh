#!/usr/bin/env bash
# End to end: a 1 GiB file uploaded with `curl -F` to the example server (release build, SHA-256 on, then off),
# against the same curl command posting to a server that reads the body and discards it, alternately, ROUNDS times.
#   Benchmarks/upload.sh [ROUNDS]        default 5; prints each round, then the medians and the spread
set -euo pipefail
rounds=${1:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/upload-bench.XXXXXX")
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
server="$root/Examples/UploadServer/.build/release/UploadServer"
payload=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-1073741824.bin
[ "$(stat -c %s "$payload" 2>/dev/null || echo 0)" = 1073741824 ] || head -c 1073741824 /dev/urandom > "$payload"
mkdir -p "$work/spool"

# The sink: reads each request's body to its Content-Length (curl -F sends one) and answers 200 with no body; given
# a path, it also writes the body there (the file write the server does too, without any parsing).
cat > "$work/sink.py" <<'PY'
import os, socket, sys
path = sys.argv[1] if len(sys.argv) > 1 else None
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(8)
print(server.getsockname()[1], flush=True)
buffer = bytearray(1 << 20)
while True:
    connection, _ = server.accept()
    head = b""
    while b"\r\n\r\n" not in head:
        head += connection.recv(4096)
    head, rest = head.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    if b"100-continue" in head.lower():
        connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    left = length - len(rest)
    out = open(path, "wb") if path else None
    view = memoryview(buffer)
    while left > 0:
        count = connection.recv_into(buffer, min(left, len(buffer)))
        if out:
            out.write(view[:count])
        left -= count
    if out:
        out.close()
        os.unlink(path)
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    connection.close()
PY

# The two servers (SHA-256 on and off) and the sink, in the background; each prints its port.
"$server" --port 0 --spool-dir "$work/spool" > "$work/sha.out" 2> /dev/null &
sha_pid=$!
"$server" --port 0 --spool-dir "$work/spool" --digest none > "$work/plain.out" 2> /dev/null &
plain_pid=$!
python3 "$work/sink.py" > "$work/sink.out" &
sink_pid=$!
python3 "$work/sink.py" "$work/spool/sink-copy" > "$work/file-sink.out" &
pids=("$sha_pid" "$plain_pid" "$sink_pid" $!)
for _ in $(seq 100); do
  grep -q listening "$work/sha.out" && grep -q listening "$work/plain.out" && [ -s "$work/sink.out" ] \
    && [ -s "$work/file-sink.out" ] && break
  sleep 0.1
done
port() { sed -E 's/.*127\.0\.0\.1:([0-9]+).*/\1/' "$1"; }
sha_port=$(port "$work/sha.out")
plain_port=$(port "$work/plain.out")
sink_port=$(head -n 1 "$work/sink.out")
file_sink_port=$(head -n 1 "$work/file-sink.out")

upload() { curl -sS -o /dev/null -w '%{time_total}' -F "file=@$payload" "http://127.0.0.1:$1/upload"; }
: > "$work/times"
for round in $(seq "$rounds"); do
  sink=$(upload "$sink_port"); sha=$(upload "$sha_port"); plain=$(upload "$plain_port")
  file_sink=$(upload "$file_sink_port")
  echo "round $round: sink ${sink}s  server+SHA-256 ${sha}s  server, no digest ${plain}s  sink to a file ${file_sink}s"
  echo "$sink $sha $plain $file_sink" >> "$work/times"
done
python3 - "$work/times" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
names = ["curl to a discarding sink", "curl to UploadServer, SHA-256", "curl to UploadServer, no digest",
         "curl to a sink that writes a file"]
for index, name in enumerate(names):
    values = sorted(row[index] for row in rows)
    print(f"{name:34s} median {statistics.median(values):.2f} s ({1024 / statistics.median(values):.0f} MiB/s), range {values[0]:.2f}-{values[-1]:.2f} s")
for index, name in [(1, "SHA-256"), (2, "no digest"), (3, "sink to a file")]:
    ratios = sorted(row[index] / row[0] for row in rows)
    print(f"{name} / discarding sink, per round: median {statistics.median(ratios):.2f}x, range {ratios[0]:.2f}-{ratios[-1]:.2f}x")
PY
for pid in "$sha_pid" "$plain_pid"; do
  echo "server $pid peak RSS: $(grep VmHWM /proc/$pid/status | awk '{print $2, $3}')"
done
ls "$work/spool" | wc -l | xargs echo "files left in the spool folder:"
