#!/usr/bin/env python3
"""Parses one multipart/form-data body with a real peer and prints its parts as JSON.

    python3 parse_form.py python-multipart|werkzeug|multipart CONTENT_TYPE < body

Prints {"parts": [{"name", "filename", "content_type", "size", "sha256"}]} in body order (Werkzeug keeps fields
and files apart: fields first, then files, each in body order). Exits 1 with a message if the peer rejects it. The
peers are read_forms.py's, beside this file.
"""
import json
import sys

from read_forms import PEERS


def main():
    peer, content_type = sys.argv[1], sys.argv[2]
    body = sys.stdin.buffer.read()
    try:
        parts = PEERS[peer](body, content_type)
    except Exception as error:  # the peer rejected the body: say why
        print(f"{peer} rejected the body: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(1)
    json.dump({"parts": parts}, sys.stdout)


if __name__ == "__main__":
    main()
