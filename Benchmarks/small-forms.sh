#!/usr/bin/env bash
# Many small forms: h2load (Debian's nghttp2-client) POSTs one 4 KiB form (a text field and a 4 KiB file) over and
# over to each server binary given (the example server, spooling to a tmpfs, SHA-256 on), HTTP/1.1 with CONNECTIONS
# connections, then to Go's net/http server (Peers/go-server: each file part streamed to a file with SHA-256, as
# the example does), to the Vapor example (Examples/VaporUpload) on its two routes, `vapor` (the body streamed into
# this library's spooler, files on the tmpfs) and `vapor-kit` (Vapor collects the body, MultipartKit decodes it,
# the file hashed in memory), and GETs / from the first binary for the rate of a page; ROUNDS rounds, all
# interleaved in each. Prints each run (forms/s, p50 and p99 in ms, from h2load's per-request log), then each
# server's median and spread, and its median rate over the page's and over Go's.
#   [PROTOCOL=h1|h1-tls|h2] [VAPOR=path|none] Benchmarks/small-forms.sh [ROUNDS] [CONNECTIONS] [BINARY...]
#     defaults: 5 rounds, 8 connections, the example server built for release, h1 (HTTP/1.1 in plain text), and
#     VaporUploadServer built for release (VAPOR=none leaves Vapor out)
# PROTOCOL h1-tls and h2 run every server with a test certificate (the example server with --tls-certificate, Go
# with ServeTLS, Vapor with TLS_CERTIFICATE) and h2load over TLS, ALPN choosing http/1.1 (--h1) or h2 (one stream
# at a time a connection, as HTTP/1.1 has one request); Go's net/http has no h2c without golang.org/x/net, so
# HTTP/2 is compared over TLS.
set -euo pipefail
rounds=${1:-5}
connections=${2:-8}
shift $(($# < 2 ? $# : 2))
root=$(cd "$(dirname "$0")/.." && pwd)
command -v h2load > /dev/null || { echo "small-forms: needs h2load (apt install nghttp2-client)" >&2; exit 1; }
if [ $# -eq 0 ]; then
  swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
  set -- "$root/Examples/UploadServer/.build/release/UploadServer"
fi
vapor=${VAPOR:-}
if [ -z "$vapor" ]; then
  swift build -c release --package-path "$root/Examples/VaporUpload" --product VaporUploadServer 2>&1 | tail -n 1
  vapor="$root/Examples/VaporUpload/.build/release/VaporUploadServer"
fi
peers=(go)
[ "$vapor" = none ] || peers+=(vapor vapor-kit)
work=$(mktemp -d "${TMPDIR:-/tmp}/small-forms.XXXXXX")
(cd "$root/Benchmarks/Peers/go-server" && go build -o "$work/goserver" .)
protocol=${PROTOCOL:-h1}
case $protocol in
  h1) scheme=http; tls=(); go_tls=(); h1=(--h1) ;;
  h1-tls | h2)
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$work/key.pem" \
      -out "$work/cert.pem" -days 1 -subj /CN=localhost -addext "subjectAltName=IP:127.0.0.1" 2> /dev/null
    scheme=https; tls=(--tls-certificate "$work/cert.pem" --tls-key "$work/key.pem")
    go_tls=("$work/cert.pem" "$work/key.pem")
    if [ "$protocol" = h2 ]; then h1=(); else h1=(--h1); fi ;;
  *) echo "small-forms: PROTOCOL is h1, h1-tls or h2" >&2; exit 1 ;;
esac
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; umount "$work/spool" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/spool"
mount -t tmpfs -o size=256m tmpfs "$work/spool" 2>/dev/null || true  # root: the disk's speed out of it

python3 - "$work/form.bin" <<'PY'
import os, sys
boundary = b"SmallFormsBenchmark"
body = (b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nA small form\r\n"
        + b"--" + boundary + b"\r\nContent-Disposition: form-data; name=\"photos[]\"; filename=\"f.bin\"\r\n"
        + b"Content-Type: application/octet-stream\r\n\r\n" + os.urandom(4096) + b"\r\n--" + boundary + b"--\r\n")
open(sys.argv[1], "wb").write(body)
PY

