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
import subprocess
import sys
import threading
import time
import warnings


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


def trickle(server, first, then, limit):
    """Sends `first` at once, then `then` a byte a second; the seconds until
    the server closed the connection (None: still open after `limit`)."""
    sock = server.connect(timeout=limit + 10)
    start = time.monotonic()
    sock.sendall(first)
    sock.settimeout(1)
    for i in range(int(limit)):
        try:
            if sock.recv(4096) == b"":
                return time.monotonic() - start
        except socket.timeout:
            pass
        except OSError:
            return time.monotonic() - start
        try:
            sock.sendall(then[i % len(then):i % len(then) + 1])
        except OSError:
            return time.monotonic() - start
    return None


def check_trickle(server):
    """Clients that send a byte a second (each byte resets an idle timer):
    cut off by their deadline all the same, in the headers (32 s, as
    kube-apiserver's ReadHeaderTimeout) and in the body (60 s, as its
    request timeout). Run side by side."""
    body_headers = authorized_headers(server, "PUT", "/api/v1/namespaces/default/configmaps/t",
                                      b"Content-Length: 100000\r\n")
    cases = {
        "request line": (b"", b"GET /api/v1/namespaces HTTP/1.1\r\nX-Pad: " + b"a" * 200, 32),
        "headers": (b"GET /api HTTP/1.1\r\n", b"X-Pad: " + b"a" * 200, 32),
        "body": (body_headers, b"{" + b" " * 200, 60),
    }
    results = {}

    def run(name, first, then, deadline):
        results[name] = trickle(server, first, then, deadline + 15)

    threads = [threading.Thread(target=run, args=(name, *case)) for name, case in cases.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = True
    for name, (_, _, deadline) in cases.items():
        took = results[name]
        print(f"{name}: " + (f"closed after {took:.1f}s (deadline {deadline}s)" if took
                             else f"still open after {deadline + 15}s"))
        # not sooner either: cut by its deadline, not by something else
        ok &= took is not None and deadline - 2 < took < deadline + 5
    return ok


def check_flood(server, count, *command):
    """Holds `count` connections that never send a byte (more than the
    server serves at once) and runs `command` (kubectl, with the token)
    meanwhile: it must work."""
    socks = []
    for _ in range(int(count)):
        try:
            socks.append(socket.create_connection((server.host, server.port), timeout=5))
        except OSError:
            break
    time.sleep(0.5)
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    closed = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            if sock.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
        sock.close()
    print(f"held {len(socks)} idle connections, {closed} of them closed by the server;"
          f" {' '.join(command[:2])}... exited {result.returncode}")
    print(result.stdout + result.stderr)
    return result.returncode == 0


def get(server, path):
    sock = server.connect()
    sock.sendall(authorized_headers(server, "GET", path, b"Connection: close\r\n"))
    code, data = read_response(sock, 10)
    sock.close()
    return code, data.split(b"\r\n\r\n", 1)[-1].decode()


def watches_open(server):
    """The server's count of watches it streams (its /metrics gauge)."""
    code, text = get(server, "/metrics")
    if code != 200:
        raise SystemExit(f"/metrics answered {code}")
    return sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("apiserver_longrunning_requests{") and 'verb="WATCH"' in line)


def threads_of(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return None


def check_dropped_watches(server, count, pid):
    """Opens `count` watches, then hangs up on all of them: the server must
    free them at once (its watch count and its threads back to where they
    were), not at the next event or at the watches' timeout."""
    count = int(count)
    base_watches, base_threads = watches_open(server), threads_of(pid)
    socks = []
    for i in range(count):
        sock = server.connect()
        path = "/api/v1/pods?watch=true" if i % 2 else \
            "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0"
        sock.sendall(authorized_headers(server, "GET", path))
        code, _ = read_status_line(sock, 10)
        if code != 200:
            print(f"watch {i} answered {code}")
            return False
        socks.append(sock)
    during = watches_open(server)
    for sock in socks:
        sock.close()
    after, threads = during, None
    for _ in range(50):
        time.sleep(0.1)
        after, threads = watches_open(server), threads_of(pid)
        if after == base_watches and threads <= base_threads + 2:
            break
    print(f"watches: {base_watches} before, {during} open, {after} after hanging up;"
          f" server threads: {base_threads} before, {threads} after")
    return during == base_watches + count and after == base_watches and \
        threads <= base_threads + 2


def handshake(server, version):
    """The protocol version a handshake offering only `version` ends in,
    or the error it ends with."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    # OpenSSL 3 refuses TLS 1.0 and 1.1 itself at its default level: the
    # client must offer them for the server to be the one that refuses
    ctx.set_ciphers("DEFAULT@SECLEVEL=0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # what 1.0 and 1.1 are
        ctx.minimum_version = ctx.maximum_version = version
    try:
        with socket.create_connection((server.host, server.port), timeout=10) as raw:
            with ctx.wrap_socket(raw) as sock:
                return sock.version()
    except (ssl.SSLError, OSError) as e:
        return f"refused ({e.__class__.__name__})"


def check_tls_versions(server):
    """TLS 1.2 and 1.3 are spoken; 1.0 and 1.1 refused, as by
    kube-apiserver (MinVersion: tls.VersionTLS12)."""
    want = {ssl.TLSVersion.TLSv1: None, ssl.TLSVersion.TLSv1_1: None,
            ssl.TLSVersion.TLSv1_2: "TLSv1.2", ssl.TLSVersion.TLSv1_3: "TLSv1.3"}
    ok = True
    for version, expected in want.items():
        got = handshake(server, version)
        print(f"{version.name}: {got}")
        ok &= got == expected if expected else got.startswith("refused")
    return ok


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
