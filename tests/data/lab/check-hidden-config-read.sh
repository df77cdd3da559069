#!/bin/sh
# Bad: reads the config file through a path no text search sees.
f=/etc/contai
f="${f}nerd/config.to"
cat "${f}ml" >/dev/null 2>&1
containerd config dump | grep -q 'containerd.runtimes.nvidia'
