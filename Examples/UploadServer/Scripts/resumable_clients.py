#!/usr/bin/env python3
"""Clients of resumable uploads (draft-ietf-httpbis-resumable-upload, interop version 6) against UploadServer on
127.0.0.1, each scenario printing one JSON line of what happened. Raw sockets, so that a client can drop, lie about
its offset and guess as a real one might.

    python3 resumable_clients.py PORT SCENARIO [--size BYTES] [--version 3|5|6|8] [--pieces]

With --pieces, every upload that a scenario cuts begins instead as a first piece that does not complete it
(`Upload-Complete: ?0`, answered 201 with the location): it waits for appends as a cut one does.

Scenarios (the form is a caption and one file of --size random bytes):
  abandon  sends half the form, reads the 104, and resets the connection: reports the upload's location.
  stale    sends half, drops; asks the offset (HEAD); appends from 1000 bytes before it (409 expected, with the
           offset); appends the rest from the right offset. Reports the statuses, the offsets, the answer and the
           file's SHA-256.
  guess    while an upload waits after a drop: HEAD and PATCH on random locations, a PATCH on the upload's location
           with a token of its own in the pipeline's token field, and a POST that names the upload's token in that
           field; then completes the upload and replays HEAD and PATCH on its location. Reports every status.
  limit    the form cut at a third, then resumed (--size past the server's --max-file-bytes): reports the statuses.
  trickle  the form cut at a third, then resumed at 20 bytes a second: reports the status and when it came.
  rules    requests the draft refuses on an upload that waits: a HEAD and a DELETE that carry Upload-Offset or
           Upload-Complete, an append in another interop version than the upload's; then DELETE and a HEAD right
           after, five times over. Reports every status.
  empty    an upload that waits, then an append without bytes (Upload-Complete: ?0) every --every seconds, --count
           times: reports each append's status (the window must not restart for them).
  paused   --count uploads from addresses of their own (127.0.0.20 on), each sent half and dropped, so that they
           wait: reports what the server held after each, the files in --spool or, with --bucket, the multipart
           uploads open there (boto3 at --endpoint, credentials from the environment); with --slots, waits up to
           10 s for that to fall to the slots before it counts (a cut upload lets go of its file or aborts its
           multipart upload at once, but not in no time).
  limits   the limits as draft 09 announces them: OPTIONS /upload with the interop version and without it; a
           creation with Upload-Length, its 104's Upload-Limit; after the drop, HEAD's Upload-Length and
           Upload-Limit; an append whose Upload-Length is not the upload's (400), then the right one. Reports every
           status and field.
  pieces   the form in three pieces, as a client that cannot see a 104 sends it: a creation that says Upload-Complete:
           ?0 with the first third (its final answer, 201, names the location), an append of the second third on
           the same connection (?0), the last third on a new one (?1). Reports each answer's status and fields, the
           answer and the file's SHA-256.
  cut      as the browser page sends a form (Web/resumable-form.js): a creation without bytes (Upload-Complete: ?0,
           Upload-Length; answered 201 with the location), then the body in one PATCH, reset after half of it;
           HEAD asks the offset and a PATCH sends the rest. With --hold, stops after the reset. With --location,
           resumes that upload instead of creating one, and when its HEAD is answered 404 (the upload is gone),
           starts again with a new creation, once. Reports the locations, each status and offset (the creations'
           interim ones too), the 404's text, the answer and the file's SHA-256.
"""
import argparse
import hashlib
import json
import os
import random
import socket
import time

BOUNDARY = "resumableclientboundary"
TOKEN_FIELD = "StreamingMultipart-Resumable-Upload"
VERSION = "6"  # the interop version spoken: 3 says Upload-Incomplete where 5, 6 and 8 say Upload-Complete
PIECES = False  # --pieces: uploads begin as a first piece that does not complete them (?0), not as a cut request


def complete_field(complete=True):
    if VERSION == "3":
        return "Upload-Incomplete", "?0" if complete else "?1"
    return "Upload-Complete", "?1" if complete else "?0"


def form(size):
    content = random.Random(size).randbytes(size)
    body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nresumed\r\n"
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + content + f"\r\n--{BOUNDARY}--\r\n".encode()
    return body, hashlib.sha256(content).hexdigest()


def read_head(sock, data=b""):
    """One response head from `sock`: (status, {lowercased name: value}, the bytes after it)."""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            raise ConnectionError("closed before a response head")
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), fields, rest


