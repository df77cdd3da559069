#!/bin/sh
sleep 30 &
setsid sleep 31 &
containerd config dump | grep -qF 'containerd.runtimes.nvidia]'
