#!/usr/bin/env bash
# The example upload server against the fastest thing that stores an upload, in one run, interleaved:
#   Benchmarks/server-vs-nginx.sh [ROUNDS]        default 5
# - 1 GiB with `curl -F` to the example server (release; no digest, SHA-256, CRC-32C), to Go's net/http + mime/multipart
#   server (Peers/go-server: no digest, and SHA-256), and as a raw `curl -T` PUT to nginx's WebDAV module, which
#   writes the bytes to disk with no parsing at all: the ceiling for any server that parses. SHA-256 alone of the same
#   1 GiB (OpenSSL, from the page cache) is timed in each round too. Each round runs every upload once, in a rotated
#   order; the script prints each round, the medians and spread, the per-round ratios, each server's peak RSS, and the
#   CPU time the server and curl used over the wall time (the machine's cores busy: 2.0 is all of a 2-core machine).
# - Then 8 concurrent 128 MiB uploads to each server (no digest) while a probe times `GET /` every 50 ms: the
#   aggregate MiB/s and the probe's p50/p99, ROUNDS times each, interleaved.
# Needs nginx (Debian's, with http_dav_module), go, curl, python3. Files go to $BENCHMARK_DIR (default /tmp).
set -euo pipefail
rounds=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work=$(mktemp -d "${BENCHMARK_DIR:-/tmp}/server-vs-nginx.XXXXXX")
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  kill "$(cat "$work/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  sleep 0.2
  rm -rf "$work"
}
trap cleanup EXIT

for tool in nginx go curl python3 openssl; do
  command -v "$tool" > /dev/null || { echo "server-vs-nginx.sh: needs $tool" >&2; exit 1; }
done
swift build -c release --package-path "$root/Examples/UploadServer" --product UploadServer 2>&1 | tail -n 1
server="$root/Examples/UploadServer/.build/release/UploadServer"
(cd "$here/Peers/go-server" && go build -o "$work/goserver" .)

big=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-1073741824.bin
small=${BENCHMARK_DIR:-/tmp}/streaming-multipart-upload-134217728.bin
[ "$(stat -c %s "$big" 2>/dev/null || echo 0)" = 1073741824 ] || head -c 1073741824 /dev/urandom > "$big"
[ "$(stat -c %s "$small" 2>/dev/null || echo 0)" = 134217728 ] || head -c 134217728 /dev/urandom > "$small"
mkdir -p "$work/spool" "$work/go-spool" "$work/nginx-root/put" "$work/nginx-temp"
echo "upload server" > "$work/nginx-root/index.html"

# nginx storing each PUT under /put/ (nginx-put.sh), GET / a small file.
# shellcheck source=Benchmarks/nginx-put.sh
. "$here/nginx-put.sh"
nginx_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
nginx_put_conf "$work" "$nginx_port" > "$work/nginx.conf"
nginx -p "$work" -c "$work/nginx.conf" &
pids+=($!)

"$server" --port 0 --spool-dir "$work/spool" --digest none > "$work/plain.out" 2> /dev/null &
plain_pid=$!
"$server" --port 0 --spool-dir "$work/spool" > "$work/sha.out" 2> /dev/null &
sha_pid=$!
"$server" --port 0 --spool-dir "$work/spool" --digest crc32c > "$work/crc.out" 2> /dev/null &
crc_pid=$!
"$work/goserver" "$work/go-spool" > "$work/go.out" &
go_pid=$!
"$work/goserver" "$work/go-spool" sha256 > "$work/go-sha.out" &
go_sha_pid=$!
pids+=("$plain_pid" "$sha_pid" "$crc_pid" "$go_pid" "$go_sha_pid")
for _ in $(seq 100); do
  grep -q listening "$work/plain.out" && grep -q listening "$work/sha.out" && grep -q listening "$work/crc.out" \
    && grep -q listening "$work/go.out" \
    && grep -q listening "$work/go-sha.out" && [ -f "$work/nginx.pid" ] && break
  sleep 0.1
done
port() { sed -E 's/.*127\.0\.0\.1:([0-9]+).*/\1/' "$1"; }

