#!/usr/bin/env python3
"""Reads a batch of multipart/form-data bodies with one of Python's parsers and prints what it found in each.

    python3 read_forms.py werkzeug|python-multipart|multipart < cases.json

Input: a JSON array of {"content_type": str, "body": base64}. Output: a JSON array, one entry per case, in order:
{"parts": [{"name", "filename", "content_type", "size", "sha256"}]} in body order, or {"error": "..."} when the
parser rejects the body. Names and filenames are the strings the parser hands its users (None when a part has no filename).
Werkzeug keeps fields and files apart, so its parts are listed fields first, then files, each in body order.
"""
import base64
import hashlib
import io
import json
import sys


def part(name, filename, data, content_type=None):
    return {"name": name, "filename": filename, "content_type": content_type, "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest()}


def with_werkzeug(body, content_type):
    from werkzeug.formparser import parse_form_data

    environ = {
        "REQUEST_METHOD": "POST", "CONTENT_TYPE": content_type, "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    _, form, files = parse_form_data(environ, silent=False, max_form_memory_size=None)
    parts = [part(name, None, value.encode()) for name, value in form.items(multi=True)]
    parts += [part(name, storage.filename, storage.read(), storage.content_type)
              for name, storage in files.items(multi=True)]
    return parts


def with_python_multipart(body, content_type):
    from python_multipart import MultipartParser
    from python_multipart.multipart import parse_options_header

    _, params = parse_options_header(content_type)
    parts, current, field, value = [], {}, [], []

    def on_part_begin():
        current.clear()
        current.update(headers={}, data=bytearray())

    def on_part_data(data, start, end):
        current["data"] += data[start:end]

    def on_header_field(data, start, end):
        field.append(data[start:end])

    def on_header_value(data, start, end):
        value.append(data[start:end])

    def on_header_end():
        current["headers"][b"".join(field).decode("latin-1").lower()] = b"".join(value)
        field.clear()
        value.clear()

    def on_part_end():
        _, disposition = parse_options_header(current["headers"].get("content-disposition", b""))
        filename = disposition.get(b"filename")
        content_type = current["headers"].get("content-type")
        parts.append(part(disposition.get(b"name", b"").decode("utf-8", "replace"),
                          filename.decode("utf-8", "replace") if filename is not None else None,
                          bytes(current["data"]), content_type.decode() if content_type is not None else None))

    parser = MultipartParser(params[b"boundary"], {
        "on_part_begin": on_part_begin, "on_part_data": on_part_data, "on_part_end": on_part_end,
        "on_header_field": on_header_field, "on_header_value": on_header_value, "on_header_end": on_header_end,
    })
    parser.write(body)
    parser.finalize()
    return parts


def with_multipart(body, content_type):
    import multipart

    _, options = multipart.parse_options_header(content_type)
    parser = multipart.MultipartParser(io.BytesIO(body), options["boundary"], content_length=len(body))
    return [part(p.name, p.filename, p.raw, p.content_type if p.filename is not None else None) for p in parser]


PEERS = {"werkzeug": with_werkzeug, "python-multipart": with_python_multipart, "multipart": with_multipart}


def main():
    read = PEERS[sys.argv[1]]
    results = []
    for case in json.load(sys.stdin):
        try:
            results.append({"parts": read(base64.b64decode(case["body"]), case["content_type"])})
        except Exception as error:  # the parser rejected the body: say how
            results.append({"error": f"{type(error).__name__}: {error}"})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
