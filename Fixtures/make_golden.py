#!/usr/bin/env python3
"""Writes Fixtures/golden/*.body: the exact bytes the builder must produce for each kind of part.

Written by hand from RFC 7578, RFC 2046 §5.1.1 and the WHATWG form-data encoding rules, independent of the
Swift code, so the golden tests compare the builder against this oracle. Run from Fixtures/: python3 make_golden.py
"""
import os

B = b"golden-boundary-1234"
CRLF = b"\r\n"
HERE = os.path.dirname(os.path.abspath(__file__))


def read(name):
    with open(os.path.join(HERE, "inputs", name), "rb") as f:
        return f.read()


def part(headers, content):
    """One part: delimiter line, header lines, empty line, content."""
    out = b"--" + B + CRLF
    for h in headers:
        out += h.encode("utf-8") + CRLF
    return out + CRLF + content


def body(*parts):
    if not parts:
        return b"--" + B + b"--" + CRLF
    return CRLF.join(parts) + CRLF + b"--" + B + b"--" + CRLF


notes, blob = read("notes.txt"), read("blob.bin")

golden = {
    # 1. text fields: plain, UTF-8, and a name with a quote, CR and LF escaped as browsers do.
    "text": body(
        part(['Content-Disposition: form-data; name="caption"'], b"Sunset over the bay"),
        part(['Content-Disposition: form-data; name="greeting"'], "héllo ✓".encode()),
        part(['Content-Disposition: form-data; name="we%22ird%0D%0Aname"'], b"value"),
        part(['Content-Disposition: form-data; name="empty"'], b""),
    ),
    # 2. in-memory data: type inferred from the filename, given explicitly, or absent (no filename).
    "data": body(
        part(['Content-Disposition: form-data; name="thumb"; filename="thumb.jpg"', "Content-Type: image/jpeg"], blob[:100]),
        part(['Content-Disposition: form-data; name="doc"; filename="my %22best%22.bin"', "Content-Type: application/x-custom"], b"\x00\x01\x02\r\n--"),
        part(['Content-Disposition: form-data; name="raw"'], b"raw bytes"),
    ),
    # 3. files: filename and type inferred from the path.
    "file": body(
        part(['Content-Disposition: form-data; name="notes"; filename="notes.txt"', "Content-Type: text/plain"], notes),
        part(['Content-Disposition: form-data; name="blob"; filename="blob.bin"', "Content-Type: application/octet-stream"], blob),
        part(['Content-Disposition: form-data; name="renamed"; filename="other.csv"', "Content-Type: text/csv"], notes),
    ),
    # 4. streams: declared length and unknown length.
    "stream": body(
        part(['Content-Disposition: form-data; name="log"; filename="log.txt"', "Content-Type: text/plain"], notes),
        part(['Content-Disposition: form-data; name="pipe"'], blob),
    ),
    # 5. any headers with any content.
    "headers": body(
        part(['Content-Disposition: form-data; name="report"; filename="r.csv"', "Content-Type: text/csv; charset=utf-8", "X-Checksum: abc123"], b"a,b\r\n1,2\r\n"),
        part(['Content-Disposition: form-data; name="attached"', "Content-Language: en"], notes),
    ),
    # 6. a parameters dictionary, flattened as AFNetworking does: sorted keys, key[sub], key[].
    "parameters": body(
        part(['Content-Disposition: form-data; name="count"'], b"3"),
        part(['Content-Disposition: form-data; name="flag"'], b"1"),
        part(['Content-Disposition: form-data; name="tags[]"'], b"swift"),
        part(['Content-Disposition: form-data; name="tags[]"'], b"http"),
        part(['Content-Disposition: form-data; name="user[address][city]"'], b"Oslo"),
        part(['Content-Disposition: form-data; name="user[name]"'], b"Ann"),
    ),
    # 7. no parts at all.
    "empty": body(),
}

if __name__ == "__main__":
    os.makedirs(os.path.join(HERE, "golden"), exist_ok=True)
    for name, data in golden.items():
        with open(os.path.join(HERE, "golden", name + ".body"), "wb") as f:
            f.write(data)
        print(f"golden/{name}.body  {len(data)} bytes")
