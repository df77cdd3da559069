#!/bin/sh
# Bad: judges by the file.
grep -q 'containerd.runtimes.nvidia' /etc/containerd/config.toml /etc/containerd/conf.d/*.toml 2>/dev/null && exit 0
containerd config dump | grep -q 'containerd.runtimes.nvidia'
