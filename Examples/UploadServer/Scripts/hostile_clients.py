#!/usr/bin/env python3
"""Clients that misbehave, against UploadServer on 127.0.0.1, each scenario printing one JSON line of what happened.

    python3 hostile_clients.py PORT SCENARIO [--connections N] [--hold SECONDS]

Scenarios:
  slow-headers  N connections that send nothing, half a request line, or half the headers (a third each); while
                they wait, one normal upload. Reports when the server closed each, and the upload's status.
  slow-bodies   N uploads whose file trickles a few bytes every half second; reports each answer and when it came.
  stalled       N uploads that send half their file and then nothing; reports each answer and when it came.
  never-read    N clients send a form of eight 1 MiB fields of 0x01 and never read the answer; they hold their
                connections --hold seconds, then report whether the server closed them.
  refused       a 1 GiB POST of the wrong type, sent as fast as possible; reports the status line and how many
                bytes the server took before it closed the connection.
  idle-flood    N connections that send nothing, held --hold seconds: reports how many were answered 503 at once,
                and the status of a normal upload made while they are held.
  pipeline      three GETs and a POST with Expect: 100-continue in one write; reports the order of what came back.
  framing       Transfer-Encoding: gzip, chunked; HTTP/1.0 with chunked; chunked beside Content-Length.
  big-then-trickle
                N uploads that each send --size bytes of a file at once, then 2 KiB a second for --hold seconds,
                then the rest; reports how many got each status.
  slow-legal    N uploads, each from its own address (127.0.0.10 on), that send 3 KiB a second, above the
                server's minimum rate, for --hold seconds; after --wait seconds one normal upload, tried again
                after a 503 (up to 3 tries). Reports the normal upload's statuses and the slow ones' answers.
  per-peer      N uploads from 127.0.0.1 that trickle as in slow-legal; reports the answers that came within a
                second (the ones past the address's share).
  unread        a POST to a path no route serves, declaring 100 GB, whose body is pushed on after the 404 for
                --hold seconds: reports the status, the bytes the server took, and whether it closed.
  epilogue      the same with a whole form first, which the server answers 200 at its close delimiter, and an
                epilogue pushed on after it.
  keep-alive    three small forms one after another on one connection: their statuses, and how many found the
                connection still open.
  upload        one normal upload of a 1 MiB file; reports its status.
"""
import argparse
import asyncio
import concurrent.futures
import json
import socket
import threading
import time

BOUNDARY = "hostileclientboundary"


