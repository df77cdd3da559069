#!/usr/bin/env python3
"""Run scripts of ../shared/k8s-cases, each on its own fresh embedded cluster,
and compare what they print with the recordings of Kubernetes 1.32.13.

usage: run_case.py --gpuop GPUOP --cases DIR [--known FILE] [--save DIR]
                   [--timeout SECONDS] [--verbose] SCRIPT...
       run_case.py --cases DIR [--known FILE] [--verbose] --compare FILE SCRIPT

SCRIPT is scenarios.py, kubectl-probes.sh or lifecycle-and-backoff.sh. The
scripts run at the same time, each on `gpuop cluster up --data TMP/data
--no-kubeconfig-merge` with no nodes, its HOME, KUBECONFIG
(TMP/data/kubeconfig), TMPDIR and kubectl's cache in its own TMP, removed
afterwards: they mostly sleep, so together they take as long as the longest.
What a script printed (stdout and stderr, as a terminal shows them) is kept
in DIR/SCRIPT.out (scenarios.py's observations in DIR/scenarios.jsonl).
--compare FILE compares an output kept before, without a cluster.

scenarios.py is judged by the recording's own compare.py, the text scripts
block by block (blocks.py says how), both against known-differences.txt.
Exit 0 when every difference is on that list and every entry still holds,
1 otherwise, 2 when a run itself failed (cluster, timeout, unreadable list).

The options of `gpuop cluster up` for a script live in CLUSTER_OPTIONS
below; GPUOP_K8S_CASES_UP_ARGS (shell words) adds some to every cluster, e.g.
to try a shorter node-monitor grace period by hand.
"""
import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDINGS = "real-1.32.13"
SCRIPTS = {
    "scenarios.py": "scenarios.jsonl",
    "kubectl-probes.sh": "kubectl-probes.txt",
    "lifecycle-and-backoff.sh": "lifecycle-and-backoff.txt",
}

# `gpuop cluster up` options of each script's cluster. The recordings were
# made with kube-controller-manager's 40 s node-monitor grace period, which
# lifecycle-and-backoff.sh waits out (it polls, so a shorter period only
# makes it quicker): 5 s here.
CLUSTER_OPTIONS = {
    "scenarios.py": [],
    "kubectl-probes.sh": [],
    "lifecycle-and-backoff.sh": ["--node-monitor-grace-period", "5s"],
}

# On Kubernetes a script's data stays small (events are aggregated); past
# this size a controller is flooding the store, and the cluster is stopped
# before it fills the disk. The blocks printed afterwards differ.
DATA_LIMIT_BYTES = 256 << 20


class RunError(Exception):
    pass


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def session_members(sid):
    """The pids of session SID (Linux /proc), its leader first."""
    members = [sid]
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == sid:
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                # pid (comm) state ppid pgrp session ...; comm may hold spaces
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[3]) == sid:
            members.append(int(entry))
    return members


