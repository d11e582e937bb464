"""An HTTP proxy on 127.0.0.1 that tunnels CONNECT requests, for the tests of `multipart send -x`.

    python3 connect_proxy.py LOG

Prints its port on the first line. Each CONNECT request's target (and its Proxy-Authorization, when sent) is
appended to LOG as one line, `CONNECT host:port [authorization]`, before the tunnel opens; any other request is
answered 405. Exits when standard input closes, so it never outlives the test that started it.
"""
import os
import socket
import sys
import threading

from front import pipe, read_head  # the same head reading and byte pump as the misbehaving front


def serve(client, log):
    with client:
        head, rest = read_head(client)
        if not head:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        if method != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        authorization = next((line.split(":", 1)[1].strip() for line in lines[1:]
                              if line.lower().startswith("proxy-authorization:")), "")
        with open(log, "a") as file:
            file.write(f"CONNECT {target} {authorization}".rstrip() + "\n")
        host, _, port = target.rpartition(":")
        upstream = socket.create_connection((host.strip("[]"), int(port)))
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            upstream.sendall(rest)
        back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
        back.start()
        pipe(client, upstream)
        back.join()
        upstream.close()


def main():
    log = sys.argv[1]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    while True:
        client, _ = listener.accept()
        threading.Thread(target=serve, args=(client, log), daemon=True).start()


if __name__ == "__main__":
    main()