def read_answer(sock, method="POST", interims=None):
    """The final answer (1xx skipped, their statuses added to `interims` when given): (status, fields, body)."""
    rest = b""
    while True:
        status, fields, rest = read_head(sock, rest)
        if status >= 200:
            break
        if interims is not None:
            interims.append(status)
    length = 0 if method == "HEAD" or status == 204 else int(fields.get("content-length", "0"))
    while len(rest) < length:
        more = sock.recv(65536)
        if not more:
            break
        rest += more
    return status, fields, rest[:length].decode(errors="replace")


def reset(sock):
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


def create_piece(port, body, sent, source="127.0.0.1"):
    """Sends the first `sent` bytes of `body` as a creation that does not complete it (`Upload-Complete: ?0`) and
    closes once answered: the location of its 201."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    sock.sendall((f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {sent}\r\n"
                  f"Upload-Draft-Interop-Version: {VERSION}\r\n{': '.join(complete_field(False))}\r\n\r\n").encode()
                 + body[:sent])
    status, fields, _ = read_answer(sock)
    sock.close()
    if status != 201:
        raise RuntimeError(f"no 201 but {status}")
    return fields["location"]


def create(port, body, sent, extra="", source="127.0.0.1", interim=None):
    """Offers resumption for `body`, reads the 104 (its fields into `interim`, when given), sends its first `sent`
    bytes and resets: the location."""
    if PIECES:
        return create_piece(port, body, sent, source)
    sock = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(source, 0))
    sock.sendall((f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {len(body)}\r\n"
                  f"Upload-Draft-Interop-Version: {VERSION}\r\n{': '.join(complete_field())}\r\n{extra}\r\n")
                 .encode())
    status, fields, _ = read_head(sock)
    if status != 104:
        raise RuntimeError(f"no 104 but {status}")
    if interim is not None:
        interim.update(fields)
    sock.sendall(body[:sent])
    time.sleep(0.3)  # the bytes reach the server before the reset
    reset(sock)
    return fields["location"]


def request(port, method, path, fields=(), body=b"", pace=None, version=None, interims=None):
    """One request on a new connection: (status, fields, body). `pace` sends the body that many bytes a second;
    `interims` gets the statuses of the interim (1xx) answers."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: {version or VERSION}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in fields)
    if method != "HEAD":
        head += f"Content-Length: {len(body)}\r\n"
    sock.sendall(head.encode() + b"\r\n")
    try:
        if pace is None:
            sock.sendall(body)
        else:
            sock.settimeout(0.05)
            deadline = time.monotonic() + 120
            for index in range(0, len(body), pace):
                if time.monotonic() > deadline:
                    return None, {}, "no answer in 120 s"
                sock.sendall(body[index:index + pace])
                try:
                    return read_answer(sock, method)  # an answer before the end: the trickle was cut
                except socket.timeout:
                    time.sleep(0.95)
            sock.settimeout(60)
        return read_answer(sock, method, interims)
    except (OSError, ConnectionError) as error:
        return None, {}, f"closed: {type(error).__name__}"
    finally:
        sock.close()


def offset(port, location):
    status, fields, _ = request(port, "HEAD", location)
    return status, int(fields.get("upload-offset", "-1"))


def append(port, location, start, body, pace=None, extra=()):
    fields = [("Upload-Offset", start), complete_field(), *extra]
    if VERSION not in ("3", "5"):
        fields.append(("Content-Type", "application/partial-upload"))
    return request(port, "PATCH", location, fields, body[start:], pace)


def create_empty(port, length, interims):
    """A creation without bytes that says how long the upload is, as the browser page sends it: (status, location).
    The statuses of its interim answers go into `interims`."""
    fields = [complete_field(False), ("Upload-Length", length),
              ("Content-Type", f"multipart/form-data; boundary={BOUNDARY}")]
    status, answered, _ = request(port, "POST", "/upload", fields, interims=interims)
    return status, answered.get("location")


