#!/usr/bin/env bash
# Runs every unit test program under valgrind; any error or leak fails.
set -euo pipefail
build=${1:-build}
status=0
for t in "$build"/tests/test_*; do
    [ -x "$t" ] || continue
    if LOCPATH="$build/locales" valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --suppressions="$(dirname "$0")/valgrind.supp" \
        "$t" >/dev/null 2>"$t.valgrind.log"; then
        echo "valgrind: $(basename "$t") clean"
    else
        echo "valgrind: $(basename "$t") FAILED" >&2
        cat "$t.valgrind.log" >&2
        status=1
    fi
done
exit $status
