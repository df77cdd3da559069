"""Shared helpers for the containerd tests: run `gpuop containerd merge` and
the real `containerd config dump`, and compare the prediction with a dump key
by key.

Python 3.11+ standard library only. Used by cases_test.py (the measured cases
in ../shared/containerd-cases) and differential_test.py (random configs
against Debian's real containerd 1.6).

Comparison rules (the contract of `gpuop containerd merge -o json`):
  * only keys the real dump has are compared;
  * a key present in the prediction must equal the dump's value (booleans are
    never equal to numbers; arrays compare element by element, in order);
  * a key absent from the prediction stands for that version's built-in
    default, taken from a dump of a config that sets nothing (the DEFAULTS
    dump); where the defaults have no such key, absent means absent;
  * a CRI setting (the CRI table and its `containerd` table) that the
    prediction has must be in the dump too: the dump lists every field, so
    a missing one is a key containerd dropped;
  * runtime `options` is a free map in 1.x (what the files wrote, no
    defaults) unless the runtime is the built-in default one, so there an
    absent option must be absent in the dump too.
"""
import json
import math
import os
import subprocess

MISSING = object()

# Version of the prediction -> directory of the measured dumps.
DUMP_DIR = {"1.6": "1.6.20", "1.7": "1.7.29", "2.0": "2.0.11", "2.1": "2.1.5"}


def is_v1(version):
    return version.startswith("1.")


def cri_runtime_path(version):
    """Table holding `containerd.runtimes`, `cni`, ... for that version."""
    if is_v1(version):
        return ("plugins", "io.containerd.grpc.v1.cri")
    return ("plugins", "io.containerd.cri.v1.runtime")


def get(tree, path):
    node = tree
    for k in path:
        if not isinstance(node, dict) or k not in node:
            return MISSING
        node = node[k]
    return node


def show(v):
    if v is MISSING:
        return "<absent>"
    return json.dumps(v, sort_keys=True, default=str)


def same(a, b):
    """Type-aware equality: True != 1, 1 == 1.0, lists in order."""
    if a is MISSING or b is MISSING:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and math.isnan(a):
            return isinstance(b, float) and math.isnan(b)
        return a == b
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    return a == b


def dotted(path):
    out = []
    for k in path:
        if all(c.isalnum() or c in "_-" for c in k) and k:
            out.append(k)
        else:
            out.append('"' + k + '"')
    return ".".join(out)


# ---------------------------------------------------------------- running


def run_gpuop(gpuop, config, version, cwd, root=None, timeout=20):
    """Returns (parsed JSON or None, exit status, stderr, stdout)."""
    cmd = [gpuop, "containerd", "merge", "--config", config, "--containerd", version, "-o", "json"]
    if root:
        cmd[3:3] = ["--root", root]
    env = dict(os.environ)
    env.setdefault("LC_ALL", "C.UTF-8")
    env.pop("LANGUAGE", None)
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "timeout", f"timed out after {timeout} s", ""
    except OSError as e:
        return None, "not run", f"cannot run {gpuop}: {e}", ""
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    try:
        data = json.loads(out)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        data = None
    return data, p.returncode, err, out


