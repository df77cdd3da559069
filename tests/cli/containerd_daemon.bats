#!/usr/bin/env bats
# gpuop containerd check against Debian's real containerd 1.6: its
# `config dump`, and a daemon started with a private root, state and socket
# under a temporary directory, asked over CRI by gpuop's own gRPC client
# (Debian has no crictl). What the client decodes is compared with the CRI
# answers recorded from the same release (containerd-cases/cri-status/).
# Nothing here touches /etc/containerd, /etc/cni or /run/containerd, and
# every daemon is stopped by its PID. Run by ctest with GPUOP and GPUOP_SRC
# set (and TOML_TEST_DIR, next to the recordings).

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
    mkdir -p "$tmp/etc/conf.d" "$tmp/bin"
    cp "$lab/conf.d/99-nvidia.toml" "$dropin"
    # The lab's main file, its import pointed at the copy of the drop-in, and
    # the plugins that need the host or would write outside $tmp disabled
    # (opt creates /opt/containerd).
    sed -e "s|^imports = .*|imports = [\"$tmp/etc/conf.d/*.toml\"]|" \
        -e '/^imports = /a disabled_plugins = ["io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.internal.v1.opt"]' \
        "$lab/config.toml" >"$cfg"
    grep -q "^imports = \[\"$tmp/etc/conf.d/\*.toml\"\]$" "$cfg"
    # The CNI directories under $tmp, so that a running CRI plugin leaves
    # /etc/cni alone (the recordings' daemons used the defaults; the
    # comparison maps them back).
    printf '[plugins."io.containerd.grpc.v1.cri".cni]\n  bin_dir = "%s"\n  conf_dir = "%s"\n' \
        "$tmp/cni/bin" "$tmp/cni/net.d" >>"$cfg"
    recordings=${TOML_TEST_DIR:-$GPUOP_SRC/../shared/toml-test}/../containerd-cases/cri-status
    # `containerd config dump` reads the default config path; this wrapper
    # gives the real binary ours instead.
    printf '#!/bin/sh\nexec %s --config %s "$@"\n' "$real_containerd" "$cfg" >"$tmp/bin/containerd"
    chmod +x "$tmp/bin/containerd"
    # No containerd, ctr or crictl: the daemon check needs no tool at all.
    mkdir "$tmp/no-tools"
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

# gpuop containerd check nvidia, by default (auto: the daemon first), on our socket.
check_daemon() {
    run --separate-stderr env PATH="$tmp/no-tools" "$GPUOP" containerd check nvidia \
        --address "$sock" "$@"
}

# The same, with `containerd config dump` answering for our files.
check_with_dump() {
    run --separate-stderr env PATH="$tmp/bin:/usr/bin:/bin" "$GPUOP" containerd check nvidia \
        --address "$sock" "$@"
}

no_runc='invalid plugin config: no corresponding runtime configured in `containerd.runtimes` for `containerd` `default_runtime_name = "runc"'

@test "real config dump of the lab files: a prediction only, CRI config refused (exit 2)" {
    check_with_dump --source dump
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell; would NOT load after a restart (containerd config dump: runtimes nvidia; default runc; the CRI plugin would refuse this config)" ]
    [ "${lines[1]}" = "CRI plugin would fail to load: $no_runc" ]
    # The lab's check script keeps its contract: it looks for the table, and finds it.
    "$GPUOP" containerd script >"$tmp/check.sh"
    run env PATH="$tmp/bin:/usr/bin:/bin" sh "$tmp/check.sh"
    [ "$status" -eq 0 ]
}

@test "real config dump of a fixed drop-in: would load after a restart (exit 2)" {
    write_fixed_dropin
    check_with_dump --source dump
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell; would load after a restart (containerd config dump: runtimes nvidia, runc; default runc)" ]
}

