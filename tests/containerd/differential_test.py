#!/usr/bin/env python3
"""Differential test: `gpuop containerd merge` against the real containerd.

Generates GPUOP_DIFF_CASES (default 200) random config sets with the seed
GPUOP_DIFF_SEED (default 1): a main config.toml (`version = 2`,
`imports = ["<dir>/conf.d/*.toml"]`) plus 0-4 drop-ins, over CRI runtimes
(runc, nvidia, kata, crun: runtime_type, options.SystemdCgroup,
options.BinaryName), default_runtime_name, CNI bin_dir/conf_dir, top-level
root/state/oom_score (zero values included), disabled_plugins and, in some
drop-ins, `version = 2`; tables are written with headers, dotted keys or
inline tables at random. For each set it runs, from an empty directory,
    containerd --config DIR/config.toml config dump       (timeout 20 s)
    gpuop containerd merge --config DIR/config.toml --containerd V -o json
(V = the installed containerd's major.minor, Debian 12: 1.6) and compares
them on the keys of cases_test.py: error or not, runtime handler set,
default_runtime_name, each runtime's runtime_type / options.SystemdCgroup /
options.BinaryName, cni bin_dir/conf_dir, root, state, oom_score,
disabled_plugins, imports and the paths of `files` (as sets), CRI validity,
and every other key of
the prediction that the dump has.

containerd is installed with apt-get when missing and we are root; otherwise
the test prints a SKIP line and exits 0.

Prints one line per (case, check) failure followed by the case's files, then
`N passed, M failed` over cases. Exit 1 on any failure.

GPUOP_DIFF_JOBS sets how many cases run at once (default: CPUs, at most 8).
GPUOP_DIFF_WIDE=1 widens the space beyond the above, to explore: versions 1
and 3 and no version, v1 short plugin names, nested, plain, cyclic, missing
and relative imports, import paths spelled with // ./ ../ or empty, [debug]
[grpc] [timeouts] [proxy_plugins], more CRI keys, values of the wrong type,
plugin names of fewer than 4 dot-separated parts.

usage: differential_test.py GPUOP
"""
import concurrent.futures
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdcompare as C  # noqa: E402

CRI = "io.containerd.grpc.v1.cri"
RUNTIMES = ["runc", "nvidia", "kata", "crun"]
RUNTIME_TYPES = ["io.containerd.runc.v2", "io.containerd.kata.v2", "io.containerd.runc.v1", ""]
BINARIES = {
    "runc": ["/usr/bin/runc", "/usr/local/bin/custom-runc", ""],
    "nvidia": ["/usr/bin/nvidia-container-runtime", "/usr/local/nvidia/toolkit/nvidia-container-runtime"],
    "kata": ["/opt/kata/bin/kata-runtime", ""],
    "crun": ["/usr/bin/crun"],
}
SNAPSHOTTERS = ["zfs", "btrfs", "aufs", "devmapper", "native"]


# ---------------------------------------------------------------- containerd


def find_containerd():
    """Path of containerd, installing the Debian package when root.
    Returns (path, None) or (None, reason to skip) or raises SystemExit(1)."""
    path = shutil.which("containerd")
    if path:
        return path, None
    if os.geteuid() != 0:
        return None, "containerd is not installed and we are not root (apt-get install containerd)"
    if not shutil.which("apt-get"):
        return None, "containerd is not installed and apt-get is not available"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", "containerd"]
    print("differential: installing containerd (apt-get install -y containerd)", file=sys.stderr)
    if subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, stdout=subprocess.DEVNULL)
        if subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            print("differential: FAIL: could not install containerd with apt-get", file=sys.stderr)
            raise SystemExit(1)
    path = shutil.which("containerd")
    if not path:
        print("differential: FAIL: containerd still not on PATH after apt-get install", file=sys.stderr)
        raise SystemExit(1)
    return path, None


def containerd_version(containerd):
    p = subprocess.run([containerd, "--version"], capture_output=True, text=True, timeout=20)
    m = re.search(r"\sv?(\d+)\.(\d+)\.(\d+)", " " + p.stdout)
    if not m:
        return None, p.stdout.strip()
    return f"{m.group(1)}.{m.group(2)}", p.stdout.strip()


# ---------------------------------------------------------------- generating


def toml_key(k):
    if re.fullmatch(r"[A-Za-z0-9_-]+", k):
        return k
    return '"' + k + '"'


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def leaves(tree, prefix=()):
    for k, v in tree.items():
        if isinstance(v, dict):
            yield from leaves(v, prefix + (k,))
        else:
            yield prefix + (k,), v


