"""Compare what a ../shared/k8s-cases script printed on gpuop's embedded
cluster with what it printed on a real Kubernetes 1.32.13 control plane.

Python 3.11+ standard library only. Used by run_case.py (which runs the
scripts) and test_blocks.py (which checks these rules on made-up outputs).

A text recording is cut into blocks: a block starts at a line beginning with
`--- ` and is named by that line's text up to its first `: ` (the lifecycle
script prints its value on the header line). A name seen twice gets ` (2)`.

Before two blocks are compared, what varies from run to run is normalised on
both sides (the recording's README lists it):
  * RFC 3339 times                     -> <time>
  * UIDs                               -> <uid>
  * generated name suffixes (`-8qwsc`, `-fcfb95cd4-djs8j`) -> -<hash>-<id>
  * kubectl ages (`0s`, `12s`, `3m4s`) -> <age>
  * runs of 3+ spaces (table columns, whose width follows the
    values above)                      -> 3 spaces; trailing spaces dropped
  * the FailedCreate event line of the lifecycle script: one event object
    whose count is between FAILED_CREATE_MIN and FAILED_CREATE_MAX reads
    `1 objects, count grows by backoff` (the recording has 11 after 10 s;
    the count depends on the controller's backoff timing).

The known differences (known-differences.txt) say which blocks may still
differ. One entry a line: `SCRIPT | BLOCK | KIND | WHY`, KIND one of
  fixed-by: issue N   gpuop differs today; an issue will fix it
  not served yet      the block needs a resource gpuop does not serve
  setup: REGEX        the recording setup differs from Kubernetes (not to be
                      copied): REGEX is removed from both sides of the block
                      before they are compared
An entry stays honest: a `fixed-by` or `not served yet` block that agrees,
or a `setup` REGEX that matches nothing on either side, fails the check
until the entry is removed.
"""
import difflib
import re

# client-go's event correlator lets a source burst 25 events about one
# object (tools/record/events_cache.go, defaultSpamBurst), so one object's
# count cannot pass 25 in the script's 10 s; 2 is the least that "grows".
FAILED_CREATE_MIN = 2
FAILED_CREATE_MAX = 25

# Characters of generated names (apimachinery's util/rand: no vowels, no
# 0, 1, 3), so English words never look like a suffix.
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"

_NORMALISE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)"),
     "<time>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
     "<uid>"),
    # a ReplicaSet's pod-template-hash and the pod's own suffix
    (re.compile(rf"(?<=[a-z0-9])-[{_NAME_CHARS}]{{6,10}}-[{_NAME_CHARS}]{{5}}(?![a-z0-9-])"),
     "-<hash>-<id>"),
    (re.compile(rf"(?<=[a-z0-9])-[{_NAME_CHARS}]{{5}}(?![a-z0-9-])"), "-<id>"),
    (re.compile(r"(?<![\w.<-])\d+[smhdy](?:\d+[smh])?(?![\w.-])"), "<age>"),
    (re.compile(r" {3,}"), "   "),
]

_FAILED_CREATE = re.compile(r"(\d+) objects, count sum (\d+)")

KINDS = ("fixed-by", "not served yet", "setup")


class ListError(Exception):
    """A known-differences entry that cannot be read: names file:line."""


def _failed_create(m):
    objects, count = int(m.group(1)), int(m.group(2))
    if objects == 1 and FAILED_CREATE_MIN <= count <= FAILED_CREATE_MAX:
        return "1 objects, count grows by backoff"
    return m.group(0)


def normalise_line(line):
    for pattern, replacement in _NORMALISE:
        line = pattern.sub(replacement, line)
    line = _FAILED_CREATE.sub(_failed_create, line)
    return line.rstrip()


def split_blocks(text):
    """Ordered {name: [lines]} of a text recording; lines before the first
    header form the block "(before the first block)"."""
    blocks, seen = {}, {}
    name = "(before the first block)"
    for line in text.splitlines():
        if line.startswith("--- "):
            base = line[4:].split(": ", 1)[0].rstrip(":").strip()
            seen[base] = seen.get(base, 0) + 1
            name = base if seen[base] == 1 else f"{base} ({seen[base]})"
            blocks[name] = []
        blocks.setdefault(name, []).append(line)
    return blocks


class Entry:
    def __init__(self, where, script, block, kind, why):
        self.where, self.script, self.block = where, script, block
        self.kind, self.why = kind, why
        self.pattern = None
        if kind.startswith("setup:"):
            try:
                self.pattern = re.compile(kind[len("setup:"):].strip())
            except re.error as e:
                raise ListError(f"{where}: setup REGEX: {e}") from None

    @property
    def may_differ(self):
        return self.pattern is None

    def __str__(self):
        return f"{self.kind}: {self.why}"


