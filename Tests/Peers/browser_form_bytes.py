#!/usr/bin/env python3
"""Captures the exact multipart/form-data body a real headless browser sends for a form.

    python3 browser_form_bytes.py chromium|firefox < form.json

form.json: a JSON array of entries, {"name", "value"} for a text field or {"name", "filename", "type", "content"}
for a file (content is text). The browser (Chromium over the DevTools protocol, Firefox over WebDriver BiDi, both
with the websocket-client package) loads a page from a server on 127.0.0.1, builds a FormData of those entries and
posts it with fetch(); the server records the request. Prints one JSON line: {"content_type", "body" (base64)}.
The browser is driven by headless_browser.py, beside this file.
"""
import base64
import http.server
import json
import sys
import tempfile
import threading

from headless_browser import HeadlessBrowser

PAGE = b"<!doctype html><html><head><meta charset=utf-8><title>form bytes</title></head><body>ready</body></html>"

POST_FORM = r"""
(async () => {
  const form = new FormData();
  for (const entry of %s) {
    if ("filename" in entry) {
      form.append(entry.name, new File([entry.content], entry.filename, { type: entry.type }));
    } else {
      form.append(entry.name, entry.value);
    }
  }
  const response = await fetch("/capture", { method: "POST", body: form });
  return String(response.status);
})()
"""


class Capture(http.server.BaseHTTPRequestHandler):
    captured = None

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Capture.captured = {"content_type": self.headers["Content-Type"], "body": base64.b64encode(body).decode()}
        self.send_response(204)
        self.end_headers()

    def log_message(self, *arguments):
        pass


def main():
    entries = json.load(sys.stdin)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Capture)  # a preconnect that sends nothing blocks no one
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile, HeadlessBrowser(sys.argv[1], url, profile) as browser:
        status = browser.evaluate(POST_FORM % json.dumps(entries))
    server.shutdown()
    if Capture.captured is None:
        sys.exit(f"the browser posted nothing (fetch answered {status})")
    print(json.dumps(Capture.captured))


if __name__ == "__main__":
    main()