def form_head(filename="f.bin"):
    """A caption and the head of a file part, with the file's first bytes: a PNG's signature, so that a server that
    takes photos by what their bytes show (SmallUploadServer) takes the file the scenario sends after it."""
    return (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"caption\"\r\n\r\nhello\r\n"
            f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"f\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + b"\x89PNG\r\n\x1a\n"


FORM_TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()


def post_head(length, content_type=f"multipart/form-data; boundary={BOUNDARY}", extra=""):
    return (f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {length}\r\n{extra}\r\n").encode()


async def read_answer(reader, timeout):
    """The status code and body of one answer, or (None, reason) when none came."""
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout)
    except (asyncio.IncompleteReadError, ConnectionError) as error:
        return None, f"closed: {type(error).__name__}"
    except asyncio.TimeoutError:
        return None, "no answer"
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    try:
        body = await asyncio.wait_for(reader.readexactly(length), timeout)
    except Exception:
        body = b""
    return status, body.decode(errors="replace")


async def closed_within(reader, timeout):
    """Seconds until the server closes the connection (reading and discarding what it sends), or None."""
    start = time.monotonic()
    try:
        while True:
            data = await asyncio.wait_for(reader.read(65536), timeout - (time.monotonic() - start))
            if not data:
                return time.monotonic() - start
    except ConnectionError:
        return time.monotonic() - start
    except asyncio.TimeoutError:
        return None


def send_reading_the_answer(port, head, chunks, timeout):
    """Sends head and then chunks on a blocking socket while a thread reads the answer, and stops sending once the
    answer is in or the server closes. Returns (status, body, bytes of chunks sent).

    Not asyncio: when a send fails (the server answered early and closed), an asyncio transport closes its socket
    and the answer that had already arrived is lost with it. Here the socket stays open, and Linux still hands over
    the bytes that came before the close, as curl reads them.
    """
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    answer = {}
    reader = threading.Thread(target=lambda: answer.update(read_answer_blocking(sock)), daemon=True)
    reader.start()
    sent = 0
    start = time.monotonic()
    try:
        sock.sendall(head)
        for chunk in chunks:
            if not reader.is_alive() or time.monotonic() - start > timeout:
                break
            sock.sendall(chunk)
            sent += len(chunk)
    except OSError:
        pass
    reader.join(timeout)
    sock.close()
    return answer.get("status"), answer.get("body", "no answer"), sent


def read_answer_blocking(sock):
    """The status code and body of one answer on a blocking socket, as read_answer reads them."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            if not more:
                return {"body": "closed: EOF before the answer"}
            data += more
    except socket.timeout:
        return {"body": "no answer"}
    except OSError as error:
        return {"body": f"closed: {type(error).__name__}"}
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    try:
        while len(body) < length:
            more = sock.recv(65536)
            if not more:
                break
            body += more
    except OSError:
        pass
    return {"status": int(lines[0].split()[1]), "body": body[:length].decode(errors="replace")}


async def normal_upload(port, size=1 << 20, timeout=60):
    start = time.monotonic()
    body = form_head() + bytes(size) + FORM_TAIL
    status, text, _ = await asyncio.to_thread(
        send_reading_the_answer, port, post_head(len(body)), [body[i:i + (1 << 16)] for i in range(0, len(body), 1 << 16)],
        timeout)
    return {"status": status, "seconds": round(time.monotonic() - start, 3), "body": text[:200]}


async def slow_headers(port, connections, hold):
    kinds = [b"", b"POST /upl", b"POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-"]
    streams = []
    for index in range(connections):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(kinds[index % 3])
        await writer.drain()
        streams.append((reader, writer))
    opened = time.monotonic()
    watch = [asyncio.create_task(closed_within(reader, hold)) for reader, _ in streams]
    upload = await normal_upload(port)
    closed = await asyncio.gather(*watch)
    for _, writer in streams:
        writer.close()
    cut = sorted(c for c in closed if c is not None)
    return {"connections": connections, "closed": len(cut), "opened_seconds": round(time.monotonic() - opened, 3),
            "closed_p50": cut[len(cut) // 2] if cut else None, "closed_max": cut[-1] if cut else None,
            "upload_meanwhile": upload}


async def slow_body(port, stall, hold):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    size = 200_000
    body_length = len(form_head()) + size + len(FORM_TAIL)
    writer.write(post_head(body_length) + form_head())
    await writer.drain()
    start = time.monotonic()
    answer = asyncio.create_task(read_answer(reader, hold))
    sent = 0
    try:
        while not answer.done() and time.monotonic() - start < hold:
            if stall and sent >= size // 2:
                await asyncio.sleep(0.2)  # stopped sending: only the server can end this
                continue
            chunk = bytes(size // 2) if stall and sent == 0 else b"x" * 4
            writer.write(chunk)
            await writer.drain()
            sent += len(chunk)
            await asyncio.sleep(0 if stall else 0.5)
    except ConnectionError:
        pass
    status, text = await answer
    writer.close()
    return {"status": status, "seconds": round(time.monotonic() - start, 3), "sent": sent, "body": text[:200]}


async def slow_bodies(port, connections, hold, stall):
    results = await asyncio.gather(*(slow_body(port, stall, hold) for _ in range(connections)))
    return {"connections": connections, "answers": [r["status"] for r in results],
            "seconds_max": max(r["seconds"] for r in results), "example": results[0]}


async def never_read(port, connections, hold):
    # Eight fields just under the default 1 MiB field limit: 8 MiB of 0x01, each \u0001 in a JSON echo.
    value = b"\x01" * ((1 << 20) - 64)
    body = b"".join(
        f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"f{i}\"\r\n\r\n".encode() + value + b"\r\n"
        for i in range(8)) + f"--{BOUNDARY}--\r\n".encode()
    streams = []
    for _ in range(connections):
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 16)
        writer.transport.set_write_buffer_limits(high=1 << 26)
        writer.write(post_head(len(body)) + body)
        streams.append((reader, writer))
    await asyncio.gather(*(writer.drain() for _, writer in streams))
    # Never read: the answers sit in the server's socket buffers (or its memory) until it gives up on us.
    await asyncio.sleep(hold)
    closed = 0
    for reader, writer in streams:
        try:
            while await asyncio.wait_for(reader.read(1 << 20), 0.5):
                pass
            closed += 1
        except asyncio.TimeoutError:
            pass
        except ConnectionError:
            closed += 1
        writer.close()
    return {"connections": connections, "bytes_each": len(body), "closed_by_server": closed}


async def refused(port):
    size = 1 << 30
    chunk = bytes(1 << 20)
    status, text, sent = await asyncio.to_thread(
        send_reading_the_answer, port, post_head(size, content_type="text/plain"), (chunk for _ in range(size >> 20)),
        30)
    return {"status": status, "sent_before_close": sent, "declared": size, "body": text[:200]}


def unread(port, hold, epilogue=False):
    """Pushes a body the server answered 404 before reading (no Connection: close in the answer), as fast as the
    connection takes it, for `hold` seconds or until the server closes. With `epilogue`, the body is a whole form
    the server answers 200, followed by an epilogue that never ends (the parser stops at the close delimiter)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=hold + 5)
    if epilogue:
        sock.sendall(post_head(100_000_000_000) + form_head() + bytes(1000) + FORM_TAIL)
    else:
        sock.sendall(b"POST /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                     b"Content-Length: 100000000000\r\n\r\n")
    answer = {}
    reader = threading.Thread(target=lambda: answer.update(read_answer_blocking(sock)), daemon=True)
    reader.start()
    chunk, sent, closed = bytes(1 << 20), 0, False
    start = time.monotonic()
    sock.settimeout(1)
    while time.monotonic() - start < hold:
        try:
            sent += sock.send(chunk)
        except socket.timeout:
            continue
        except OSError:
            closed = True
            break
    reader.join(5)
    sock.close()
    return {"status": answer.get("status"), "sent": sent, "closed": closed,
            "seconds": round(time.monotonic() - start, 2)}


def keep_alive(port):
    """Three forms, one after another, on one connection: each answer's status, and whether the connection stayed
    open for the next (an upload read whole need not cost the client a new connection)."""
    body = form_head() + bytes(1000) + FORM_TAIL
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    statuses, reused = [], 0
    try:
        for index in range(3):
            sock.sendall(post_head(len(body)) + body)
            answer = read_answer_blocking(sock)
            statuses.append(answer.get("status"))
            if index > 0 and answer.get("status"):
                reused += 1
    finally:
        sock.close()
    return {"statuses": statuses, "reused": reused}


async def idle_flood(port, connections, hold):
    streams = []
    for _ in range(connections):
        streams.append(await asyncio.open_connection("127.0.0.1", port))
    await asyncio.sleep(0.5)
    refused = 0
    for reader, _ in streams:
        try:
            if b" 503 " in await asyncio.wait_for(reader.read(200), 0.05):
                refused += 1
        except (asyncio.TimeoutError, ConnectionError):
            pass
    upload = await normal_upload(port, timeout=10)
    await asyncio.sleep(max(0, hold - 0.5 - upload["seconds"]))
    for _, writer in streams:
        writer.close()
    return {"connections": connections, "answered_503": refused, "upload_meanwhile": upload}


async def pipeline(port):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = form_head() + b"data" + FORM_TAIL
    gets = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" * 3
    writer.write(gets + post_head(len(body), extra="Expect: 100-continue\r\n"))
    await writer.drain()
    order = []
    for _ in range(4):
        status, _ = await read_answer(reader, 10)
        order.append(status)
        if status == 100:
            writer.write(body)
            await writer.drain()
            break
    status, _ = await read_answer(reader, 10)
    order.append(status)
    writer.close()
    return {"order": order}


async def framing(port):
    cases = {
        "gzip, chunked": b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "HTTP/1.0 chunked": b"POST /upload HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "chunked and length": b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        "chunked": (b"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                    b"Content-Type: multipart/form-data; boundary=" + BOUNDARY.encode() + b"\r\n\r\n"),
    }
    results = {}
    for name, head in cases.items():
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(head)
        if name == "chunked":
            body = form_head() + b"data" + FORM_TAIL
            writer.write(b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
        await writer.drain()
        status, text = await read_answer(reader, 10)
        results[name] = {"status": status, "closed": await closed_within(reader, 5) is not None, "body": text[:160]}
        writer.close()
    return results


async def answered(answer, writer):
    """The status of an upload's answer (None when none came), once the upload has sent what it would."""
    status, _ = await answer
    writer.close()
    return status


async def big_then_trickle(port, connections, hold, size):
    """`connections` uploads at once, each sending `size` bytes of a file and then 2 KiB a second for `hold` seconds
    before the rest of its form, stopping once answered. On blocking sockets, each with a thread that reads its answer
    (send_reading_the_answer): a refused upload's answer arrives while it is still sending, and an asyncio client
    loses an answer it has not read yet when a failed send closes its socket (once in CI: one upload of 50 with no
    status, on a loaded machine)."""
    seconds = int(hold)
    head = post_head(len(form_head()) + size + 2048 * seconds + len(FORM_TAIL)) + form_head()

    def chunks():
        for start in range(0, size, 1 << 20):
            yield bytes(min(1 << 20, size - start))
        for _ in range(seconds):
            yield b"x" * 2048
            time.sleep(1)
        yield FORM_TAIL

    def one():
        status, body, _ = send_reading_the_answer(port, head, chunks(), hold + 120)
        return status, body

    loop = asyncio.get_running_loop()
    with concurrent.futures.ThreadPoolExecutor(max_workers=connections) as pool:
        answers = await asyncio.gather(*(loop.run_in_executor(pool, one) for _ in range(connections)))
    counts = {}  # "200", "503", or "None (why)"
    for status, body in answers:
        key = str(status) if status is not None else f"None ({body})"
        counts[key] = counts.get(key, 0) + 1
    return {"statuses": counts}


async def trickle(port, source, hold, answer_within):
    """An upload from `source` that sends 768 bytes every quarter second (3 KiB/s) for `hold` seconds, then the rest
    of its form; its status, or None when no answer came within `answer_within` seconds of its start."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    size = int(3072 * hold) + 3072
    writer.write(post_head(len(form_head()) + size + len(FORM_TAIL)) + form_head())
    answer = asyncio.create_task(read_answer(reader, answer_within))
    sent = 0
    start = time.monotonic()
    try:
        while not answer.done() and time.monotonic() - start < hold:
            writer.write(b"x" * 768)
            await writer.drain()
            sent += 768
            await asyncio.sleep(0.25)
        if not answer.done():
            writer.write(b"x" * (size - sent) + FORM_TAIL)
            await writer.drain()
    except ConnectionError:
        pass
    return await answered(answer, writer)


async def slow_legal(port, connections, hold, wait):
    """The normal upload's first try makes the server cut the slowest upload and is answered 503 with Retry-After
    (the cut one's slot is free only once it let go of what it holds); it tries again as a client would."""
    slow = [asyncio.create_task(trickle(port, f"127.0.0.{10 + i}", hold, hold + 5)) for i in range(connections)]
    await asyncio.sleep(wait)
    tries = []
    for _ in range(3):
        upload = await normal_upload(port)
        tries.append(upload["status"])
        if upload["status"] != 503:
            break
        await asyncio.sleep(1)  # the server's Retry-After
    answers = await asyncio.gather(*slow)
    return {"upload": tries[-1], "upload_tries": tries, "slow_answers": answers}


async def per_peer(port, connections):
    answers = await asyncio.gather(*(trickle(port, "127.0.0.1", 2, 1) for _ in range(connections)))
    return {"answers": answers}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("port", type=int)
    parser.add_argument("scenario")
    parser.add_argument("--connections", type=int, default=30)
    parser.add_argument("--hold", type=float, default=20)
    parser.add_argument("--size", type=int, default=7_864_320)
    parser.add_argument("--wait", type=float, default=2)
    args = parser.parse_args()
    scenarios = {
        "slow-headers": lambda: slow_headers(args.port, args.connections, args.hold),
        "slow-bodies": lambda: slow_bodies(args.port, args.connections, args.hold, stall=False),
        "stalled": lambda: slow_bodies(args.port, args.connections, args.hold, stall=True),
        "never-read": lambda: never_read(args.port, args.connections, args.hold),
        "refused": lambda: refused(args.port),
        "idle-flood": lambda: idle_flood(args.port, args.connections, args.hold),
        "pipeline": lambda: pipeline(args.port),
        "unread": lambda: asyncio.to_thread(unread, args.port, args.hold),
        "epilogue": lambda: asyncio.to_thread(unread, args.port, args.hold, True),
        "keep-alive": lambda: asyncio.to_thread(keep_alive, args.port),
        "framing": lambda: framing(args.port),
        "big-then-trickle": lambda: big_then_trickle(args.port, args.connections, args.hold, args.size),
        "slow-legal": lambda: slow_legal(args.port, args.connections, args.hold, args.wait),
        "per-peer": lambda: per_peer(args.port, args.connections),
        "upload": lambda: normal_upload(args.port),
    }
    print(json.dumps(asyncio.run(scenarios[args.scenario]())))


if __name__ == "__main__":
    main()
