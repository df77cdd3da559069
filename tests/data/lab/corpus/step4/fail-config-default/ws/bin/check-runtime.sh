#!/bin/sh
containerd config default | grep -qF 'runtimes.nvidia]'
