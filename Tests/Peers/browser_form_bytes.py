#!/usr/bin/env python3
"""Captures the exact multipart/form-data body a real headless browser sends for a form.

    python3 browser_form_bytes.py chromium|firefox < form.json

form.json: a JSON array of entries, {"name", "value"} for a text field or {"name", "filename", "type", "content"}
for a file (content is text). The browser (Chromium over the DevTools protocol, Firefox over WebDriver BiDi, both
with the websocket-client package) loads a page from a server on 127.0.0.1, builds a FormData of those entries and
posts it with fetch(); the server records the request. Prints one JSON line: {"content_type", "body" (base64)}.
"""
import base64
import http.server
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import websocket

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


class Connection:
    def __init__(self, url):
        self.socket = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0

    def call(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while True:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})


def wait_for_line(process, pattern, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        line = process.stderr.readline().decode(errors="replace")
        if not line and process.poll() is not None:
            break
        match = re.search(pattern, line)
        if match:
            return match.group(1)
    raise RuntimeError(f"the browser never printed {pattern}")


def chromium(url, script, profile):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    process = subprocess.Popen(
        [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        browser = Connection(wait_for_line(process, r"DevTools listening on (ws://\S+)"))
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        browser.call("Page.enable", session=session)
        browser.call("Page.navigate", {"url": url}, session=session)
        for _ in range(100):
            state = browser.call("Runtime.evaluate", {"expression": "document.readyState", "returnByValue": True},
                                 session=session)
            if state["result"].get("value") == "complete":
                break
            time.sleep(0.1)
        result = browser.call("Runtime.evaluate", {"expression": script, "awaitPromise": True, "returnByValue": True},
                              session=session)
        return result["result"].get("value")
    finally:
        process.kill()
        process.wait()


def firefox(url, script, profile):
    binary = shutil.which("firefox-esr") or shutil.which("firefox")
    process = subprocess.Popen(
        [binary, "--headless", "--remote-debugging-port", "0", "--profile", profile, "--no-remote"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        address = wait_for_line(process, r"WebDriver BiDi listening on (ws://\S+)")
        browser = Connection(address.rstrip("/") + "/session")
        browser.call("session.new", {"capabilities": {}})
        context = browser.call("browsingContext.getTree")["contexts"][0]["context"]
        browser.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
        result = browser.call("script.evaluate", {"expression": script, "target": {"context": context},
                                                  "awaitPromise": True})
        return result["result"].get("value")
    finally:
        process.kill()
        process.wait()


def main():
    entries = json.load(sys.stdin)
    server = http.server.HTTPServer(("127.0.0.1", 0), Capture)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    with tempfile.TemporaryDirectory() as profile:
        status = (chromium if sys.argv[1] == "chromium" else firefox)(url, POST_FORM % json.dumps(entries), profile)
    server.shutdown()
    if Capture.captured is None:
        sys.exit(f"the browser posted nothing (fetch answered {status})")
    print(json.dumps(Capture.captured))


if __name__ == "__main__":
    main()
