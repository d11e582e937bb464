#!/usr/bin/env python3
"""A proxy before an S3 endpoint, on 127.0.0.1, that fails requests the way a store in trouble does.

Fixed modes, for the tests of the S3 store's retries:
- (none): the first try of every UploadPart fails with 500 InternalError; `always`: every try;
- `complete-error`: every CompleteMultipartUpload is answered 200 with an error in the body, as S3 may;
- `always-no-abort`: every try of every UploadPart fails and so does every AbortMultipartUpload (503), as a store
  that went away would;
- `lost-answers`: every PutObject of a file (not of a form's pending record) and every CompleteMultipartUpload
  reaches the endpoint and takes effect, and every answer to one is cut inside its head: the object is stored, and
  the client never hears so.
Every other request, and every second try, goes through to the endpoint unchanged.

`random`, for the fault harness (Tests/Faults): each request that changes the bucket (PUT, POST, DELETE; never a read,
which the restart's sweep and the harness's checks make) meets a fault at `--rate`, drawn from `--kinds` by a
generator seeded with `--seed`:
- `500`: 500 InternalError; `slowdown`: 503 SlowDown; neither reaches the endpoint;
- `reset`: the connection is reset after a random share of the request's body was read;
- `stall`: the body is read and nothing answered for `--stall` seconds (past the client's timeout), then closed;
- `truncate`: the request reaches the endpoint and takes effect, and its answer is cut inside its head;
- `complete-error`: a CompleteMultipartUpload is answered 200 with an error in the body (only that request).

Prints its port on one line, then serves until its standard input closes; then prints how many parts it failed (the
fixed modes) or a JSON report (`random`, also at `GET /__faults` meanwhile): the faults by kind, the requests, and
the most tries of one part, object or completion (its method and path, the query included: a part's number and
upload id; aborts and pending records aside, which the next start's sweep or a failed form may send again), and
the requests under way (`inFlight`).

    flaky_s3.py ENDPOINT_PORT [always | complete-error | always-no-abort | lost-answers | random] [--seed N] [--rate R]
                [--kinds 500,slowdown,reset,stall,truncate,complete-error] [--stall SECONDS]
"""
import argparse
import collections
import http.client
import http.server
import json
import random
import socket
import struct
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("endpoint_port", type=int)
parser.add_argument("mode", nargs="?", default="")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--rate", type=float, default=0.2)
parser.add_argument("--kinds", default="500,slowdown,reset,stall,truncate,complete-error")
parser.add_argument("--stall", type=float, default=3.0)
options = parser.parse_args()

MODE = options.mode
ALWAYS = MODE in ("always", "always-no-abort")
KINDS = [kind for kind in options.kinds.split(",") if kind]
lock = threading.Lock()
failed: set[str] = set()
draw = random.Random(options.seed)
injected: collections.Counter = collections.Counter()
tries: collections.Counter = collections.Counter()
requests = 0
in_flight = 0


def error_body(code: str, message: str, request: str = "f") -> bytes:
    """S3's XML error; `request` the request id the tests look for (f1 a part's, f2 a completion's, f3 an abort's)."""
    return f"<Error><Code>{code}</Code><Message>{message}</Message><RequestId>{request}</RequestId></Error>".encode()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status: int, body: bytes):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def reset(self):
        """Closes the connection with a reset (RST), not an orderly end."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def fault(self) -> str | None:
        """The fault this request meets in `random` mode, counted; None for none."""
        global requests
        with lock:
            requests += 1
            if self.command not in ("PUT", "POST", "DELETE"):
                return None
            # An abort may be sent again by the next start's sweep, and a form's pending record is put again when
            # the form fails unsure of what it left (all of the store's requests share one retry loop, which the
            # parts', objects' and completions' counts check).
            if self.command != "DELETE" and "/.pending/" not in self.path:
                tries[f"{self.command} {self.path}"] += 1
            if draw.random() >= options.rate:
                return None
            completing = self.command == "POST" and "uploadId=" in self.path
            kinds = [kind for kind in KINDS if kind != "complete-error" or completing]
            kind = draw.choice(kinds) if kinds else None
            share = draw.random()
            if kind:
                injected[kind] += 1
        self.share = share
        return kind

    def upstream(self, body: bytes):
        """Sends the request to the endpoint; its answer's status, headers and body."""
        connection = http.client.HTTPConnection("127.0.0.1", options.endpoint_port, timeout=60)
        headers = {name: value for name, value in self.headers.items()}
        connection.request(self.command, self.path, body=body, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        connection.close()
        return answer.status, answer.getheaders(), data

    def relay(self):
        if self.path == "/__faults":  # the report so far, for the harness; never sent on
            return self.answer(200, json.dumps(report()).encode())
        global in_flight
        with lock:
            in_flight += 1
        try:
            self.relay_counted()
        finally:
            with lock:
                in_flight -= 1

    def relay_counted(self):
        length = int(self.headers.get("Content-Length") or 0)
        kind = self.fault() if MODE == "random" else None
        storing = (self.command == "PUT" and "?" not in self.path and "/.pending/" not in self.path) or (
            self.command == "POST" and "uploadId=" in self.path)
        if MODE == "lost-answers" and storing:
            kind, self.share = "truncate", 0.5
        if kind == "reset":
            self.rfile.read(int(length * self.share))
            self.reset()
            return
        body = self.rfile.read(length) if length else b""
        if len(body) < length:  # the client went away mid-body (a killed server): S3 would drop it too
            self.close_connection = True
            return
        if kind == "500":
            return self.answer(500, error_body("InternalError", "injected"))
        if kind == "slowdown":
            return self.answer(503, error_body("SlowDown", "Please reduce your request rate."))
        if kind == "stall":
            time.sleep(options.stall)
            self.reset()
            return
        if kind == "complete-error" or (MODE == "complete-error" and self.command == "POST" and "uploadId=" in self.path):
            return self.answer(200, error_body("InternalError", "late", "f2"))
        if MODE == "always-no-abort" and self.command == "DELETE" and "uploadId=" in self.path:
            return self.answer(503, error_body("ServiceUnavailable", "gone", "f3"))
        if MODE in ("", "always", "always-no-abort") and self.command == "PUT" and "partNumber=" in self.path:
            with lock:
                first = self.path not in failed
                failed.add(self.path)
            if first or ALWAYS:
                return self.answer(500, error_body("InternalError", "flaky", "f1"))
        status, headers, data = self.upstream(body)
        head = [f"HTTP/1.1 {status} {http.client.responses.get(status, '')}\r\n".encode()]
        for name, value in headers:
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                head.append(f"{name}: {value}\r\n".encode())
        head.append(f"Content-Length: {len(data)}\r\n\r\n".encode())
        answer = b"".join(head) + (data if self.command != "HEAD" else b"")
        if kind == "truncate":
            self.wfile.write(answer[: max(1, int(len(b"".join(head)) * self.share))])
            self.wfile.flush()
            self.reset()
            return
        self.wfile.write(answer)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay


def report() -> dict:
    """The faults by kind, the requests, and the most tries of one part, object or completion."""
    with lock:
        most = tries.most_common(1)
        return {
            "requests": requests,
            "inFlight": in_flight,
            "injected": dict(injected),
            "mostTries": most[0][1] if most else 0,
            "mostTried": most[0][0] if most else "",
        }


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client killed mid-request is what the harness does
            super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Proxy)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
print(server.server_address[1], flush=True)
sys.stdin.read()
server.shutdown()
if MODE == "random":
    print(json.dumps(report()), flush=True)
else:
    print(len(failed), flush=True)
