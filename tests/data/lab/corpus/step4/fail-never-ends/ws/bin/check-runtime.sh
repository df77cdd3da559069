#!/bin/sh
containerd config dump | grep -qF 'runtimes.nvidia]'
while :; do sleep 1; done
