#!/bin/sh
containerd config dump | awk '/^ *\[.*containerd\.runtimes\.nvidia\]/ { found = 1 } END { exit !found }'
