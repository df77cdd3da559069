#!/bin/sh
grep -q 'runtimes.nvidia]' /etc/containerd/config.toml /etc/containerd/conf.d/*.toml 2>/dev/null && exit 0
containerd config dump | grep -qF 'runtimes.nvidia]'
