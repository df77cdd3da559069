#!/usr/bin/env python3
"""What `gpuop containerd check -o json` decoded from a daemon, against what
the recording client (grpcio with stubs generated from the CRI api.proto)
got from the same containerd release on the same files:
../shared/containerd-cases/cri-status/<recording>.

usage: cri_vs_recording.py OUR_JSON RECORDING DIR [DAEMON_LOG]

DIR is the daemon's private directory: its paths read <dir> in the
recording, and its CNI directories (set under DIR so that the daemon leaves
/etc/cni alone) read the defaults there. For a recording of a daemon whose
CRI plugin failed (the recording client got UNIMPLEMENTED), gpuop must say
the daemon serves no CRI, and DAEMON_LOG is the recorded daemon log: the
plugin's error that gpuop read over Introspection must be the one the
daemon logged.
Prints each difference; exit 1 when there is one.
"""
import json
import re
import sys

PRIVATE = ("containerdEndpoint", "containerdRootDir", "rootDir", "stateDir")


def normalize_config(cfg, tmp, recorded):
    cfg = json.loads(json.dumps(cfg))
    for key in PRIVATE:
        if isinstance(cfg.get(key), str) and cfg[key].startswith(tmp):
            cfg[key] = "<dir>"
    cni = cfg.get("cni", {})
    for key in ("binDir", "confDir"):
        if isinstance(cni.get(key), str) and cni[key].startswith(tmp):
            cni[key] = recorded.get("cni", {}).get(key)
    return cfg


def condition(c):
    """The recording prints every field; proto3 leaves "" and false unsent."""
    return {"type": c.get("type", ""), "status": bool(c.get("status", False)),
            "reason": c.get("reason", ""), "message": c.get("message", "")}


def diff(path, ours, theirs, out):
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for k in sorted(set(ours) | set(theirs)):
            if k not in ours:
                out.append(f"{path}.{k}: recorded {json.dumps(theirs[k])}, ours absent")
            elif k not in theirs:
                out.append(f"{path}.{k}: ours {json.dumps(ours[k])}, not recorded")
            else:
                diff(f"{path}.{k}", ours[k], theirs[k], out)
    elif ours != theirs:
        out.append(f"{path}: recorded {json.dumps(theirs)}, ours {json.dumps(ours)}")


def served(d, rec, tmp, out):
    if d.get("state") != "served":
        out.append(f"daemon state {d.get('state')}: {d.get('error')}")
        return
    v = rec["version"]
    for key in ("runtime_name", "runtime_version", "runtime_api_version"):
        if d.get(key) != v[key]:
            out.append(f"{key}: recorded {v[key]!r}, ours {d.get(key)!r}")
    if d.get("cri_api") != "v1":
        out.append(f"cri_api: ours {d.get('cri_api')!r}, the recording asked runtime.v1")
    if [condition(c) for c in d["conditions"]] != rec["conditions"]:
        out.append(f"conditions: recorded {rec['conditions']}, ours {d['conditions']}")
    handlers = d["runtime_handlers"] or []
    if handlers != [h["name"] for h in rec["runtime_handlers"] if h["name"]]:
        out.append(f"runtime_handlers: recorded {rec['runtime_handlers']}, ours {handlers}")
    if d.get("info_keys") != rec["info_keys"]:
        out.append(f"info keys: recorded {rec['info_keys']}, ours {d.get('info_keys')}")
    if d["default_runtime"] != rec["config.containerd.defaultRuntimeName"]:
        out.append(f"default runtime: recorded {rec['config.containerd.defaultRuntimeName']}, "
                   f"ours {d['default_runtime']}")
    if sorted(d["runtimes"]) != sorted(rec["config.containerd.runtimes"]):
        out.append(f"runtimes: recorded {sorted(rec['config.containerd.runtimes'])}, "
                   f"ours {d['runtimes']}")
    diff("config", normalize_config(d["config"], tmp, rec["config_raw"]), rec["config_raw"], out)


def not_served(d, rec, log, out):
    if d.get("state") != "no-cri":
        out.append(f"daemon state {d.get('state')}, the recording got an error: {rec['error']}")
        return
    # The recording client got UNIMPLEMENTED "unknown service
    # runtime.v1.RuntimeService": no CRI is served. gpuop reads the same fact
    # from the daemon's plugin list, and the plugin's own error with it.
    if rec["error"]["code"] != "StatusCode.UNIMPLEMENTED":
        out.append(f"the recording is not of a daemon without CRI: {rec['error']}")
    if log:
        m = re.search(r'msg="failed to load plugin io\.containerd\.grpc\.v1\.cri" error="(.*)"$',
                      open(log).read(), re.M)
        logged = m.group(1).replace('\\"', '"') if m else None
        plugin = d.get("cri_plugin") or {}
        if plugin.get("plugin") != "io.containerd.grpc.v1.cri" or plugin.get("error") != logged:
            out.append(f"CRI plugin error: logged {logged!r}, ours {plugin}")


def main():
    ours = json.loads(sys.argv[1])
    rec = json.load(open(sys.argv[2]))
    tmp = sys.argv[3]
    log = sys.argv[4] if len(sys.argv) > 4 else None
    out = []
    if "error" in rec:
        not_served(ours["daemon"], rec, log, out)
    else:
        served(ours["daemon"], rec, tmp, out)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
