#!/usr/bin/env bats
# gpuop containerd check against Debian's real containerd 1.6: its
# `config dump`, and a daemon started on the lab's files with a private
# root, state and socket under a temporary directory. Nothing here touches
# /etc/containerd or /run/containerd, and every daemon is stopped by its PID.
# Run by ctest with GPUOP and GPUOP_SRC set.

# SC2016: containerd's messages hold literal backticks.
# shellcheck disable=SC2016
bats_require_minimum_version 1.5.0

# containerd and ctr from Debian (the package brings both); installed here
# when missing, as scripts/setup-deps.sh test does.
need_containerd() {
    command -v containerd >/dev/null && command -v ctr >/dev/null && return 0
    [ "$(id -u)" -eq 0 ] || skip "containerd is not installed, and installing it needs root"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q containerd >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q containerd >/dev/null 2>&1; } ||
        skip "apt-get install containerd failed (no network or no apt?)"
    if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
        skip "containerd installed, but containerd or ctr is not on PATH"
    fi
}

setup() {
    : "${GPUOP:?set GPUOP to the gpuop binary}"
    : "${GPUOP_SRC:?set GPUOP_SRC to the source tree}"
    need_containerd
    real_containerd=$(command -v containerd)
    real_ctr=$(command -v ctr)
    # Short: the socket path must stay under ~100 characters.
    tmp=$(mktemp -d /tmp/gpd.XXXXXX)
    sock=$tmp/c.sock
    daemon_pid=
    lab=$GPUOP_SRC/examples/incident/etc/containerd
    cfg=$tmp/etc/config.toml
    dropin=$tmp/etc/conf.d/99-nvidia.toml
    mkdir -p "$tmp/etc/conf.d" "$tmp/bin" "$tmp/ctr-only"
    cp "$lab/conf.d/99-nvidia.toml" "$dropin"
    # The lab's main file, its import pointed at the copy of the drop-in, and
    # the plugins that need the host or would write outside $tmp disabled
    # (opt creates /opt/containerd).
    sed -e "s|^imports = .*|imports = [\"$tmp/etc/conf.d/*.toml\"]|" \
        -e '/^imports = /a disabled_plugins = ["io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.internal.v1.opt"]' \
        "$lab/config.toml" >"$cfg"
    grep -q "^imports = \[\"$tmp/etc/conf.d/\*.toml\"\]$" "$cfg"
    # `containerd config dump` reads the default config path; this wrapper
    # gives the real binary ours instead.
    printf '#!/bin/sh\nexec %s --config %s "$@"\n' "$real_containerd" "$cfg" >"$tmp/bin/containerd"
    chmod +x "$tmp/bin/containerd"
    # ctr and nothing else (no crictl): the daemon check's precise PATH.
    ln -s "$real_ctr" "$tmp/ctr-only/ctr"
}

teardown() {
    stop_daemon
    [ -z "${tmp:-}" ] || rm -rf "$tmp"
}

start_daemon() {
    [ "$(id -u)" -eq 0 ] || skip "the containerd daemon needs root"
    # fd 3 closed: bats waits for it otherwise.
    "$real_containerd" --config "$cfg" --root "$tmp/root" --state "$tmp/state" \
        --address "$sock" --log-level debug >"$tmp/containerd.log" 2>&1 3>&- &
    daemon_pid=$!
    for _ in $(seq 50); do
        "$real_ctr" --address "$sock" version >/dev/null 2>&1 && return 0
        kill -0 "$daemon_pid" 2>/dev/null || break
        sleep 0.2
    done
    cat "$tmp/containerd.log" >&2
    return 1
}

stop_daemon() {
    [ -n "${daemon_pid:-}" ] || return 0
    kill "$daemon_pid" 2>/dev/null || true
    for _ in $(seq 50); do
        kill -0 "$daemon_pid" 2>/dev/null || break
        sleep 0.2
    done
    kill -9 "$daemon_pid" 2>/dev/null || true
    wait "$daemon_pid" 2>/dev/null || true
    daemon_pid=
}

# The toolkit's drop-in as it should have been written: runc defined
# beside nvidia, so that replacing the CRI table keeps the default runtime
# (CNI directories under $tmp, so the running CRI plugin leaves /etc alone).
write_fixed_dropin() {
    cat >"$dropin" <<EOF
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "$tmp/cni/bin"
  conf_dir = "$tmp/cni/net.d"
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
    BinaryName = "/usr/bin/nvidia-container-runtime"
    SystemdCgroup = true
EOF
}

check_daemon() {
    run --separate-stderr env PATH="$tmp/ctr-only" "$GPUOP" containerd check nvidia \
        --source daemon --address "$sock" "$@"
}

no_runc='invalid plugin config: no corresponding runtime configured in `containerd.runtimes` for `containerd` `default_runtime_name = "runc"'

