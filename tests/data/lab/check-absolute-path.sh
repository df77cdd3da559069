#!/bin/sh
# Bad: an absolute path skips PATH (and the node's own binary choice).
/usr/bin/containerd config dump | grep -q 'containerd.runtimes.nvidia'
