#!/usr/bin/env python3
"""The fault harness: an example server against the faults production brings, on 127.0.0.1.

The server (`--app`): `hummingbird`, Examples/UploadServer's `UploadServer` (the default); or `vapor`,
Examples/VaporUpload's `VaporUploadServer`, which keeps no upload (its answer names each file's SHA-256, checked
against what was sent) and has no S3 store and no resumption, so it runs the disk scenarios only.

Scenarios (`--scenario`, several separated by commas):
- `disk-full`: the spool folder on a tmpfs of `--disk-mib` MiB that the uploads fill (root only: it mounts one);
  files of uploads answered 200 are kept there (`--keep-dir`), and half of them removed after each wave, so that
  the disk fills and frees again and again;
- `s3`: moto (or radosgw, `--s3-engine radosgw`) behind Tests/Peers/flaky_s3.py in `random` mode: 500s, 503
  SlowDown, resets mid-body, stalls past the server's S3 timeout, truncated answers and errors in a 200 of
  CompleteMultipartUpload;
- `disk-eio`: the spool folder on Tests/Faults/eio_fs.py (FUSE, where device-mapper's `error` and `flakey` targets
  are missing), whose writes fail with EIO at random;
- `kill-disk`, `kill-s3`: the server killed with SIGKILL at a random byte of a random upload of a wave, then
  started again, whose sweep (`--stale-after 0`, `--s3-stale-after 0`) removes what the killed one left; every
  other server offers resumption and its wave's uploads take it (a 104 first: counted as "resumption offered").

After every wave it checks the invariants, and fails (exit 1) on the first one broken, saying which:
- each upload answered 200 is in the store whole: its kept file or its object has the digest of what was sent;
- each upload not answered 200 left nothing: no spool file, no kept file, no object, no open multipart upload, no
  pending record (after the restart's sweep, for what a failed form could not be sure of: a request whose answer
  never came may land late); but one whose server was killed after it kept the upload and before it answered may
  be kept whole (never in part: the example keeps a form's files with one rename, the S3 store a form's objects
  with the deletion of its pending record);
- each answer's status is in the documented table: 507 for a full disk, 500 for a disk that errs, 503 with
  Retry-After for a store that keeps failing; a killed server's uploads end without an answer;
- the server's descriptors are back to their idle count, and its memory within `--rss-slack-mib` of its idle size;
- no request to the store was tried past the server's retry budget (`--s3-retries` + 1).

Prints one JSON line of figures at the end: faults injected by kind, uploads accepted and verified, uploads failed
and verified to leave nothing.

    fault_harness.py --server PATH [--app hummingbird|vapor] [--scenario disk-full,disk-eio,s3,kill-disk,kill-s3]
                     [--faults N] [--seed N] [--s3-engine moto|radosgw] [--s3-rate R] [--s3-timeout SECONDS]
"""
import argparse
import collections
import concurrent.futures
import hashlib
import http.client
import json
import os
import queue
import random
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "..", "Peers")
RETRIES = 3
PART = 5 << 20


class Broken(Exception):
    """An invariant that did not hold."""


class App:
    """Which example server the harness runs, and how it is told where to spool: `hummingbird` (UploadServer, by its
    options: it keeps each form answered 200 in a folder of its own, offers resumption and stores into S3) or
    `vapor` (VaporUploadServer, by its environment: it keeps nothing, and answers each file's SHA-256)."""

    # Vapor 4 cannot close a connection after its answer: a refused upload's connection stops being read, and the
    # client's close waits behind its unread bytes, until the idle timeout closes it (30 s by default; 3 here).
    VAPOR_IDLE_TIMEOUT = 3

    def __init__(self, kind: str, binary: str):
        self.kind, self.binary = kind, binary
        self.keeps = self.resumes = self.stores = kind == "hummingbird"
        # How long a wave's connections may take to close: the server closes at once (UploadServer), or at its
        # idle timeout (Vapor's, for a refused upload).
        self.settle_s = 5 if kind == "hummingbird" else App.VAPOR_IDLE_TIMEOUT + 5

    def command(self, arguments: list[str]) -> list[str]:
        if self.kind == "vapor":
            return [self.binary, "serve", "--hostname", "127.0.0.1", "--port", "0", *arguments]
        return [self.binary, "--port", "0", *arguments]

    def on_disk(self, disk: "Disk", resumable: bool) -> tuple[list[str], dict]:
        """The arguments and environment of a server spooling onto `disk`, whose start sweeps what a killed one
        left there; `resumable` offers resumption (104) to uploads that ask for it (UploadServer only)."""
        if self.kind == "vapor":
            return [], {"SPOOL_DIR": disk.spool, "STALE_AFTER": "0", "MAX_UPLOADS_PER_PEER": "1000",
                        "IDLE_TIMEOUT": str(App.VAPOR_IDLE_TIMEOUT),
                        "LOG_LEVEL": "notice"}  # its "Server started on" line is a notice
        return ["--spool-dir", disk.spool, "--keep-dir", disk.kept, "--disk-budget", str(1 << 40),
                "--resume-window", "300" if resumable else "0", "--stale-after", "0"], {}

    def file_field(self, index: int) -> str:
        """The name of a form's file part: UploadServer takes any, the Vapor app's form decodes `photos[]`."""
        return "photos[]" if self.kind == "vapor" else f"file{index}"

    def answered_whole(self, upload: "Upload") -> bool:
        """Whether a 200's answer names each file the client sent by its SHA-256 and size (the Vapor app's; an
        UploadServer's kept files are read back instead)."""
        photos = (upload.answer or {}).get("photos", [])
        return ([photo.get("sha256") for photo in photos] == upload.digests
                and [photo.get("size") for photo in photos] == [len(data) for data in upload.files])