python3 - "$rounds" "$big" "$small" "$work" "$nginx_port" "$(port "$work/plain.out")" "$(port "$work/sha.out")" \
  "$(port "$work/go.out")" "$(port "$work/go-sha.out")" "$(port "$work/crc.out")" \
  "$plain_pid" "$sha_pid" "$go_pid" "$go_sha_pid" "$crc_pid" <<'PY'
import os, resource, statistics, subprocess, sys, threading, time, urllib.request
rounds, big, small, work = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
nginx, plain, sha, go, go_sha, crc = (int(port) for port in sys.argv[5:11])
server_pids = dict(zip(["ours, no digest", "ours, SHA-256", "Go, no digest", "Go, SHA-256", "ours, CRC-32C"],
                       map(int, sys.argv[11:16])))
MiB = 1 << 20
ticks = os.sysconf("SC_CLK_TCK")

def cpu_seconds(pids):
    """The user and system CPU time the processes `pids` used so far."""
    total = 0
    for pid in pids:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / ticks

def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime

busy = {}  # name -> per round, (the server's CPU + curl's) / wall: the cores busy

def curl(args):
    output = subprocess.run(["curl", "-sS", "-f", "-o", "/dev/null", "-w", "%{time_total}"] + args,
                            check=True, capture_output=True, text=True).stdout
    return float(output)

def measured(name, pids, run):
    """Runs `run`, noting the cores that the processes `pids` and this script's children kept busy."""
    def measure():
        before, client = cpu_seconds(pids()), children_cpu()
        seconds = run()
        used = cpu_seconds(pids()) - before + children_cpu() - client
        busy.setdefault(name, []).append(used / seconds)
        return seconds
    return measure

def post(port, path):
    return lambda: curl(["-F", f"file=@{path}", f"http://127.0.0.1:{port}/upload"])

def put(path, name):
    def run():
        seconds = curl(["-T", path, f"http://127.0.0.1:{nginx}/put/{name}"])
        os.unlink(os.path.join(work, "nginx-root", "put", name))
        return seconds
    return run

def sha256_alone():
    start = time.perf_counter()
    subprocess.run(["openssl", "dgst", "-sha256", big], check=True, capture_output=True)
    return time.perf_counter() - start

def nginx_workers():
    return [int(pid) for pid in subprocess.run(["pgrep", "-f", "nginx: worker"], capture_output=True,
                                                   text=True).stdout.split() if os.path.exists(f"/proc/{pid}")]

uploads = {
    "nginx PUT": measured("nginx PUT", nginx_workers, put(big, "big.bin")),
    "ours, no digest": measured("ours, no digest", lambda: [server_pids["ours, no digest"]], post(plain, big)),
    "ours, SHA-256": measured("ours, SHA-256", lambda: [server_pids["ours, SHA-256"]], post(sha, big)),
    "ours, CRC-32C": measured("ours, CRC-32C", lambda: [server_pids["ours, CRC-32C"]], post(crc, big)),
    "Go, no digest": post(go, big),
    "Go, SHA-256": post(go_sha, big),
    "SHA-256 alone": sha256_alone,
}
names = list(uploads)
for name in names:  # a warm-up of each, so every round reads the file from the page cache
    uploads[name]()
busy.clear()
times = {name: [] for name in names}
print(f"1 GiB, {rounds} rounds, rotated order; seconds (MiB/s)")
for round in range(rounds):
    order = names[round % len(names):] + names[:round % len(names)]
    for name in order:
        times[name].append(uploads[name]())
    print(f"round {round + 1}: " + ", ".join(f"{name} {times[name][-1]:.2f}" for name in names), flush=True)

def spread(values):
    values = sorted(values)
    return f"median {statistics.median(values):.3f} (range {values[0]:.3f}-{values[-1]:.3f})"

print()
for name in names:
    seconds = statistics.median(times[name])
    print(f"{name:18s} {spread(times[name])} s, {1024 / seconds:.0f} MiB/s")
ratio = lambda a, b: [y / x for x, y in zip(times[a], times[b])]  # a's speed / b's speed, per round
print()
print("per round, speed ÷ speed:")
for a, b in [("ours, no digest", "nginx PUT"), ("ours, CRC-32C", "nginx PUT"), ("ours, no digest", "Go, no digest"),
             ("ours, SHA-256", "Go, SHA-256"), ("ours, SHA-256", "SHA-256 alone"), ("ours, SHA-256", "nginx PUT")]:
    print(f"  {a} / {b}: {spread(ratio(a, b))}")