@test "real config dump of the lab files: nvidia listed, CRI config refused (exit 1)" {
    run --separate-stderr env PATH="$tmp/bin:/usr/bin:/bin" "$GPUOP" containerd check
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "nvidia: NOT loaded (containerd config dump: runtimes nvidia; default runc; the CRI plugin would refuse this config)" ]
    [ "${lines[1]}" = "CRI plugin would fail to load: $no_runc" ]
    # The lab's check script only looks for the table: it finds it.
    "$GPUOP" containerd script >"$tmp/check.sh"
    run env PATH="$tmp/bin:/usr/bin:/bin" sh "$tmp/check.sh"
    [ "$status" -eq 0 ]
}

@test "real config dump of a fixed drop-in: nvidia loaded (exit 0)" {
    write_fixed_dropin
    run --separate-stderr env PATH="$tmp/bin:/usr/bin:/bin" "$GPUOP" containerd check
    [ "$status" -eq 0 ]
    [ "$output" = "nvidia: loaded (containerd config dump: runtimes nvidia, runc; default runc)" ]
    run --separate-stderr env PATH="$tmp/bin:/usr/bin:/bin" "$GPUOP" containerd check kata
    [ "$status" -eq 1 ]
}

@test "daemon on the lab files: the CRI plugin fails to load, check exits 1 with its message" {
    start_daemon
    check_daemon
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "nvidia: NOT loaded (daemon at $sock: CRI plugin io.containerd.grpc.v1 cri failed to load)" ]
    [ "${lines[1]}" = "CRI plugin error: $no_runc" ]
    [[ "${lines[2]}" == "restart pending: no (containerd pid $daemon_pid started "* ]]
    # The daemon logged the same words.
    grep -F 'failed to load plugin io.containerd.grpc.v1.cri' "$tmp/containerd.log" |
        grep -qF 'no corresponding runtime configured in `containerd.runtimes`'
    check_daemon --prometheus
    [ "$status" -eq 1 ]
    [[ "$output" == *'gpuop_containerd_runtime_handler_loaded{handler="nvidia",source="daemon"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_cri_config_valid{source="daemon"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_restart_pending{source="daemon"} 0'* ]]
}

@test "daemon: a drop-in changed after the start means a restart is pending" {
    start_daemon
    sleep 0.2
    write_fixed_dropin
    check_daemon
    [ "$status" -eq 1 ]
    [[ "${lines[2]}" == "restart pending: yes (containerd pid $daemon_pid started "*"; $dropin modified "*", after the start)" ]]
    check_daemon --prometheus
    [[ "$output" == *'gpuop_containerd_restart_pending{source="daemon"} 1'* ]]
}

@test "daemon restarted on a fixed drop-in: CRI plugin ok; handlers need crictl (exit 2)" {
    start_daemon
    check_daemon
    [ "$status" -eq 1 ]
    write_fixed_dropin
    stop_daemon
    start_daemon
    # ctr only on PATH: the CRI plugin is up, but which handlers it serves
    # only the CRI Status call says.
    check_daemon
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell which handlers are loaded; CRI plugin ok (daemon at $sock; crictl not on PATH)" ]
    [[ "${lines[1]}" == "restart pending: no (containerd pid $daemon_pid started "* ]]
    run "$real_ctr" --address "$sock" plugins ls
    [[ "$output" =~ io\.containerd\.grpc\.v1\ +cri\ +linux/[a-z0-9]+\ +ok ]]
    check_daemon --prometheus
    [ "$status" -eq 2 ]
    [[ "$output" == *'gpuop_containerd_cri_config_valid{source="daemon"} 1'* ]]
    [[ "$output" == *'gpuop_containerd_restart_pending{source="daemon"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_check_success{handler="nvidia",source="daemon"} 0'* ]]
    [[ "$output" != *"runtime_handler_loaded{"* ]]
}

@test "daemon with CRI ok and a crictl on PATH: handlers come from crictl info" {
    write_fixed_dropin
    start_daemon
    # A crictl that answers for this socket only, with what crictl info
    # prints for such a config (runtimeHandlers as in the 2.1.5 status).
    cat >"$tmp/ctr-only/crictl" <<EOF
#!/bin/sh
[ "\$1 \$2" = "--runtime-endpoint unix://$sock" ] || { echo "wrong endpoint: \$*" >&2; exit 1; }
exec /bin/cat <<'JSON'
{"status": {"conditions": []},
 "runtimeHandlers": [{"name": ""}, {"name": "nvidia"}, {"name": "runc"}],
 "config": {"containerd": {"defaultRuntimeName": "runc",
            "runtimes": {"nvidia": {"runtimeType": "io.containerd.runc.v2"},
                         "runc": {"runtimeType": "io.containerd.runc.v2"}}}}}
JSON
EOF
    chmod +x "$tmp/ctr-only/crictl"
    check_daemon
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "nvidia: loaded (daemon at $sock, crictl info: runtimes nvidia, runc; default runc)" ]
    run --separate-stderr env PATH="$tmp/ctr-only" "$GPUOP" containerd check kata \
        --source daemon --address "$sock"
    [ "$status" -eq 1 ]
}
