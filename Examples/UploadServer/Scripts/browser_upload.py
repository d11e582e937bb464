"""Submits UploadServer's form from a real headless browser and prints what the page shows.

    python3 browser_upload.py chromium|firefox SERVER_URL SCREENSHOT.png

Chromium is driven over the DevTools protocol, Firefox over WebDriver BiDi (both websockets, with the
websocket-client package). The page's own file input gets two files made in the page (one name holds a `"`, the
other a `\\`) through a DataTransfer, the form is submitted with requestSubmit(), and once the page shows the
answer the script prints one JSON line: {"answer": <the JSON the page shows>, "visible": <whether the result
table is on screen>} and writes a screenshot of the page.
"""
import os, sys, tempfile

# The driver shared with the library's own tests: Tests/Peers/headless_browser.py in this repository.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests", "Peers"))
from headless_browser import HeadlessBrowser  # noqa: E402

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


def main():
    name, url, screenshot = sys.argv[1:4]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile, HeadlessBrowser(name, url, profile) as browser:
        value = browser.evaluate(FILL_AND_SUBMIT)
        png = browser.screenshot()
    with open(screenshot, "wb") as file:
        file.write(png)
    print(value)


if __name__ == "__main__":
    main()
