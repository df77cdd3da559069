#!/usr/bin/python3
# Makes containerd-LINE.json from the recordings (README.md says which):
#   src/agents/data/make-data.py [../shared/containerd-cases]
import json, re, collections
import os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "..")
S = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "..", "shared", "containerd-cases")
OUT = HERE
OD = collections.OrderedDict

def plugin_table(version):
    text = open(f"{S}/{version}/daemon-lab.txt").read()
    sec = text.split("## ctr plugins ls\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in sec.splitlines()[1:]:
        f = line.split()
        if len(f) == 4:
            rows.append(f)
    return rows

def details(version, id_):
    text = open(f"{S}/{version}/daemon-lab.txt").read()
    marker = f"## ctr plugins ls -d id=={id_}\n"
    if marker not in text: return None
    sec = text.split(marker, 1)[1].split("\n## ", 1)[0]
    req, exp, mode = [], OD(), None
    for line in sec.splitlines():
        if line.startswith("Requires:"): mode = "r"; continue
        if line.startswith("Exports:"): mode = "e"; continue
        if re.match(r"^[A-Z][a-z]+:", line): mode = None; continue
        if mode == "r" and line.strip(): req.append(line.strip())
        if mode == "e" and line.strip():
            k, v = line.split(); exp[k] = v
    return req, exp

# skip/error messages as Debian's 1.6.20 gave them on this machine (root /var/lib/containerd)
msgs = {
 ("io.containerd.snapshotter.v1","aufs"): 'aufs is not supported (modprobe aufs failed: exec: "modprobe": executable file not found in $PATH ""): skip plugin',
 ("io.containerd.snapshotter.v1","btrfs"): 'path /var/lib/containerd/io.containerd.snapshotter.v1.btrfs (ext4) must be a btrfs filesystem to be used with the btrfs snapshotter: skip plugin',
 ("io.containerd.snapshotter.v1","zfs"): 'path /var/lib/containerd/io.containerd.snapshotter.v1.zfs must be a zfs filesystem to be used with the zfs snapshotter: skip plugin',
 ("io.containerd.snapshotter.v1","devmapper"): 'devmapper not configured',
}

def plugins(version, cri_rows):
    out = []
    for t, i, plat, status in plugin_table(version):
        p = OD(type=t, id=i)
        if plat != "-": p["platforms"] = plat.split(",")
        d = details(version, i) if (t, i) in cri_rows else None
        if d:
            if d[0]: p["requires"] = d[0]
            if d[1]: p["exports"] = d[1]
        if (t, i) not in cri_rows and status != "ok":
            p["init_error"] = msgs.get((t, i), f"{i}: skip plugin" if status == "skip" else f"{i} failed")
            if status == "skip" and "skip plugin" not in p["init_error"]: raise SystemExit(i)
        out.append(p)
    return out

raw16 = json.loads(json.load(open(os.path.join(SRC, "tests", "data", "agents", "status-raw-1.6.20-none.json")))["info"]["config"], object_pairs_hook=OD)
info16 = json.load(open(os.path.join(SRC, "tests", "data", "agents", "status-raw-1.6.20-none.json")))["info"]

def recorded(version_file):
    return json.load(open(f"{S}/cri-status/{version_file}"), object_pairs_hook=OD)

def strip(cfg, line):
    cfg = json.loads(json.dumps(cfg), object_pairs_hook=OD)
    ctd = cfg["containerd"]
    rt = None
    for name, r in ctd["runtimes"].items():
        if name == "runc": rt = r
    ctd["runtimes"] = OD()
    return cfg, rt

conds = [OD(type="RuntimeReady", status=True, reason="", message=""),
         OD(type="NetworkReady", status=False, reason="NetworkPluginNotReady", message="Network plugin returns error: cni plugin not initialized")]
cond17 = conds + [OD(type="ContainerdHasNoDeprecationWarnings", status=True, reason="", message="")]
info_common = OD((k, info16[k]) for k in ["cniconfig", "lastCNILoadStatus", "lastCNILoadStatus.default"])

def zero_runtime(rt):
    z = OD()
    for k, v in rt.items():
        if isinstance(v, bool): z[k] = False
        elif isinstance(v, int): z[k] = 0
        elif isinstance(v, str): z[k] = ""
        else: z[k] = None
    return z

def paths(cfg, plugin_id):
    cfg["containerdRootDir"] = "/var/lib/containerd"
    cfg["containerdEndpoint"] = "/run/containerd/containerd.sock"
    cfg["rootDir"] = "/var/lib/containerd/" + plugin_id
    cfg["stateDir"] = "/run/containerd/" + plugin_id

lines = {}
# 1.6: the real daemon's key order (captured from Debian's 1.6.20 here)
cfg, rt = strip(raw16, "1.6"); paths(cfg, "io.containerd.grpc.v1.cri")
lines["1.6"] = OD(conditions=conds, info=OD([("golang", info16["golang"])] + list(info_common.items())),
                   config=cfg, runtime=zero_runtime(rt),
                   plugins=plugins("1.6.20", {("io.containerd.grpc.v1","cri")}),
                   cri_plugins=["io.containerd.grpc.v1.cri"])
r17 = recorded("status-1.7.29-none.json")["config_raw"]
cfg, rt = strip(r17, "1.7"); paths(cfg, "io.containerd.grpc.v1.cri")
lines["1.7"] = OD(conditions=cond17, info=OD([("golang", '"go (not recorded)"')] + list(info_common.items())),
                   config=cfg, runtime=zero_runtime(rt),
                   plugins=plugins("1.7.29", {("io.containerd.grpc.v1","cri")}),
                   cri_plugins=["io.containerd.grpc.v1.cri"])
r21 = recorded("status-2.1.5-bare.json")["config_raw"]
cfg, rt = strip(r21, "2.1"); paths(cfg, "io.containerd.cri.v1.runtime")
runc_opts = r21["containerd"]["runtimes"]["runc"]["options"]
rt21 = zero_runtime(rt); rt21["options"] = None
cri2 = ["io.containerd.cri.v1.runtime", "io.containerd.podsandbox.controller.v1.podsandbox", "io.containerd.grpc.v1.cri"]
rows2 = {("io.containerd.cri.v1","runtime"), ("io.containerd.grpc.v1","cri"), ("io.containerd.podsandbox.controller.v1","podsandbox")}
lines["2.1"] = OD(conditions=cond17, info=OD([("golang", '"go (not recorded)"')] + list(info_common.items())),
                   config=cfg, runtime=rt21, runc_options=OD((k, (v if k != "SystemdCgroup" else False)) for k, v in runc_opts.items()),
                   plugins=plugins("2.1.5", rows2), cri_plugins=cri2)
# 2.0: 2.1's CRI config less what 2.1 added (the 2.0.11 dump has neither cgroup_writable nor bin_dirs)
cfg20 = json.loads(json.dumps(lines["2.1"]["config"]), object_pairs_hook=OD)
del cfg20["cni"]["binDirs"]; cfg20["cni"]["binDir"] = "/opt/cni/bin"
rt20 = OD((k, v) for k, v in rt21.items() if k != "cgroupWritable")
lines["2.0"] = OD(conditions=cond17, info=lines["2.1"]["info"], config=cfg20, runtime=rt20,
                   runc_options=lines["2.1"]["runc_options"], plugins=plugins("2.0.11", rows2), cri_plugins=cri2)
for line, d in lines.items():
    with open(f"{OUT}/containerd-{line}.json", "w") as f:
        json.dump(d, f, indent=1); f.write("\n")
print({k: len(v["plugins"]) for k, v in lines.items()})