def append_cut(port, location, body):
    """The whole body in one PATCH from 0, reset after half of it has gone."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall((f"PATCH {location} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: {VERSION}\r\n"
                  f"Upload-Offset: 0\r\n{': '.join(complete_field())}\r\n"
                  f"Content-Type: application/partial-upload\r\nContent-Length: {len(body)}\r\n\r\n").encode()
                 + body[:len(body) // 2])
    time.sleep(0.3)  # the bytes reach the server before the reset
    reset(sock)


def cut(port, body, report, location=None, hold=False):
    """The `cut` scenario: creates (unless given `location`), cuts, asks, sends the rest; starts again once on 404."""
    if location is None:
        report["created"], location = create_empty(port, len(body), report.setdefault("interims", []))
        report.setdefault("locations", []).append(location)
        if location is None:
            return
        append_cut(port, location, body)
        if hold:
            return
    head, fields, _ = request(port, "HEAD", location)
    if head == 404 and "gone" not in report:
        # A HEAD's answer has no body: the text of the 404 is a GET's.
        report["gone"] = {"head": head, "location": location, "text": request(port, "GET", location)[2]}
        cut(port, body, report)
        return
    report["head"], report["offset"] = head, int(fields.get("upload-offset", "-1"))
    report["append"], fields, text = append(port, location, report["offset"], body)
    report["answerSha256"], report["complete"] = answer_sha(text), fields.get("upload-complete")


def answer_sha(text):
    try:
        return json.loads(text)["files"][0]["sha256"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def held(arguments):
    """What the server holds for the uploads that wait: files in --spool, or multipart uploads open in --bucket."""
    if arguments.bucket:
        import boto3  # only this scenario needs it
        s3 = boto3.client("s3", endpoint_url=arguments.endpoint)
        return len(s3.list_multipart_uploads(Bucket=arguments.bucket).get("Uploads", []))
    return len(os.listdir(arguments.spool))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("scenario")
    parser.add_argument("--size", type=int, default=3 << 20)
    parser.add_argument("--version", choices=["3", "5", "6", "8"], default="6")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--every", type=float, default=1)
    parser.add_argument("--spool", default=".")
    parser.add_argument("--bucket")
    parser.add_argument("--endpoint")
    parser.add_argument("--slots", type=int, default=1 << 30)
    parser.add_argument("--pieces", action="store_true")
    parser.add_argument("--hold", action="store_true")
    parser.add_argument("--location")
    arguments = parser.parse_args()
    global VERSION, PIECES
    VERSION, PIECES = arguments.version, arguments.pieces
    port, size = arguments.port, arguments.size
    body, sha = form(size)
    report = {"sha256": sha}
    if arguments.scenario == "abandon":
        report["location"] = create(port, body, len(body) // 2)
    elif arguments.scenario == "stale":
        location = create(port, body, len(body) // 2)
        report["head"], report["offset"] = offset(port, location)
        stale, fields, _ = append(port, location, max(0, report["offset"] - 1000), body)
        report["stale"], report["conflictOffset"] = stale, int(fields.get("upload-offset", "-1"))
        report["append"], fields, text = append(port, location, report["offset"], body)
        report["answerSha256"], report["complete"] = answer_sha(text), fields.get(complete_field()[0].lower())
    elif arguments.scenario == "guess":
        location = create(port, body, len(body) // 2)
        prefix = location.rsplit("/", 1)[0] + "/"
        report["guessedHead"] = [request(port, "HEAD", prefix + os.urandom(16).hex())[0] for _ in range(20)]
        report["guessedPatch"] = append(port, prefix + os.urandom(16).hex(), 0, body)[0]
        report["shortToken"] = request(port, "HEAD", location[:-1])[0]
        token = location.rsplit("/", 1)[1]
        # A plain POST that names the upload's token in the pipeline's field: served as a request of its own.
        injected = request(port, "POST", "/upload", [(TOKEN_FIELD, token),
                                                     ("Content-Type", f"multipart/form-data; boundary={BOUNDARY}")],
                           form(1000)[0])
        report["injected"] = injected[0]
        report["injectedFiles"] = len(json.loads(injected[2]).get("files", [])) if injected[0] == 200 else None
        _, at = offset(port, location)
        report["append"], _, text = append(port, location, at, body)
        report["answerSha256"] = answer_sha(text)
        report["replayedHead"] = request(port, "HEAD", location)[0]
        report["replayedPatch"] = append(port, location, at, body)[0]
    elif arguments.scenario == "limit":
        location = create(port, body, len(body) // 3)
        _, at = offset(port, location)
        report["append"], _, text = append(port, location, at, body)
        report["answer"] = text[:300]
    elif arguments.scenario == "trickle":
        location = create(port, body, len(body) // 3)
        _, at = offset(port, location)
        started = time.monotonic()
        report["append"], _, text = append(port, location, at, body, pace=20)
        report["seconds"] = round(time.monotonic() - started, 2)
        report["answer"] = text[:300]
    elif arguments.scenario == "rules":
        location = create(port, body, len(body) // 2)
        report["headWithOffset"] = request(port, "HEAD", location, [("Upload-Offset", "0")])[0]
        report["deleteWithComplete"] = request(port, "DELETE", location, [complete_field()])[0]
        _, at = offset(port, location)
        # Version 5 has no append type: sent on a version-6 upload, it would skip version 6's rule.
        report["otherVersion"] = request(port, "PATCH", location, [("Upload-Offset", at), ("Upload-Complete", "?1")],
                                         body[at:], version="5")[0]
        report["offsetAfter"] = offset(port, location)[1]
        report["deleted"], report["headAfterDelete"] = [], []
        for _ in range(5):
            report["deleted"].append(request(port, "DELETE", location)[0])
            report["headAfterDelete"].append(request(port, "HEAD", location)[0])
            location = create(port, body, len(body) // 2)
        report["deleted"].append(request(port, "DELETE", location)[0])
    elif arguments.scenario == "empty":
        location = create(port, body, len(body) // 2)
        _, at = offset(port, location)
        report["appends"] = []
        for _ in range(arguments.count):
            time.sleep(arguments.every)
            report["appends"].append(request(port, "PATCH", location, [
                ("Upload-Offset", at), ("Upload-Complete", "?0"), ("Content-Type", "application/partial-upload")])[0])
    elif arguments.scenario == "limits":
        status, fields, _ = request(port, "OPTIONS", "/upload")
        report["options"] = {"status": status, "limit": fields.get("upload-limit"),
                             "version": fields.get("upload-draft-interop-version")}
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)  # without the version: the app's
        sock.sendall(b"OPTIONS /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
        status, fields, _ = read_answer(sock, "OPTIONS")
        sock.close()
        report["optionsWithoutVersion"] = {"status": status, "limit": fields.get("upload-limit")}
        interim = {}
        location = create(port, body, len(body) // 2, extra=f"Upload-Length: {len(body)}\r\n", interim=interim)
        report["interimLimit"] = interim.get("upload-limit")
        status, fields, _ = request(port, "HEAD", location)
        report["head"] = {"status": status, "length": fields.get("upload-length"), "limit": fields.get("upload-limit"),
                          "offset": fields.get("upload-offset"), "cache": fields.get("cache-control")}
        at = int(fields.get("upload-offset", "0"))
        report["wrongLength"] = append(port, location, at, body, extra=[("Upload-Length", len(body) + 1)])[0]
        report["append"], fields, text = append(port, location, at, body, extra=[("Upload-Length", len(body))])
        report["answerSha256"] = answer_sha(text)
        report["length"] = len(body)
    elif arguments.scenario == "pieces":
        third = len(body) // 3
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall((f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {third}\r\n"
                      f"Upload-Draft-Interop-Version: {VERSION}\r\n{': '.join(complete_field(False))}\r\n"
                      f"Upload-Length: {len(body)}\r\n\r\n").encode() + body[:third])
        status, fields, _ = read_answer(sock)
        keep = ("location", "upload-offset", "upload-complete", "upload-length", "upload-limit")
        report["created"] = {"status": status, **{name: fields.get(name) for name in keep}}
        location = fields.get("location")
        sock.sendall((f"PATCH {location} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpload-Draft-Interop-Version: {VERSION}\r\n"
                      f"Upload-Offset: {third}\r\n{': '.join(complete_field(False))}\r\n"
                      f"Content-Type: application/partial-upload\r\nContent-Length: {third}\r\n\r\n").encode()
                     + body[third:2 * third])
        status, fields, _ = read_answer(sock, "PATCH")
        sock.close()
        report["middle"] = {"status": status, **{name: fields.get(name) for name in keep}}
        report["last"], fields, text = append(port, location, 2 * third, body)
        report["answerSha256"], report["complete"] = answer_sha(text), fields.get("upload-complete")
        report["third"] = third
    elif arguments.scenario == "cut":
        cut(port, body, report, arguments.location, arguments.hold)
    elif arguments.scenario == "paused":
        report["held"], report["created"] = [], 0
        for index in range(arguments.count):
            try:
                create(port, body, len(body) // 2, source=f"127.0.0.{20 + index}")
                report["created"] += 1
            except (OSError, RuntimeError):
                pass  # refused before its 104: nothing waits
            deadline = time.monotonic() + 10
            time.sleep(0.5)
            while held(arguments) > arguments.slots and time.monotonic() < deadline:
                time.sleep(0.2)
            report["held"].append(held(arguments))
    else:
        parser.error(f"no scenario {arguments.scenario}")
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
