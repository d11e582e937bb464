"""Submits UploadServer's form from a real headless browser and prints what the page shows.

    python3 browser_upload.py chromium|firefox SERVER_URL SCREENSHOT.png [CERT.pem]

Chromium is driven over the DevTools protocol, Firefox over WebDriver BiDi (both websockets, with the
websocket-client package). The page's own file input gets two files made in the page (one name holds a `"`, the
other a `\\`) through a DataTransfer, the form is submitted with requestSubmit(), and once the page shows the
answer the script prints one JSON line: {"answer": <the JSON the page shows>, "visible": <whether the result
table is on screen>, "protocols": <the protocols the page and its upload came over, as the page's Resource Timing
says: "h2", "http/1.1">} and writes a screenshot of the page. With CERT.pem (Chromium only), the browser trusts
that certificate (a test certificate, by its public key).
"""
import base64, hashlib, os, subprocess, sys, tempfile

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
  const protocols = performance.getEntries().map(entry => entry.nextHopProtocol).filter(p => p);
  return JSON.stringify({ answer: JSON.parse(document.getElementById("json")?.textContent ?? "null"), visible,
                          protocols });
})()
"""


def spki_sha256(certificate):
    """The base64 SHA-256 of a PEM certificate's public key (its SubjectPublicKeyInfo), by openssl."""
    key = subprocess.run(["openssl", "x509", "-pubkey", "-noout", "-in", certificate], capture_output=True,
                         check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=key, capture_output=True,
                         check=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def main():
    name, url, screenshot = sys.argv[1:4]
    trusted = spki_sha256(sys.argv[4]) if len(sys.argv) > 4 else None
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile, \
            HeadlessBrowser(name, url, profile, trusted_spki=trusted) as browser:
        value = browser.evaluate(FILL_AND_SUBMIT)
        png = browser.screenshot()
    with open(screenshot, "wb") as file:
        file.write(png)
    print(value)


if __name__ == "__main__":
    main()
