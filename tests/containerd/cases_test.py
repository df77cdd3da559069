#!/usr/bin/env python3
"""`gpuop containerd merge` against the measured containerd cases.

For every case in CASES_DIR/inputs and every version (1.6, 1.7, 2.0, 2.1)
the case directory is copied to a temporary directory with the literal
`<dir>` replaced by that directory (exactly what was measured), then
    gpuop containerd merge --config DIR/config.toml --containerd V -o json
is run from an empty directory (cases e/e2: __cwd_confdir runs it from DIR,
__cwd_elsewhere from an empty directory; cases ROOT_CASES once more as
<case>__root through --root, see below) and its prediction is compared with
the real `containerd config dump` output of that version,
CASES_DIR/<full version>/<case>.toml (`<dir>` substituted the same way), or
with the failure recorded in <case>.stderr.txt:

  error                 the real run failed (exit status != 0) iff
                        predicted.error is set; 1.7's `unsupported config
                        version` and 1.x's `no such file or directory`
                        must appear in our message
  runtimes              runtime handler set (predicted.runtimes and the
                        runtimes table of predicted.config)
  default_runtime_name  predicted.default_runtime_name and the config key
  runtime               per runtime: runtime_type, options.SystemdCgroup,
                        options.BinaryName (absent vs present must agree)
  key                   the keys the case is about (KEYS below)
  imports               1.x: files loaded, as a set; 2.x: strings as written
  files                 1.x: the paths of `files` = the dump's imports (a set)
  cri_valid             derived: default_runtime_name names a runtime
  other                 any other key of predicted.config that the dump has
  expect                the doc's summary table (EXPECT below) on our output,
                        where the dump comparison has not judged it already,
                        and the load order of `files` for f, g, g2
  data                  the doc's summary table on the real dump/stderr
                        (guards this harness against misreading the data)
  run                   gpuop gave no JSON

An absent key in predicted.config stands for the version's default, read
from the j_nomatch dump (a config that sets only oom_score).

Prints one line per (case, version, check) failure, INFO lines with the real
and predicted error texts, then `N passed, M failed` over (case, version)
pairs (e/e2 count once per working directory, __root pairs count too).
Exit 1 on any failure.

usage: cases_test.py GPUOP CASES_DIR [CASE...]
"""
import os
import shutil
import sys
import tempfile
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdcompare as C  # noqa: E402

VERSIONS = ["1.6", "1.7", "2.0", "2.1"]
V1 = ("1.6", "1.7")
V2 = ("2.0", "2.1")

# Keys each case is about, beyond the runtimes (containerd-merge.md).
# "CRI|a|b" is the CRI table of that version (1.x io.containerd.grpc.v1.cri,
# 2.x io.containerd.cri.v1.runtime). Every case also gets ALL_KEYS.
ALL_KEYS = ["imports", "root", "state", "oom_score"]
KEYS = {
    "b_sametable": ["CRI|cni|bin_dir", "CRI|cni|conf_dir"],
    "b3_sametable_v3": ["CRI|cni|bin_dir", "CRI|cni|conf_dir"],
    "c_scalar": ["CRI|max_container_log_line_size", "CRI|enable_selinux"],
    "c2_zero_values": ["debug|level", "CRI|max_container_log_line_size"],
    "d_arrays": ["disabled_plugins", "CRI|containerd|runtimes|runc|pod_annotations"],
    "f_recursive": ["CRI|max_container_log_line_size"],
    "g_order": ["CRI|max_container_log_line_size"],
    "g2_listorder_dup": ["CRI|max_container_log_line_size"],
    "n2_proxy_full_timeouts": [
        "proxy_plugins|examplefs|type",
        "proxy_plugins|examplefs|address",
        "timeouts|io.containerd.timeout.shim.cleanup",
        "timeouts|io.containerd.timeout.shim.load",
    ],
}
KEYS_21 = {  # 2.1 migrates cni.bin_dir into bin_dirs
    "b_sametable": ["CRI|cni|bin_dirs"],
    "b3_sametable_v3": ["CRI|cni|bin_dirs"],
}

