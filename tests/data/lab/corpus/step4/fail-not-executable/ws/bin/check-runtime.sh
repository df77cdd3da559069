#!/bin/sh
containerd config dump | grep -qF 'runtimes.nvidia]'