# Starts BINARY (or Go's server, for "go"; the Vapor example, for "vapor" and "vapor-kit") on the tmpfs; sets $port.
start() {
  if [ "$1" = go ]; then
    "$work/goserver" "$work/spool" sha256 "${go_tls[@]}" > "$work/server.log" 2>&1 &
  elif [ "$1" = vapor ] || [ "$1" = vapor-kit ]; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    local certificate=()
    [ "$scheme" = https ] && certificate=(TLS_CERTIFICATE="$work/cert.pem" TLS_KEY="$work/key.pem")
    env SPOOL_DIR="$work/spool" KIT_ROUTE_MAX_BYTES=65536 MAX_UPLOADS=4096 MAX_UPLOADS_PER_PEER=100000 \
      LOG_LEVEL=warning "${certificate[@]}" "$vapor" serve --hostname 127.0.0.1 --port "$port" \
      > "$work/server.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 200); do
      (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && return
      sleep 0.05
    done
    echo "small-forms: Vapor did not start: $(cat "$work/server.log")" >&2
    exit 1
  else
    # Every connection comes from 127.0.0.1: the uploads-per-address share (8) lifted, as Go has none.
    "$1" --port 0 --spool-dir "$work/spool" --max-uploads-per-peer 100000 "${tls[@]}" > "$work/server.log" 2>&1 &
  fi
  pids+=($!)
  for _ in $(seq 200); do
    port=$(grep -o 'listening on [htp:/]*127.0.0.1:[0-9]*' "$work/server.log" | head -n 1 | sed 's/.*://' || true)
    [ -n "$port" ] && return
    sleep 0.05
  done
  echo "small-forms: $1 did not start: $(cat "$work/server.log")" >&2
  exit 1
}

# h2load against $port: the rate, p50 and p99 (ms) of what answered 2xx; "GET" for the page.
measure() {
  local log="$work/requests.log"
  local request=(-d "$work/form.bin" -H "content-type: multipart/form-data; boundary=SmallFormsBenchmark")
  [ "$1" = GET ] && request=()
  rm -f "$log"  # h2load appends to it
  h2load "${h1[@]}" -n 20000 -c "$connections" -m 1 "${request[@]}" --log-file="$log" \
    "$scheme://127.0.0.1:$port/$(case $1 in GET) ;; vapor-kit) echo kit/upload ;; *) echo upload ;; esac)" \
    > "$work/h2load.out"
  grep -q "Application protocol: $([ ${#h1[@]} -eq 0 ] && echo h2 || echo http/1.1)" "$work/h2load.out" \
    || [ "$scheme" = http ] || { echo "small-forms: not the protocol asked for: $(cat "$work/h2load.out")" >&2; exit 1; }
  python3 - "$log" "$work/h2load.out" <<'PY'
import re, statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]) if line.strip()]
ok = sorted(int(row[2]) / 1000 for row in rows if row[1].startswith("2"))
rate = float(re.search(r"finished in [0-9.]+m?s, ([0-9.]+) req/s", open(sys.argv[2]).read()).group(1))
failed = len(rows) - len(ok)
rate *= len(ok) / max(1, len(rows))  # answers that were not 2xx are not forms taken
print(f"{rate:.0f} {ok[len(ok) // 2]:.2f} {ok[int(len(ok) * 0.99)]:.2f} {failed}")
PY
}

declare -A results
for round in $(seq "$rounds"); do
  for binary in "$@" "${peers[@]}" GET; do
    target=$binary
    [ "$binary" = GET ] && target=$1
    start "$target"
    measure "$binary" > "$work/result"
    read -r rate p50 p99 failed < "$work/result"
    kill "${pids[-1]}" 2>/dev/null || true
    wait "${pids[-1]}" 2>/dev/null || true
    echo "round $round ($protocol): $binary: $rate forms/s, p50 $p50 ms, p99 $p99 ms, $failed not 2xx"
    results[$binary]+="$rate "
  done
done

python3 - <<PY
import statistics
results = {$(for key in "$@" "${peers[@]}" GET; do printf '"%s": [%s], ' "$key" "$(echo "${results[$key]}" | tr ' ' ',')"; done)}
page, go = statistics.median(results["GET"]), statistics.median(results["go"])
for name, rates in results.items():
    median = statistics.median(rates)
    print(f"{name}: median {median:.0f}/s (spread {min(rates):.0f}-{max(rates):.0f}), {median / page:.2f}x the page's"
          f" rate, {median / go:.2f}x Go's")
PY
