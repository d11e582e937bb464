#!/usr/bin/env python3
"""Posts forms from a real headless browser to ACTION and prints what each answer showed, as one JSON line.

    python3 browser_form_post.py chromium|firefox ACTION_URL

The browser builds each form in a blank page (a caption, and files made in the page through a DataTransfer),
submits it with form.submit(), and waits for the answer page. Each file starts with its kind's signature (a JPEG's,
a PNG's, an SVG's markup), then spaces. Forms: "multipart" (a caption and two photos),
"urlencoded" (a caption alone, the browser's default encoding), "svg" (a caption, a photo and an SVG). The line is
{"multipart": <the answer's text>, "urlencoded": …, "svg": …}.
"""
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from headless_browser import HeadlessBrowser  # noqa: E402

SUBMIT = r"""
((action, enctype, caption, files) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = action;
  form.enctype = enctype;
  const text = document.createElement("input");
  text.name = "caption";
  text.value = caption;
  form.append(text);
  if (files.length) {
    const input = document.createElement("input");
    input.type = "file";
    input.name = "photos";
    input.multiple = true;
    const chosen = new DataTransfer();
    for (const [name, type, size, head] of files) {
      // The file starts as a file of its kind does (what a server that sniffs reads), then spaces.
      const bytes = new Uint8Array(size).fill(32);
      bytes.set(head);
      chosen.items.add(new File([bytes], name, { type }));
    }
    input.files = chosen.files;
    form.append(input);
  }
  document.body.append(form);
  setTimeout(() => form.submit(), 0);
  return true;
})
"""

JPEG = list(b"\xff\xd8\xff\xe0")
PNG = list(b"\x89PNG\r\n\x1a\n")
SVG = list(b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
FORMS = {
    "multipart": ("multipart/form-data", "from a browser",
                  [["a.jpg", "image/jpeg", 1000, JPEG], ["b.png", "image/png", 2000, PNG]]),
    "urlencoded": ("application/x-www-form-urlencoded", "caf\u00e9 & cr\u00e8me", []),
    "svg": ("multipart/form-data", "with an svg", [["a.jpg", "image/jpeg", 1000, JPEG], ["c.svg", "image/svg+xml", 300, SVG]]),
}


def wait(browser, expression, seconds=30):
    """Polls `expression` until it is true; a page navigating away meanwhile is asked again."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if browser.evaluate(expression):
                return
        except RuntimeError:
            pass  # "Inspected target navigated or closed": asked in the middle of a navigation
        time.sleep(0.1)
    raise RuntimeError(f"the page never had {expression}")


def main():
    name, action = sys.argv[1:3]
    answers = {}
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile, \
            HeadlessBrowser(name, "about:blank", profile) as browser:
        for key, (enctype, caption, files) in FORMS.items():
            browser.evaluate("setTimeout(() => { location.href = 'about:blank' }, 0); true")
            wait(browser, "location.href === 'about:blank' && document.readyState === 'complete'")
            arguments = ", ".join(json.dumps(value) for value in (action, enctype, caption, files))
            browser.evaluate(f"{SUBMIT}({arguments})")
            wait(browser, f"location.href === {json.dumps(action)} && document.readyState === 'complete'")
            answers[key] = browser.evaluate("document.body.innerText")
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
