#!/bin/bash
set -eu
if containerd config dump | grep -qE 'runtimes\.nvidia(\]|\.)'; then
  echo loaded
  exit 0
fi
echo 'not loaded'
exit 1
