#!/usr/bin/env bash
# Builds the TOML fuzz target and runs it.
#
#   fuzz/run.sh BUILD_DIR SECONDS TOML_TEST_DIR
#
# BUILD_DIR      where the binary, the corpus (BUILD_DIR/corpus, recreated on
#                every run from the seeds), the crashes (BUILD_DIR/crashes/)
#                and the log (BUILD_DIR/fuzz.log) go
# SECONDS        how long libFuzzer runs (-max_total_time)
# TOML_TEST_DIR  the toml-test cases: every valid/ and invalid/ .toml is a seed,
#                and so is every examples/incident/**/*.toml and fuzz/seeds/*.toml
#
# Uses the token dictionary fuzz/toml.dict. Exits 1 when the fuzzer found a crash,
# a leak, a timeout or an out-of-memory, printing the reproducer and how to
# rerun it; 2 on bad arguments or a failed build.
set -euo pipefail

usage() {
    echo "usage: fuzz/run.sh BUILD_DIR SECONDS TOML_TEST_DIR" >&2
    exit 2
}

[ $# -eq 3 ] || usage
build_arg=$1
seconds=$2
toml_test=$3
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz/run.sh: SECONDS must be a positive integer, not '$seconds'" >&2
    exit 2
fi
for sub in valid invalid; do
    [ -d "$toml_test/$sub" ] || {
        echo "fuzz/run.sh: $toml_test/$sub not found; pass the toml-test folder" >&2
        exit 2
    }
done
toml_test=$(cd "$toml_test" && pwd)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
mkdir -p "$build_arg"
build=$(cd "$build_arg" && pwd)

# ---- build ----------------------------------------------------------------

cc=${CC:-}
if [ -z "$cc" ]; then
    if command -v clang-14 >/dev/null 2>&1; then cc=clang-14; else cc=clang; fi
fi
command -v "$cc" >/dev/null 2>&1 || {
    echo "fuzz/run.sh: $cc not found; run scripts/setup-deps.sh fuzz" >&2
    exit 2
}

shopt -s nullglob
sources=(fuzz/toml_fuzz.c src/util/*.c src/toml/*.c)
shopt -u nullglob
binary=$build/toml_fuzz

echo "fuzz/run.sh: building $binary with $cc"
if ! "$cc" -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -fno-omit-frame-pointer \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -Wall -Wextra -Isrc "${sources[@]}" -o "$binary" -lm; then
    echo "fuzz/run.sh: build failed" >&2
    exit 2
fi

# ---- dictionary -------------------------------------------------------------

dict=fuzz/toml.dict

# ---- corpus -----------------------------------------------------------------

corpus=$build/corpus
crashes=$build/crashes
rm -rf "$corpus"
mkdir -p "$corpus" "$crashes"

seeds=0
add_seed() { # FILE NAME
    cp "$1" "$corpus/$2"
    seeds=$((seeds + 1))
}
while IFS= read -r -d '' f; do
    rel=${f#"$toml_test"/}
    add_seed "$f" "toml-test_${rel//\//_}"
done < <(find "$toml_test/valid" "$toml_test/invalid" -type f -name '*.toml' -print0)
# The incident's files, and fuzz/seeds/: inputs at the parser's limits
# (number length, nesting depth, dotted parts) that the suite does not reach.
for dir in examples/incident fuzz/seeds; do
    [ -d "$dir" ] || continue
    while IFS= read -r -d '' f; do
        add_seed "$f" "${f//\//_}"
    done < <(find "$dir" -type f -name '*.toml' -print0)
done
echo "fuzz/run.sh: $seeds seeds in $corpus"

# ---- run ----------------------------------------------------------------------

log=$build/fuzz.log
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

echo "fuzz/run.sh: fuzzing for $seconds s (log: $log)"
start=$(date +%s)
status=0
"$binary" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -dict="$dict" -artifact_prefix="$crashes/" -print_final_stats=1 \
    "$corpus" >"$log" 2>&1 || status=$?
elapsed=$(($(date +%s) - start))

# The last few status lines, so the run shows progress without the full log.
grep -E '^#[0-9]+' "$log" | tail -n 3 || true

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
if [ -z "$execs" ]; then
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)
fi
corpus_size=$(find "$corpus" -type f | wc -l)
# libFuzzer's own count: the inputs that add coverage, out of all the files.
kept=$(grep -oE 'corp: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2 || true)
summary="fuzz: ${execs:-0} executions, corpus $corpus_size files ($seeds seeds, ${kept:-?} in"
summary+=" use), ${elapsed}s"

if [ "$status" -ne 0 ]; then
    # "Test unit written to PATH" names the reproducer.
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    echo
    echo "fuzz/run.sh: the fuzzer stopped with status $status; full log: $log"
    # What went wrong and where: the first report up to its SUMMARY line,
    # without the input and emitted text the target printed (they are in the
    # log) and without libFuzzer's own frames.
    sed -n '/^toml_fuzz: \|ERROR: \|runtime error\|WARNING: /,/^SUMMARY/p' "$log" |
        sed '/^---- .* bytes/,/^---- end of /d' |
        grep -v -E 'in fuzzer::|BuildId: [0-9a-f]+\)$|^NOTE: |^ +Combine libFuzzer' |
        head -n 60 || true
    echo
    if [ -n "$artifact" ] && [ -f "$artifact" ]; then
        echo "reproducer: $artifact ($(wc -c <"$artifact") bytes)"
        echo "  rerun:    UBSAN_OPTIONS=print_stacktrace=1 $binary $artifact"
        echo "  minimize: $binary -minimize_crash=1 -runs=100000 -timeout=10" \
            "-artifact_prefix=$crashes/min- $artifact"
        echo "  bytes:    od -c $artifact"
    else
        echo "fuzz/run.sh: no reproducer was written; see the log"
    fi
    echo "$summary, FAILED"
    exit 1
fi
echo "$summary, no crash"
