#!/usr/bin/env python3
"""Uploads across two servers that store into one bucket, some cut mid-body, for the S3 test of the example.

Sends COUNT uploads of random files (sizes from 64 KiB to 12 MiB, so that some go up as multipart uploads), in
turn to PORT1 and PORT2, four at a time; every CUT-th upload is cut: its request head and half its body are sent,
then the connection is closed. Prints one JSON document: for each upload sent whole, the SHA-256 of the file sent
and the server's answer; the number cut.

    s3_two_servers.py PORT1 PORT2 COUNT CUT
"""
import concurrent.futures
import hashlib
import json
import random
import socket
import sys
import uuid

import requests


def body(seed: int) -> tuple[bytes, bytes, str]:
    rng = random.Random(seed)
    data = rng.randbytes(rng.choice([64 << 10, 1 << 20, 6 << 20, 12 << 20]) + rng.randrange(1000))
    boundary = uuid.uuid4().hex
    form = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nupload {seed}\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f{seed}.bin\"\r\n"
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return form, data, boundary


def send(port: int, seed: int, cut: bool) -> dict:
    form, data, boundary = body(seed)
    content_type = f"multipart/form-data; boundary={boundary}"
    if cut:
        with socket.create_connection(("127.0.0.1", port)) as connection:
            head = (f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: {content_type}\r\n"
                    f"Content-Length: {len(form)}\r\n\r\n").encode()
            connection.sendall(head + form[: len(form) // 2])
        return {"cut": True}
    answer = requests.post(f"http://127.0.0.1:{port}/upload", data=form, headers={"Content-Type": content_type})
    return {"cut": False, "status": answer.status_code, "answer": answer.json(),
            "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def main() -> int:
    ports = [int(sys.argv[1]), int(sys.argv[2])]
    count, cut_every = int(sys.argv[3]), int(sys.argv[4])
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        futures = [pool.submit(send, ports[i % 2], i, (i + 1) % cut_every == 0) for i in range(count)]
        results = [future.result() for future in futures]
    print(json.dumps({"uploads": [r for r in results if not r["cut"]], "cut": sum(r["cut"] for r in results)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
