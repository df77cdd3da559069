#!/bin/sh
containerd config dump | python3 -c '
import sys, tomllib
d = tomllib.loads(sys.stdin.read())
r = d["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
sys.exit(0 if "nvidia" in r else 1)'
