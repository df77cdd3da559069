#!/bin/sh
# Records evidence/containerd-config-dump-nvidia-cdi.toml with the real containerd
# (Debian 12: apt-get install containerd, 1.6.20~ds1): `containerd config
# dump` of a node whose NVIDIA handler is named nvidia-cdi, beside runc.
#
# Step 4 of the lab runs the learner's check script against it as the dump
# WITHOUT the nvidia handler: the text mentions nvidia and even
# runtimes.nvidia (in runtimes.nvidia-cdi), so a script that greps loosely
# for either answers "loaded" here and is caught. The NVIDIA container
# toolkit writes a handler of this name in CDI mode
# (nvidia-ctk runtime configure --cdi.enabled).
#
# Usage: examples/incident/record-dump-nvidia-cdi.sh [CONTAINERD] [OUT]
# (from anywhere). The temporary directory of the run is written as
# /etc/containerd, as on a node. OUT defaults to the file in evidence/;
# tests/cli/incident_files.bats records to a temporary OUT and compares.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
containerd=${1:-containerd}
out=${2:-$here/evidence/containerd-config-dump-nvidia-cdi.toml}
version=$("$containerd" --version)
case "$version" in
*" 1.6.20"*) ;;
*) echo "want containerd 1.6.20, found: $version" >&2; exit 2 ;;
esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/config.toml" <<'TOML'
version = 2

[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
    SystemdCgroup = true

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi]
  runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia-cdi.options]
    BinaryName = "/usr/bin/nvidia-container-runtime.cdi"
    SystemdCgroup = true
TOML
# From an empty working directory, as every recording in
# ../shared/containerd-cases was made.
mkdir "$dir/cwd"
(cd "$dir/cwd" && "$containerd" --config "$dir/config.toml" config dump) >"$dir/dump.toml"
sed "s|$dir|/etc/containerd|g" "$dir/dump.toml" >"$out"
echo "recorded with $version"
