#!/usr/bin/python3
"""The simulated nodes' containerd against what real daemons answered.

    agent_test.py GPUOP_NODE_AGENT CONTAINERD_CASES_DIR

Starts gpuop-node-agent on four nodes made like the recorded ones
(../shared/containerd-cases/cri-status/README.md: the lab's main config,
with or without the seeds' bare drop-in) and asks them with the real
clients:

- the recording's own CRI client, cri_status.py (python3-grpcio, stubs
  generated here by python3-grpc-tools from tests/agents/api.proto), whose
  JSON must equal the recorded status-*.json once the daemon's directories
  are normalised as the recording normalised them (<dir>);
- Debian's real `ctr` (containerd's own client of the introspection and
  version services): `ctr plugins ls` must print the recorded table of
  containerd-cases/VERSION/daemon-lab.txt, `ctr plugins ls -d id==cri` the
  recorded details (their Exports sorted: ctr prints a Go map);
- then the lifecycle on the wire: files written while the daemon runs are
  not loaded; SIGHUP makes it exit (the socket refuses connections) and
  come back after RestartSec (1 s here; the 5 s default is the unit
  tests') with the files as they are then.

Prints one line per check and 'N passed, N failed'; exits 1 on a failure.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

AGENT, CASES = sys.argv[1], sys.argv[2]
CRI_STATUS = os.path.join(CASES, "cri-status")
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
LAB_ETC = os.path.join(SRC, "examples", "incident", "etc", "containerd")
PATH_KEYS = ("containerdEndpoint", "containerdRootDir", "rootDir", "stateDir")

results = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    results["passed" if ok else "failed"] += 1
    print(("ok   " if ok else "FAIL ") + name + ("" if ok else "\n" + detail))


def make_node(root, name, version, bare, restart_sec=5):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "etc", "containerd", "conf.d"))
    os.makedirs(os.path.join(d, "run", "containerd"))
    shutil.copy(os.path.join(LAB_ETC, "config.toml"), os.path.join(d, "etc", "containerd"))
    if bare:
        add_bare(d)
    with open(os.path.join(d, "node.toml"), "w") as f:
        f.write('[containerd]\nversion = "%s"\nrestart_sec = %d\n' % (version, restart_sec))
    return d


def add_bare(d):
    shutil.copy(os.path.join(LAB_ETC, "conf.d", "99-nvidia.toml"),
                os.path.join(d, "etc", "containerd", "conf.d"))


def sock(d):
    return os.path.join(d, "run", "containerd", "containerd.sock")


def cri_status(stubs, d):
    env = dict(os.environ, PYTHONPATH=stubs)
    out = subprocess.run(["/usr/bin/python3", os.path.join(CRI_STATUS, "cri_status.py"), sock(d)],
                         env=env, capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        return {"crashed": out.stderr}
    got = json.loads(out.stdout)
    for k in PATH_KEYS:
        if k in got.get("config_raw", {}):
            got["config_raw"][k] = "<dir>"
    return got


def ctr(d, *args):
    out = subprocess.run(["ctr", "--address", sock(d), "--connect-timeout", "5s"] + list(args),
                         capture_output=True, text=True, timeout=10)
    return out.returncode, out.stdout, out.stderr


def recorded_section(version, title):
    with open(os.path.join(CASES, version, "daemon-lab.txt")) as f:
        text = f.read()
    body = text.split("## " + title + "\n", 1)[1].split("\n## ", 1)[0]
    return "\n".join(l for l in body.splitlines() if l.strip()) + "\n"


def sorted_exports(text):
    """ctr prints Exports from a Go map, in a random order: sort that block."""
    lines, out, block = text.splitlines(), [], []
    in_exports = False
    for line in lines:
        if line.startswith("Exports:"):
            in_exports = True
            out.append(line)
            continue
        if in_exports and line.startswith("               ") and not line.strip().startswith("Code:"):
            block.append(line)
            continue
        if block:
            out.extend(sorted(block))
            block = []
        in_exports = False
        out.append(line)
    out.extend(sorted(block))
    return "\n".join(l for l in out if l.strip()) + "\n"


def wait_for(pred, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def answers(d):
    code, _, _ = ctr(d, "version")
    return code == 0


def main():
    tmp = tempfile.mkdtemp(prefix="gpa.", dir="/tmp")  # short: socket paths
    agent = None
    try:
        stubs = os.path.join(tmp, "stubs")
        os.mkdir(stubs)
        subprocess.run(["/usr/bin/python3", "-m", "grpc_tools.protoc", "-I" + HERE,
                        "--python_out=" + stubs, "--grpc_python_out=" + stubs,
                        os.path.join(HERE, "api.proto")], check=True)
        cases = [
            ("a", "1.6.20~ds1", False, "status-1.6.20-none.json"),
            ("b", "1.6.20~ds1", True, "status-1.6.20-bare.json"),
            ("c", "1.7.29+unknown", False, "status-1.7.29-none.json"),
            ("d", "2.1.5+unknown", True, "status-2.1.5-bare.json"),
        ]
        nodes = {name: make_node(tmp, name, v, bare) for name, v, bare, _ in cases}
        life = make_node(tmp, "life", "1.6.20~ds1", False, restart_sec=1)
        log = open(os.path.join(tmp, "journal.txt"), "w")
        agent = subprocess.Popen([AGENT] + list(nodes.values()) + [life], stderr=log)
        if not wait_for(lambda: all(os.path.exists(sock(d)) for d in nodes.values()), 10):
            check("the agent serves every node", False, open(log.name).read())
            return

        # CRI, field by field.
        for name, version, bare, recording in cases:
            with open(os.path.join(CRI_STATUS, recording)) as f:
                want = json.load(f)
            got = cri_status(stubs, nodes[name])
            check("cri_status.py on %s%s equals %s" % (version, " + bare drop-in" if bare else "",
                                                         recording), got == want,
                  json.dumps(got, indent=1, sort_keys=True)[:3000])

        # ctr: the plugin table of each recorded line, on the lab's files.
        for name, version, rec in (("b", "1.6.20~ds1", "1.6.20"), ("d", "2.1.5+unknown", "2.1.5")):
            code, out, err = ctr(nodes[name], "plugins", "ls")
            want = recorded_section(rec, "ctr plugins ls")
            check("ctr plugins ls on %s with the lab's files equals daemon-lab.txt" % version,
                  code == 0 and out.rstrip() == want.rstrip(), err + out)
        code, out, err = ctr(nodes["b"], "plugins", "ls", "-d", "id==cri")
        want = recorded_section("1.6.20", "ctr plugins ls -d id==cri")
        check("ctr plugins ls -d id==cri on 1.6.20 names the CRI plugin's error as recorded",
              code == 0 and sorted_exports(out) == sorted_exports(want), err + out)
        code, out, err = ctr(nodes["a"], "version")
        check("ctr version reports the node's containerd",
              code == 0 and "Server:\n  Version:  1.6.20~ds1\n" in out, err + out)

        # The lifecycle, seen through the socket.
        def runtimes(d):
            return sorted(cri_status(stubs, d).get("config.containerd.runtimes", {}))
        check("a healthy node serves runc", runtimes(life) == ["runc"], str(runtimes(life)))
        add_bare(life)
        check("a drop-in written while containerd runs is not loaded",
              runtimes(life) == ["runc"], str(runtimes(life)))
        agent.send_signal(signal.SIGHUP)
        down = wait_for(lambda: not answers(life), 5)
        code, _, err = ctr(life, "version")
        check("after SIGHUP the daemon is gone and its socket refuses connections",
              down and os.path.exists(sock(life)) and "connection refused" in err, err)
        back = wait_for(lambda: answers(life), 10)
        got = cri_status(stubs, life)
        check("RestartSec later it is back, without CRI, as the recorded 1.6.20 with the drop-in",
              back and got == {"error": {"code": "StatusCode.UNIMPLEMENTED",
                                         "details": "unknown service runtime.v1.RuntimeService"}},
              json.dumps(got))
        journal = open(log.name).read()
        check("the journal has systemd's exit line and containerd's failure line",
              "life: containerd.service: Main process exited, code=killed, status=1/HUP" in journal
              and 'life: time="' in journal
              and 'msg="failed to load plugin io.containerd.grpc.v1.cri" error="invalid plugin '
                  'config: no corresponding runtime configured in `containerd.runtimes` for '
                  '`containerd` `default_runtime_name = \\"runc\\""' in journal, journal)

        agent.send_signal(signal.SIGTERM)
        rc = agent.wait(timeout=10)
        agent = None
        # The SIGHUP went to every node; those still waiting for their
        # restart have no process, and keep the socket file it left.
        stale = [n for n, d in nodes.items() if os.path.exists(sock(d))]
        check("SIGTERM stops the agent: a running daemon removes its socket, a killed one's stays",
              rc == 0 and not os.path.exists(sock(life)) and stale == sorted(nodes),
              "exit %s, sockets left %s" % (rc, stale))
    finally:
        if agent:
            agent.kill()
            agent.wait()
        shutil.rmtree(tmp, ignore_errors=True)


main()
print("%d passed, %d failed" % (results["passed"], results["failed"]))
sys.exit(1 if results["failed"] else 0)
