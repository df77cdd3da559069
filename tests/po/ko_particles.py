#!/usr/bin/env python3
"""Korean particles after a value must be computed, never fixed.

A particle's form (을/를, 이/가, 은/는, 과/와, 으로/로) depends on how the word
before it ends; when that word is a value filled in at run time ("%s"), the
catalogue writes both forms (을(를), (으)로 ...) and gp_ko_particles picks one
(src/util/ko_particle.h). This fails on every ko msgstr with one fixed form
right after a format directive (closing quotes between them count as part of
the value), naming the entry's source lines.

    ko_particles.py po/ko.po
"""
import re
import sys

DIRECTIVE = r'%(?:[0-9]+\$)?[-+ #0]*[0-9*]*(?:\.[0-9*]+)?(?:hh|h|ll|l|z|j|t)?[sdu]|%<PRI[du]64>'
FIXED = re.compile(r'(' + DIRECTIVE + r')((?:\\"|[\'”’\]])*)\s?(으로|은|는|이|가|을|를|과|와|로)(?![(가-힣])')


def entries(text):
    for block in text.split('\n\n'):
        msgstr = re.search(r'^msgstr ((?:".*"\n?)+)', block, re.M)
        if not msgstr:
            continue
        joined = ''.join(re.findall(r'"(.*)"', msgstr.group(1)))
        refs = ' '.join(re.findall(r'^#: (.*)$', block, re.M)) or '(no reference)'
        yield refs, joined


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding='utf-8') as f:
        text = f.read()
    bad = 0
    checked = 0
    for refs, msgstr in entries(text):
        checked += 1
        for m in FIXED.finditer(msgstr):
            bad += 1
            around = msgstr[max(0, m.start() - 20):m.end() + 10]
            print(f'{refs}: fixed particle after a value: ...{around}...')
    if bad:
        print(f'{bad} fixed particles in {sys.argv[1]}: write both forms, e.g. %s을(를), %s(으)로')
        return 1
    print(f'{checked} entries, no fixed particle after a value')
    return 0


if __name__ == '__main__':
    sys.exit(main())
