#!/usr/bin/env python3
"""Clients that misbehave in ways curl and kubectl cannot: the embedded API
server's limits are tested with them (apiserver_limits.bats).

Usage: apiserver_limits.py KUBECONFIG CHECK [ARGS...]; each check prints what
it saw and exits 0 when the server held its limit, 1 when it did not.
"""
import base64
import json
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
