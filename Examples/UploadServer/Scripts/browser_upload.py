"""Submits UploadServer's form from a real headless browser and prints what the page shows.

    python3 browser_upload.py chromium|firefox SERVER_URL SCREENSHOT.png

Chromium is driven over the DevTools protocol, Firefox over WebDriver BiDi (both websockets, with the
websocket-client package). The page's own file input gets two files made in the page (one name holds a `"`, the
other a `\\`) through a DataTransfer, the form is submitted with requestSubmit(), and once the page shows the
answer the script prints one JSON line: {"answer": <the JSON the page shows>, "visible": <whether the result
table is on screen>} and writes a screenshot of the page.
"""
import base64, json, os, re, shutil, subprocess, sys, tempfile, time
import websocket

FILL_AND_SUBMIT = r"""
(async () => {
  const text = new TextEncoder().encode("hello from a browser\n".repeat(100));
  const binary = new Uint8Array(4096);
  for (let i = 0; i < binary.length; i++) binary[i] = i % 256;
  const files = new DataTransfer();
  files.items.add(new File([text], 'say "cheese".txt', { type: "text/plain" }));
  files.items.add(new File([binary], "back\\slash.bin", { type: "application/octet-stream" }));
  document.getElementById("files").files = files.files;
  document.getElementById("caption").value = "from a browser";
  document.getElementById("upload").requestSubmit();
  for (let i = 0; i < 200 && !document.getElementById("json"); i++) await new Promise(r => setTimeout(r, 50));
  const table = document.getElementById("files-table");
  const box = table ? table.getBoundingClientRect() : null;
  const visible = !!box && box.height > 0 && box.top >= 0 && box.bottom <= window.innerHeight;
  return JSON.stringify({ answer: JSON.parse(document.getElementById("json")?.textContent ?? "null"), visible });
})()
"""


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


def chromium(url, profile):
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    process = subprocess.Popen(
        [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", "--window-size=1000,900", "about:blank"],
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
        result = browser.call("Runtime.evaluate", {"expression": FILL_AND_SUBMIT, "awaitPromise": True,
                                                   "returnByValue": True}, session=session)
        shot = browser.call("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        return result["result"]["value"], base64.b64decode(shot)
    finally:
        process.kill()
        process.wait()


def firefox(url, profile):
    binary = shutil.which("firefox-esr") or shutil.which("firefox")
    process = subprocess.Popen(
        [binary, "--headless", "--remote-debugging-port", "0", "--profile", profile, "--width", "1000",
         "--height", "900", "--no-remote"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        address = wait_for_line(process, r"WebDriver BiDi listening on (ws://\S+)")
        browser = Connection(address.rstrip("/") + "/session")
        browser.call("session.new", {"capabilities": {}})
        context = browser.call("browsingContext.getTree")["contexts"][0]["context"]
        browser.call("browsingContext.navigate", {"context": context, "url": url, "wait": "complete"})
        result = browser.call("script.evaluate", {"expression": FILL_AND_SUBMIT, "target": {"context": context},
                                                  "awaitPromise": True})
        shot = browser.call("browsingContext.captureScreenshot", {"context": context})["data"]
        return result["result"]["value"], base64.b64decode(shot)
    finally:
        process.kill()
        process.wait()


def main():
    name, url, screenshot = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as profile:
        value, png = (chromium if name == "chromium" else firefox)(url, profile)
    with open(screenshot, "wb") as file:
        file.write(png)
    print(value)


if __name__ == "__main__":
    main()