def emit(tree, rng):
    """TOML text for a nested dict; headers, dotted keys or inline tables
    chosen at random (always valid TOML)."""
    out = []

    def section(path, table, indent):
        scalars = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
        subs = [(k, v) for k, v in table.items() if isinstance(v, dict)]
        body = []
        for k, v in scalars:
            body.append(f"{indent}{toml_key(k)} = {toml_value(v)}")
        later = []
        for k, v in subs:
            only_scalars = all(not isinstance(x, dict) for x in v.values())
            r = rng.random()
            if path and only_scalars and v and r < 0.2:
                inner = ", ".join(f"{toml_key(a)} = {toml_value(b)}" for a, b in v.items())
                body.append(f"{indent}{toml_key(k)} = {{ {inner} }}")
            elif path and v and r < 0.35:
                for lp, lv in leaves(v):
                    body.append(f"{indent}{'.'.join(toml_key(x) for x in (k,) + lp)} = {toml_value(lv)}")
            else:
                later.append((k, v))
        if path and (body or not later):
            out.append(f"[{'.'.join(toml_key(x) for x in path)}]")
        out.extend(body)
        for k, v in later:
            section(path + (k,), v, "  ")

    section((), tree, "")
    return "\n".join(out) + "\n"


def gen_runtime(rng, name):
    r = {}
    if rng.random() < 0.8:
        r["runtime_type"] = rng.choice(RUNTIME_TYPES[:3] if rng.random() < 0.9 else RUNTIME_TYPES)
    if rng.random() < 0.7:
        opts = {}
        if rng.random() < 0.6:
            opts["SystemdCgroup"] = rng.random() < 0.6
        if rng.random() < 0.5:
            opts["BinaryName"] = rng.choice(BINARIES[name])
        r["options"] = opts
    return r


def gen_file(rng, main):
    t = {}
    if main:
        t["version"] = 2
    elif rng.random() < 0.3:
        t["version"] = 2
    if rng.random() < 0.3:
        t["root"] = rng.choice(["/var/lib/containerd-a", "/var/lib/containerd-b", "/data/containerd", ""])
    if rng.random() < 0.25:
        t["state"] = rng.choice(["/run/containerd-a", "/run/containerd-b", ""])
    if rng.random() < 0.35:
        t["oom_score"] = rng.choice([0, 0, -999, -500, 5, 42])
    if rng.random() < 0.25:
        t["disabled_plugins"] = [
            "io.containerd.snapshotter.v1." + rng.choice(SNAPSHOTTERS) for _ in range(rng.randint(0, 3))
        ]
    if rng.random() < 0.7:
        cri = {}
        ctd = {}
        if rng.random() < 0.4:
            ctd["default_runtime_name"] = rng.choice(RUNTIMES)
        if rng.random() < 0.75:
            names = rng.sample(RUNTIMES, rng.randint(1, 3))
            ctd["runtimes"] = {n: gen_runtime(rng, n) for n in names}
        if ctd:
            cri["containerd"] = ctd
        if rng.random() < 0.3:
            cni = {}
            if rng.random() < 0.6:
                cni["bin_dir"] = rng.choice(["/opt/cni/bin", "/opt/example/cni-bin", "/usr/lib/cni"])
            if rng.random() < 0.6:
                cni["conf_dir"] = rng.choice(["/etc/cni/net.d", "/etc/example/cni-net.d"])
            cri["cni"] = cni
        if cri:
            t["plugins"] = {CRI: cri}
    return t


