#!/usr/bin/env bash
# One big upload over HTTP/2 with TLS, against the same over HTTP/1.1 with TLS and against nginx storing the same
# bytes, in one run, interleaved:
#   Benchmarks/http2.sh [ROUNDS] [BYTES]        defaults: 5 rounds, 1 GiB
# - the example server (release, --digest none, spooling to $BENCHMARK_DIR) with a test certificate: `curl -F` of
#   a BYTES file with --http2 (ALPN h2) and with --http1.1 (ALPN http/1.1), on the same port;
# - nginx 1.22 (Debian's, one worker a core, `listen … ssl http2`) storing the same file as a raw `curl -T` PUT
#   with --http2 through its WebDAV module: no parsing at all, the ceiling over HTTP/2 with TLS.
# Each round runs the three once, in a rotated order. Prints each run (MiB/s), then each one's median and spread,
# and the per-round ratios h2/h1 and ours/nginx over h2, with their medians and spreads. Needs nginx, curl,
# openssl, python3.
set -euo pipefail
rounds=${1:-5}
bytes=${2:-1073741824}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=$(mktemp -d "${BENCHMARK_DIR:-/tmp}/http2.XXXXXX")
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  sleep 0.2
  rm -rf "$work"
}
trap cleanup EXIT
for tool in nginx curl openssl python3; do
  command -v "$tool" > /dev/null || { echo "http2.sh: needs $tool" >&2; exit 1; }
done
# UPLOAD_SERVER: a release build of the example server already made (else it is built here).
server=${UPLOAD_SERVER:-$root/Examples/UploadServer/.build/release/UploadServer}
if [ -z "${UPLOAD_SERVER:-}" ]; then
  swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
fi

file=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-$bytes.bin
[ "$(stat -c %s "$file" 2>/dev/null || echo 0)" = "$bytes" ] || head -c "$bytes" /dev/urandom > "$file"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" \
  -out "$work/cert.pem" -days 1 -subj /CN=localhost -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2> /dev/null
mkdir -p "$work/spool" "$work/nginx-root/put" "$work/nginx-temp"

# shellcheck source=Benchmarks/nginx-put.sh
. "$here/nginx-put.sh"
nginx_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nginx_put_conf "$work" "$nginx_port" "ssl http2" \
  "ssl_certificate $work/cert.pem; ssl_certificate_key $work/key.pem;" > "$work/nginx.conf"
nginx -p "$work" -c "$work/nginx.conf" &
pids+=($!)
# SERVER_ARGS: more of the server's options (--http2-stream-window, say).
# shellcheck disable=SC2086
"$server" --port 0 --spool-dir "$work/spool" --digest none --tls-certificate "$work/cert.pem" \
  --tls-key "$work/key.pem" ${SERVER_ARGS:-} > "$work/server.out" 2> /dev/null &
pids+=($!)
for _ in $(seq 100); do
  grep -q listening "$work/server.out" && [ -f "$work/nginx.pid" ] && break
  sleep 0.1
done
port=$(sed -E 's/.*127\.0\.0\.1:([0-9]+).*/\1/' "$work/server.out")

python3 - "$rounds" "$file" "$work" "$port" "$nginx_port" <<'PY'
import statistics, subprocess, sys
rounds, file, work, port, nginx = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
size = __import__("os").path.getsize(file)
MiB = 1 << 20
common = ["curl", "-sS", "-f", "-o", "/dev/null", "--cacert", f"{work}/cert.pem", "-w", "%{http_version} %{time_total}"]
runs = {
    "ours, HTTP/2": common + ["--http2", "-F", f"file=@{file}", f"https://localhost:{port}/upload"],
    "ours, HTTP/1.1": common + ["--http1.1", "-F", f"file=@{file}", f"https://localhost:{port}/upload"],
    "nginx PUT, HTTP/2": common + ["--http2", "-T", file, f"https://localhost:{nginx}/put/upload.bin"],
}
expected = {"ours, HTTP/2": "2", "ours, HTTP/1.1": "1.1", "nginx PUT, HTTP/2": "2"}
rates = {name: [] for name in runs}
names = list(runs)
for round in range(rounds):
    order = names[round % len(names):] + names[:round % len(names)]
    line = []
    for name in order:
        version, seconds = subprocess.run(runs[name], check=True, capture_output=True, text=True).stdout.split()
        assert version == expected[name], f"{name} spoke HTTP/{version}"
        rates[name].append(size / MiB / float(seconds))
        line.append(f"{name} {rates[name][-1]:.0f} MiB/s")
    print(f"round {round + 1}: " + ", ".join(line), flush=True)
for name, values in rates.items():
    print(f"{name}: median {statistics.median(values):.0f} MiB/s (spread {min(values):.0f}-{max(values):.0f})")
for label, a, b in [("HTTP/2 over HTTP/1.1, ours", "ours, HTTP/2", "ours, HTTP/1.1"),
                    ("ours over nginx, HTTP/2", "ours, HTTP/2", "nginx PUT, HTTP/2")]:
    ratios = [x / y for x, y in zip(rates[a], rates[b])]
    print(f"{label}: median {statistics.median(ratios):.2f}x (spread {min(ratios):.2f}-{max(ratios):.2f})")
PY