# The doc's summary table, case by case. Keys: case (with __cwd_* suffix for
# e/e2), then version or a tuple of versions. Fields:
#   error: substring our message must contain ("" = any error)
#   runtimes: handler set; drn: default_runtime_name
#   keys: {path spec: value}; C.MISSING = absent from the dump
ABSENT = C.MISSING
SD = "CRI|containerd|runtimes|runc|options|SystemdCgroup"
RUNC_TYPE = "CRI|containerd|runtimes|runc|runtime_type"
RUNC_BIN = "CRI|containerd|runtimes|runc|options|BinaryName"
CNI_BIN, CNI_CONF = "CRI|cni|bin_dir", "CRI|cni|conf_dir"
MCLS = "CRI|max_container_log_line_size"
UNSUPPORTED = {"error": "unsupported config version"}
LAB_V1 = {"runtimes": {"nvidia"}, "drn": "runc"}
LAB_V2 = {"runtimes": {"nvidia", "runc"}, "drn": "runc", "keys": {SD: True}}
EXPECT = {
    "lab": {V1: LAB_V1, V2: LAB_V2},
    "h1_v2main_v2dropin": {V1: LAB_V1, V2: LAB_V2},
    "a_v3": {
        "1.6": {"runtimes": {"runc"}, "keys": {SD: False}},
        "1.7": UNSUPPORTED,
        V2: {"runtimes": {"nvidia", "runc"}, "keys": {SD: True}},
    },
    "a2_v3main_v2dropin": {
        "1.6": {"runtimes": {"nvidia"}},
        "1.7": UNSUPPORTED,
        V2: {"runtimes": {"runc"}, "keys": {SD: True}},
    },
    "b_sametable": {
        V1: {"keys": {CNI_BIN: "/opt/cni/bin", CNI_CONF: "/etc/example/cni-net.d"}},
        "2.0": {"keys": {CNI_BIN: "/opt/example/cni-bin", CNI_CONF: "/etc/example/cni-net.d"}},
        "2.1": {"keys": {"CRI|cni|bin_dirs": ["/opt/example/cni-bin"], CNI_CONF: "/etc/example/cni-net.d"}},
    },
    "b3_sametable_v3": {
        "1.6": {"keys": {CNI_BIN: "/opt/cni/bin", CNI_CONF: "/etc/cni/net.d"}},
        "1.7": UNSUPPORTED,
        V2: {"keys": {CNI_BIN: "/opt/example/cni-bin", CNI_CONF: "/etc/example/cni-net.d"}},
    },
    "c_scalar": {
        tuple(VERSIONS): {
            "keys": {
                "root": "/var/lib/containerd-dropin",
                "oom_score": -999,
                MCLS: 200,
                "CRI|enable_selinux": False,
            }
        }
    },
    "c2_zero_values": {tuple(VERSIONS): {"keys": {"debug|level": "info", MCLS: 0}}},
    "d_arrays": {
        V1: {
            "keys": {
                "disabled_plugins": [
                    "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.aufs",
                ],
                "CRI|containerd|runtimes|runc|pod_annotations": ["dropin.example.com/b"],
            }
        },
        V2: {
            "keys": {
                "disabled_plugins": [
                    "io.containerd.snapshotter.v1.zfs",
                    "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.aufs",
                ],
                "CRI|containerd|runtimes|runc|pod_annotations": ["dropin.example.com/b"],
            }
        },
    },
    "e_relative_glob__cwd_elsewhere": {
        "1.6": {"keys": {"oom_score": 0}},
        ("1.7", "2.0", "2.1"): {"keys": {"oom_score": 42}},
    },
    "e_relative_glob__cwd_confdir": {tuple(VERSIONS): {"keys": {"oom_score": 42}}},
    "e2_relative_plain__cwd_elsewhere": {tuple(VERSIONS): {"keys": {"oom_score": 42}}},
    "e2_relative_plain__cwd_confdir": {tuple(VERSIONS): {"keys": {"oom_score": 42}}},
    # files: the walk order the doc derives (breadth-first, bytewise glob
    # order, list order, each file once at its first position).
    "f_recursive": {
        tuple(VERSIONS): {
            "keys": {"oom_score": 50, MCLS: 5050},
            "files": ["config.toml", "conf.d/10-a.toml", "conf.d/20-b.toml", "nested/50-n.toml"],
        }
    },
    "g_order": {
        tuple(VERSIONS): {
            "keys": {"oom_score": 9, MCLS: 9},
            "files": ["config.toml", "conf.d/10-a.toml", "conf.d/20-b.toml", "conf.d/9-c.toml"],
        }
    },
    "g2_listorder_dup": {
        tuple(VERSIONS): {
            "keys": {"oom_score": 10, MCLS: 10},
            "files": ["config.toml", "conf.d/20-b.toml", "conf.d/10-a.toml"],
        }
    },
    "h2_v3main_v2dropin": {
        V1: {"runtimes": {"nvidia"}},
        V2: {"runtimes": {"runc"}, "keys": {SD: True}},
    },
    "h3_v2main_v3dropin": {
        "1.6": {"runtimes": {"runc"}, "keys": {SD: True}},
        "1.7": UNSUPPORTED,
        V2: {"runtimes": {"nvidia", "runc"}, "keys": {SD: False}},
    },
    "i_syntax": {tuple(VERSIONS): {"error": ""}},
    "j_nomatch": {tuple(VERSIONS): {"keys": {"oom_score": 3}}},
    "k_noversion_v2names": {
        V1: {"runtimes": {"runc"}, "keys": {SD: False}},
        V2: {"runtimes": {"runc"}, "keys": {SD: False}},
    },
    "k2_noversion_v1names": {
        V1: {"runtimes": {"nvidia"}},
        V2: {"runtimes": {"runc"}, "keys": {SD: False}},
    },
    "k3_noversion_main_v2dropin": {
        V1: {"runtimes": {"nvidia"}},
        V2: {"runtimes": {"nvidia", "runc"}, "keys": {SD: True}},
    },
    "m_deep_same_runtime": {
        V1: {
            "runtimes": {"runc"},
            "keys": {RUNC_TYPE: "", SD: ABSENT, RUNC_BIN: "/usr/local/bin/custom-runc"},
        },
        V2: {
            "runtimes": {"runc"},
            "keys": {RUNC_TYPE: "io.containerd.runc.v2", SD: True, RUNC_BIN: "/usr/local/bin/custom-runc"},
        },
    },
    "n_proxy_partial": {tuple(VERSIONS): {"error": ""}},
    "n2_proxy_full_timeouts": {
        tuple(VERSIONS): {
            "keys": {
                "proxy_plugins|examplefs|type": "snapshot",
                "proxy_plugins|examplefs|address": "/run/examplefs/dropin.sock",
                "timeouts|io.containerd.timeout.shim.cleanup": "7s",
                "timeouts|io.containerd.timeout.shim.load": "9s",
            }
        }
    },
    "p_unknown_keys": {tuple(VERSIONS): {"keys": {"oom_score": 5}}},
    "o_missing_plain": {
        V1: {"error": "no such file or directory"},
        # 2.x: `config dump` exits 0 and stops loading at the missing file,
        # but the daemon exits 1 on it (2.1.5/daemon-o_missing_plain.txt):
        # a prediction may follow either; `daemon_error` accepts the latter.
        V2: {"keys": {"oom_score": 3}, "daemon_error": "no such file or directory"},
    },
}

