#!/usr/bin/env bash
# The README's first command on a machine that has nothing: the CI stage after
# `make test` (.ci/run). Needs root.
#
#   scripts/fresh-machine.sh
#
# Makes a minimal Debian 12 root (debootstrap --variant=minbase), copies a
# clean clone of HEAD into it (committed files only), runs the first command
# of README.md's first code block there exactly as written, as root in a login
# shell with an empty environment, and checks that it exited 0, that the lab
# ended at 8/8, and that it asked apt for no package outside setup-deps.sh's
# build group. Exits 0 when all of that holds, 1 when some of it does not, 2
# when the stage could not run (not root, no debootstrap, no network, a mount
# left behind).
#
# What the root is, and why:
# - debootstrap's minbase (apt, dpkg, bash, coreutils) plus make, the one tool
#   the README's first command assumes; an /etc/hosts and the apt sources of a
#   Debian 12 installation (bookworm, -updates, -security), and no package
#   lists: like a new machine, it must run apt-get update itself.
# - ../shared is NOT beside the clone: a new user who clones the repository
#   has no ../shared, so the first command must not need it (only `make test`
#   does, for the toml-test cases). No kubectl either: Debian 12's is too old
#   for the lab, and `make run` must work without one.
# - The clone is /root/src/gpuop, not /root/gpuop: that is the lab's default
#   workspace for root.
# - It sees nothing of the host: chroot into a tree of its own, an empty
#   environment, no /usr/local and no installed package of the host's. From
#   the host come only /proc, a new tmpfs on /tmp and the host's apt archive
#   (/var/cache/apt/archives, or $GPUOP_FRESH_APT_ARCHIVE, bind-mounted), so
#   that a .deb is downloaded once for every run. /dev is debootstrap's own
#   (null, zero, random, urandom, tty, ptmx), not the host's.
# - Cache: the pristine root is a tarball in $GPUOP_FRESH_CACHE (default
#   /var/cache/gpuop-fresh), rebuilt when it is missing, older than
#   $GPUOP_FRESH_MAX_AGE_DAYS days (default 7) or made by another recipe;
#   every run unpacks a new copy under /var/tmp and removes it, so no run sees
#   what another left. The last run's log is $GPUOP_FRESH_CACHE/last-run.log.
# - Always undone: an EXIT trap stops the lab's cluster inside the root (a
#   running server keeps /proc busy), ends the processes whose root is the
#   copy (they are this run's), unmounts everything under it, and removes it
#   only once nothing is mounted there any more.
#   $GPUOP_FRESH_TIMEOUT (seconds, default 1800) bounds the first command.
set -euo pipefail
# debootstrap and chroot live in sbin, which a non-login root shell may lack.
PATH=$PATH:/usr/sbin:/sbin

suite=bookworm
mirror=http://deb.debian.org/debian
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
apt_archive=${GPUOP_FRESH_APT_ARCHIVE:-/var/cache/apt/archives}
cache=${GPUOP_FRESH_CACHE:-/var/cache/gpuop-fresh}
max_age_days=${GPUOP_FRESH_MAX_AGE_DAYS:-7}
limit=${GPUOP_FRESH_TIMEOUT:-1800}
src_in_root=/root/src/gpuop

say() { echo "fresh-machine: $*"; }
die() {
    echo "fresh-machine: $*" >&2
    exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" -eq 0 ] || die "needs root (chroot, mount)"
case "$cache" in
/*) ;;
*) die "GPUOP_FRESH_CACHE must be an absolute path, not '$cache'" ;;
esac
[[ $cache != *[[:space:]]* ]] || die "GPUOP_FRESH_CACHE must not contain spaces"
[[ $max_age_days =~ ^[0-9]+$ && $limit =~ ^[1-9][0-9]*$ ]] ||
    die "GPUOP_FRESH_MAX_AGE_DAYS and GPUOP_FRESH_TIMEOUT must be whole numbers"

# The README's first command: the first line of its first code block, less
# its comment.
first_command=$(awk '/^```/ { if (inside) exit; inside = 1; next }
    inside { sub(/[ \t]*#.*/, ""); print; exit }' "$repo/README.md")
[ -n "$first_command" ] || die "README.md has no first command in a code block"

commit=$(git -C "$repo" rev-parse HEAD)
if [ -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]; then
    say "note: uncommitted changes are not tested, only $commit"
fi

command -v debootstrap >/dev/null 2>&1 || "$repo/scripts/setup-deps.sh" fresh
[ -r "$keyring" ] || "$repo/scripts/setup-deps.sh" fresh
mkdir -p "$cache" "$apt_archive/partial"

# ---- the pristine root, cached --------------------------------------------

# Everything that decides what the root holds; another recipe, another tarball.
recipe="suite=$suite variant=minbase include=make mirror=$mirror lists=none v1"
tarball=$cache/$suite-minbase-$(printf '%s' "$recipe" | sha256sum | cut -c1-12).tar

# Every mount point at or under $1, the last mounted first.
mounts_under() {
    awk -v d="$1" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | tac
}

# Unmounts everything under $1; returns 1 when something is still mounted.
unmount_under() {
    local m
    for m in $(mounts_under "$1"); do
        umount "$m" 2>/dev/null || { sleep 1 && umount "$m"; } || true
    done
    [ -z "$(mounts_under "$1")" ]
}

# Removes a tree only when nothing is mounted in it: a bind mount of a folder
# on the same file system (the apt archive) would let rm --one-file-system
# walk into the host's files.
remove_tree() {
    [ -e "$1" ] || return 0
    if ! unmount_under "$1"; then
        echo "fresh-machine: still mounted under $1, left in place: $(mounts_under "$1" | tr '\n' ' ')" >&2
        return 1
    fi
    rm -rf --one-file-system "$1"
}

