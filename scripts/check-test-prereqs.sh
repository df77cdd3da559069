#!/usr/bin/env bash
# What `make test` needs that no package of setup-deps.sh brings, checked
# first, before anything is installed or built, so that a machine without it
# stops at once with what is missing instead of failing test by test:
#
#   - kubectl 1.32 on PATH: the tests drive the embedded control plane with
#     the real kubectl and hold it to kubectl 1.32's recorded behaviour
#     (../shared/k8s-cases). Debian 12's kubernetes-client is 1.20.
#   - the toml-test cases (../shared/toml-test unless TOML_TEST=DIR).
#
#   scripts/check-test-prereqs.sh TOML_TEST_DIR
#
# Exits 0 when both are there, 2 otherwise, one line for each that is not.
set -euo pipefail
[ $# -eq 1 ] || {
    echo "usage: scripts/check-test-prereqs.sh TOML_TEST_DIR" >&2
    exit 2
}
toml_test=$1
wanted=1.32
where="https://kubernetes.io/docs/tasks/tools/"
missing=0

if ! command -v kubectl >/dev/null 2>&1; then
    echo "make test: needs kubectl $wanted on PATH, and there is none: see $where (Debian 12's kubernetes-client, 1.20, is too old)" >&2
    missing=1
else
    # clientVersion.gitVersion, "v1.32.4" (the first one: serverVersion, when
    # printed, comes after it). No JSON parser is installed yet.
    version=$(timeout 20 kubectl version --client -o json 2>/dev/null |
        sed -n 's/^ *"gitVersion": *"\(v[^"]*\)".*/\1/p' | head -n 1) || true
    case "$version" in
    v$wanted.*) ;;
    "")
        echo "make test: needs kubectl $wanted, and 'kubectl version --client -o json' printed no version: see $where" >&2
        missing=1
        ;;
    *)
        echo "make test: needs kubectl $wanted, and the one on PATH ($(command -v kubectl)) is $version: see $where" >&2
        missing=1
        ;;
    esac
fi

if [ ! -f "$toml_test/run.py" ]; then
    echo "make test: needs the toml-test cases at $toml_test (../shared/toml-test, or make test TOML_TEST=DIR)" >&2
    missing=1
fi
[ $missing -eq 0 ] || exit 2
