#!/usr/bin/env python3
"""Parses a multipart/form-data body with a real peer and prints its parts as JSON.

    python3 parse_form.py python-multipart|werkzeug CONTENT_TYPE < body

Prints {"parts": [{"name", "filename", "content_type", "size", "sha256"}]} in body order (Werkzeug keeps fields
and files apart: fields first, then files, each in body order). Exits 1 with a message if the peer rejects it.
"""
import hashlib
import io
import json
import sys


def with_python_multipart(body, content_type):
    from python_multipart import MultipartParser
    from python_multipart.multipart import parse_options_header

    _, params = parse_options_header(content_type)
    parts, current = [], {}
    header_field, header_value = [], []

    def on_part_begin():
        current.clear()
        current.update(headers={}, hash=hashlib.sha256(), size=0)

    def on_part_data(data, start, end):
        current["hash"].update(data[start:end])
        current["size"] += end - start

    def on_header_field(data, start, end):
        header_field.append(data[start:end])

    def on_header_value(data, start, end):
        header_value.append(data[start:end])

    def on_header_end():
        # Raw bytes: names and filenames go out as UTF-8, as browsers send them.
        current["headers"][b"".join(header_field).decode("latin-1").lower()] = b"".join(header_value)
        header_field.clear()
        header_value.clear()

    def on_part_end():
        _, disposition = parse_options_header(current["headers"].get("content-disposition", b""))
        content_type = current["headers"].get("content-type")
        filename = disposition.get(b"filename")
        parts.append({
            "name": disposition.get(b"name", b"").decode(),
            "filename": filename.decode() if filename is not None else None,
            "content_type": content_type.decode() if content_type is not None else None,
            "size": current["size"],
            "sha256": current["hash"].hexdigest(),
        })

    parser = MultipartParser(params[b"boundary"], {
        "on_part_begin": on_part_begin, "on_part_data": on_part_data, "on_part_end": on_part_end,
        "on_header_field": on_header_field, "on_header_value": on_header_value, "on_header_end": on_header_end,
    })
    parser.write(body)
    parser.finalize()
    return parts


def with_werkzeug(body, content_type):
    from werkzeug.formparser import parse_form_data

    environ = {
        "REQUEST_METHOD": "POST", "CONTENT_TYPE": content_type, "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
    }
    _, form, files = parse_form_data(environ, silent=False, max_form_memory_size=None)
    parts = []
    for name, value in form.items(multi=True):
        data = value.encode()
        parts.append({"name": name, "filename": None, "content_type": None, "size": len(data),
                      "sha256": hashlib.sha256(data).hexdigest()})
    for name, storage in files.items(multi=True):
        data = storage.read()
        parts.append({"name": name, "filename": storage.filename, "content_type": storage.content_type,
                      "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    return parts


def main():
    peer, content_type = sys.argv[1], sys.argv[2]
    body = sys.stdin.buffer.read()
    try:
        parts = {"python-multipart": with_python_multipart, "werkzeug": with_werkzeug}[peer](body, content_type)
    except Exception as error:  # the peer rejected the body: say why
        print(f"{peer} rejected the body: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    json.dump({"parts": parts}, sys.stdout)


if __name__ == "__main__":
    main()
