#!/usr/bin/env python3
"""The soak: the example server under mixed traffic for `--seconds`, its memory and descriptors sampled each second.

On 127.0.0.1, against Examples/UploadServer with its spool folder on a tmpfs (root only: it mounts one):
- legitimate uploads of every size (16 forms made first, 1 KiB to 32 MiB, log-uniform), three at a time, each
  answer's SHA-256 compared with what was sent;
- hostile clients, one scenario after another (Examples/UploadServer/Scripts/hostile_clients.py: slow headers,
  stalled bodies, clients that never read, an idle flood, a refused upload, doubtful framing, an unread body);
- faults: every 10 s the disk is filled to its last MiB for 3 s, so that uploads meet a full disk (507).

It fails (exit 1) if an upload is answered other than 200 with the right digest, 507 (a full disk) or 503 (slots
taken), if a hostile scenario fails, or if the server leaks: its resident memory over the last quarter of the run
above the second quarter's by more than `--rss-slack-mib` (a slope, not a level: the allocator keeps what it
freed), or its descriptors, once idle at the end, above their idle count before the traffic (libdispatch's timerfds
aside, up to its nine timer heaps). Prints one JSON line of figures; `--plot FILE` draws both curves (matplotlib).

    soak.py --server PATH [--seconds 60] [--plot soak.png] [--seed N]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fault_harness as harness  # noqa: E402  (the server and the upload client, shared)

HOSTILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Examples", "UploadServer",
                       "Scripts", "hostile_clients.py")
SCENARIOS = [
    ["slow-headers", "--connections", "20"], ["stalled", "--connections", "4"],
    ["never-read", "--connections", "4", "--hold", "2"], ["idle-flood", "--connections", "40", "--hold", "2"],
    ["refused"], ["framing"], ["unread", "--hold", "2"], ["upload"],
]


class Soak:
    def __init__(self, args):
        self.args = args
        self.draw = random.Random(args.seed)
        self.lock = threading.Lock()
        self.failures: list[str] = []
        self.counts = {"uploads": 0, "answered 507": 0, "answered 503": 0, "hostile runs": 0, "disk full": 0}
        self.samples: list[tuple[float, float, int]] = []  # seconds, RSS MiB, descriptors
        self.fills: list[tuple[float, float]] = []  # when the disk was full
        self.root = tempfile.mkdtemp(prefix="soak-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.disk_mib}m", "tmpfs", self.root], check=True)
        self.spool = os.path.join(self.root, "spool")
        os.mkdir(self.spool, 0o700)
        self.server = harness.Server(harness.App("hummingbird", args.server), [
            "--spool-dir", self.spool, "--disk-budget", str(1 << 40), "--resume-window", "0",
            "--header-timeout", "2", "--body-rate", "1024", "--body-window", "10", "--idle-timeout", "10",
            "--write-timeout", "3", "--max-uploads-per-peer", "1000"])
        self.start = time.monotonic()
        self.stop = self.start + args.seconds

    def fail(self, what: str):
        with self.lock:
            self.failures.append(what)

    def uploads(self, forms: list):
        draw = random.Random(self.draw.getrandbits(64))
        while time.monotonic() < self.stop:
            upload = draw.choice(forms).again()
            size = len(upload.files[0])
            upload.send(self.server.port)
            with self.lock:
                self.counts["uploads"] += 1
                if upload.status in (503, 507):
                    self.counts[f"answered {upload.status}"] += 1
            if upload.status == 200:
                if upload.answer["files"][0]["sha256"] != upload.digests[0]:
                    self.fail(f"an upload of {size} bytes came back with another digest")
            elif upload.status not in (503, 507):
                self.fail(f"an upload of {size} bytes was answered {upload.status}: {upload.headers}")

    def hostile(self):
        index = 0
        while time.monotonic() < self.stop:
            scenario = SCENARIOS[index % len(SCENARIOS)]
            index += 1
            result = subprocess.run([sys.executable, HOSTILE, str(self.server.port), *scenario],
                                    capture_output=True, text=True, timeout=120)
            with self.lock:
                self.counts["hostile runs"] += 1
            if result.returncode != 0:
                self.fail(f"hostile {scenario[0]}: {result.stderr[-500:]}")

    def faults(self):
        while time.monotonic() + 13 < self.stop:
            time.sleep(10)
            filler = os.path.join(self.root, "filler")
            free = os.statvfs(self.root).f_bavail * os.statvfs(self.root).f_frsize
            began = time.monotonic() - self.start
            try:
                with open(filler, "wb") as file:  # all but the last MiB
                    file.truncate(0)
                    block = b"\0" * (1 << 20)
                    for _ in range(max(0, free // len(block) - 1)):
                        file.write(block)
            except OSError:
                pass  # the disk was fuller than it said: it is full
            time.sleep(3)
            os.remove(filler)
            with self.lock:
                self.counts["disk full"] += 1
                self.fills.append((began, time.monotonic() - self.start))

    def sample(self):
        while time.monotonic() < self.stop + 4:
            self.samples.append((time.monotonic() - self.start, self.server.rss_mib(), self.server.descriptors()))
            time.sleep(1)

    def run(self) -> dict:
        idle = self.server.idle()
        # The forms sent, made before the traffic starts (see `Upload.payload`): 16 sizes, 1 KiB to 32 MiB.
        forms = [harness.Upload(self.draw, [int(2 ** self.draw.uniform(10, 25))]) for _ in range(16)]
        workers = [threading.Thread(target=self.uploads, args=(forms,)) for _ in range(3)]
        workers += [threading.Thread(target=work) for work in (self.hostile, self.faults, self.sample)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        try:
            # A hostile client's connection still open as the traffic ends is the server's to close at its own
            # deadlines (header 2 s, write 3 s, idle 10 s, the body rate's two windows of 10 s): a loaded machine
            # closes it late, a leak never.
            harness.check_idle(self.server, idle, float("inf"), "the soak", settle_s=30)
        except harness.Broken as broken:
            self.fail(str(broken))
        quarter = max(1, len(self.samples) // 4)
        second = statistics.median(rss for _, rss, _ in self.samples[quarter:2 * quarter])
        last = statistics.median(rss for _, rss, _ in self.samples[-quarter:])
        if last > second + self.args.rss_slack_mib:
            self.fail(f"resident memory grew: {second:.0f} MiB over the second quarter, {last:.0f} over the last")
        return {
            "seconds": self.args.seconds, "seed": self.args.seed, **self.counts,
            "rssIdleMiB": round(idle[1]), "rssSecondQuarterMiB": round(second), "rssLastQuarterMiB": round(last),
            "rssMaxMiB": round(max(rss for _, rss, _ in self.samples)),
            "descriptorsIdle": len(idle[0]), "descriptorsMax": max(fds for _, _, fds in self.samples),
            "descriptorsEnd": self.server.descriptors(), "failures": self.failures,
        }

    def plot(self, path: str):
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plot

        seconds = [second for second, _, _ in self.samples]
        figure, (memory, descriptors) = plot.subplots(2, 1, sharex=True, figsize=(8, 4.5), dpi=80)
        memory.plot(seconds, [rss for _, rss, _ in self.samples], color="tab:blue")
        memory.set_ylabel("resident MiB")
        descriptors.plot(seconds, [fds for _, _, fds in self.samples], color="tab:green")
        descriptors.set_ylabel("descriptors")
        descriptors.set_xlabel("seconds")
        for began, ended in self.fills:
            for axis in (memory, descriptors):
                axis.axvspan(began, ended, color="tab:red", alpha=0.15, linewidth=0)
        memory.set_title(f"UploadServer, {self.args.seconds} s of uploads, hostile clients and a full disk (red)")
        figure.tight_layout()
        figure.savefig(path)

    def remove(self):
        self.server.stop()
        subprocess.run(["umount", self.root], check=False)
        os.rmdir(self.root)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--disk-mib", type=int, default=256)
    parser.add_argument("--rss-slack-mib", type=float, default=32)
    parser.add_argument("--plot")
    args = parser.parse_args()
    soak = Soak(args)
    try:
        figures = soak.run()
        if args.plot:
            soak.plot(args.plot)
    finally:
        soak.remove()
    if figures["failures"]:
        print(f"soak: the server's log: {harness.Server.log.name}", file=sys.stderr)
    else:
        os.unlink(harness.Server.log.name)
    print(json.dumps(figures))
    return 1 if figures["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
