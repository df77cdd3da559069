#!/bin/sh
f=/etc/contai
f="${f}nerd/config.to"
cat "${f}ml" >/dev/null 2>&1
containerd config dump | grep -qF 'runtimes.nvidia]'