def run_real_dump(containerd, config, cwd, timeout=20):
    """`containerd --config CONFIG config dump` from CWD.
    Returns (stdout text, exit status, stderr)."""
    try:
        p = subprocess.run(
            [containerd, "--config", config, "config", "dump"],
            cwd=cwd,
            capture_output=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return "", "timeout", f"timed out after {timeout} s"
    except OSError as e:
        return "", "not run", f"cannot run {containerd}: {e}"
    return p.stdout.decode("utf-8", "replace"), p.returncode, p.stderr.decode("utf-8", "replace")


def error_line(stderr_text):
    """The line of a containerd stderr that carries the fatal error."""
    lines = [l for l in stderr_text.splitlines() if l.strip() and not l.startswith("#")]
    for l in lines:
        if l.startswith("containerd: ") or l.startswith("panic: "):
            return l
    for l in lines:
        if "level=error" in l or "level=fatal" in l:
            return l
    return lines[-1] if lines else ""


# ---------------------------------------------------------------- comparing


class Checker:
    """Collects (check, message) failures for one (case, version)."""

    def __init__(self):
        self.failures = []
        self.checked = set()  # paths already compared, skipped by the walk

    def fail(self, check, msg):
        self.failures.append((check, msg))


def predicted_value(pred_cfg, defaults, path):
    """Value the prediction stands for: its own, or the default if absent.
    Returns (value, origin) with origin 'predicted' / 'default' / 'absent'."""
    v = get(pred_cfg, path)
    if v is not MISSING:
        return v, "predicted"
    if defaults is not None:
        d = get(defaults, path)
        if d is not MISSING:
            return d, "default"
    return MISSING, "absent"


def compare_key(ck, check, real, pred_cfg, defaults, path, allow_absent_default=True):
    ck.checked.add(tuple(path))
    rv = get(real, path)
    if allow_absent_default:
        pv, origin = predicted_value(pred_cfg, defaults, path)
    else:
        pv = get(pred_cfg, path)
        origin = "predicted" if pv is not MISSING else "absent"
    if same(rv, pv):
        return True
    extra = " (absent in prediction, so the version default)" if origin == "default" else ""
    ck.fail(check, f"{dotted(path)}: real {show(rv)}, predicted {show(pv)}{extra}")
    return False


def compare_runtimes(ck, real, pred, version, defaults):
    """(a) handler set, (b) default_runtime_name, (c) per-runtime keys."""
    pcfg = (pred.get("predicted") or {}).get("config")
    if not isinstance(pcfg, dict):
        pcfg = {}
    base = cri_runtime_path(version) + ("containerd",)
    real_rts = get(real, base + ("runtimes",))
    real_names = sorted(real_rts) if isinstance(real_rts, dict) else []

    # (a) handler set: the summary list and the config table.
    pnames = (pred.get("predicted") or {}).get("runtimes")
    if not isinstance(pnames, list) or sorted(pnames) != real_names:
        ck.fail("runtimes", f"handlers: real {real_names}, predicted {show(pnames)}")
    prts = get(pcfg, base + ("runtimes",))
    if prts is MISSING:
        if real_names:
            ck.fail("runtimes", f"{dotted(base + ('runtimes',))}: absent from predicted.config")
        prts = {}
    elif not isinstance(prts, dict) or sorted(prts) != real_names:
        have = show(sorted(prts) if isinstance(prts, dict) else prts)
        ck.fail("runtimes", f"{dotted(base + ('runtimes',))} keys: real {real_names}, predicted config {have}")

    # (b) default_runtime_name: the summary field and the config key.
    rdrn = get(real, base + ("default_runtime_name",))
    pdrn = (pred.get("predicted") or {}).get("default_runtime_name", MISSING)
    if not same(rdrn, pdrn):
        ck.fail("default_runtime_name", f"real {show(rdrn)}, predicted {show(pdrn)}")
    compare_key(ck, "default_runtime_name", real, pcfg, defaults, base + ("default_runtime_name",))

    # (c) runtime_type, options.SystemdCgroup, options.BinaryName.
    def_rts = get(defaults, base + ("runtimes",)) if defaults is not None else MISSING
    if not isinstance(def_rts, dict):
        def_rts = {}
    for name in real_names:
        r = real_rts[name]
        p = prts.get(name, MISSING) if isinstance(prts, dict) else MISSING
        if not isinstance(p, dict):
            continue  # already reported under (a)
        rp = base + ("runtimes", name)
        ck.checked.update(
            {rp + ("runtime_type",), rp + ("options", "SystemdCgroup"), rp + ("options", "BinaryName")}
        )
        d = def_rts.get(name)
        # Does the dumped runtime come from the built-in default (so that an
        # absent predicted key stands for the default)? In 2.x a runtime named
        # like a default one always keeps its default fields; in 1.x only when
        # the whole runtimes map is the default one (options then carry the
        # full default key set).
        from_default = False
        if isinstance(d, dict):
            if not is_v1(version):
                from_default = True
            else:
                dopts = d.get("options") if isinstance(d.get("options"), dict) else {}
                ropts = r.get("options") if isinstance(r.get("options"), dict) else {}
                from_default = bool(dopts) and set(dopts) <= set(ropts)
        rv = r.get("runtime_type", MISSING)
        pv = p.get("runtime_type", MISSING)
        if pv is MISSING:
            pv = d.get("runtime_type", "") if from_default else ""
        if rv is MISSING:
            rv = ""
        if not same(rv, pv):
            ck.fail("runtime", f"{name}.runtime_type: real {show(rv)}, predicted {show(pv)}")
        ropts = r.get("options", {})
        popts = p.get("options", {})
        dopts = d.get("options", {}) if from_default and isinstance(d, dict) else {}
        if not isinstance(ropts, dict):
            ropts = {}
        if not isinstance(popts, dict):
            ck.fail("runtime", f"{name}.options: predicted {show(popts)} is not a table")
            popts = {}
        for key in ("SystemdCgroup", "BinaryName"):
            rv = ropts.get(key, MISSING)
            pv = popts.get(key, MISSING)
            note = ""
            if pv is MISSING and key in dopts:
                pv = dopts[key]
                note = " (absent in prediction, so the default)"
            if not same(rv, pv):
                ck.fail("runtime", f"{name}.options.{key}: real {show(rv)}, predicted {show(pv)}{note}")


def compare_imports(ck, real, pcfg, version):
    ck.checked.add(("imports",))
    rv = get(real, ("imports",))
    pv = get(pcfg, ("imports",))
    if is_v1(version):
        # 1.x: the files loaded, main included, in hash-map (random) order.
        if rv is MISSING:
            rv = []
        if not isinstance(pv, list):
            ck.fail("imports", f"imports: real (as a set) {show(sorted(rv))}, predicted {show(pv)}")
        elif sorted(set(rv)) != sorted(set(pv)) or len(pv) != len(set(pv)):
            ck.fail("imports", f"imports (as a set): real {show(sorted(rv))}, predicted {show(pv)}")
    else:
        # 2.x: import strings as written, deduplicated, in walk order.
        if rv is MISSING and pv in (MISSING, [], None):
            return
        if not same(rv, pv):
            ck.fail("imports", f"imports: real {show(rv)}, predicted {show(pv)}")


def compare_files(ck, real, pred, version):
    """1.x: the dump's `imports` lists the files loaded (main included), so
    the paths of `files` must be that set."""
    if not is_v1(version):
        return
    rv = get(real, ("imports",))
    rv = rv if isinstance(rv, list) else []
    files = pred.get("files")
    paths = [f.get("path") for f in files if isinstance(f, dict)] if isinstance(files, list) else None
    if paths is None or sorted(set(paths)) != sorted(set(rv)) or len(paths) != len(set(paths)):
        ck.fail(
            "files", f"files loaded (as a set): real imports {show(sorted(rv))}, predicted files {show(paths)}"
        )


def walk_predicted(ck, real, pcfg, path=()):
    """Every other key of predicted.config that the dump also has must be
    equal. `version` is skipped (the dump hard-codes 2 or 3)."""
    if path in ck.checked:
        return
    if path == ("version",):
        return
    rv = get(real, path)
    if rv is MISSING:
        return
    pv = get(pcfg, path)
    if isinstance(pv, dict):
        if not isinstance(rv, dict):
            ck.fail("other", f"{dotted(path)}: real {show(rv)}, predicted a table {show(pv)}")
            return
        for k in pv:
            walk_predicted(ck, real, pcfg, path + (k,))
        return
    if not same(rv, pv):
        ck.fail("other", f"{dotted(path)}: real {show(rv)}, predicted {show(pv)}")


def compare_extra_cri_keys(ck, real, pcfg, version):
    """A CRI setting the prediction has and the dump has not: the dump lists
    every field of the CRI plugin's config, so containerd dropped it (1.6.20
    has no enable_cdi). Checked at the two levels of settings, the CRI table
    and its `containerd` table; runtime tables hold free-form options."""
    base = cri_runtime_path(version)
    for table in (base, base + ("containerd",)):
        ptable = get(pcfg, table)
        rtable = get(real, table)
        if not isinstance(ptable, dict) or not isinstance(rtable, dict):
            continue
        for k in ptable:
            if k not in rtable:
                ck.fail("extra", f"{dotted(table + (k,))}: predicted {show(ptable[k])}, "
                                 f"not in the real dump (containerd drops it)")


def compare_cri_validity(ck, real, pred, version):
    """Derived from the dump: containerd's CRI plugin refuses a
    default_runtime_name that names no configured runtime (the daemon runs
    of the lab case show exactly that)."""
    base = cri_runtime_path(version) + ("containerd",)
    rts = get(real, base + ("runtimes",))
    drn = get(real, base + ("default_runtime_name",))
    names = set(rts) if isinstance(rts, dict) else set()
    valid = drn in names
    p = pred.get("predicted") or {}
    pvalid = p.get("cri_valid", MISSING)
    if not same(valid, pvalid):
        ck.fail(
            "cri_valid",
            f"(derived: default_runtime_name {show(drn)} in runtimes {sorted(names)}) expected {valid}, "
            f"predicted {show(pvalid)}; cri_error {show(p.get('cri_error', MISSING))}",
        )
    elif not valid:
        err = p.get("cri_error")
        if not isinstance(err, str) or "no corresponding runtime configured" not in err:
            ck.fail("cri_valid", f"cri_error {show(err)} lacks 'no corresponding runtime configured'")


def compare_dump(ck, real, pred, version, defaults, keys):
    """Everything but the error check: runtimes, listed keys, imports, the
    rest of the predicted keys."""
    pcfg = (pred.get("predicted") or {}).get("config")
    if not isinstance(pcfg, dict):
        ck.fail("config", f"predicted.config is {show(pcfg)}, not an object")
        return
    compare_runtimes(ck, real, pred, version, defaults)
    compare_extra_cri_keys(ck, real, pcfg, version)
    compare_cri_validity(ck, real, pred, version)
    compare_files(ck, real, pred, version)
    for path in keys:
        if path == ("imports",):
            compare_imports(ck, real, pcfg, version)
        else:
            compare_key(ck, "key", real, pcfg, defaults, path)
    walk_predicted(ck, real, pcfg)


def expand_path(spec, version):
    """'CRI.cni.bin_dir' -> the version's table path; 'oom_score' -> top."""
    parts = tuple(spec.split("|"))
    if parts[0] == "CRI":
        return cri_runtime_path(version) + parts[1:]
    return parts


def print_failures(label, failures, rewrite):
    """One FAIL line per check: `label` names the pair or case, `rewrite`
    turns machine paths in a message into <dir>."""
    by_check = {}
    for check, msg in failures:
        by_check.setdefault(check, []).append(rewrite(msg))
    for check, msgs in by_check.items():
        print(f"FAIL {label} {check}: {'; '.join(msgs)}")
