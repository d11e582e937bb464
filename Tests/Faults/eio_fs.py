#!/usr/bin/env python3
"""A file system whose writes fail with EIO, for the fault harness's `disk-eio` (Tests/Faults/fault_harness.py), or
are slow, for a store slower than the network (`HTTP2Tests.aSlowDiskHoldsAStreamToItsWindow`).

Device-mapper's `error` and `flakey` targets are what a kernel offers for a disk that errs; where there is no
device-mapper (a container, this VM) FUSE still is: this is a FUSE file system (fusepy, on libfuse 2) that passes
every call through to the folder BACKING, and answers a `write` with EIO at `--rate`, drawn by a generator seeded
with `--seed`, as a disk that fails under a file does; with `--bandwidth B`, each write first takes its length over
B seconds (a disk of B bytes a second, per writer). Reads, creates, renames and removals always pass: the server
must still be able to clean up.

Mounts at MOUNTPOINT, prints "mounted" on one line once the mount answers, and serves until its standard input
closes; then unmounts and prints a JSON report: the writes, and the EIOs it answered.

    eio_fs.py BACKING MOUNTPOINT [--rate R] [--seed N] [--bandwidth BYTES_PER_SECOND]
"""
import argparse
import errno
import json
import os
import random
import subprocess
import sys
import threading
import time

from fuse import FUSE, FuseOSError, Operations


class FailingWrites(Operations):
    """BACKING, passed through; a `write` fails with EIO at `rate`, and takes its length over `bandwidth` (bytes a
    second) when one is given."""

    def __init__(self, backing: str, rate: float, seed: int, bandwidth: float | None = None):
        self.backing = os.path.realpath(backing)
        self.rate = rate
        self.bandwidth = bandwidth
        self.draw = random.Random(seed)
        self.guard = threading.Lock()
        self.writes = 0
        self.injected = 0

    def path(self, path: str) -> str:
        return os.path.join(self.backing, path.lstrip("/"))

    def __call__(self, operation, path, *arguments):
        try:
            return super().__call__(operation, path, *arguments)
        except OSError as error:  # the backing folder's own errors, passed on as they are
            raise FuseOSError(error.errno or errno.EIO)

    def access(self, path, mode):
        if not os.access(self.path(path), mode):
            raise FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        status = os.lstat(self.path(path))
        keys = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")
        return {key: getattr(status, key) for key in keys}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self.path(path))

    def statfs(self, path):
        status = os.statvfs(self.path(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag", "f_frsize",
                "f_namemax")
        return {key: getattr(status, key) for key in keys}

    def chmod(self, path, mode):
        os.chmod(self.path(path), mode)

    def chown(self, path, uid, gid):
        os.chown(self.path(path), uid, gid)

    def mkdir(self, path, mode):
        os.mkdir(self.path(path), mode)

    def rmdir(self, path):
        os.rmdir(self.path(path))

    def unlink(self, path):
        os.unlink(self.path(path))

    def rename(self, old, new):
        os.rename(self.path(old), self.path(new))

    def utimens(self, path, times=None):
        os.utime(self.path(path), times)

    def open(self, path, flags):
        return os.open(self.path(path), flags)

    def create(self, path, mode, fi=None):
        return os.open(self.path(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def read(self, path, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        with self.guard:
            self.writes += 1
            failing = self.draw.random() < self.rate
            self.injected += failing
        if failing:
            raise FuseOSError(errno.EIO)
        if self.bandwidth:
            time.sleep(len(data) / self.bandwidth)
        return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        os.truncate(self.path(path) if fh is None else fh, length)

    def flush(self, path, fh):
        return 0

    def fsync(self, path, datasync, fh):
        os.fsync(fh)

    def release(self, path, fh):
        os.close(fh)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("backing")
    parser.add_argument("mountpoint")
    parser.add_argument("--rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bandwidth", type=float)
    options = parser.parse_args()
    operations = FailingWrites(options.backing, options.rate, options.seed, options.bandwidth)

    def announce_then_wait():
        for _ in range(200):
            if os.path.ismount(options.mountpoint):
                break
            time.sleep(0.05)
        print("mounted" if os.path.ismount(options.mountpoint) else "not mounted", flush=True)
        sys.stdin.read()
        subprocess.run(["fusermount", "-u", "-z", options.mountpoint], check=False)

    threading.Thread(target=announce_then_wait, daemon=True).start()
    FUSE(operations, options.mountpoint, foreground=True, nothreads=False, allow_other=True, big_writes=True)
    print(json.dumps({"writes": operations.writes, "injected": operations.injected}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
