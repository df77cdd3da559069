#!/usr/bin/env python3
"""Clients that misbehave in ways curl and kubectl cannot: the embedded API
server's limits are tested with them (apiserver_limits.bats).

Usage: apiserver_limits.py KUBECONFIG CHECK [ARGS...]; each check prints what
it saw and exits 0 when the server held its limit, 1 when it did not.
"""
import base64
import json
import select
import socket
import ssl
import sys
import time


def load_kubeconfig(path):
    with open(path) as f:
        kc = json.load(f)
    cluster = kc["clusters"][0]["cluster"]
    host, port = cluster["server"].removeprefix("https://").rsplit(":", 1)
    ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
    token = kc["users"][0]["user"]["token"]
    return host, int(port), ca, token


class Server:
    def __init__(self, kubeconfig):
        self.host, self.port, ca, self.token = load_kubeconfig(kubeconfig)
        self.context = ssl.create_default_context(cadata=ca)

    def connect(self, timeout=10):
        raw = socket.create_connection((self.host, self.port), timeout=timeout)
        return self.context.wrap_socket(raw, server_hostname=self.host)


def read_status_line(sock, timeout):
    """The response's status code, or None when none came in time."""
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ssl.SSLError, OSError):
        pass
    if not data.startswith(b"HTTP/1.1 "):
        return None, data
    return int(data.split(b" ")[1]), data


def read_response(sock, timeout):
    """Status code and the whole response text (until the server closes)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except (socket.timeout, ssl.SSLError, OSError):
        pass
    code = int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else None
    return code, data


def check_early_401(server):
    """Headers announce a large body that never comes: without the token the
    401 must come at once, the body unread."""
    sock = server.connect()
    sock.sendall(b"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
                 b"Host: x\r\nContent-Type: application/json\r\n"
                 b"Authorization: Bearer wrong\r\n"
                 b"Content-Length: 100000000\r\n\r\n")
    start = time.monotonic()
    code, _ = read_status_line(sock, 10)
    took = time.monotonic() - start
    print(f"status {code} after {took:.2f}s with no body sent")
    return code == 401


def check_early_401_slow_body(server):
    """The same with a body sent slowly after the headers: the answer must
    not wait for the body (it would take 100 s)."""
    sock = server.connect()
    sock.sendall(b"PUT /api/v1/namespaces/default/configmaps/x HTTP/1.1\r\n"
                 b"Host: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 100\r\n\r\n")
    start = time.monotonic()
    sock.settimeout(0.5)
    data = b""
    for _ in range(20):
        try:
            sock.sendall(b"{")
        except OSError:
            break
        try:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
            if b"\r\n" in data:
                break
        except (socket.timeout, ssl.SSLWantReadError):
            continue
        except OSError:
            break
    took = time.monotonic() - start
    code = int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else None
    print(f"status {code} after {took:.2f}s, body still coming")
    return code == 401 and took < 5


def authorized_headers(server, method, path, extra=b""):
    return (f"{method} {path} HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {server.token}\r\n"
            "Content-Type: application/json\r\n").encode() + extra + b"\r\n"


def check_too_large_announced(server):
    """A Content-Length over 3 MiB: 413 with kube-apiserver's text, before
    the body is sent."""
    sock = server.connect()
    sock.sendall(authorized_headers(server, "POST", "/api/v1/namespaces/default/configmaps",
                                    b"Content-Length: 3145729\r\n"))
    code, data = read_response(sock, 10)
    print(data.decode(errors="replace"))
    return code == 413 and b'"message":"Request entity too large: limit is 3145728"' in data \
        and b'"reason":"RequestEntityTooLarge"' in data


def send_chunked(sock, total):
    """Sends `total` bytes as 64 KiB chunks; how many went before the
    server answered or stopped reading."""
    chunk = b"x" * 65536
    frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    sent = 0
    sock.settimeout(5)
    try:
        # an answer may come while the body still goes: look before each
        # chunk, as an HTTP client does
        while sent < total and not select.select([sock], [], [], 0)[0]:
            sock.sendall(frame)
            sent += len(chunk)
        if sent >= total:
            sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass
    return sent


def check_too_large_chunked(server):
    """A chunked body of 4 MiB: 413 with kube-apiserver's text."""
    sock = server.connect()
    sock.sendall(authorized_headers(server, "POST", "/api/v1/namespaces/default/configmaps",
                                    b"Transfer-Encoding: chunked\r\n"))
    send_chunked(sock, 4 << 20)
    code, data = read_response(sock, 10)
    print(data.decode(errors="replace").splitlines()[-1:])
    return code == 413 and b'"message":"Request entity too large: limit is 3145728"' in data


def check_too_large_endless(server):
    """A chunked body that does not end: the server stops reading it soon
    after 3 MiB (the client cannot send its 64 MiB)."""
    sock = server.connect()
    sock.sendall(authorized_headers(server, "POST", "/api/v1/namespaces/default/configmaps",
                                    b"Transfer-Encoding: chunked\r\n"))
    sent = send_chunked(sock, 64 << 20)
    print(f"sent {sent >> 20} MiB of 64")
    return sent < (32 << 20)


def check_body_budget(server, count="30"):
    """Many requests announcing 3 MiB bodies and sending none: past the
    server's budget for buffered bodies, 429 as kube-apiserver's in-flight
    limit answers, with Retry-After."""
    socks, busy, other = [], 0, []
    for _ in range(int(count)):
        sock = server.connect()
        sock.sendall(authorized_headers(server, "POST", "/api/v1/namespaces/default/configmaps",
                                        b"Content-Length: 3145728\r\n"))
        socks.append(sock)
    for sock in socks:
        code, data = read_status_line(sock, 0.5)
        if code == 429:
            code, rest = read_response(sock, 5)
            data += rest
            if b"Retry-After: 1" in data and b"Too many requests, please try again later." in data:
                busy += 1
            else:
                other.append(data)
        elif code is not None:
            other.append(data)
    for sock in socks:
        sock.close()
    print(f"{busy} of {count} refused with 429; other answers: {other}")
    return busy > 0 and not other


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    server = Server(sys.argv[1])
    checks = {name[6:].replace("_", "-"): fn for name, fn in globals().items()
              if name.startswith("check_")}
    fn = checks.get(sys.argv[2])
    if not fn:
        print(f"unknown check {sys.argv[2]}; known: {', '.join(sorted(checks))}",
              file=sys.stderr)
        return 2
    return 0 if fn(server, *sys.argv[3:]) else 1


if __name__ == "__main__":
    sys.exit(main())