class Server:
    """An example server (`App`), started with `arguments`; its port from the line it prints when it listens."""

    # Every server's log, one after another, kept for a broken invariant's report.
    log = tempfile.NamedTemporaryFile(prefix="fault-harness-", suffix=".log", delete=False)

    def __init__(self, app: App, arguments: list[str], environment: dict | None = None):
        Server.log.write(f"== {app.kind} {' '.join(arguments)} {environment or ''}\n".encode())
        Server.log.flush()
        self.process = subprocess.Popen(
            app.command(arguments), stdout=subprocess.PIPE, stderr=Server.log, text=True,
            env={**os.environ, **(environment or {})})
        # UploadServer's first line says where it listens; Vapor logs a line or two (a warning) before its own.
        # Read by a thread (bounded by a deadline here), which drops what the server says once it listens.
        lines: queue.Queue = queue.Queue()
        listening = threading.Event()

        def read():
            for line in self.process.stdout:
                if not listening.is_set():
                    lines.put(line)
            lines.put(None)

        threading.Thread(target=read, daemon=True).start()
        said, found = [], None
        deadline = time.monotonic() + 120
        while not found and time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                continue
            if line is None:
                break
            said.append(line)
            found = re.search(r"127\.0\.0\.1:(\d+)\b", line)
        listening.set()
        if not found:
            self.stop()
            raise Broken(f"the server did not say where it listens (120 s at most): {''.join(said)!r} (its log: {Server.log.name})")
        self.port = int(found.group(1))

    def descriptors(self) -> int:
        return len(self.descriptor_targets())

    def descriptor_targets(self) -> list[str]:
        """What each open descriptor is (a file's path, `socket:[inode]`, `anon_inode:[eventfd]`)."""
        targets = []
        for name in os.listdir(f"/proc/{self.process.pid}/fd"):
            try:
                targets.append(os.readlink(f"/proc/{self.process.pid}/fd/{name}"))
            except OSError:
                pass  # closed meanwhile
        return sorted(targets)

    def idle(self) -> tuple:
        """Its descriptors and resident memory once a first small upload has made what a server makes once (an
        event loop's descriptors, the allocator's arenas)."""
        for _ in range(20):  # a store meeting faults may refuse it (503): the next try
            warm = Upload(random.Random(0), [1024])
            warm.send(self.port)
            if warm.status == 200:
                break
        else:
            raise Broken(f"no first upload answered 200 in 20 tries, the last {warm.status}")
        time.sleep(0.3)
        return (self.descriptor_targets(), self.rss_mib(), warm)

    def rss_mib(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


class Upload:
    """One form: a caption and `sizes` files of random bytes; what the server answered, once sent."""

    # How its file parts are named (`App.file_field`): set once, for the app under test.
    file_field = staticmethod(lambda index: f"file{index}")

    def __init__(self, draw: random.Random, sizes: list[int]):
        self.files = [draw.randbytes(size) for size in sizes]
        self.digests = [hashlib.sha256(data).hexdigest() for data in self.files]
        self.boundary = f"FaultHarness{draw.getrandbits(64):016x}"
        # Made once, before any thread sends it: building a large body holds Python's lock, and a sending thread
        # starved of it for seconds would look like a client too slow for the server's body rule.
        self.payload = b"".join(self.body())
        self.status: int | None = None
        self.headers: dict = {}  # the answer's; or why there was none
        self.answer: dict | None = None
        # Whether the request offers resumption (the draft's `Upload-Draft-Interop-Version: 6`, `Upload-Complete:
        # ?1`), and whether the server took it (a 104 Upload Resumption Supported before the answer).
        self.resumable = False
        self.offered = False

    def again(self) -> "Upload":
        """The same form, to send again, with no answer yet (shares the bytes)."""
        copy = Upload.__new__(Upload)
        copy.resumable, copy.offered = self.resumable, False
        copy.files, copy.digests, copy.boundary, copy.payload = self.files, self.digests, self.boundary, self.payload
        copy.status, copy.headers, copy.answer = None, {}, None
        return copy

    def body(self) -> list[bytes]:
        pieces = [f"--{self.boundary}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nfaults\r\n".encode()]
        for index, data in enumerate(self.files):
            pieces.append(
                f"--{self.boundary}\r\nContent-Disposition: form-data; name=\"{Upload.file_field(index)}\"; "
                f"filename=\"f{index}.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".encode())
            pieces.append(data)
            pieces.append(b"\r\n")
        pieces.append(f"--{self.boundary}--\r\n".encode())
        return pieces

    def skip_interim(self, sock: socket.socket) -> bool:
        """Reads a 1xx interim answer waiting on `sock` (a 104 that offers resumption), and nothing past it; false
        when what waits is none (the final answer, or the connection's end)."""
        blocking = sock.getblocking()
        sock.setblocking(True)
        try:
            waiting = sock.recv(4096, socket.MSG_PEEK)
            if not waiting.startswith(b"HTTP/1.1 1"):
                return False
            while b"\r\n\r\n" not in waiting:
                waiting = sock.recv(len(waiting) + 4096, socket.MSG_PEEK)
            sock.recv(waiting.index(b"\r\n\r\n") + 4)
            self.offered = self.offered or waiting.startswith(b"HTTP/1.1 104")
            return True
        except OSError:
            return False
        finally:
            sock.setblocking(blocking)

    def write(self, sock: socket.socket, body: bytes, kill_at: int | None, kill) -> int:
        """Writes `body` as the socket takes it, and stops at an answer that comes before the body's end (a full
        disk, a store that failed, a refusal): the server reads no more then, and closes soon after, so a client
        that waited to write the rest would lose the answer; curl polls the same way. Returns the bytes written."""
        sent = 0
        sock.setblocking(False)
        try:
            while sent < len(body):
                readable, writable, _ = select.select([sock], [sock], [], 120)
                if readable and not self.skip_interim(sock):
                    break
                if readable:
                    continue
                if not writable:
                    raise TimeoutError("the server took nothing for 120 s")
                end = len(body) if kill_at is None else min(len(body), kill_at)
                if sent == end:
                    kill()
                    kill_at = None
                    continue
                sent += sock.send(body[sent:min(end, sent + 65536)])
        finally:
            sock.setblocking(True)
        return sent

    def send(self, port: int, kill_at: int | None = None, kill=None):
        """Sends the form in 64 KiB writes; with `kill_at`, calls `kill` once that many bytes are sent."""
        length = len(self.payload)
        sent = 0
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        try:
            connection.putrequest("POST", "/upload")
            connection.putheader("Content-Type", f"multipart/form-data; boundary={self.boundary}")
            connection.putheader("Content-Length", str(length))
            if self.resumable:
                connection.putheader("Upload-Draft-Interop-Version", "6")
                connection.putheader("Upload-Complete", "?1")
            connection.endheaders()
            sent = self.write(connection.sock, self.payload, kill_at, kill)
            while select.select([connection.sock], [], [], 120)[0] and self.skip_interim(connection.sock):
                pass  # the answer comes after any interim one
            response = connection.getresponse()
            self.status = response.status
            self.headers = {name.lower(): value for name, value in response.getheaders()}
            data = response.read()
            if self.status == 200:
                self.answer = json.loads(data)
        except (OSError, http.client.HTTPException) as error:
            self.status = None  # no answer: the connection ended (a killed server, a refusal mid-body)
            self.headers = {"error": repr(error), "sent": sent}
        finally:
            connection.close()


def check_statuses(uploads: list[Upload], allowed: set, killed: bool = False):
    for upload in uploads:
        if upload.status is None and killed:
            continue
        if upload.status == 200:
            continue
        if upload.status not in allowed:
            raise Broken(f"an upload was answered {upload.status}, not one of {sorted(allowed)}: {upload.headers}")
        if upload.status == 503 and "retry-after" not in upload.headers:
            raise Broken(f"a 503 without Retry-After: {upload.headers}")


# libdispatch (under Swift's concurrency on Linux) makes a timerfd for each timer heap it uses, lazily: one for each
# of its three clocks and three QoS classes at most. More than that is a leak; fewer is whatever timers ran.
DISPATCH_TIMER_HEAPS = 9
# AsyncHTTPClient's shared client (the S3 store's) keeps idle connections to a host for a minute, 8 at most.
STORE_POOL = 8


def socket_ports() -> dict:
    """Each TCP socket's inode, with its local and remote ports (/proc/net/tcp and tcp6)."""
    ports = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as lines:
                next(lines)
                for line in lines:
                    fields = line.split()
                    local, remote, inode = fields[1], fields[2], fields[9]
                    ports[inode] = (int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16))
        except FileNotFoundError:
            pass
    return ports


