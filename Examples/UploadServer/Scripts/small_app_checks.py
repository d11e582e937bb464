#!/usr/bin/env python3
"""What a new app on StreamingMultipartHummingbird or StreamingMultipartVapor must do, checked with real clients.

    python3 small_app_checks.py UPLOAD_URL CLIENT...      (CLIENT: curl, requests, chromium, firefox)

The app is the examples' small one: `POST /upload` decodes {caption: String, photos: [SpooledFile]} from
multipart/form-data or application/x-www-form-urlencoded, takes photos whose bytes are PNG, JPEG, GIF or WebP and
refuses any other file with 415 (markup however it is named and labelled), and answers
"CAPTION: NAME SIZE, NAME SIZE\\n". Each client named sends its forms, and every answer is compared with what it
must be (a browser's page shows the answer's text, not its status). Prints one JSON line, {"checked": N, "failures": [...]}, and exits 1 when
any check failed.
"""
import json
import os
import subprocess
import sys
import tempfile

failures = []
checked = 0


def check(name, status, body, want_status, want_body=None, want_error=None):
    """want_body: the exact text; want_error: keys the JSON {"error": {...}} must hold."""
    global checked
    checked += 1
    problem = None
    if status != want_status:
        problem = f"status {status}, not {want_status}"
    elif want_body is not None and body != want_body:
        problem = f"answered {body!r}, not {want_body!r}"
    elif want_error is not None:
        try:
            error = json.loads(body)["error"]
        except (ValueError, KeyError, TypeError):
            error = None
        if not isinstance(error, dict) or any(error.get(key) != value for key, value in want_error.items()):
            problem = f"answered {body!r}, wanted an error with {want_error}"
    if problem:
        failures.append(f"{name}: {problem}")


def curl(url, *arguments):
    result = subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *arguments, url],
                            capture_output=True, timeout=60)
    text = result.stdout.decode("utf-8", "replace")
    body, _, status = text.rpartition("\n")
    return int(status or 0), body


# A file's first bytes by its kind: what the route's filter sniffs. The rest of each file is filler.
HEADS = {
    "jpg": b"\xff\xd8\xff\xe0",
    "png": b"\x89PNG\r\n\x1a\n",
    "svg": b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    "html": b"<!DOCTYPE html><html><script>alert(1)</script></html>",
}
REFUSED = {"code": "fileRefused", "message": "photos must be PNG, JPEG, GIF or WebP images"}


def photo(kind, size):
    """A file of `size` bytes that starts as a file of `kind` does."""
    return HEADS[kind] + b" " * (size - len(HEADS[kind]))


def with_curl(url, folder):
    jpg = os.path.join(folder, "a.jpg")
    png = os.path.join(folder, "b.png")
    svg = os.path.join(folder, "c.svg")
    svg_named_png = os.path.join(folder, "d.png")
    html_named_jpg = os.path.join(folder, "e.jpg")
    for path, kind, size in ((jpg, "jpg", 1000), (png, "png", 2000), (svg, "svg", 300), (svg_named_png, "svg", 300),
                             (html_named_jpg, "html", 300)):
        with open(path, "wb") as file:
            file.write(photo(kind, size))
    check("curl multipart", *curl(url, "-F", "caption=from curl", "-F", f"photos=@{jpg};type=image/jpeg",
                                  "-F", f"photos=@{png};type=image/png"), 200, "from curl: a.jpg 1000, b.png 2000\n")
    check("curl urlencoded", *curl(url, "--data-urlencode", "caption=caf\u00e9 & cr\u00e8me"), 200,
          "caf\u00e9 & cr\u00e8me: \n")
    check("curl without the caption", *curl(url, "-F", f"photos=@{jpg};type=image/jpeg"), 422,
          want_error={"code": "missingField", "field": "caption"})
    check("curl with an SVG", *curl(url, "-F", "caption=x", "-F", f"photos=@{jpg};type=image/jpeg",
                                    "-F", f"photos=@{svg};type=image/svg+xml"), 415, want_error=REFUSED)
    check("curl with an SVG named and labelled a PNG", *curl(url, "-F", "caption=x",
                                                             "-F", f"photos=@{svg_named_png};type=image/png"),
          415, want_error=REFUSED)
    check("curl with a page named and labelled a JPEG", *curl(url, "-F", "caption=x",
                                                              "-F", f"photos=@{html_named_jpg};type=image/jpeg"),
          415, want_error=REFUSED)
    check("curl with a PNG labelled text", *curl(url, "-F", "caption=y", "-F", f"photos=@{png};type=text/plain"),
          200, "y: b.png 2000\n")
    check("curl with text", *curl(url, "-H", "Content-Type: text/plain", "--data-binary", "hello"), 415,
          want_error={"code": "invalidContentType"})
    check("curl with a caption twice", *curl(url, "-F", "caption=a", "-F", "caption=b"), 422,
          want_error={"code": "invalidField", "field": "caption"})


def with_requests(url):
    import requests
    answer = requests.post(url, data={"caption": "from requests"},
                           files=[("photos", ("a.jpg", photo("jpg", 1000), "image/jpeg"))], timeout=60)
    check("requests multipart", answer.status_code, answer.text, 200, "from requests: a.jpg 1000\n")
    answer = requests.post(url, data={"caption": "plain"}, timeout=60)
    check("requests urlencoded", answer.status_code, answer.text, 200, "plain: \n")
    answer = requests.post(url, data={"note": "no caption"}, timeout=60)
    check("requests urlencoded without the caption", answer.status_code, answer.text, 422,
          want_error={"code": "missingField", "field": "caption"})


def with_browser(url, browser):
    here = os.path.dirname(os.path.abspath(__file__))
    driver = os.path.join(here, "..", "..", "..", "Tests", "Peers", "browser_form_post.py")
    result = subprocess.run([sys.executable, driver, browser, url], capture_output=True, timeout=300)
    if result.returncode != 0:
        failures.append(f"{browser}: the driver failed: {result.stderr.decode(errors='replace')[-500:]}")
        return
    answers = json.loads(result.stdout)
    # A page's text ends in newlines of its own choosing; the answer's status is not in the page.
    def text(key):
        return answers[key].rstrip("\n") + "\n"
    check(f"{browser} multipart", None, text("multipart"), None, "from a browser: a.jpg 1000, b.png 2000\n")
    check(f"{browser} urlencoded", None, text("urlencoded"), None, "caf\u00e9 & cr\u00e8me: \n")
    check(f"{browser} with an SVG", None, answers["svg"], None, want_error={"code": "fileRefused"})


def main():
    url, clients = sys.argv[1], sys.argv[2:]
    for client in clients:
        if client == "curl":
            with tempfile.TemporaryDirectory() as folder:
                with_curl(url, folder)
        elif client == "requests":
            with_requests(url)
        elif client in ("chromium", "firefox"):
            with_browser(url, client)
        else:
            sys.exit(f"unknown client {client}")
    print(json.dumps({"checked": checked, "failures": failures}))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