slower = [max(n, s) for n, s in zip(times["nginx PUT"], times["SHA-256 alone"])]
with_sha = sorted(floor / ours for floor, ours in zip(slower, times["ours, SHA-256"]))
print(f"  ours, SHA-256 / the slower of nginx PUT and SHA-256 alone: median {statistics.median(with_sha):.3f} "
      f"(range {with_sha[0]:.3f}-{with_sha[-1]:.3f})")
print()
print("cores busy (the server's and curl's CPU time over the wall time; 2.0 is the whole machine):")
for name, values in busy.items():
    print(f"  {name}: {spread(values)}")

def peak_rss(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) // 1024
nginx_pids = [int(pid) for pid in subprocess.run(["pgrep", "-f", f"nginx.*{work}|nginx: worker"], capture_output=True,
                                                 text=True).stdout.split() if os.path.exists(f"/proc/{pid}")]
print()
print("peak RSS: " + ", ".join(f"{name} {peak_rss(pid)} MiB" for name, pid in server_pids.items())
      + ", nginx (largest process) " + str(max((peak_rss(pid) or 0) for pid in nginx_pids) if nginx_pids else "?")
      + " MiB")

# Eight uploads at once, and a probe.
def concurrent(label, start_upload, probe_port):
    latencies, stop = [], threading.Event()
    def probe():
        next_tick = time.perf_counter()
        while not stop.is_set():
            begin = time.perf_counter()
            urllib.request.urlopen(f"http://127.0.0.1:{probe_port}/", timeout=30).read()
            latencies.append(time.perf_counter() - begin)
            next_tick += 0.05
            time.sleep(max(0, next_tick - time.perf_counter()))
    prober = threading.Thread(target=probe)
    prober.start()
    begin = time.perf_counter()
    threads = [threading.Thread(target=start_upload, args=(index,)) for index in range(8)]
    for thread in threads: thread.start()
    for thread in threads: thread.join()
    elapsed = time.perf_counter() - begin
    stop.set()
    prober.join()
    latencies.sort()
    p = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000
    return 8 * 128 / elapsed, p(0.5), p(0.99)

def many_posts(port):
    return lambda index: curl(["-F", f"file=@{small}", f"http://127.0.0.1:{port}/upload"])
def many_puts(index):
    curl(["-T", small, f"http://127.0.0.1:{nginx}/put/small-{index}.bin"])
    os.unlink(os.path.join(work, "nginx-root", "put", f"small-{index}.bin"))

servers = [("nginx PUT", many_puts, nginx), ("ours, no digest", many_posts(plain), plain),
           ("Go, no digest", many_posts(go), go)]
results = {name: [] for name, _, _ in servers}
print()
print(f"8 concurrent 128 MiB uploads, probe GET / every 50 ms, {rounds} rounds: aggregate MiB/s, probe p50/p99 ms")
for round in range(rounds):
    order = servers[round % 3:] + servers[:round % 3]
    for name, upload, port in order:
        results[name].append(concurrent(name, upload, port))
    print(f"round {round + 1}: " + ", ".join(f"{name} {results[name][-1][0]:.0f} MiB/s "
          f"p50 {results[name][-1][1]:.1f} p99 {results[name][-1][2]:.1f}" for name, _, _ in servers), flush=True)
for name, _, _ in servers:
    rates = sorted(r[0] for r in results[name])
    p50s = sorted(r[1] for r in results[name])
    p99s = sorted(r[2] for r in results[name])
    print(f"{name:18s} {statistics.median(rates):.0f} MiB/s ({rates[0]:.0f}-{rates[-1]:.0f}), "
          f"probe p50 {statistics.median(p50s):.1f} ms ({p50s[0]:.1f}-{p50s[-1]:.1f}), "
          f"p99 {statistics.median(p99s):.1f} ms ({p99s[0]:.1f}-{p99s[-1]:.1f})")
print()
print("peak RSS after: " + ", ".join(f"{name} {peak_rss(pid)} MiB" for name, pid in server_pids.items()))
PY
left=$(find "$work/spool" "$work/go-spool" "$work/nginx-root/put" -type f | wc -l)
echo "files left behind: $left"
