"""A real headless browser, driven from Python: Chromium over the DevTools protocol, Firefox over WebDriver BiDi
(both websockets, with the websocket-client package). Used by browser_form_bytes.py and by the example server's
Scripts/browser_upload.py.

    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile_folder, \
            HeadlessBrowser("chromium", "http://127.0.0.1:8080/", profile_folder) as browser:
        value = browser.evaluate("(async () => document.title)()")
        png = browser.screenshot()
"""
import base64
import json
import os
import re
import select
import shutil
import signal
import subprocess
import time

import websocket


class Connection:
    """One websocket to the browser, with numbered calls."""

    def __init__(self, url):
        self.socket = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0

    def call(self, method, params=None, session=None, seconds=120):
        """The result of `method`, within `seconds` however many events the browser sends meanwhile."""
        deadline = time.monotonic() + seconds
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.socket.send(json.dumps(message))
        while time.monotonic() < deadline:
            reply = json.loads(self.socket.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
        raise RuntimeError(f"{method}: no answer within {seconds} s")


def wait_for_line(process, pattern, seconds=60):
    """The first group of `pattern` in the first line of the browser's standard error that matches it, within
    `seconds`. The wait is bounded even when the browser prints nothing and stays up: a line read would block on
    it, so the pipe is polled (select) and read in whatever pieces arrive."""
    deadline = time.monotonic() + seconds
    descriptor = process.stderr.fileno()
    pending = b""
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([descriptor], [], [], left)
        if not ready:
            break
        piece = os.read(descriptor, 65536)
        if not piece:
            break
        *lines, pending = (pending + piece).split(b"\n")
        for line in lines:
            match = re.search(pattern, line.decode(errors="replace"))
            if match:
                return match.group(1)
    raise RuntimeError(f"the browser did not print {pattern} within {seconds} s")


class HeadlessBrowser:
    """`name` ("chromium" or "firefox") started headless with a profile of its own, showing `url`."""

    def __init__(self, name, url, profile, width=1000, height=900, trusted_spki=None):
        """`trusted_spki`: the base64 SHA-256 of a certificate's public key that Chromium takes as trusted (a test
        certificate's)."""
        self.name = name
        self.process = None
        self.trusted_spki = trusted_spki
        try:
            self._start(url, profile, width, height)
        except BaseException:
            self.__exit__()
            raise

    def _start(self, url, profile, width, height):
        if self.name == "chromium":
            binary = shutil.which("chromium") or shutil.which("chromium-browser")
            self.process = subprocess.Popen(
                [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
                 f"--user-data-dir={profile}", f"--window-size={width},{height}"]
                + ([f"--ignore-certificate-errors-spki-list={self.trusted_spki}"] if self.trusted_spki else [])
                + ["about:blank"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
            self.browser = Connection(wait_for_line(self.process, r"DevTools listening on (ws://\S+)"))
            target = self.browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"]
            self.browser.call("Page.enable", session=self.session)
            self.browser.call("Page.navigate", {"url": url}, session=self.session)
            for _ in range(100):
                if self.evaluate("document.readyState") == "complete":
                    break
                time.sleep(0.1)
        else:
            binary = shutil.which("firefox-esr") or shutil.which("firefox")
            self.process = subprocess.Popen(
                [binary, "--headless", "--remote-debugging-port", "0", "--profile", profile, "--width", str(width),
                 "--height", str(height), "--no-remote"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
            address = wait_for_line(self.process, r"WebDriver BiDi listening on (ws://\S+)")
            self.browser = Connection(address.rstrip("/") + "/session")
            self.browser.call("session.new", {"capabilities": {}})
            self.context = self.browser.call("browsingContext.getTree")["contexts"][0]["context"]
            self.browser.call("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def evaluate(self, expression):
        """The value of `expression` in the page, a promise awaited; None when it has none or failed."""
        if self.name == "chromium":
            result = self.browser.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True,
                                                           "returnByValue": True}, session=self.session)
        else:
            result = self.browser.call("script.evaluate", {"expression": expression,
                                                           "target": {"context": self.context},
                                                           "awaitPromise": True})
        return result.get("result", {}).get("value")

    def screenshot(self):
        """The page as PNG bytes."""
        if self.name == "chromium":
            data = self.browser.call("Page.captureScreenshot", {"format": "png"}, session=self.session)["data"]
        else:
            data = self.browser.call("browsingContext.captureScreenshot", {"context": self.context})["data"]
        return base64.b64decode(data)

    def __enter__(self):
        return self

    def __exit__(self, *error):
        # The browser's own children (renderers, a zygote) go too: left alone, they write into the profile folder
        # while it is being removed.
        if self.process:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
