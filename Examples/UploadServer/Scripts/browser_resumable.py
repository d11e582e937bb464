"""Uploads a file from a real headless browser through UploadServer's resumable upload page (/resumable) and prints
what happened.

    python3 browser_resumable.py chromium|firefox PAGE_URL SIZE_BYTES SCREENSHOT_PREFIX

The page's own file input gets one file of SIZE_BYTES made in the page (a fixed pattern), the form is submitted, and
the page's module (/resumable-form.js) sends it. Meanwhile the script takes a screenshot once a third has gone
(SCREENSHOT_PREFIX-during.png) and one when the page shows the answer (SCREENSHOT_PREFIX-done.png), and prints one
JSON line: {"status": the answer's status, "answer": the JSON the page shows, "sha256": the file's SHA-256 as the
page computed it, "resumptions": how many times the module resumed after an error, "conflicts": how many appends the
server answered 409 (a browser's own re-send of a cut append, from its old offset), "size": SIZE_BYTES, "text": the page's status
line}. Put a cutting front (Tests/Peers/front.py) between the browser and the server to drop its connections.
"""
import json, os, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests", "Peers"))
from headless_browser import HeadlessBrowser  # noqa: E402

START = r"""
(async () => {
  const size = %d;
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + (i >> 12)) & 255;
  window.fileSha256 = Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)),
                                 (b) => b.toString(16).padStart(2, "0")).join("");
  const files = new DataTransfer();
  files.items.add(new File([bytes], "resumed.bin", { type: "application/octet-stream" }));
  document.getElementById("files").files = files.files;
  document.getElementById("caption").value = "from a browser, resumed";
  document.getElementById("upload").requestSubmit();
  return true;
})()
"""

STATE = r"""JSON.stringify({
  progress: Number(document.getElementById("progress").value),
  done: document.getElementById("status").dataset.done === "true",
  text: document.getElementById("status").textContent,
  failed: document.getElementById("status").textContent.startsWith("Failed"),
})"""

RESULT = r"""JSON.stringify({
  answer: JSON.parse(document.getElementById("json")?.textContent ?? "null"),
  status: Number(document.getElementById("status").textContent.match(/Done: (\d+)/)?.[1] ?? 0),
  sha256: window.fileSha256,
  resumptions: window.currentUpload?.resumptions ?? -1,
  conflicts: window.currentUpload?.conflicts ?? -1,
  startedOver: window.currentUpload?.startedOver ?? null,
})"""


def main():
    name, url, size, prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile, \
            HeadlessBrowser(name, url, profile) as browser:
        browser.evaluate(START % size)
        during = None
        deadline = time.monotonic() + 240
        state = {}
        while time.monotonic() < deadline:
            state = json.loads(browser.evaluate(STATE) or "{}")
            if during is None and state.get("progress", 0) > 0.33:
                during = browser.screenshot()
            if state.get("done") or state.get("failed"):
                break
            time.sleep(0.2)
        result = json.loads(browser.evaluate(RESULT) or "{}")
        done = browser.screenshot()
    for suffix, png in (("during", during), ("done", done)):
        if png:
            with open(f"{prefix}-{suffix}.png", "wb") as file:
                file.write(png)
    print(json.dumps({**result, "size": size, "text": state.get("text")}))


if __name__ == "__main__":
    main()
