#!/usr/bin/env bash
# make run: until the lab exists, show how gpuop reads the incident's two
# containerd files: the main config.toml and the NVIDIA toolkit's drop-in.
set -euo pipefail
gpuop=${1:-build/gpuop}
root=examples/incident
main=$root/etc/containerd/config.toml
dropin=$root/etc/containerd/conf.d/99-nvidia.toml
cri='plugins."io.containerd.grpc.v1.cri"'

runtimes_of() {
    "$gpuop" toml get --json "$1" "$cri.containerd.runtimes" 2>/dev/null |
        python3 -c 'import json,sys; print(",".join(sorted(json.load(sys.stdin))))' ||
        echo "(none)"
}

for file in "$main" "$dropin"; do
    echo "== $file"
    if ! "$gpuop" toml check "$file"; then
        echo "   not valid TOML 1.0 (the line above says where)"
        continue
    fi
    echo "   valid TOML 1.0; every table and key, where it is defined:"
    "$gpuop" toml keys "$file" | sed 's/^/   /'
    echo "   runtimes it defines: $(runtimes_of "$file")"
    echo
done

echo "default_runtime_name in the main file: $("$gpuop" toml get "$main" "$cri.containerd.default_runtime_name")"
echo
# What each containerd line would load from these two files on a restart.
for version in 1.6 2.1; do
    echo "== gpuop containerd merge --containerd $version"
    "$gpuop" containerd merge --root "$root" --config /etc/containerd/config.toml \
        --containerd "$version" || true
    echo
done
