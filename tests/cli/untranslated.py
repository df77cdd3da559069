#!/usr/bin/env python3
"""Finds English left in gpuop's Korean or Japanese output (issue 17).

A message a learner reads must be in the language asked for. What may stay
as it is: values (paths, keys, KEY=VALUE lines, codes, commands, numbers),
and text quoted "..." or `...` (a learner's own line, a program's output).
What may not: English words that are not values. A run of two or more plain
English words, or a field that is one of gpuop's fixed English words, is a
message left untranslated.

  untranslated.py text LANG < output          a command's output
  untranslated.py json LANG < output          `lab check -o json`: every string
                                              but codes, places and the root
  untranslated.py junit LANG < output         `lab check -o junit`: names and
                                              failure texts
  untranslated.py corpus LANG EN_RESULTS LANG_RESULTS
        the grader's results over the corpus (JSON lines, see
        test_lab_corpus.c): every title and hint differs from English, and
        expected/observed carry no English outside values
Exit 1 with what was found, 0 when nothing is.
"""
import json
import re
import sys

# Words of gpuop's own English sentences: two of them in a row, outside a
# value, are a sentence.
FUNCTION_WORDS = set("""
a an the is are was were be been not no nor of to in on at by for from with without and or but
when where while after before still it its this that these those one two each every all any
has have had do does did can cannot must should would will may missing absent exists expected
opened called running stopped killed only than same other another here there what which who how
why yet exit code file files line lines found read new old per more less
""".split())
# gpuop's fixed one-word values, translated in every language.
FIXED_WORDS = {"absent", "missing", "exists", "parsed", "read", "none", "found", "stopped"}

QUOTED = re.compile(r'"[^"]*"|`[^`]*`|\u201c[^\u201d]*\u201d')
WORD = re.compile(r"^[A-Za-z]+[.,:;!?)]?$")


def english_runs(text):
    """Runs of plain English words (outside quotes) in `text`: a JSON
    string's escaped quotes and XML's &quot; quote as well."""
    text = text.replace('\\"', '"').replace("&quot;", '"')
    text = QUOTED.sub(" ", text)
    runs, run = [], []
    for token in re.split(r"\s+", text):
        token = token.strip("(")
        bare = token.rstrip(".,:;!?)")
        # FILE, DIR, PASS: placeholders and codes, not prose
        if bare.isupper():
            if run:
                runs.append(run)
            run = []
            continue
        if WORD.match(token) and len(bare) >= 2:
            run.append(bare)
            if token[-1] in ".,:;!?)":
                runs.append(run)
                run = []
        else:
            if run:
                runs.append(run)
            run = []
    if run:
        runs.append(run)
    found = []
    for r in runs:
        words = [w.lower() for w in r]
        if len(words) >= 2 and any(w in FUNCTION_WORDS for w in words):
            found.append(" ".join(r))
    # a field, or what follows a label ("found: absent"), that is one fixed word
    for part in {text.strip(), text.rsplit(": ", 1)[-1].strip()}:
        if part.lower() in FIXED_WORDS:
            found.append(part)
    return found


def check_text(lang, text):
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        for run in english_runs(line):
            problems.append(f"line {n}: {run!r} in {line.strip()!r}")
    return problems


VALUE_KEYS = {"code", "where", "root"}


def strings(doc, key=None):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from strings(v, k)
    elif isinstance(doc, list):
        for v in doc:
            yield from strings(v, key)
    elif isinstance(doc, str) and key not in VALUE_KEYS:
        yield key, doc


def check_json(lang, text):
    problems = []
    for key, value in strings(json.loads(text)):
        for run in english_runs(value):
            problems.append(f"{key}: {run!r} in {value!r}")
    return problems


def check_junit(lang, text):
    import xml.etree.ElementTree as ET
    problems = []
    for el in ET.fromstring(text).iter():
        texts = [el.get("name", ""), el.text or ""]
        if el.tag == "testcase":
            texts = []  # its name is the condition's code
        for value in texts:
            if el.tag == "testsuite":
                value = value.split(": ", 1)[-1]  # "step5: TITLE"
            for run in english_runs(value):
                problems.append(f"{el.tag}: {run!r} in {value!r}")
    return problems


def load(path):
    out = {}
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            out[rec["case"]] = rec["result"]
    return out


def check_corpus(lang, en_path, path):
    en, other = load(en_path), load(path)
    problems = []
    if set(en) != set(other):
        problems.append(f"the {lang} run graded other cases than the English one")
    for case, result in sorted(other.items()):
        base = en.get(case)
        if not base:
            continue
        if result["title"] == base["title"]:
            problems.append(f"{case}: title untranslated: {result['title']!r}")
        for c, e in zip(result["conditions"], base["conditions"]):
            where = f"{case} {c['code']}"
            if e["hint"] and c["hint"] == e["hint"]:
                problems.append(f"{where}: hint untranslated: {c['hint']!r}")
            for field in ("expected", "observed", "hint"):
                for run in english_runs(c[field]):
                    problems.append(f"{where}: {field} has English {run!r}: {c[field]!r}")
    return problems


def main():
    mode, lang = sys.argv[1], sys.argv[2]
    if mode == "text":
        problems = check_text(lang, sys.stdin.read())
    elif mode == "json":
        problems = check_json(lang, sys.stdin.read())
    elif mode == "junit":
        problems = check_junit(lang, sys.stdin.read())
    else:
        problems = check_corpus(lang, sys.argv[3], sys.argv[4])
    for p in problems:
        print(f"{lang}: {p}")
    sys.exit(1 if problems else 0)


main()