# Cases also run through --root: the inputs are placed at ROOT/etc/containerd
# (`<dir>` = /etc/containerd, as on a node) and gpuop is given
# --root ROOT --config /etc/containerd/config.toml (the node's path: with
# --root every absolute path, the main file's included, is read under ROOT);
# the dump is the same case's with `<dir>` = /etc/containerd.
ROOT_CASES = ["lab", "f_recursive", "g2_listorder_dup"]
ROOT_DIR = "/etc/containerd"

# Keys of the table whose value in the prediction is read as "absent means
# the default" would be ambiguous (runtime options in 1.x): judged on the
# real dump only (check "data"), the prediction is judged by the "runtime"
# check against the dump.
OPTION_KEYS = {SD, RUNC_BIN, RUNC_TYPE}


def expectation(case, version):
    table = EXPECT.get(case, {})
    for vs, exp in table.items():
        if vs == version or (isinstance(vs, tuple) and version in vs):
            return exp
    return None


def load_stderr(path):
    """(exit status or None, text) of a .stderr.txt file."""
    try:
        text = open(path, encoding="utf-8").read()
    except FileNotFoundError:
        return None, None
    status = None
    for line in text.splitlines():
        if line.startswith("# exit status:"):
            try:
                status = int(line.split(":", 1)[1])
            except ValueError:
                pass
    return status, text


def copy_case(src, dst, subst):
    """Copies inputs/<case> to dst, replacing `<dir>` by subst in every file."""
    for root, dirs, files in os.walk(src):
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for f in files:
            data = open(os.path.join(root, f), "rb").read()
            data = data.replace(b"<dir>", subst.encode())
            with open(os.path.join(dst, rel, f), "wb") as out:
                out.write(data)


def load_dump(path, d):
    text = open(path, encoding="utf-8").read().replace("<dir>", d)
    return tomllib.loads(text)


def variants_of(cases_dir, case):
    found = set()
    for v in C.DUMP_DIR.values():
        vd = os.path.join(cases_dir, v)
        if not os.path.isdir(vd):
            continue
        for f in os.listdir(vd):
            if f.startswith(case + "__"):
                found.add(f[len(case) :].split(".", 1)[0])
    return sorted(found) or [""]