def classify(targets: list[str], store_port: int | None) -> collections.Counter:
    """The descriptors by kind: a connection to the store, a timerfd, or what else it is (a path, a listener...)."""
    ports = socket_ports()
    kinds: collections.Counter = collections.Counter()
    for target in targets:
        inode = target[len("socket:["):-1] if target.startswith("socket:[") else None
        if inode and store_port and ports.get(inode, (0, 0))[1] == store_port:
            kinds["a connection to the store"] += 1
        elif target == "anon_inode:[timerfd]":
            kinds["timerfd"] += 1
        else:
            kinds[target if not inode else "socket"] += 1
    return kinds


def check_idle(server: Server, idle: tuple, slack_mib: float, what: str, store_port: int | None = None,
               settle_s: float = 5):
    """Descriptors back to their idle set (but the store's pooled connections, up to its pool, and timerfds, up to
    libdispatch's heaps), memory within `slack_mib` of its idle size; tried for `settle_s`, since the server closes a
    connection just after its answer (or, for a client that went quiet, at its deadlines)."""
    before = classify(idle[0], store_port)
    for _ in range(int(settle_s * 10)):
        now = classify(server.descriptor_targets(), store_port)
        extra = {kind: count - before[kind] for kind, count in now.items()
                 if count > before[kind] and kind not in ("timerfd", "a connection to the store")}
        if not extra and now["timerfd"] <= DISPATCH_TIMER_HEAPS and now["a connection to the store"] <= STORE_POOL:
            break
        time.sleep(0.1)
    else:
        raise Broken(f"after {what}: descriptors {dict(now)}, when idle {dict(before)}")
    if server.rss_mib() > idle[1] + slack_mib:
        raise Broken(f"after {what}: {server.rss_mib():.0f} MiB resident, {idle[1]:.0f} when idle")


