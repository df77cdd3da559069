#!/bin/sh
/usr/bin/containerd config dump | grep -qF 'runtimes.nvidia]'
