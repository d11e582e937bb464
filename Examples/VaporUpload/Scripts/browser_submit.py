"""Submits VaporUpload's form from headless Chromium and prints the server's answer.

    python3 browser_submit.py chromium|firefox SERVER_URL

The page's own file input gets two files made in the page (one name holds a `"`), the caption is typed in, and
the page posts `new FormData(form)`: the browser serialises the form as it would on submit. Prints the answer's
status and body as one JSON line.
"""
import json, os, sys, tempfile

# The driver shared with the library's own tests: Tests/Peers/headless_browser.py in this repository.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Tests", "Peers"))
from headless_browser import HeadlessBrowser  # noqa: E402

SUBMIT = r"""
(async () => {
  const text = new TextEncoder().encode("hello from a browser\n".repeat(100));
  const binary = new Uint8Array(300000);
  for (let i = 0; i < binary.length; i++) binary[i] = (i * 7) % 256;
  const files = new DataTransfer();
  files.items.add(new File([text], 'say "cheese".txt', { type: "text/plain" }));
  files.items.add(new File([binary], "photo.bin", { type: "application/octet-stream" }));
  document.getElementById("photos").files = files.files;
  document.getElementById("caption").value = "from a browser";
  const form = document.getElementById("upload");
  const response = await fetch(form.action, { method: "POST", body: new FormData(form) });
  return JSON.stringify({ status: response.status, answer: JSON.parse(await response.text()) });
})()
"""


def main():
    name, url = sys.argv[1:3]
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile, HeadlessBrowser(name, url, profile) as browser:
        print(browser.evaluate(SUBMIT))


if __name__ == "__main__":
    main()
