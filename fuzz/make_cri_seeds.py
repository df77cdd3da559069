#!/usr/bin/env python3
"""Writes fuzz/seeds-cri/: the answers of the real daemons recorded in
../shared/containerd-cases/cri-status/, encoded as the protobuf messages they
came in (k8s.io/cri-api runtime/v1 StatusResponse and VersionResponse, and
containerd's introspection PluginsResponse), each behind the one byte that
selects the decoder in fuzz/cri_fuzz.c ('s', 'v', 'p').

    fuzz/make_cri_seeds.py [CRI_STATUS_DIR]

The seeds are committed; rerun this when a recording is added."""
import json
import pathlib
import sys


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def field_bool(num, value):
    return varint(num << 3) + varint(1 if value else 0)


def status_response(rec):
    status = b""
    for c in rec["conditions"]:
        cond = field(1, c["type"])
        if c["status"]:
            cond += field_bool(2, True)
        if c["reason"]:
            cond += field(3, c["reason"])
        if c["message"]:
            cond += field(4, c["message"])
        status += field(1, cond)
    out = field(1, status)
    config = json.dumps(rec["config_raw"], separators=(",", ":"))
    for key in rec["info_keys"]:
        out += field(2, field(1, key) + field(2, config if key == "config" else "{}"))
    for h in rec.get("runtime_handlers") or []:
        out += field(3, (field(1, h["name"]) if h["name"] else b"") + field(2, b""))
    return out


def version_response(rec):
    v = rec["version"]
    return (field(1, "v1") + field(2, v["runtime_name"]) + field(3, v["runtime_version"]) +
            field(4, "v1"))


def plugins_response(message):
    """The CRI plugin with an init error, as Introspection/Plugins lists it."""
    plugin = field(1, "io.containerd.grpc.v1") + field(2, "cri")
    plugin += field(7, varint(1 << 3) + varint(2) + field(2, message))
    ok = field(1, "io.containerd.snapshotter.v1") + field(2, "overlayfs")
    return field(1, ok) + field(1, plugin)


def main():
    here = pathlib.Path(__file__).resolve().parent
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                       here.parent.parent / "shared/containerd-cases/cri-status")
    out = here / "seeds-cri"
    out.mkdir(exist_ok=True)
    for path in sorted(src.glob("status-*.json")):
        rec = json.loads(path.read_text())
        if "conditions" not in rec:  # the daemon without CRI: no Status
            continue
        (out / f"status-{path.stem[7:]}").write_bytes(b"s" + status_response(rec))
        (out / f"version-{path.stem[7:]}").write_bytes(b"v" + version_response(rec))
    log = src / "daemonlog-1.6.20-bare.txt"
    for line in log.read_text().splitlines():
        if "failed to load plugin" in line and "cri" in line:
            msg = line.split('error="', 1)[-1].rsplit('"', 1)[0].replace('\\"', '"')
            (out / "plugins-1.6.20-bare").write_bytes(b"p" + plugins_response(msg))
            break


if __name__ == "__main__":
    main()
