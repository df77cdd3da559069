#!/usr/bin/env python3
"""kube_strategic_merge_patch against the real strategicpatch library.

    smp_vs_kubectl.py SMP_BINARY CASES_DIR [--regen] [--random N] [--seed S]

SMP_BINARY is the unit test program test_kube_smp, whose mode
`--apply OBJECT PATCH KIND` prints kube_strategic_merge_patch's result (or
"error: ..." and exit 1). CASES_DIR holds one JSON file per case:

    {"description": "...", "object": {...}, "patch": {...},
     "kubectl": <what kubectl made of it> | {"error": "<kubectl's message>"}}

"kubectl" is recorded from `kubectl patch --local -f OBJECT --type=strategic
-p PATCH -o json`, which runs k8s.io/apimachinery's strategicpatch on the
typed Go struct with no server and no kubeconfig. `--regen` rewrites it from
the installed kubectl; CASES_DIR "-" runs none. Each case passes when our result equals it as a parsed
value (list order counts) or both refuse the patch, and our result holds no
"$..." key. When kubectl is installed each case also runs it live, so a
recorded answer that went stale fails too.

kubectl prints the patched object before the API server would decode it into
the typed object, so where the library copies a patch value through untouched
its output can still hold "$..." members and nulls; the server drops both
(unknown fields, and null for omitempty fields). Its answer is compared after
dropping them, and ours as it is.

`--random N` (needs kubectl) also checks N patches generated from SEED
against kubectl live: keyed lists, set lists, atomic lists, maps, nulls and
every directive, on Pods, Nodes and DaemonSets.

Ends with "N passed, N failed"; exits 1 when any case failed.
"""

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile


def strip_server_drops(v):
    """What the typed decode keeps: no "$..." members, no null members."""
    if isinstance(v, dict):
        return {
            k: strip_server_drops(x)
            for k, x in v.items()
            if not k.startswith("$") and x is not None
        }
    if isinstance(v, list):
        return [strip_server_drops(x) for x in v]
    return v


