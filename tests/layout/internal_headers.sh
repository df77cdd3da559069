#!/usr/bin/env bash
# Fails when a header meant for one module is included from outside it.
#
#   tests/layout/internal_headers.sh SOURCE_DIR
#
# The rule (README.md, "Layout"):
# - src/M/NAME_internal.h holds what the files of module M share and nothing
#   else may rely on. It may be included from src/M/ and from M's own unit
#   tests, tests/unit/test_M_*.c, which test the module from inside.
# - fuzz/ and bench/ include public headers only: a fuzz target feeds a
#   module's entry points as a caller would, a benchmark measures what users
#   run.
# - src/cli/ is the program, not a library: its headers are for its own
#   files only.
# Includes are written relative to src/ ("apiserver/store.h"); one without
# a folder names a header beside the file that includes it. Prints one line
# per offending include, FILE:LINE: what and why, and exits 1 if there is any.
set -euo pipefail

root=${1:?usage: tests/layout/internal_headers.sh SOURCE_DIR}
cd "$root"

status=0
report() { # FILE LINE HEADER WHY
    echo "$1:$2: includes $3, $4"
    status=1
}

while IFS= read -r hit; do
    file=${hit%%:*}
    rest=${hit#*:}
    line=${rest%%:*}
    [[ ${rest#*:} =~ include[[:space:]]*\"([^\"]+)\" ]] || continue
    header=${BASH_REMATCH[1]}
    dir=${file%/*}
    # What the include names, relative to the tree: src/M/... or beside the file.
    if [[ $header == */* ]]; then
        target=src/$header
    else
        target=$dir/$header
    fi
    [[ $target != *./* ]] || target=$(realpath -m --relative-to=. "$target")
    [[ $target == src/*/* ]] || continue
    module=${target#src/}
    module=${module%%/*}
    [[ $dir == "src/$module" ]] && continue
    if [[ $module == cli ]]; then
        report "$file" "$line" "$header" "a header of the program (src/cli/), which is no library"
        continue
    fi
    [[ $target == *_internal.h ]] || continue
    case $file in
    tests/unit/test_"$module"_*.c | tests/unit/test_"$module".c) ;;
    *)
        report "$file" "$line" "$header" \
            "internal to src/$module/ (only its files and tests/unit/test_${module}_*.c may)"
        ;;
    esac
done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' \
    --include='*.c' --include='*.h' --include='*.cpp' src tests fuzz bench)

exit $status
