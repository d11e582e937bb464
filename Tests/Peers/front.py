#!/usr/bin/env python3
"""A misbehaving front for an upload server on 127.0.0.1: redirects, refusals and dropped connections, for the
tests of retries and redirects.

    python3 front.py TARGET_PORT ACTION[,ACTION...] [ORIGIN]

With ORIGIN (say http://localhost:8080: a server that names its resources by an absolute origin of its own, as
swift-nio-extras' resumable upload demo does), the answers that proxy and cut forward have it replaced with the
front's own http://127.0.0.1:PORT, so that a client's next requests (a resumption's) come through the front too.

Prints its port on the first line. Each new connection takes the next ACTION; the last one repeats:
  proxy                          forwards the connection to 127.0.0.1:TARGET_PORT, both ways
  cut:N                          the same, until N bytes came from the client: then resets both connections
  drop                           reads the request's head and up to 64 KiB of its body (0.5 s at most), then
                                 resets the connection (no answer)
  status:CODE[:RETRY_AFTER]      answers CODE (with Retry-After when given) after the head, and closes
  status-after-body:CODE[:RETRY_AFTER]
                                 the same, after reading the body (by its Content-Length)
  redirect:CODE:LOCATION         reads the body (by its Content-Length), answers CODE with Location, and closes
  hang                           reads the head, then neither reads nor answers
  continue:MS                    reads the head, counts the body bytes that come in the next MS milliseconds, then
                                 answers 100 Continue and forwards the request (without its Expect) to the target;
                                 continue:never sends no 100 and tells how long the body's first byte took
  refuse:CODE                    answers CODE after the head without closing, then counts the body bytes that come
                                 until the client closes (at most 2 s)
Every answer but refuse's carries Connection: close. continue and refuse print a line for each connection on
standard output: "early N" (the body bytes before the 100), "waited MS" (from the head to the body's first byte)
or "after N" (the body bytes after the refusal). When standard input closes, prints "cuts N" (the cut connections
whose N bytes came: a connection the client closed before then was not cut) and "client bytes N" (every byte that
came from clients on the connections proxy and cut forwarded), then exits.
"""
import socket
import sys
import threading
import time

REASONS = {301: "Moved Permanently", 302: "Found", 303: "See Other", 307: "Temporary Redirect",
           308: "Permanent Redirect", 401: "Unauthorized", 408: "Request Timeout", 413: "Content Too Large",
           429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def drain(conn, head, rest):
    """Reads the body a Content-Length announces (libcurl, under URLSession, waits to send it all before it
    reads an answer)."""
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = conn.recv(262144)
        if not chunk:
            break
        rest += chunk


client_bytes = 0
cuts_made = 0
count_lock = threading.Lock()


def count(received):
    global client_bytes
    with count_lock:
        client_bytes += received


def count_cut():
    global cuts_made
    with count_lock:
        cuts_made += 1


REWRITE = None  # (ORIGIN, the front's own origin) as bytes, with ORIGIN


def pipe(source, sink, counted=False, answers=False):
    """Forwards `source` to `sink` until either ends; `answers` (the server's side) get ORIGIN rewritten (an
    answer's head comes in one read here: an origin split across two reads would pass as it is)."""
    try:
        while True:
            chunk = source.recv(262144)
            if not chunk:
                break
            if counted:
                count(len(chunk))
            if answers and REWRITE:
                chunk = chunk.replace(*REWRITE)
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (sink, source):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def answer(conn, code, headers):
    lines = [f"HTTP/1.1 {code} {REASONS.get(code, 'Status')}"] + headers + ["Content-Length: 0",
                                                                             "Connection: close", "", ""]
    conn.sendall("\r\n".join(lines).encode())


def read_for(conn, seconds):
    """The bytes that arrive within `seconds`, or until the peer closes."""
    data, deadline = b"", time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        conn.settimeout(left)
        try:
            chunk = conn.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    conn.settimeout(None)
    return data


def forward(conn, head, rest, target_port):
    """Sends the request, without its Expect header, to the target, then pipes both ways."""
    lines = [line for line in head.split(b"\r\n") if not line.lower().startswith(b"expect:")]
    upstream = socket.create_connection(("127.0.0.1", target_port))
    upstream.sendall(b"\r\n".join(lines) + b"\r\n\r\n" + rest)
    threading.Thread(target=pipe, args=(upstream, conn, False, True), daemon=True).start()
    pipe(conn, upstream)


def serve(conn, action, target_port):
    kind, _, argument = action.partition(":")
    try:
        if kind == "proxy":
            upstream = socket.create_connection(("127.0.0.1", target_port))
            threading.Thread(target=pipe, args=(upstream, conn, False, True), daemon=True).start()
            pipe(conn, upstream, counted=True)
            return
        if kind == "cut":
            upstream = socket.create_connection(("127.0.0.1", target_port))
            threading.Thread(target=pipe, args=(upstream, conn, False, True), daemon=True).start()
            left = int(argument)
            while left > 0 and (chunk := conn.recv(min(left, 262144))):
                count(len(chunk))
                upstream.sendall(chunk)
                left -= len(chunk)
            if left <= 0:
                count_cut()
            upstream.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            upstream.close()
            kind = "drop"  # the client's side is reset below
            return
        head, rest = read_head(conn)
        if kind == "continue":
            if argument == "never":
                started = time.monotonic()
                rest += conn.recv(65536) if not rest else b""
                print(f"waited {int((time.monotonic() - started) * 1000)}", flush=True)
            else:
                rest += read_for(conn, int(argument) / 1000)
                print(f"early {len(rest)}", flush=True)
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            forward(conn, head, rest, target_port)
            return
        if kind == "refuse":
            conn.sendall(f"HTTP/1.1 {argument} {REASONS.get(int(argument), 'Status')}\r\nContent-Length: 0\r\n\r\n"
                         .encode())
            print(f"after {len(rest) + len(read_for(conn, 2))}", flush=True)
            return
        if kind == "hang":
            time.sleep(3600)  # the process ends when its input closes
        elif kind == "drop":
            conn.settimeout(0.5)  # a small body is all sent by then; the client then waits for an answer
            while len(rest) < 65536:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                rest += chunk
        elif kind in ("status", "status-after-body"):
            code, _, retry_after = argument.partition(":")
            if kind == "status-after-body":
                drain(conn, head, rest)
            answer(conn, int(code), [f"Retry-After: {retry_after}"] if retry_after else [])
        elif kind == "redirect":
            code, _, location = argument.partition(":")
            drain(conn, head, rest)
            answer(conn, int(code), [f"Location: {location}"])
    except OSError:  # socket.timeout among them: the drop goes ahead
        pass
    finally:
        if kind == "drop":
            try:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
            except OSError:
                pass
        conn.close()


def main():
    target_port, actions = int(sys.argv[1]), sys.argv[2].split(",")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    if len(sys.argv) > 3:
        global REWRITE
        REWRITE = (sys.argv[3].encode(), f"http://127.0.0.1:{port}".encode())
    print(port, flush=True)

    def accept():
        count = 0
        while True:
            conn, _ = listener.accept()
            action = actions[min(count, len(actions) - 1)]
            count += 1
            threading.Thread(target=serve, args=(conn, action, target_port), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()
    with count_lock:
        print(f"cuts {cuts_made}", flush=True)
        print(f"client bytes {client_bytes}", flush=True)


if __name__ == "__main__":
    main()