def dollar_keys(v, path="$"):
    if isinstance(v, dict):
        for k, x in v.items():
            if k.startswith("$"):
                yield path + "." + k
            yield from dollar_keys(x, path + "." + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from dollar_keys(x, "%s[%d]" % (path, i))


def find_kubectl():
    exe = os.environ.get("KUBECTL") or shutil.which("kubectl")
    if not exe:
        return None
    try:
        subprocess.run([exe, "version", "--client"], capture_output=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return exe


class Runner:
    def __init__(self, binary, kubectl, tmp):
        self.binary = binary
        self.kubectl = kubectl
        self.tmp = tmp
        # No kubeconfig and an empty cache: --local must not need a server.
        self.env = dict(os.environ, KUBECONFIG=os.devnull, HOME=tmp)

    def _write(self, obj, patch):
        obj_path = os.path.join(self.tmp, "object.json")
        patch_path = os.path.join(self.tmp, "patch.json")
        with open(obj_path, "w") as f:
            json.dump(obj, f)
        with open(patch_path, "w") as f:
            json.dump(patch, f)
        return obj_path, patch_path

    def ours(self, obj, patch):
        obj_path, patch_path = self._write(obj, patch)
        p = subprocess.run(
            [self.binary, "--apply", obj_path, patch_path, obj.get("kind", "")],
            capture_output=True, text=True, timeout=60)
        if p.returncode == 1:
            return {"error": p.stderr.strip()}
        if p.returncode != 0:
            raise RuntimeError("%s exited %d: %s" % (self.binary, p.returncode, p.stderr))
        return {"result": json.loads(p.stdout)}

    def theirs(self, obj, patch):
        obj_path, _ = self._write(obj, patch)
        p = subprocess.run(
            [self.kubectl, "patch", "--local", "-f", obj_path, "--type=strategic",
             "-p", json.dumps(patch), "-o", "json"],
            capture_output=True, text=True, timeout=60, env=self.env)
        if p.returncode != 0:
            return {"error": p.stderr.strip()}
        return {"result": strip_server_drops(json.loads(p.stdout))}


def compare(ours, expected):
    """None when they agree, else what differs."""
    if "result" in ours:
        bad = list(dollar_keys(ours["result"]))
        if bad:
            return "our result keeps directive keys: %s" % ", ".join(bad)
    if ("error" in ours) != ("error" in expected):
        return "ours: %s\nkubectl: %s" % (json.dumps(ours), json.dumps(expected))
    if "result" in ours and ours["result"] != expected["result"]:
        return "ours:    %s\nkubectl: %s" % (
            json.dumps(ours["result"], sort_keys=True), json.dumps(expected["result"], sort_keys=True))
    return None


def recorded(case):
    k = case["kubectl"]
    return {"error": k["error"]} if isinstance(k, dict) and set(k) == {"error"} else {"result": k}


def run_cases(runner, cases_dir, regen):
    passed = failed = 0
    names = sorted(n for n in os.listdir(cases_dir) if n.endswith(".json"))
    for name in names:
        path = os.path.join(cases_dir, name)
        with open(path) as f:
            case = json.load(f)
        problems = []
        if runner.kubectl:
            live = runner.theirs(case["object"], case["patch"])
            if regen:
                case["kubectl"] = live.get("result", {"error": live.get("error")})
                with open(path, "w") as f:
                    json.dump(case, f, indent=2)
                    f.write("\n")
            elif "kubectl" not in case:
                problems.append("no recorded kubectl answer; run with --regen")
            elif compare(live, recorded(case)) is not None:
                problems.append("recorded answer is stale:\n" + compare(live, recorded(case)))
        if "kubectl" in case:
            why = compare(runner.ours(case["object"], case["patch"]), recorded(case))
            if why:
                problems.append(why)
        else:
            problems.append("no recorded kubectl answer")
        label = "%s: %s" % (name[:-5], case.get("description", ""))
        if problems:
            failed += 1
            print("not ok - %s\n  %s" % (label, "\n  ".join("\n".join(problems).splitlines())))
        else:
            passed += 1
            print("ok - %s" % label)
    return passed, failed


# ---- random cases -----------------------------------------------------------------------


class Gen:
    """Objects and patches over the fields whose strategy the schema decides."""

    def __init__(self, rng):
        self.r = rng

    def pick(self, seq, k):
        return self.r.sample(seq, min(k, len(seq)))

    def maybe(self, p=0.5):
        return self.r.random() < p

    def env_list(self, names):
        return [{"name": n, "value": self.r.choice(["1", "2", "x"])} for n in names]

    def container(self, name):
        c = {"name": name, "image": "img-" + self.r.choice("abc")}
        if self.maybe():
            c["env"] = self.env_list(self.pick(list("ABCDEF"), self.r.randint(0, 4)))
        if self.maybe(0.3):
            c["ports"] = [{"containerPort": p} for p in self.pick([80, 443, 8080, 9090], 2)]
        if self.maybe(0.3):
            c["args"] = self.pick(["-a", "-b", "-c", "-d"], self.r.randint(1, 3))
        return c

    def pod_spec(self):
        spec = {"containers": [self.container(n) for n in self.pick(list("abcde"), self.r.randint(1, 4))]}
        if self.maybe(0.4):
            spec["tolerations"] = [{"key": k} for k in self.pick(["t1", "t2", "t3"], 2)]
        if self.maybe(0.4):
            spec["volumes"] = [{"name": n, "emptyDir": {}} for n in self.pick(["v1", "v2", "v3"], 2)]
        if self.maybe(0.3):
            spec["nodeSelector"] = {"zone": "a", "gpu": "yes"}
        return spec

    def meta(self):
        m = {"name": "x", "labels": {"app": "a", "tier": "b"}}
        if self.maybe():
            m["finalizers"] = self.pick(["f1", "f2", "f3", "f4"], self.r.randint(1, 3))
        return m

    def obj(self):
        kind = self.r.choice(["Pod", "Pod", "DaemonSet", "Node"])
        if kind == "Pod":
            return {"apiVersion": "v1", "kind": "Pod", "metadata": self.meta(), "spec": self.pod_spec()}
        if kind == "DaemonSet":
            return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": self.meta(),
                    "spec": {"template": {"metadata": {"labels": {"app": "a"}}, "spec": self.pod_spec()}}}
        conds = [{"type": t, "status": "True"} for t in self.pick(["Ready", "MemoryPressure", "DiskPressure"], 2)]
        return {"apiVersion": "v1", "kind": "Node", "metadata": self.meta(),
                "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}]},
                "status": {"conditions": conds, "capacity": {"cpu": "8", "memory": "32Gi"}}}

    def keyed_patch(self, current, key, make):
        """A patch list for a keyed list, and maybe its $setElementOrder."""
        names = [e[key] for e in current]
        extra = [80, 443, 7000] if key == "containerPort" else ["n1", "n2", "a", "b", "A", "B", "G"]
        pool = sorted(set(names) | set(self.pick(extra, 2)))
        chosen = self.pick(pool, self.r.randint(1, 3))
        out = []
        for n in chosen:
            roll = self.r.random()
            if roll < 0.15 and n in names:
                out.append({key: n, "$patch": "delete"})
            else:
                out.append(make(n))
        if self.maybe(0.08):
            out.insert(self.r.randint(0, len(out)), {"$patch": "replace"})
        directives = {}
        if self.maybe(0.3):
            plain = [e[key] for e in out if "$patch" not in e]
            order = [n for n in names if n not in plain and self.maybe(0.7)]
            for n in plain:  # keeps the patch's relative order, as kubectl does
                order.insert(self.r.randint(0, len(order)), n)
            if self.maybe(0.1):
                self.r.shuffle(order)  # may be refused
            directives = [{key: n} for n in order]
        return out, directives

    def container_patch(self, name, current):
        c = {"name": name}
        if self.maybe():
            c["image"] = "new-" + self.r.choice("xyz")
        if self.maybe(0.15):
            c["image"] = None
        cur = next((x for x in current if x.get("name") == name), {})
        if self.maybe(0.5):
            env, order = self.keyed_patch(cur.get("env", []), "name",
                                          lambda n: {"name": n, "value": self.r.choice(["9", None])})
            c["env"] = env
            if order:
                c["$setElementOrder/env"] = order
        if self.maybe(0.2):
            ports, _ = self.keyed_patch(cur.get("ports", []), "containerPort",
                                        lambda n: {"containerPort": n, "protocol": "TCP"})
            c["ports"] = ports
        # Not both: Go applies the two in random order.
        if self.maybe(0.2):
            c["args"] = self.pick(["-x", "-a"], 1)
        elif self.maybe(0.1) and cur.get("args"):
            c["$deleteFromPrimitiveList/args"] = self.pick(cur["args"], 1)
        return c

    def spec_patch(self, spec):
        p = {}
        conts, order = self.keyed_patch(spec.get("containers", []), "name",
                                        lambda n: self.container_patch(n, spec.get("containers", [])))
        if self.maybe(0.8):
            p["containers"] = conts
            if order:
                p["$setElementOrder/containers"] = order
        if self.maybe(0.2):
            p["tolerations"] = [{"key": "t9"}]
        if self.maybe(0.2):
            p["nodeSelector"] = self.r.choice([{"zone": None, "new": "1"}, {"$patch": "replace", "x": "y"},
                                               {"$patch": "delete"}])
        if self.maybe(0.15) and spec.get("volumes"):
            v = spec["volumes"][0]["name"]
            p["volumes"] = [{"name": v, "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/h"}}]
        return p

    def meta_patch(self, meta):
        p = {}
        if self.maybe(0.4):
            p["labels"] = {"app": None, "new": "v"}
        fins = meta.get("finalizers", [])
        if self.maybe(0.3):
            p["finalizers"] = self.pick(["f1", "f5", "f6", "f2"], 2)
            if self.maybe(0.5):
                order = list(p["finalizers"])
                for f in fins:
                    if f not in order and self.maybe(0.7):
                        order.insert(self.r.randint(0, len(order)), f)
                p["$setElementOrder/finalizers"] = order
        elif self.maybe(0.2) and fins:
            p["$deleteFromPrimitiveList/finalizers"] = self.pick(fins, 1)
        return p

    def patch(self, obj):
        p = {}
        mp = self.meta_patch(obj["metadata"])
        if mp:
            p["metadata"] = mp
        if obj["kind"] == "Pod":
            p["spec"] = self.spec_patch(obj["spec"])
        elif obj["kind"] == "DaemonSet":
            p["spec"] = {"template": {"spec": self.spec_patch(obj["spec"]["template"]["spec"])}}
        else:
            conds, order = self.keyed_patch(obj["status"]["conditions"], "type",
                                            lambda t: {"type": t, "status": "False"})
            p["status"] = {"conditions": conds, "capacity": {"nvidia.com/gpu": "4", "cpu": None}}
            if order:
                p["status"]["$setElementOrder/conditions"] = order
            if self.maybe(0.3):
                p["spec"] = {"taints": [{"key": "gpu", "effect": "NoSchedule"}], "unschedulable": True}
        return p