def widen(rng, t, main, d, dropins):
    """GPUOP_DIFF_WIDE=1: beyond the brief's space. Versions 1 and 3 and no
    version, v1 short plugin names, nested / plain / cyclic / missing
    imports, paths spelled with // ./ ../ or empty, [debug] [grpc]
    [timeouts] [proxy_plugins], more CRI keys,
    values of the wrong type, plugin names of fewer than 4 parts."""
    r = rng.random()
    if main and r < 0.08:
        t.pop("version", None)
    elif r < 0.14:
        t["version"] = 1
    elif not main and r < 0.18:
        t["version"] = 3
    if rng.random() < 0.2:
        t["debug"] = {"level": rng.choice(["info", "debug", ""])}
    if rng.random() < 0.15:
        t["grpc"] = {"address": rng.choice(["/run/containerd/alt.sock", ""])}
    if rng.random() < 0.15:
        t["timeouts"] = {
            k: rng.choice(["1s", "7s", "9s"])
            for k in rng.sample(
                ["io.containerd.timeout.shim.cleanup", "io.containerd.timeout.shim.load"], rng.randint(1, 2)
            )
        }
    if rng.random() < 0.1:
        e = {"address": rng.choice(["/run/examplefs/a.sock", "/run/examplefs/b.sock"])}
        if rng.random() < 0.8:
            e["type"] = "snapshot"
        t["proxy_plugins"] = {"examplefs": e}
    plugins = t.get("plugins")
    if plugins is not None and rng.random() < 0.5:
        cri = plugins[CRI]
        if rng.random() < 0.5:
            cri["max_container_log_line_size"] = rng.choice([0, 100, 16384, -1])
        if rng.random() < 0.3:
            cri["enable_selinux"] = rng.random() < 0.5
        if rng.random() < 0.3:
            cri["sandbox_image"] = rng.choice(["registry.k8s.io/pause:3.9", "example.com/pause:1"])
        for rt in cri.get("containerd", {}).get("runtimes", {}).values():
            if rng.random() < 0.2:
                rt["pod_annotations"] = rng.sample(
                    ["a.example.com/*", "b.example.com/x", "nvidia.com/*"], rng.randint(0, 2)
                )
            if rng.random() < 0.1:
                rt["privileged_without_host_devices"] = rng.random() < 0.5
    if plugins is not None and rng.random() < 0.1:
        plugins["cri"] = plugins.pop(CRI)  # v1 short name
    if rng.random() < 0.04:
        # A value of the wrong type: 1.6 refuses the whole config.
        k, v = rng.choice(
            [
                ("oom_score", "5"),
                ("oom_score", 5.5),
                ("oom_score", True),
                ("state", 1),
                ("disabled_plugins", "io.containerd.snapshotter.v1.zfs"),
            ]
        )
        t[k] = v
    if rng.random() < 0.04 and isinstance(t.get("disabled_plugins", []), list):
        short = rng.choice(["zfs", "io.containerd.zfs", "a.b.c.d"])
        t["disabled_plugins"] = t.get("disabled_plugins", []) + [short]
    imports = []
    if not main and rng.random() < 0.25:
        imports.append(rng.choice([f"{d}/nested/*.toml", f"{d}/config.toml", f"{d}/nested/plain.toml"]))
    if not main and rng.random() < 0.05:
        imports.append(f"{d}/conf.d/missing.toml")
    if not main and dropins and rng.random() < 0.1:
        # An earlier drop-in again, sometimes spelled differently.
        spelling = rng.choice(["/conf.d/", "/conf.d/", "//conf.d/", "/conf.d/../conf.d/", "/./conf.d/"])
        imports.append(d + spelling + rng.choice(dropins))
    if imports:
        t["imports"] = imports


def gen_case(rng, d, wide=False):
    """Writes one config set under d; returns {relative path: text}."""
    files = {}
    main = gen_file(rng, True)
    main_imports = [f"{d}/conf.d/*.toml"]
    if wide:
        widen(rng, main, True, d, [])
        if rng.random() < 0.08:
            other = ["conf.d/*.toml", "conf.d/10-misc.toml", f"{d}/conf.d/1*.toml", f"{d}//conf.d/*.toml",
                     f"{d}/conf.d/../conf.d/*.toml", "./conf.d/*.toml", ""]
            main_imports = [rng.choice(other)] + (
                main_imports if rng.random() < 0.5 else []
            )
    # `imports` right after `version` (first when there is no version).
    head = {k: main.pop(k) for k in ("version",) if k in main}
    head["imports"] = main_imports + main.pop("imports", [])
    main = {**head, **main}
    files["config.toml"] = emit(main, rng)
    os.makedirs(os.path.join(d, "conf.d"))
    used = []
    for _ in range(rng.randint(0, 4)):
        while True:
            num = rng.choice([rng.randint(0, 99), rng.randint(1, 9)])
            stem = f"{num:02d}" if rng.random() < 0.7 else str(num)
            fname = f"{stem}-{rng.choice(['nvidia', 'kata', 'cni', 'misc', 'override'])}.toml"
            if fname not in used:
                used.append(fname)
                break
        t = gen_file(rng, False)
        if wide:
            widen(rng, t, False, d, used[:-1])
        files["conf.d/" + fname] = emit(t, rng)
    if rng.random() < 0.1:
        files["conf.d/README.txt"] = "oom_score = 12345\n"  # not matched by *.toml
    if wide and any("/nested/" in text for text in files.values()):
        os.makedirs(os.path.join(d, "nested"))
        for name in ("50-n.toml", "plain.toml"):
            t = gen_file(rng, False)
            widen(rng, t, False, d, [])
            files["nested/" + name] = emit(t, rng)
    for rel, text in files.items():
        with open(os.path.join(d, rel), "w") as f:
            f.write(text)
    return files


# ---------------------------------------------------------------- main

ALL_KEYS = [
    ("imports",),
    ("root",),
    ("state",),
    ("oom_score",),
    ("disabled_plugins",),
    ("plugins", CRI, "cni", "bin_dir"),
    ("plugins", CRI, "cni", "conf_dir"),
]
WIDE_KEYS = [
    ("debug", "level"),
    ("grpc", "address"),
    ("timeouts", "io.containerd.timeout.shim.cleanup"),
    ("timeouts", "io.containerd.timeout.shim.load"),
    ("proxy_plugins", "examplefs", "type"),
    ("proxy_plugins", "examplefs", "address"),
    ("plugins", CRI, "max_container_log_line_size"),
    ("plugins", CRI, "enable_selinux"),
    ("plugins", CRI, "sandbox_image"),
]