def load_defaults(cases_dir, version, d):
    """Version defaults: the j_nomatch dump minus what its config sets."""
    path = os.path.join(cases_dir, C.DUMP_DIR[version], "j_nomatch.toml")
    if not os.path.exists(path):
        return None
    dflt = load_dump(path, d)
    dflt["oom_score"] = 0
    dflt.pop("imports", None)
    return dflt


def judge_expect(ck, exp, real, real_failed, pred, version, defaults, d):
    """The summary table against the real data (check 'data') and against
    the prediction (check 'expect')."""
    if exp is None:
        return
    want_error = "error" in exp
    if want_error != real_failed:
        ck.fail("data", f"doc table says error={want_error}, real data says {real_failed}")
    p = pred.get("predicted") or {}
    pcfg = p.get("config") if isinstance(p.get("config"), dict) else {}
    if want_error:
        return  # the error check judges the prediction
    base = C.cri_runtime_path(version) + ("containerd",)
    if "runtimes" in exp:
        rts = C.get(real, base + ("runtimes",)) if real is not None else C.MISSING
        if real is not None and set(rts if isinstance(rts, dict) else {}) != exp["runtimes"]:
            have = sorted(rts) if isinstance(rts, dict) else rts
            ck.fail("data", f"doc table runtimes {sorted(exp['runtimes'])}, real dump {have}")
        pr = p.get("runtimes")
        if real is None and (not isinstance(pr, list) or set(pr) != exp["runtimes"]):
            ck.fail("expect", f"runtimes {sorted(exp['runtimes'])}, predicted {C.show(pr)}")
    if "drn" in exp:
        if real is not None and C.get(real, base + ("default_runtime_name",)) != exp["drn"]:
            ck.fail("data", f"doc table default_runtime_name {exp['drn']!r} not in real dump")
        if real is None and p.get("default_runtime_name") != exp["drn"]:
            have = C.show(p.get("default_runtime_name", C.MISSING))
            ck.fail("expect", f"default_runtime_name {exp['drn']!r}, predicted {have}")
    if "files" in exp:
        want = [f"{d}/{f}" for f in exp["files"]]
        if real is not None and C.is_v1(version) and sorted(C.get(real, ("imports",))) != sorted(want):
            ck.fail("data", f"doc table files {want}, real dump imports {C.get(real, ('imports',))}")
        files = pred.get("files")
        have = [f.get("path") for f in files if isinstance(f, dict)] if isinstance(files, list) else files
        if have != want:
            ck.fail("expect", f"files in load order {C.show(want)}, predicted {C.show(have)}")
    for spec, want in exp.get("keys", {}).items():
        path = C.expand_path(spec, version)
        if real is not None and not C.same(C.get(real, path), want):
            have = C.show(C.get(real, path))
            ck.fail("data", f"doc table {C.dotted(path)} = {C.show(want)}, real dump {have}")
        if spec in OPTION_KEYS or path in ck.checked:
            continue  # already judged against the dump (which 'data' ties to the table)
        pv, origin = C.predicted_value(pcfg, defaults, path)
        if not C.same(pv, want):
            extra = " (absent, so the default)" if origin == "default" else ""
            ck.fail("expect", f"{C.dotted(path)} = {C.show(want)}, predicted {C.show(pv)}{extra}")


