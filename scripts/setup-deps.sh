#!/usr/bin/env bash
# Installs the Debian packages gpuop needs, skipping those already present.
#
#   scripts/setup-deps.sh [GROUP...]     groups: build test bench fuzz fresh format (default: build)
#   scripts/setup-deps.sh --list GROUP   print the group's packages, one a line
#
# build is all that `make run` needs; test, bench and fuzz are what `make test`,
# `make bench` and `make fuzz` add; fresh is what scripts/fresh-machine.sh (the
# CI stage after `make test`) needs to make an empty Debian 12 root.
#
# Idempotent: a second run installs nothing and prints one line. Exits 2 with a
# clear message when a package is missing and cannot be installed (not root and
# no sudo, no network, unknown package).
set -euo pipefail

declare -A group_packages=(
    [build]="gcc make cmake pkg-config gettext libjansson-dev libmicrohttpd-dev libgnutls28-dev libsqlite3-dev libyaml-dev libcurl4-openssl-dev libyajl-dev libmimalloc-dev libnghttp2-dev"
    [test]="libcmocka-dev python3 bats valgrind locales containerd libtsan2 python3-grpcio python3-grpc-tools"
    [bench]="g++ libtomlplusplus-dev python3 containerd"
    [fuzz]="clang libclang-rt-14-dev"
    [fresh]="debootstrap debian-archive-keyring"
    [format]="clang-format"
)

if [ "${1:-}" = "--list" ]; then
    if [ $# -ne 2 ] || [ -z "${group_packages[$2]+x}" ]; then
        echo "setup-deps: --list takes one group (known: ${!group_packages[*]})" >&2
        exit 2
    fi
    # shellcheck disable=SC2086
    printf '%s\n' ${group_packages[$2]}
    exit 0
fi

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(build)

wanted=()
for g in "${groups[@]}"; do
    if [ -z "${group_packages[$g]+x}" ]; then
        echo "setup-deps: unknown group '$g' (known: ${!group_packages[*]})" >&2
        exit 2
    fi
    # shellcheck disable=SC2206
    wanted+=(${group_packages[$g]})
done

installed() {
    dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | grep -qx installed
}

missing=()
for p in "${wanted[@]}"; do
    installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup-deps: all packages present (${groups[*]})"
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup-deps: missing ${missing[*]} and apt-get is not available; install them by hand" >&2
    exit 2
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        as_root=(sudo)
    else
        echo "setup-deps: missing ${missing[*]}; run as root or install sudo" >&2
        exit 2
    fi
fi

echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists; an old list may lack a package.
if ! "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    "${as_root[@]}" apt-get update -q || {
        echo "setup-deps: apt-get update failed; check the network or the apt sources" >&2
        exit 2
    }
    "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}" || {
        echo "setup-deps: could not install ${missing[*]}" >&2
        exit 2
    }
fi
