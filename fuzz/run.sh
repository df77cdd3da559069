#!/usr/bin/env bash
# Builds every fuzz target (fuzz/*_fuzz.c) and runs each in turn.
#
#   fuzz/run.sh BUILD_DIR SECONDS TOML_TEST_DIR
#
# BUILD_DIR      where each target NAME gets its binary (BUILD_DIR/NAME_fuzz)
#                and a folder BUILD_DIR/NAME/ with the corpus (corpus/,
#                recreated on every run from the seeds), the crashes
#                (crashes/) and the log (fuzz.log)
# SECONDS        the whole budget, split evenly between the targets (each
#                gets at least 1 s of libFuzzer's -max_total_time)
# TOML_TEST_DIR  the toml-test cases: for the toml target every valid/ and
#                invalid/ .toml is a seed, and so is every
#                examples/incident/**/*.toml and fuzz/seeds/*.toml
#
# BUILD_DIR is a CMake tree configured with GPUOP_FUZZ=ON (CMakeLists.txt):
# every target links gpuop_core, the library every program links, so a new
# fuzz/NAME_fuzz.c or a new source file needs no change here. Its seeds are the files in
# fuzz/seeds-NAME/ and its token dictionary fuzz/NAME.dict, when they exist.
# Prints one summary line per target. Exits 1 when any target found a crash,
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