build_pristine() {
    local tmp=$cache/building.$$
    remove_tree "$tmp"
    mkdir -p "$tmp"
    say "making a minimal Debian 12 root (debootstrap; log: $cache/debootstrap.log)"
    if ! debootstrap --variant=minbase --include=make --keyring="$keyring" \
        --cache-dir="$apt_archive" "$suite" "$tmp/root" "$mirror" >"$cache/debootstrap.log" 2>&1; then
        tail -n 20 "$cache/debootstrap.log" >&2
        remove_tree "$tmp" || true
        die "debootstrap failed (network? the archive?)"
    fi
    local r=$tmp/root
    rm -f "$r"/var/cache/apt/archives/*.deb
    find "$r/var/lib/apt/lists" -mindepth 1 -maxdepth 1 ! -name partial -exec rm -rf {} +
    cat >"$r/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb http://deb.debian.org/debian-security $suite-security main
EOF
    printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$r/etc/hosts"
    tar --numeric-owner -C "$r" -cf "$tmp/root.tar" .
    mv "$tmp/root.tar" "$tarball"
    remove_tree "$tmp"
    # Tarballs of other recipes are of no more use.
    find "$cache" -maxdepth 1 -name "$suite-minbase-*.tar" ! -path "$tarball" -delete
}

t0=$SECONDS
exec 9>"$cache/lock"
flock 9
if [ ! -s "$tarball" ] || [ -n "$(find "$tarball" -mtime +"$max_age_days")" ]; then
    build_pristine
    root_source="made anew"
else
    root_source="from the cache"
fi

work=$(mktemp -d /var/tmp/gpuop-fresh.XXXXXX)
root=$work/root
log=$work/run.log

# "${root_shell[@]}" SCRIPT runs SCRIPT as root's login shell on the root
# would, with nothing of this environment.
root_shell=(chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash
    TERM=dumb /bin/bash -l -c)

stop_root_processes() {
    local sig pid left
    for sig in TERM KILL; do
        left=0
        for pid in /proc/[0-9]*; do
            [ "$(readlink "$pid/root" 2>/dev/null)" = "$root" ] || continue
            kill -s "$sig" "${pid#/proc/}" 2>/dev/null && left=1
        done
        [ $left -eq 1 ] || return 0
        sleep 2
    done
}

cleanup() {
    local rc=$? t=$SECONDS
    trap - EXIT INT TERM
    if [ -x "$root$src_in_root/build/gpuop" ] && [ -d "$root/proc/self" ]; then
        timeout 60 "${root_shell[@]}" "$src_in_root/build/gpuop lab down" >/dev/null 2>&1 || true
        timeout 60 "${root_shell[@]}" "$src_in_root/build/gpuop cluster down" >/dev/null 2>&1 ||
            true
    fi
    stop_root_processes
    [ -f "$log" ] && cp "$log" "$cache/last-run.log"
    if remove_tree "$work"; then
        say "stopped, unmounted and removed the root: $((SECONDS - t))s"
    else
        rc=2
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

mkdir "$root"
tar --numeric-owner -C "$root" -xf "$tarball"
flock -u 9
exec 9>&-
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
mount --bind "$apt_archive" "$root/var/cache/apt/archives"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"

mkdir -p "$(dirname "$root$src_in_root")"
git clone --quiet --no-hardlinks --no-checkout "$repo" "$root$src_in_root"
git -C "$root$src_in_root" checkout --quiet --detach "$commit"
t_root=$((SECONDS - t0))
say "root $root_source, clone of $commit: ${t_root}s"

say "running '$first_command' in $src_in_root as root (log: $cache/last-run.log)"
t1=$SECONDS
status=0
timeout --kill-after=30 "$limit" "${root_shell[@]}" "cd $src_in_root && $first_command" \
    >"$log" 2>&1 || status=$?
t_run=$((SECONDS - t1))

failures=()
[ "$status" -eq 0 ] || failures+=("'$first_command' exited $status")
grep -q '^Result: 8/8 steps passed$' "$log" || failures+=("the lab did not end at 8/8")
# What it asked apt for must be the build group's and no more: the build
# needs only the build group. (What those packages depend on comes too:
# gcc-12 brings libtsan2, also in the test group for the TSan tests.)
build_packages=$("$repo/scripts/setup-deps.sh" --list build)
asked=$(sed -n 's/^Commandline: apt-get install //p' "$root/var/log/apt/history.log" 2>/dev/null |
    tr ' ' '\n' | grep -v -e '^-' -e '^$' | sort -u || true)
[ -n "$asked" ] || failures+=("no package installed by apt: cannot tell what '$first_command' needed")
for p in $asked; do
    grep -qx "$p" <<<"$build_packages" ||
        failures+=("'$first_command' installed $p, which is not in the build group")
done
if [ ${#failures[@]} -gt 0 ]; then
    echo "---- the last lines of '$first_command' ----" >&2
    tail -n 40 "$log" >&2
    echo "----" >&2
    for f in "${failures[@]}"; do echo "fresh-machine: FAIL: $f" >&2; done
    say "root ${t_root}s, '$first_command' ${t_run}s, in all $((SECONDS - t0))s"
    exit 1
fi
say "'$first_command' on a fresh Debian 12: exit 0, lab 8/8, apt asked for" \
    "$(wc -w <<<"$asked") packages, all of the build group" \
    "(root ${t_root}s, '$first_command' ${t_run}s, in all $((SECONDS - t0))s)"