class Case:
    """One script on one fresh cluster, in its own temporary directory."""

    def __init__(self, script, gpuop, cases, timeout):
        self.script, self.gpuop, self.cases, self.timeout = script, gpuop, cases, timeout
        self.options = CLUSTER_OPTIONS[script] + shlex.split(
            os.environ.get("GPUOP_K8S_CASES_UP_ARGS", ""))
        self.tmp = tempfile.mkdtemp(prefix="gpuop-k8s-cases-")
        self.data = os.path.join(self.tmp, "data")
        self.jsonl = os.path.join(self.tmp, "scenarios.jsonl")
        home = os.path.join(self.tmp, "home")
        os.makedirs(home)
        os.makedirs(os.path.join(self.tmp, "tmp"))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("KUBE") and k not in ("HOME", "TMPDIR")}
        self.env.update(HOME=home, KUBECONFIG=os.path.join(self.data, "kubeconfig"),
                        TMPDIR=os.path.join(self.tmp, "tmp"), LC_ALL="C.UTF-8")
        self.proc = None
        self.block = "(start)"
        self.notes = []
        self.output, self.error = "", None

    def run(self):
        started = time.monotonic()
        try:
            self._up()
            self._run_script()
        except (RunError, OSError, subprocess.SubprocessError) as e:
            self.error = str(e)
        finally:
            self.stop()
        up = " ".join(["gpuop cluster up", *map(shlex.quote, self.options)])
        self.notes.insert(0, f"{self.script}: ran in {time.monotonic() - started:.0f} s "
                             f"on a fresh `{up}`")

    def _up(self):
        argv = [self.gpuop, "cluster", "up", "--data", self.data, "--no-kubeconfig-merge",
                *self.options]
        r = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise RunError(f"{shlex.join(argv)}: exit {r.returncode}\n{r.stdout}{r.stderr}")

    def _run_script(self):
        path = os.path.join(self.cases, self.script)
        argv = ["python3", path, self.jsonl] if path.endswith(".py") else ["bash", path]
        self.proc = subprocess.Popen(argv, env=self.env, cwd=self.tmp, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        done = threading.Event()
        watchdog = threading.Thread(target=self._watch, args=(done,), daemon=True)
        watchdog.start()
        lines = []
        try:
            for line in self.proc.stdout:
                lines.append(line)
                if line.startswith("--- "):
                    self.block = line[4:].strip()
            self.proc.wait()
        finally:
            done.set()
            watchdog.join()
            self.output = "".join(lines)
        if self.proc.returncode == -signal.SIGKILL:
            raise RunError(f"{self.script} ran past {self.timeout:.0f} s "
                           f"(in `{self.block}`): killed")
        if self.script == "scenarios.py" and self.proc.returncode != 0:
            raise RunError(f"scenarios.py: exit {self.proc.returncode}")

    def _watch(self, done):
        """Stop the script past its timeout, the server past DATA_LIMIT_BYTES."""
        deadline = time.monotonic() + self.timeout
        flooded = False
        while not done.wait(0.5):
            if time.monotonic() > deadline:
                self._kill_script()
                return
            size = 0 if flooded else dir_bytes(self.data)
            if size > DATA_LIMIT_BYTES:
                self.notes.append(f"{self.script}: the data directory reached {size >> 20} MiB "
                                  f"during `{self.block}`: cluster stopped")
                self._kill_server()
                flooded = True

    def _kill_script(self):
        """Every process of the script's session: `timeout` (the probes use
        it) puts its command in a process group of its own."""
        if self.proc is None:
            return
        for pid in session_members(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def _kill_server(self):
        """The server this run started, by the pid in its own data dir."""
        try:
            with open(os.path.join(self.data, "apiserver.pid")) as f:
                os.kill(int(f.read().strip()), signal.SIGKILL)
        except (OSError, ValueError):
            pass

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self._kill_script()
        if os.path.isdir(self.data):
            try:
                subprocess.run([self.gpuop, "cluster", "down", "--data", self.data,
                                "--no-kubeconfig-merge"], env=self.env,
                               capture_output=True, timeout=60)
            except subprocess.TimeoutExpired:
                pass
            self._kill_server()

    def keep(self, directory):
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, self.script + ".out"), "w", encoding="utf-8") as f:
            f.write(self.output)
        if os.path.exists(self.jsonl):
            shutil.copyfile(self.jsonl, os.path.join(directory, "scenarios.jsonl"))

    def remove(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def judge_scenarios(cases, got_jsonl, known):
    """compare.py's output and its verdict, one block an observation
    (`CASE WHAT`)."""
    reference = os.path.join(cases, RECORDINGS, SCRIPTS["scenarios.py"])
    r = subprocess.run(["python3", os.path.join(cases, "compare.py"), reference, got_jsonl],
                       capture_output=True, text=True)
    if r.returncode not in (0, 1) or r.stderr:
        raise RunError(f"compare.py: exit {r.returncode}\n{r.stderr}")
    lines = r.stdout.splitlines()
    differs = {}
    for i, line in enumerate(lines):
        if line.startswith("DIFF "):
            case, what = line[5:].split(" ", 1)
            ref, cand = (x.split(": ", 1)[1] for x in lines[i + 1:i + 3])
            differs[f"{case} {what}"] = ([ref], [cand])
    if r.returncode == 1 and not differs:
        raise RunError(f"compare.py failed but named no observation\n{r.stdout}")
    expected, got = {}, {}
    with open(reference) as f:
        for o in map(json.loads, f):
            name = f"{o['case']} {o['what']}"
            same = [json.dumps(o["value"])]
            expected[name], got[name] = differs.get(name, (same, same))
    return r.stdout.rstrip("\n"), blocks.judge(expected, got, known)


def judge(cases, script, output, got_jsonl, known_path, verbose):
    """The report of one script's run, and whether it passes."""
    known = blocks.read_known(known_path, script)
    if script == "scenarios.py":
        head, verdicts = judge_scenarios(cases, got_jsonl, known)
    else:
        with open(os.path.join(cases, RECORDINGS, SCRIPTS[script]), encoding="utf-8") as f:
            recording = f.read()
        head, verdicts = None, blocks.judge(blocks.split_blocks(recording),
                                            blocks.split_blocks(output), known)
    text, ok = blocks.report(script, verdicts, verbose)
    return "\n".join(filter(None, [head, text])), ok


def run_all(a):
    cases = [Case(s, os.path.abspath(a.gpuop), a.cases, a.timeout) for s in a.script]

    # ctest's timeout and ^C: no server or script of ours outlives the run
    def stop_all(*_):
        for c in cases:
            c.stop()
            c.remove()
        os._exit(2)
    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)

    threads = [threading.Thread(target=c.run) for c in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status = 0
    for c in cases:
        if a.save:
            c.keep(a.save)
        print("\n".join(c.notes))
        try:
            if c.error:
                raise RunError(c.error + ("\n" + c.output if c.output else ""))
            text, ok = judge(a.cases, c.script, c.output, c.jsonl, a.known, a.verbose)
            print(text)
            status = max(status, 0 if ok else 1)
        except (RunError, blocks.ListError, OSError) as e:
            print(f"ERROR {c.script}: {e}")
            status = 2
        finally:
            c.remove()
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("script", nargs="+", choices=sorted(SCRIPTS))
    ap.add_argument("--gpuop")
    ap.add_argument("--cases", required=True)
    ap.add_argument("--known", default=os.path.join(HERE, "known-differences.txt"))
    ap.add_argument("--save", metavar="DIR")
    ap.add_argument("--compare", metavar="FILE")
    ap.add_argument("--timeout", type=float, default=1200)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    if a.compare:
        if len(a.script) != 1:
            ap.error("--compare takes one SCRIPT")
        try:
            with open(a.compare, encoding="utf-8") as f:
                text, ok = judge(a.cases, a.script[0], f.read(), a.compare, a.known, a.verbose)
        except (RunError, blocks.ListError, OSError) as e:
            print(f"ERROR {a.script[0]}: {e}")
            return 2
        print(text)
        return 0 if ok else 1
    if not a.gpuop:
        ap.error("--gpuop or --compare is needed")
    return run_all(a)


if __name__ == "__main__":
    sys.exit(main())
