#!/bin/sh
containerd config dump | grep -q nvidia
