#!/usr/bin/env python3
"""A small upload server on 127.0.0.1 for the URLSession and AsyncHTTPClient interop tests.

Prints its port on the first line, then answers each POST or PUT with JSON: the method, the request's Content-Length,
Transfer-Encoding and Content-Encoding headers and the parts python-multipart found (see read_forms.py). Reads
chunked bodies too, and undoes a gzip or deflate Content-Encoding with Python's zlib before parsing.
A GET gets {"method": "GET"} with its headers. A request to /redirect/CODE?to=URL (any method) has its body read,
then is answered CODE with Location: URL (the redirect-table tests; &body= gives it a long body, see
redirected()). Each X-Set-Cookie request header comes back as
a Set-Cookie answer header (the cookie tests). Exits when standard input closes, so it never
outlives the test that started it.

    python3 upload_server.py [--tls CERT.pem KEY.pem]      HTTPS with that certificate
"""
import http.server
import json
import os
import sys
import threading
import urllib.parse
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_forms import with_python_multipart  # noqa: E402


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def read_body(self):
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def redirected(self):
        """Answers /redirect/CODE?to=URL with CODE and Location: URL (none without `to`); False for any other path.

        With &body=N the answer carries N bytes, declared; with &body=endless, a chunked body that never ends (the
        client must cut it: the connection is dropped then)."""
        path, _, query = self.path.partition("?")
        if not path.startswith("/redirect/"):
            return False
        self.read_body()
        query = urllib.parse.parse_qs(query)
        body = query.get("body", ["0"])[0]
        self.send_response(int(path.rsplit("/", 1)[1]))
        if "to" in query:
            self.send_header("Location", query["to"][0])
        chunk = b"<p>moved</p>" * 5000
        try:
            if body == "endless":
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.send_header("Content-Length", body)
            self.end_headers()
            left = int(body)
            while left > 0:
                self.wfile.write(chunk[:left])
                left -= len(chunk)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        return True

    def do_POST(self):
        if self.redirected():
            return
        body = self.read_body()
        both = self.headers.get("Content-Length") is not None and self.headers.get("Transfer-Encoding") is not None
        reply = {
            "method": self.command,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "content_length": self.headers.get("Content-Length"),
            "transfer_encoding": self.headers.get("Transfer-Encoding"),
            "received": len(body),
        }
        try:
            if both:
                raise ValueError("both Content-Length and Transfer-Encoding (RFC 9112 §6.1)")
            encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
            reply["content_encoding"] = self.headers.get("Content-Encoding")
            if encoding in ("gzip", "x-gzip"):
                body = zlib.decompress(body, 16 + 15)
            elif encoding == "deflate":
                body = zlib.decompress(body, 15)
            elif encoding != "identity":
                raise ValueError(f"unknown Content-Encoding {encoding}")
            reply["parts"] = with_python_multipart(body, self.headers["Content-Type"])
            status = 200
        except Exception as error:
            reply["error"] = f"{type(error).__name__}: {error}"
            status = 400
        data = json.dumps(reply).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for cookie in self.headers.get_all("X-Set-Cookie") or []:  # the cookie tests ask for the cookies they get
            self.send_header("Set-Cookie", cookie)
        self.end_headers()
        self.wfile.write(data)

    do_PUT = do_POST

    def do_GET(self):
        if self.redirected():
            return
        headers = {name.lower(): value for name, value in self.headers.items()}
        data = json.dumps({"method": "GET", "headers": headers, "received": 0}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
if sys.argv[1:2] == ["--tls"]:
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[2], sys.argv[3])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
server.shutdown()