def run_pair(gpuop, cases_dir, case, variant, version, work, info):
    """Returns the list of (check, message) failures of one pair."""
    ck = C.Checker()
    root_mode = variant == "__root"
    name = case if root_mode else case + variant
    label = case + variant
    vdir = os.path.join(cases_dir, C.DUMP_DIR[version])
    dump_path = os.path.join(vdir, name + ".toml")
    status, stderr_text = load_stderr(os.path.join(vdir, name + ".stderr.txt"))
    has_dump = os.path.exists(dump_path)
    if not has_dump and stderr_text is None:
        ck.fail("data", f"neither {name}.toml nor {name}.stderr.txt in {vdir}")
        return ck.failures
    real_failed = (status not in (None, 0)) or not has_dump

    # A fresh copy per run: `<dir>` is this pair's directory (or, through
    # --root, /etc/containerd under this pair's root).
    empty = os.path.join(work, f"{label}.{version}.cwd")
    os.makedirs(empty)
    if root_mode:
        root = os.path.join(work, f"{label}.{version}")
        d = ROOT_DIR
        copy_case(os.path.join(cases_dir, "inputs", case), root + ROOT_DIR, d)
        config = ROOT_DIR + "/config.toml"  # the node's path, read under ROOT
    else:
        root = None
        d = os.path.join(work, f"{label}.{version}")
        copy_case(os.path.join(cases_dir, "inputs", case), d, d)
        config = os.path.join(d, "config.toml")
    cwd = d if variant == "__cwd_confdir" else empty

    real = load_dump(dump_path, d) if has_dump else None
    defaults = load_defaults(cases_dir, version, d)
    pred, rc, err, out = C.run_gpuop(gpuop, config, version, cwd, root=root)
    if pred is None:
        lines = err.strip().splitlines() or out.strip().splitlines() or [""]
        ck.fail("run", f"no JSON from gpuop (exit {rc}): {lines[-1][:300]}")
        return ck.failures
    if pred.get("containerd_version") != version:
        have = C.show(pred.get("containerd_version", C.MISSING))
        ck.fail("run", f"containerd_version {have}, asked {version}")
    p = pred.get("predicted")
    if not isinstance(p, dict):
        ck.fail("run", f"predicted is {C.show(p if p is not None else C.MISSING)}, not an object")
        return ck.failures

    # (e) error or not.
    perr = p.get("error")
    real_msg = C.error_line(stderr_text or "").replace(d, "<dir>")
    exp = expectation(name, version)
    if real_failed:
        info.append(f"INFO {name} {version}: real error (exit {status}): {real_msg}")
        info.append(f"INFO {name} {version}: our error: {(perr or '<none>').replace(d, '<dir>')}")
        if not isinstance(perr, str) or not perr:
            ck.fail("error", f"real run fails (exit {status}: {real_msg}); predicted.error is {C.show(perr)}")
        else:
            for must in ("unsupported config version", "no such file or directory"):
                if must in (stderr_text or "") and must not in perr:
                    ck.fail("error", f"our message lacks '{must}': ours {perr!r}, real {real_msg!r}")
            if exp and exp.get("error") and exp["error"] not in perr:
                ck.fail("expect", f"error should contain {exp['error']!r}: {perr!r}")
        judge_expect(ck, exp, real, real_failed, pred, version, defaults, d)
        return ck.failures
    if perr is not None:
        if exp and exp.get("daemon_error") and isinstance(perr, str) and exp["daemon_error"] in perr:
            info.append(
                f"INFO {label} {version}: our error follows the daemon (which exits 1), not `config dump` "
                f"(exit 0, stops loading at the missing file): {perr.replace(d, '<dir>')}"
            )
            return ck.failures
        ck.fail("error", f"real dump succeeds (exit 0); predicted.error {perr!r}")
        judge_expect(ck, exp, real, real_failed, pred, version, defaults, d)
        return ck.failures

    keys = [C.expand_path(s, version) for s in ALL_KEYS + KEYS.get(case, [])]
    if version == "2.1":
        keys += [C.expand_path(s, version) for s in KEYS_21.get(case, [])]
    C.compare_dump(ck, real, pred, version, defaults, keys)
    judge_expect(ck, exp, real, real_failed, pred, version, defaults, d)
    return ck.failures


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    gpuop = os.path.abspath(argv[1])
    cases_dir = os.path.abspath(argv[2])
    only = set(argv[3:])
    inputs = os.path.join(cases_dir, "inputs")
    if not os.path.isdir(inputs):
        print(f"cases_test: {inputs} not found", file=sys.stderr)
        return 2
    if not os.access(gpuop, os.X_OK):
        print(f"cases_test: {gpuop} is not executable", file=sys.stderr)
        return 2
    cases = sorted(c for c in os.listdir(inputs) if os.path.isdir(os.path.join(inputs, c)))
    if only:
        cases = [c for c in cases if c in only]
    passed = failed = 0
    info = []
    # realpath: /tmp may be a symlink, and containerd compares path strings.
    work = os.path.realpath(tempfile.mkdtemp(prefix="gpuop-cdcases-"))
    try:
        for case in cases:
            variants = variants_of(cases_dir, case) + (["__root"] if case in ROOT_CASES else [])
            for variant in variants:
                for version in VERSIONS:
                    failures = run_pair(gpuop, cases_dir, case, variant, version, work, info)
                    if not failures:
                        passed += 1
                        continue
                    failed += 1
                    pair_dir = os.path.join(work, f"{case}{variant}.{version}")

                    def rewrite(text, pair_dir=pair_dir, variant=variant):
                        if variant == "__root":
                            text = text.replace(pair_dir + ROOT_DIR, "<dir>").replace(ROOT_DIR, "<dir>")
                        return text.replace(pair_dir, "<dir>")

                    C.print_failures(f"{case}{variant} {version}", failures, rewrite)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for line in info:
        print(line)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