def wave(server: Server, uploads: list[Upload], kill_at: int | None = None):
    """Sends `uploads` at once; with `kill_at`, the server is killed at that byte of the first one."""
    with concurrent.futures.ThreadPoolExecutor(len(uploads)) as pool:
        futures = [pool.submit(upload.send, server.port) for upload in uploads[1:]]
        uploads[0].send(server.port, kill_at, server.kill if kill_at is not None else None)
        for future in futures:
            future.result()


class Disk:
    """A tmpfs of `mib` MiB with a spool folder and a folder of kept files; with `eio_rate`, both are on
    Tests/Faults/eio_fs.py over that tmpfs, whose writes fail with EIO at that rate."""

    app: App  # the app under test (set once): whether it keeps what it was sent

    def __init__(self, mib: int, eio_rate: float | None = None, seed: int = 0):
        self.root = tempfile.mkdtemp(prefix="faults-disk-")
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={mib}m", "tmpfs", self.root], check=True)
        top = self.root
        self.failing = None
        if eio_rate is not None:
            top = os.path.join(self.root, "eio")
            os.mkdir(os.path.join(self.root, "backing"))
            os.mkdir(top)
            self.failing = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "eio_fs.py"), os.path.join(self.root, "backing"), top, "--rate",
                 str(eio_rate), "--seed", str(seed)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            if self.failing.stdout.readline().strip() != "mounted":
                self.remove()
                raise Broken("Tests/Faults/eio_fs.py did not mount")
        self.spool = os.path.join(top, "spool")
        self.kept = os.path.join(top, "kept")
        os.mkdir(self.spool, 0o700)
        os.mkdir(self.kept, 0o700)

    def start(self, app: App, resumable: bool = False) -> Server:
        """The server on this disk; `resumable` offers resumption (104) to uploads that ask for it."""
        return Server(app, *app.on_disk(self, resumable))

    @staticmethod
    def digest(path: str) -> str:
        with open(path, "rb") as file:
            return hashlib.sha256(file.read()).hexdigest()

    def folders(self) -> dict:
        """The kept folder's uploads: each folder's files' digests, in the form's order."""
        kept = {}
        for name in os.listdir(self.kept):
            folder = os.path.join(self.kept, name)
            if name.startswith(".staging-"):
                raise Broken(f"a staging folder left in the kept folder: {name}")
            files = sorted(os.listdir(folder), key=int)
            kept[folder] = [self.digest(os.path.join(folder, file)) for file in files]
        return kept

    def check(self, uploads: list[Upload], live: dict, killed: bool = False) -> int:
        """Each upload answered 200 kept whole, in a folder of its own (by an app that keeps; by one that does not,
        its answer names each file's digest); the spool empty. With `killed`, an upload that got no answer may have
        been kept too (the server died between keeping it and answering): whole, or not at all; nothing else is in
        the kept folder. Returns how many of those were kept."""
        kept = self.folders()
        adopted = 0
        for upload in uploads:
            if upload.status == 200 and not Disk.app.keeps:
                if not Disk.app.answered_whole(upload):
                    raise Broken(f"an answer is not what the client sent: {upload.answer}, sent {upload.digests}")
            elif upload.status == 200:
                folder = os.path.dirname(upload.answer["files"][0]["kept"])
                if kept.get(folder) != upload.digests:
                    raise Broken(f"{folder} is not what the client sent")
                live[folder] = upload.digests
        if killed:
            unanswered = [upload.digests for upload in uploads if upload.status is None]
            for folder, digests in kept.items():
                if folder not in live and digests in unanswered:
                    live[folder] = digests  # kept whole, its answer lost with the server
                    adopted += 1
        if set(kept) != set(live):
            left = {folder: len(kept[folder]) for folder in set(kept) - set(live)}
            raise Broken(f"kept uploads of no upload answered 200 (or kept in part): {left}")
        # The files of a form are removed as its answer goes out: a moment more for the last of them.
        for _ in range(50):
            spooled = os.listdir(self.spool)
            if not spooled:
                break
            time.sleep(0.1)
        else:
            raise Broken(f"the spool folder holds {spooled} after the wave")
        return adopted

    def ballast(self, leave: int):
        """A file beside the folders that leaves `leave` bytes of the disk free."""
        stats = os.statvfs(self.spool)
        with open(os.path.join(os.path.dirname(self.spool), "ballast"), "wb") as file:
            file.truncate(0)
            file.write(b"\0" * max(0, stats.f_bavail * stats.f_frsize - leave))

    def free_some(self, draw: random.Random, live: dict):
        for folder in draw.sample(sorted(live), len(live) // 2):
            shutil.rmtree(folder)
            del live[folder]

    def remove(self) -> int:
        """Unmounts all; returns how many EIOs the failing file system answered (0 without one)."""
        injected = 0
        if self.failing:
            self.failing.stdin.close()
            report = self.failing.stdout.readline()
            self.failing.wait(timeout=30)
            injected = json.loads(report)["injected"] if report.strip() else 0
        subprocess.run(["umount", self.root], check=False)
        shutil.rmtree(self.root, ignore_errors=True)
        return injected


def disk_full(app: App, draw: random.Random, faults: int, figures: collections.Counter, args):
    """Waves of uploads onto a small disk that the kept files fill: each upload that finds it full is answered 507.
    An app that keeps nothing gets a disk with a wave's worth of room (a ballast file takes the rest), so that the
    wave's own spool files fill it."""
    disk = Disk(args.disk_mib)
    if not app.keeps:
        disk.ballast(leave=8 << 20)
    disk_waves(app, draw, faults, figures, args, disk, "disk-full", 507, "a filling disk", 3 << 20)


def disk_eio(app: App, draw: random.Random, faults: int, figures: collections.Counter, args):
    """Waves of uploads onto a disk whose writes fail with EIO (3 % of them): each upload that meets one is
    answered 500 (the server's own failure, with nothing of its paths), the rest 200, and the server goes on."""
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount") is None:
        raise Broken("disk-eio needs FUSE (/dev/fuse, fusermount) and fusepy (pip)")
    disk = Disk(args.disk_mib * 4, eio_rate=0.03, seed=draw.getrandbits(32))
    # Files to 1 MiB: a few writes each, so that most forms get through (one of 3 MiB meets an EIO about half the
    # time, and a wave of them may all fail).
    disk_waves(app, draw, faults, figures, args, disk, "disk-eio", 500, "a failing disk", 1 << 20)


def disk_waves(app: App, draw: random.Random, faults: int, figures: collections.Counter, args, disk: "Disk",
               kind: str, status: int, what: str, largest: int):
    """Waves of four uploads (files of 1 KiB to `largest` bytes) onto `disk` until `faults` were answered `status`
    (a full disk's 507 is allowed in any); half the kept uploads removed after each wave, so that the disk fills and
    frees again and again."""
    server = disk.start(app)
    live: dict = {}
    try:
        idle = server.idle()
        disk.check([idle[2]], live)
        while figures[kind] < faults:
            uploads = [Upload(draw, [draw.randint(1 << 10, largest) for _ in range(draw.randint(1, 2))])
                       for _ in range(4)]
            wave(server, uploads)
            check_statuses(uploads, {status, 507})
            disk.check(uploads, live)
            check_idle(server, idle, args.rss_slack_mib, f"a wave onto {what}", settle_s=app.settle_s)
            figures[kind] += sum(upload.status == status for upload in uploads)
            figures["accepted"] += sum(upload.status == 200 for upload in uploads)
            figures["failed"] += sum(upload.status != 200 for upload in uploads)
            disk.free_some(draw, live)
    finally:
        server.stop()
        injected = disk.remove()
        if injected:
            figures["eio injected"] += injected


def kill_disk(app: App, draw: random.Random, faults: int, figures: collections.Counter, args):
    disk = Disk(max(args.disk_mib, 64))
    live: dict = {}
    try:
        while figures["kill-disk"] < faults:
            resumable = app.resumes and figures["kill-disk"] % 2 == 1
            server = disk.start(app, resumable=resumable)
            # Small forms and large ones, the killed one first: the others end before it or die with it.
            large = draw.random() < 0.3
            uploads = [Upload(draw, [draw.randint(1 << 20, 24 << 20) if large else draw.randint(1 << 10, 3 << 20)
                                     for _ in range(draw.randint(1, 2))]) for _ in range(3)]
            for upload in uploads:
                upload.resumable = resumable
            length = len(uploads[0].payload)
            wave(server, uploads, kill_at=draw.randint(1, length))
            check_statuses(uploads, {507}, killed=True)  # the disk may fill too: large forms, kept files
            server.stop()
            figures["kill-disk"] += 1
            figures["resumption offered (104)"] += sum(upload.offered for upload in uploads)
            figures["accepted"] += sum(upload.status == 200 for upload in uploads)
            figures["failed"] += sum(upload.status != 200 for upload in uploads)
            # A killed server's spool files and staging folders stay until the next start sweeps them: checked then.
            server = disk.start(app)
            figures["kept whole, answer lost in a kill"] += disk.check(uploads, live, killed=True)
            server.stop()
            disk.free_some(draw, live)
        server = disk.start(app)
        disk.check([], live)
        server.stop()
    finally:
        disk.remove()


class Bucket:
    """An S3 engine on 127.0.0.1 with a bucket (moto, or Ceph's radosgw, which checks every signature), behind
    Tests/Peers/flaky_s3.py in `random` mode at `rate`."""

    PREFIX = "forms/"

    def __init__(self, engine: str, seed: int, rate: float, stall: float, idle_timeout: float):
        import boto3  # only the S3 scenarios need it

        self.idle_timeout = idle_timeout  # short: a store's retries outlast it, and the upload must still be answered
        if engine == "radosgw":
            self.engine = subprocess.Popen([sys.executable, os.path.join(PEERS, "radosgw.py")], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            line = self.engine.stdout.readline()
            if not line:
                raise Broken("radosgw did not start (Tests/Peers/radosgw.py)")
            started = json.loads(line)
            self.engine_port = int(started["endpoint"].rsplit(":", 1)[1].strip("/"))
            keys = (started["access"], started["secret"])
        else:
            self.engine = subprocess.Popen([sys.executable, os.path.join(PEERS, "s3_moto.py")], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self.engine_port = int(self.engine.stdout.readline())
            keys = ("moto", "moto")
        self.environment = {"AWS_ACCESS_KEY_ID": keys[0], "AWS_SECRET_ACCESS_KEY": keys[1], "AWS_REGION": "us-east-1"}
        self.proxy = subprocess.Popen(
            [sys.executable, os.path.join(PEERS, "flaky_s3.py"), str(self.engine_port), "random", "--seed",
             str(seed), "--rate", str(rate), "--stall", str(stall)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.proxy_port = int(self.proxy.stdout.readline())
        self.s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{self.engine_port}", region_name="us-east-1",
                               aws_access_key_id=keys[0], aws_secret_access_key=keys[1])
        self.s3.create_bucket(Bucket="faults")

    def arguments(self, timeout: float, resumable: bool = False) -> list[str]:
        """The server into this bucket; `resumable` offers resumption (104)."""
        return ["--store", f"s3://faults/{self.PREFIX}", "--s3-endpoint", f"http://127.0.0.1:{self.proxy_port}",
                "--s3-request-timeout", str(timeout), "--s3-retries", str(RETRIES), "--s3-part-size", str(PART),
                "--s3-stale-after", "0", "--resume-window", "300" if resumable else "0",
                "--idle-timeout", str(self.idle_timeout)]

    def faults(self) -> dict:
        connection = http.client.HTTPConnection("127.0.0.1", self.proxy_port, timeout=30)
        connection.request("GET", "/__faults")
        report = json.loads(connection.getresponse().read())
        connection.close()
        return report

    def keys(self) -> set:
        pages = self.s3.get_paginator("list_objects_v2").paginate(Bucket="faults", Prefix=self.PREFIX)
        return {item["Key"] for page in pages for item in page.get("Contents", [])}

    def open_uploads(self) -> int:
        return len(self.s3.list_multipart_uploads(Bucket="faults", Prefix=self.PREFIX).get("Uploads", []))

    def digest(self, key: str) -> str:
        return hashlib.sha256(self.s3.get_object(Bucket="faults", Key=key)["Body"].read()).hexdigest()

    def verify(self, uploads: list[Upload], live: dict):
        """Each file of an upload answered 200 is an object with the digest of what was sent: live from now on."""
        for upload in uploads:
            if upload.status != 200:
                continue
            for file, digest in zip(upload.answer["files"], upload.digests):
                if self.digest(file["key"]) != digest:
                    raise Broken(f"the object {file['key']} is not what the client sent")
                live[file["key"]] = digest

    def check(self, uploads: list[Upload], live: dict, killed: bool = False) -> int:
        """Each file of an upload answered 200 is an object with the digest of what was sent; no other object, no
        pending record. With `killed`, an upload that got no answer may have been kept too (the server died between
        committing its form and answering): whole, in a form folder of its own, or not at all. Returns how many of
        those were kept."""
        self.verify(uploads, live)
        keys = self.keys()
        adopted = 0
        if killed:
            unanswered = [sorted(upload.digests) for upload in uploads if upload.status is None]
            folders = collections.defaultdict(list)
            for key in keys - set(live):
                if not key.startswith(self.PREFIX + ".pending/"):
                    folders[key.rsplit("/", 1)[0]].append(key)
            for folder, left in folders.items():
                digests = {key: self.digest(key) for key in left}
                if sorted(digests.values()) in unanswered:
                    live.update(digests)  # kept whole, its answer lost with the server
                    adopted += 1
        if keys != set(live):
            left = {key: self.describe(key) for key in sorted(keys - set(live))}
            raise Broken(f"objects of no upload answered 200 (or kept in part): {left}; missing: "
                         f"{sorted(set(live) - keys)}")
        return adopted

    def unfinished(self) -> int:
        """Open multipart uploads and pending records: what a sweep removes."""
        return self.open_uploads() + sum(key.startswith(self.PREFIX + ".pending/") for key in self.keys())

    def quiet(self):
        """Waits until no request is under way at the proxy (a stalled one is answered after `--stall` seconds):
        a sweep run before then may meet an object that lands after it."""
        for _ in range(600):
            if self.faults()["inFlight"] == 0:
                return
            time.sleep(0.05)
        raise Broken("requests to the store still under way after 30 s")

    def describe(self, key: str) -> str:
        """An object as a report names it: its field, filename and size."""
        if key.startswith(self.PREFIX + ".pending/"):
            return "a pending record"
        head = self.s3.head_object(Bucket="faults", Key=key)
        return f"{head['Metadata'].get('field')} {head['Metadata'].get('filename')} {head['ContentLength']} bytes"

    def remove(self):
        for process in (self.proxy, self.engine):
            process.stdin.close()
            process.wait(timeout=30)


def swept(app: App, bucket: Bucket, args, live: dict, resumable: bool = False) -> tuple:
    """A server started until its sweep and its first upload (`Server.idle`, verified into `live`) have left no
    multipart upload open and no pending record; the server and its idle levels. The sweep's requests meet faults
    too, and so does that upload, which may fail unsure of what it left: a start that leaves something leaves it to
    the next, as in production."""
    for _ in range(5):
        bucket.quiet()
        server = Server(app, bucket.arguments(args.s3_timeout, resumable), bucket.environment)
        idle = server.idle()
        bucket.verify([idle[2]], live)
        bucket.quiet()
        if bucket.unfinished() == 0:
            return server, idle
        server.stop()
    raise Broken(f"{bucket.unfinished()} multipart uploads and pending records left after five starts' sweeps")


def store_faults(app: App, draw: random.Random, faults: int, figures: collections.Counter, args, kill: bool):
    bucket = Bucket(args.s3_engine, draw.getrandbits(32), args.s3_rate if not kill else 0.0, args.s3_timeout + 1,
                    args.s3_timeout + 1)
    live: dict = {}
    name = "kill-s3" if kill else "s3"
    try:
        server, idle = swept(app, bucket, args, live)
        bucket.check([], live)
        injected = 0
        while injected < faults and figures["accepted"] + figures["failed"] < 40 * faults:
            uploads = [Upload(draw, [draw.randint(1 << 10, 12 << 20) for _ in range(draw.randint(1, 2))])
                       for _ in range(3)]
            if kill:
                # Every other server offers resumption, and its uploads take it: a kill then ends paused uploads too.
                resumable = injected % 2 == 1
                for upload in uploads:
                    upload.resumable = resumable
                length = len(uploads[0].payload)
                wave(server, uploads, kill_at=draw.randint(1, length))
                check_statuses(uploads, set(), killed=True)
                figures["resumption offered (104)"] += sum(upload.offered for upload in uploads)
                server, _ = swept(app, bucket, args, live, resumable=injected % 2 == 0)
                figures["kept whole, answer lost in a kill"] += bucket.check(uploads, live, killed=True)
                injected += 1
            else:
                wave(server, uploads)
                check_statuses(uploads, {503})
                if bucket.unfinished():  # a failed form whose cleanup could not be sure; the sweep's to remove
                    server.stop()
                    bucket.verify(uploads, live)  # before the restart's sweep and its checks
                    server, idle = swept(app, bucket, args, live)
                else:
                    check_idle(server, idle, args.rss_slack_mib, "a wave into a failing store", bucket.proxy_port)
                injected = sum(bucket.faults()["injected"].values())
            bucket.check(uploads, live)
            figures["accepted"] += sum(upload.status == 200 for upload in uploads)
            figures["failed"] += sum(upload.status != 200 for upload in uploads)
        server.stop()
        report = bucket.faults()
        if report["mostTries"] > RETRIES + 1:
            raise Broken(f"{report['mostTried']} was tried {report['mostTries']} times, past {RETRIES} retries")
        if kill:
            figures[name] += injected
        else:
            for kind, count in report["injected"].items():
                figures[f"s3-{kind}"] += count
    finally:
        bucket.remove()


SCENARIOS = {
    "disk-full": disk_full, "disk-eio": disk_eio, "kill-disk": kill_disk,
    "s3": lambda *a: store_faults(*a, kill=False), "kill-s3": lambda *a: store_faults(*a, kill=True),
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True, help="the example server's binary")
    parser.add_argument("--app", choices=["hummingbird", "vapor"], default="hummingbird",
                        help="which example it is: UploadServer (hummingbird) or VaporUploadServer (vapor)")
    parser.add_argument("--scenario", default="disk-full,kill-disk")
    parser.add_argument("--faults", type=int, default=50, help="faults to inject in each scenario")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--disk-mib", type=int, default=16)
    parser.add_argument("--rss-slack-mib", type=float, default=96)
    parser.add_argument("--s3-rate", type=float, default=0.2, help="the share of the store's requests that fail")
    parser.add_argument("--s3-timeout", type=float, default=2, help="the server's S3 request timeout, in seconds")
    parser.add_argument("--s3-engine", choices=["moto", "radosgw"], default="moto",
                        help="the S3 engine behind the proxy: moto, or Ceph's radosgw (a one-node cluster, slow to start)")
    args = parser.parse_args()
    app = App(args.app, args.server)
    unknown = [name for name in args.scenario.split(",") if name not in SCENARIOS]
    if unknown:
        parser.error(f"no scenario {', '.join(unknown)}: the scenarios are {', '.join(SCENARIOS)}")
    if not app.stores and any(name in ("s3", "kill-s3") for name in args.scenario.split(",")):
        parser.error(f"the {args.app} example has no S3 store: its scenarios are disk-full, disk-eio and kill-disk")
    Upload.file_field = staticmethod(app.file_field)
    Disk.app = app
    draw = random.Random(args.seed)
    figures: collections.Counter = collections.Counter()
    try:
        for name in args.scenario.split(","):
            SCENARIOS[name](app, draw, args.faults, figures, args)
    except Broken as broken:
        print(f"fault_harness: seed {args.seed}: {broken}", file=sys.stderr)
        print(f"the servers' log: {Server.log.name}", file=sys.stderr)
        print(json.dumps({"seed": args.seed, "broken": str(broken), **figures}))
        return 1
    os.unlink(Server.log.name)
    print(json.dumps({"seed": args.seed, **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