shopt -s nullglob
targets=()
for src in fuzz/*_fuzz.c; do
    name=${src#fuzz/}
    targets+=("${name%_fuzz.c}")
done
shopt -u nullglob
[ ${#targets[@]} -gt 0 ] || {
    echo "fuzz/run.sh: no fuzz/*_fuzz.c target" >&2
    exit 2
}

# ---- build ----------------------------------------------------------------

cc=${CC:-}
if [ -z "$cc" ]; then
    if command -v clang-14 >/dev/null 2>&1; then cc=clang-14; else cc=clang; fi
fi
command -v "$cc" >/dev/null 2>&1 || {
    echo "fuzz/run.sh: $cc not found; run scripts/setup-deps.sh fuzz" >&2
    exit 2
}

# All targets are built before any runs, so that a broken one costs no
# fuzzing time. The tree is CMake's, so the fuzzers build exactly the sources
# and embedded data files the programs do.
echo "fuzz/run.sh: building ${targets[*]} in $build with $cc"
if ! CC=$cc cmake -S "$root" -B "$build" -DGPUOP_FUZZ=ON -DGPUOP_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" >"$build/configure.log" 2>&1; then
    cat "$build/configure.log" >&2
    echo "fuzz/run.sh: configuring $build failed" >&2
    exit 2
fi
if ! cmake --build "$build" --target gpuop_fuzz -j "${JOBS:-$(nproc)}" -- --no-print-directory; then
    echo "fuzz/run.sh: building the fuzz targets failed" >&2
    exit 2
fi
for name in "${targets[@]}"; do
    [ -x "$build/${name}_fuzz" ] || {
        echo "fuzz/run.sh: $build/${name}_fuzz was not built" >&2
        exit 2
    }
done

# ---- corpus -----------------------------------------------------------------

seeds=0
add_seed() { # FILE CORPUS NAME
    cp "$1" "$2/$3"
    seeds=$((seeds + 1))
}

# The toml target: toml-test, the incident's files, and fuzz/seeds/: inputs at
# the parser's limits (number length, nesting depth, dotted parts) that the
# suite does not reach.
seed_toml() { # CORPUS
    local f rel dir
    while IFS= read -r -d '' f; do
        rel=${f#"$toml_test"/}
        add_seed "$f" "$1" "toml-test_${rel//\//_}"
    done < <(find "$toml_test/valid" "$toml_test/invalid" -type f -name '*.toml' -print0)
    for dir in examples/incident fuzz/seeds; do
        [ -d "$dir" ] || continue
        while IFS= read -r -d '' f; do
            add_seed "$f" "$1" "${f//\//_}"
        done < <(find "$dir" -type f -name '*.toml' -print0)
    done
}

seed_from_dir() { # CORPUS NAME
    local f dir=fuzz/seeds-$2
    [ -d "$dir" ] || return 0
    while IFS= read -r -d '' f; do
        add_seed "$f" "$1" "${f//\//_}"
    done < <(find "$dir" -type f -print0)
}

# ---- run ----------------------------------------------------------------------

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# What went wrong and where: the first report up to its SUMMARY line, without
# the input and emitted text the target printed (they are in the log) and
# without libFuzzer's own frames.
report_failure() { # NAME BINARY LOG CRASHES STATUS
    local artifact
    # "Test unit written to PATH" names the reproducer.
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$3" | tail -n 1)
    echo
    echo "fuzz/run.sh: $1 stopped with status $5; full log: $3"
    sed -n "/^${1}_fuzz: \|ERROR: \|runtime error\|WARNING: /,/^SUMMARY/p" "$3" |
        sed '/^---- .* bytes/,/^---- end of /d' |
        grep -v -E 'in fuzzer::|BuildId: [0-9a-f]+\)$|^NOTE: |^ +Combine libFuzzer' |
        head -n 60 || true
    echo
    if [ -n "$artifact" ] && [ -f "$artifact" ]; then
        echo "reproducer: $artifact ($(wc -c <"$artifact") bytes)"
        echo "  rerun:    UBSAN_OPTIONS=print_stacktrace=1 $2 $artifact"
        echo "  minimize: $2 -minimize_crash=1 -runs=100000 -timeout=10" \
            "-artifact_prefix=$4/min- $artifact"
        echo "  bytes:    od -c $artifact"
    else
        echo "fuzz/run.sh: no reproducer was written; see the log"
    fi
}

# NAME SECONDS: fuzzes one target; returns 1 when it found something.
run_target() {
    local name=$1 budget=$2
    local binary=$build/${name}_fuzz dir=$build/$name
    local corpus=$dir/corpus crashes=$dir/crashes log=$dir/fuzz.log
    rm -rf "$corpus"
    mkdir -p "$corpus" "$crashes"

    seeds=0
    if [ "$name" = toml ]; then seed_toml "$corpus"; fi
    seed_from_dir "$corpus" "$name"
    local dict=()
    if [ -f "fuzz/$name.dict" ]; then dict=(-dict="fuzz/$name.dict"); fi
    echo "fuzz/run.sh: $name: $seeds seeds in $corpus; fuzzing for $budget s (log: $log)"

    local start status=0 elapsed
    start=$(date +%s)
    "$binary" -max_total_time="$budget" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        "${dict[@]}" -artifact_prefix="$crashes/" -print_final_stats=1 \
        "$corpus" >"$log" 2>&1 || status=$?
    elapsed=$(($(date +%s) - start))

    # The last few status lines, so the run shows progress without the full log.
    grep -E '^#[0-9]+' "$log" | tail -n 3 || true

    local execs corpus_size kept summary
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    if [ -z "$execs" ]; then
        execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#' || true)
    fi
    corpus_size=$(find "$corpus" -type f | wc -l)
    # libFuzzer's own count: the inputs that add coverage, out of all the files.
    kept=$(grep -oE 'corp: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2 || true)
    summary="fuzz: $name: ${execs:-0} executions, corpus $corpus_size files ($seeds seeds,"
    summary+=" ${kept:-?} in use), ${elapsed}s"

    if [ "$status" -ne 0 ]; then
        report_failure "$name" "$binary" "$log" "$crashes" "$status"
        summaries+=("$summary, FAILED")
        return 1
    fi
    summaries+=("$summary, no crash")
}

# Every target gets an even share; the first ones get the remainder.
count=${#targets[@]}
share=$((seconds / count))
extra=$((seconds % count))
summaries=()
failed=0
for i in "${!targets[@]}"; do
    budget=$share
    if [ "$i" -lt "$extra" ]; then budget=$((budget + 1)); fi
    if [ "$budget" -lt 1 ]; then budget=1; fi
    run_target "${targets[$i]}" "$budget" || failed=1
done

echo
printf '%s\n' "${summaries[@]}"
exit "$failed"
