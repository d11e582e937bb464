#!/usr/bin/env python3
"""A proxy before an S3 endpoint that fails the first try of every UploadPart with 500 InternalError (with
`always`, every try), for the tests of the S3 store's retries; with `complete-error`, it instead answers every
CompleteMultipartUpload with 200 and an error in the body, as S3 may; with `always-no-abort`, every try of every
UploadPart fails and so does every AbortMultipartUpload (503), as a store that went away would. Every other request,
and every second try, goes through to the endpoint unchanged.

Prints its port on one line, then serves until its standard input closes, then prints how many parts it failed.

    flaky_s3.py ENDPOINT_PORT [always | complete-error | always-no-abort]
"""
import http.client
import http.server
import sys
import threading

failed: set[str] = set()
MODE = sys.argv[2] if len(sys.argv) > 2 else ""
ALWAYS = MODE in ("always", "always-no-abort")
lock = threading.Lock()


class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if MODE == "complete-error" and self.command == "POST" and "uploadId=" in self.path:
            error = b"<Error><Code>InternalError</Code><Message>late</Message><RequestId>f2</RequestId></Error>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error)
            return
        if MODE == "always-no-abort" and self.command == "DELETE" and "uploadId=" in self.path:
            error = b"<Error><Code>ServiceUnavailable</Code><Message>gone</Message><RequestId>f3</RequestId></Error>"
            self.send_response(503)
            self.send_header("Content-Length", str(len(error)))
            self.end_headers()
            self.wfile.write(error)
            return
        if MODE != "complete-error" and self.command == "PUT" and "partNumber=" in self.path:
            with lock:
                first = self.path not in failed
                failed.add(self.path)
            if first or ALWAYS:
                error = b"<Error><Code>InternalError</Code><Message>flaky</Message><RequestId>f1</RequestId></Error>"
                self.send_response(500)
                self.send_header("Content-Length", str(len(error)))
                self.end_headers()
                self.wfile.write(error)
                return
        upstream = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
        headers = {name: value for name, value in self.headers.items()}
        upstream.request(self.command, self.path, body=body, headers=headers)
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        upstream.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
threading.Thread(target=server.serve_forever, daemon=True).start()
print(server.server_address[1], flush=True)
sys.stdin.read()
server.shutdown()
print(len(failed), flush=True)
