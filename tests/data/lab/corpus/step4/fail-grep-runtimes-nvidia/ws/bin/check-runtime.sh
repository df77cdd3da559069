#!/bin/sh
containerd config dump | grep -q 'runtimes.nvidia'