@test "daemon on the lab files: it serves no CRI, so nvidia is NOT loaded (exit 1), with the plugin's error" {
    start_daemon
    check_daemon
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "nvidia: NOT loaded (the daemon at $sock serves no CRI: its plugin io.containerd.grpc.v1.cri failed to load)" ]
    [ "${lines[1]}" = "CRI plugin error: $no_runc" ]
    [ "${lines[2]}" = "source: daemon (what the running containerd serves to the kubelet)" ]
    [[ "${lines[3]}" == "restart pending: no (containerd pid $daemon_pid started "* ]]
    # The daemon logged the same words.
    grep -F 'failed to load plugin io.containerd.grpc.v1.cri' "$tmp/containerd.log" |
        grep -qF 'no corresponding runtime configured in `containerd.runtimes`'
    check_daemon --prometheus
    [ "$status" -eq 1 ]
    [[ "$output" == *'gpuop_containerd_runtime_handler_loaded{handler="nvidia",source="daemon"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_cri_config_valid{source="daemon"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_restart_pending{source="daemon"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_check_success{handler="nvidia",source="daemon"} 1'* ]]
}

@test "daemon with its CRI plugin failed: decoded as recorded (status-1.6.20-bare), error as logged" {
    start_daemon
    check_daemon -o json
    [ "$status" -eq 1 ]
    run python3 "$BATS_TEST_DIRNAME/cri_vs_recording.py" "$output" \
        "$recordings/status-1.6.20-bare.json" "$tmp" "$recordings/daemonlog-1.6.20-bare.txt"
    echo "$output"
    [ "$status" -eq 0 ]
}

# Issue 16, case 1: the daemon started on runc alone; the toolkit's drop-in
# came afterwards. The dump re-reads the files and lists nvidia; the daemon
# never loaded it.
@test "drop-in written after the start: the daemon says NOT loaded (exit 1), the dump only predicts" {
    mkdir -p "$tmp/no-dropin"
    mv "$dropin" "$tmp/no-dropin/"
    start_daemon
    sleep 0.2
    write_fixed_dropin
    check_daemon
    [ "$status" -eq 1 ]
    [ "${lines[0]}" = "nvidia: NOT loaded (daemon containerd 1.6.20~ds1 at $sock, CRI runtime.v1 Status: runtimes runc; default runc)" ]
    [ "${lines[1]}" = "source: daemon (what the running containerd serves to the kubelet)" ]
    [[ "${lines[2]}" == "restart pending: yes (containerd pid $daemon_pid started "*"; $dropin modified "*", after the start)" ]]
    # The same command, with containerd on PATH: still the daemon's word.
    check_with_dump
    [ "$status" -eq 1 ]
    # What the dump says: nvidia, as a prediction.
    check_with_dump --source dump
    [ "$status" -eq 2 ]
    [ "${lines[0]}" = "nvidia: cannot tell; would load after a restart (containerd config dump: runtimes nvidia, runc; default runc)" ]
    [[ "${lines[2]}" == "restart pending: yes (containerd pid $daemon_pid started "* ]]
    check_daemon --prometheus
    [[ "$output" == *'gpuop_containerd_runtime_handler_loaded{handler="nvidia",source="daemon"} 0'* ]]
    [[ "$output" == *'gpuop_containerd_restart_pending{source="daemon"} 1'* ]]
    # After the restart the daemon has it.
    stop_daemon
    start_daemon
    check_daemon
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "nvidia: loaded (daemon containerd 1.6.20~ds1 at $sock, CRI runtime.v1 Status: runtimes nvidia, runc; default runc)" ]
    [[ "${lines[2]}" == "restart pending: no (containerd pid $daemon_pid started "* ]]
    run --separate-stderr env PATH="$tmp/no-tools" "$GPUOP" containerd check kata --address "$sock"
    [ "$status" -eq 1 ]
}

@test "daemon on the main file alone: decoded as recorded (status-1.6.20-none)" {
    rm "$dropin"
    start_daemon
    run --separate-stderr env PATH="$tmp/no-tools" "$GPUOP" containerd check runc \
        --address "unix://$sock" -o json
    [ "$status" -eq 0 ]
    run python3 "$BATS_TEST_DIRNAME/cri_vs_recording.py" "$output" \
        "$recordings/status-1.6.20-none.json" "$tmp"
    echo "$output"
    [ "$status" -eq 0 ]
}
