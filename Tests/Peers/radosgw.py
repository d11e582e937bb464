#!/usr/bin/env python3
"""A one-node Ceph cluster with radosgw on 127.0.0.1, for the S3 store's tests: a real S3 engine that checks
signatures, payload hashes and clock skew (moto checks none of them).

One monitor, one OSD (memstore in RAM by default; --bluestore for a file-backed store that large uploads fit in),
radosgw, no manager and no systemd, from a generated ceph.conf in a short folder under /tmp (the admin sockets'
paths must fit in 107 bytes). Prints one JSON line, {"endpoint", "access", "secret"}, once radosgw answers and a
user exists; serves until its standard input closes; then stops the daemons it started, by their PIDs, and
removes the folder. Exits 1, saying why on stderr, when the cluster does not come up.

    radosgw.py [--bluestore SIZE_GIB]
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(*command: str, folder: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()[-800:]}")
    return done.stdout


def main() -> int:
    # SIGTERM (CI's cleanup of leftovers) ends this script through its `finally`, which stops the daemons.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    bluestore_gib = int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[1] == "--bluestore" else 0
    folder = tempfile.mkdtemp(prefix="rgw", dir="/tmp")
    daemons: list[subprocess.Popen] = []
    try:
        fsid = str(uuid.uuid4())
        mon_port, rgw_port = free_port(), free_port()
        conf = os.path.join(folder, "ceph.conf")
        store = (f"osd objectstore = bluestore\nbluestore block create = true\n"
                 f"bluestore block size = {bluestore_gib << 30}\nbluestore fsck on mkfs = false\n"
                 if bluestore_gib else "osd objectstore = memstore\nmemstore device bytes = 1073741824\n")
        with open(conf, "w") as f:
            f.write(f"""[global]
fsid = {fsid}
mon host = 127.0.0.1:{mon_port}
mon initial members = a
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = {folder}/$cluster.$name.keyring
run dir = {folder}
admin socket = {folder}/$name.asok
log file = {folder}/$name.log
pid file = {folder}/$name.pid
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
paxos propose interval = 0.05
mon data = {folder}/mon.$id
osd data = {folder}/osd.$id
{store}osd max object name len = 256
osd max object namespace len = 64
rgw dns name = 127.0.0.1
rgw enable usage log = false
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:{rgw_port}
""")
        admin = os.path.join(folder, "ceph.client.admin.keyring")
        mon_keyring = os.path.join(folder, "ceph.mon.a.keyring")
        run("ceph-authtool", "--create-keyring", mon_keyring, "--gen-key", "-n", "mon.", "--cap", "mon", "allow *",
            folder=folder)
        run("ceph-authtool", "--create-keyring", admin, "--gen-key", "-n", "client.admin", "--cap", "mon", "allow *",
            "--cap", "osd", "allow *", "--cap", "mgr", "allow *", folder=folder)
        run("ceph-authtool", mon_keyring, "--import-keyring", admin, folder=folder)
        monmap = os.path.join(folder, "monmap")
        run("monmaptool", "--create", "--add", "a", f"127.0.0.1:{mon_port}", "--fsid", fsid, monmap, folder=folder)
        run("ceph-mon", "-c", conf, "--mkfs", "-i", "a", "--monmap", monmap, "--keyring", mon_keyring, folder=folder)
        daemons.append(subprocess.Popen(["ceph-mon", "-c", conf, "-i", "a", "-f"], cwd=folder,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        osd_id = run("ceph", "-c", conf, "osd", "create", folder=folder).strip()
        os.makedirs(os.path.join(folder, f"osd.{osd_id}"))
        run("ceph-osd", "-c", conf, "-i", osd_id, "--mkfs", "--mkkey", "--no-mon-config", folder=folder)
        run("ceph", "-c", conf, "auth", "add", f"osd.{osd_id}", "osd", "allow *", "mon", "allow profile osd", "-i",
            os.path.join(folder, f"ceph.osd.{osd_id}.keyring"), folder=folder)
        run("ceph", "-c", conf, "osd", "crush", "add", f"osd.{osd_id}", "1.0", "host=local", folder=folder)
        run("ceph", "-c", conf, "osd", "crush", "move", "local", "root=default", folder=folder)
        daemons.append(subprocess.Popen(["ceph-osd", "-c", conf, "-i", osd_id, "-f"], cwd=folder,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        rgw_keyring = os.path.join(folder, "ceph.client.rgw.keyring")
        run("ceph", "-c", conf, "auth", "get-or-create", "client.rgw", "mon", "allow rw", "osd", "allow rwx", "-o",
            rgw_keyring, folder=folder)
        daemons.append(subprocess.Popen(["radosgw", "-c", conf, "-n", "client.rgw", "-f"], cwd=folder,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        endpoint = f"http://127.0.0.1:{rgw_port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(endpoint, timeout=2)
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                if time.monotonic() > deadline or any(d.poll() is not None for d in daemons):
                    logs = {n: open(os.path.join(folder, n)).read()[-600:] for n in os.listdir(folder)
                            if n.endswith(".log")}
                    raise RuntimeError(f"radosgw did not come up: {logs}")
                time.sleep(0.1)
        user = json.loads(run("radosgw-admin", "-c", conf, "-n", "client.admin", "user", "create", "--uid=tests",
                              "--display-name=tests", folder=folder))
        keys = user["keys"][0]
        print(json.dumps({"endpoint": endpoint, "access": keys["access_key"], "secret": keys["secret_key"]}),
              flush=True)
        sys.stdin.read()
        return 0
    except Exception as error:  # noqa: BLE001 - any failure to start is reported the same way
        sys.stderr.write(f"radosgw.py: {error}\n")
        return 1
    finally:
        for daemon in reversed(daemons):
            daemon.send_signal(signal.SIGTERM)
        for daemon in reversed(daemons):
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
