#!/usr/bin/env bats
# gpuop lab cannot harm the machine it runs on (issue 17): the workspace is
# a directory the lab made or an empty one, never /, a home directory
# itself or a system directory; nothing is written through a symbolic link
# out of it; nothing a check script starts outlives `lab check`. And the
# verbs say what they did: init new or reused, check's step range, status's
# exit code. No cluster: the file steps only. Temporary HOME.

setup() {
    T=$(mktemp -d)
    export HOME=$T/home
    mkdir -p "$HOME"
}

teardown() {
    rm -rf "$T"
}

@test "the default workspace is \$HOME/gpuop, for root too; init says new, then reused" {
    run "$GPUOP" lab init
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "New workspace: $HOME/gpuop (seed 0)" ]
    [ -f "$HOME/gpuop/.gpuop-lab.json" ]
    rm "$HOME/gpuop/evidence/containerd-config-dump.toml"
    echo mine >"$HOME/gpuop/etc/containerd/config.toml"
    run "$GPUOP" lab init
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "Reused the workspace $HOME/gpuop (seed 0): the files already there are kept"* ]]
    [ "$(cat "$HOME/gpuop/etc/containerd/config.toml")" = mine ]
    [ -f "$HOME/gpuop/evidence/containerd-config-dump.toml" ]
}

@test "/, a home directory itself and system directories are never a workspace" {
    # The refusal is what keeps / safe; if / already looks like a lab
    # workspace, something else made it one and this test cannot tell.
    [ ! -e /.gpuop-lab.json ] || skip "/.gpuop-lab.json exists"
    for verb in init up solve status check reset; do
        run "$GPUOP" lab $verb --root /
        [ "$status" -eq 2 ]
        [[ "$output" == *"will not use / (a system directory)"* ]]
    done
    [ ! -e /.gpuop-lab.json ] && [ ! -e /out ] && [ ! -e /k8s ] && [ ! -e /evidence ]
    for root in "$HOME" "$HOME/" "$HOME/." /etc /usr/local /var/lib /tmp /proc/self; do
        run "$GPUOP" lab init --root "$root"
        echo "$root: $output"
        [ "$status" -eq 2 ]
        [[ "$output" == *"will not use"* ]]
    done
    [ ! -e "$HOME/.gpuop-lab.json" ]
    # a link to one is the same directory
    ln -s / "$T/slash"
    run "$GPUOP" lab init --root "$T/slash"
    [ "$status" -eq 2 ]
}

@test "init takes a new or empty directory, or the lab's own; not someone's files" {
    mkdir "$T/empty" "$T/full"
    echo "someone's" >"$T/full/notes.txt"
    run "$GPUOP" lab init --root "$T/full"
    [ "$status" -eq 2 ]
    [[ "$output" == *"not empty and not a lab workspace"* ]]
    [ "$(ls "$T/full")" = notes.txt ]
    run "$GPUOP" lab init --root "$T/empty"
    [ "$status" -eq 0 ]
    run "$GPUOP" lab init --root "$T/new/deeper"
    [ "$status" -eq 0 ]
    [ -f "$T/new/deeper/.gpuop-lab.json" ]
    # the other verbs want a workspace
    run "$GPUOP" lab solve 1 --root "$T/full"
    [ "$status" -eq 2 ]
    [[ "$output" == *"not a lab workspace"* ]]
    [ ! -e "$T/full/etc" ]
}

@test "nothing is written through a symbolic link out of the workspace" {
    "$GPUOP" lab init --root "$T/ws" >/dev/null
    mkdir "$T/outside"
    # out/ a link: step 3's answer would land outside
    "$GPUOP" lab solve 2 --root "$T/ws" >/dev/null
    rmdir "$T/ws/out" && ln -s "$T/outside" "$T/ws/out"
    run "$GPUOP" lab solve 3 --root "$T/ws"
    [ "$status" -eq 2 ]
    [[ "$output" == *"'out' is a symbolic link; nothing is written through one"* ]]
    [ -z "$(ls -A "$T/outside")" ]
    # etc/containerd a link
    rm -rf "$T/ws/etc/containerd" && ln -s "$T/outside" "$T/ws/etc/containerd"
    run "$GPUOP" lab solve 1 --root "$T/ws"
    [ "$status" -eq 2 ]
    [ -z "$(ls -A "$T/outside")" ]
    # the answer file itself a link to someone's file
    rm "$T/ws/out" "$T/ws/etc/containerd" && mkdir -p "$T/ws/out" "$T/ws/etc/containerd/conf.d"
    echo "precious" >"$T/outside/precious.txt"
    ln -s "$T/outside/precious.txt" "$T/ws/out/merge.txt"
    run "$GPUOP" lab solve 3 --root "$T/ws"
    [ "$status" -eq 2 ]
    [[ "$output" == *"a symbolic link"* ]]
    [ "$(cat "$T/outside/precious.txt")" = precious ]
    [ "$(ls -A "$T/outside")" = precious.txt ]
}

@test "nothing a check script starts outlives lab check, and a right script with jobs passes" {
    "$GPUOP" lab init --root "$T/ws" >/dev/null
    cat >"$T/ws/bin/check-runtime.sh" <<'SH'
#!/bin/sh
setsid sleep 4245.1 &
( sleep 4245.2 & )
(setsid sh -c 'sleep 4245.3 &' &)
containerd config dump | grep -qF 'containerd.runtimes.nvidia]'
SH
    chmod +x "$T/ws/bin/check-runtime.sh"
    run "$GPUOP" lab check 4 --root "$T/ws"
    echo "$output"
    [ "$status" -eq 0 ]
    ! pgrep -f 'sleep 4245\.[123]'
}

@test "check and steps say the range of steps; status exits 1 while a step fails" {
    "$GPUOP" lab init --root "$T/ws" >/dev/null
    for n in 9 0 10; do
        run "$GPUOP" lab check "$n" --root "$T/ws"
        [ "$status" -eq 2 ]
        [[ "$output" == *"there is no step $n: the steps are 1-8"* ]]
    done
    run "$GPUOP" lab steps 9 --root "$T/ws"
    [ "$status" -eq 2 ]
    [[ "$output" == *"the steps are 1-8"* ]]
    run "$GPUOP" lab status --root "$T/ws"
    [ "$status" -eq 1 ]
    [[ "$output" == *"Result: 0/4 steps passed"* ]]
    "$GPUOP" lab solve 4 --root "$T/ws" >/dev/null
    run "$GPUOP" lab status --root "$T/ws"
    [ "$status" -eq 0 ]
    [[ "$output" == *"Result: 4/4 steps passed"* ]]
}
