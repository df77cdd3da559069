#!/bin/sh
containerd config dump | grep -q '^\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia\]'
