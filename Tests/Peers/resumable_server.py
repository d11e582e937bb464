#!/usr/bin/env python3
"""A resumable-upload server on 127.0.0.1 for the client tests: draft-ietf-httpbis-resumable-upload as interop
versions 6 (drafts 04-05: what swift-nio-extras' NIOResumableUpload and URLSession send) and 8 (draft 09) speak it,
over one form; each answer names the version its upload was created in.

Prints its port on the first line. A POST or PUT that carries Upload-Draft-Interop-Version: 6 or 8 and Upload-Complete
creates an upload: the server answers 104 Upload Resumption Supported with Location: /resumable/TOKEN at once, then
keeps every byte that arrives, even when the connection drops. HEAD /resumable/TOKEN answers 204 with Upload-Offset
and Upload-Complete; PATCH /resumable/TOKEN with Upload-Offset appends when the offset is the server's (409 with
the right Upload-Offset otherwise, the upload kept, as the draft has it); DELETE ends the upload. A HEAD or PATCH
takes the upload over: bytes still arriving on an older request of it are dropped, as the draft asks of a server. When the form's
bytes are all there, the request that completed it is answered as upload_server.py answers a form (python-multipart
reads the parts), with "requests" (how many carried bytes of it) and "bytes_received" (all the body bytes that came,
in every request). Any other request is answered 404. With --forgetful, every location answers 404, as from a
server that restarted after it announced the upload. With --announce-version V, the 104 names interop version V
(a version the client did not offer: it must ignore that 104). With --conflicting, every append is read whole and
answered 409 (a server that never takes an append: the client must not draw its body again and again). Exits when standard input closes.
"""
import http.server
import json
import os
import secrets
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_forms import with_python_multipart  # noqa: E402

FORGETFUL = "--forgetful" in sys.argv[1:]
CONFLICTING = "--conflicting" in sys.argv[1:]
ANNOUNCED = sys.argv[sys.argv.index("--announce-version") + 1] if "--announce-version" in sys.argv else None
VERSIONS = ("6", "8")
uploads = {}  # token -> {"type", "length", "data": bytearray, "requests", "received", "done", "generation"}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_expect_100(self):
        """Defers `100 Continue` to the handler (`proceed`): a creation's 104 must reach the client before any
        of the body is sent, or a cut right after the 100 would leave it no place to resume."""
        return True

    def proceed(self):
        """`100 Continue`, when the request waits for it."""
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.send_response_only(100)
            self.end_headers()

    def answer(self, status, headers=(), body=b""):
        self.send_response(status)
        version = self.headers.get("Upload-Draft-Interop-Version")
        self.send_header("Upload-Draft-Interop-Version", version if version in VERSIONS else "8")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def upload(self):
        token = self.path.removeprefix("/resumable/")
        with lock:
            return token, None if FORGETFUL else uploads.get(token)

    def receive(self, upload, generation, length):
        """Appends up to `length` bytes of the request's body to the upload, as they come; stops where the
        connection drops, or once a later request (a HEAD or PATCH of the resuming client) took the upload over:
        a request the client gave up on must not add bytes behind the offset it was told."""
        left = length
        while left > 0:
            try:
                chunk = self.rfile.read1(min(left, 262144))
            except OSError:  # reset by the front
                chunk = b""
            with lock:
                if not chunk or upload["generation"] != generation:
                    return False
                upload["data"] += chunk
                upload["received"] += len(chunk)
            left -= len(chunk)
        return True

    def take_over(self, upload):
        """Makes this request the upload's only writer (under `lock`); returns its generation."""
        upload["generation"] += 1
        return upload["generation"]

    def complete(self, upload):
        """Answers the form, once all its bytes are there."""
        upload["done"] = True
        reply = {"requests": upload["requests"], "bytes_received": upload["received"],
                 "received": len(upload["data"])}
        try:
            reply["parts"] = with_python_multipart(bytes(upload["data"]), upload["type"])
            status = 200
        except Exception as error:
            reply["error"] = f"{type(error).__name__}: {error}"
            status = 400
        self.answer(status, [("Upload-Complete", "?1"), ("Content-Type", "application/json")],
                    json.dumps(reply).encode())

    def do_POST(self):
        if self.headers.get("Upload-Draft-Interop-Version") not in VERSIONS or self.headers.get("Upload-Complete") != "?1":
            return self.answer(404)
        token = secrets.token_hex(16)
        length = int(self.headers["Content-Length"])
        upload = {"type": self.headers["Content-Type"], "length": length, "data": bytearray(), "requests": 1,
                  "received": 0, "done": False, "generation": 0}
        with lock:
            uploads[token] = upload
            generation = self.take_over(upload)
        self.send_response_only(104, "Upload Resumption Supported")
        self.send_header("Upload-Draft-Interop-Version", ANNOUNCED or self.headers["Upload-Draft-Interop-Version"])
        self.send_header("Location", f"/resumable/{token}")
        self.end_headers()
        self.proceed()
        if self.receive(upload, generation, length):
            self.complete(upload)

    do_PUT = do_POST

    def do_HEAD(self):
        _, upload = self.upload()
        if upload is None:
            return self.answer(404)
        with lock:
            self.take_over(upload)  # the request the client gave up on adds nothing more
            offset = len(upload["data"])
        self.answer(204, [("Upload-Offset", str(offset)),
                          ("Upload-Complete", "?1" if upload["done"] else "?0"), ("Cache-Control", "no-store")])

    def do_PATCH(self):
        _, upload = self.upload()
        if upload is None:
            return self.answer(404)
        offset = int(self.headers.get("Upload-Offset", "-1"))
        length = int(self.headers.get("Content-Length", "0"))
        with lock:
            stale = CONFLICTING or offset != len(upload["data"]) \
                or self.headers.get("Content-Type") != "application/partial-upload"
            generation = None if stale else self.take_over(upload)
            current = len(upload["data"])
            upload["requests"] += 0 if stale else 1
        if stale:
            self.proceed()
            self.rfile.read(length)
            return self.answer(409, [("Upload-Offset", str(current)), ("Upload-Complete", "?0")])
        self.proceed()
        if self.receive(upload, generation, length) and len(upload["data"]) == upload["length"]:
            self.complete(upload)
        elif len(upload["data"]) == offset + length:
            self.answer(201, [("Upload-Offset", str(len(upload["data"]))), ("Upload-Complete", "?0")])

    def do_DELETE(self):
        token, upload = self.upload()
        if upload is None:
            return self.answer(404)
        with lock:
            del uploads[token]
        self.answer(204)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