def read_known(path, script):
    """The entries of known-differences file PATH for SCRIPT, as
    {block: [Entry]}; ListError names file:line of a bad one."""
    entries = {}
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = f"{path}:{number}"
            fields = [x.strip() for x in line.split(" | ", 3)]
            if len(fields) != 4 or not all(fields):
                raise ListError(f"{where}: want `SCRIPT | BLOCK | KIND | WHY`")
            s, block, kind, why = fields
            if not (re.fullmatch(r"fixed-by: issue \d+", kind)
                    or kind == "not served yet" or kind.startswith("setup: ")):
                raise ListError(f"{where}: KIND is `fixed-by: issue N`, "
                                f"`not served yet` or `setup: REGEX`, not `{kind}`")
            if s != script:
                continue
            entry = Entry(where, s, block, kind, why)
            for other in entries.get(block, []):
                if other.may_differ == entry.may_differ:
                    raise ListError(f"{where}: block `{block}` listed twice "
                                    f"(first at {other.where})")
            entries.setdefault(block, []).append(entry)
    return entries


class Verdict:
    """The outcome of one block: agrees, differs (listed or not), or an entry
    that no longer holds."""

    def __init__(self, name, expected, got, entries, problems):
        self.name, self.expected, self.got = name, expected, got
        self.entries, self.problems = entries, problems
        self.same = expected == got
        self.listed = any(e.may_differ for e in entries)

    @property
    def ok(self):
        return not self.problems and self.same != self.listed

    def diff(self):
        return "\n".join(difflib.unified_diff(
            self.expected or [], self.got or [], "Kubernetes 1.32.13", "gpuop",
            lineterm="", n=len(self.expected or []) + len(self.got or [])))


def judge(expected_blocks, got_blocks, known):
    """One Verdict a block, in the recording's order (then blocks that only
    gpuop printed). Blocks are lists of raw lines; KNOWN as read_known."""
    unknown = [b for b in known if b not in expected_blocks]
    if unknown:
        raise ListError("; ".join(f"{e.where}: no block `{e.block}` in the recording"
                                  for b in unknown for e in known[b]))
    names = list(expected_blocks) + [n for n in got_blocks if n not in expected_blocks]
    verdicts = []
    for name in names:
        entries = known.get(name, [])
        expected = _normalised(expected_blocks.get(name))
        got = _normalised(got_blocks.get(name))
        problems = []
        for e in entries:
            if e.pattern is None:
                continue
            expected, hits_expected = _strip(expected, e.pattern)
            got, hits_got = _strip(got, e.pattern)
            if not hits_expected + hits_got:
                problems.append(f"entry {e.where} is stale: `{e.pattern.pattern}` "
                                "matches nothing now; remove it")
        verdict = Verdict(name, expected, got, entries, problems)
        if verdict.same and verdict.listed:
            where = ", ".join(e.where for e in entries if e.may_differ)
            verdict.problems.append(f"agrees now: remove its entry ({where})")
        verdicts.append(verdict)
    return verdicts


def _normalised(lines):
    return None if lines is None else [normalise_line(x) for x in lines]


def _strip(lines, pattern):
    if lines is None:
        return None, 0
    out, hits = [], 0
    for x in lines:
        y, n = pattern.subn("", x)
        out.append(y.rstrip())
        hits += n
    return out, hits


def report(script, verdicts, verbose=False):
    """Text for the test log, and whether every verdict holds."""
    out = []
    failed = [v for v in verdicts if not v.ok]
    for v in failed:
        if v.problems:
            for p in v.problems:
                out.append(f"FAIL {script}: block `{v.name}`: {p}")
        else:
            out.append(f"FAIL {script}: block `{v.name}` differs and is not in "
                       "known-differences.txt")
        if not v.same:
            out.append(v.diff())
    listed = [v for v in verdicts if v.ok and not v.same]
    for v in listed:
        reasons = "; ".join(str(e) for e in v.entries if e.may_differ)
        out.append(f"known {script}: block `{v.name}` differs ({reasons})")
        if verbose:
            out.append(v.diff())
    agree = sum(v.same for v in verdicts)
    out.append(f"{script}: {agree} of {len(verdicts)} blocks agree, "
               f"{len(verdicts) - agree} differ ({len(listed)} on the known list), "
               f"{len(failed)} failed")
    return "\n".join(out), not failed