def run_random(runner, count, seed):
    gen = Gen(random.Random(seed))
    passed = failed = refused = 0
    for i in range(count):
        obj = gen.obj()
        patch = gen.patch(obj)
        theirs = runner.theirs(obj, patch)
        refused += "error" in theirs
        why = compare(runner.ours(obj, patch), theirs)
        if why:
            failed += 1
            print("not ok - random %d (seed %d)\n  object: %s\n  patch:  %s\n  %s" % (
                i, seed, json.dumps(obj), json.dumps(patch), "\n  ".join(why.splitlines())))
        else:
            passed += 1
    print("%s - random: %d of %d generated patches agree with kubectl (seed %d; %d refused)" % (
        "ok" if failed == 0 else "not ok", passed, count, seed, refused))
    return passed, failed


def main(argv):
    args = list(argv[1:])
    regen = "--regen" in args
    if regen:
        args.remove("--regen")
    count, seed = 0, 1
    for flag in ("--random", "--seed"):
        if flag in args:
            i = args.index(flag)
            value = int(args[i + 1])
            del args[i:i + 2]
            if flag == "--random":
                count = value
            else:
                seed = value
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary, cases_dir = args
    kubectl = find_kubectl()
    if regen and not kubectl:
        print("smp_vs_kubectl: --regen needs kubectl", file=sys.stderr)
        return 2
    if not kubectl:
        print("# kubectl not found: comparing with the recorded answers only")
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(binary, kubectl, tmp)
        passed = failed = 0
        if cases_dir != "-":
            passed, failed = run_cases(runner, cases_dir, regen)
        if count and kubectl:
            p, f = run_random(runner, count, seed)
            passed, failed = passed + p, failed + f
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