def main(argv):
    if len(argv) < 2:
        print("usage: differential_test.py GPUOP", file=sys.stderr)
        return 2
    gpuop = os.path.abspath(argv[1])
    if not os.access(gpuop, os.X_OK):
        print(f"differential: {gpuop} is not executable", file=sys.stderr)
        return 2
    wide = os.environ.get("GPUOP_DIFF_WIDE", "") not in ("", "0")
    try:
        n = int(os.environ.get("GPUOP_DIFF_CASES", "200"))
        seed = int(os.environ.get("GPUOP_DIFF_SEED", "1"))
    except ValueError:
        print("differential: GPUOP_DIFF_CASES and GPUOP_DIFF_SEED must be integers", file=sys.stderr)
        return 2
    containerd, why = find_containerd()
    if containerd is None:
        print(f"SKIP containerd/differential: {why}")
        return 0
    version, banner = containerd_version(containerd)
    if version not in C.DUMP_DIR:
        print(f"SKIP containerd/differential: unsupported containerd version ({banner})")
        return 0
    wide_note = " (wide)" if wide else ""
    print(f"differential: {banner}; gpuop --containerd {version}; seed {seed}, {n} cases{wide_note}")

    work = os.path.realpath(tempfile.mkdtemp(prefix="gpuop-cddiff-"))
    passed = failed = 0
    try:
        empty = os.path.join(work, "cwd")
        os.makedirs(empty)
        # Version defaults: the dump of a config that sets nothing.
        dd = os.path.join(work, "defaults")
        os.makedirs(dd)
        with open(os.path.join(dd, "config.toml"), "w") as f:
            f.write("version = 2\n")
        out, rc, err = C.run_real_dump(containerd, os.path.join(dd, "config.toml"), empty)
        if rc != 0:
            print(f"differential: FAIL: `config dump` of an empty config failed (exit {rc}): {C.error_line(err)}")
            return 1
        defaults = tomllib.loads(out)
        defaults.pop("imports", None)

        # The keys compared, with the CRI table of that version.
        cri_path = C.cri_runtime_path(version)
        keys = [cri_path + k[2:] if k[:2] == ("plugins", CRI) else k for k in ALL_KEYS]
        keys += [cri_path + k[2:] if k[:2] == ("plugins", CRI) else k for k in (WIDE_KEYS if wide else [])]

        # Generate every case first (one random stream, so a case depends
        # only on the seed and its number), then run them in parallel.
        rng = random.Random(seed)
        cases = []
        for i in range(n):
            d = os.path.join(work, f"case-{i:04d}")
            os.makedirs(d)
            cases.append((i, d, gen_case(rng, d, wide)))

        def judge(case):
            i, d, files = case
            cfg = os.path.join(d, "config.toml")
            ck = C.Checker()
            out, rc, err = C.run_real_dump(containerd, cfg, empty)
            pred, prc, perr_text, pout = C.run_gpuop(gpuop, cfg, version, empty)
            if pred is None or not isinstance(pred.get("predicted"), dict):
                lines = perr_text.strip().splitlines() or pout.strip().splitlines() or [""]
                ck.fail("run", f"no JSON prediction from gpuop (exit {prc}): {lines[-1][:300]}")
                return ck.failures
            p = pred["predicted"]
            perr = p.get("error")
            if rc != 0:
                if not isinstance(perr, str) or not perr:
                    why = f"real dump fails (exit {rc}: {C.error_line(err)})"
                    ck.fail("error", f"{why}; predicted.error {C.show(perr)}")
                return ck.failures
            if perr is not None:
                ck.fail("error", f"real dump succeeds; predicted.error {perr!r}")
                return ck.failures
            try:
                real = tomllib.loads(out)
            except tomllib.TOMLDecodeError as e:
                ck.fail("run", f"cannot parse the real dump: {e}")
                return ck.failures
            C.compare_dump(ck, real, pred, version, defaults, keys)
            return ck.failures

        jobs = os.environ.get("GPUOP_DIFF_JOBS", "")
        jobs = int(jobs) if jobs.isdigit() and int(jobs) > 0 else min(8, os.cpu_count() or 1)
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(judge, cases))
        for (i, d, files), failures in zip(cases, results):
            if not failures:
                passed += 1
                continue
            failed += 1
            C.print_failures(f"seed={seed} case={i}", failures, lambda m, d=d: m.replace(d, "<dir>"))
            for rel, text in files.items():
                print(f"  --- case {i}: <dir>/{rel}")
                for line in text.replace(d, "<dir>").splitlines():
                    print(f"  | {line}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
